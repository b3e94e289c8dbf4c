"""The embedder (onnxruntime + tokenizers) and the per-source vector cache."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gmtool.errors import GmtoolError
from gmtool.rank import embed as embed_mod
from gmtool.rank.embed import Embedder, load_embedder
from gmtool.rank.model_files import model_status
from gmtool.storage.vectors import VectorStore, section_key

FIREBALL = ("Fireball. 3rd-level evocation. A bright streak flashes from your pointing finger to a point "
            "you choose within range and then blossoms with a low roar into an explosion of flame. Each "
            "creature in a 20-foot-radius sphere must make a Dexterity saving throw.")
FALLING = ("Falling. A fall from a great height is one of the most common hazards facing an adventurer. "
           "At the end of a fall, a creature takes 1d6 bludgeoning damage for every 10 feet it fell, "
           "to a maximum of 20d6.")
TEXTS = [
    "Grappling: when you want to grab a creature or wrestle with it, you can use the Attack action.",
    FIREBALL,
    "Short rest",
    FALLING,
    "Cure Wounds. A creature you touch regains a number of hit points equal to 1d8 + your modifier. " * 8,
    "",
    "Élan vital — 龍 🐉 2d6+3",
]


@pytest.fixture(scope="module")
def emb() -> Embedder:
    return load_embedder("cpu")


def _cuda_usable() -> tuple[bool, str]:
    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return False, "onnxruntime has no CUDAExecutionProvider"
    e = Embedder(device="auto")
    return (e.device == "cuda", "CUDAExecutionProvider cannot actually be used here: "
            + "; ".join(e.warnings or ["no GPU"]))


def test_import_is_cheap() -> None:
    code = ("import sys, gmtool.rank.embed, gmtool.storage.vectors; "
            "print(any(m in sys.modules for m in ('onnxruntime', 'tokenizers', 'numpy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_normalised_shape_and_dtype(emb: Embedder) -> None:
    v = emb.embed(TEXTS)
    assert v.shape == (len(TEXTS), emb.dim) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert emb.embed([]).shape == (0, emb.dim)


def test_deterministic(emb: Embedder) -> None:
    assert np.array_equal(emb.embed(TEXTS), emb.embed(TEXTS))


def test_order_preserved_under_length_sorting(emb: Embedder) -> None:
    done: list[int] = []
    batch = emb.embed(TEXTS, batch_size=3, progress=done.append)
    assert sum(done) == len(TEXTS) and len(done) >= 3
    one_by_one = np.stack([emb.embed_query(t) for t in TEXTS])
    assert (np.sum(batch * one_by_one, axis=1) > 0.999).all()


def test_texts_run_at_once_give_the_one_thread_vectors() -> None:
    """The CPU model runs `threads` texts at once; results keep input order and are bit-identical."""
    many = [f"{t} ({i})" for i in range(6) for t in TEXTS]
    one, three = Embedder("cpu", threads=1), Embedder("cpu", threads=3)
    assert three.per_text
    assert np.array_equal(one.embed(many), three.embed(many))


def test_semantic_sanity(emb: Embedder) -> None:
    q = emb.embed_query("a ball of fire explodes")
    fire, fall = emb.embed([FIREBALL, FALLING])
    assert q @ fire > q @ fall + 0.1


def test_fingerprint_and_status(emb: Embedder) -> None:
    assert emb.source_sha[:16] in emb.fingerprint and "len256" in emb.fingerprint
    status = model_status()
    assert status["exists"] and status["sha256"] == emb.source_sha
    assert "CPUExecutionProvider" in status["providers"]


def test_rewritten_model_agrees_with_shipped(emb: Embedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_NO_REWRITE", "1")
    plain = Embedder(device="cpu")
    assert plain.fingerprint != emb.fingerprint or emb.model_used == emb.source_path
    batched = plain.embed(TEXTS, batch_size=4)
    cos = np.sum(batched * emb.embed(TEXTS), axis=1)
    assert cos.min() > 0.97
    assert not plain.per_text  # the shipped model really batches (with padding) ...
    one_by_one = np.stack([plain.embed_query(t) for t in TEXTS])
    assert (np.sum(batched * one_by_one, axis=1) > 0.999).all()  # ... and padding does not leak


def test_optimised_graph_is_cached_and_gives_the_same_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first CPU session saves onnxruntime's optimised graph; later ones load it unoptimised
    (faster start-up) and must embed exactly as before. A damaged cache file is rebuilt."""
    monkeypatch.setenv("GMTOOL_CACHE_DIR", str(tmp_path))
    first = Embedder(device="cpu")
    saved = sorted((tmp_path / "models").glob("*-ort*.onnx"))
    assert saved, list((tmp_path / "models").iterdir())
    stamps = {p: p.stat().st_mtime_ns for p in saved}
    second = Embedder(device="cpu")
    assert {p: p.stat().st_mtime_ns for p in saved} == stamps  # loaded, not written again
    assert second.fingerprint == first.fingerprint
    assert np.sum(first.embed(TEXTS) * second.embed(TEXTS), axis=1).min() > 0.9999
    for p in saved:
        p.write_bytes(b"not a model")
    third = Embedder(device="cpu")
    assert np.sum(first.embed(TEXTS) * third.embed(TEXTS), axis=1).min() > 0.9999
    assert any(p.stat().st_size > 1000 for p in saved)  # the graph in use was optimised and saved again


def test_cuda_request_without_gpu_falls_back(emb: Embedder) -> None:
    ok, _ = _cuda_usable()
    if ok:
        pytest.skip("a usable GPU is present")
    e = Embedder(device="cuda")
    assert e.device == "cpu"
    assert any(w.startswith("GPU_NOT_AVAILABLE") for w in e.warnings)
    assert e.fingerprint == emb.fingerprint


@pytest.mark.cuda
def test_cuda_matches_cpu(emb: Embedder) -> None:
    ok, reason = _cuda_usable()
    if not ok:
        pytest.skip(reason)
    """CUDA runs the shipped graph (pooling inside it); the CPU gives the same vector space with
    the shipped graph, which is what a question on a GPU-built index uses."""
    gpu = Embedder(device="cuda")
    cpu = Embedder(device="cpu", graph="shipped")
    assert gpu.device == "cuda" and gpu.pooled and not gpu.warnings
    assert gpu.fingerprint == cpu.fingerprint != emb.fingerprint
    cos = np.sum(gpu.embed(TEXTS * 40) * cpu.embed(TEXTS * 40), axis=1)
    assert cos.min() > 0.99


def test_model_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_MODEL", str(tmp_path / "missing.onnx"))
    with pytest.raises(GmtoolError) as info:
        load_embedder("cpu")
    assert info.value.code == "MODEL_NOT_FOUND" and info.value.hint
    assert model_status()["exists"] is False


def test_gmtool_model_env_copy(emb: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "copy.onnx"
    shutil.copy2(emb.source_path, copy)
    monkeypatch.setenv("GMTOOL_MODEL", str(copy))
    e = load_embedder("cpu", timeout_s=60)
    assert e.source_path == copy and e.fingerprint == emb.fingerprint  # same bytes, same fingerprint


class OtherFingerprint:
    """A real Embedder that reports another fingerprint, as a changed model would."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.fingerprint = inner.fingerprint + "-other"

    def embed(self, texts, batch_size=32, progress=None):  # type: ignore[no-untyped-def]
        return self.inner.embed(texts, batch_size=batch_size, progress=progress)


def test_vector_store(emb: Embedder, tmp_path: Path) -> None:
    store = VectorStore(tmp_path)
    texts = TEXTS[:5]
    assert not store.has("srd") and store.load("srd", emb.fingerprint) is None
    assert store.update("srd", texts, emb) == 5
    assert store.has("srd", emb.fingerprint) and not store.has("srd", "nope")
    vecs = store.load("srd", emb.fingerprint)
    assert vecs is not None and vecs.dtype == np.float16 and vecs.shape == (5, emb.dim)
    assert np.allclose(vecs.astype(np.float32), emb.embed(texts), atol=2e-3)

    assert store.update("srd", texts, emb) == 0

    changed = [*texts[:2], "Opportunity attacks: you can make one when a hostile creature leaves your reach.",
               *texts[3:]]
    assert store.update("srd", changed, emb) == 1
    vecs2 = store.load("srd", emb.fingerprint)
    assert vecs2 is not None and np.array_equal(vecs2[[0, 1, 3, 4]], vecs[[0, 1, 3, 4]])
    assert np.allclose(vecs2[2].astype(np.float32), emb.embed_query(changed[2]), atol=2e-3)

    reordered = [changed[4], changed[0]]
    assert store.update("srd", reordered, emb) == 0
    vecs3 = store.load("srd", emb.fingerprint)
    assert vecs3 is not None and np.array_equal(vecs3, vecs2[[4, 0]])

    other = OtherFingerprint(emb)
    assert store.update("srd", changed, other) == 5  # type: ignore[arg-type]
    assert store.load("srd", emb.fingerprint) is None and store.has("srd", other.fingerprint)

    store.remove("srd")
    assert not store.has("srd")
    store.remove("srd")  # idempotent


def test_vector_store_corrupt_file_reembeds(emb: Embedder, tmp_path: Path) -> None:
    store = VectorStore(tmp_path)
    assert store.update("a", TEXTS[:3], emb) == 3
    npy = tmp_path / "vectors" / "a.npy"
    npy.write_bytes(b"garbage")
    assert store.load("a", emb.fingerprint) is None
    assert store.update("a", TEXTS[:3], emb) == 3
    assert store.load("a", emb.fingerprint) is not None


def test_section_key() -> None:
    assert section_key("abc") == section_key("abc") != section_key("abd")
    assert len(section_key("x")) == 16


def test_load_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow(*args: object, **kwargs: object) -> None:
        import time

        time.sleep(2)

    monkeypatch.setattr(embed_mod, "Embedder", slow)
    with pytest.raises(GmtoolError) as info:
        load_embedder("cpu", timeout_s=0.2)
    assert info.value.code == "MODEL_LOAD_TIMEOUT"


# --- the one-time CPU graph rewrite (gmtool.rank.onnx_graph) --------------------------------


def _tiny_int8_model(scale_users: int = 1) -> bytes:
    """y = x @ (Cast(W_q) * scale): the pattern the rewrite targets, small enough to build here.
    With scale_users=2 the scale also feeds a second output, so the pattern must be left alone."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    wq = numpy_helper.from_array(rng.integers(-127, 128, size=(8, 4), dtype=np.int8), "wq")
    scale = numpy_helper.from_array(rng.uniform(0.01, 0.05, size=(1, 4)).astype(np.float32), "scale")
    nodes = [
        helper.make_node("Cast", ["wq"], ["wf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["wf", "scale"], ["w"]),
        helper.make_node("MatMul", ["x", "w"], ["y"]),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 4])]
    if scale_users == 2:
        nodes.append(helper.make_node("Identity", ["scale"], ["s"]))
        outputs.append(helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 4]))
    graph = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 8])],
                              outputs, initializer=[wq, scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def test_rewrite_tiny_model_runs_and_agrees() -> None:
    import onnx
    import onnxruntime as ort

    from gmtool.rank.onnx_graph import rewrite_model

    data = _tiny_int8_model()
    new, count = rewrite_model(data)
    assert count == 1
    ops = [n.op_type for n in onnx.load_model_from_string(new).graph.node]
    assert ops == ["DynamicQuantizeMatMul"]
    x = np.random.default_rng(1).normal(size=(3, 8)).astype(np.float32)
    a = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    b = ort.InferenceSession(new, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cos.min() > 0.99


def _tiny_bias_gelu_model() -> bytes:
    """gelu(x @ (Cast(W_q) * scale) + b), the GELU written out as x * (0.5 * (1 + Erf(x / sqrt 2)))."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load_model_from_string(_tiny_int8_model())
    g = model.graph
    g.initializer.extend([
        numpy_helper.from_array(np.linspace(-0.5, 0.5, 4, dtype=np.float32), "b"),
        numpy_helper.from_array(np.array(2 ** 0.5, dtype=np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, dtype=np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, dtype=np.float32), "half"),
    ])
    g.node.extend([
        helper.make_node("Add", ["y", "b"], ["h"]),
        helper.make_node("Div", ["h", "sqrt2"], ["h1"]),
        helper.make_node("Erf", ["h1"], ["h2"]),
        helper.make_node("Add", ["h2", "one"], ["h3"]),
        helper.make_node("Mul", ["half", "h3"], ["h4"]),
        helper.make_node("Mul", ["h", "h4"], ["out"]),
    ])
    del g.output[:]
    g.output.append(helper.make_tensor_value_info("out", TensorProto.FLOAT, [None, 4]))
    return model.SerializeToString()


def test_rewrite_folds_the_bias_and_the_gelu() -> None:
    """The bias Add goes into the int8 kernel and the five GELU ops become one; same outputs."""
    import onnx
    import onnxruntime as ort

    from gmtool.rank.onnx_graph import rewrite_model

    data = _tiny_bias_gelu_model()
    new, count = rewrite_model(data)
    nodes = onnx.load_model_from_string(new).graph.node
    assert count == 2 and [n.op_type for n in nodes] == ["DynamicQuantizeMatMul", "Gelu"]
    assert list(nodes[0].input)[3:] == ["", "b"]
    x = np.random.default_rng(1).normal(size=(3, 8)).astype(np.float32)
    a = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    b = ort.InferenceSession(new, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cos = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert cos.min() > 0.99


def test_rewrite_leaves_shared_weights_alone() -> None:
    from gmtool.rank.onnx_graph import rewrite_model

    data = _tiny_int8_model(scale_users=2)
    assert rewrite_model(data) == (data, 0)


def test_rewrite_of_shipped_model(emb: Embedder) -> None:
    """Every int8 weight MatMul (with its bias Add), every softmax NaN guard and every exact GELU
    is rewritten, once: a second pass finds nothing."""
    import onnx

    from gmtool.rank.onnx_graph import rewrite_model

    data = emb.source_path.read_bytes()
    new, count = rewrite_model(data)
    before, after = onnx.load_model_from_string(data), onnx.load_model_from_string(new)
    ops = [n.op_type for n in after.graph.node]
    old_ops = [n.op_type for n in before.graph.node]
    n_dq, n_nan, n_gelu = ops.count("DynamicQuantizeMatMul"), old_ops.count("IsNaN"), ops.count("Gelu")
    biased = sum(1 for n in after.graph.node if n.op_type == "DynamicQuantizeMatMul" and len(n.input) == 5)
    assert n_dq > 0 and n_nan > 0 and n_gelu == old_ops.count("Erf") > 0 and biased > 0
    assert count == n_dq + n_nan + n_gelu
    assert "IsNaN" not in ops and "Erf" not in ops
    assert len(ops) == len(old_ops) - 2 * n_dq - biased - n_nan - 4 * n_gelu
    assert any(o.domain == "com.microsoft" for o in after.opset_import)
    assert rewrite_model(new) == (new, 0)
