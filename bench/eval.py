#!/usr/bin/env python3
"""The transfer evaluation (`make eval`): every development book and question set, in one table.

Five libraries are scanned once each, fresh, with embeddings (ask needs them):
  eval    the 4-book library of ../shared/eval/mklib.sh
  all     every book of ../shared/corpus/pdf, md and pdf-more
  more    the pdf-more books alone
  mdmore  the three chapter-folder books of ../shared/corpus/md-more
  all+md  `all` plus those three folders
Typing, per book, with the scripts in ../shared/eval: entries_score.py (more/entries.jsonl) for the four
books of more/, toc_coverage.py for the more2 books (more2/toc_expected_*.json) and both SRD 5.1 PDFs
(toc_expected_srd51.json). Each is read from the `all` library. The typing weights are fitted (see
bench/fit_typing.py), so beside the shipped figure each book gets `typed` with that book left out of the
fit (`lobo`): classification re-run in-process on the book with weights fitted on the other books.
Questions: score.py with `gmtool ask --json --limit 10` (hybrid) and `--ranker bm25` (keyword only), and
the name lookups (dev_search, more2/search, md-more/search) with `gmtool search --json --limit 10` (one
ranker, in both columns): dev_ask and dev_search on `eval` and `all`; more/ask, more2/ask and more2/search
on `more`; md-more/ask and md-more/search on `mdmore` (md-more's three chapter folders) and on `all+md`
(`all` plus those folders), with dev_ask on `all+md` too. Each set's MRR@10 is also given on its odd- and
even-numbered questions: the ranking constants are fitted on the odd ones.

Usage: python bench/eval.py [--keep DIR] [--jobs 2] [--skip-ask]
Prints the tables; asserts nothing (the acceptance bars are in issue #20).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import CORPUS, GMTOOL, SHARED

EVAL = SHARED / "eval"
# Typing gold: (file name, scorer, gold file). The scorer names the script of ../shared/eval.
TYPING_GOLD: list[tuple[str, str, Path]] = [
    ("the-black-hack-english-v1.2.pdf", "entries", EVAL / "more" / "entries.jsonl"),
    ("additional-things-english-v1.0.pdf", "entries", EVAL / "more" / "entries.jsonl"),
    ("dungeon-world.pdf", "entries", EVAL / "more" / "entries.jsonl"),
    ("the-gobz-hack.pdf", "entries", EVAL / "more" / "entries.jsonl"),
    ("DH-SRD-1.0-June-26-2025.pdf", "toc", EVAL / "more2" / "toc_expected_daggerheart.json"),
    ("Microlite20.pdf", "toc", EVAL / "more2" / "toc_expected_microlite20.json"),
    ("minimal-opend6-srd.stmt.ms.pdf", "toc", EVAL / "more2" / "toc_expected_opend6.json"),
    ("SRD5.1-CCBY4.0_License_live_links.pdf", "toc", EVAL / "toc_expected_srd51.json"),
    ("cc-srd5.pdf", "toc", EVAL / "toc_expected_srd51.json"),
]
# Question sets: (name, gold file, library).
QUESTIONS: list[tuple[str, Path, str]] = [
    ("dev_ask", EVAL / "dev_ask.jsonl", "eval"),
    ("dev_search", EVAL / "dev_search.jsonl", "eval"),
    ("dev_ask", EVAL / "dev_ask.jsonl", "all"),
    ("dev_search", EVAL / "dev_search.jsonl", "all"),
    ("more/ask", EVAL / "more" / "ask.jsonl", "more"),
    ("more2/ask", EVAL / "more2" / "ask.jsonl", "more"),
    ("more2/search", EVAL / "more2" / "search.jsonl", "more"),
    ("md-more/ask", EVAL / "md-more" / "ask.jsonl", "mdmore"),
    ("md-more/search", EVAL / "md-more" / "search.jsonl", "mdmore"),
    ("md-more/ask", EVAL / "md-more" / "ask.jsonl", "all+md"),
    ("md-more/search", EVAL / "md-more" / "search.jsonl", "all+md"),
    ("dev_ask", EVAL / "dev_ask.jsonl", "all+md"),
]
# Issue #20's acceptance item 4, on the `all` library: (question, gmtool ask options, the bar, its check on the
# result titles in order)
EXAMPLES: list[tuple[str, list[str], str, Callable[[list[str]], bool]]] = [
    ("a tanky spellcaster class", [], "Cleric or Paladin above Sorcerer and Wizard",
     lambda t: _rank(t, "Cleric", "Paladin") < _rank(t, "Sorcerer", "Wizard")),
    ("monster that turns people to stone", ["--type", "monster"], "Basilisk or Medusa first",
     lambda t: _rank(t, "Basilisk", "Medusa") == 0),
    ("a monster that regenerates unless burned", ["--type", "monster"], "Troll in the top 3",
     lambda t: _rank(t, "Troll") < 3),
    ("undead that drain life", ["--type", "monster", "--where", "type=undead"], "Vampire, Wraith, Specter in the top 5",
     lambda t: all(_rank(t, n) < 5 for n in ("Vampire", "Wraith", "Specter"))),
]
LIBRARIES = ("eval", "all", "more", "mdmore", "all+md")
# The libraries scanned while the small ones' questions are scored (the big two, in this order).
BIG = ("all", "all+md")
RANKERS = {"hybrid": "", "keyword": " --ranker bm25"}


def build_libraries(root: Path) -> dict[str, Path]:
    """eval (mklib.sh), all (pdf, md, pdf-more), more (pdf-more), mdmore (md-more's three chapter
    folders, without its SOURCES.md) and all+md (all, plus those folders)."""
    libs = {name: root / name.replace("+", "-") for name in LIBRARIES}
    subprocess.run(["sh", str(EVAL / "mklib.sh"), str(libs["eval"])], check=True, stdout=subprocess.DEVNULL)
    for name, folders in (("all", ("pdf", "md", "pdf-more")), ("more", ("pdf-more",)), ("mdmore", ()),
                          ("all+md", ("pdf", "md", "pdf-more"))):
        libs[name].mkdir(parents=True, exist_ok=True)
        for folder in folders:
            for f in sorted((CORPUS / folder).iterdir()):
                if f.suffix.lower() in (".pdf", ".md"):
                    shutil.copy2(f, libs[name] / f.name)
        if name in ("mdmore", "all+md"):
            for book in sorted(p for p in (CORPUS / "md-more").iterdir() if p.is_dir()):
                shutil.copytree(book, libs[name] / book.name)
    return libs


def scan(lib: Path, env: dict[str, str]) -> float:
    t = time.perf_counter()
    p = subprocess.run([GMTOOL, "scan", str(lib), "--json"], capture_output=True, text=True, env=env)
    if p.returncode not in (0, 3):
        sys.exit(f"scan of {lib} failed ({p.returncode}): {p.stderr.strip()[:300]}")
    return time.perf_counter() - t


def _json_of(cmd: list[str], env: dict[str, str]) -> dict:
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return json.loads(p.stdout)


def typing_rows(lib: Path, env: dict[str, str], lobo: dict[str, float | None]) -> list[dict]:
    """Per book: found / page / typed / junk from the shared scripts, and typed with the book left out."""
    rows = _json_of([GMTOOL, "ls", "--json", "--library", str(lib)], env)
    rows = rows.get("sources", rows) if isinstance(rows, dict) else rows
    sid_of = {r["file"]: r["source_id"] for r in rows}
    out = []
    entries_done = False
    entries = {}
    for name, scorer, gold in TYPING_GOLD:
        row: dict = {"book": name, "lobo": lobo.get(name)}
        if scorer == "entries":
            if not entries_done:
                got = _json_of([sys.executable, str(EVAL / "entries_score.py"), str(gold), "--library", str(lib),
                                "--cmd", GMTOOL, "--json"], env)
                entries, entries_done = got["books"], True
            s = entries.get(name, {})
            row.update(found=s.get("found"), page=s.get("page"), typed=s.get("typed"), junk=s.get("junk"))
        else:
            toc = _json_of([GMTOOL, "toc", sid_of[name], "--json", "--library", str(lib)], env)
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
                json.dump(toc, fh)
            p = subprocess.run([sys.executable, str(EVAL / "toc_coverage.py"), str(gold), fh.name],
                               capture_output=True, text=True)
            os.unlink(fh.name)
            s = json.loads(p.stdout.strip().splitlines()[-1])
            row.update(found=s["found"], page=None, typed=s["typed"], junk=_junk(toc))
        out.append(row)
    return out


def _junk(toc: dict) -> float:
    """entries_score.py's junk rule, for the books it does not score."""
    sys.path.insert(0, str(EVAL))
    import entries_score  # type: ignore[import-not-found]

    nodes = list(entries_score.flatten(toc.get("entries", [])))
    counts = __import__("collections").Counter(entries_score.norm(n.get("title")) for n in nodes)
    return round(sum(entries_score.is_junk(n.get("title"), counts) for n in nodes) / max(len(nodes), 1), 3)


def score_set(gold: Path, lib: Path, ranker: str, env: dict[str, str]) -> dict:
    """score.py's figures, and MRR@10 on the odd- and even-numbered questions apart: the ranking
    constants are fitted on the odd ones (gmtool/query/ranking.py), so the even ones are the check."""
    # a name lookup set is scored with `search` (keyword and title matching: one ranker, shown in both columns)
    cmd = (f"{GMTOOL} search --json --limit 10" if "search" in gold.name
           else f"{GMTOOL} ask --json --limit 10{RANKERS[ranker]}")
    lines = gold.read_text(encoding="utf-8").splitlines()
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for half, keep in (("odd", 1), ("even", 0)):
            part = Path(tmp) / f"{half}.jsonl"
            part.write_text("\n".join(x for n, x in enumerate(lines, 1) if n % 2 == keep) + "\n", encoding="utf-8")
            p = subprocess.run([sys.executable, str(EVAL / "score.py"), str(part), "--library", str(lib), "--cmd",
                                cmd, "--quiet"], capture_output=True, text=True, env=env)
            out[half] = json.loads(p.stdout.strip().splitlines()[-1])
    n_odd, n_even = out["odd"]["queries"], out["even"]["queries"]
    n = max(n_odd + n_even, 1)
    return {"queries": n_odd + n_even,
            **{k: (out["odd"][k] * n_odd + out["even"][k] * n_even) / n for k in ("mrr@10", "recall@10")},
            "odd": out["odd"]["mrr@10"], "even": out["even"]["mrr@10"]}


def md_typing(lib: Path, env: dict[str, str]) -> dict[str, dict]:
    """entries_score.py per folder book of md-more (its gold names chapter files; scored by book)."""
    gold = [json.loads(x) for x in (EVAL / "md-more" / "entries.jsonl").read_text(encoding="utf-8").splitlines() if x]
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.write("".join(json.dumps({**e, "file": e["book"]}) + "\n" for e in gold))
    try:
        got = _json_of([sys.executable, str(EVAL / "entries_score.py"), fh.name, "--library", str(lib),
                        "--cmd", GMTOOL, "--json"], env)
    finally:
        os.unlink(fh.name)
    return {**got["books"], "overall": got["overall"]}


def lobo_typed(env: dict[str, str]) -> dict[str, float | None]:
    """typed per book with that book left out of the typing fit (bench/fit_typing.py --lobo)."""
    p = subprocess.run([sys.executable, str(Path(__file__).with_name("fit_typing.py")), "--lobo", "--json"],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(f"fit_typing.py --lobo failed: {p.stderr.strip()[-300:]}", file=sys.stderr)
        return {}
    return json.loads(p.stdout)["typed"]


def _rank(titles: list[str], *names: str) -> int:
    """The best 0-based rank of any of `names` (case-insensitive), len(titles) when none is there."""
    wanted = {n.lower() for n in names}
    return next((k for k, t in enumerate(titles) if t.lower() in wanted), len(titles))


def examples(lib: Path, env: dict[str, str]) -> None:
    print("\nExamples (#20 item 4; library `all`, hybrid, top 5)")
    for question, opts, bar, check in EXAMPLES:
        out = _json_of([GMTOOL, "ask", question, *opts, "--json", "--limit", "10", "--library", str(lib)], env)
        titles = [h["title"] for h in out.get("results", [])]
        print(f"{'pass' if check(titles) else 'FAIL'}  {question!r}: {bar}\n      {' | '.join(titles[:5])}")


def fmt(v: float | None) -> str:
    return "    - " if v is None else f"{v:6.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--keep", type=Path, help="build the libraries here and keep them (default: a temp folder)")
    ap.add_argument("--jobs", type=int, default=2, help="score.py runs at once (default 2)")
    ap.add_argument("--skip-ask", action="store_true", help="typing only (scans without embeddings)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    root = a.keep or Path(tempfile.mkdtemp(prefix="gmtool-eval-"))
    if root.exists() and a.keep:
        shutil.rmtree(root)
    root.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GMTOOL_CONFIG_DIR=str(root / "config"), GMTOOL_CACHE_DIR=str(root / "cache"))
    libs = build_libraries(root)
    scans: dict[str, float] = {}
    res: dict[tuple, dict] = {}
    jobs = [(name, gold, lib, ranker) for name, gold, lib in QUESTIONS for ranker in RANKERS]
    with cf.ThreadPoolExecutor(max_workers=2 + a.jobs) as pool:
        lobo_future = pool.submit(lobo_typed, env)
        if a.skip_ask:
            for name in ("all", "mdmore"):
                t = time.perf_counter()
                subprocess.run([GMTOOL, "scan", str(libs[name]), "--no-embed", "--json"], capture_output=True, env=env)
                scans[name] = time.perf_counter() - t
        else:
            # the small libraries first; their questions are scored while the big ones scan, one after the other
            for name in LIBRARIES:
                if name not in BIG:
                    scans[name] = scan(libs[name], env)
            big = pool.submit(lambda: {name: scan(libs[name], env) for name in BIG})
            done: set[str] = set()
            for wave in ([n for n in LIBRARIES if n not in BIG], list(BIG)):
                if wave == list(BIG):
                    scans.update(big.result())
                todo = [j for j in jobs if j[2] in wave and j[2] not in done]
                for j, r in zip(todo, pool.map(lambda j: score_set(j[1], libs[j[2]], j[3], env), todo), strict=True):
                    res[j] = r
                done.update(wave)
        lobo = lobo_future.result()
    print("scans (s): " + ", ".join(f"{k} {v:.0f}" for k, v in scans.items()))
    print("\nTyping (library `all`; lobo = typed with the book left out of the typing fit)")
    print(f"{'book':40s} {'found':>6s} {'page':>6s} {'typed':>6s} {'lobo':>6s} {'junk':>6s}")
    for r in typing_rows(libs["all"], env, lobo):
        print(f"{r['book'][:40]:40s} {fmt(r['found'])} {fmt(r['page'])} {fmt(r['typed'])} {fmt(r['lobo'])} {fmt(r['junk'])}")
    print("\nTyping of md-more's folder books (library `mdmore`; development books, not in the typing fit)")
    for book, r in md_typing(libs["mdmore"], env).items():
        print(f"{book[:40]:40s} {fmt(r.get('found'))} {'    - '} {fmt(r.get('typed'))} {'    - '} {fmt(r.get('junk'))}")
    if not a.skip_ask:
        print("\nQuestions (MRR@10 / recall@10; the ranking constants are fitted on the odd-numbered questions of")
        print("the ask sets, so `odd` is the fit half and `even` the check half, hybrid ranker)")
        print(f"{'set':14s} {'library':8s} {'n':>3s} {'hyb MRR':>8s} {'odd':>6s} {'even':>6s} {'hyb R@10':>8s} "
              f"{'kw MRR':>8s} {'kw R@10':>8s}")
        for name, gold, lib in QUESTIONS:
            h, k = res[(name, gold, lib, "hybrid")], res[(name, gold, lib, "keyword")]
            print(f"{name:14s} {lib:8s} {h['queries']:3d} {h['mrr@10']:8.3f} {h['odd']:6.3f} {h['even']:6.3f} "
                  f"{h['recall@10']:8.3f} {k['mrr@10']:8.3f} {k['recall@10']:8.3f}")
        examples(libs["all"], env)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
