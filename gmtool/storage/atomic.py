"""The one way gmtool replaces a file: a temp file beside it, fsync, rename, fsync the folder.

A reader sees the old file or the new one, never half of either. A full disk (ENOSPC, EDQUOT)
becomes DISK_FULL with the temp file removed, so the previous version stays in place.
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

_NO_SPACE = {errno.ENOSPC, errno.EDQUOT}


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
        f"no space left on the device that holds {path.parent}",
        "free some disk space, then run `gmtool scan` again; the previous index is still intact",
    )


@contextlib.contextmanager
def no_space_is_disk_full(path: Path) -> Iterator[None]:
    """Turn ENOSPC/EDQUOT from any write below into DISK_FULL (a code the user can act on)."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _NO_SPACE:
            raise disk_full(path) from None
        raise


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


def atomic_write_with(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Replace `path` with what `write` puts into a file object (np.save, np.savez, ...)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path)
    try:
        with no_space_is_disk_full(path):
            with open(tmp, "wb") as fh:
                write(fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    fsync_dir(path.parent)


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` atomically and durably."""

    def put(fh: BinaryIO) -> None:
        view = memoryview(data)
        while view:  # os.write may write less than asked; ENOSPC surfaces here
            n = os.write(fh.fileno(), view)
            view = view[n:]

    atomic_write_with(path, put)
