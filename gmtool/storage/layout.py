"""Where everything lives under an index dir, and which files there are gmtool's.

    INDEX_DIR/
      .gmtool-index          marker: this folder is a gmtool index (see `claim`)
      manifest.json          which sources are indexed, written last (storage.manifest)
      lock                   writer lock, holding the writer's pid (storage.lock)
      index/SID.index.json   entries of one source; SID.pages.json its page texts;
                             SID.prev.*.json the version the manifest names while replaced;
                             SID.hits.jsonl the entries again, each readable alone (storage.hits);
                             SID.chapters.json a folder book's parsed chapters (storage.sources)
      keyword/DIGEST.*       library-wide BM25 and title matrices, per-document lists and typed
                             fields (rank.keyword)
      tokens/SID.KEY.vN.npz  per-source token cache (rank.keyword)
      vectors/SID.*          sentence vectors (storage.vectors)
      logs/KIND-STAMP.log    one log per run

Nothing outside this module spells out these names. Cleaning and sweeping remove only names
that match these patterns, so a file someone else put in the folder is never touched.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from gmtool.errors import UsageError
from gmtool.storage.atomic import atomic_write, is_temp_name, read_only_is_coded

MARKER = ".gmtool-index"
MANIFEST = "manifest.json"
LOCKFILE = "lock"
SOURCES_DIR = "index"
KEYWORD_DIR = "keyword"
TOKENS_DIR = "tokens"
VECTORS_DIR = "vectors"
LOGS_DIR = "logs"

_MARKER_TEXT = b"This folder is a gmtool index. gmtool writes and deletes only its own files here.\n"

# What gmtool writes, by folder; anything else is somebody else's. Pattern strings, compiled
# (and cached) by `re` on first use: readers never need them, and compiling them all costs ~1 ms
# of every command's start-up.
_OWNED: dict[str, str] = {
    "": rf"^({re.escape(MANIFEST)}|{re.escape(LOCKFILE)}|{re.escape(MARKER)})$",
    SOURCES_DIR: r"(?i)^[a-z0-9][a-z0-9-]*\.((prev\.)?(index|pages)\.json|hits\.jsonl|chapters\.json)$",
    KEYWORD_DIR: r"^[0-9a-f]{16}\.(bm25|fuzzy|docs\.json|fields\.json)$",
    TOKENS_DIR: r"^[^/.]+\.[0-9a-f]{16}\.v\d+\.npz$",
    VECTORS_DIR: r"^[^/.]+\.(npy|keys\.json|units\.json)$",
    LOGS_DIR: r"^[a-z]+-\d{8}T\d{6}\d*Z\.log$",
}


# --- paths ------------------------------------------------------------------------------------


def manifest_path(index_dir: Path) -> Path:
    return index_dir / MANIFEST


def lock_path(index_dir: Path) -> Path:
    return index_dir / LOCKFILE


def source_file(index_dir: Path, source_id: str) -> Path:
    return index_dir / SOURCES_DIR / f"{source_id}.index.json"


def pages_file(index_dir: Path, source_id: str) -> Path:
    return index_dir / SOURCES_DIR / f"{source_id}.pages.json"


def hits_file(index_dir: Path, source_id: str) -> Path:
    return index_dir / SOURCES_DIR / f"{source_id}.hits.jsonl"


def prev_file(path: Path) -> Path:
    """Where the version the manifest still names is kept while `path` is being replaced."""
    sid, _, rest = path.name.partition(".")
    return path.with_name(f"{sid}.prev.{rest}")


def keyword_dir(index_dir: Path) -> Path:
    return index_dir / KEYWORD_DIR


def keyword_files(index_dir: Path, digest: str) -> list[Path]:
    """The two matrices whose stats the manifest records (the docs list is checked by digest)."""
    return [keyword_dir(index_dir) / f"{digest}{ext}" for ext in (".bm25", ".fuzzy")]


def keyword_docs_file(index_dir: Path, digest: str) -> Path:
    return keyword_dir(index_dir) / f"{digest}.docs.json"


def keyword_fields_file(index_dir: Path, digest: str) -> Path:
    """Every document's typed fields, apart from the docs list: only filters and `ask` read them."""
    return keyword_dir(index_dir) / f"{digest}.fields.json"


def tokens_dir(index_dir: Path) -> Path:
    return index_dir / TOKENS_DIR


def token_cache_file(index_dir: Path, sid: str, key: str, version: int) -> Path:
    return tokens_dir(index_dir) / f"{sid}.{key}.v{version}.npz"


def vectors_dir(index_dir: Path) -> Path:
    return index_dir / VECTORS_DIR


def vector_files(index_dir: Path, sid: str) -> tuple[Path, Path]:
    """(vectors .npy, keys .json) of one source."""
    safe = sid.replace("/", "_").replace("\\", "_")
    folder = vectors_dir(index_dir)
    return folder / f"{safe}.npy", folder / f"{safe}.keys.json"


def chapters_file(index_dir: Path, source_id: str) -> Path:
    """A folder book's parsed chapters, so a rescan re-reads only the chapters that changed."""
    return index_dir / SOURCES_DIR / f"{source_id}.chapters.json"


def unit_index_file(index_dir: Path, sid: str) -> Path:
    return vectors_dir(index_dir) / f"{sid}.units.json"


def logs_dir(index_dir: Path) -> Path:
    return index_dir / LOGS_DIR


# --- ownership --------------------------------------------------------------------------------


def is_ours(path: Path, index_dir: Path) -> bool:
    """A file gmtool wrote (or a temp file of one of its writes) at its place in the layout."""
    try:
        rel = path.relative_to(index_dir)
    except ValueError:
        return False
    folder = rel.parent.as_posix()
    folder = "" if folder == "." else folder
    pattern = _OWNED.get(folder)
    return pattern is not None and (is_temp_name(rel.name) or bool(re.match(pattern, rel.name)))


def has_marker(index_dir: Path) -> bool:
    return (index_dir / MARKER).is_file()


def _our_manifest(path: Path) -> bool:
    """A `manifest.json` that gmtool wrote: another tool's (a web app's, a package's) has the same
    name but not gmtool's keys."""
    import orjson

    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"format_version", "gmtool_version", "sources"} <= data.keys()


def _looks_like_ours(index_dir: Path) -> bool:
    """A folder without the marker that holds only gmtool's names (an index of gmtool 0.1,
    or one whose marker was lost) is adopted; anything else is someone else's."""
    if (index_dir / MANIFEST).exists() and not _our_manifest(index_dir / MANIFEST):
        return False
    for entry in os.scandir(index_dir):
        if entry.is_dir(follow_symlinks=False) and entry.name in _OWNED:
            inner = Path(entry.path)
            if any(not is_ours(Path(e.path), index_dir) for e in os.scandir(inner)):
                return False
        elif not (entry.is_file(follow_symlinks=False) and is_ours(Path(entry.path), index_dir)):
            return False
    return True


def not_ours(index_dir: Path) -> UsageError:
    return UsageError(
        "INDEX_DIR_NOT_OURS",
        f"{index_dir} holds files that gmtool did not write, so gmtool will not write or clean there",
        "point GMTOOL_INDEX_DIR at an empty folder or an existing gmtool index (the default is LIBRARY/.gmtool)",
    )


def not_a_folder(index_dir: Path) -> UsageError:
    return UsageError(
        "INDEX_DIR_NOT_A_FOLDER",
        f"the index folder {index_dir} is a file or a device, not a folder",
        "point GMTOOL_INDEX_DIR at a folder (or unset it: the default is LIBRARY/.gmtool)",
    )


def check_folder(index_dir: Path) -> None:
    """INDEX_DIR_NOT_A_FOLDER when the index dir, or a folder above it, is a file or a device."""
    for folder in (index_dir, *index_dir.parents):
        if os.path.lexists(folder):
            if not folder.is_dir():
                raise not_a_folder(folder if folder == index_dir else index_dir)
            return


def claim(index_dir: Path) -> None:
    """Writers only, before they touch the folder: create it with its marker, or check that it
    is ours; INDEX_DIR_NOT_OURS (exit 2) for a non-empty folder that is not, and
    INDEX_DIR_NOT_A_FOLDER for a file or a device."""
    check_folder(index_dir)
    with read_only_is_coded(index_dir):
        index_dir.mkdir(parents=True, exist_ok=True)
    if has_marker(index_dir):
        return
    if not _looks_like_ours(index_dir):
        raise not_ours(index_dir)
    atomic_write(index_dir / MARKER, _MARKER_TEXT)


def owned_names(index_dir: Path) -> list[tuple[str, str]]:
    """(folder, name) of every file of ours under the index dir (the lock and the marker included),
    matched on the names alone: an index of 100,000 sources holds 400,000 files, and a Path for each
    would cost a rescan seconds."""
    out: list[tuple[str, str]] = []
    for folder, pattern in _OWNED.items():
        base = os.path.join(index_dir, folder) if folder else str(index_dir)
        owned = re.compile(pattern)
        with contextlib.suppress(OSError), os.scandir(base) as entries:
            out.extend((folder, e.name) for e in entries
                       if (is_temp_name(e.name) or owned.match(e.name)) and e.is_file(follow_symlinks=False))
    return sorted(out)


def owned_files(index_dir: Path) -> list[Path]:
    """Every file of ours under the index dir (the lock and the marker included)."""
    return [index_dir / folder / name if folder else index_dir / name for folder, name in owned_names(index_dir)]


def clean(index_dir: Path) -> list[Path]:
    """Delete what gmtool wrote (keeping the lock and the marker); folders left empty go too.
    The caller holds the writer lock, which `claim`ed the folder first."""
    removed: list[Path] = []
    for path in owned_files(index_dir):
        if path.parent == index_dir and path.name in (LOCKFILE, MARKER):
            continue
        with contextlib.suppress(OSError):
            path.unlink()
            removed.append(path)
    for folder in _OWNED:
        if folder:
            with contextlib.suppress(OSError):
                (index_dir / folder).rmdir()  # only when empty
    return removed


def dir_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.stat(os.path.join(root, name)).st_size
    return total
