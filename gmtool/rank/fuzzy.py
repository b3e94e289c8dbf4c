"""Typo and spacing tolerance: fuzzy title similarity and query-token spelling correction.

`TitleMatcher` scores every title by cosine similarity of character-trigram TF-IDF
vectors (0..1). Each title contributes the trigrams of its words (padded with spaces,
like sklearn's "char_wb") *and* of the title with its spaces removed, so "owl bear" meets
"Owlbear" and "firball" meets "Fireball". Everything is computed here (no sklearn), so the
query side needs only numpy and the persisted matrix.

`correct_tokens` maps query tokens that are not in the BM25 vocabulary to vocabulary tokens
one edit away (deletion, insertion, substitution, transposition; two edits for long
tokens), to be added to a BM25 query at a lower weight.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np

from gmtool.errors import IndexError_
from gmtool.rank.bm25 import Csc, add_columns, load_matrix, save_arrays
from gmtool.textnorm import normalize, stem

__all__ = ["TitleMatcher", "char_ngrams", "correct_tokens", "edit_distance"]

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
        import scipy.sparse as sp

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
        mat = sp.csc_matrix((v.astype(np.float32), (r, c)), shape=(n, m))
        return cls(Csc.from_scipy(mat), grams, idf.astype(np.float32))

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
    def load(cls, path: Path) -> TitleMatcher:
        matrix, terms, arrays, _meta = load_matrix(path, FORMAT, FORMAT_VERSION, "grams")
        idf = arrays.get("idf")
        if idf is None or idf.shape != (len(terms),):
            raise IndexError_("INDEX_CORRUPT", f"index file {path} is inconsistent (idf)", "run `gmtool scan` to rebuild it")
        return cls(matrix, dict(zip(terms, range(len(terms)), strict=False)), idf)


# --- spelling correction of query tokens -------------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _edits1(w: str) -> set[str]:
    splits = [(w[:i], w[i:]) for i in range(len(w) + 1)]
    deletes = [a + b[1:] for a, b in splits if b]
    transposes = [a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1]
    replaces = [a + c + b[1:] for a, b in splits if b for c in _LETTERS]
    inserts = [a + c + b for a, b in splits for c in _LETTERS]
    return set(deletes + transposes + replaces + inserts)


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Optimal-string-alignment distance (transposition = 1), capped at `limit`."""
    if abs(len(a) - len(b)) >= limit:
        return limit
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        best = cur[0]
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            v = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                v = min(v, prev2[j - 2] + 1)
            cur[j] = v
            best = min(best, v)
        if best >= limit:
            return limit
        prev2, prev = prev, cur
    return min(prev[-1], limit)


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

    query_tokens are raw or stemmed query words (e.g. text.tokenize output); candidates
    are stemmed with text.stem before the vocabulary look-up, so "holdin" -> "holding" ->
    "hold". Distance 1 candidates get `weight1`; tokens of 7+ characters with no distance-1
    candidate try distance 2 (a scan of the vocabulary of similar length), weight `weight2`. Among several candidates, those in more documents (`df`, indexed by the
    vocabulary's column ids) win. Tokens shorter than `min_len` or containing digits are
    left alone. Two adjacent tokens whose concatenation is in the vocabulary ("owl bear" ->
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
        edits = _edits1(tok)
        found = _candidates(edits, vocab, exclude=tok)
        weight = weight1
        if not found and len(tok) >= 7:
            found = _scan_distance2(tok, vocab)
            weight = weight2
        if not found:
            continue
        ranked = sorted(found, key=lambda t: (-_df(df, vocab, t), t))[:max_candidates]
        for t in ranked:
            out[t] = max(out.get(t, 0.0), weight)
    return out


def _candidates(edits: Iterable[str], vocab, exclude: str) -> dict[str, None]:
    """Edits found in the vocabulary as they are; failing any, those whose stem is."""
    direct = {e: None for e in edits if e in vocab}
    if direct:
        return direct
    found: dict[str, None] = {}
    for e in edits:
        s = stem(e)
        if s in vocab and s != exclude:
            found[s] = None
    return found


_LEN_BUCKETS: dict[int, tuple[int, dict[int, list[str]]]] = {}


def _scan_distance2(tok: str, vocab) -> dict[str, None]:
    """Vocabulary tokens within distance 2, scanning only lengths len(tok)-2..len(tok)+2
    and tokens sharing the first letter or the first two letters in any order."""
    key = id(vocab)
    cached = _LEN_BUCKETS.get(key)
    if cached is None or cached[0] != len(vocab):
        buckets: dict[int, list[str]] = {}
        for t in vocab:
            buckets.setdefault(len(t), []).append(t)
        _LEN_BUCKETS.clear()
        _LEN_BUCKETS[key] = cached = (len(vocab), buckets)
    buckets = cached[1]
    found: dict[str, None] = {}
    first = tok[0]
    chars = set(tok)
    for n in range(len(tok) - 2, len(tok) + 3):
        for t in buckets.get(n, ()):
            if t[0] != first and t[0] != tok[1]:
                continue
            if len(chars.symmetric_difference(t)) > 4:
                continue
            if edit_distance(tok, t, 3) <= 2:
                found[t] = None
    return found


def _df(df: np.ndarray | None, vocab, token: str) -> int:
    if df is None or not isinstance(vocab, Mapping):
        return 0
    return int(df[vocab[token]])
