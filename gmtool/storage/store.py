"""The storage package's public face for the read side and the shells: one import, the
names they use. Each name lives in the module named for what it holds:

- layout: where every file lives under an index dir, which files are ours, cleaning
- atomic: the one atomic (and DISK_FULL-aware) write
- manifest: the manifest and its typed bookkeeping (`IndexState`)
- sources: per-source index and page-text files, sweeping a killed run's leftovers
- hits: per-source entries each readable alone, so a search reads only the hits it shows
- lock: the writer lock (filelock), stale-lock detection
- hashing: the one file hash and the stat stamp that says a file is unchanged
- vectors: sentence vectors
"""

from __future__ import annotations

from gmtool.storage.atomic import atomic_write, is_temp_name, sync_files
from gmtool.storage.hashing import FileStamp, file_sha256
from gmtool.storage.hits import HitsFile, load_hits
from gmtool.storage.layout import (
    LOCKFILE,
    MANIFEST,
    MARKER,
    claim,
    clean,
    dir_size,
    has_marker,
    lock_path,
    manifest_path,
    pages_file,
    prev_file,
    source_file,
)
from gmtool.storage.lock import active_writer, stale_lock, stale_lock_message, writer_lock
from gmtool.storage.manifest import (
    FORMAT_VERSION,
    FailedFile,
    IndexState,
    Manifest,
    dumps,
    load_manifest,
    load_manifest_or_empty,
    manifest_stamp,
    save_manifest,
)
from gmtool.storage.sources import (
    SourceRecord,
    drop_prev,
    ensure_hits,
    load_chapters,
    load_pages,
    load_source,
    pages_sound,
    remove_source,
    roll_back,
    save_chapters,
    save_source,
    sweep,
)

__all__ = [
    "FORMAT_VERSION", "LOCKFILE", "MANIFEST", "MARKER", "FailedFile", "FileStamp", "HitsFile", "IndexState",
    "Manifest", "SourceRecord", "active_writer", "atomic_write", "claim", "clean", "dir_size", "drop_prev", "dumps",
    "ensure_hits", "file_sha256", "has_marker", "is_temp_name", "load_chapters", "load_hits", "load_manifest",
    "load_manifest_or_empty", "load_pages",
    "load_source", "lock_path", "manifest_path", "manifest_stamp", "pages_file", "pages_sound", "prev_file",
    "remove_source", "roll_back", "save_chapters", "save_manifest", "save_source", "source_file", "stale_lock", "stale_lock_message", "sweep", "sync_files",
    "writer_lock",
]
