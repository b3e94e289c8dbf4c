"""How well the library covers a question at all: the evidence that `ask`'s relative scores lack.

`ask` scores are relative (the best keyword match is 1, the best sentence similarity is 1), so
a question no book answers still gets a top result near 1. Two absolute signals say whether any
answer is there: the best raw sentence similarity of any allowed entry to the question, and the
largest share of the question's words (weighted by rarity) that one entry holds. They become
one 0-1 confidence that scales every score of the question, so that at the default --min-score a
question about tax law or sourdough returns nothing instead of the least bad sections. The
thresholds are fitted in bench/ask_calibration.py (see query.ranking).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gmtool.query.ranking import RANKING, Ranking

if TYPE_CHECKING:
    import numpy as np

    from gmtool.query.library import Library


@dataclass
class WordShares:
    """Per entry, the rarity-weighted share of the question's words it holds (0-1), and the share
    that some entry or other holds. See `word_shares`."""

    held: np.ndarray
    anywhere: float
    folded: np.ndarray | None = None  # per entity, with the words of its folded subsections (see word_shares)

    @property
    def joint(self) -> float:
        """The largest share one entry holds."""
        return float(self.held.max()) if self.held.size else 0.0


def word_shares(lib: Library, tokens: list[str], mask: np.ndarray | None = None,
                targets: np.ndarray | None = None) -> WordShares:
    """The rarity-weighted share of the question's words each entry holds. A question the library
    answers has an entry with most of its words; an off-topic one finds each word somewhere
    ("quantum" in one book, "simply" in another) but not together. A word no entry uses weighs as
    much as the question's average known word (a paraphrase, "musician", must not outweigh the
    rest); with no known word at all, nothing is covered. Only the entries `mask` keeps count.
    With `targets` (per document, the entity it folds into), `folded` gives each entity the words
    that it or any of its folded subsections holds (a stat block's "Regeneration" trait)."""
    import numpy as np

    bm25, _ = lib.keyword()
    n = max(bm25.n_docs, 1)
    none = WordShares(np.zeros(bm25.n_docs, dtype=np.float64), 0.0)
    if not tokens:
        return none
    m = bm25.matrix
    known: dict[int, float] = {}
    unknown = 0
    for t in set(tokens):
        j = bm25.vocab.get(t)
        if j is not None and float(bm25.df[j]) > 0:
            known[j] = math.log((n + 1) / (float(bm25.df[j]) + 1))
        else:
            unknown += 1
    if not known:
        return none
    held = np.zeros(bm25.n_docs, dtype=np.float64)
    folded = np.zeros(bm25.n_docs, dtype=np.float64) if targets is not None else None
    anywhere = 0.0
    for j, w in sorted(known.items()):
        rows = m.indices[int(m.indptr[j]) : int(m.indptr[j + 1])]
        if mask is not None:
            rows = rows[mask[rows]]
        held[rows] += w
        if folded is not None and targets is not None:
            folded[np.unique(np.concatenate([rows, targets[rows]]))] += w
        anywhere += w if len(rows) else 0.0
    total = sum(known.values()) * (1 + unknown / len(known))
    if total <= 0:  # every known word is in every entry (a one-entry library): each entry holds them all
        ones = np.ones(bm25.n_docs, dtype=np.float64)
        return WordShares(ones, 1.0, ones if folded is not None else None)
    return WordShares(held / total, anywhere / total, folded / total if folded is not None else None)


def coverage(lib: Library, tokens: list[str], joint: bool = True, mask: np.ndarray | None = None) -> float:
    """The largest share of the question's words that one entry holds (0-1; see `word_shares`).
    Not `joint`: the share that some entry or other holds."""
    shares = word_shares(lib, tokens, mask)
    return shares.joint if joint else shares.anywhere


def best_similarity(dense: np.ndarray | None, allowed: np.ndarray) -> float | None:
    """The highest raw cosine similarity of an allowed entry to the question; None in keyword mode."""
    if dense is None or not allowed.any():
        return None
    return float(dense[allowed].max())


def _ramp(x: float, lo: float, hi: float) -> float:
    return min(1.0, max(0.0, (x - lo) / (hi - lo)))


def confidence(similarity: float | None, cover: float, cfg: Ranking = RANKING) -> float:
    """One 0-1 confidence. With embeddings: the best sentence similarity, less a share of the
    question's words that no one entry holds (made-up words, another field's jargon). Without:
    the keyword coverage alone."""
    if similarity is None:
        return _ramp(cover, cfg.coverage_low, cfg.coverage_high)
    evidence = similarity - cfg.coverage_weight * (1.0 - cover)
    return _ramp(evidence, cfg.similarity_low, cfg.similarity_high)
