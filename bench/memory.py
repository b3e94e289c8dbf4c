#!/usr/bin/env python3
"""Peak memory of `gmtool scan --no-embed` on hostile inputs (issue 14, "bounded memory").

Each input is generated in a fresh temporary library and scanned by a separate `gmtool`
process; the figure is that child's peak resident set size (getrusage RUSAGE_CHILDREN
ru_maxrss, read after each scan: the maximum over the children so far, so cases run in
increasing order of expected cost would hide one another; each case therefore runs in its
own short-lived Python wrapper process).

Cases:
- one-line:     a 50 MB Markdown file that is a single line
- normal-lines: a 50 MB Markdown file of ordinary 70-character lines and a heading now and then
- text-lines:   a 50 MB plain-text file without any heading
- pdf-headings: a one-page PDF with 200,000 tiny bold headings
- toc-resource: `gmtool serve` on a 12-book library (the 8 corpus books and 4 from corpus/pdf-more),
                scanned first; every book's TOC resource read page by page (following next_uri). The
                figure is the server's own peak RSS (VmHWM, Linux), with the largest message it sent.
                --toc-headings N adds a 13th book, a Markdown file of N headings.
- md-headings:  a Markdown file of one million `# H` lines (9.9 MB; issue 25: it took 5.3 GB)
- flate-bomb:   a 40-page PDF of under 1 MB whose pages 2-40 draw one content stream that inflates
                to 800 MB (issue 25: 1.56 GB, 5.1 GB with 2 workers); run it with --workers 1 and 2

Usage: python bench/memory.py [--size-mb 50] [--headings 200000] [--toc-headings 0] [--md-headings 1000000] [--bomb-mb 800] [--only CASE ...] [--workers N]
Prints one line per case; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GMTOOL = str(Path(sys.executable).with_name("gmtool"))
WORDS = ("goblin", "torch", "dungeon", "saving", "throw", "the", "and", "of", "a", "spell", "sword", "river")


def _line(n: int) -> str:
    """A deterministic ordinary line of about 70 characters."""
    words = [WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(11)]
    return " ".join(words).capitalize() + "."


def make_one_line(path: Path, size: int) -> Path:
    chunk = ("word " * 200).encode()
    with open(path, "wb") as fh:
        fh.write(b"# One long line\n\n")
        written = 0
        while written < size:
            fh.write(chunk)
            written += len(chunk)
        fh.write(b"\n")
    return path


def make_lines(path: Path, size: int, headings: bool) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        written, n = 0, 0
        while written < size:
            if headings and n % 400 == 0:
                text = f"\n## Section {n // 400}\n\n"
            else:
                text = _line(n) + "\n"
            fh.write(text)
            written += len(text)
            n += 1
    return path


def make_heading_md(path: Path, headings: int) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(headings):
            fh.write(f"# H{i}\n")
    return path


def make_heading_pdf(path: Path, headings: int) -> Path:
    """One page, `headings` one-word bold lines at 1 pt, each followed by a plain word: the worst
    case for heading detection (every line a candidate). Written by hand: no PDF library is
    needed and fpdf2 would take minutes for this many text objects."""
    ops = ["BT"]
    per_col = 700
    for i in range(headings):
        col, row = divmod(i, per_col)
        x = 5 + (col % 60) * 10
        y = 790 - row * 1.1
        ops.append(f"/F2 1 Tf 1 0 0 1 {x:.1f} {y:.1f} Tm (H{i}) Tj /F1 1 Tf ( w) Tj")
    ops.append("ET")
    stream = "\n".join(ops).encode()
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R /F2 6 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>",
    ]
    path.write_bytes(_pdf(objs))
    return path


def make_flate_bomb(path: Path, inflated_mb: int, pages: int = 40) -> Path:
    """A PDF whose page 1 holds a line of text and whose other pages all draw one content stream of
    `inflated_mb` MB of spaces, Flate-compressed (~1,000:1, so 800 MB fit in under 1 MB): pdfium
    inflates it whole for each page it loads. Several pages, so that two workers each get some."""
    import zlib

    comp = zlib.compressobj(9)
    chunk = b" " * (1 << 20)
    bomb = b"".join(comp.compress(chunk) for _ in range(inflated_mb)) + comp.flush()
    text = b"BT /F1 12 Tf 72 720 Td (A harmless first page about a lantern.) Tj ET"
    kids = " ".join(f"{5 + k} 0 R" for k in range(pages))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Length " + str(len(text)).encode() + b" >>\nstream\n" + text + b"\nendstream",
        b"<< /Length " + str(len(bomb)).encode() + b" /Filter /FlateDecode >>\nstream\n" + bomb + b"\nendstream",
    ]
    for k in range(pages):
        contents = 3 if k == 0 else 4
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {contents} 0 R "
                    f"/Resources << /Font << /F1 {5 + pages} 0 R >> >> >>".encode())
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    path.write_bytes(_pdf(objs))
    return path


def _pdf(objs: list[bytes]) -> bytes:
    """A PDF file of these objects (numbered from 1, the first the catalog), with its xref table."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


SHARED = Path(__file__).resolve().parents[2] / "shared" / "corpus"
TWELVE = [*(f"pdf/{n}" for n in ("cc-srd5.pdf", "SRD5.1-CCBY4.0_License_live_links.pdf", "Songs-of-Maya_rules.pdf",
                                 "lasers_and_feelings_rpg.pdf")),
          *(f"md/{n}" for n in ("cc-srd5.md", "DND-SRD-5.2-CC.md", "Fate-Condensed-SRD-CC-BY.md",
                                "Basic-Fantasy-RPG-Rules-r142.md")),
          *(f"pdf-more/{n}" for n in ("the-black-hack-english-v1.2.pdf", "additional-things-english-v1.0.pdf",
                                      "dungeon-world.pdf", "the-gobz-hack.pdf"))]


def _rpc(proc: subprocess.Popen[bytes], rid: int, method: str, params: dict[str, object]) -> tuple[dict, int]:
    """Send one request, return its reply and the reply's size in bytes (notifications skipped)."""
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("gmtool serve closed stdout")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return msg, len(line)


def measure_toc_resource(args: argparse.Namespace) -> dict[str, object]:
    """Scan the 12 books, then read every TOC page through a real `gmtool serve`; the server's peak RSS."""
    with tempfile.TemporaryDirectory(prefix="gmtool-mem-toc-") as tmp:
        lib = Path(tmp) / "lib"
        lib.mkdir()
        for rel in TWELVE:
            shutil.copy2(SHARED / rel, lib / Path(rel).name)
        if args.toc_headings:
            with open(lib / "headings.md", "w", encoding="utf-8") as fh:
                fh.writelines(f"## Heading {i}\n\n{_line(i)}\n\n" for i in range(args.toc_headings))
        env = dict(os.environ, GMTOOL_CONFIG_DIR=str(Path(tmp) / "config"))
        subprocess.run([GMTOOL, "scan", str(lib), "--no-embed", "--json", "--workers", str(args.workers)],
                       capture_output=True, check=True, env=env)
        proc = subprocess.Popen([GMTOOL, "serve", "--library", str(lib)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        t = time.perf_counter()
        _rpc(proc, 0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "bench", "version": "0"}})
        assert proc.stdin is not None
        proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        sources, _ = _rpc(proc, 1, "resources/read", {"uri": "gmtool://sources"})
        ids = [s["source_id"] for s in json.loads(sources["result"]["contents"][0]["text"])["sources"]]
        pages = entries = largest = 0
        rid = 2
        for sid in ids:
            uri: str | None = f"gmtool://source/{sid}/toc"
            while uri:
                reply, size = _rpc(proc, rid, "resources/read", {"uri": uri})
                rid += 1
                data = json.loads(reply["result"]["contents"][0]["text"])
                pages, entries, largest = pages + 1, entries + len(data["entries"]), max(largest, size)
                uri = data.get("next_uri")  # absent before the resource was paged: one message
        wall = time.perf_counter() - t
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peak_kb = int(next(x.split()[1] for x in status.splitlines() if x.startswith("VmHWM:")))
        proc.stdin.close()
        proc.wait(60)
        return {"case": "toc-resource", "input_mb": round(sum(p.stat().st_size for p in lib.iterdir()
                                                              if p.is_file()) / 2**20, 1),
                "peak_rss_mb": round(peak_kb / 1024), "wall_s": round(wall, 1), "exit": proc.returncode,
                "outcome": f"books={len(ids)} pages={pages} entries={entries} largest_message={largest / 2**20:.2f} MB"}


CASES = {
    "one-line": lambda d, a: make_one_line(d / "one-line.md", a.size_mb << 20),
    "normal-lines": lambda d, a: make_lines(d / "normal-lines.md", a.size_mb << 20, headings=True),
    "text-lines": lambda d, a: make_lines(d / "text-lines.txt", a.size_mb << 20, headings=False),
    "pdf-headings": lambda d, a: make_heading_pdf(d / "pdf-headings.pdf", a.headings),
    "toc-resource": None,  # not a generated file: see measure_toc_resource
    "md-headings": lambda d, a: make_heading_md(d / "md-headings.md", a.md_headings),
    "flate-bomb": lambda d, a: make_flate_bomb(d / "flate-bomb.pdf", a.bomb_mb),
}


def _tree_rss_kb(pid: int) -> int:
    """RSS of a process and all its descendants (the scan and its workers), from /proc."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            status = Path(f"/proc/{p}/status").read_text()
            total += int(next(ln.split()[1] for ln in status.splitlines() if ln.startswith("VmRSS:")))
            todo += [int(c) for c in Path(f"/proc/{p}/task/{p}/children").read_text().split()]
        except (OSError, StopIteration, ValueError):
            continue
    return total


def _run_sampled(cmd: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], int]:
    """Run `cmd`, sampling the summed RSS of its process tree every 50 ms (0 without /proc):
    with workers, the sum is what the machine must hold, where ru_maxrss is the largest one."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss_kb(proc.pid))
        time.sleep(0.05)
    out, err = proc.communicate()
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err), peak


def measure(case: str, args: argparse.Namespace) -> dict[str, object]:
    """Generate the input, scan it in a child process, return its peak RSS."""
    if case == "toc-resource":
        return measure_toc_resource(args)
    with tempfile.TemporaryDirectory(prefix=f"gmtool-mem-{case}-") as tmp:
        lib = Path(tmp) / "lib"
        lib.mkdir()
        src = CASES[case](lib, args)
        env = dict(os.environ, GMTOOL_CONFIG_DIR=str(Path(tmp) / "config"))
        cmd = [GMTOOL, "scan", str(lib), "--no-embed", "--json", "--workers", str(args.workers)]
        t = time.perf_counter()
        proc, tree_kb = _run_sampled(cmd, env)
        wall = time.perf_counter() - t
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB on Linux
        try:
            rep = json.loads(proc.stdout)
            outcome = f"indexed={rep.get('indexed')} failed={[f['code'] for f in rep.get('failed', [])]}"
        except ValueError:
            outcome = f"exit {proc.returncode}: {proc.stderr.strip()[-200:]}"
        return {
            "case": case,
            "input_mb": round(src.stat().st_size / 2**20, 1),
            "peak_rss_mb": round(peak_kb / 1024),
            "peak_tree_mb": round(tree_kb / 1024),
            "wall_s": round(wall, 1),
            "exit": proc.returncode,
            "outcome": outcome,
        }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=int, default=50)
    ap.add_argument("--headings", type=int, default=200_000)
    ap.add_argument("--toc-headings", type=int, default=0)
    ap.add_argument("--md-headings", type=int, default=1_000_000)
    ap.add_argument("--bomb-mb", type=int, default=800)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--only", nargs="*", choices=sorted(CASES))
    ap.add_argument("--case", help=argparse.SUPPRESS)  # internal: run one case in this process
    ap.add_argument("--json", action="store_true", help="one JSON object per line")
    args = ap.parse_args()
    if args.case:
        print(json.dumps(measure(args.case, args)))
        return 0
    for case in args.only or list(CASES):
        # a fresh wrapper per case: RUSAGE_CHILDREN is a maximum over all children so far
        cmd = [sys.executable, __file__, "--case", case, "--size-mb", str(args.size_mb),
               "--headings", str(args.headings), "--toc-headings", str(args.toc_headings), "--md-headings", str(args.md_headings),
               "--bomb-mb", str(args.bomb_mb), "--workers", str(args.workers)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"{case}: bench failed: {out.stderr.strip()[-300:]}")
            continue
        row = json.loads(out.stdout)
        if args.json:
            print(json.dumps(row))
        else:
            print(f"{row['case']:<13} {row['input_mb']:>6} MB in  peak RSS {row['peak_rss_mb']:>5} MB "
                  f"(all processes {row['peak_tree_mb']:>5} MB)  "
                  f"{row['wall_s']:>6} s  exit {row['exit']}  {row['outcome']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
