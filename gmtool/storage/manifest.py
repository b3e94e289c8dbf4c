"""The manifest: which sources are indexed, and the writer's typed bookkeeping about them.

It is replaced last in every write, so it only ever names files that exist and match.
`IndexState` holds what used to be an untyped `extra` dict; writers and `verify` share it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from gmtool import __version__
from gmtool.errors import GmtoolError, IndexError_
from gmtool.storage.atomic import atomic_write
from gmtool.storage.checksums import Checksums
from gmtool.storage.checksums import valid as valid_checksum
from gmtool.storage.hashing import FileStamp
from gmtool.storage.layout import check_folder, manifest_path
from gmtool.textnorm import shown_name, walk_strings
from gmtool.types import SourceMeta

# Bump when a stored file changes shape so old readers cannot read it; loaders then answer
# INDEX_VERSION and `gmtool scan --force` rebuilds. Version 1 manifests with the old untyped
# `extra` dict are read as they are (their bookkeeping is carried over where it still applies).
FORMAT_VERSION = 1


_OPTS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS
# A library file whose name is not UTF-8 has a name with lone surrogates (see textnorm.shown_name),
# which JSON cannot hold. Such a document is written with every surrogate U+DC80..U+DCFF moved to
# the private-use code point _PRIVATE + its byte, any private-use code point of that block a
# string holds already kept behind _PRIVATE itself, and _ESCAPED_KEY set: the loader reverses it,
# so every name comes back exactly (and `library / meta.file` opens the file again).
_PRIVATE = 0xF0000
_ESCAPED_KEY = "names_escaped"


def _escape(s: str) -> str:
    out: list[str] = []
    for ch in s:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            ch = chr(_PRIVATE + o - 0xDC00)
        elif _PRIVATE <= o <= _PRIVATE + 0xFF:
            out.append(chr(_PRIVATE))
        out.append(ch)
    return "".join(out)


def _unescape(s: str) -> str:
    if not any(_PRIVATE <= ord(ch) <= _PRIVATE + 0xFF for ch in s):
        return s
    out: list[str] = []
    chars = iter(s)
    for ch in chars:
        o = ord(ch)
        if o == _PRIVATE:
            out.append(next(chars, ""))
        elif _PRIVATE < o <= _PRIVATE + 0xFF:
            out.append(chr(o - _PRIVATE + 0xDC00))
        else:
            out.append(ch)
    return "".join(out)


def dumps(obj: Any) -> bytes:
    """orjson; a dict holding a surrogate-escaped file name is escaped losslessly (see above),
    anything else with one gets the printable form."""
    try:
        return orjson.dumps(obj, option=_OPTS)
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
    if isinstance(obj, dict):
        return orjson.dumps({**walk_strings(obj, _escape), _ESCAPED_KEY: True}, option=_OPTS)  # type: ignore[dict-item]
    return orjson.dumps(walk_strings(obj, shown_name), option=_OPTS)


def loads(raw: bytes) -> Any:
    """The reverse of `dumps` (orjson, then the names of an escaped document restored)."""
    data = orjson.loads(raw)
    if isinstance(data, dict) and data.pop(_ESCAPED_KEY, False):
        return walk_strings(data, _unescape)
    return data


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
    checksums: Checksums = field(default_factory=dict)  # index file -> [size, mtime_ns, digest] (storage.checksums)
    vector_space: str | None = None  # the embedder fingerprint (model + graph) the vectors are made in
    vector_device: str | None = None  # the device that made them (cpu or cuda)
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
            "checksums": dict(sorted(self.checksums.items())),
            "vector_space": self.vector_space,
            "vector_device": self.vector_device,
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
        state.checksums = {k: v for k, v in _dict(raw.get("checksums")).items() if valid_checksum(v)}
        state.vector_space = raw.get("vector_space") if isinstance(raw.get("vector_space"), str) else None
        state.vector_device = raw.get("vector_device") if isinstance(raw.get("vector_device"), str) else None
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
                "sources": dict(sorted(self.sources.items())),  # orjson writes a dataclass as asdict would
                "state": self.state.to_json(),
            }
        )


def load_manifest(index_dir: Path) -> Manifest:
    """Missing manifest -> INDEX_NOT_FOUND; unreadable or other version -> INDEX_CORRUPT/INDEX_VERSION."""
    path = manifest_path(index_dir)
    try:
        raw = path.read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        check_folder(index_dir)  # GMTOOL_INDEX_DIR naming a file or a device: say so
        raise IndexError_(
            "INDEX_NOT_FOUND",
            f"no index at {index_dir}",
            "run `gmtool scan DIR` on your rulebook folder first (or pass --library DIR)",
        ) from None
    try:
        data = loads(raw)
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
