"""Okapi BM25 scored once, at build time, into a sparse CSC matrix (docs x vocab).

The design follows xhluca/bm25s: every (doc, term) weight is precomputed, so a query only
slices its own columns and adds them. Scores are `rank_bm25.BM25Okapi`'s (k1=1.5, b=0.75) with
Lucene's idf, ln(1 + (N - df + .5) / (df + .5)), in place of Okapi's ln((N - df + .5) / (df + .5)):
Okapi's is zero for a word in half the documents and negative above that (rank_bm25 floors the
negatives, not the zeros), so in a small library, or a book about one monster, a word that is
there could not be found. Lucene's is positive for every word present and falls as the word
gets commoner. tests/test_bm25.py checks the parity with rank_bm25 given that idf.

Several text fields (title, body...) are each scored as their own BM25 and summed with
fixed weights. Because the weights are fixed at build time the per-field matrices are
summed into one, so a query costs the same whatever the number of fields.

Building, querying and loading need numpy only: the matrix is kept as its three raw CSC arrays
(`Csc`), laid out as scipy.sparse would lay them out. scipy is not imported: its import alone took
0.16 CPU-seconds, 5% of a scan of the Markdown corpus and a sixth of a rescan after one chapter changed.
"""

from __future__ import annotations

import functools
import os
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import orjson

from gmtool.errors import IndexError_
from gmtool.textnorm import tokenize

__all__ = ["BM25Index", "Csc", "Tokenized", "load_arrays", "load_matrix", "save_arrays", "tokenize_block", "top_k"]

FORMAT = "gmtool-bm25"
FORMAT_VERSION = 2  # 2: Lucene's idf (1: Okapi's, negatives floored)

Tokenizer = Callable[[str], list[str]]


class Tokenized(NamedTuple):
    """One field of a block of documents (one source), tokenized once: a local vocabulary and
    every document's tokens as ids into it. Cached per source, so adding a book to a large
    library merges cached blocks instead of re-tokenizing every other book."""

    vocab: list[str]
    cols: np.ndarray  # int32: the token ids of all documents, concatenated
    lengths: np.ndarray  # int32: tokens per document


def tokenize_block(texts: Iterable[str], tokenizer: Tokenizer = tokenize) -> Tokenized:
    vocab: dict[str, int] = {}
    lengths = array("q")
    cols = array("q")
    ids = _Vocab(vocab)
    for t in texts:
        toks = tokenizer(t or "")
        cols.extend(map(ids.__getitem__, toks))
        lengths.append(len(toks))
    vocab.update(ids)
    return Tokenized(
        list(vocab),
        np.frombuffer(cols, dtype=np.int64).astype(np.int32),
        np.frombuffer(lengths, dtype=np.int64).astype(np.int32),
    )


# Tokens turned into (document, term, count) triples per slice, so building the index of a
# library with tens of millions of tokens never holds more than this many per-token values.
_COUNT_SLICE = 1 << 20


def _term_counts(blk: Tokenized, remap: np.ndarray, offset: int) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(rows, cols, counts) of one block: each document's distinct terms and how often each occurs."""
    lengths = np.asarray(blk.lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    n = len(lengths)
    d0, t0 = 0, 0
    while d0 < n:
        d1 = max(d0 + 1, int(np.searchsorted(ends, t0 + _COUNT_SLICE, side="right")))
        t1 = int(ends[d1 - 1])
        if t1 > t0:
            rows = np.repeat(np.arange(offset + d0, offset + d1, dtype=np.int64), lengths[d0:d1])
            keys, counts = np.unique((rows << 32) | remap[blk.cols[t0:t1]], return_counts=True)
            yield keys >> 32, keys & 0xFFFFFFFF, counts
        d0, t0 = d1, t1


# --- persistence shared with fuzzy.py --------------------------------------------------


def save_arrays(path: Path, arrays: Mapping[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write an uncompressed .npz with storage's one atomic write (temp file, fsync, rename).

    `meta` (format name, version, vocabulary...) is stored orjson-encoded as a uint8 array.
    """
    from gmtool.storage.atomic import atomic_write_with

    payload = dict(arrays)
    payload["__meta__"] = np.frombuffer(orjson.dumps(meta), dtype=np.uint8)
    atomic_write_with(Path(path), lambda f: np.savez(f, **payload))  # type: ignore[arg-type]


def load_arrays(
    path: Path, fmt: str, version: int, mapped: bool = False
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read what `save_arrays` wrote; IndexError_ INDEX_MISSING / INDEX_CORRUPT otherwise.

    `mapped` (the read side) maps the arrays in place instead of reading and checksumming every
    byte: a query touches only its own columns, so a process that answers one query reads a few
    pages of a large library's matrix instead of all of it. The structural checks of
    `load_matrix` still run; `verify` reads without `mapped`, so it also checks the zip's CRCs.
    """
    path = Path(path)
    hint = "run `gmtool scan` to rebuild the index"
    try:
        if mapped:
            arrays = _mapped_arrays(path)
        else:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        meta = orjson.loads(arrays.pop("__meta__").tobytes())
    except FileNotFoundError:
        raise IndexError_("INDEX_MISSING", f"index file {path} is missing", hint) from None
    except Exception as exc:  # noqa: BLE001 - BadZipFile, ValueError, KeyError, JSONDecodeError...
        raise IndexError_("INDEX_CORRUPT", f"index file {path} is unreadable ({exc})", hint) from None
    if not isinstance(meta, dict) or meta.get("format") != fmt:
        raise IndexError_("INDEX_CORRUPT", f"index file {path} is not a {fmt} file", hint)
    if meta.get("version") != version:
        raise IndexError_(
            "INDEX_CORRUPT",
            f"index file {path} has format version {meta.get('version')}, expected {version}",
            hint,
        )
    return arrays, meta


_LOCAL_HEADER = struct.Struct("<4s22xHH")  # zip local file header: signature, ..., name and extra lengths


def _mapped_arrays(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed .npz (what np.savez writes) as read-only views of one
    memory map of the file. zipfile finds each member and numpy's own .npy header readers parse
    it. On Windows the file is read whole instead: a mapping there would block the writer's
    atomic rename (see storage.hits)."""
    import mmap
    import zipfile

    fmt = np.lib.format
    with open(path, "rb") as fh, zipfile.ZipFile(fh) as zf:
        buf: mmap.mmap | bytes
        if os.name == "nt":
            buf = fh.read()
        else:
            buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        out: dict[str, np.ndarray] = {}
        for info in zf.infolist():
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                raise ValueError(f"{info.filename} is not a stored .npy member")
            sig, name_len, extra_len = _LOCAL_HEADER.unpack_from(buf, info.header_offset)
            if sig != b"PK\x03\x04":
                raise ValueError(f"bad zip header for {info.filename}")
            start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
            fh.seek(start)
            major, _minor = fmt.read_magic(fh)
            read_header = fmt.read_array_header_1_0 if major == 1 else fmt.read_array_header_2_0
            shape, _fortran, dtype = read_header(fh)
            if dtype.hasobject or len(shape) != 1:
                raise ValueError(f"{info.filename} is not a flat numeric array")
            offset = fh.tell()
            if offset + shape[0] * dtype.itemsize > start + info.file_size:
                raise ValueError(f"{info.filename} is shorter than its header says")
            out[info.filename[: -len(".npy")]] = np.frombuffer(buf, dtype=dtype, count=shape[0], offset=offset)
    return out


class Csc(NamedTuple):
    """A compressed-sparse-column matrix as plain numpy arrays (scipy's layout, no scipy)."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def from_entries(cls, rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]) -> Csc:
        """The matrix of distinct (row, col) entries, as scipy.sparse lays it out (csc_matrix((data, (rows,
        cols))), indices sorted): column by column, rows ascending, int32 indices where they fit."""
        n_rows, n_cols = shape
        idx = np.int32 if max(n_rows, n_cols, data.size) <= np.iinfo(np.int32).max else np.int64
        order = np.argsort(cols.astype(np.int64) * n_rows + rows)  # distinct keys: any sort gives this order
        indptr = np.zeros(n_cols + 1, dtype=idx)
        np.cumsum(np.bincount(cols, minlength=n_cols), out=indptr[1:])
        return cls(data[order], rows[order].astype(idx), indptr, (n_rows, n_cols))

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], shape: tuple[int, int]) -> Csc:
        """Rebuild from `save_arrays` output, checking the arrays are consistent."""
        data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
        n_rows, n_cols = shape
        if indptr.shape != (n_cols + 1,) or data.shape != indices.shape or indices.ndim != 1:
            raise ValueError("inconsistent sparse arrays")
        if (
            int(indptr[0]) != 0
            or int(indptr[-1]) != data.shape[0]
            or (indptr.size > 1 and np.diff(indptr).min() < 0)
        ):
            raise ValueError("bad column pointers")
        if indices.size and (int(indices.min()) < 0 or int(indices.max()) >= n_rows):
            raise ValueError("row index out of range")
        return cls(data, indices, indptr, shape)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"data": self.data, "indices": self.indices, "indptr": self.indptr}


def load_matrix(
    path: Path, fmt: str, version: int, terms_key: str, mapped: bool = False
) -> tuple[Csc, list[str], dict[str, np.ndarray], dict[str, Any]]:
    """A saved term matrix and its column names; any inconsistency is INDEX_CORRUPT."""
    arrays, meta = load_arrays(path, fmt, version, mapped)
    try:
        shape = (int(meta["shape"][0]), int(meta["shape"][1]))
        terms = list(meta.pop(terms_key))
        if len(terms) != shape[1]:
            raise ValueError("the column names do not match the matrix")
        matrix = Csc.from_arrays(arrays, shape)
    except Exception as exc:  # noqa: BLE001 - any inconsistency means a corrupt file
        raise IndexError_(
            "INDEX_CORRUPT",
            f"index file {path} is inconsistent ({exc})",
            "run `gmtool scan` to rebuild it",
        ) from None
    return matrix, terms, arrays, meta


def add_columns(matrix: Csc, cols: Iterable[tuple[int, float]], out: np.ndarray) -> np.ndarray:
    """out += sum(weight * matrix[:, col]), slicing the CSC arrays directly (no scipy overhead)."""
    indptr, indices, data = matrix.indptr, matrix.indices, matrix.data
    for col, w in cols:
        s, e = indptr[col], indptr[col + 1]
        if s == e:
            continue
        # Row indices within one CSC column are unique, so fancy-index += is exact.
        if w == 1.0:
            out[indices[s:e]] += data[s:e]
        else:
            out[indices[s:e]] += w * data[s:e]
    return out


# --- BM25 ------------------------------------------------------------------------------


class BM25Index:
    """Multi-field BM25 over a fixed list of documents; see the module docstring."""

    k1 = 1.5
    b = 0.75

    def __init__(self, matrix: Csc, vocab: dict[str, int], meta: dict[str, Any] | None = None):
        self.matrix = matrix  # docs x vocab, weighted BM25 of every field summed
        self.vocab = vocab
        self.meta = meta or {}
        self.n_docs: int = matrix.shape[0]

    # -- build --------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        fields: Mapping[str, list[str]],
        weights: Mapping[str, float] | None = None,
        tokenizer: Tokenizer = tokenize,
        dtype: Any = np.float32,
    ) -> BM25Index:
        """Score every field as its own BM25 (see the module docstring) and sum them with `weights`.

        fields: name -> one text per document (all lists the same length).
        weights: name -> weight (default 1.0 for a field not named).
        dtype: float32 (default, half the size on disk) or float64 (bit-for-bit parity tests).
        """

        if not fields:
            raise ValueError("BM25Index.build needs at least one field")
        lengths = {len(v) for v in fields.values()}
        if len(lengths) != 1:
            raise ValueError(
                f"fields have different document counts: { {k: len(v) for k, v in fields.items()} }"
            )
        n_docs = lengths.pop()
        blocks = {name: [tokenize_block(texts, tokenizer)] for name, texts in fields.items()}
        return cls.build_tokenized(blocks, n_docs, weights, dtype)

    @classmethod
    def build_tokenized(
        cls,
        fields: Mapping[str, list[Tokenized]],
        n_docs: int,
        weights: Mapping[str, float] | None = None,
        dtype: Any = np.float32,
    ) -> BM25Index:
        """The same index from pre-tokenized blocks (documents in block order)."""
        weights = dict(weights or {})
        vocab: dict[str, int] = {}
        field_mats: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        for name, blocks in fields.items():
            w = float(weights.get(name, 1.0))
            rows_parts, cols_parts, count_parts, len_parts = [], [], [], []
            offset = 0
            for blk in blocks:
                remap = np.fromiter((vocab.setdefault(tok, len(vocab)) for tok in blk.vocab), dtype=np.int64,
                                    count=len(blk.vocab))
                for r, c, k in _term_counts(blk, remap, offset):
                    rows_parts.append(r)
                    cols_parts.append(c)
                    count_parts.append(k)
                len_parts.append(np.asarray(blk.lengths, dtype=np.float64))
                offset += len(blk.lengths)
            if offset != n_docs:
                raise ValueError(f"field {name!r} has {offset} documents, expected {n_docs}")
            rows, cols, counts = (np.concatenate(p) if p else np.zeros(0, dtype=np.int64)
                                  for p in (rows_parts, cols_parts, count_parts))
            doc_len = np.concatenate(len_parts) if len_parts else np.zeros(n_docs)
            field_mats.append((w, rows, cols, counts, doc_len))
        n_terms = len(vocab)
        # The weighted fields summed entry by entry, as scipy's sparse sum did. Keys number the entries row
        # by row (row * n_terms + col): _term_counts gives each field's pairs in that order.
        width = max(n_terms, 1)
        keys, vals = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        for w, rows, cols, counts, doc_len in field_mats:
            if w == 0.0 or rows.size == 0:
                continue
            weighed = w * cls._field_weights(rows, cols, n_docs, n_terms, counts, doc_len)
            keys, vals = _add_entries(keys, vals, rows * width + cols, weighed)
        data = vals.astype(dtype)
        kept = data != 0
        keys, data = keys[kept], data[kept]
        matrix = Csc.from_entries(keys // width, keys % width, data, (n_docs, n_terms))
        meta = {"fields": list(fields), "weights": {k: float(weights.get(k, 1.0)) for k in fields}}
        return cls(matrix, vocab, meta)

    @classmethod
    def _field_weights(
        cls, rows: np.ndarray, cols: np.ndarray, n_docs: int, n_terms: int, counts: np.ndarray, doc_len: np.ndarray,
    ) -> np.ndarray:
        """BM25 weight (rank_bm25's, with Lucene's idf) of each distinct (row, col) pair of one field:
        `counts` are the pairs' term frequencies, `doc_len` the tokens per document."""
        t = counts.astype(np.float64)
        avgdl = doc_len.sum() / n_docs
        df = np.bincount(cols, minlength=n_terms)
        present = df > 0
        idf = np.zeros(n_terms, dtype=np.float64)
        idf[present] = np.log1p((n_docs - df[present] + 0.5) / (df[present] + 0.5))
        # per pair: idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        norm = cls.k1 * (1 - cls.b + cls.b * doc_len[rows] / avgdl)
        return idf[cols] * (t * (cls.k1 + 1) / (t + norm))

    # -- query --------------------------------------------------------------------------

    def has_token(self, token: str) -> bool:
        return token in self.vocab

    @functools.cached_property
    def df(self) -> np.ndarray:
        """Documents per vocabulary column (any field), handy to rank spelling corrections;
        computed once (every query passes it along)."""
        return np.diff(self.matrix.indptr)

    def query_weights(
        self, query: str | Mapping[str, float], tokenizer: Tokenizer = tokenize
    ) -> dict[int, float]:
        """Column -> weight. A str is tokenized (a repeated token counts twice, like rank_bm25)."""
        vocab = self.vocab
        out: dict[int, float] = {}
        if isinstance(query, str):
            for t in tokenizer(query):
                c = vocab.get(t)
                if c is not None:
                    out[c] = out.get(c, 0.0) + 1.0
        else:
            for t, w in query.items():
                c = vocab.get(t)
                if c is not None and w:
                    out[c] = out.get(c, 0.0) + float(w)
        return out

    def scores(self, query: str | Mapping[str, float], tokenizer: Tokenizer = tokenize) -> np.ndarray:
        """BM25 score of every document (float64 array of n_docs); unknown tokens add nothing.

        query: a string (tokenized with `tokenizer`) or a token -> weight mapping whose tokens
        are already in index form (e.g. from text.tokenize or fuzzy.correct_tokens).
        """
        out = np.zeros(self.n_docs, dtype=np.float64)
        return add_columns(self.matrix, self.query_weights(query, tokenizer).items(), out)

    # -- persistence --------------------------------------------------------------------

    def save(self, path: Path) -> None:
        m = self.matrix
        terms = [""] * len(self.vocab)
        for t, i in self.vocab.items():
            terms[i] = t
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "shape": list(m.shape),
            "k1": self.k1,
            "b": self.b,
            "idf": "lucene",
            "terms": terms,
            **self.meta,
        }
        save_arrays(path, m.arrays(), meta)

    @classmethod
    def load(cls, path: Path, mapped: bool = False) -> BM25Index:
        """`mapped`: see load_arrays (the read side maps, verify reads every byte)."""
        matrix, terms, _arrays, meta = load_matrix(path, FORMAT, FORMAT_VERSION, "terms", mapped)
        vocab = dict(zip(terms, range(len(terms)), strict=False))
        keep: dict[str, Any] = {k: meta[k] for k in ("fields", "weights") if k in meta}
        return cls(matrix, vocab, keep)


def _add_entries(keys: np.ndarray, vals: np.ndarray, more_keys: np.ndarray, more_vals: np.ndarray,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Two sparse matrices' entries (ascending distinct keys each) summed: the union of the keys, ascending,
    with a + b where both hold one and without the sums that are zero, as scipy's sparse `+` gives them."""
    if keys.size == 0:  # 0 + b is b
        nonzero = more_vals != 0
        return more_keys[nonzero], more_vals[nonzero]
    both = np.concatenate([keys, more_keys])
    order = np.argsort(both, kind="stable")  # two sorted runs: one merge; `keys`'s entry first on a tie
    both = both[order]
    first = np.concatenate(([True], both[1:] != both[:-1]))
    summed = np.bincount(np.cumsum(first) - 1, weights=np.concatenate([vals, more_vals])[order])  # 0 + a + b
    nonzero = summed != 0
    return both[first][nonzero], summed[nonzero]


class _Vocab(dict):
    """token -> column id, assigning the next id to an unseen token."""

    def __missing__(self, token: str) -> int:
        i = self[token] = len(self)
        return i


def top_k(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k best documents with score > 0 (and mask True), best first.

    Ties are broken by document index, so results are deterministic.
    """
    ok = scores > 0
    if mask is not None:
        ok &= mask
    cand = np.flatnonzero(ok)
    if k <= 0 or cand.size == 0:
        return np.empty(0, dtype=np.intp)
    s = scores[cand]
    if cand.size > k:
        # the k-th best score (a value partition: cheaper than partitioning indices); every
        # candidate tied with it is kept, so tie-breaking by index is stable
        kth = np.partition(s, s.size - k)[s.size - k]
        part = np.flatnonzero(s >= kth)
        cand, s = cand[part], s[part]
    order = np.lexsort((cand, -s))[:k]
    return cand[order]
