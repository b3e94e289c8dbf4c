"""Sentence embeddings with onnxruntime + tokenizers: sessions, batching and pooling.

Which files are used is decided in gmtool.rank.model_files (from Settings); nothing is ever
downloaded. On CPU the model is rewritten once into a faster, equivalent graph
(gmtool.rank.onnx_graph) and cached, keyed by the source model's sha256. The rewrite is checked
against the source model before it is cached; any failure falls back to the shipped file.
Because the rewritten graph quantizes activations per tensor, it embeds one text per run (no
padding), so a text's vector never depends on the other texts in a batch.

Two graphs, two vector spaces: the rewrite ("+r1" in the fingerprint) runs on the CPU only; the
shipped graph (no suffix) runs on either device and gives the same vectors on both (on CUDA with
pooling moved into the graph). The vectors of the two agree to about 0.98 cosine, not enough to
query one with the other, so `graph` picks the one an index was built with.

Importing this module is cheap: onnxruntime, tokenizers, onnx and numpy are imported on first use.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.errors import GmtoolError, UsageError
from gmtool.rank.model_files import (
    REWRITE_VERSION,
    file_sha256,
    quiet_ort,
    require_model,
    resolve_tokenizer_path,
    rewrite_cache_path,
)
from gmtool.settings import Settings, available_cores
from gmtool.storage.atomic import atomic_write  # its temp name carries the thread: a timed-out load may still write

if TYPE_CHECKING:
    import numpy

MAX_LEN = 256
POOLING = "mean-l2"
TOKEN_BUDGET = 4096  # padded tokens per batch: long sections go in smaller batches
# On a GPU bigger batches keep the device busy. Not yet measured (no GPU here): 32k padded
# tokens is 128 full 256-token windows, whose attention scores (12 heads) take about 400 MB.
GPU_TOKEN_BUDGET = 32_768
GPU_MAX_BATCH = 512
PIPE_BLOCK = 2048  # texts tokenised per step, the next block while the model runs this one
GRAPHS = ("shipped", "rewrite")  # see the module docstring; None: the device's fastest
# onnxruntime fusions left off for the rewritten graph. Its CPU SkipLayerNormalization kernel is
# about 8 times slower than the Add + LayerNormalization it replaces (1.31, measured on 400 windows
# of the 12-book library, one thread: 0.96 s against 0.12 + 0.09 s); with the GELU and bias
# rewrites of r2 a window costs 60 instead of 84 CPU-microseconds per token.
_CPU_REWRITE_UNFUSED = ["SkipLayerNormFusion"]
_MIN_REWRITE_COSINE = 0.97  # the rewritten graph must give (almost) the source model's vectors
_MIN_POOLED_COSINE = 0.9999  # pooling in the graph is the same arithmetic as on the host
_REWRITE_SAMPLES = [
    "Fireball: a bright streak flashes to a point you choose and blossoms into flame.",
    "Falling damage: 1d6 bludgeoning for every 10 feet fallen, to a maximum of 20d6.",
    "x",
]


class Embedder:
    """Texts -> L2-normalised float32 vectors. ``device`` is what is actually used."""

    def __init__(self, device: str = "auto", settings: Settings | None = None, threads: int | None = None,
                 graph: str | None = None) -> None:
        if device not in ("auto", "cpu", "cuda"):
            raise UsageError("INVALID_DEVICE", f"unknown device {device!r}", "use --device auto, cpu or cuda")
        if graph is not None and graph not in GRAPHS:
            raise ValueError(f"graph must be one of {GRAPHS}, not {graph!r}")
        self.settings = settings or Settings.from_env()
        self.warnings: list[str] = []
        self.source_path = require_model(self.settings)
        self.tokenizer_file = resolve_tokenizer_path(self.settings)
        if not self.tokenizer_file.is_file():
            raise GmtoolError("MODEL_NOT_FOUND", f"tokenizer file not found: {self.tokenizer_file}",
                              "reinstall gmtool, or point GMTOOL_TOKENIZER at a tokenizer.json")
        self.threads = threads or available_cores()
        self.source_sha = file_sha256(self.source_path)
        try:
            variant = self._load(device, graph)
        except GmtoolError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime and tokenizers raise their own types
            raise unsupported(self.source_path, self.tokenizer_file, exc) from None
        tok_sha = file_sha256(self.tokenizer_file)[:12]
        self.fingerprint = f"{self.source_sha[:16]}{variant}-tok{tok_sha}-len{MAX_LEN}-{POOLING}"

    # -- setup -----------------------------------------------------------------------------------

    def _load(self, device: str, graph: str | None) -> str:
        """Tokenizer, session and a probe run; the fingerprint's variant. Whatever these raise means
        the files are not a sentence-embedding model and tokenizer that this code can run."""
        self._tok = self._load_tokenizer()
        self.pooled = False  # True when the graph itself pools and normalises (the CUDA graph)
        self._session, self.device, self.model_used, variant = self._open_session(device, graph)
        self._inputs = {i.name: (i.type or "") for i in self._session.get_inputs()}
        if "input_ids" not in self._inputs:
            raise GmtoolError("MODEL_UNSUPPORTED", f"{self.source_path} has no input_ids input", UNSUPPORTED_HINT)
        self._output = self._session.get_outputs()[0].name
        # The rewritten graph quantizes activations per tensor, so a text's vector would depend on the
        # other texts (and padding) in its batch; one text per run keeps vectors batch-independent,
        # and costs little because there is then no padding at all.
        self.per_text = variant != ""
        self.dim = int(self._run_batch(self.tokenize(["dimension probe"]))[0].shape[-1])
        return variant

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

    def _session_options(self, ort: Any, severity: int = 3, level: str = "ORT_ENABLE_ALL",
                         intra_threads: int | None = None) -> Any:
        so = ort.SessionOptions()
        so.log_severity_level = severity
        so.intra_op_num_threads = intra_threads or self.threads
        so.inter_op_num_threads = 1
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
        # Idle pool threads sleep instead of spinning. One short text per run leaves threads idle
        # between runs; spinning then burns the cores that the scan's other work (or another
        # process) needs. Measured: 200 chunks take 4.5 s instead of 5.5 s alone, and 8.3 s
        # instead of 24 s with two embedding processes on two cores.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        so.add_session_config_entry("session.inter_op.allow_spinning", "0")
        return so

    def _cpu_session(self, ort: Any, model: Path | bytes, variant: str = "") -> Any:
        """A CPU session. A model file is optimised by onnxruntime once and the optimised graph
        cached, so later processes skip graph optimisation: session start-up about halves
        (146 -> 76 ms), most of what a one-question `ask` pays for the model.

        The rewritten (per-text) model runs each text on one thread, and `embed` runs
        `self.threads` texts at once instead: one short text leaves a multi-threaded run waiting
        on its slowest thread. Measured on 2 cores: 121 windows/s against 86, and a question in
        1.3 ms against 1.9, with the same vectors."""
        cpu = ["CPUExecutionProvider"]
        intra = 1 if variant else None
        unfused = _CPU_REWRITE_UNFUSED if variant else []
        if isinstance(model, bytes):
            return ort.InferenceSession(model, self._session_options(ort, intra_threads=intra), providers=cpu)
        version = str(getattr(ort, "__version__", "0")).replace("+", "_")
        cached = self.settings.cache_dir / "models" / f"{self.source_sha[:32]}{variant.replace('+', '-')}-ort{version}.onnx"
        if cached.is_file():
            with contextlib.suppress(Exception):  # a damaged cache file: optimise again below
                return ort.InferenceSession(
                    str(cached), self._session_options(ort, level="ORT_DISABLE_ALL", intra_threads=intra),
                    providers=cpu)
        # Extended, not all, optimisations: the saved graph then holds no hardware-specific layout.
        so = self._session_options(ort, level="ORT_ENABLE_EXTENDED", intra_threads=intra)
        tmp = cached.with_name(f".{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        with contextlib.suppress(OSError):
            cached.parent.mkdir(parents=True, exist_ok=True)
            so.optimized_model_filepath = str(tmp)
        sess = ort.InferenceSession(str(model), so, providers=cpu, disabled_optimizers=unfused)
        with contextlib.suppress(OSError):
            if tmp.is_file():
                os.replace(tmp, cached)  # atomic: a concurrent process reads the old file or the whole new one
        return sess

    def _open_session(self, device: str, graph: str | None) -> tuple[Any, str, Path, str]:
        """(session, device in use, model file, fingerprint variant); CUDA when asked and usable."""
        from gmtool.rank import cuda

        ort = quiet_ort()
        if device == "cuda" and graph == "rewrite" and not (usable := cuda.RUNTIME.check())[0]:
            self.warnings.append(f"GPU_NOT_AVAILABLE: {usable[1]}; running on CPU")
        elif device in ("auto", "cuda") and graph == "rewrite":
            if device == "cuda":
                self.warnings.append("GPU_NOT_USED: this index's vectors were made by the CPU graph, so the "
                                     "question runs on the CPU to match them (`gmtool scan --device cuda` "
                                     "rebuilds them on the GPU)")
        elif device in ("auto", "cuda"):
            try:
                return self._cuda_session(ort, cuda.RUNTIME), "cuda", self.source_path, ""
            except cuda.CudaUnavailable as exc:
                if device == "cuda":
                    self.warnings.append(f"GPU_NOT_AVAILABLE: {exc}; running on CPU")
        path, variant = (self.source_path, "") if graph == "shipped" else self._cpu_model(ort)
        try:
            sess = self._cpu_session(ort, path, variant)
        except Exception:
            if path == self.source_path:
                raise
            path, variant = self.source_path, ""
            sess = self._cpu_session(ort, path, variant)
        return sess, "cpu", path, variant

    def _cuda_session(self, ort: Any, runtime: Any) -> Any:
        """A CUDA session of the shipped graph with pooling inside it (so only the pooled vectors
        come back to the host), or of the plain graph if the pooled one cannot be built."""
        pooled = self._pooled_model(ort)
        sess = runtime.session(pooled if pooled is not None else str(self.source_path),
                               self._session_options(ort, 4))
        self.pooled = pooled is not None
        return sess

    def _pooled_model(self, ort: Any) -> bytes | None:
        """The shipped graph with pooling appended (checked on the CPU against pooling on the
        host before it is cached beside the CPU rewrite); None for a model it does not fit."""
        from gmtool.rank.model_files import pooled_cache_path

        cached = pooled_cache_path(self.settings.cache_dir, self.source_sha)
        with contextlib.suppress(OSError):
            return cached.read_bytes()
        try:
            import onnx

            from gmtool.rank.onnx_graph import add_pooling

            hidden = onnx.load_model(str(self.source_path)).graph.output[0].name
            data = add_pooling(self.source_path.read_bytes(), hidden)
            if not self._agrees(ort, data, _MIN_POOLED_COSINE, pooled=True):
                return None
        except Exception:  # noqa: BLE001 - an unusual model: run the plain graph and pool on the host
            return None
        with contextlib.suppress(OSError, GmtoolError):
            atomic_write(cached, data)
        return data

    def _cpu_model(self, ort: Any) -> tuple[Path, str]:
        """The cached rewritten model when there is (or can be made) one, else the source file."""
        if self.settings.no_rewrite:
            return self.source_path, ""
        cached = rewrite_cache_path(self.settings.cache_dir, self.source_sha)
        rejected = cached.with_suffix(".rejected")
        if cached.is_file():
            return cached, "+" + REWRITE_VERSION
        if rejected.exists():
            return self.source_path, ""
        try:
            from gmtool.rank.onnx_graph import rewrite_model

            data, count = rewrite_model(self.source_path.read_bytes())
            if count > 0 and self._agrees(ort, data, _MIN_REWRITE_COSINE):
                atomic_write(cached, data)
                return cached, "+" + REWRITE_VERSION
            atomic_write(rejected, b"")
        except Exception:  # noqa: BLE001 - any failure: the shipped model still works
            pass
        return self.source_path, ""

    def _agrees(self, ort: Any, data: bytes, min_cosine: float, pooled: bool = False) -> bool:
        """`data` (a rewritten graph, or with `pooled` one that pools itself) gives the shipped
        model's vectors, pooled on the host, to `min_cosine` on a few texts."""
        import numpy as np

        old, new = self._cpu_session(ort, self.source_path), self._cpu_session(ort, data)
        enc = [e.ids for e in self._tok.encode_batch(_REWRITE_SAMPLES)]
        feeds = self._feeds(enc, {i.name: (i.type or "") for i in old.get_inputs()})
        a = self._pool(old.run([old.get_outputs()[0].name], feeds)[0], feeds)
        b = new.run([new.get_outputs()[0].name], feeds)[0]
        b = np.asarray(b, dtype=np.float32) if pooled else self._pool(b, feeds)
        return bool(np.isfinite(b).all() and float((a * b).sum(axis=1).min()) >= min_cosine)

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
        if self.pooled:
            import numpy as np

            return np.asarray(self._session.run([self._output], feeds)[0], dtype=np.float32)
        if "attention_mask" not in feeds:  # keep the mask for pooling even if the model takes none
            feeds_all = self._feeds(batch, {"input_ids": "", "attention_mask": ""})
            hidden = self._session.run([self._output], feeds)[0]
            return self._pool(hidden, feeds_all)
        return self._pool(self._session.run([self._output], feeds)[0], feeds)

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        encs = self._tok.encode_batch(list(texts))
        return [e.ids or [self._pad_id] for e in encs]

    def embed(self, texts: list[str], batch_size: int | None = None,
              progress: Callable[[int], None] | None = None) -> numpy.ndarray:
        """float32 [len(texts), dim], L2-normalised, in input order.

        With the rewritten CPU model each text runs alone, `self.threads` of them at once. Otherwise
        texts are tokenised a block at a time, the next block while the model runs this one; each
        block is sorted by token length and cut into batches of at most `batch_size` texts and a
        padded-token budget (bigger on a GPU). `progress(n)` is called after each run with the
        number of texts just embedded.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        if self.per_text:
            ids = self.tokenize(texts)
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            chunks = [[i] for i in order]
            runs = self._map_runs([[ids[i]] for i in order])
            for chunk, vecs in zip(chunks, runs, strict=True):
                out[chunk] = vecs
                if progress is not None:
                    progress(1)
            return out
        gpu = self.device == "cuda"
        size = batch_size or (GPU_MAX_BATCH if gpu else 32)
        budget = GPU_TOKEN_BUDGET if gpu else TOKEN_BUDGET
        for start, ids in self._tokenized_blocks(texts):
            order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
            for chunk in self._batches(ids, order, size, budget):
                out[[start + i for i in chunk]] = self._run_batch([ids[i] for i in chunk])
                if progress is not None:
                    progress(len(chunk))
        return out

    def _tokenized_blocks(self, texts: list[str]) -> Iterator[tuple[int, list[list[int]]]]:
        """(offset, token ids) per block of PIPE_BLOCK texts; the tokenizer (which releases the GIL)
        works on the next block while the caller runs the model on this one."""
        starts = range(0, len(texts), PIPE_BLOCK)
        if len(starts) == 1:
            yield 0, self.tokenize(texts)
            return
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(1, thread_name_prefix="gmtool-tokenize") as pool:
            pending = pool.submit(self.tokenize, texts[:PIPE_BLOCK])
            for k, start in enumerate(starts):
                ids = pending.result()
                if k + 1 < len(starts):
                    nxt = starts[k + 1]
                    pending = pool.submit(self.tokenize, texts[nxt:nxt + PIPE_BLOCK])
                yield start, ids

    @staticmethod
    def _batches(ids: list[list[int]], order: list[int], batch_size: int,
                 budget: int = TOKEN_BUDGET) -> list[list[int]]:
        out: list[list[int]] = []
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and end - start < batch_size \
                    and (end - start + 1) * len(ids[order[end]]) <= budget:
                end += 1
            out.append(order[start:end])
            start = end
        return out

    def _map_runs(self, batches: list[list[list[int]]]) -> Iterator[Any]:
        """Each batch's vectors, in order; per-text runs go `self.threads` at a time (onnxruntime
        releases the GIL while it runs, and a session may be run from several threads)."""
        if not self.per_text or self.threads == 1 or len(batches) < 2:
            yield from map(self._run_batch, batches)
            return
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="gmtool-embed")
        try:
            yield from pool.map(self._run_batch, batches)
        finally:  # a caller that stops early (an interrupted scan) must not wait for the rest
            pool.shutdown(wait=True, cancel_futures=True)

    def embed_query(self, text: str) -> numpy.ndarray:
        return self._run_batch(self.tokenize([text]))[0]


UNSUPPORTED_HINT = ("GMTOOL_MODEL must name a sentence-embedding ONNX model (BERT-style inputs) and "
                    "GMTOOL_TOKENIZER its tokenizer; unset them for the bundled model")


def unsupported(model: Path, tokenizer: Path, exc: Exception) -> GmtoolError:
    """MODEL_UNSUPPORTED for a model or tokenizer file that will not load or run (a text file, a
    truncated download, another kind of network), naming what failed in one line."""
    why = " ".join(str(exc).split())[:200]
    return GmtoolError("MODEL_UNSUPPORTED",
                       f"{model} (tokenizer {tokenizer}) is not a usable sentence-embedding model: "
                       f"{type(exc).__name__}: {why}", UNSUPPORTED_HINT)


def load_embedder(device: str = "auto", timeout_s: float | None = None,
                  settings: Settings | None = None, graph: str | None = None) -> Embedder:
    """An Embedder for the configured model; MODEL_NOT_FOUND if it is missing.

    With ``timeout_s``, loading (including the one-time model rewrite) runs in a worker thread and
    MODEL_LOAD_TIMEOUT is raised if it takes longer. Without ``settings`` the environment is read now.
    """
    settings = settings or Settings.from_env()
    require_model(settings)
    if timeout_s is None:
        return Embedder(device=device, settings=settings, graph=graph)
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["embedder"] = Embedder(device=device, settings=settings, graph=graph)
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
