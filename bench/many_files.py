#!/usr/bin/env python3
"""Many small files (issue 25, item 5): a library of N one-line Markdown files (a GM's notes
folder, a wiki export), first scan and no-change rescan, wall-clock and CPU seconds.

Usage: python bench/many_files.py [--files 100000] [--workers 2] [--rescans 2]
Prints one line per scan; asserts nothing. The files go under $GMTOOL_BENCH_DIR (default
/tmp/gmtool-bench), in folders of 1,000 as an export would lay them out.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import BENCH_DIR, GMTOOL, bench_env

WORDS = ("goblin", "torch", "dungeon", "saving", "throw", "spell", "sword", "river", "lantern", "rope")


def make_library(n: int) -> Path:
    lib = BENCH_DIR / f"many-{n}"
    shutil.rmtree(lib, ignore_errors=True)
    for i in range(n):
        folder = lib / f"part-{i // 1000:03d}"
        if i % 1000 == 0:
            folder.mkdir(parents=True)
        a, b = WORDS[i % len(WORDS)], WORDS[(i // len(WORDS)) % len(WORDS)]
        (folder / f"note-{i:06d}.md").write_text(f"# Note {i}: the {a} and the {b}\n", encoding="utf-8")
    return lib


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def scan(lib: Path, workers: int) -> dict[str, object]:
    cmd = [GMTOOL, "scan", str(lib), "--no-embed", "--json", "--workers", str(workers)]
    cpu = _cpu()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=bench_env())
    wall = time.perf_counter() - t
    try:
        rep = json.loads(p.stdout)
    except ValueError:
        return {"wall_s": round(wall, 1), "error": p.stderr.strip()[-300:]}
    return {"wall_s": round(wall, 1), "cpu_s": round(_cpu() - cpu, 1), "indexed": rep["indexed"],
            "unchanged": rep["unchanged"], "failed": len(rep["failed"]), "exit": p.returncode}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rescans", type=int, default=2)
    args = ap.parse_args()
    t = time.perf_counter()
    lib = make_library(args.files)
    print(f"{args.files} one-line Markdown files written in {time.perf_counter() - t:.1f} s "
          f"({os.cpu_count()} cores, --workers {args.workers})")
    print("first scan:", json.dumps(scan(lib, args.workers)))
    for _ in range(args.rescans):
        print("rescan:    ", json.dumps(scan(lib, args.workers)))
    shutil.rmtree(lib, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
