#!/usr/bin/env python3
"""Fit the list-typing weights (gmtool/data/typing_weights.json) on labelled books, and check them by
leaving each book out.

Labelled books (all development books; their gold is also the evaluation, hence leave-one-book-out):
  the four books of ../shared/eval/more (entries.jsonl: some entries per book, with type or null),
  the three books of ../shared/eval/more2 (toc_expected_*.json: every entry of the types listed),
  SRD 5.1 (toc_expected_srd51.json) as the two PDFs and the Markdown copy, which count as ONE book when
  one is left out (the same text in three shapes).
An example is one list of like siblings (gmtool/index/lists.py) and one candidate type; it is positive
when most of its labelled members have that type, negative when most do not (in a toc_expected book, a
member not named under a type it covers is "not that type"). The features are lists.FEATURES; a logistic
regression (scikit-learn, L2, C below) gives one weight per feature and one bias, shared by all types, so
what is learnt on one type's lists carries over to another's. The decision threshold and margin are not
fitted: they are set for precision (untyped beats wrong) and written beside the weights.

Usage:
  python bench/fit_typing.py              fit on every book, write gmtool/data/typing_weights.json
  python bench/fit_typing.py --lobo       per book: typed with weights fitted on the other books
  python bench/fit_typing.py --lobo --json   the same as {"typed": {file: share}} (bench/eval.py reads it)
"""

from __future__ import annotations

import argparse
import copy
import json
import pickle
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpus import CORPUS, SHARED

from gmtool.index import classify as cl
from gmtool.index import lists
from gmtool.index.extract import extract
from gmtool.types import Document

EVAL = SHARED / "eval"
# L2 strength: few lists per book, so the weights are kept small enough to carry over.
C = 1.0
# Not fitted: a list is typed when its best type reaches THRESHOLD and beats the next by MARGIN.
THRESHOLD = 0.7
MARGIN = 0.2


@dataclass
class Book:
    group: str  # books with the same text share a group and are left out together
    path: Path
    gold: dict[str, set[str | None]]  # normalised title -> gold types
    covers: set[str]  # types whose every entry the gold names (empty: only named entries count)
    scorer: str  # "toc" or "entries"
    gold_rows: list[dict]  # entries.jsonl rows (entries scorer only)


def norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(text).lower()).strip()


def books() -> list[Book]:
    out: list[Book] = []
    rows = [json.loads(x) for x in (EVAL / "more" / "entries.jsonl").read_text().splitlines() if x.strip()]
    for f in sorted({r["file"] for r in rows}):
        mine = [r for r in rows if r["file"] == f]
        gold: dict[str, set[str | None]] = {}
        for r in mine:
            gold.setdefault(norm(r["title"]), set()).add(r["type"])
        out.append(Book(f, CORPUS / "pdf-more" / f, gold, set(), "entries", mine))
    toc = [("DH-SRD-1.0-June-26-2025.pdf", "more2/toc_expected_daggerheart.json", "pdf-more"),
           ("Microlite20.pdf", "more2/toc_expected_microlite20.json", "pdf-more"),
           ("minimal-opend6-srd.stmt.ms.pdf", "more2/toc_expected_opend6.json", "pdf-more"),
           ("SRD5.1-CCBY4.0_License_live_links.pdf", "toc_expected_srd51.json", "pdf"),
           ("cc-srd5.pdf", "toc_expected_srd51.json", "pdf"),
           ("cc-srd5.md", "toc_expected_srd51.json", "md")]
    for f, g, folder in toc:
        exp = json.loads((EVAL / g).read_text())
        gold = {}
        for t, names in exp.items():
            for n in names:
                gold.setdefault(norm(n), set()).add(t)
        group = "SRD 5.1" if "srd51" in g else f
        out.append(Book(group, CORPUS / folder / f, gold, set(exp), "toc", []))
    return out


def member_label(book: Book, title: str, t: str) -> bool | None:
    """Whether an entry has type t by the gold; None when the gold does not say."""
    key = norm(title)
    got = book.gold.get(key) or book.gold.get(cl.norm(re.sub(r"^(path of the|college of|circle of the|oath of"
                                                               r"|school of|way of the|the) ", "", key)))
    if got:
        return t in got
    return False if t in book.covers else None


def list_examples(book: Book, doc: Document) -> list[tuple[dict[str, float], int]]:
    """(features, label) for every list of the book and every candidate type the gold decides."""
    found = cl.typing_steps(doc).lists
    out = []
    verdicts = []
    for lst in found:
        for t in lists.LIST_TYPES:
            votes = [member_label(book, doc.entries[m].title, t) for m in lst.members]
            known = [v for v in votes if v is not None]
            if known:
                verdicts.append((lst, t, sum(known) / len(known) >= 0.5))
    positive = [(lst.labels, t) for lst, t, y in verdicts if y and lst.labels]
    for lst, t, y in verdicts:  # the signature feature, taught from the other lists' gold types
        x = dict(lst.features[t])
        x["sig"] = max((lists._jaccard(lst.labels, sig) for sig, tt in positive if tt == t and sig != lst.labels),
                       default=0.0) if lst.labels else 0.0
        out.append((x, int(y)))
    return out


# Features that come from this codebase's other typing rules (the SRD's own lines, the genre words). A
# new book often trips none of them, so every example is also shown with them off: the model must learn
# to type a list from its labels, heading and tag lines alone.
RULE_FEATURES = ("own", "own_other", "weak")


def fit(by_book: list[list[tuple[dict[str, float], int]]]) -> dict:
    """One logistic regression; each book weighs the same however many lists it has."""
    rows, ys, weights = [], [], []
    for examples in by_book:
        if not examples:
            continue
        for x, y in examples:
            bare = {**x, **dict.fromkeys(RULE_FEATURES, 0.0)}
            for v in (x, bare):
                rows.append([v[f] for f in lists.FEATURES])
                ys.append(y)
                weights.append(1.0 / len(examples))
    X, y = np.array(rows), np.array(ys)
    w = np.array(weights) * len(by_book)
    model = LogisticRegression(C=C, max_iter=5000, class_weight="balanced").fit(X, y, sample_weight=w)
    return {"features": list(lists.FEATURES), "weights": [round(float(w), 4) for w in model.coef_[0]],
            "bias": round(float(model.intercept_[0]), 4), "threshold": THRESHOLD, "margin": MARGIN}


def typed_share(book: Book, doc: Document) -> float | None:
    """The eval scripts' `typed`: toc_coverage.py for toc books, entries_score.py for the others."""
    if book.scorer == "toc":
        prefix = re.compile(r"^(path of the|college of|circle of the|oath of|school of|way of the|the) ")
        types: dict[str, set[str | None]] = {}
        for e in doc.entries:
            t = norm(e.title)
            for k in {t, prefix.sub("", t)}:
                types.setdefault(k, set()).add(e.content_type)
        found = [(k, t) for k, ts in book.gold.items() for t in ts if k in types]
        return round(sum(t in types[k] for k, t in found) / max(len(found), 1), 3)
    sys.path.insert(0, str(EVAL))
    import entries_score  # type: ignore[import-not-found]

    nodes = [{"title": e.title, "page": e.page, "content_type": e.content_type} for e in doc.entries]
    r = entries_score.score_book(book.gold_rows, nodes)
    return round(r["typed_ok"] / r["typed_n"], 3) if r["typed_n"] else None


def load(path: Path, cache: Path | None) -> Document:
    """The book extracted (not classified); with a cache folder, extracted once (stale after extract/ changes)."""
    if cache is None:
        return extract(path, workers=1)
    f = cache / f"{path.name}.pkl"
    if f.exists():
        return pickle.loads(f.read_bytes())
    doc = extract(path, workers=1)
    cache.mkdir(parents=True, exist_ok=True)
    f.write_bytes(pickle.dumps(doc))
    return doc


def false_types(book: Book, doc: Document) -> list[str]:
    """Entries given a type the gold lists completely (a toc_expected type) without being named there."""
    out = []
    for e in doc.entries:
        t = e.content_type
        if t in book.covers and member_label(book, e.title, t) is False:
            out.append(f"{e.title} ({t})")
    return out


def show_wrong(book: Book, doc: Document) -> None:
    got: dict[str, set[str | None]] = {}
    for e in doc.entries:
        got.setdefault(norm(e.title), set()).add(e.content_type)
    wrong = Counter()
    for k, ts in book.gold.items():
        for t in ts:
            if k in got and t is not None and t not in got[k]:
                wrong[(t, str(sorted(map(str, got[k]))))] += 1
                print(f"  {k!r}: gold {t}, got {sorted(map(str, got[k]))}", file=sys.stderr)
    print(wrong.most_common(), file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lobo", action="store_true", help="leave each book out: fit on the others, type it")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=lists.WEIGHTS_FILE)
    ap.add_argument("--show", metavar="FILE", help="with --lobo: list the gold entries FILE types wrongly")
    ap.add_argument("--docs", type=Path, help="keep the extracted books here (pickles) and reuse them")
    a = ap.parse_args()
    bs = books()
    docs = {b.path.name: load(b.path, a.docs) for b in bs}
    examples = {b.path.name: list_examples(b, copy.deepcopy(docs[b.path.name])) for b in bs}
    if not a.lobo:
        data = fit([examples[b.path.name] for b in bs])
        data["fitted_on"] = [b.path.name for b in bs]
        data["fitted_by"] = "bench/fit_typing.py"
        a.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        n = sum(len(v) for v in examples.values())
        print(f"{n} examples ({sum(y for v in examples.values() for _, y in v)} positive) -> {a.out}")
        print(json.dumps({k: data[k] for k in ("features", "weights", "bias")}))
        return
    typed: dict[str, float | None] = {}
    wrong: dict[str, list[str]] = {}
    for b in bs:
        train = [examples[o.path.name] for o in bs if o.group != b.group]
        w = lists.Weights.from_json(fit(train))
        doc = copy.deepcopy(docs[b.path.name])
        cl.classify(doc, w)
        typed[b.path.name] = typed_share(b, doc)
        wrong[b.path.name] = false_types(b, doc)
        if a.show and a.show in b.path.name:
            show_wrong(b, doc)
    if a.json:
        print(json.dumps({"typed": typed, "false": {k: len(v) for k, v in wrong.items()}}))
    else:
        for k, v in typed.items():
            extra = f"  not-gold types: {len(wrong[k])} {wrong[k][:6]}" if wrong[k] else ""
            print(f"{k:40s} typed (left out) {v}{extra}")


if __name__ == "__main__":
    main()
