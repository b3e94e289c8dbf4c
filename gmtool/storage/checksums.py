"""Checksums of the index files whose damage nothing else would notice: vectors, the keyword
index's matrices and tables, hits files and token caches. (A source's index and page-text files
carry the library file's hash and are parsed whole, so they are checked by loading them.)

The manifest's `IndexState.checksums` maps each file's path, relative to the index dir, to
[size, mtime_ns, digest] as written. `index --verify` and `doctor` hash every file (`damaged(...,
full=True)`); a scan and a query trust a file whose size and mtime are unchanged and hash only the
others, so the check costs a stat per file when nothing was touched.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_BLOCK = 1 << 20

Checksums = dict[str, list[int | str]]


def digest_file(path: Path) -> str | None:
    """blake2b-128 of a file's bytes; None when it cannot be read."""
    h = hashlib.blake2b(digest_size=16)
    try:
        with open(path, "rb") as fh:
            while block := fh.read(_BLOCK):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def record(sums: Checksums, index_dir: Path, *paths: Path) -> None:
    """Files this writer has just written (and nothing else: a damaged file must never be blessed)."""
    for path in paths:
        rel = path.relative_to(index_dir).as_posix()
        digest = digest_file(path)
        try:
            st = os.stat(path)
        except OSError:
            digest = None
        if digest is None:
            sums.pop(rel, None)
        else:
            sums[rel] = [st.st_size, st.st_mtime_ns, digest]


def forget(sums: Checksums, index_dir: Path, *paths: Path) -> None:
    for path in paths:
        sums.pop(path.relative_to(index_dir).as_posix(), None)


def intact(sums: Checksums, index_dir: Path, path: Path, full: bool = False) -> bool:
    """False when `path` has a checksum and no longer matches it (damaged, truncated); True when it
    matches, has none recorded or is gone (a missing file is the business of the checks that need
    it: KEYWORD_STALE, EMBEDDINGS_INCOMPLETE; a hits file or token cache is written again). Without
    `full`, an unchanged stat is trusted."""
    rel = path.relative_to(index_dir).as_posix()
    want = sums.get(rel)
    if want is None:
        return True
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not full and [st.st_size, st.st_mtime_ns] == want[:2]:
        return True
    return digest_file(path) == want[2]


def damaged(sums: Checksums, index_dir: Path, full: bool = False) -> list[Path]:
    """Every recorded file that does not match its checksum."""
    return [index_dir / rel for rel in sorted(sums) if not intact(sums, index_dir, index_dir / rel, full)]


def valid(raw: object) -> bool:
    return (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[0], int) and isinstance(raw[1], int)
            and isinstance(raw[2], str))


def forget_source(sums: Checksums, source_id: str) -> None:
    """The records of one source's files (hits, token cache, vectors), when the source is dropped."""
    for rel in [r for r in sums if r.rsplit("/", 1)[-1].split(".", 1)[0] == source_id]:
        del sums[rel]


def forget_folder(sums: Checksums, folder: str, keep: set[str] | frozenset[str] = frozenset()) -> None:
    """The records of files in `folder` (relative to the index dir) but for the names in `keep`."""
    for rel in [r for r in sums if r.startswith(folder + "/") and r[len(folder) + 1:] not in keep]:
        del sums[rel]
