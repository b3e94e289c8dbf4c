"""Per-source hits file: INDEX_DIR/index/SID.hits.jsonl, the source's entries, each readable alone.

A search shows twenty hits, but the full index file (`sources`) must be parsed whole and turned
into thousands of `Entry` objects before one of them can be read: most of a search's time. This
file holds the same entries one JSON object a line, after a header line with the byte offset of
each line, the entries' parents and the page labels, so a reader materialises only the entries
a result needs (and the titles on their section paths).

It is an accelerator, never the truth: the full index file stays what `toc`, `show`, `verify`
and the writers read. The header records the hash of the source (as the manifest does) and the
size and mtime of the full index file it was written beside. A reader that finds the hits file
missing or damaged, or either of those changed, reads the full index file instead (and so
notices when that one is damaged). An index written before this file existed, or a run killed
between writing it and the manifest, only makes searches slower, never wrong.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from pathlib import Path

import orjson

from gmtool.storage.atomic import atomic_write
from gmtool.storage.layout import hits_file, source_file
from gmtool.types import Entry

HITS_VERSION = 1
# A source with fewer entries has no hits file: its full index file is small enough to read whole,
# and a library of 100,000 one-line notes saves 100,000 files (a third of a first scan's writes).
HITS_MIN_ENTRIES = 32


def _index_stat(index_dir: Path, source_id: str) -> list[int]:
    """Size and mtime of the full index file: when it changes, this hits file no longer speaks for it."""
    st = source_file(index_dir, source_id).stat()
    return [st.st_size, st.st_mtime_ns]


def encode(sha256: str, index_stat: list[int], entries: list[Entry], page_labels: list[str] | None) -> bytes:
    # orjson writes a dataclass as the dict `asdict` would give, field for field, without asdict's deep copy.
    lines = [orjson.dumps(e) for e in entries]
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    header = {
        "hits_version": HITS_VERSION,
        "sha256": sha256,
        "index_stat": index_stat,
        "count": len(entries),
        "offsets": offsets,
        "parents": [e.parent for e in entries],
        "page_labels": page_labels,
    }
    return b"\n".join([orjson.dumps(header), *lines]) + b"\n"


def save_hits(index_dir: Path, source_id: str, sha256: str, entries: list[Entry], page_labels: list[str] | None,
              durable: bool = True) -> None:
    """Written after the full index file, whose size and mtime it records."""
    data = encode(sha256, _index_stat(index_dir, source_id), entries, page_labels)
    atomic_write(hits_file(index_dir, source_id), data, durable)


class HitsFile:
    """One source's entries, each parsed on first use. `entry` raises ValueError/TypeError/KeyError
    on a damaged line; the reader then falls back to the full index file.

    The file is memory-mapped: only the pages of the entries read are touched, and the mapping
    keeps the version that was checked even when a writer replaces the file meanwhile. Writers
    never change a file in place, but something else might truncate it, and reading a mapped
    page past the end kills the process (SIGBUS): each read first checks the file is whole.
    """

    __slots__ = ("_base", "_data", "_entries", "_offsets", "_path", "_stat", "count", "page_labels", "parents")

    def __init__(self, data: mmap.mmap | bytes, base: int, header: dict, path: Path, stat: os.stat_result) -> None:
        self._data = data
        self._base = base
        self._path = path
        self._stat = stat
        self._offsets: list[int] = header["offsets"]
        self.count: int = header["count"]
        self.parents: list[int | None] = header["parents"]
        self.page_labels: list[str] | None = header.get("page_labels")
        self._entries: dict[int, Entry] = {}

    def entry(self, i: int) -> Entry:
        e = self._entries.get(i)
        if e is None:
            if isinstance(self._data, mmap.mmap):
                now = os.stat(self._path)
                if (now.st_ino, now.st_dev) == (self._stat.st_ino, self._stat.st_dev) and now.st_size < len(self._data):
                    raise ValueError("the hits file was truncated in place")
            start, end = self._base + self._offsets[i], self._base + self._offsets[i + 1] - 1
            e = self._entries[i] = Entry(**orjson.loads(self._data[start:end]))
        return e


def _map(path: Path) -> tuple[mmap.mmap | bytes, os.stat_result]:
    """Mapped where a mapped file can still be replaced (POSIX); Windows would refuse the writer's
    rename while a reader (a long-running `serve`) holds the mapping, so there it is read whole."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if os.name == "nt":
            return f.read(), st
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), st


def load_hits(index_dir: Path, source_id: str, sha256: str, count: int) -> HitsFile | None:
    """The hits file when it belongs to this version of the source, speaks for the full index
    file as it is now and holds `count` entries, else None (read the full index file)."""
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        path = hits_file(index_dir, source_id)
        data, st = _map(path)
        nl = data.find(b"\n")
        header = orjson.loads(data[:nl]) if nl > 0 else None
        if (
            isinstance(header, dict)
            and header.get("hits_version") == HITS_VERSION
            and header.get("sha256") == sha256
            and header.get("index_stat") == _index_stat(index_dir, source_id)
            and header.get("count") == count
            and len(header["offsets"]) == count + 1
            and len(header["parents"]) == count
            and nl + 1 + header["offsets"][-1] == len(data)
        ):
            return HitsFile(data, nl + 1, header, path, st)
    return None
