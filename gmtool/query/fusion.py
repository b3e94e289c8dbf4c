"""Fusion of `ask`'s evidence into one score per document: a pure function of arrays.

Keyword scores, sentence similarities and the question's intent (type, monster kind, field
concepts) go in; fused scores in 0..1 come out. Nothing here reads a library or a model, so
the ranking logic is tested in milliseconds (tests/test_fusion.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gmtool.query.ranking import RANKING, Ranking

if TYPE_CHECKING:
    import numpy as np


@dataclass
class Priors:
    """Per-document evidence that is not about the words: each array is 0/1 or 0..1."""

    type_match: np.ndarray  # the document's content type is one the question asks for
    typed: np.ndarray  # the document is a typed entity (spell, monster…) rather than a plain section
    kind_match: np.ndarray  # a monster of a kind the question names
    concept: np.ndarray  # how well its typed fields fit the question's concepts
    has_type: bool = False  # the question asks for a type at all
    has_kind: bool = False
    has_concept: bool = False


def norm01(x: np.ndarray) -> np.ndarray:
    """Scale by the maximum (0 stays 0); an all-zero array stays zero."""
    import numpy as np

    top = float(x.max()) if x.size else 0.0
    return x / top if top > 0 else np.zeros_like(x)


def per_window_count(dense: np.ndarray | None, windows: np.ndarray | None,
                     cfg: Ranking = RANKING) -> np.ndarray | None:
    """The similarities that rank: each entity's best window less cfg.window_penalty times the log
    of its number of windows. The best of many windows is close to a question by chance more
    often, so without it a long general section outranks a short one that answers (#27)."""
    import numpy as np

    if dense is None or windows is None or not cfg.window_penalty:
        return dense
    return (dense - cfg.window_penalty * np.log(np.maximum(windows, 1))).astype(np.float32)


def dense_scale(dense: np.ndarray, allowed: np.ndarray, cfg: Ranking = RANKING) -> np.ndarray:
    """Similarities to 0..1 over the allowed documents: the best is 1, the floor percentile and below 0."""
    import numpy as np

    d = np.where(allowed, dense, -1.0)
    if not allowed.any():
        return np.zeros_like(d)
    top = float(d.max())
    floor = float(np.percentile(d[allowed], cfg.dense_floor_percentile))
    return np.clip((d - floor) / max(top - floor, 1e-6), 0.0, 1.0)


def fuse(
    keyword: np.ndarray,
    dense: np.ndarray | None,
    priors: Priors,
    allowed: np.ndarray,
    cfg: Ranking = RANKING,
) -> np.ndarray:
    """One score per document in 0..1 (0 where not allowed).

    keyword: keyword scores (any scale; normalised here). dense: cosine similarities, or None
    in keyword mode. The weights that the question does not activate (no type named, no
    concept) stay out of the normaliser, so scores are comparable across questions."""
    import numpy as np

    kw = norm01(np.where(allowed, keyword, 0.0))
    prior = cfg.w_typed * priors.typed
    norm = cfg.w_typed
    if priors.has_type:
        prior = prior + cfg.w_type * priors.type_match
        norm += cfg.w_type
    if priors.has_kind:
        prior = prior + cfg.w_kind * priors.kind_match
        norm += cfg.w_kind
    if priors.has_concept:
        prior = prior + cfg.w_concept * priors.concept
        norm += cfg.w_concept
    if dense is not None:
        fused = cfg.w_keyword * kw + cfg.w_dense * dense_scale(dense, allowed, cfg) + prior
        norm += cfg.w_keyword + cfg.w_dense
    else:
        fused = kw + prior
        norm += 1.0
    return np.where(allowed, fused / norm, 0.0).astype(np.float32)
