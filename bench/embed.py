"""Embedding throughput: raw onnxruntime vs Embedder.embed, plus query latency and the one-time graph rewrite.

    .venv/bin/python bench/embed.py [--n 300] [--batch N] [--device cpu|cuda]

Sections are title + first 200 words from ../shared/corpus/md/cc-srd5.md. "raw" runs the same
session on the same length-sorted batches with no Python around it beyond numpy padding and pooling,
so it is the upper bound for one text at a time. With the rewritten CPU model embed() runs one text per
session.run on one thread, `threads` texts at once (see gmtool/rank/embed.py), while the raw loop runs
them one after another: on 2 cores embed() is then faster than "raw". The rewrite itself (gmtool/rank/onnx_graph.py)
runs once per model and is then cached, so it is timed on its own.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path
from typing import Any

CORPUS_MD = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "md" / "cc-srd5.md"


def sections(n: int) -> list[str]:
    text = CORPUS_MD.read_text(encoding="utf-8")
    out = []
    for block in re.split(r"\n(?=#{1,6} )", text):
        lines = block.strip().splitlines()
        if not lines or not lines[0].startswith("#"):
            continue
        title = lines[0].lstrip("#").strip()
        words = " ".join(lines[1:]).split()
        if len(words) < 20:
            continue
        out.append(f"{title}\n{' '.join(words[:200])}")
    return out[:n]


def throughput(emb: Any, texts: list[str], batch: int | None, repeat: int) -> None:
    """raw onnxruntime on the batches embed() forms vs embed() itself, `repeat` times."""
    from gmtool.rank.embed import GPU_MAX_BATCH, GPU_TOKEN_BUDGET, PIPE_BLOCK, TOKEN_BUDGET

    emb.embed(texts[:8], batch_size=batch)  # warm-up
    gpu = emb.device == "cuda"
    size = 1 if emb.per_text else batch or (GPU_MAX_BATCH if gpu else 32)
    budget = GPU_TOKEN_BUDGET if gpu else TOKEN_BUDGET
    batches = []
    for start in range(0, len(texts), PIPE_BLOCK):  # the blocks and batches embed() forms
        ids = emb.tokenize(texts[start:start + PIPE_BLOCK])
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches += [[ids[i] for i in chunk] for chunk in emb._batches(ids, order, size, budget)]

    feeds = [emb._feeds(b) for b in batches]  # padded arrays built outside the timed loop
    session, output = emb._session, emb._output
    for rep in range(repeat):
        t = time.perf_counter()
        for f in feeds:
            session.run([output], f)  # bare onnxruntime: no tokenising, padding or pooling
        raw = len(texts) / (time.perf_counter() - t)
        t = time.perf_counter()
        emb.embed(texts, batch_size=batch)
        full = len(texts) / (time.perf_counter() - t)
        print(f"run {rep + 1}: raw onnxruntime {raw:6.1f} sections/s   Embedder.embed {full:6.1f} sections/s "
              f"({len(batches)} batches)")


def query_latency(emb: Any) -> None:
    queries = ["how does grappling work", "what happens when I fall 60 feet", "fireball damage",
               "can a rogue sneak attack twice in a round", "rules for underwater combat"]
    times = []
    for _ in range(10):
        for q in queries:
            t = time.perf_counter()
            emb.embed_query(q)
            times.append((time.perf_counter() - t) * 1000)
    print(f"query: p50 {statistics.median(times):.1f} ms  p90 {sorted(times)[int(len(times) * 0.9)]:.1f} ms")


def rewrite_time(emb: Any) -> None:
    """The one-time graph rewrite (cached after the first load, so `load:` above does not show it)."""
    from gmtool.rank.onnx_graph import rewrite_model

    data = emb.source_path.read_bytes()
    t = time.perf_counter()
    _, count = rewrite_model(data)
    print(f"rewrite: {time.perf_counter() - t:.2f}s for {count} nodes (onnx, without the agreement check)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--batch", type=int, default=None, help="texts per batch (default: the embedder's, 32 on CPU, "
                    "512 on a GPU, within a padded-token budget)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()

    from gmtool.rank.embed import load_embedder

    t0 = time.perf_counter()
    emb = load_embedder(args.device)
    print(f"load: {time.perf_counter() - t0:.2f}s  device={emb.device}  threads={emb.threads}  "
          f"model={emb.model_used.name}  fingerprint={emb.fingerprint}")
    for w in emb.warnings:
        print("warning:", w)
    texts = sections(args.n)
    lens = sorted(len(x) for x in emb.tokenize(texts))
    print(f"{len(texts)} sections, tokens p50={lens[len(lens) // 2]} max={lens[-1]} "
          f"truncated={sum(n >= 256 for n in lens)}")
    throughput(emb, texts, args.batch, args.repeat)
    query_latency(emb)
    rewrite_time(emb)

if __name__ == "__main__":
    main()
