"""The manifest: which sources are indexed, and the writer's typed bookkeeping about them.

It is replaced last in every write, so it only ever names files that exist and match.
`IndexState` holds what used to be an untyped `extra` dict; writers and `verify` share it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from gmtool import __version__
from gmtool.errors import GmtoolError, IndexError_
from gmtool.storage.atomic import atomic_write
from gmtool.storage.hashing import FileStamp
from gmtool.storage.layout import manifest_path
from gmtool.types import SourceMeta

# Bump when a stored file changes shape so old readers cannot read it; loaders then answer
# INDEX_VERSION and `gmtool scan --force` rebuilds. Version 1 manifests with the old untyped
# `extra` dict are read as they are (their bookkeeping is carried over where it still applies).
FORMAT_VERSION = 1


def dumps(obj: Any) -> bytes:
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)


@dataclass(frozen=True, slots=True)
class FailedFile:
    """The last run's failure for a library file, and the file's size and mtime then: while
    they are unchanged, the failure stands and a rescan does not try it again in vain."""

    size: int
    mtime: float
    code: str
    message: str = ""  # kept so `gmtool ls` can say why a book is missing without a rescan
    hint: str = ""

    def same_file(self, size: int, mtime: float) -> bool:
        return (self.size, self.mtime) == (size, mtime)


@dataclass(slots=True)
class IndexState:
    """Writer bookkeeping that makes a no-change rescan cost one stat per file."""

    files: dict[str, FileStamp] = field(default_factory=dict)  # sid -> the library file's stamp
    index_stat: dict[str, list[int]] = field(default_factory=dict)  # sid -> its index files' stats
    failed: dict[str, FailedFile] = field(default_factory=dict)  # library path -> last failure
    keyword: str | None = None  # digest of the keyword matrices on disk
    keyword_stat: list[int] | None = None  # their (size, mtime_ns) when written
    embed_stamp: str | None = None  # sources + model + device of the last complete embedding
    # folder books: sid -> chapter file -> its stamp and sha256, so one changed chapter is found
    # (and only it hashed) without reading the others
    chapters: dict[str, dict[str, list[Any]]] = field(default_factory=dict)

    def forget(self, sid: str) -> None:
        self.files.pop(sid, None)
        self.index_stat.pop(sid, None)
        self.chapters.pop(sid, None)

    def to_json(self) -> dict[str, Any]:
        return {
            "files": {k: v.to_list() for k, v in sorted(self.files.items())},
            "index_stat": dict(sorted(self.index_stat.items())),
            "failed": {k: [v.size, v.mtime, v.code, v.message, v.hint] for k, v in sorted(self.failed.items())},
            "keyword": self.keyword,
            "keyword_stat": self.keyword_stat,
            "embed_stamp": self.embed_stamp,
            "chapters": dict(sorted(self.chapters.items())),
        }

    @classmethod
    def from_json(cls, raw: Any) -> IndexState:
        """Lenient: bookkeeping that does not parse is dropped (it only costs a re-check)."""
        state = cls()
        if not isinstance(raw, dict):
            return state
        for sid, stamp in _dict(raw.get("files")).items():
            if (fs := FileStamp.from_list(stamp)) is not None:
                state.files[sid] = fs
        state.index_stat = {k: v for k, v in _dict(raw.get("index_stat")).items() if _ints(v)}
        for path, v in _dict(raw.get("failed")).items():
            if isinstance(v, list) and len(v) in (3, 5) and all(isinstance(x, str) for x in v[2:]):
                state.failed[path] = FailedFile(int(v[0]), float(v[1]), *v[2:])
        state.keyword = raw.get("keyword") if isinstance(raw.get("keyword"), str) else None
        state.keyword_stat = raw.get("keyword_stat") if _ints(raw.get("keyword_stat")) else None
        state.embed_stamp = raw.get("embed_stamp") if isinstance(raw.get("embed_stamp"), str) else None
        state.chapters = {k: v for k, v in _dict(raw.get("chapters")).items() if isinstance(v, dict)}
        return state


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _ints(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, int) for x in v)


class Manifest:
    """Which sources are indexed (with their metadata) plus the writer's bookkeeping."""

    def __init__(
        self, sources: dict[str, SourceMeta] | None = None, generation: int = 0, state: IndexState | None = None
    ) -> None:
        self.sources: dict[str, SourceMeta] = sources or {}
        self.generation = generation
        self.state = state or IndexState()

    def to_bytes(self) -> bytes:
        return dumps(
            {
                "format_version": FORMAT_VERSION,
                "gmtool_version": __version__,
                "generation": self.generation,
                "written_at": time.time(),
                "sources": {k: asdict(v) for k, v in sorted(self.sources.items())},
                "state": self.state.to_json(),
            }
        )


def load_manifest(index_dir: Path) -> Manifest:
    """Missing manifest -> INDEX_NOT_FOUND; unreadable or other version -> INDEX_CORRUPT/INDEX_VERSION."""
    path = manifest_path(index_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise IndexError_(
            "INDEX_NOT_FOUND",
            f"no index at {index_dir}",
            "run `gmtool scan DIR` on your rulebook folder first (or pass --library DIR)",
        ) from None
    try:
        data = orjson.loads(raw)
        if data.get("format_version") != FORMAT_VERSION:
            raise IndexError_(
                "INDEX_VERSION",
                f"index format {data.get('format_version')} is not {FORMAT_VERSION}",
                "run `gmtool scan --force` to rebuild the index",
            )
        sources = {k: SourceMeta(**v) for k, v in data["sources"].items()}
    except GmtoolError:
        raise
    except (ValueError, KeyError, TypeError, AttributeError):
        raise IndexError_(
            "INDEX_CORRUPT", f"the index manifest in {index_dir} is corrupt", "run `gmtool scan` to rebuild it"
        ) from None
    state = IndexState.from_json(data.get("state", data.get("extra")))  # "extra": gmtool 0.1
    return Manifest(sources, int(data.get("generation", 0)), state)


def load_manifest_or_empty(index_dir: Path) -> tuple[Manifest, str | None]:
    """For writers: a corrupt manifest is reported but never stops a scan from rebuilding."""
    try:
        return load_manifest(index_dir), None
    except GmtoolError as exc:
        if exc.code == "INDEX_NOT_FOUND":
            return Manifest(), None
        return Manifest(), exc.code


def save_manifest(index_dir: Path, manifest: Manifest) -> None:
    atomic_write(manifest_path(index_dir), manifest.to_bytes())


def manifest_stamp(index_dir: Path) -> tuple[int, int] | None:
    """Cheap change detector for long-lived readers (serve): (mtime_ns, size) of the manifest."""
    try:
        st = manifest_path(index_dir).stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)
