"""onnxruntime's CUDA provider: whether it can run here, opening a session on it, and why not.

Everything that touches the GPU goes through the one module-level `RUNTIME`, so the device
policy can be tested on machines without a GPU (CI) by putting a fake provider in its place.
Nothing here is imported by a command that does not embed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Protocol

from gmtool.rank.model_files import gpu_present, quiet_ort

CUDA_PROVIDER = "CUDAExecutionProvider"
INSTALL_HINT = ("see README \"GPU notes\": pip install 'onnxruntime-gpu[cuda,cudnn]', "
                "or install CUDA 13 and cuDNN 9 system-wide")
_MISSING = re.compile(r"([\w.+-]+\.(?:so(?:\.\d+)*|dll|dylib))\s*:\s*cannot open shared object file", re.I)
_WIN_MISSING = re.compile(r"(?:LoadLibrary|load)[^\n]*?([\w.+-]+\.dll)", re.I)


class CudaUnavailable(Exception):
    """CUDA cannot be used; the message says why in one line."""


class CudaRuntime(Protocol):
    """What the embedder needs of a GPU provider."""

    def check(self) -> tuple[bool, str]:
        """(usable as far as can be told without opening a session, why); cheap."""
        ...

    def session(self, model: str | bytes, options: Any) -> Any:
        """An onnxruntime session running on the GPU; CudaUnavailable otherwise."""
        ...


class OrtCuda:
    """The real provider: onnxruntime-gpu's CUDAExecutionProvider."""

    def check(self) -> tuple[bool, str]:
        ort = quiet_ort()
        if CUDA_PROVIDER not in ort.get_available_providers():
            return False, "this onnxruntime build has no CUDAExecutionProvider (install onnxruntime-gpu)"
        if not gpu_present():
            return False, "no NVIDIA GPU/driver found"
        return True, "an NVIDIA GPU and onnxruntime's CUDAExecutionProvider are present"

    def session(self, model: str | bytes, options: Any) -> Any:
        ok, why = self.check()
        if not ok:
            raise CudaUnavailable(why)
        ort = quiet_ort()
        try:
            ort.set_default_logger_severity(4)  # a missing libcublas etc. is logged at ERROR; we say it once
            sess = ort.InferenceSession(model, options, providers=[CUDA_PROVIDER, "CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises assorted errors here
            raise CudaUnavailable(_failure(str(exc).splitlines()[0][:200])) from None
        finally:
            ort.set_default_logger_severity(3)
        if sess.get_providers()[0] != CUDA_PROVIDER:
            raise CudaUnavailable(_failure("onnxruntime could not initialise CUDA"))
        return sess


RUNTIME: CudaRuntime = OrtCuda()


def _failure(what: str) -> str:
    lib = missing_library(what) or probe_missing_library()
    return f"{what}; missing library: {lib}" if lib else f"{what} (check the CUDA and cuDNN libraries)"


def missing_library(text: str) -> str | None:
    """The shared library a loader error names ("libcublasLt.so.13: cannot open shared object file")."""
    m = _MISSING.search(text) or _WIN_MISSING.search(text)
    return m.group(1) if m else None


def provider_library() -> Path | None:
    """onnxruntime's CUDA provider library, which links the CUDA and cuDNN libraries."""
    import importlib.util

    spec = importlib.util.find_spec("onnxruntime")
    if spec is None or not spec.submodule_search_locations:
        return None
    capi = Path(next(iter(spec.submodule_search_locations))) / "capi"
    for name in ("libonnxruntime_providers_cuda.so", "onnxruntime_providers_cuda.dll"):
        if (capi / name).is_file():
            return capi / name
    return None


def probe_missing_library() -> str | None:
    """Load the provider library the way onnxruntime does; the loader names the first library it
    cannot find. None when it loads (or there is none to load)."""
    import ctypes

    path = provider_library()
    if path is None:
        return None
    try:
        ctypes.CDLL(str(path), mode=getattr(os, "RTLD_LAZY", 1) | getattr(ctypes, "RTLD_LOCAL", 0))
    except OSError as exc:
        return missing_library(str(exc)) or str(exc).splitlines()[0][:120]
    return None


def status() -> dict[str, Any]:
    """What `doctor` shows about CUDA; opens no session."""
    ok, why = RUNTIME.check()
    out: dict[str, Any] = {"usable": ok, "reason": why}
    if isinstance(RUNTIME, OrtCuda) and CUDA_PROVIDER in quiet_ort().get_available_providers():
        lib = probe_missing_library()
        out["missing_library"] = lib
        if lib:
            out["usable"] = False
            out["reason"] = f"{lib} cannot be loaded" if ok else f"{why}; also, {lib} cannot be loaded"
            out["hint"] = INSTALL_HINT
    return out
