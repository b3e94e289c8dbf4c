"""The device policy and the one-vector-space rule, with a fake CUDA provider (CI has no GPU).

The fake stands in for the hardware only: it opens a real onnxruntime session, on the CPU, of
the graph gmtool would run on the GPU (the shipped graph with pooling inside it), and counts
the sessions opened. Everything above it (Embedder, scan, ask, doctor, serve's warm-up) is real.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.rank import cuda
from gmtool.rank.embed import Embedder

TANK = "a tanky spellcaster class"
runner = CliRunner()


class FakeCuda:
    """A GPU that is really the CPU; `fail` makes opening a session fail as a missing library would."""

    def __init__(self, fail: str | None = None) -> None:
        self.opened = 0
        self.fail = fail

    def check(self) -> tuple[bool, str]:
        return True, "a fake GPU (tests)"

    def session(self, model: str | bytes, options: Any) -> Any:
        import onnxruntime as ort

        if self.fail:
            raise cuda.CudaUnavailable(self.fail)
        self.opened += 1
        return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> FakeCuda:
    fake = FakeCuda()
    monkeypatch.setattr(cuda, "RUNTIME", fake)
    return fake


@pytest.fixture(scope="module")
def gpu_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library scanned with the fake GPU present (so its vectors come from the
    shipped graph), once for this module; tests copy it before changing it."""
    src = Path(__file__).resolve().parents[1] / "gmtool" / "sample"
    lib = tmp_path_factory.mktemp("gpu-built") / "sample"
    shutil.copytree(src, lib, ignore=shutil.ignore_patterns(".gmtool"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cuda, "RUNTIME", FakeCuda())
        mp.setenv("GMTOOL_CONFIG_DIR", str(lib.parent / "config"))
        report = Engine(lib).scan()
    assert not report.failed and not report.warnings and report.embeddings_generated > 0, report
    return lib


def _ask(*args: str) -> dict[str, Any]:
    res = runner.invoke(app, ["ask", *args, "--json"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return json.loads(res.stdout)


def test_ask_never_opens_a_cuda_session_unless_asked(gpu: FakeCuda, gpu_built: Path, sample_cpu_embedded: Path) -> None:
    for lib in (gpu_built, sample_cpu_embedded):  # built on the (fake) GPU, and on the CPU
        out = _ask(TANK, "-L", str(lib))
        assert out["mode"] == "hybrid" and not out["warnings"], out["warnings"]
        assert out["results"][0]["title"] == "Bulwark Mage"
    assert gpu.opened == 0


def test_scan_embeds_on_the_gpu_and_the_cpu_question_agrees(gpu: FakeCuda, gpu_built: Path) -> None:
    state = Engine(gpu_built).library().manifest.state
    assert state.vector_device == "cuda" and state.vector_space and "+" not in state.vector_space.split("-")[0]
    eng = Engine(gpu_built)
    cpu = eng.ask(TANK)
    assert gpu.opened == 0 and eng.embedder("cpu", "shipped").device == "cpu"
    on_gpu = eng.ask(TANK, device="cuda")
    assert gpu.opened == 1 and eng.embedder("cuda", "shipped").pooled
    assert cpu.mode == on_gpu.mode == "hybrid" and not cpu.warnings and not on_gpu.warnings
    assert [h.title for h in cpu.results[:3]] == [h.title for h in on_gpu.results[:3]]
    assert [h.similarity_score for h in cpu.results[:3]] == pytest.approx(
        [h.similarity_score for h in on_gpu.results[:3]], abs=1e-3)


def test_gpu_graph_gives_the_cpu_graphs_vectors(gpu: FakeCuda) -> None:
    """The graph CUDA runs (pooling inside) against the same weights pooled on the host, batched."""
    texts = ["Fireball: a bright streak blossoms into flame.", "Short rest", "", "Grappling " * 300]
    on_gpu = Embedder("auto", graph="shipped")
    on_cpu = Embedder("cpu", graph="shipped")
    assert on_gpu.device == "cuda" and on_gpu.pooled and on_gpu.fingerprint == on_cpu.fingerprint
    cos = np.sum(on_gpu.embed(texts) * on_cpu.embed(texts), axis=1)
    assert cos.min() > 0.9999


def test_cuda_question_on_a_cpu_built_index_stays_on_the_cpu(gpu: FakeCuda, sample_cpu_embedded: Path) -> None:
    out = _ask(TANK, "--device", "cuda", "-L", str(sample_cpu_embedded))
    assert gpu.opened == 0
    assert out["mode"] == "hybrid" and out["results"][0]["title"] == "Bulwark Mage"
    assert any(w.startswith("GPU_NOT_USED") and "gmtool scan" in w for w in out["warnings"]), out["warnings"]


def test_a_cuda_failure_names_the_missing_library(monkeypatch: pytest.MonkeyPatch, gpu_built: Path) -> None:
    monkeypatch.setattr(cuda, "RUNTIME", FakeCuda(fail="onnxruntime could not initialise CUDA; missing library: "
                                                       "libcublasLt.so.13"))
    out = _ask(TANK, "--device", "cuda", "-L", str(gpu_built))
    warn = [w for w in out["warnings"] if w.startswith("GPU_NOT_AVAILABLE")]
    assert warn and "libcublasLt.so.13" in warn[0]
    assert out["mode"] == "hybrid" and out["results"][0]["title"] == "Bulwark Mage"


def test_missing_library_is_read_from_the_loaders_message() -> None:
    msg = "libcublasLt.so.13: cannot open shared object file: No such file or directory"
    assert cuda.missing_library(msg) == "libcublasLt.so.13"
    assert cuda.missing_library("CUDA failure 35: driver version is insufficient") is None
    if cuda.provider_library() is not None and not cuda.OrtCuda().check()[0]:
        found = cuda.probe_missing_library()  # this onnxruntime-gpu, without the CUDA libraries beside it
        assert found is None or found.startswith("lib")


def test_doctor_says_which_device_each_command_uses(gpu: FakeCuda, gpu_built: Path) -> None:
    res = runner.invoke(app, ["doctor", "--json", "-L", str(gpu_built)])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    devices = data["devices"]
    assert devices["ask"].startswith("cpu (") and devices["scan/index"].startswith("cuda (")
    assert devices["serve"].startswith("cpu, then cuda") and devices["search"].startswith("none")
    assert data["index"]["sections_waiting"] == 0 and data["index"]["vector_device"] == "cuda"


def test_doctor_without_a_gpu(monkeypatch: pytest.MonkeyPatch, gpu_built: Path) -> None:
    class NoGpu(FakeCuda):
        def check(self) -> tuple[bool, str]:
            return False, "no NVIDIA GPU/driver found"

    monkeypatch.setattr(cuda, "RUNTIME", NoGpu())
    data = json.loads(runner.invoke(app, ["doctor", "--json", "-L", str(gpu_built)]).stdout)
    assert data["devices"]["scan/index"] == "cpu (no usable GPU: no NVIDIA GPU/driver found)"
    assert data["runtime"]["cuda"]["usable"] is False


def test_server_answers_on_the_cpu_then_on_the_gpu(gpu: FakeCuda, gpu_built: Path, sample_cpu_embedded: Path) -> None:
    assert Engine(sample_cpu_embedded).warm_gpu() is None  # CPU-graph vectors: the GPU could not query them
    eng = Engine(gpu_built)
    first = eng.ask(TANK)  # before any warm-up: the CPU
    assert gpu.opened == 0 and first.mode == "hybrid"
    loading = eng.warm_gpu()
    assert loading is not None
    loading.result(timeout=120)
    assert eng.question_embedder("auto", eng.library()).device == "cuda"
    res = eng.ask(TANK)
    assert gpu.opened == 1 and [h.title for h in res.results[:3]] == [h.title for h in first.results[:3]]
