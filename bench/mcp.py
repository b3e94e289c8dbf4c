"""Warm `ask_books` latency through `gmtool serve` over stdio (a real MCP client, a real subprocess).

    .venv/bin/python bench/mcp.py [LIBRARY] [--rounds N] [--no-embed]

Without LIBRARY it builds the evaluation library with `sh ../shared/eval/mklib.sh /tmp/lib` and scans it
(with embeddings unless --no-embed). Each of the 30 queries of ../shared/eval/dev_ask.jsonl is sent with
its "type" as content_types; one warm-up call first, then every query is timed round trip at the client.
Prints the median and p90 in milliseconds, and the search mode the server reported.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
DEV_ASK = SHARED / "eval" / "dev_ask.jsonl"
# this file is named mcp.py: keep its folder off sys.path so `import mcp` finds the SDK, not this script
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]


def build_library(dest: Path, embed: bool) -> Path:
    subprocess.run(["sh", str(SHARED / "eval" / "mklib.sh"), str(dest)], check=True, stdout=subprocess.DEVNULL)
    cmd = [sys.executable, "-m", "gmtool", "scan", str(dest), "--json"] + ([] if embed else ["--no-embed"])
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 3):
        sys.exit(f"scan failed ({done.returncode}): {done.stderr[-2000:]}")
    return dest


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


async def bench(lib: Path, rounds: int) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    queries = [json.loads(x) for x in DEV_ASK.read_text().splitlines() if x.strip()]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    transport = StdioTransport(sys.executable, ["-m", "gmtool", "serve", "--library", str(lib)], env=env,
                               cwd=str(ROOT), keep_alive=False)
    t0 = time.perf_counter()
    async with Client(transport, timeout=300) as client:
        started = time.perf_counter() - t0

        def args(q: dict) -> dict:  # type: ignore[type-arg]
            a = {"query": q["query"], "limit": 10}
            if q.get("type"):
                a["content_types"] = [q["type"]]
            return a

        t1 = time.perf_counter()
        first = await client.call_tool("ask_books", args(queries[0]))
        warmup = time.perf_counter() - t1
        times: list[float] = []
        modes: set[str] = set()
        for _ in range(rounds):
            for q in queries:
                t = time.perf_counter()
                res = await client.call_tool("ask_books", args(q))
                times.append((time.perf_counter() - t) * 1000)
                modes.add(res.structured_content["mode"])
    print(f"library: {lib}")
    print(f"server start + initialize: {started * 1000:.0f} ms; first ask_books (warm-up): {warmup * 1000:.0f} ms"
          f" (mode {first.structured_content['mode']})")
    print(f"warm ask_books over stdio, {len(times)} calls ({len(queries)} queries x {rounds}): "
          f"median {statistics.median(times):.1f} ms, p90 {percentile(times, 0.9):.1f} ms, "
          f"max {max(times):.1f} ms; mode {', '.join(sorted(modes))}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", nargs="?", type=Path, help="an already scanned library (default: build /tmp/lib)")
    ap.add_argument("--rounds", type=int, default=1, help="times to run the 30 queries")
    ap.add_argument("--no-embed", action="store_true", help="when building the library, skip the embeddings")
    a = ap.parse_args()
    lib = a.library or build_library(Path("/tmp/lib"), embed=not a.no_embed)
    asyncio.run(bench(lib.resolve(), max(1, a.rounds)))


if __name__ == "__main__":
    main()
