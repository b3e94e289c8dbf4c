#!/usr/bin/env python3
"""Search speed: in-process latency on the corpus library and on a synthetic 150-book library,
and whole-process `gmtool search fireball` against `pdfgrep -c Fireball` over the same PDFs.

Usage: python bench/search.py [--books 150] [--runs 15]
Prints figures; asserts nothing. The whole-process figures include CPU time (user + sys of the
child), which a loaded machine inflates far less than wall time, and a breakdown of one
process's CPU by phase (imports, opening the keyword index, the search, the JSON output).
Bytecode caching is switched back on for the children (PYTHONDONTWRITEBYTECODE would make every
process compile gmtool from source, ~100 ms that no installed copy pays).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import BENCH_DIR, GMTOOL, PDFS, SHARED, bench_env, corpus_library, median, pct

QUERIES = [json.loads(line)["query"] for line in (SHARED / "eval" / "dev_search.jsonl").read_text().splitlines()] + [
    "firball", "owl bear", "magic missile", "half-elf", "dragon", "grapple", "longsword", "potion of healing",
    "cover", "lich",
]


def in_process(lib: Path, runs: int) -> tuple[float, float, int]:
    from gmtool.engine import Engine

    eng = Engine(lib)
    eng.search("warm up")
    times = []
    for _ in range(runs):
        for q in QUERIES:
            t = time.perf_counter()
            eng.search(q, limit=10)
            times.append((time.perf_counter() - t) * 1000)
    return median(times), pct(times, 90), eng.library().n_docs


def synthetic(lib: Path, books: int) -> Path:
    """Repeat the corpus sources under new ids until there are `books` sources."""
    from gmtool.rank.keyword import build_keyword_index
    from gmtool.storage import store

    dest = BENCH_DIR / f"synthetic-{books}"
    idx = dest / ".gmtool"
    if (idx / "manifest.json").exists():
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    src = store.load_manifest(lib / ".gmtool")
    recs = [store.load_source(lib / ".gmtool", sid) for sid in sorted(src.sources)]
    manifest = store.Manifest()
    from gmtool.types import Document

    for n in range(books):
        rec = recs[n % len(recs)]
        sid = f"{rec.meta.source_id}-copy{n}"
        meta = replace(rec.meta, source_id=sid, file=f"{sid}{Path(rec.meta.file).suffix}", sha256=f"{n:064x}")
        doc = Document(format=meta.format, title=meta.title, pages=meta.pages, entries=rec.entries,
                       page_labels=rec.page_labels)
        store.save_source(idx, meta, doc)
        manifest.sources[sid] = meta
    build_keyword_index(idx, manifest)
    store.save_manifest(idx, manifest)
    return dest


def whole_process(lib: Path, runs: int) -> tuple[float, float]:
    """Median wall time and median CPU time (user + sys, steadier on a shared machine) of the process."""
    import resource

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    env = bench_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([GMTOOL, "search", "fireball", "--library", str(lib), "--json"], stdout=subprocess.DEVNULL,
                   env=env, check=True)  # warm the page cache and the bytecode cache
    times, cpus = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), cpu()
        subprocess.run([GMTOOL, "search", "fireball", "--library", str(lib), "--json"], stdout=subprocess.DEVNULL,
                       env=env, check=True)
        times.append(time.perf_counter() - t)
        cpus.append(cpu() - c)
    return median(times), median(cpus)


PHASES = """
import os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
marks = [("interpreter", time.process_time())]
def mark(name):
    marks.append((name, time.process_time()))
import gmtool.cli
mark("cli (typer)")
import numpy
mark("numpy")
from gmtool.engine import Engine
import gmtool.rank.bm25, gmtool.rank.fuzzy, gmtool.textnorm
mark("engine, query, rank")
eng = Engine(sys.argv[1])
eng.library().keyword()
mark("keyword index load")
res = eng.search("fireball")
mark("search")
from gmtool.present.jsonout import dumps
dumps(res)
mark("json")
import json
print(json.dumps([[n, 1000 * (t - p)] for (n, t), (_, p) in zip(marks, [("", 0.0), *marks])]))
"""


def phases(lib: Path, runs: int) -> str:
    """Median CPU ms of each phase of one `search fireball --json`, over fresh processes."""
    env = bench_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    rows: list[list[tuple[str, float]]] = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", PHASES, str(lib)], capture_output=True, text=True, env=env,
                             check=True).stdout
        rows.append([(str(n), float(ms)) for n, ms in json.loads(out.strip().splitlines()[-1])])
    names = [n for n, _ in rows[0]]
    return ", ".join(f"{n} {median([r[i][1] for r in rows]):.0f}" for i, n in enumerate(names))


def pdfgrep(lib: Path, runs: int) -> float | None:
    exe = shutil.which("pdfgrep")
    if not exe:
        return None
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([exe, "-c", "Fireball", *[str(lib / p) for p in PDFS]], stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--books", type=int, default=150)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    lib = corpus_library()
    med, p90, n = in_process(lib, a.runs)
    print(f"corpus library ({n} entries): in-process search median {med:.2f} ms, p90 {p90:.2f} ms")
    syn = synthetic(lib, a.books)
    med2, p902, n2 = in_process(syn, max(3, a.runs // 3))
    print(f"synthetic {a.books}-book library ({n2} entries): in-process search median {med2:.2f} ms, p90 {p902:.2f} ms")
    wp, wp_cpu = whole_process(lib, a.runs)
    print(f"whole-process `gmtool search fireball --json`: median {wp:.3f} s (CPU {wp_cpu:.3f} s)")
    print(f"  CPU ms by phase (median of {a.runs} processes): {phases(lib, a.runs)}")
    wp2, wp2_cpu = whole_process(syn, max(3, a.runs // 3))
    print(f"whole-process `gmtool search fireball --json` on the {a.books}-book library: median {wp2:.3f} s"
          f" (CPU {wp2_cpu:.3f} s)")
    pg = pdfgrep(lib, 3)
    if pg is not None:
        print(f"`pdfgrep -c Fireball` over the {len(PDFS)} corpus PDFs: median {pg:.2f} s  (gmtool is {pg / wp:.0f}x faster)")
    else:
        print("pdfgrep not installed: no baseline")


if __name__ == "__main__":
    main()
