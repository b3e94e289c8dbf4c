"""The one way gmtool replaces a file: a temp file beside it, fsync, rename, fsync the folder.

A reader sees the old file or the new one, never half of either. A full disk (ENOSPC, EDQUOT)
or a file over the size limit (EFBIG, `ulimit -f`) becomes DISK_FULL with the temp file removed,
so the previous version stays in place.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from gmtool.errors import IndexError_

_NO_SPACE = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def temp_name(path: Path) -> Path:
    """`.DIGEST.PID-THREAD.tmp` beside `path`: unique per writer, recognisably ours, and of a fixed
    length whatever the name, so a name near the file system's 255-byte limit still has a temp file
    (the digest is of the name: one writer's temp file of one name is always the same)."""
    digest = hashlib.blake2b(os.fsencode(path.name), digest_size=8).hexdigest()
    return path.with_name(f".{digest}.{os.getpid()}-{threading.get_ident()}.tmp")


def is_temp_name(name: str) -> bool:
    """Temp files of atomic writes: `.DIGEST.PID-THREAD.tmp` (older runs: `.NAME.PID-THREAD.tmp`,
    `.NAME.PID.tmp`, `.NAME.XXXX.tmp`)."""
    return name.startswith(".") and name.endswith(".tmp") and name.count(".") >= 3


def disk_full(path: Path) -> IndexError_:
    return IndexError_(
        "DISK_FULL",
        f"no space left on the device that holds {path.parent} (or a file there reached the size limit)",
        "free some disk space, then run `gmtool scan` again; the previous index is still intact",
    )


@contextlib.contextmanager
def _errno_is(errnos: set[int], error: Callable[[], IndexError_]) -> Iterator[None]:
    """Turn an OSError with one of `errnos` from anything below into `error()`, a code the user can act on."""
    try:
        yield
    except OSError as exc:
        if exc.errno in errnos:
            raise error() from None
        raise


def no_space_is_disk_full(path: Path) -> contextlib.AbstractContextManager[None]:
    """ENOSPC/EDQUOT/EFBIG from any write below is DISK_FULL."""
    return _errno_is(_NO_SPACE, lambda: disk_full(path))


_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def read_only(folder: Path) -> IndexError_:
    return IndexError_(
        "INDEX_READ_ONLY",
        f"gmtool cannot write its index in {folder} (a read-only disk, or no write permission)",
        "set GMTOOL_INDEX_DIR to a writable folder (e.g. GMTOOL_INDEX_DIR=~/.cache/gmtool/index) and scan again",
    )


def read_only_is_coded(path: Path) -> contextlib.AbstractContextManager[None]:
    """EROFS/EACCES/EPERM from creating or writing below `path` is INDEX_READ_ONLY."""
    return _errno_is(_READ_ONLY, lambda: read_only(path if path.is_dir() else path.parent))


def fsync_dir(folder: Path) -> None:
    """Make a rename durable where the platform allows it (best effort)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _DirectWrites:
    """A file object whose writes go straight to the descriptor, whole, so a full disk raises
    ENOSPC or EFBIG: numpy's own writer reports a short write as an OSError without an errno.
    Everything else (tell, seek: zipfile uses them) is the file's own."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        self._fd = fh.fileno()

    def write(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data).cast("B")
        size = len(view)
        while view:  # os.write may write less than asked; ENOSPC surfaces here
            n = os.write(self._fd, view)
            view = view[n:]
        return size

    def __getattr__(self, name: str) -> object:
        return getattr(self._fh, name)


def sync_files(folder: Path) -> None:
    """Make every write so far on the file system that holds `folder` durable, in one call (Linux
    syncfs; elsewhere sync). A writer that skips per-file fsyncs calls this before the manifest
    that names its files is written: one flush per batch of books instead of several per book."""
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            if ctypes.CDLL(None, use_errno=True).syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    os.sync()


def atomic_write_with(path: Path, write: Callable[[BinaryIO], None], durable: bool = True) -> None:
    """Replace `path` with what `write` puts into a file object (np.save, np.savez, ...).
    `durable=False` leaves the fsyncs to a later `sync_files` (the rename is still atomic)."""
    with read_only_is_coded(path):
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        with no_space_is_disk_full(path), read_only_is_coded(path):
            with open(tmp, "wb", buffering=0) as fh:
                write(_DirectWrites(fh))  # type: ignore[arg-type]
                fh.flush()
                if durable:
                    os.fsync(fh.fileno())
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    if durable:
        fsync_dir(path.parent)


def atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    """Replace `path` with `data` atomically (and durably, unless a later `sync_files` will)."""
    atomic_write_with(path, lambda fh: fh.write(data), durable)  # type: ignore[arg-type, return-value]
