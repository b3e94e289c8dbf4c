#!/usr/bin/env python3
"""Scan speed on the corpus PDFs: full-scan pages/s with --workers 1 and 2, embeddings off and on,
the no-change rescan, and (with --baseline) pdfplumber-only text extraction for comparison.

Usage: python bench/scan.py [--embed] [--baseline] [--rescans 5] [--workers 1 2] [--markdown]
       python bench/scan.py --first-scan 12|all [--device auto|cpu|cuda]
--first-scan times a first scan, with embeddings, of the 12-book library (the PDFs of corpus/pdf,
the Markdown of corpus/md and the four PDFs of corpus/pdf-more that more/ask.jsonl covers;
12,037 sections) or of every file in those three folders ("all"): when `search` works (the
keyword index is committed) and when all embeddings are done, plus the CPU time and the load,
and (from /proc) the CPU time until search works, so the embedding phase's CPU-s show on a busy host.
--markdown times the Markdown corpus instead: the 4 single-file books and md-more's 3 folder books
(MB/s, MB per CPU-second), and a rescan with one chapter of a folder book changed.
Prints figures; asserts nothing. Besides wall-clock pages/s, each scan's CPU time (the scan
process and its workers) gives pages per CPU-second: the per-worker speed on a busy machine,
where wall-clock figures swing with the other load.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import BENCH_DIR, CORPUS, GMTOOL, MDS, PDFS, bench_env, median


def fresh_pdf_lib() -> Path:
    lib = BENCH_DIR / "scan-pdfs"
    shutil.rmtree(lib, ignore_errors=True)
    lib.mkdir(parents=True)
    for n in PDFS:
        shutil.copy2(CORPUS / "pdf" / n, lib / n)
    return lib


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def full_scan(workers: int, embed: bool) -> tuple[float, int, dict, float]:
    lib = fresh_pdf_lib()
    cmd = [GMTOOL, "scan", str(lib), "--json", "--workers", str(workers)] + ([] if embed else ["--no-embed"])
    cpu = _children_cpu()
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=bench_env())
    wall = time.perf_counter() - t
    cpu = _children_cpu() - cpu
    rep = json.loads(p.stdout)
    pages = sum(s["pages"] for s in json.loads(subprocess.run(
        [GMTOOL, "ls", "--library", str(lib), "--json"], capture_output=True, text=True, env=bench_env()
    ).stdout)["sources"])
    return wall, pages, rep, cpu


def markdown_scan(workers: int) -> None:
    """Full keyword-only scan of the Markdown corpus, then a rescan with one chapter edited."""
    lib = BENCH_DIR / "scan-md"
    shutil.rmtree(lib, ignore_errors=True)
    lib.mkdir(parents=True)
    for n in MDS:
        shutil.copy2(CORPUS / "md" / n, lib / n)
    more = CORPUS / "md-more"
    for folder in sorted(p for p in more.iterdir() if p.is_dir()):
        shutil.copytree(folder, lib / folder.name)
    size = sum(p.stat().st_size for p in lib.rglob("*") if p.suffix in (".md", ".markdown"))
    for label, touch in (("full scan", None), ("one chapter changed", "open-legend/GMScreen.md")):
        if touch:
            with open(lib / touch, "a", encoding="utf-8") as fh:
                fh.write("\nOne more line.\n")
        cmd = [GMTOOL, "scan", str(lib), "--json", "--no-embed", "--workers", str(workers)]
        cpu = _children_cpu()
        t = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=bench_env())
        wall, cpu = time.perf_counter() - t, _children_cpu() - cpu
        rep = json.loads(p.stdout)
        print(f"Markdown {label}, --workers {workers}: {size / 1e6:.1f} MB in {wall:.2f} s = {size / 1e6 / wall:.2f} MB/s; "
              f"CPU {cpu:.2f} s = {size / 1e6 / cpu:.2f} MB per CPU-second; files read: {len(rep['indexed_files'])}")


def rescan(runs: int) -> float:
    lib = BENCH_DIR / "scan-pdfs"
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([GMTOOL, "scan", str(lib), "--json", "--no-embed"], stdout=subprocess.DEVNULL, env=bench_env())
        times.append(time.perf_counter() - t)
    return median(times)


MORE_BOOKS = ["additional-things-english-v1.0.pdf", "dungeon-world.pdf", "the-black-hack-english-v1.2.pdf",
              "the-gobz-hack.pdf"]


def first_scan_lib(which: str) -> Path:
    lib = BENCH_DIR / f"first-scan-{which}"
    shutil.rmtree(lib, ignore_errors=True)
    lib.mkdir(parents=True)
    if which == "all":
        files = [p for d in ("pdf", "md", "pdf-more") for p in sorted((CORPUS / d).iterdir())]
    else:
        files = [CORPUS / "pdf" / n for n in PDFS] + [CORPUS / "md" / n for n in MDS] + \
            [CORPUS / "pdf-more" / n for n in MORE_BOOKS]
    for f in files:
        shutil.copy2(f, lib / f.name)
    return lib


def _keyword_committed(lib: Path) -> bool:
    try:
        state = json.loads((lib / ".gmtool" / "manifest.json").read_bytes()).get("state", {})
    except (OSError, ValueError):
        return False
    return bool(state.get("keyword"))


def _tree_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a running process, its reaped children and its live
    descendants, from /proc (Linux); 0 where that cannot be read."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        own = sum(int(x) for x in fields[11:15]) / tick  # utime, stime, cutime, cstime
        kids = [int(c) for task in Path(f"/proc/{pid}/task").iterdir()
                for c in (task / "children").read_text().split()]
    except (OSError, ValueError, IndexError):
        return 0.0
    return own + sum(_tree_cpu(c) for c in kids)


def first_scan(which: str, device: str) -> None:
    """A first scan with embeddings: seconds until `search` works, and until every book is embedded."""
    import os

    lib = first_scan_lib(which)
    load = os.getloadavg()
    cpu = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.Popen([GMTOOL, "scan", str(lib), "--json", "--device", device], stdout=subprocess.PIPE, text=True, env=bench_env())
    t_search = None
    cpu_keyword = search_cpu = 0.0
    while proc.poll() is None:
        if t_search is None and _keyword_committed(lib):
            t_search = time.perf_counter() - t
            cpu_keyword = _tree_cpu(proc.pid)
            before = _children_cpu()
            found = subprocess.run([GMTOOL, "search", "fireball", "--json", "-L", str(lib)], capture_output=True,
                                   text=True, env=bench_env())
            search_cpu = _children_cpu() - before
            hits = len(json.loads(found.stdout)["results"]) if found.returncode == 0 else 0
            print(f"  search works after {t_search:.1f} s ({hits} hits for 'fireball', "
                  f"{time.perf_counter() - t:.1f} s with that search)")
        time.sleep(0.05)
    wall = time.perf_counter() - t
    rep = json.loads(proc.stdout.read() if proc.stdout else "{}")
    cpu = _children_cpu() - cpu
    print(f"first scan of {rep['files_indexed']} files "
          f"({rep['sections']} sections, {rep['embeddings_generated']} windows embedded): "
          f"search after {t_search if t_search is not None else float('nan'):.1f} s, all embeddings after "
          f"{wall:.1f} s (embedding phase {wall - (t_search or 0):.1f} s, --device {device}); CPU {cpu:.1f} s (scan, its workers and the one search); "
          f"load average before {load[0]:.1f}, after {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    if t_search is not None:
        print(f"  CPU until search works {cpu_keyword:.1f} s; embedding phase {cpu - search_cpu - cpu_keyword:.1f} CPU-s "
              f"for {rep['embeddings_generated']} windows")


def baseline() -> None:
    from extract import bench_pdfplumber

    for n in PDFS:
        pages, dt = bench_pdfplumber(CORPUS / "pdf" / n)
        print(f"  pdfplumber-only {n}: {pages} pages in {dt:.1f} s = {pages / dt:.1f} pages/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--embed", action="store_true", help="also time full scans with embeddings")
    ap.add_argument("--baseline", action="store_true", help="also time pdfplumber-only extraction (slow)")
    ap.add_argument("--rescans", type=int, default=5)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--first-scan", choices=["12", "all"], help="time a first scan with embeddings (see above)")
    ap.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="--first-scan's device")
    ap.add_argument("--markdown", action="store_true", help="time the Markdown corpus (files and folder books)")
    a = ap.parse_args()
    if a.first_scan:
        first_scan(a.first_scan, a.device)
        return
    elif a.markdown:
        for workers in a.workers:
            markdown_scan(workers)
        return
    for embed in ([False, True] if a.embed else [False]):
        for workers in a.workers:
            wall, pages, rep, cpu = full_scan(workers, embed)
            extra = f", {rep['embeddings_generated']} embeddings" if embed else ""
            print(f"full scan, {len(PDFS)} PDFs, --workers {workers}, embeddings {'on' if embed else 'off'}: "
                  f"{pages} pages in {wall:.1f} s = {pages / wall:.0f} pages/s ({pages / wall / workers:.0f} per worker)"
                  f"{extra}; CPU {cpu:.1f} s = {pages / cpu:.0f} pages per CPU-second")
    print(f"no-change rescan: median {rescan(a.rescans):.3f} s")
    if a.baseline:
        baseline()


if __name__ == "__main__":
    main()
