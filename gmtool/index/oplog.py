"""The per-run operation log under INDEX_DIR/logs/ (scan, index and verify runs)."""

from __future__ import annotations

import contextlib
import os
from datetime import datetime, timezone
from pathlib import Path

from gmtool.storage.layout import is_ours, logs_dir

KEEP_LOGS = 50  # enough to look back over weeks of scans, small enough to never matter on disk


class OpLog:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, msg: str) -> None:
        self.lines.append(f"{datetime.now(timezone.utc).isoformat(timespec='seconds')} {msg}")

    def write(self, index_dir: Path, kind: str) -> str | None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        logs = logs_dir(index_dir)
        path = logs / f"{kind}-{stamp}.log"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            with open(path, "x", encoding="utf-8", errors="surrogateescape") as fh:  # a log needs no fsync, only a fresh name
                fh.write("\n".join(self.lines) + "\n")
        except OSError:
            return None
        _prune_logs(index_dir, logs)
        return str(path)


def _prune_logs(index_dir: Path, logs: Path) -> None:
    """Keep the newest logs only; names sort by time within each kind."""
    try:
        names = [n for n in os.listdir(logs) if is_ours(logs / n, index_dir)]
    except OSError:
        return
    if len(names) <= KEEP_LOGS:
        return
    names.sort(key=lambda n: n.split("-", 1)[-1])
    for name in names[:-KEEP_LOGS]:
        with contextlib.suppress(OSError):
            os.unlink(logs / name)
