"""Index time: bring every source's sentence vectors up to date (a missing model only warns)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.rank.units import CHUNK_CHARS, MAX_CHUNKS, units
from gmtool.settings import Settings
from gmtool.storage.checksums import record
from gmtool.storage.vectors import has_unit_index, save_unit_index

if TYPE_CHECKING:
    from gmtool.storage.store import Manifest


def embed_library(index_dir: Path, manifest: Manifest, device: str = "auto", progress: Any = None,
                  settings: Settings | None = None) -> tuple[int, str | None]:
    """Writer side: bring every source's vectors up to date; a missing model only warns."""
    from gmtool.errors import GmtoolError
    from gmtool.rank.embed import load_embedder
    from gmtool.storage import store
    from gmtool.storage.vectors import VectorStore

    settings = settings or Settings.from_env()
    stamp = _embed_stamp(manifest, device, settings)
    if stamp and manifest.state.embed_stamp == stamp and all(has_unit_index(index_dir, sid) for sid in manifest.sources):
        return 0, None  # nothing changed since the last complete embedding pass
    try:
        emb = load_embedder(device=device, settings=settings)
    except GmtoolError as exc:
        return 0, f"{exc.code}: {exc.message}; keyword search still works ({exc.hint})"
    vs = VectorStore(index_dir)
    todo: list[tuple[str, list[int], list[str]]] = []
    for sid in sorted(manifest.sources):
        rec = store.load_source(index_dir, sid, manifest.sources[sid].sha256)
        todo.append((sid, *units(rec.entries)))
    total = sum(len(t) for _, _, t in todo)
    done = [0]

    def tick(n: int) -> None:
        done[0] += n
        if progress:
            progress(done[0], total, "embedding sections")

    generated = 0
    for sid, idx, texts in todo:
        before = done[0]
        n = vs.update(sid, texts, emb, progress=tick)
        done[0] = before + len(texts)
        generated += n
        record(manifest.state.checksums, index_dir, *vs.written, save_unit_index(index_dir, sid, idx, texts))
        vs.written.clear()
    if stamp:
        manifest.state.embed_stamp = stamp
    warn = None
    if emb.warnings:
        warn = "; ".join(emb.warnings)
    return generated, warn


def _embed_stamp(manifest: Manifest, device: str, settings: Settings) -> str | None:
    """Identifies the sources, the model file and the device without loading the model."""
    from gmtool.rank.keyword import keyword_digest
    from gmtool.rank.model_files import resolve_model_path

    path = resolve_model_path(settings)
    if path is None or not path.is_file():
        return None
    st = path.stat()
    tok = str(settings.tokenizer or "")
    rewrite = "1" if settings.no_rewrite else ""
    return f"{keyword_digest(manifest)}|{path}|{st.st_size}|{st.st_mtime_ns}|{tok}|{rewrite}|{device}|{CHUNK_CHARS}x{MAX_CHUNKS}"
