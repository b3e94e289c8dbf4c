"""`gmtool doctor`: what runs where, and whether the index is healthy."""

from __future__ import annotations

import platform
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from gmtool import __version__
from gmtool.errors import GmtoolError
from gmtool.storage import store
from gmtool.storage.layout import check_folder
from gmtool.types import JSONValue

if TYPE_CHECKING:
    from gmtool.query.library import Library
    from gmtool.settings import Paths, Settings
    from gmtool.types import Embedder, VerifyReport


class Engine(Protocol):
    """The engine as the doctor sees it (a protocol, so the engine can import the doctor)."""

    paths: Paths
    settings: Settings

    def embedder(self, device: str = ..., graph: str | None = ...) -> Embedder: ...

    def embedding_status(self) -> dict[str, JSONValue]: ...

    def library(self) -> Library: ...

    def has_index(self) -> bool: ...

    def verify(self) -> VerifyReport: ...


def doctor(engine: Engine, device: str = "auto") -> dict[str, dict[str, JSONValue]]:
    from gmtool.rank.model_files import model_status

    out: dict[str, dict[str, JSONValue]] = {
        "gmtool": {"version": __version__, "python": sys.version.split()[0], "platform": platform.platform()},
        "paths": {"library": str(engine.paths.library), "index_dir": str(engine.paths.index_dir),
                  "library_from": engine.paths.library_from},
    }
    from gmtool.rank import cuda
    from gmtool.rank.device import plan

    status = model_status(engine.settings)
    runtime: dict[str, JSONValue] = {k: status.get(k) for k in ("onnxruntime", "providers", "gpu_present")}
    gpu = cuda.status()
    runtime["cuda"] = gpu
    out["runtime"] = runtime
    out["devices"] = dict[str, JSONValue](plan(device, bool(gpu["usable"]), str(gpu["reason"])))
    model: dict[str, JSONValue] = {
        k: status.get(k)
        for k in ("model_path", "model_source", "exists", "sha256", "tokenizer_path", "optimised_model")
    }
    t = time.perf_counter()
    try:
        emb = engine.embedder(device, _index_graph(engine))
        model["load_s"] = round(time.perf_counter() - t, 3)
        model["fingerprint"] = emb.fingerprint
        runtime["device_requested"] = device
        runtime["device_in_use"] = emb.device
        runtime["warnings"] = list[JSONValue](emb.warnings)
    except GmtoolError as exc:
        model["error"] = f"{exc.code}: {exc.message} ({exc.hint})"
        runtime["device_in_use"] = None
    out["model"] = model
    fp = model.get("fingerprint")
    out["index"] = _index_health(engine, fp if isinstance(fp, str) else None)
    writer = _active_writer(Path(engine.paths.index_dir))
    if writer is not None:
        out["index"]["writer"] = writer
    return out


def _active_writer(index_dir: Path) -> str | None:
    """The scan writing the index now, if one is (a stale lock is a verify problem instead)."""
    from datetime import datetime, timezone

    from gmtool.storage.lock import writer_since

    pid = store.active_writer(index_dir)
    if pid is None:
        return None
    since = writer_since(index_dir)
    when = f" since {datetime.fromtimestamp(since, timezone.utc):%Y-%m-%d %H:%M:%S} UTC" if since else ""
    return f"pid {pid} is writing the index{when}"


def _index_graph(engine: Engine) -> str | None:
    """The graph of the index's vectors, so that the model checked is the one `ask` loads."""
    from gmtool.index.embedding import graph_of

    try:
        return graph_of(engine.library().manifest.state.vector_space) if engine.has_index() else None
    except GmtoolError:
        return None


def _index_health(engine: Engine, fingerprint: str | None) -> dict[str, JSONValue]:
    try:
        check_folder(Path(engine.paths.index_dir))  # GMTOOL_INDEX_DIR naming a file or a device
    except GmtoolError as exc:
        return {"status": exc.code, "message": exc.message, "hint": exc.hint}
    if not engine.has_index():
        return {"status": "INDEX_NOT_FOUND", "hint": "run `gmtool scan DIR`"}
    try:
        lib = engine.library()
    except GmtoolError as exc:
        return {"status": exc.code, "message": exc.message, "hint": exc.hint}
    from gmtool.storage.vectors import VectorStore

    vs = VectorStore(engine.paths.index_dir)
    embedded = sum(1 for sid in lib.metas if fingerprint and vs.has(sid, fingerprint))
    vectors = engine.embedding_status()
    report = engine.verify()
    stale: list[JSONValue] = [p.file for p in report.problems if p.code in ("STALE", "MISSING", "NOT_INDEXED")]
    problems: list[JSONValue] = [f"{p.code} {p.file}" for p in report.problems]
    return {
        "status": "healthy" if report.healthy else "problems",
        "sources": len(lib.metas),
        "entries": lib.n_docs,
        "embedded_sources": f"{embedded}/{len(lib.metas)}",
        "embedded_share": round(embedded / max(len(lib.metas), 1), 3),
        "vector_space": vectors["space"],
        "vector_device": vectors["device"],
        "sections_waiting": vectors["sections_waiting"],
        "books_waiting": vectors["books_waiting"],
        "stale_files": stale,
        "problems": problems,
        "size_bytes": store.dir_size(Path(engine.paths.index_dir)),
    }
