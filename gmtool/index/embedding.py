"""Index time: bring every source's sentence vectors up to date (a missing model only warns).

This runs after the keyword index is committed, so `search` (and `ask`, in keyword mode) work
while it does. Vectors are saved book by book: a scan killed here keeps every finished book,
and the next scan embeds only the rest. Before the first book the manifest records the index's
vector space (the embedder's fingerprint, which names the graph, and the device), so a question
is embedded by a graph whose vectors agree with the index's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.rank.units import CHUNK_CHARS, MAX_CHUNKS, UNITS_VERSION, Units, units
from gmtool.settings import Settings
from gmtool.storage.checksums import record
from gmtool.storage.vectors import has_unit_index, save_unit_index

if TYPE_CHECKING:
    from gmtool.rank.embed import Embedder
    from gmtool.storage.store import Manifest
    from gmtool.storage.vectors import VectorStore


def graph_of(space: str | None) -> str | None:
    """The graph ("rewrite" or "shipped") that made an index's vectors, from its recorded space."""
    if not space:
        return None
    return "rewrite" if "+" in space.split("-", 1)[0] else "shipped"


def embed_library(index_dir: Path, manifest: Manifest, device: str = "auto", progress: Any = None,
                  settings: Settings | None = None,
                  commit: Callable[[], None] | None = None) -> tuple[int, str | None]:
    """Writer side: bring every source's vectors up to date; a missing model only warns.
    `commit` saves the manifest (once the vector space is recorded, before the first book)."""
    from gmtool.errors import GmtoolError
    from gmtool.rank.embed import load_embedder
    from gmtool.storage.vectors import VectorStore

    settings = settings or Settings.from_env()
    stamp = _embed_stamp(manifest, device, settings)
    if stamp and manifest.state.embed_stamp == stamp and all(has_unit_index(index_dir, sid) for sid in manifest.sources):
        return 0, None  # nothing changed since the last complete embedding pass
    # A GPU scan always uses the shipped graph; on the CPU an index already in that space stays
    # in it, so that one changed book does not re-embed the whole library in another space.
    keep = "shipped" if graph_of(manifest.state.vector_space) == "shipped" else None
    try:
        emb = load_embedder(device=device, settings=settings, graph=keep)
    except GmtoolError as exc:
        return 0, f"{exc.code}: {exc.message}; keyword search still works ({exc.hint})"
    if (manifest.state.vector_space, manifest.state.vector_device) != (emb.fingerprint, emb.device):
        manifest.state.vector_space, manifest.state.vector_device = emb.fingerprint, emb.device
        if commit is not None:
            commit()
    generated = _embed_books(index_dir, manifest, emb, VectorStore(index_dir), progress)
    if stamp:
        manifest.state.embed_stamp = stamp
    return generated, "; ".join(emb.warnings) or None


def _embed_books(index_dir: Path, manifest: Manifest, emb: Embedder, vs: VectorStore, progress: Any) -> int:
    """Each book in turn, saved when done. A window that another book already has is not embedded
    again: the same text reuses its vector, and an entry that the keyword index found to be a
    copy of an earlier book's (rank.copies: same title and type, near-identical text; the SRD 5.1
    as PDF and Markdown) takes that book's windows."""
    from gmtool.storage import store

    copies = _copy_groups(index_dir, manifest)
    first: dict[int, list[tuple[str, float]]] = {}  # copy group -> the windows of its first book
    todo: list[tuple[str, Units]] = []
    for sid in sorted(manifest.sources):
        rec = store.load_source(index_dir, sid, manifest.sources[sid].sha256)
        u = units(rec.entries)
        if copies is not None:
            u = _share_copies(u, copies[sid], first)
        todo.append((sid, u))
    total = sum(len(u.texts) for _, u in todo)
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total, f"embedding sections ({sid})")

    known: dict[str, Any] = {}
    generated = 0
    for sid, u in todo:
        before = done[0]
        generated += vs.update(sid, u.texts, emb, progress=tick, known=known, source=manifest.sources[sid].sha256)
        done[0] = before + len(u.texts)
        record(manifest.state.checksums, index_dir, *vs.written,
               save_unit_index(index_dir, sid, u.idx, u.texts, u.weights))
        vs.written.clear()
        if progress:
            progress(done[0], total, f"embedding sections ({sid} done)")
    return generated


def _copy_groups(index_dir: Path, manifest: Manifest) -> dict[str, list[int]] | None:
    """Per source, each entry's copy group (-1: none) from the saved keyword docs table; None
    when there is none that matches the manifest."""
    import orjson

    from gmtool.storage.layout import keyword_docs_file

    digest = manifest.state.keyword
    if not digest:
        return None
    try:
        copy = orjson.loads(keyword_docs_file(index_dir, digest).read_bytes())["copy"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    sids = sorted(manifest.sources)  # the keyword index's document order
    if not isinstance(copy, list) or len(copy) != sum(manifest.sources[s].entry_count for s in sids):
        return None
    out: dict[str, list[int]] = {}
    off = 0
    for sid in sids:
        n = manifest.sources[sid].entry_count
        out[sid] = copy[off:off + n]
        off += n
    return out


def _share_copies(u: Units, copy: list[int], first: dict[int, list[tuple[str, float]]]) -> Units:
    """One book's windows, an entry whose copy group an earlier book holds taking that book's."""
    out = Units([], [], [])
    k = 0
    while k < len(u.idx):
        end = k
        while end < len(u.idx) and u.idx[end] == u.idx[k]:
            end += 1
        entry = u.idx[k]
        group = copy[entry] if 0 <= entry < len(copy) else -1
        windows = list(zip(u.texts[k:end], u.weights[k:end], strict=True))
        if group >= 0:
            windows = first.setdefault(group, windows)
        for text, weight in windows:
            out.idx.append(entry)
            out.texts.append(text)
            out.weights.append(weight)
        k = end
    return out


def _embed_stamp(manifest: Manifest, device: str, settings: Settings) -> str | None:
    """Identifies the sources, the model file and the device without loading the model."""
    from gmtool.rank.keyword import keyword_digest
    from gmtool.rank.model_files import REWRITE_VERSION, resolve_model_path

    path = resolve_model_path(settings)
    if path is None or not path.is_file():
        return None
    st = path.stat()
    tok = str(settings.tokenizer or "")
    # the rewrite's version too: a new one is a new vector space, which the next scan must embed
    rewrite = "1" if settings.no_rewrite else REWRITE_VERSION
    return f"{keyword_digest(manifest)}|{path}|{st.st_size}|{st.st_mtime_ns}|{tok}|{rewrite}|{device}|{CHUNK_CHARS}x{MAX_CHUNKS}|{UNITS_VERSION}"
