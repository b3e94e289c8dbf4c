#!/usr/bin/env python3
"""Dump `ask`'s per-candidate evidence for the development question sets (for fitting the fusion).

For each question of each LIB:GOLD spec, the real `ask` runs; its fusion inputs (keyword scores,
sentence similarities, priors, the filter mask) are caught, and for the union of the best
CANDIDATES documents by each signal this writes one row of features, whether the document is a
right answer (score.py's rule, a copy counting when any copy in its group is right), and its copy
group. Output: one pickle with a list of questions {set, id, half, X, y, group, gids}.

Usage: python bench/fusion_features.py OUT.pkl LIB:GOLD[,GOLD...] [LIB:GOLD ...]
"""

from __future__ import annotations

import json
import pickle
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ask_sets import EVAL

CANDIDATES = 60


def main() -> int:
    import gmtool.query.ask as ask_mod
    from gmtool.engine import Engine
    from gmtool.query.fusion import fuse

    out_path = Path(sys.argv[1])
    caught: dict[str, Any] = {}

    def catch(kw: Any, dense: Any, pri: Any, allowed: Any, cfg: Any = None) -> Any:
        caught.update(kw=kw, dense=dense, pri=pri, allowed=allowed)
        return fuse(kw, dense, pri, allowed)

    ask_mod.fuse = catch  # type: ignore[assignment]
    rows: list[dict[str, Any]] = []
    for spec in sys.argv[2:]:
        lib_path, _, golds = spec.rpartition(":")
        eng = Engine(Path(lib_path))
        lib = eng.library()
        docs = lib.doc_table()
        titles = lib.titles_and_types()[0]
        src = lib.source_index()
        sids = list(lib.metas)
        where = [" ".join([sid, str(lib.metas[sid].file), str(lib.metas[sid].title)]).lower() for sid in sids]
        for g in golds.split(","):
            lines = [json.loads(x) for x in (EVAL / f"{g}.jsonl").read_text(encoding="utf-8").splitlines() if x]
            for n, q in enumerate(lines, 1):
                eng.ask(q["query"], types=[q["type"]] if q.get("type") else None, limit=10, min_score=0.0)
                feats = features(lib, q["query"], caught)
                allowed = caught["allowed"]
                cand = candidates(feats, allowed)
                right = np.array([_right(titles[gid], where[int(src[gid])], q["answers"]) for gid in cand])
                copy = np.asarray(docs["copy"], dtype=np.int64)[cand]
                # a copy group is right when any of its members is
                good_groups = {int(c) for c, r in zip(copy, right, strict=True) if r and c >= 0}
                right |= np.array([c >= 0 and int(c) in good_groups for c in copy])
                rows.append({"set": g, "library": Path(lib_path).name, "id": q.get("id", str(n)),
                             "half": "odd" if n % 2 else "even", "names": list(feats),
                             "X": np.stack([feats[k][cand] for k in feats], axis=1).astype(np.float32),
                             "y": right, "group": copy, "gids": cand})
            print(f"{g} on {Path(lib_path).name}: {len(lines)} questions", file=sys.stderr)
    out_path.write_bytes(pickle.dumps(rows))
    return 0


def _right(title: str, where: str, answers: list[dict[str, Any]]) -> bool:
    return any(re.search(a["title"], title, re.I) and (not a.get("file") or a["file"].lower() in where)
               for a in answers)


def candidates(feats: dict[str, np.ndarray], allowed: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(allowed)
    out: set[int] = set()
    for name in ("kw", "dense_raw", "fused"):
        x = feats[name][idx]
        out.update(int(i) for i in idx[np.argsort(-x, kind="stable")[:CANDIDATES]])
    return np.array(sorted(out), dtype=np.int64)


def features(lib: Any, query: str, c: dict[str, Any]) -> dict[str, np.ndarray]:
    from gmtool.query.fusion import dense_scale, fuse, norm01

    allowed, pri = c["allowed"], c["pri"]
    n = len(allowed)
    kw = norm01(np.where(allowed, c["kw"], 0.0))
    dense = c["dense"] if c["dense"] is not None else np.zeros(n, dtype=np.float32)
    top = float(dense[allowed].max()) if allowed.any() else 0.0
    return {
        "kw": kw.astype(np.float32),
        "dense": dense_scale(dense, allowed),
        "dense_raw": dense.astype(np.float32),
        "dense_gap": (top - dense).astype(np.float32),
        "type": pri.type_match if pri.has_type else np.zeros(n, dtype=np.float32),
        "typed": pri.typed,
        "kind": pri.kind_match if pri.has_kind else np.zeros(n, dtype=np.float32),
        "concept": pri.concept if pri.has_concept else np.zeros(n, dtype=np.float32),
        "fused": fuse(c["kw"], c["dense"], pri, allowed),
    }


if __name__ == "__main__":
    raise SystemExit(main())
