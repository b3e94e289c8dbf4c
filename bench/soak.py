"""Soak `gmtool serve`: 1,000 mixed MCP calls over stdio while `gmtool scan --force` rewrites the same library.

    .venv/bin/python bench/soak.py [--calls 1000] [--library DIR] [--embed] [--max-scans 40] [--seed 7] [--json]

Without --library it copies the corpus (4 PDFs + 4 Markdown files from ../shared/corpus) into a temp folder
and scans it once (keyword-only unless --embed). One server (`python -m gmtool serve`, spawned by fastmcp's
StdioTransport) then answers a seeded mix of ask_books, search_library, read_section, get_library_toc,
page resources and bad inputs, one call at a time, while a thread runs `gmtool scan LIB --force` over and
over on the same library (at most --max-scans times; it stops when the calls are done).

Reports latency p50/p99 (all calls and per kind), errors by code (bad inputs, which must fail, apart from
good calls, which should not), and the server's RSS (psutil when installed, else /proc/PID/status) at start,
after warm-up and at the end, with a sample every 5% of the calls. Warm-up is the first 10% of the calls and
the first side scan, so every kind of call has run and the server has reloaded the rewritten library once.
Checks: the server never died, every stdout line was JSON-RPC, stderr has no traceback, every bad input got
a coded error, RSS grew at most 10% after warm-up. Exit code 1 if a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# bench/ holds a script named mcp.py: keep the folder off sys.path so `import mcp` finds the SDK
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
DEV_ASK = SHARED / "eval" / "dev_ask.jsonl"
PDFS = ["cc-srd5.pdf", "SRD5.1-CCBY4.0_License_live_links.pdf", "Songs-of-Maya_rules.pdf", "lasers_and_feelings_rpg.pdf"]
MDS = ["cc-srd5.md", "DND-SRD-5.2-CC.md", "Fate-Condensed-SRD-CC-BY.md", "Basic-Fantasy-RPG-Rules-r142.md"]
WORDS = ["fireball", "goblin", "grapple", "poison", "dragon", "healing", "stealth", "fly", "invisibility",
         "opportunity attack", "fate point", "fireblal", "gobiln", "armor class", "cure wounds", "aspects"]
ASKS = ["what happens when I fall", "a tanky spellcaster class", "how does grappling work", "spell that heals allies",
        "how do I spend fate points", "monster that turns people to stone"]
MAX_RSS_GROWTH = 0.10
CODE = re.compile(r"^([A-Z][A-Z_]+): ")


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    k = (len(s) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def rss_mb(pid: int) -> float:
    try:
        import psutil  # type: ignore[import-untyped]

        return float(psutil.Process(pid).memory_info().rss) / 2**20
    except ImportError:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no RSS for pid {pid}")


def server_pid(before: set[int]) -> int:
    """The `gmtool serve` child this process started (StdioTransport does not expose it)."""
    for p in Path("/proc").iterdir():
        if not p.name.isdigit() or int(p.name) in before:
            continue
        try:
            stat = (p / "stat").read_text()
            cmd = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and b"serve" in cmd:
            return int(p.name)
    raise RuntimeError("gmtool serve process not found")


def gmtool(*args: str) -> list[str]:
    return [sys.executable, "-m", "gmtool", *args]


def build_library(dest: Path, embed: bool) -> Path:
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found at {CORPUS}")
    dest.mkdir(parents=True, exist_ok=True)
    for n in PDFS:
        shutil.copy2(CORPUS / "pdf" / n, dest / n)
    for n in MDS:
        shutil.copy2(CORPUS / "md" / n, dest / n)
    done = subprocess.run(gmtool("scan", str(dest), "--json", *([] if embed else ["--no-embed"])), cwd=ROOT,
                          capture_output=True, text=True, check=False, env=env())
    if done.returncode not in (0, 3):
        sys.exit(f"scan failed ({done.returncode}): {done.stderr[-2000:]}")
    return dest


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


class Scanner(threading.Thread):
    """`gmtool scan --force` on the library, again and again, until told to stop or --max-scans."""

    def __init__(self, lib: Path, max_scans: int, embed: bool) -> None:
        super().__init__(daemon=True)
        self.lib, self.max_scans, self.embed = lib, max_scans, embed
        self.stop = threading.Event()
        self.exit_codes: list[int] = []
        self.durations: list[float] = []

    def run(self) -> None:
        cmd = gmtool("scan", str(self.lib), "--force", "--json", *([] if self.embed else ["--no-embed"]))
        while not self.stop.is_set() and len(self.exit_codes) < self.max_scans:
            t = time.perf_counter()
            done = subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False, env=env())
            self.durations.append(time.perf_counter() - t)
            self.exit_codes.append(done.returncode)


def plan(n: int, seed: int, sources: list[str], titles: dict[str, list[str]]) -> list[tuple[str, str, dict[str, Any]]]:
    """(kind, tool or uri, arguments); kinds starting with 'bad' must fail."""
    rng = random.Random(seed)
    asks = [json.loads(x)["query"] for x in DEV_ASK.read_text().splitlines() if x.strip()] if DEV_ASK.exists() else []
    asks = asks or ASKS
    out: list[tuple[str, str, dict[str, Any]]] = []
    for _ in range(n):
        sid = rng.choice(sources)
        r = rng.random()
        if r < 0.25:
            out.append(("ask_books", "ask_books", {"query": rng.choice(asks), "limit": rng.choice([5, 10])}))
        elif r < 0.50:
            out.append(("search_library", "search_library", {"query": rng.choice(WORDS), "limit": rng.choice([5, 20])}))
        elif r < 0.65:
            out.append(("read_section", "read_section", {"source_id": sid, "title": rng.choice(titles[sid])}))
        elif r < 0.72:
            out.append(("read_page", f"gmtool://source/{sid}/page/1", {}))
        elif r < 0.82:
            args: dict[str, Any] = {"source_id": sid}
            if rng.random() < 0.3:
                args["cursor"] = "1"
            out.append(("get_library_toc", "get_library_toc", args))
        else:
            out.append(rng.choice([
                ("bad_limit", "search_library", {"query": "x", "limit": 0}),
                ("bad_page", "read_section", {"source_id": sid, "page": "abc"}),
                ("bad_page_uri", f"gmtool://source/{sid}/page/abc", {}),
                ("bad_source", "read_section", {"source_id": "no-such-book", "title": "x"}),
                ("bad_query", "ask_books", {"query": "  "}),
                ("bad_cursor", "get_library_toc", {"source_id": sid, "cursor": "zz"}),
                ("bad_argument", "search_library", {"query": "x", "bogus": True}),
                ("bad_section", "read_section", {"source_id": sid, "title": "Zzyzx Quorble"}),
            ]))
    return out


async def one(client: Any, tool: str, args: dict[str, Any]) -> str | None:
    """Run one call; None on success, else the error's code."""
    from mcp.shared.exceptions import MCPError

    if tool.startswith("gmtool://"):
        try:
            await client.read_resource(tool)
            return None
        except MCPError as exc:
            m = CODE.match(str(exc))
            return m.group(1) if m else f"PROTOCOL({exc.error.code})"
    res = await client.call_tool(tool, args, raise_on_error=False)
    if not res.is_error:
        return None
    m = CODE.match(res.content[0].text if res.content else "")
    return m.group(1) if m else "UNCODED"


class Stats:
    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.good_errors: Counter[str] = Counter()
        self.bad_codes: Counter[str] = Counter()
        self.bad_passed = 0
        self.protocol_errors = 0


async def soak(lib: Path, calls: int, seed: int, max_scans: int, embed: bool, stderr_path: Path) -> dict[str, Any]:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    stats = Stats()

    async def on_message(message: Any) -> None:
        if isinstance(message, Exception):  # a stdout line that was not JSON-RPC
            stats.protocol_errors += 1

    before = {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    transport = StdioTransport(sys.executable, ["-m", "gmtool", "serve", "--library", str(lib)], env=env(),
                               cwd=str(ROOT), keep_alive=False, log_file=stderr_path)
    async with Client(transport, timeout=300, message_handler=on_message) as client:
        pid = server_pid(before)
        rss = {"start": rss_mb(pid)}
        listed = (await client.call_tool("list_library", {})).structured_content["sources"]
        sources = [s["source_id"] for s in listed]
        titles: dict[str, list[str]] = {}
        for sid in sources:
            toc = (await client.call_tool("get_library_toc", {"source_id": sid})).structured_content
            titles[sid] = [n["title"] for n in toc["entries"]][:200] or ["Introduction"]
        work = plan(calls, seed, sources, titles)
        scanner = Scanner(lib, max_scans, embed)
        scanner.start()
        t0 = time.perf_counter()
        series: list[tuple[int, float]] = []
        for i, (kind, tool, args) in enumerate(work):
            if i % max(1, calls // 20) == 0:
                series.append((i, rss_mb(pid)))
            if "warm" not in rss and i >= calls // 10 and scanner.exit_codes:
                rss["warm"], rss["warm_at_call"] = rss_mb(pid), i  # every kind of call seen, and one reload
            t = time.perf_counter()
            code = await one(client, tool, args)
            stats.times.setdefault(kind, []).append((time.perf_counter() - t) * 1000)
            if kind.startswith("bad"):
                if code is None:
                    stats.bad_passed += 1
                else:
                    stats.bad_codes[code] += 1
            elif code is not None:
                stats.good_errors[code] += 1
        elapsed = time.perf_counter() - t0
        scanner.stop.set()
        rss["end"] = rss_mb(pid)
        series.append((calls, rss["end"]))
        rss.setdefault("warm", rss["end"])
        rss.setdefault("warm_at_call", calls)
        alive = Path(f"/proc/{pid}").exists()
        await asyncio.to_thread(scanner.join, 600)
    return report(stats, rss, series, alive, scanner, elapsed, stderr_path, lib)


def report(stats: Stats, rss: dict[str, float], series: list[tuple[int, float]], alive: bool, scanner: Scanner,
           elapsed: float, stderr_path: Path, lib: Path) -> dict[str, Any]:
    all_times = [t for ts in stats.times.values() for t in ts]
    stderr = stderr_path.read_text(errors="replace") if stderr_path.exists() else ""
    growth = (rss["end"] - rss["warm"]) / rss["warm"]
    checks = {
        "server alive after the calls": alive,
        "no protocol error on stdout": stats.protocol_errors == 0,
        "no traceback on stderr": "Traceback" not in stderr,
        "every bad input failed with a code": stats.bad_passed == 0 and "UNCODED" not in stats.bad_codes,
        f"RSS growth after warm-up <= {MAX_RSS_GROWTH:.0%}": growth <= MAX_RSS_GROWTH,
        "a scan finished while calls ran (warm-up includes one reload)": rss["warm_at_call"] < len(all_times),
    }
    return {
        "library": str(lib),
        "calls": len(all_times),
        "seconds": round(elapsed, 1),
        "latency_ms": {"all": {"p50": round(statistics.median(all_times), 1), "p99": round(percentile(all_times, 0.99), 1)},
                       **{k: {"n": len(v), "p50": round(statistics.median(v), 1), "p99": round(percentile(v, 0.99), 1)}
                          for k, v in sorted(stats.times.items())}},
        "bad_input_errors_by_code": dict(stats.bad_codes.most_common()),
        "good_call_errors_by_code": dict(stats.good_errors.most_common()),
        "rss_mb": {k: round(v, 1) for k, v in rss.items()},
        "rss_series_mb": [(i, round(v, 1)) for i, v in series],
        "rss_growth_after_warmup": round(growth, 4),
        "side_scans": {"runs": len(scanner.exit_codes), "exit_codes": dict(Counter(scanner.exit_codes)),
                       "median_s": round(statistics.median(scanner.durations), 1) if scanner.durations else None},
        "stderr_lines": len(stderr.splitlines()),
        "checks": checks,
        "ok": all(checks.values()),
    }


def show(r: dict[str, Any]) -> None:
    lat = r["latency_ms"]
    print(f"library: {r['library']}")
    print(f"{r['calls']} calls in {r['seconds']} s beside {r['side_scans']['runs']} `gmtool scan --force` runs "
          f"(exit codes {r['side_scans']['exit_codes']}, median {r['side_scans']['median_s']} s)")
    print(f"latency: p50 {lat['all']['p50']} ms, p99 {lat['all']['p99']} ms")
    for k, v in lat.items():
        if k != "all":
            print(f"  {k:16} n={v['n']:4}  p50 {v['p50']:8.1f} ms  p99 {v['p99']:8.1f} ms")
    print(f"bad inputs, errors by code: {r['bad_input_errors_by_code']}")
    print(f"good calls, errors by code: {r['good_call_errors_by_code'] or 'none'}")
    m = r["rss_mb"]
    print(f"server RSS: start {m['start']} MB, after warm-up (call {int(m['warm_at_call'])}) {m['warm']} MB, "
          f"end {m['end']} MB (growth after warm-up {r['rss_growth_after_warmup']:+.1%})")
    print("  RSS by call: " + ", ".join(f"{i}: {v:.0f}" for i, v in r["rss_series_mb"]))
    print(f"server stderr: {r['stderr_lines']} lines")
    for name, ok in r["checks"].items():
        print(f"  [{'ok' if ok else 'FAIL'}] {name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--library", type=Path, help="a library to copy (default: the corpus); the copy is scanned")
    ap.add_argument("--embed", action="store_true", help="scan with sentence embeddings (slower scans)")
    ap.add_argument("--max-scans", type=int, default=40, help="at most this many side scans")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    a = ap.parse_args()
    logging.getLogger("mcp.client.stdio").setLevel(logging.CRITICAL)  # counted by the message handler instead
    with tempfile.TemporaryDirectory(prefix="gmtool-soak-") as tmp:
        lib = Path(tmp) / "lib"
        if a.library:
            shutil.copytree(a.library, lib, ignore=shutil.ignore_patterns(".gmtool"))
            subprocess.run(gmtool("scan", str(lib), "--json", *([] if a.embed else ["--no-embed"])), cwd=ROOT,
                           capture_output=True, check=False, env=env())
        else:
            build_library(lib, a.embed)
        r = asyncio.run(soak(lib, max(10, a.calls), a.seed, a.max_scans, a.embed, Path(tmp) / "serve.stderr"))
        if not r["checks"]["no traceback on stderr"]:
            print((Path(tmp) / "serve.stderr").read_text()[-4000:], file=sys.stderr)
    if a.json:
        print(json.dumps(r, indent=2))
    else:
        show(r)
    sys.exit(0 if r["ok"] else 1)


if __name__ == "__main__":
    main()
