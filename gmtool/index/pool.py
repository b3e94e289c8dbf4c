"""The process pool that extraction runs in, started safely.

Forking a process that has threads copies its locks in whatever state those threads left them:
a worker forked while another thread held the import lock, a stream lock or a library mutex
waits on it forever, and the scan hangs (seen under pytest-xdist, whose workers run an I/O
thread; a progress bar's refresh thread or an ONNX thread pool can do the same). A process with
one thread is forked, which is the cheapest start; otherwise workers come from a fork server, a
single-threaded process started for the pool. Where there is no fork server (Windows, and macOS
by default) the platform's default start method (spawn) is kept.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def _thread_count() -> int:
    """Native threads too (an ONNX or pdfium pool), where the OS lists them."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _context() -> Any:
    default = multiprocessing.get_start_method(allow_none=True) or multiprocessing.get_context().get_start_method()
    if default != "fork":
        return multiprocessing.get_context(default)
    if _thread_count() > 1 and "forkserver" in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("forkserver")
    return multiprocessing.get_context("fork")


def process_pool(workers: int, initializer: Callable[..., object] | None = None,
                 initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A pool of `workers` processes that never inherit a lock held by another thread."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=_context(), initializer=initializer,
                               initargs=initargs)
