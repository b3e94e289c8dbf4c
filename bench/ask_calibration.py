#!/usr/bin/env python3
"""Fit and report `ask`'s confidence (gmtool.query.confidence) and its default --min-score.

Questions: the development questions (../shared/eval/dev_ask.jsonl, more/ask.jsonl, more2/ask.jsonl, md-more/ask.jsonl)
and 30 off-topic or nonsense ones (bench/data/offtopic_questions.txt). The odd-numbered questions of
each list fit; the even-numbered ones are reported apart. A development question "loses its right
answer" when the answer is in its top 10 with no score floor but not at the default --min-score;
an off-topic question "returns nothing" when no result clears the default --min-score.

Usage: python bench/ask_calibration.py LIBRARY [LIBRARY ...] [--fit] [--keyword]   (each scanned with
embeddings, e.g. make eval's libraries kept with `bench/eval.py --keep DIR`: DIR/all, DIR/eval, DIR/mdmore and
DIR/all-md; a question's evidence depends on what else the library holds, so the fit pools libraries of
different sizes; a question counts only in a library that holds its answer).
Without --fit it reports the values in query.ranking, per library and pooled. With --keyword the questions
are asked with `--ranker bm25`, as a library without vectors or a model answers them, and the keyword
mode's ramp (coverage_low, coverage_high: the share of the question's words one entry holds) is fitted or
reported instead, at the same default --min-score.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import re
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EVAL = REPO.parent / "shared" / "eval"
# md-more's paraphrased questions hold fewer of the words, and Markdown shelves are judged too
GOLD = [EVAL / "dev_ask.jsonl", EVAL / "more" / "ask.jsonl", EVAL / "more2" / "ask.jsonl", EVAL / "md-more" / "ask.jsonl"]
OFFTOPIC = REPO / "bench" / "data" / "offtopic_questions.txt"


def _load(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.open() if line.strip() and not line.startswith("#")]


def _relevant(hit: dict[str, Any], answers: list[dict[str, Any]]) -> bool:
    where = " ".join(str(hit.get(k) or "") for k in ("file", "source_id", "source_name")).lower()
    return any(re.search(a["title"], hit["title"], re.I) and (not a.get("file") or a["file"].lower() in where)
               for a in answers)


def features(lib: Path, ranker: str = "hybrid") -> list[dict[str, Any]]:
    """Per question: its half, the evidence the confidence is made of, and the right answer's
    unscaled score (None when it is not in the top 10 at all)."""
    import gmtool.query.ask as ask_mod
    from gmtool.engine import Engine
    from gmtool.present.jsonout import search_dict

    seen: dict[str, Any] = {}

    def record(similarity: float | None, cover: float, cfg: Any = None) -> float:
        seen.update(similarity=similarity, cover=cover)
        return 1.0  # unscaled scores: the calibration is applied below

    ask_mod.confidence = record  # type: ignore[assignment]
    eng = Engine(lib)
    dev = [g for path in GOLD for g in _load(path)]
    off = [{"query": q.strip()} for q in OFFTOPIC.open() if q.strip() and not q.startswith("#")]
    rows = []
    for kind, questions in (("dev", dev), ("off", off)):
        for n, g in enumerate(questions, 1):
            res = search_dict(eng.ask(g["query"], types=[g["type"]] if g.get("type") else None, limit=10, min_score=0.0,
                                      ranker=ranker))
            right = next((h for h in res["results"] if g.get("answers") and _relevant(h, g["answers"])), None)
            rows.append({"kind": kind, "half": "fit" if n % 2 else "report", "query": g["query"], **seen,
                         "right": right["score"] if right else None, "mode": res["mode"]})
    return rows


def evaluate(rows: list[dict[str, Any]], cfg: Any) -> dict[str, dict[str, float]]:
    """Per half: the share of off-topic questions that return nothing and of development questions
    (with a right answer in their top 10) that lose it, at the default --min-score."""
    from gmtool.query.confidence import confidence

    out: dict[str, dict[str, float]] = {}
    for half in ("fit", "report"):
        part = [r for r in rows if r["half"] == half]
        off = [r for r in part if r["kind"] == "off"]
        dev = [r for r in part if r["kind"] == "dev" and r["right"] is not None]
        # an off-topic question returns nothing when even a perfect unscaled score (1) stays below the floor
        empty = sum(confidence(r["similarity"], r["cover"], cfg) < cfg.ask_min_score for r in off)
        lost = sum(r["right"] * confidence(r["similarity"], r["cover"], cfg) < cfg.ask_min_score for r in dev)
        # the margin: how far the closest questions stay on their side of the floor
        margin = min([r["right"] * confidence(r["similarity"], r["cover"], cfg) - cfg.ask_min_score for r in dev]
                     + [cfg.ask_min_score - confidence(r["similarity"], r["cover"], cfg) for r in off])
        out[half] = {"offtopic_empty": empty / max(len(off), 1), "dev_lost": lost / max(len(dev), 1),
                     "n_off": len(off), "n_dev": len(dev), "margin": margin}
    return out


def fit(rows: list[dict[str, Any]], base: Any) -> Any:
    """The grid point of the fit half that empties the most off-topic questions and loses no development
    answer; ties go to the lower floor, then to the wider ramp (a graded confidence rather than a step),
    then to the smaller coverage weight."""
    best, best_key = base, None
    lows = [x / 100 for x in range(15, 50, 2)]
    spans = [x / 100 for x in range(4, 31, 4)]
    floors = [x / 100 for x in range(10, 55, 5)]
    for lo, span, weight, floor in itertools.product(lows, spans, (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8), floors):
        cfg = dataclasses.replace(base, similarity_low=lo, similarity_high=round(lo + span, 2), coverage_weight=weight,
                                  ask_min_score=floor)
        m = evaluate(rows, cfg)["fit"]
        if m["dev_lost"] > 0.0:
            continue
        key = (m["offtopic_empty"], round(m["margin"], 4), -weight)
        if best_key is None or key > best_key:
            best, best_key = cfg, key
    return best


def fit_keyword(rows: list[dict[str, Any]], base: Any) -> Any:
    """The keyword mode's ramp: the grid point of the fit half that empties the most off-topic questions
    and loses no development answer, at the default --min-score; ties go to the wider margin, then the
    wider ramp."""
    best, best_key = base, None
    for lo, span in itertools.product([x / 100 for x in range(0, 61, 2)], [x / 100 for x in range(4, 61, 4)]):
        cfg = dataclasses.replace(base, coverage_low=lo, coverage_high=round(lo + span, 2))
        m = evaluate(rows, cfg)["fit"]
        if m["dev_lost"] > 0.0:
            continue
        key = (m["offtopic_empty"], round(m["margin"], 4), span)
        if best_key is None or key > best_key:
            best, best_key = cfg, key
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", type=Path, nargs="+")
    ap.add_argument("--fit", action="store_true", help="search the grid on the fit half and print the values")
    ap.add_argument("--keyword", action="store_true", help="the keyword mode (--ranker bm25) and its coverage ramp")
    args = ap.parse_args(argv)
    from gmtool.query.ranking import RANKING

    per_lib = {lib.name: features(lib, "bm25" if args.keyword else "hybrid") for lib in args.library}
    rows = [r for part in per_lib.values() for r in part]
    fitter = fit_keyword if args.keyword else fit
    cfg = fitter(rows, RANKING) if args.fit else RANKING
    keys = (("coverage_low", "coverage_high", "ask_min_score") if args.keyword
            else ("similarity_low", "similarity_high", "coverage_weight", "ask_min_score"))
    print(json.dumps({k: getattr(cfg, k) for k in keys}))
    for name, part in [*per_lib.items(), ("pooled", rows)]:
        for half, m in evaluate(part, cfg).items():
            print(f"{name[:14]:14} {half:6}: off-topic questions returning nothing {m['offtopic_empty']:.0%} of "
                  f"{m['n_off']:.0f}; development questions losing their right answer {m['dev_lost']:.1%} of {m['n_dev']:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
