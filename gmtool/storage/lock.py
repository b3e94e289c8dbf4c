"""One writer at a time: a `filelock` lock on INDEX_DIR/lock, which holds the writer's pid.

Readers never lock: they rely on atomic renames. The kernel drops the lock when every
descriptor of it is closed, so a dead writer leaves no lock behind, only its pid in the file
(a *stale* lock, reported by `doctor` and `index --verify` and taken over with a warning).
A lock still held although the pid in it is dead is held by orphans of that writer (worker
processes that inherited the descriptor); it is broken by moving the lock file aside, since
the kernel keeps the orphans' lock on the old file.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.errors import IndexError_
from gmtool.storage.atomic import read_only_is_coded
from gmtool.storage.layout import claim, lock_path

_POLL_S = 0.1
_STALE_RECHECK_S = 0.3  # a dead pid must stay in the file this long before the lock is broken
WAIT_NOTICE_S = 10.0  # a waiting writer says so at once, then again this often

# (pid of the writer holding the lock or None, when it took it (epoch s) or None, seconds waited)
WaitNotice = Callable[[int | None, float | None, float], None]


@dataclass(slots=True)
class HeldLock:
    """The writer lock while held: its descriptor (worker processes close their inherited copy)
    and what taking it found (a warning when a dead writer's lock was taken over)."""

    path: Path
    fd: int = -1
    warnings: list[str] = field(default_factory=list)


def recorded_pid(index_dir: Path) -> int | None:
    """The pid written in the lock file: the writer holding it, or one that died holding it."""
    try:
        pid = int(lock_path(index_dir).read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    return pid if pid > 0 else None


def pid_alive(pid: int) -> bool:
    """Whether `pid` still runs. A zombie (killed, not yet reaped by its parent) counts as dead: it
    runs nothing and holds no lock, and a parent that never reaps it (an MCP host, a test runner)
    must not keep a killed scan's workers or lock alive for ever."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: it exists
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:  # no /proc (macOS, Windows), or it has just gone
        return False
    return stat.rsplit(b") ", 1)[-1][:1] in (b"Z", b"X")


def active_writer(index_dir: Path) -> int | None:
    """The pid of a live process holding the writer lock, read without taking it."""
    pid = recorded_pid(index_dir)
    return pid if pid is not None and pid_alive(pid) else None


def stale_lock(index_dir: Path) -> int | None:
    """The dead pid a killed writer left in the lock file, or None."""
    pid = recorded_pid(index_dir)
    return pid if pid is not None and not pid_alive(pid) else None


def writer_since(index_dir: Path) -> float | None:
    """When the writer now named in the lock file took the lock (the file's mtime: it writes its pid then)."""
    try:
        return lock_path(index_dir).stat().st_mtime
    except OSError:
        return None


def stale_lock_message(pid: int) -> str:
    return f"the writer lock names pid {pid}, which is no longer running (a killed scan)"


def _orphaned(index_dir: Path) -> int | None:
    """The lock is busy, but the pid in it is dead, and stays so: the holder is an orphan."""
    pid = stale_lock(index_dir)
    if pid is None:
        return None
    time.sleep(_STALE_RECHECK_S)  # a new holder writes its pid right after taking the lock
    return pid if recorded_pid(index_dir) == pid and not pid_alive(pid) else None


def _break(path: Path) -> None:
    """Move the orphans' lock file out of the way; a new one is created on the next try."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _pid_in(raw: bytes) -> int | None:
    try:
        pid = int(raw.decode().strip() or 0)
    except (UnicodeDecodeError, ValueError):
        return None
    return pid if pid > 0 else None


def _locked(index_dir: Path) -> IndexError_:
    return IndexError_(
        "INDEX_LOCKED",
        f"another gmtool process is writing the index in {index_dir}",
        "wait for it to finish, or run without --no-wait to queue behind it",
    )


@contextlib.contextmanager
def writer_lock(index_dir: Path, wait: bool = True, timeout: float = 600.0,
                on_wait: WaitNotice | None = None) -> Iterator[HeldLock]:
    """Take the writer lock (after `claim`ing the folder); INDEX_LOCKED when busy and not waiting.
    While it waits, `on_wait` hears who holds the lock at once and every WAIT_NOTICE_S after."""
    from filelock import FileLock, Timeout

    claim(index_dir)
    path = lock_path(index_dir)
    held = HeldLock(path)
    before: list[bytes] = []

    def record_pid(fd: int) -> None:
        held.fd = fd
        before.append(os.pread(fd, 32, 0))  # a pid here: its writer died holding the lock
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)

    start = time.monotonic()
    deadline = start + timeout
    told = -WAIT_NOTICE_S
    while True:
        lock = FileLock(str(path), preserve_lock_file=True, on_acquired=record_pid)
        try:
            with read_only_is_coded(index_dir):
                lock.acquire(timeout=_POLL_S if wait else 0, poll_interval=_POLL_S)
            break
        except Timeout:
            orphan = _orphaned(index_dir)
            if orphan is not None:
                _break(path)
                held.warnings.append(f"STALE_LOCK: took over the writer lock from pid {orphan}, "
                                     "which died while its workers still held it")
                continue
            now = time.monotonic()
            if not wait or now > deadline:
                raise _locked(index_dir) from None
            if on_wait is not None and now - start - told >= WAIT_NOTICE_S:
                told = now - start
                on_wait(active_writer(index_dir), writer_since(index_dir), told)
    dead = _pid_in(before[-1] if before else b"")
    if dead is not None and not pid_alive(dead) and not held.warnings:
        held.warnings.append(f"STALE_LOCK: took over the writer lock from pid {dead}, which died while writing")
    try:
        yield held
    finally:
        with contextlib.suppress(OSError):
            os.ftruncate(held.fd, 0)  # an empty lock file: no writer; a pid left behind: a killed one
        lock.release()
