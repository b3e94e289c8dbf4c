#!/usr/bin/env python3
"""Text quality of what `show` prints, per book of the corpus: broken words, glued words and page
furniture among the entries. Measured against each book's own vocabulary, never a word list.

Usage: python bench/text_quality.py [--base DIR] [--library LIB] [--json]

- broken words per 10,000 words: two neighbouring words of an entry's text (apart by a space, a
  line break, or a hyphen and a line break) of which one is a fragment (printed at most twice in the
  book and four times in the whole corpus) and whose joined form is a word the book prints
  elsewhere ("ma nipulate", "cast- ing");
- glued words per 10,000 words: a word printed only once in the whole corpus that is a
  lower-to-upper junction of two words of the book ("successfulWIS", "aUsage"), or two words of
  the book run together ("Theplayer", "forspace") whose pair the book prints apart elsewhere;
- furniture: the share of entries titled by page furniture. For a PDF, a line (digits masked)
  printed on more than 20% of the pages of its raw text layer (pypdfium2, independent of gmtool's
  layout); for Markdown (no pages), a heading line printed five times or more that, in a quarter of
  those places or more, interrupts the text (the next text is another heading or continues a
  sentence in lower case): a PDF's running header carried into the conversion.

With --base DIR (a checkout of an older commit, e.g. `git worktree add /tmp/base 0204e96`) the
same measure runs on that code too, and both are printed, before and after. The library is the
whole corpus (pdf, md, pdf-more), linked into a bench folder and scanned with --no-embed.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import BENCH_DIR, CORPUS, GMTOOL, bench_env

_WORD = re.compile(r"(?<![0-9])[A-Za-z]+(?![0-9])")
# a junction between two neighbouring words: spaces, or a hyphen and a line break
_PAIR = re.compile(r"([A-Za-z]+)(\s+|-\s*\n\s*|-[ ]+)([A-Za-z]+)")
_SPACED = re.compile(r"(?=\b([A-Za-z]+) +([A-Za-z]+)\b)")
_FRAGMENT_MAX = 2  # a word printed at most this often may be a fragment of a broken word
_GLUE_MAX = 1  # a glued form is printed at most this often
_PART_MIN = 3  # each part of a glued word is printed in the book, and this often in the corpus
_PAGE_SHARE = 0.2
_MD_REPEATS = 5
_MD_INTERRUPT = 0.25


def _library(base: str | None) -> Path:
    lib = BENCH_DIR / ("text-quality-base" if base else "text-quality")
    lib.mkdir(parents=True, exist_ok=True)
    for sub, pat in (("pdf", "*.pdf"), ("md", "*.md"), ("pdf-more", "*.pdf")):
        for f in sorted((CORPUS / sub).glob(pat)):
            link = lib / f.name
            if not link.exists():
                link.symlink_to(f)
    return lib


def _scan(lib: Path, base: str | None) -> None:
    env = bench_env()
    if base:
        env["PYTHONPATH"] = base
        cmd = [sys.executable, "-c", "import sys; from gmtool.cli import main; sys.argv[0]='gmtool'; sys.exit(main())"]
    else:
        cmd = [GMTOOL]
    subprocess.run([*cmd, "scan", str(lib), "--no-embed", "--force", "--json"], check=False, stdout=subprocess.DEVNULL, env=env, cwd=base or None)


# web and mail addresses: no words ("thedoubleclicks.com")
_ADDRESS = re.compile(r"\S+@\S+|https?://\S*|\S+\.(com|org|net|io|uk|de)\b\S*")


def _counts(text: str) -> Counter:
    return Counter(w.lower() for w in _WORD.findall(_ADDRESS.sub(" ", text)))


def broken(text: str, vocab: Counter, corpus: Counter) -> list[str]:
    out = []
    for m in _PAIR.finditer(_ADDRESS.sub(" ", text)):
        a, sep, b = m.group(1), m.group(2), m.group(3)
        if b[:1].isupper() and not a.isupper():
            continue  # a new sentence or a name, not the rest of a word
        joined = (a + b).lower()
        frag = min((vocab[a.lower()], a), (vocab[b.lower()], b))
        if vocab[joined] >= max(1, frag[0]) and frag[0] <= _FRAGMENT_MAX and corpus[frag[1].lower()] <= 2 * _FRAGMENT_MAX and len(joined) >= 4:
            out.append(a + sep.replace("\n", "\\n") + b)
    return out


def _bigrams(text: str) -> set[tuple[str, str]]:
    """Word pairs printed apart by a space (not a hyphen: "role-playing" is no evidence for "role playing")."""
    return {(a.lower(), b.lower()) for a, b in _SPACED.findall(text)}


def glued(text: str, vocab: Counter, pairs: set[tuple[str, str]], corpus: Counter) -> list[str]:
    out = []
    for w in set(_WORD.findall(_ADDRESS.sub(" ", text))):
        lw = w.lower()
        if corpus[lw] > _GLUE_MAX:
            continue
        for i in range(1, len(w)):
            a, b = w[:i], w[i:]
            la, lb = a.lower(), b.lower()
            if min(vocab[la], vocab[lb]) < 1 or corpus[la] < _PART_MIN or corpus[lb] < _PART_MIN:
                continue
            camel = a[-1].islower() and b[0].isupper()
            if camel or (len(a) >= 3 and len(b) >= 3 and (la, lb) in pairs):
                out.append(w)
                break
    return out


def _pdf_furniture(path: Path) -> set[str]:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(path))
    seen: Counter = Counter()
    try:
        n = len(doc)
        for i in range(n):
            page = doc[i]
            tp = page.get_textpage()
            lines = {_mask(ln) for ln in tp.get_text_range().split("\r\n")}
            tp.close()
            page.close()
            seen.update(x for x in lines if x)
    finally:
        doc.close()
    if n < 10:
        return set()
    return {t for t, c in seen.items() if c > _PAGE_SHARE * n and re.search("[a-z]", t)}


def _md_furniture(path: Path) -> set[str]:
    lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
    count: Counter = Counter()
    breaks: Counter = Counter()
    for i, line in enumerate(lines):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        t = _mask(m.group(1))
        count[t] += 1
        nxt = next((x.strip() for x in lines[i + 1:i + 40] if x.strip() and not x.strip().startswith("<!--")), "")
        if nxt.startswith("#") or nxt[:1].islower():
            breaks[t] += 1
    return {t for t, c in count.items() if c >= _MD_REPEATS and breaks[t] >= _MD_INTERRUPT * c and t}


def _mask(s: str) -> str:
    return " ".join(re.sub(r"\d+", "#", re.sub(r"[*_`]", "", s)).lower().split())


def measure(lib: Path, base: str | None) -> dict[str, dict]:
    if base:
        sys.path.insert(0, base)
        for name in [m for m in sys.modules if m == "gmtool" or m.startswith("gmtool.")]:
            del sys.modules[name]
    from gmtool.engine import Engine

    eng = Engine(lib)
    out: dict[str, dict] = {}
    books = {meta.file: [f"{e.title}\n{e.body}" for e in eng.library().require(meta.source_id).entries] for meta in eng.sources()}
    vocabs = {f: _counts("\n".join(texts)) for f, texts in books.items()}
    corpus: Counter = sum(vocabs.values(), Counter())
    for meta in eng.sources():
        entries = eng.library().require(meta.source_id).entries
        texts = books[meta.file]
        vocab = vocabs[meta.file]
        pairs = _bigrams("\n".join(texts))
        words = sum(vocab.values()) or 1
        br = [b for t in texts for b in broken(t, vocab, corpus)]
        gl = [g for t in texts for g in glued(t, vocab, pairs, corpus)]
        path = lib / meta.file
        furn = _pdf_furniture(path) if path.suffix == ".pdf" else _md_furniture(path)
        fe = [e.title for e in entries if _mask(e.title) in furn]
        out[meta.file] = {
            "words": words,
            "broken_per_10k": round(1e4 * len(br) / words, 2),
            "glued_per_10k": round(1e4 * len(gl) / words, 2),
            "furniture_share": round(len(fe) / max(1, len(entries)), 4),
            "furniture_entries": len(fe),
            "examples": {"broken": br[:6], "glued": gl[:6], "furniture": sorted(set(fe))[:4]},
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="a checkout of an older commit to measure too (before)")
    ap.add_argument("--library", help="measure this scanned library instead of the corpus one")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure_only:
        print(json.dumps(measure(Path(args.library), args.base)))
        return
    runs: dict[str, dict] = {}
    for label, base in (("before", args.base), ("after", None)) if args.base else (("after", None),):
        lib = Path(args.library) if args.library and not base else _library(base)
        if not args.library or base:
            _scan(lib, base)
        cmd = [sys.executable, __file__, "--measure-only", "--library", str(lib)] + (["--base", base] if base else [])
        env = dict(bench_env(), PYTHONPATH=base) if base else bench_env()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=base or None, check=True)
        runs[label] = json.loads(p.stdout)
    if args.json:
        print(json.dumps(runs, indent=1))
        return
    print(f"{'book':44} {'run':6} {'words':>8} {'broken/10k':>10} {'glued/10k':>9} {'furniture':>9}")
    for book in sorted(runs["after"]):
        for label, res in runs.items():
            r = res.get(book)
            if r is None:
                continue
            print(f"{book[:44]:44} {label:6} {r['words']:8d} {r['broken_per_10k']:10.2f} {r['glued_per_10k']:9.2f} "
                  f"{r['furniture_share']:9.2%}")
    if os.environ.get("TEXT_QUALITY_EXAMPLES"):
        for label, res in runs.items():
            for book, r in sorted(res.items()):
                print(label, book, json.dumps(r["examples"]))


if __name__ == "__main__":
    main()
