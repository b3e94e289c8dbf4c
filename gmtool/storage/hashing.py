"""The one content hash of a library file (sha256), and the stat fields that say a file is unchanged."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

_BLOCK = 1 << 20


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What a stat says about a file's identity. Size and mtime alone miss a file replaced by
    another of the same size and mtime (a copy with `cp -p`, a restore, `touch -r`); the inode
    and ctime change then, and ctime cannot be set back by the user."""

    size: int
    mtime_ns: int
    ino: int
    ctime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileStamp:
        return cls(st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)

    def to_list(self) -> list[int]:
        return [self.size, self.mtime_ns, self.ino, self.ctime_ns]

    @classmethod
    def from_list(cls, raw: object) -> FileStamp | None:
        if isinstance(raw, list) and len(raw) == 4 and all(isinstance(v, int) for v in raw):
            return cls(*raw)
        return None
