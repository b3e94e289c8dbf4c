"""The process pool that extraction runs in, started safely.

Forking a process that has threads copies its locks in whatever state those threads left them:
a worker forked while another thread held the import lock, a stream lock or a library mutex
waits on it forever, and the scan hangs (seen under pytest-xdist, whose workers run an I/O
thread; a progress bar's refresh thread or the embedder's thread pool can do the same). Workers
are therefore started by a fork server, a single-threaded process started once per scan that
has already imported the extraction code, so starting a worker stays cheap. Where there is no
fork server (Windows), the platform's default (spawn) is used. Python 3.14 makes the same choice.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

# Imported once in the fork server, so that every worker starts with them loaded.
_PRELOAD = ["gmtool.index.workers", "gmtool.index.extract", "gmtool.index.extract.pdf_layout",
            "gmtool.index.classify", "gmtool.index.fields", "gmtool.rank.keyword"]


def _context() -> Any:
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(_PRELOAD)
        return ctx
    return multiprocessing.get_context()


def process_pool(workers: int, initializer: Callable[..., object] | None = None,
                 initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A pool of `workers` processes that never inherit a lock held by another thread."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=initializer,
                               initargs=initargs)
