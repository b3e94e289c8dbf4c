"""Which paths gmtool opens, and how it reads them without hanging or running out of memory.

Symlink policy, the same for `gmtool scan` and `gmtool index FILE`:

- A symlink the user placed inside the library is followed, to a file or a folder, wherever
  it points: linking a book or a folder into the library is how a user adds it. The book keeps
  the path of the link (library-relative), not of its target.
- A path never leaves the library through `..`: `index LIB/../other.pdf` is OUTSIDE_LIBRARY,
  judged on the path as written (before links are resolved), so a link inside the library is
  accepted by `index FILE` exactly when `scan` would find it.
- A symlinked folder that leads back to one of its own parents is reported once as
  SYMLINK_LOOP and not entered; a folder reached twice by different links is read once.
- A link that cannot be resolved is reported: SYMLINK_LOOP for a cycle of links,
  DANGLING_LINK for a link whose target does not exist.
- Only regular files are read. FIFOs, devices and sockets (also behind a link, such as a
  `book.pdf` pointing at /dev/zero) are reported as NOT_A_FILE without being opened for
  reading, so a scan never blocks on them.

Reading and hashing are bounded: a file larger than its format's limit is FILE_TOO_LARGE,
and a read that is still going after READ_TIMEOUT_S seconds (a stalled network mount) is
READ_TIMEOUT. Both are per-file failures; the scan carries on.
"""

from __future__ import annotations

import errno
import hashlib
import os
import select
import stat
import time
from collections.abc import Iterator
from pathlib import Path

from gmtool.errors import ExtractError, GmtoolError
from gmtool.types import SUPPORTED_SUFFIXES, Failure

# Generous for any real rulebook; the point is that /dev/zero-like input cannot run forever.
MAX_PDF_BYTES = 2 << 30
# Markdown and text are decoded whole; 64 MiB is ~20x the largest SRD and keeps a scan's
# memory within a few hundred MB.
MAX_TEXT_BYTES = 64 << 20
# A whole-file read or hash that takes longer than this is a stalled device, not a slow disk.
READ_TIMEOUT_S = 300.0
# A read of a regular file never waits for data; one that would (a kernel file such as /proc/kmsg
# behind a `book.md` link) gets this long for data to come, then the file is NOT_A_FILE.
BLOCKED_READ_S = 2.0
_BLOCK = 1 << 20


def max_bytes(path: Path) -> int:
    return MAX_PDF_BYTES if path.suffix.lower() == ".pdf" else MAX_TEXT_BYTES


def _lexical(path: Path) -> Path:
    """Absolute, with `.` and `..` folded as written: links are not resolved."""
    return Path(os.path.abspath(path))


def link_problem(path: Path, name: str | None = None) -> Failure | None:
    """Why `path` cannot be read as a regular file (None when it can). Never opens the file."""
    shown = name or str(path)
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return Failure(shown, "SYMLINK_LOOP", "the symbolic link leads back to itself",
                           "point the link at a real file or remove it")
        if exc.errno == errno.ENOENT:
            if os.path.lexists(path):
                return Failure(shown, "DANGLING_LINK", f"the link's target {os.readlink(path)} does not exist",
                               "point the link at an existing file or remove it")
            return Failure(shown, "INVALID_PATH", "no such file", "check the path")
        return Failure(shown, "UNREADABLE", exc.strerror or str(exc), "check the file's permissions")
    if not stat.S_ISREG(st.st_mode):
        kind = _kind(st.st_mode)
        return Failure(shown, "NOT_A_FILE", f"{kind}, not a regular file; gmtool reads only regular files",
                       "copy the book into the library as an ordinary file")
    return None


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def resolve_target(given: Path, library: Path, cwd: Path | None = None) -> Path | Failure:
    """The library path of a file named on the command line (`index FILE`), under the policy
    in this module's docstring: the same files, by the same library-relative paths, that a scan
    would find. `library` may be the resolved or the written form of the library folder."""
    cwd = cwd or Path.cwd()
    lib_forms = [_lexical(library)]
    real_lib = Path(os.path.realpath(library))
    if real_lib not in lib_forms:
        lib_forms.append(real_lib)
    candidates = [_lexical(given if given.is_absolute() else cwd / given)]
    if not given.is_absolute():
        candidates.append(_lexical(library / given))  # a path relative to the library
    chosen: Path | None = None
    for cand in candidates:
        for form in lib_forms:
            if cand.is_relative_to(form):
                inside = library / cand.relative_to(form)
                if chosen is None or os.path.lexists(inside):
                    chosen = inside
                break
        if chosen is not None and os.path.lexists(chosen):
            break
    if chosen is None:
        return Failure(str(given), "OUTSIDE_LIBRARY", f"{candidates[0]} is not inside the library {library}",
                       "move or link it into the library, or pass --library")
    chosen = _without_loops(chosen, library)
    problem = link_problem(chosen, str(given))
    if problem is not None:
        return problem
    if chosen.suffix.lower() not in SUPPORTED_SUFFIXES:
        return Failure(str(given), "UNSUPPORTED_FORMAT", f"'{chosen.suffix}' is not supported",
                       f"gmtool reads {', '.join(SUPPORTED_SUFFIXES)}")
    return chosen


def _without_loops(path: Path, library: Path) -> Path:
    """`path` with every trip around a symlink loop cut out: `sub/loop/sub/book.md`, where
    `sub/loop` links back to the library, is `sub/book.md`, the one path a scan finds it by
    (a walk enters each folder once, by device and inode)."""
    try:
        parts = path.relative_to(library).parts
    except ValueError:
        return path
    seen: list[tuple[tuple[int, int], Path]] = []
    here = library
    for i, part in enumerate(parts):
        try:
            st = os.stat(here)
        except OSError:
            return path
        key = (st.st_dev, st.st_ino)
        back = next((k for k, (known, _) in enumerate(seen) if known == key), None)
        if back is not None:  # this folder was passed already: drop the round trip
            here = seen[back][1]
            del seen[back + 1:]
        else:
            seen.append((key, here))
        here = here / part
        if i == len(parts) - 1:
            return here
    return path


def open_regular(path: Path) -> int:
    """A read-only, non-blocking descriptor for a regular file, or NOT_A_FILE. O_NONBLOCK makes
    opening a FIFO return at once instead of waiting for a writer, and a read of a file that only
    looks regular (a kernel file) return at once instead of waiting for data (see `_read`); the
    mode is checked on the open descriptor, so a file swapped for a FIFO after discovery is still
    refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        problem = link_problem(path, path.name)
        if isinstance(exc, FileNotFoundError) and (problem is None or problem.code == "INVALID_PATH"):
            raise  # gone: the caller tells a vanished file from a broken one
        if problem is not None and problem.code != "UNREADABLE":
            raise ExtractError(problem.code, f"{path.name}: {problem.message}", problem.hint) from exc
        raise ExtractError("READ_FAILED", f"cannot read {path.name}: {exc.strerror or exc}",
                           "check that the file exists and is readable") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise ExtractError("NOT_A_FILE", f"{path.name}: {_kind(st.st_mode)}, not a regular file",
                           "copy the book into the library as an ordinary file")
    return fd


def read_guarded(fd: int, name: str, size: int = _BLOCK, wait_s: float = BLOCKED_READ_S) -> bytes:
    """One read from a non-blocking descriptor. A plain file always has data (or its end) at once;
    one that makes the read wait gets `wait_s` for data, then is NOT_A_FILE."""
    try:
        return os.read(fd, size)
    except BlockingIOError:
        pass
    ready, _, _ = select.select([fd], [], [], wait_s)
    if not ready:
        raise ExtractError("NOT_A_FILE", f"{name}: reading it waits for data that does not come "
                           "(a kernel or device file behind a link?), not a regular file",
                           "copy the book into the library as an ordinary file")
    return os.read(fd, size)


def _check_size(path: Path, size: int, limit: int) -> None:
    if size > limit:
        raise ExtractError("FILE_TOO_LARGE", f"{path.name} is {size / 2**20:.0f} MiB; the limit for "
                           f"{path.suffix or 'this format'} is {limit / 2**20:.0f} MiB",
                           "split the file into smaller books")


def read_blocks(path: Path, limit: int | None = None, timeout_s: float = READ_TIMEOUT_S) -> Iterator[bytes]:
    """Yield a regular file's bytes in blocks, within a size and a time limit."""
    limit = max_bytes(path) if limit is None else limit
    fd = open_regular(path)
    try:
        _check_size(path, os.fstat(fd).st_size, limit)
        deadline = time.monotonic() + timeout_s
        total = 0
        while block := read_guarded(fd, path.name):
            total += len(block)
            _check_size(path, total, limit)  # a file that grows while it is read
            if time.monotonic() > deadline:
                raise ExtractError("READ_TIMEOUT", f"reading {path.name} took over {timeout_s:.0f} s",
                                   "copy the file to a local disk and scan again")
            yield block
    finally:
        os.close(fd)


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    return b"".join(read_blocks(path, limit))


def hash_file(path: Path) -> str:
    """sha256 of a regular file, bounded like every read (raises ExtractError, an OSError never)."""
    h = hashlib.sha256()
    try:
        for block in read_blocks(path):
            h.update(block)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ExtractError("UNREADABLE", f"cannot read {path.name}: {exc.strerror or exc}",
                           "check the file's permissions") from exc
    return h.hexdigest()


def failure_of(path: Path, exc: GmtoolError) -> Failure:
    return Failure(path.name, exc.code, exc.message, exc.hint)


_BOMS: tuple[tuple[bytes, str | None], ...] = (
    (b"\x00\x00\xfe\xff", None),  # UTF-32: checked before UTF-16, whose BOM it starts with
    (b"\xff\xfe\x00\x00", None),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


_MAX_BAD_BYTES_PER = 1000  # undecodable bytes tolerated: one per this many


def _not_text(path: Path, why: str) -> ExtractError:
    return ExtractError(
        "UNSUPPORTED_FORMAT",
        f"{path.name} {why}, not {path.suffix or 'text'}",
        hint="Markdown and text files must be UTF-8 (or UTF-16 with a byte-order mark); "
        "save the file in one of those, or convert it.",
    )


def decode_text(raw: bytes, path: Path) -> str:
    """UTF-8 (with or without a BOM) or UTF-16 with a BOM; anything else is UNSUPPORTED_FORMAT
    (a rare undecodable byte is replaced, see below).
    Line ends become `\\n`. Copies are avoided where the text has nothing to change, since a
    big file's text is held once for its whole extraction."""
    encoding: str | None = "utf-8"
    bom = b""
    for mark, enc in _BOMS:
        if raw.startswith(mark):
            encoding, bom = enc, mark
            break
    if encoding is None:
        raise _not_text(path, "is UTF-32 text")
    if not bom and b"\x00" in raw[:65536]:
        raise _not_text(path, "looks like a binary file")
    body = raw[len(bom):] if bom else raw
    try:
        text = str(body, encoding)
    except UnicodeDecodeError as exc:
        # A stray byte in an otherwise UTF-8 file (a pasted Windows quote) is replaced; a file
        # where they are common is in another encoding and is refused.
        text = str(body, encoding, errors="replace")
        if text.count("\ufffd") > max(1, len(body) // _MAX_BAD_BYTES_PER):
            name = encoding.upper().replace("-LE", "").replace("-BE", "")
            raise _not_text(path, f"is not valid {name} text (byte {exc.start + len(bom)})") from exc
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_text(path: Path) -> str:
    """A Markdown or text file's text, read within the size and time guards."""
    try:
        raw = read_bytes(path)
    except FileNotFoundError as exc:
        raise ExtractError("READ_FAILED", f"cannot read {path.name}: {exc.strerror or exc}",
                           "check that the file exists and is readable") from exc
    return decode_text(raw, path)
