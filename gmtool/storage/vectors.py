"""Per-source vector cache: INDEX_DIR/vectors/SID.npy (float16) + SID.keys.json (+ SID.units.json).

The keys file ({"fingerprint": ..., "source": sha256, "keys": [...]}) is plain orjson, so the engine can tell whether
vectors are current without importing onnxruntime. A vector is reused when the same text (by
content hash) was embedded for this source under the same embedder fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from gmtool.storage.atomic import atomic_write, atomic_write_with
from gmtool.storage.layout import unit_index_file, vector_files, vectors_dir

if TYPE_CHECKING:
    import numpy

    from gmtool.types import Embedder, SourceMeta


def section_key(text: str) -> str:
    """Short content hash of the exact text that gets embedded."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _checksum(arr: Any) -> str:
    return hashlib.blake2b(arr.tobytes(), digest_size=8).hexdigest()


class VectorStore:
    """One per library index dir."""

    def __init__(self, index_dir: Path) -> None:
        self.index_dir = Path(index_dir)
        self.dir = vectors_dir(self.index_dir)
        self.written: list[Path] = []  # files this store wrote, for the writer to checksum

    def _paths(self, source_id: str) -> tuple[Path, Path]:
        return vector_files(self.index_dir, source_id)

    def read_keys(self, source_id: str) -> dict[str, Any] | None:
        """The keys file, or None when missing or unreadable. Needs no numpy/onnxruntime."""
        _, keys_path = self._paths(source_id)
        try:
            meta = orjson.loads(keys_path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None
        if not isinstance(meta, dict) or not isinstance(meta.get("keys"), list):
            return None
        return meta

    def has(self, source_id: str, fingerprint: str | None = None) -> bool:
        npy, _ = self._paths(source_id)
        meta = self.read_keys(source_id)
        if meta is None or not npy.is_file():
            return False
        return fingerprint is None or meta.get("fingerprint") == fingerprint

    def load(self, source_id: str, fingerprint: str, source: str | None = None,
             verified: bool = False) -> numpy.ndarray | None:
        """float16 [n, dim] aligned with the texts of the last update, or None; with `source`
        (the book's sha256) None also when they were made from another version of the book.
        `verified`: the caller has matched both files against the checksums the manifest recorded
        when they were written together, so the vectors' own checksum need not be worked out."""
        import numpy as np

        meta = self.read_keys(source_id)
        if meta is None or meta.get("fingerprint") != fingerprint:
            return None
        if source is not None and meta.get("source", source) != source:
            return None
        npy, _ = self._paths(source_id)
        try:
            arr = np.load(npy, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        if arr.ndim != 2 or arr.shape[0] != len(meta["keys"]) or arr.dtype != np.float16:
            return None
        if not verified and meta.get("checksum") not in (None, _checksum(arr)):  # vectors, keys of different writes
            return None
        return arr

    def update(self, source_id: str, texts: list[str], embedder: Embedder,
               progress: Callable[[int], None] | None = None, known: dict[str, Any] | None = None,
               source: str | None = None) -> int:
        """Make the stored vectors match `texts`; embed only new texts. Returns how many were embedded.

        `known` maps text keys to vectors of the same embedder from other sources (reused instead
        of embedding again) and receives this source's; `source` (the file's sha256) is recorded,
        so a reader can tell vectors of an older version of the book."""
        import numpy as np

        keys = [section_key(t) for t in texts]
        fingerprint = embedder.fingerprint
        old_meta = self.read_keys(source_id)
        old = self.load(source_id, fingerprint) if old_meta is not None else None
        have: dict[str, Any] = {} if known is None else known
        if old is not None and old_meta is not None:
            same = old_meta["keys"] == keys and old_meta.get("source") == source
            for k, row in zip(old_meta["keys"], old, strict=True):
                have.setdefault(k, row)
            if same:
                return 0
        # identical texts within one source (or already known) are embedded once
        first: dict[str, int] = {}
        unique_todo = [i for i, k in enumerate(keys) if k not in have and first.setdefault(k, i) == i]
        if unique_todo:
            fresh = embedder.embed([texts[i] for i in unique_todo], progress=progress).astype(np.float16)
            for i, row in zip(unique_todo, fresh, strict=True):
                have[keys[i]] = row
        out = np.zeros((len(texts), embedder.dim), dtype=np.float16)
        for i, k in enumerate(keys):
            out[i] = have[k]
        meta = {"fingerprint": fingerprint, "dim": embedder.dim, "checksum": _checksum(out), "keys": keys}
        if source is not None:
            meta["source"] = source
        self._write(source_id, out, meta)
        return len(unique_todo)

    def _write(self, source_id: str, arr: Any, meta: dict[str, Any]) -> None:
        import numpy as np

        npy, keys_path = self._paths(source_id)
        # vectors first, keys last: a crash in between leaves a checksum mismatch that load() rejects
        atomic_write_with(npy, lambda fh: np.save(fh, arr, allow_pickle=False))
        atomic_write(keys_path, orjson.dumps(meta))
        self.written += [npy, keys_path]

    def remove(self, source_id: str) -> None:
        for path in self._paths(source_id):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def has_vectors(index_dir: Path) -> bool:
    """Any source has stored vectors (a cheap check, before loading a model)."""
    return any(vectors_dir(index_dir).glob("*.npy"))


def save_unit_index(index_dir: Path, sid: str, idx: list[int], texts: list[str],
                    weights: list[float] | None = None) -> Path:
    """Which entry each vector belongs to, and the weight its similarity counts with (rank.units:
    omitted when all are 1), so a query never has to rebuild the windows."""
    digest = section_key("\x1f".join(texts))
    path = unit_index_file(index_dir, sid)
    data: dict[str, Any] = {"digest": digest, "idx": idx}
    if weights is not None and any(w != 1.0 for w in weights):
        data["weights"] = weights
    atomic_write(path, orjson.dumps(data))
    return path


def has_unit_index(index_dir: Path, sid: str) -> bool:
    return unit_index_file(index_dir, sid).exists()


def load_unit_index(index_dir: Path, sid: str, n: int) -> tuple[list[int], list[float] | None] | None:
    """(entry per vector, weights or None when all are 1) for `n` vectors; None when unreadable."""
    try:
        data = orjson.loads(unit_index_file(index_dir, sid).read_bytes())
        idx = data["idx"]
        weights = data.get("weights")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not isinstance(idx, list) or len(idx) != n:
        return None
    if weights is not None and (not isinstance(weights, list) or len(weights) != n):
        return None
    return idx, weights


def embedding_status(index_dir: Path, metas: dict[str, SourceMeta], space: str | None,
                     device: str | None) -> dict[str, Any]:
    """Books whose vectors are of the index's space and of the book's current version, and the
    sections of the others, which still wait for a scan to embed them. Reads only keys files."""
    vs = VectorStore(index_dir)
    waiting = [sid for sid, m in sorted(metas.items())
               if space is None or not _current(vs.read_keys(sid), space, m.sha256)]
    return {
        "space": space,
        "device": device,
        "books_embedded": len(metas) - len(waiting),
        "books": len(metas),
        "sections_waiting": sum(metas[s].entry_count for s in waiting),
        "books_waiting": waiting,
    }


def _current(meta: dict[str, Any] | None, space: str, sha256: str) -> bool:
    return meta is not None and meta.get("fingerprint") == space and meta.get("source", sha256) == sha256
