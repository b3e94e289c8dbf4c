#!/usr/bin/env python3
"""`ask` MRR@10 of question sets, in one process per library (a fast loop for fitting ranking).

score.py starts one `gmtool ask` per question (about 0.4 s each); this loads each library and the
model once and asks every question in-process, with score.py's relevance rule. It prints MRR@10
and recall@10 per set, on the odd-numbered questions (the fitting half) and on the even ones (the
check half), and with --misses the questions whose right answer is not first.

Usage: python bench/ask_sets.py LIB:GOLD[,GOLD...] [LIB:GOLD ...] [--ranker hybrid|bm25] [--misses] [--json]
  e.g. /tmp/ev/more:more/ask,more2/ask /tmp/ev/all:dev_ask  (GOLD: a name under ../shared/eval without
  .jsonl, or a path to a .jsonl file)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

EVAL = Path(__file__).resolve().parents[2] / "shared" / "eval"


def _relevant(hit: dict[str, Any], answers: list[dict[str, Any]], used: set[int]) -> int | None:
    where = " ".join(str(hit.get(k) or "") for k in ("file", "source_id", "source_name", "path")).lower()
    for i, a in enumerate(answers):
        if i not in used and re.search(a["title"], str(hit.get("title", "")), re.I) and (
                not a.get("file") or a["file"].lower() in where):
            return i
    return None


def score_one(results: list[dict[str, Any]], answers: list[dict[str, Any]]) -> tuple[float, float, int | None]:
    """(reciprocal rank, recall, first rank) of one question's top 10, as score.py counts them."""
    used: set[int] = set()
    first = None
    for n, r in enumerate(results[:10], 1):
        i = _relevant(r, answers, used)
        if i is not None:
            used.add(i)
            first = first or n
    return (1.0 / first if first else 0.0), len(used) / max(len(answers), 1), first


def run_set(eng: Any, gold: Path, ranker: str) -> list[dict[str, Any]]:
    from gmtool.present.jsonout import search_dict

    rows = []
    lines = [json.loads(x) for x in gold.read_text(encoding="utf-8").splitlines() if x.strip()]
    for n, g in enumerate(lines, 1):
        res = search_dict(eng.ask(g["query"], types=[g["type"]] if g.get("type") else None, limit=10,
                                  min_score=0.0, ranker=ranker))
        rr, rec, first = score_one(res["results"], g["answers"])
        rows.append({"id": g.get("id", str(n)), "query": g["query"], "half": "odd" if n % 2 else "even", "rr": rr,
                     "recall": rec, "first": first, "top": [h["title"] for h in res["results"][:3]]})
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    def mean(xs: list[float]) -> float:
        return sum(xs) / len(xs) if xs else 0.0

    return {"n": len(rows), "mrr": mean([r["rr"] for r in rows]), "recall": mean([r["recall"] for r in rows]),
            "odd": mean([r["rr"] for r in rows if r["half"] == "odd"]),
            "even": mean([r["rr"] for r in rows if r["half"] == "even"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("specs", nargs="+", help="LIB:GOLD[,GOLD...]")
    ap.add_argument("--ranker", default="hybrid", choices=("hybrid", "bm25"))
    ap.add_argument("--misses", action="store_true", help="list the questions whose answer is not first")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    from gmtool.engine import Engine

    out: list[dict[str, Any]] = []
    for spec in a.specs:
        lib, _, golds = spec.rpartition(":")
        eng = Engine(Path(lib))
        for g in golds.split(","):
            rows = run_set(eng, Path(g) if g.endswith(".jsonl") else EVAL / f"{g}.jsonl", a.ranker)
            s = summary(rows)
            out.append({"set": g, "library": Path(lib).name, **s, "rows": rows})
            print(f"{g:16s} {Path(lib).name:8s} n={s['n']:3d} MRR {s['mrr']:.3f} (odd {s['odd']:.3f}, "
                  f"even {s['even']:.3f}) R@10 {s['recall']:.3f}", file=sys.stderr if a.json else sys.stdout)
            if a.misses:
                for r in rows:
                    if r["first"] != 1:
                        print(f"   {r['id']:6s} {r['half']:4s} rank {r['first']}  {r['query'][:60]!r} -> "
                              f"{' | '.join(t[:28] for t in r['top'])}", file=sys.stderr if a.json else sys.stdout)
    if a.json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
