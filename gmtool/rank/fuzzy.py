"""Typo and spacing tolerance: fuzzy title similarity and query-token spelling correction.

`TitleMatcher` scores every title by cosine similarity of character-trigram TF-IDF
vectors (0..1). Each title contributes the trigrams of its words (padded with spaces,
like sklearn's "char_wb") *and* of the title with its spaces removed, so "owl bear" meets
"Owlbear" and "firball" meets "Fireball". Everything is computed here (no sklearn), so the
query side needs only numpy and the persisted matrix.

`correct_tokens` maps query tokens that are not in the BM25 vocabulary to vocabulary tokens
one edit away (deletion, insertion, substitution, transposition, measured by rapidfuzz; two
edits for long tokens), to be added to a BM25 query at a lower weight.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from gmtool.errors import IndexError_
from gmtool.rank.bm25 import Csc, add_columns, load_matrix, save_arrays
from gmtool.textnorm import normalize, stem

__all__ = ["TitleMatcher", "char_ngrams", "correct_tokens"]

FORMAT = "gmtool-fuzzy"
FORMAT_VERSION = 1

_ALNUM = str.maketrans(dict.fromkeys("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", " "))


def _words(title: str) -> list[str]:
    s = normalize(title)
    if "'" in s:
        s = s.replace("'", "")
    return s.translate(_ALNUM).split()


def char_ngrams(title: str, n: int = 3) -> dict[str, float]:
    """Trigram counts of the padded words plus the padded space-free title."""
    words = _words(title)
    out: dict[str, float] = {}
    if not words:
        return out
    pieces = [f" {w} " for w in words]
    if len(words) > 1:
        pieces.append(f" {''.join(words)} ")
    for p in pieces:
        for i in range(len(p) - n + 1):
            g = p[i : i + n]
            out[g] = out.get(g, 0.0) + 1.0
    return out


class TitleMatcher:
    """Character-trigram TF-IDF cosine similarity over a fixed list of titles."""

    def __init__(self, matrix: Csc, grams: dict[str, int], idf: np.ndarray):
        self.matrix = matrix  # titles x grams, rows L2-normalised, idf applied
        self.grams = grams
        self.idf = idf
        self.n_docs: int = matrix.shape[0]

    @classmethod
    def build(cls, titles: list[str]) -> TitleMatcher:
        grams: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        setdefault = grams.setdefault
        for i, t in enumerate(titles):
            for g, cnt in char_ngrams(t or "").items():
                rows.append(i)
                cols.append(setdefault(g, len(grams)))
                vals.append(1.0 + math.log(cnt))  # sublinear tf
        n, m = len(titles), len(grams)
        r = np.asarray(rows, dtype=np.int64)
        c = np.asarray(cols, dtype=np.int64)
        v = np.asarray(vals, dtype=np.float64)
        df = np.bincount(c, minlength=m)
        idf = np.log((1.0 + n) / (1.0 + df)) + 1.0  # sklearn's smooth idf
        v *= idf[c]
        norms = np.sqrt(np.bincount(r, weights=v * v, minlength=n))
        norms[norms == 0] = 1.0
        v /= norms[r]
        # a title's grams are distinct: one entry each
        return cls(Csc.from_entries(r, c, v.astype(np.float32), (n, m)), grams, idf.astype(np.float32))

    def query_vector(self, query: str) -> dict[int, float]:
        """Column -> weight of the L2-normalised query vector (grams unseen in titles count in the norm)."""
        counts = char_ngrams(query)
        known: dict[int, float] = {}
        sq = 0.0
        max_idf = math.log(1.0 + self.n_docs) + 1.0  # an unseen gram is as rare as it gets
        for g, cnt in counts.items():
            tf = 1.0 + math.log(cnt)
            col = self.grams.get(g)
            w = tf * (float(self.idf[col]) if col is not None else max_idf)
            sq += w * w
            if col is not None:
                known[col] = w
        if not known:
            return {}
        norm = math.sqrt(sq)
        return {c: w / norm for c, w in known.items()}

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity (0..1) of the query with every title."""
        out = np.zeros(self.n_docs, dtype=np.float64)
        add_columns(self.matrix, self.query_vector(query).items(), out)
        np.clip(out, 0.0, 1.0, out=out)
        return out

    def save(self, path: Path) -> None:
        m = self.matrix
        terms = [""] * len(self.grams)
        for g, i in self.grams.items():
            terms[i] = g
        meta = {"format": FORMAT, "version": FORMAT_VERSION, "shape": list(m.shape), "grams": terms}
        save_arrays(path, {**m.arrays(), "idf": self.idf}, meta)

    @classmethod
    def load(cls, path: Path, mapped: bool = False) -> TitleMatcher:
        matrix, terms, arrays, _meta = load_matrix(path, FORMAT, FORMAT_VERSION, "grams", mapped)
        idf = arrays.get("idf")
        if idf is None or idf.shape != (len(terms),):
            raise IndexError_("INDEX_CORRUPT", f"index file {path} is inconsistent (idf)", "run `gmtool scan` to rebuild it")
        return cls(matrix, dict(zip(terms, range(len(terms)), strict=False)), idf)


# --- spelling correction of query tokens -------------------------------------------------

# Vocabulary lists by length, per vocabulary object, so a query compares its token only with
# stems of a near length (rapidfuzz does the edit distances, in C).
_BY_LEN: dict[int, tuple[int, dict[int, list[str]]]] = {}
MAX_CLIP = 3  # "-ing" is the longest inflection a typo commonly leaves half-typed


def _by_length(vocab: Mapping[str, int] | set[str]) -> dict[int, list[str]]:
    key = id(vocab)
    cached = _BY_LEN.get(key)
    if cached is None or cached[0] != len(vocab):
        buckets: dict[int, list[str]] = {}
        for t in vocab:
            buckets.setdefault(len(t), []).append(t)
        _BY_LEN.clear()
        _BY_LEN[key] = cached = (len(vocab), buckets)
    return cached[1]


def _within(tok: str, vocab: Mapping[str, int] | set[str], dist: int) -> list[str]:
    """Vocabulary tokens at most `dist` edits (optimal string alignment: a transposition is one
    edit) from `tok`, and stems of 4+ letters that `tok` extends by at most MAX_CLIP letters
    ("holdin" -> "hold": a clipped inflection the stemmer cannot recognise)."""
    from rapidfuzz import process
    from rapidfuzz.distance import OSA

    buckets = _by_length(vocab)
    pool = [t for n in range(len(tok) - dist, len(tok) + dist + 1) for t in buckets.get(n, ())]
    found = [m[0] for m in process.extract(tok, pool, scorer=OSA.distance, score_cutoff=dist, limit=None)]
    for n in range(max(4, len(tok) - MAX_CLIP), len(tok)):
        if tok[:n] in vocab:
            found.append(tok[:n])
    return [t for t in dict.fromkeys(found) if t != tok]


def correct_tokens(
    query_tokens: Iterable[str],
    vocab: Mapping[str, int] | set[str],
    df: np.ndarray | None = None,
    *,
    weight1: float = 0.6,
    weight2: float = 0.35,
    weight_join: float = 0.8,
    max_candidates: int = 3,
    min_len: int = 4,
) -> dict[str, float]:
    """Map each query token absent from `vocab` to up to `max_candidates` vocabulary tokens.

    query_tokens are stemmed query words (textnorm.tokenize output), as the vocabulary is.
    Tokens one edit away get `weight1`; tokens of 7+ characters with none that close try two
    edits, at `weight2`. Among several candidates, those in more documents (`df`, indexed by the
    vocabulary's column ids) win. Tokens shorter than `min_len` or containing digits are left
    alone. Two adjacent tokens whose concatenation is in the vocabulary ("owl bear" ->
    "owlbear", "fire ball" -> "fireball") add it with `weight_join`.
    Returns {vocabulary token: weight}; known tokens are not included.
    """
    query_tokens = list(query_tokens)
    out: dict[str, float] = {}
    for a, b in zip(query_tokens, query_tokens[1:], strict=False):  # noqa: RUF007 (pairwise is 3.10+ only)
        joined = a + b
        for j in (joined, stem(joined)):
            if j in vocab:
                out[j] = max(out.get(j, 0.0), weight_join)
                break
    for tok in query_tokens:
        if tok in vocab or len(tok) < min_len or not tok.isalpha():
            continue
        found = _within(tok, vocab, 1)
        weight = weight1
        if not found and len(tok) >= 7:
            found = _within(tok, vocab, 2)
            weight = weight2
        ranked = sorted(found, key=lambda t: (-_df(df, vocab, t), t))[:max_candidates]
        for t in ranked:
            out[t] = max(out.get(t, 0.0), weight)
    return out


def _df(df: np.ndarray | None, vocab: Mapping[str, int] | set[str], token: str) -> int:
    if df is None or not isinstance(vocab, Mapping):
        return 0
    return int(df[vocab[token]])
