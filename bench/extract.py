#!/usr/bin/env python3
"""Pages per second of the PDF extractor on the corpus, for workers=1 and workers=2.

Usage: python bench/extract.py [--corpus DIR] [--workers 1 2] [--repeat N] [--pdfplumber]

--pdfplumber adds the baseline users would otherwise get: pdfplumber's extract_text() on
every page of SRD 5.1 (about a minute). Wall time and, for workers=1, CPU time are shown
(CPU time is the fairer figure on a busy machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_CORPUS = ROOT.parent / "shared" / "corpus" / "pdf"


def bench_gmtool(path: Path, workers: int, repeat: int) -> tuple[int, float, float, int]:
    from gmtool.index.extract.pdf import extract_pdf

    best_wall = best_cpu = float("inf")
    pages = entries = 0
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        doc = extract_pdf(path, workers=workers)
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
        pages, entries = doc.pages, len(doc.entries)
    return pages, best_wall, best_cpu, entries


def bench_pdfplumber(path: Path) -> tuple[int, float]:
    import pdfplumber

    t0 = time.perf_counter()
    with pdfplumber.open(path) as pdf:
        n = len(pdf.pages)
        for page in pdf.pages:
            page.extract_text()
            page.close()
    return n, time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--repeat", type=int, default=2, help="best of N runs")
    ap.add_argument("--pdfplumber", action="store_true", help="also time pdfplumber on SRD 5.1 (slow)")
    a = ap.parse_args()
    files = sorted(a.corpus.glob("*.pdf"))
    if not files:
        sys.exit(f"no PDFs in {a.corpus}")
    print(f"{'file':42s} {'pages':>5s} {'workers':>7s} {'wall s':>7s} {'pages/s':>8s} {'cpu p/s':>8s} {'entries':>7s}")
    for f in files:
        for w in a.workers:
            n, wall, cpu, ne = bench_gmtool(f, w, a.repeat)
            cpu_rate = f"{n / cpu:8.0f}" if w == 1 else f"{'-':>8s}"
            print(f"{f.name[:42]:42s} {n:5d} {w:7d} {wall:7.2f} {n / wall:8.0f} {cpu_rate} {ne:7d}", flush=True)
    if a.pdfplumber:
        srd = a.corpus / "SRD5.1-CCBY4.0_License_live_links.pdf"
        n, wall = bench_pdfplumber(srd)
        print(f"{'pdfplumber extract_text: ' + srd.name[:17]:42s} {n:5d} {1:7d} {wall:7.2f} {n / wall:8.0f}")


if __name__ == "__main__":
    main()
