#!/usr/bin/env python3
"""ask speed on the evaluation library (../shared/eval/mklib.sh, scanned with embeddings):
whole-process `gmtool ask` median, warm in-process ask p50/p90 over the 30 dev queries, and
embedding throughput of a scan (Embedder.embed) beside raw onnxruntime on the same batches.

Usage: python bench/ask.py [--device auto|cpu|cuda] [--runs 10] [--sections 300]
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import GMTOOL, SHARED, bench_env, eval_library, median, pct


def queries() -> list[dict]:
    return [json.loads(line) for line in open(SHARED / "eval" / "dev_ask.jsonl") if line.strip()]


def whole_process(lib: Path, device: str, runs: int) -> float:
    env = bench_env()
    qs = queries()[:runs]
    times = []
    for g in qs:
        t = time.perf_counter()
        subprocess.run([GMTOOL, "ask", g["query"], "--library", str(lib), "--json", "--device", device],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - t)
    return median(times)


def in_process(lib: Path, device: str) -> tuple[float, float, str, str]:
    from gmtool.engine import Engine

    eng = Engine(lib)
    first = eng.ask("warm up the model", device=device)
    times = []
    for _ in range(3):
        for g in queries():
            t = time.perf_counter()
            eng.ask(g["query"], types=[g["type"]] if g.get("type") else None, limit=10, device=device)
            times.append((time.perf_counter() - t) * 1000)
    return median(times), pct(times, 90), first.mode, eng.embedder(device).device


def throughput(lib: Path, device: str, n: int) -> tuple[float, float, int]:
    """Sections/s of Embedder.embed vs the raw session on the same sorted batches."""
    import numpy as np

    from gmtool.engine import Engine
    from gmtool.rank.units import units

    eng = Engine(lib)
    lib_ = eng.library()
    texts: list[str] = []
    for sid in sorted(lib_.metas):
        texts.extend(units(lib_.records[sid].entries)[1])
    texts = texts[:n]
    emb = eng.embedder(device)
    t = time.perf_counter()
    emb.embed(texts)
    ours = len(texts) / (time.perf_counter() - t)
    ids = emb.tokenize(texts)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    step = 1 if getattr(emb, "per_text", False) else 32  # the batching Embedder itself uses
    t = time.perf_counter()
    for s in range(0, len(order), step):
        batch = [ids[i] for i in order[s : s + step]]
        emb._run_batch(batch)
    raw = len(texts) / (time.perf_counter() - t)
    _ = np
    return ours, raw, len(texts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="auto")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--sections", type=int, default=300)
    ap.add_argument("--library", type=Path, help="an already scanned library (default: the eval library)")
    a = ap.parse_args()
    lib = a.library or eval_library(embed=True)
    p50, p90, mode, dev = in_process(lib, a.device)
    print(f"warm in-process ask ({mode}, device {dev}): p50 {p50:.1f} ms, p90 {p90:.1f} ms over 90 queries")
    wp = whole_process(lib, a.device, a.runs)
    print(f"whole-process `gmtool ask --json`: median {wp:.3f} s over {a.runs} queries")
    ours, raw, n = throughput(lib, a.device, a.sections)
    print(f"embedding throughput on {n} scan sections: Embedder.embed {ours:.1f} sections/s, "
          f"raw onnxruntime {raw:.1f} sections/s ({100 * ours / raw:.0f}% of the limit)")


if __name__ == "__main__":
    main()
