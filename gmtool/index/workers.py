"""Extraction, in the parent or in a pool of worker processes.

Workers must never outlive the scan that started them: an orphaned worker would keep the
writer lock (a forked child inherits its descriptor) and block every later scan. Each worker
therefore closes its copy of the lock descriptor and asks the kernel to kill it when its
parent dies (Linux PR_SET_PDEATHSIG; elsewhere a parent-watch thread does the same).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from gmtool.errors import GmtoolError
from gmtool.storage.lock import pid_alive
from gmtool.types import Document, Failure

if TYPE_CHECKING:
    from gmtool.index.extract.mdbook import BookPlan
    from gmtool.index.extract.pdf import PdfHead
    from gmtool.rank.bm25 import Tokenized

Extracted = tuple[str, "Document | Failure", "dict[str, Tokenized] | None"]

_PR_SET_PDEATHSIG = 1
_PARENT_WATCH_S = 1.0
# Below about this much work (in PDF pages; ~0.5 s in one process) starting worker processes costs
# more than they save: each takes 0.1-0.3 s to start, more from a fork server. Measured: 13 ms a
# PDF page, 0.4 s a MB of Markdown, so 32 kB of text counts as a page.
POOL_MIN_PAGES = 40
_TEXT_BYTES_PER_PAGE = 32_000


def _die_with_parent(scan: int) -> None:
    """Be killed when the scan process dies. A worker's parent is the scan process itself or the
    fork server (gmtool.index.pool), which exits when the scan process does. The kernel kills the
    worker when that parent dies (Linux PR_SET_PDEATHSIG); elsewhere a thread watches."""
    parent = os.getppid()
    armed = False
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent or not pid_alive(scan):  # it died before the signal was armed
        os._exit(1)
    if not armed:
        def watch() -> None:
            while os.getppid() == parent and pid_alive(scan):
                time.sleep(_PARENT_WATCH_S)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="gmtool-parent-watch").start()


def worker_init(parent: int, inherited: tuple[tuple[int, int, int], ...]) -> None:
    """Pool initializer. Closing the inherited lock descriptor does not unlock the parent
    (an flock lives until its last descriptor closes, and the parent keeps its own). Each is
    (fd, st_dev, st_ino): a child that was not forked (spawn, forkserver) may have another
    file at that number, which must stay open."""
    _die_with_parent(parent)
    for fd, dev, ino in inherited:
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) == (dev, ino):
                os.close(fd)


def _identify(fds: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    out = []
    for fd in fds:
        with contextlib.suppress(OSError):
            st = os.fstat(fd)
            out.append((fd, st.st_dev, st.st_ino))
    return tuple(out)


def _process(doc: Document) -> Document:
    """Classification and typed fields: the same for every format (after the cap on entries)."""
    from gmtool.index.classify import classify
    from gmtool.index.extract.sections import cap_entries
    from gmtool.index.fields import set_fields

    doc.entries = cap_entries(doc.entries, doc.warnings)
    classify(doc)
    set_fields(doc)
    return doc


def _failure(path: Path, exc: Exception) -> Failure:
    detail = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    return Failure(path.name, "EXTRACT_FAILED", detail, "the file may be damaged; re-export it")


def _guarded(path: Path, work: Callable[[], Document], debug: bool = False) -> Document | Failure:
    """Never raises, so one bad file cannot stop the run (or a worker pool)."""
    try:
        return _process(work())
    except GmtoolError as exc:
        return Failure(path.name, exc.code, exc.message, exc.hint)
    except MemoryError:
        return Failure(path.name, "EXTRACT_FAILED", "out of memory while reading", "")
    except Exception as exc:  # noqa: BLE001 - a third-party parser failing on a hostile file
        if debug:
            traceback.print_exc()
        return _failure(path, exc)


def _with_tokens(path_str: str, result: Document | Failure) -> Extracted:
    """Tokenize for the keyword index where the extraction ran (a worker), not in the parent."""
    from gmtool.rank.keyword import tokenize_entries

    return path_str, result, tokenize_entries(result.entries) if isinstance(result, Document) else None


def _extract_job(path_str: str, workers: int, debug: bool = False) -> Extracted:
    """A whole file, extracted and classified (in the parent or in a worker process)."""
    from gmtool.index.extract import extract

    path = Path(path_str)
    return _with_tokens(path_str, _guarded(path, lambda: extract(path, workers=workers), debug))


def _book_job(path_str: str, plan: BookPlan, debug: bool = False) -> Extracted:
    """A folder book: its changed chapters read, all of them joined and classified as one Document."""
    from gmtool.index.extract.mdbook import read_book

    return _with_tokens(path_str, _guarded(Path(path_str), lambda: read_book(plan), debug))


def _assemble_job(path_str: str, head: PdfHead, pages: list[Any], debug: bool = False) -> Extracted:
    from gmtool.index.extract.pdf import assemble

    path = Path(path_str)
    return _with_tokens(path_str, _guarded(path, lambda: assemble(path, head, pages), debug))


def _guarded_head(path: Path, read: Callable[[Path], PdfHead]) -> PdfHead | Failure:
    try:
        return read(path)
    except GmtoolError as exc:
        return Failure(path.name, exc.code, exc.message, exc.hint)
    except Exception as exc:  # noqa: BLE001 - pdfium refusing a hostile file
        return Failure(path.name, "EXTRACT_FAILED", f"{type(exc).__name__}: {exc}"[:200], "the file may be damaged")


def worth_a_pool(todo: list[Path]) -> bool:
    """Whether `todo` holds at least POOL_MIN_PAGES of work; stops counting once it does."""
    from gmtool.index.extract.pdf import page_count

    work = 0.0
    for p in todo:
        try:
            if p.is_dir():  # a folder book: its Markdown
                work += sum(f.stat().st_size for f in p.rglob("*.md")) / _TEXT_BYTES_PER_PAGE
            else:
                work += page_count(p) if p.suffix.lower() == ".pdf" else p.stat().st_size / _TEXT_BYTES_PER_PAGE
        except Exception:  # noqa: BLE001 - an unreadable file fails (alone) when it is extracted
            continue
        if work >= POOL_MIN_PAGES:
            return True
    return False


def iter_extracted(todo: list[Path], workers: int, inherited_fds: tuple[int, ...] = (),
                   debug: bool = False, books: dict[str, BookPlan] | None = None) -> Iterator[Extracted]:
    """Results in `todo` order. With workers > 1 one process pool serves the whole run: a big PDF's
    page ranges and whole small files are all queued at once, so workers never wait for the parent,
    which merges and classifies one book while the workers read the next. `inherited_fds` are
    descriptors the workers must not keep (the writer lock); `books` plans the folder books in `todo`."""
    books = books or {}
    if workers <= 1:
        for p in todo:
            plan = books.get(str(p))
            yield _book_job(str(p), plan, debug) if plan is not None else _extract_job(str(p), 1, debug)
        return
    from gmtool.index.pool import process_pool

    with process_pool(workers, worker_init, (os.getpid(), _identify(inherited_fds))) as pool:
        for item in _submit_all(pool, todo, workers, debug, books):
            yield item if isinstance(item, tuple) else cast("Extracted", item.result())


def _submit_all(pool: Any, todo: list[Path], workers: int, debug: bool, books: dict[str, BookPlan]) -> list[Any]:
    """Queue every file (a big PDF as page ranges); merging a big PDF runs in the pool too."""
    from concurrent.futures import Future

    from gmtool.index.extract.pdf import page_ranges, read_head
    from gmtool.index.extract.pdf_layout import extract_page_range

    plan: list[tuple[Path, PdfHead | None, list[Future[Any]], Failure | None]] = []
    for p in todo:
        if str(p) in books:
            plan.append((p, None, [pool.submit(_book_job, str(p), books[str(p)], debug)], None))
            continue
        if p.suffix.lower() == ".pdf":
            head_or_fail = _guarded_head(p, read_head)
            if isinstance(head_or_fail, Failure):
                plan.append((p, None, [], head_or_fail))
                continue
            ranges = page_ranges(head_or_fail.pages, workers)
            if len(ranges) > 1:
                futs = [pool.submit(extract_page_range, str(p), a, b, head_or_fail.skip) for a, b in ranges]
                plan.append((p, head_or_fail, futs, None))
                continue
        plan.append((p, None, [pool.submit(_extract_job, str(p), 1, debug)], None))
    finals: list[Future[Any] | Extracted] = []
    for p, head, futs, fail in plan:
        if fail is not None:
            finals.append((str(p), fail, None))
        elif head is None:
            finals.append(futs[0])
        else:
            try:
                pages = [page for f in futs for page in f.result()]
            except Exception as exc:  # noqa: BLE001 - a worker failing on a hostile page
                finals.append((str(p), Failure(p.name, "EXTRACT_FAILED", f"{type(exc).__name__}: {exc}"[:200],
                                               "the file may be damaged; re-export it"), None))
                continue
            finals.append(pool.submit(_assemble_job, str(p), head, pages, debug))
    return finals
