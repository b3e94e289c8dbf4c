"""Per-source vector cache: <index_dir>/vectors/{source_id}.npy (float16) + {source_id}.keys.json.

The keys file ({"fingerprint": ..., "keys": [...]}) is plain orjson, so the engine can tell whether
vectors are current without importing onnxruntime. A vector is reused when the same text (by
content hash) was embedded for this source under the same embedder fingerprint.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import numpy

    from gmtool.types import Embedder


def section_key(text: str) -> str:
    """Short content hash of the exact text that gets embedded."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _checksum(arr: Any) -> str:
    return hashlib.blake2b(arr.tobytes(), digest_size=8).hexdigest()


def _fsync_replace(tmp: Path, dest: Path) -> None:
    os.replace(tmp, dest)
    try:  # make the rename itself durable where the platform allows it
        fd = os.open(dest.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class VectorStore:
    """One per library index dir."""

    def __init__(self, index_dir: Path) -> None:
        self.dir = Path(index_dir) / "vectors"

    def _paths(self, source_id: str) -> tuple[Path, Path]:
        safe = source_id.replace("/", "_").replace("\\", "_")
        return self.dir / f"{safe}.npy", self.dir / f"{safe}.keys.json"

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

    def load(self, source_id: str, fingerprint: str) -> numpy.ndarray | None:
        """float16 [n, dim] aligned with the texts of the last update, or None."""
        import numpy as np

        meta = self.read_keys(source_id)
        if meta is None or meta.get("fingerprint") != fingerprint:
            return None
        npy, _ = self._paths(source_id)
        try:
            arr = np.load(npy, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        if arr.ndim != 2 or arr.shape[0] != len(meta["keys"]) or arr.dtype != np.float16:
            return None
        if meta.get("checksum") not in (None, _checksum(arr)):  # vectors and keys from different writes
            return None
        return arr

    def update(self, source_id: str, texts: list[str], embedder: Embedder,
               progress: Callable[[int], None] | None = None) -> int:
        """Make the stored vectors match `texts`; embed only new texts. Returns how many were embedded."""
        import numpy as np

        keys = [section_key(t) for t in texts]
        fingerprint = embedder.fingerprint
        old_meta = self.read_keys(source_id)
        old = self.load(source_id, fingerprint) if old_meta is not None else None
        known: dict[str, int] = {}
        if old is not None and old_meta is not None:
            known = {k: i for i, k in enumerate(old_meta["keys"])}
        todo = [i for i, k in enumerate(keys) if k not in known]
        # identical texts within one source are embedded once
        first: dict[str, int] = {}
        unique_todo = [i for i in todo if first.setdefault(keys[i], i) == i]
        if old is not None and not unique_todo and old_meta is not None and old_meta["keys"] == keys:
            return 0
        dim = embedder.dim
        out = np.zeros((len(texts), dim), dtype=np.float16)
        if unique_todo:
            fresh = embedder.embed([texts[i] for i in unique_todo], progress=progress).astype(np.float16)
            fresh_by_key = {keys[i]: row for i, row in zip(unique_todo, fresh, strict=False)}
        else:
            fresh_by_key = {}
        for i, k in enumerate(keys):
            if k in fresh_by_key:
                out[i] = fresh_by_key[k]
            else:
                assert old is not None
                out[i] = old[known[k]]
        meta = {"fingerprint": fingerprint, "dim": dim, "checksum": _checksum(out), "keys": keys}
        self._write(source_id, out, meta)
        return len(unique_todo)

    def _write(self, source_id: str, arr: Any, meta: dict[str, Any]) -> None:
        import numpy as np

        self.dir.mkdir(parents=True, exist_ok=True)
        npy, keys_path = self._paths(source_id)
        tag = f".{os.getpid()}.tmp"
        tmp_npy = npy.with_name(npy.name + tag)
        tmp_keys = keys_path.with_name(keys_path.name + tag)
        try:
            with open(tmp_npy, "wb") as fh:
                np.save(fh, arr, allow_pickle=False)
                fh.flush()
                os.fsync(fh.fileno())
            with open(tmp_keys, "wb") as fh:
                fh.write(orjson.dumps(meta))
                fh.flush()
                os.fsync(fh.fileno())
            # vectors first, keys last: a crash in between leaves a checksum mismatch that load() rejects
            _fsync_replace(tmp_npy, npy)
            _fsync_replace(tmp_keys, keys_path)
        finally:
            for tmp in (tmp_npy, tmp_keys):
                if tmp.exists():
                    tmp.unlink()

    def remove(self, source_id: str) -> None:
        for path in self._paths(source_id):
            try:
                path.unlink()
            except FileNotFoundError:
                pass


def unit_index_path(index_dir: Path, sid: str) -> Path:
    return index_dir / "vectors" / f"{sid}.units.json"


def save_unit_index(index_dir: Path, sid: str, idx: list[int], texts: list[str]) -> None:
    """Which entry each vector belongs to, so a query never has to rebuild the windows."""
    import orjson

    from gmtool.storage.store import atomic_write

    digest = section_key("\x1f".join(texts))
    atomic_write(unit_index_path(index_dir, sid), orjson.dumps({"digest": digest, "idx": idx}))


def load_unit_index(index_dir: Path, sid: str, n: int) -> list[int] | None:
    import orjson

    try:
        data = orjson.loads(unit_index_path(index_dir, sid).read_bytes())
        idx = data["idx"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return idx if isinstance(idx, list) and len(idx) == n else None
