"""The one engine behind the CLI and the MCP server. It returns typed values and never prints."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

from gmtool import settings as config
from gmtool.errors import GmtoolError, UsageError
from gmtool.query.library import Library
from gmtool.query.search import Filters, check_types
from gmtool.settings import Settings
from gmtool.storage import layout
from gmtool.types import (
    Entry,
    Failure,
    JSONValue,
    Problem,
    ReadResult,
    ScanReport,
    SearchResult,
    SourceMeta,
    TocNode,
    TocResult,
    VerifyReport,
    WhereArg,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Future

    from gmtool.index.indexer import Progress
    from gmtool.query.where import Condition
    from gmtool.rank.embed import Embedder


def _parse_where(where: WhereArg) -> list[Condition]:
    if not where:
        return []
    from gmtool.query.where import parse_where, parse_where_dict

    return parse_where_dict(where) if isinstance(where, dict) else parse_where(list(where))


def _check_library(paths: config.Paths) -> None:
    """A library the user named (-L, $GMTOOL_LIBRARY) must be a folder: a typo or a file is an
    error, never an empty library."""
    lib = paths.library
    where = "--library" if paths.library_from == "flag" else f"${config.ENV_LIBRARY}"
    if not lib.exists():
        raise UsageError("LIBRARY_NOT_FOUND", f"library {lib} does not exist",
                         f"check {where}: it names the folder holding your rulebooks")
    if not lib.is_dir():
        raise UsageError("INVALID_LIBRARY", f"library {lib} is not a folder",
                         f"{where} takes the folder holding your rulebooks, not a file")


def _check_count(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UsageError("INVALID_ARGUMENT", f"{name} must be a whole number of at least 1, not {value!r}",
                         f"give {name} as a count such as 10")


def _check_fraction(name: str, value: float, upper: float | None = 1.0, strict: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    ok = ok and (value > 0 if strict else value >= 0) and (upper is None or value <= upper)
    if not ok:
        span = f"between 0 and {upper:g}" if upper is not None else ("above 0" if strict else "0 or more")
        raise UsageError("INVALID_ARGUMENT", f"{name} must be a number {span}, not {value!r}",
                         f"give {name} as a number {span}, such as 0.5")


OCR_HINT = "run OCR on it first, e.g. `ocrmypdf in.pdf out.pdf`, then `gmtool scan`"


class Engine:
    def __init__(self, library: str | Path | None = None, settings: Settings | None = None) -> None:
        self.settings = settings or Settings.from_env()
        self.paths = config.resolve(library, self.settings)
        if self.paths.library_from in ("flag", "env"):
            _check_library(self.paths)
        self._lib: Library | None = None
        self._embedders: dict[tuple[str, str | None], Embedder] = {}
        self._gpu: Future[Embedder] | None = None  # serve: a GPU embedder loading in the background

    # --- read side -------------------------------------------------------------------------

    def library(self) -> Library:
        """The current snapshot; reloaded when another process has rewritten the manifest."""
        if self._lib is None or not self._lib.is_current():
            self._lib = Library(self.paths.index_dir)
        return self._lib

    @property
    def snapshot_stamp(self) -> tuple[int, int] | None:
        """The stamp of the snapshot in memory (None before the first read); it changes exactly when
        a read loads a newer one, so a long-lived caller can tell that the old one was let go."""
        return self._lib.stamp if self._lib is not None else None

    def has_index(self) -> bool:
        return layout.manifest_path(self.paths.index_dir).exists()

    def sources(self) -> list[SourceMeta]:
        lib = self.library()
        return [lib.metas[sid] for sid in sorted(lib.metas)]

    def book_problems(self) -> list[Failure]:
        """What `ls` must not keep quiet about: library files the last scans could not index (a
        scanned PDF without a text layer, an encrypted or damaged file), with the code and fix
        recorded then, and indexed books most of whose pages have no text layer."""
        if not self.has_index():
            return []
        lib = self.library()
        out = [Failure(path, f.code, f.message, f.hint) for path, f in sorted(lib.manifest.state.failed.items())]
        for m in lib.metas.values():
            blank = len(m.pages_without_text)
            if m.pages and blank * 2 >= m.pages:
                out.append(Failure(m.file, "NO_TEXT_LAYER", f"{blank} of its {m.pages} pages have no text layer "
                                   "(scanned?), so their words cannot be found", OCR_HINT))
        return out

    def source_id(self, name: str) -> str:
        """The source a user means by `name` (id, file name with or without its extension, stem
        or title slug): the one resolver behind every command and MCP tool."""
        from gmtool.query.resolve import find_sources, nearest_ids

        lib = self.library()
        found = find_sources(lib.metas, name)
        if len(found) == 1:
            return found[0]
        if found:
            raise UsageError(
                "SOURCE_AMBIGUOUS", f"'{name}' names {len(found)} sources: {', '.join(found)}", "give one of these ids"
            )
        raise UsageError("SOURCE_NOT_FOUND", f"no source '{name}'",
                         f"did you mean: {', '.join(nearest_ids(lib.metas, name))}? (`gmtool ls` lists them)")

    def toc(
        self,
        source_id: str,
        depth: int | None = None,
        types: list[str] | None = None,
        where: WhereArg = None,
    ) -> TocResult:
        if depth is not None:
            _check_count("depth", depth)
        sid = self.source_id(source_id)
        lib = self.library()
        rec = lib.require(sid)
        types = check_types(types)
        conds = _parse_where(where)
        entries = rec.entries

        def node(i: int, e: Entry) -> TocNode:
            return {
                "title": e.title,
                "level": e.level,
                "page": e.page,
                "page_label": e.page_label if e.page_label is not None else lib.page_label(sid, e.page),
                "end_page": e.end_page or e.page,  # None for Markdown/text
                "content_type": e.content_type,
                "fields": e.fields or None,
                "index": i,
                "line": e.line,
                "file": e.file,
                "children": [],
            }

        out: list[TocNode] = []
        if conds:
            from gmtool.query.where import check_filters, fields_seen

            check_filters(conds, types, fields_seen([e.content_type for e in entries], [e.fields for e in entries]))
        if types is not None or conds:
            from gmtool.query.where import matches

            for i, e in enumerate(entries):
                if types is not None and e.content_type not in types:
                    continue
                if conds and not matches(e.fields, conds):
                    continue
                out.append(node(i, e))
            total = len(out)
        else:
            nodes: list[TocNode] = []
            depth_of: list[int] = []
            total = 0
            for i, e in enumerate(entries):
                d = 1 if e.parent is None else depth_of[e.parent] + 1
                depth_of.append(d)
                n = node(i, e)
                nodes.append(n)
                if depth is not None and d > depth:
                    continue
                total += 1
                if e.parent is None:
                    out.append(n)
                else:
                    nodes[e.parent]["children"].append(n)
        meta = lib.metas[sid]
        return TocResult(sid, meta.title, meta.file, out, total)

    def search(
        self,
        query: str,
        types: list[str] | None = None,
        sources: list[str] | None = None,
        limit: int = 20,
        where: WhereArg = None,
        all_copies: bool = False,
    ) -> SearchResult:
        from gmtool.query.search import search

        _check_count("limit", limit)
        flt = Filters(types=types, sources=sources, where=_parse_where(where))
        return search(self.library(), query, flt, limit=limit, all_copies=all_copies)

    def ask(
        self,
        query: str,
        types: list[str] | None = None,
        sources: list[str] | None = None,
        limit: int = 10,
        min_score: float | None = None,
        where: WhereArg = None,
        device: str = "auto",
        timeout: float = 10.0,
        ranker: str = "hybrid",
        explain: bool = False,
        all_copies: bool = False,
    ) -> SearchResult:
        from gmtool.query.ask import ask

        _check_count("limit", limit)
        if min_score is not None:  # None: the calibrated default (query.ranking.ask_min_score)
            _check_fraction("min_score", min_score)
        _check_fraction("timeout", timeout, upper=None, strict=True)
        flt = Filters(types=types, sources=sources, where=_parse_where(where))
        lib = self.library()
        return ask(
            lambda d: self.question_embedder(d, lib), lib, query, flt, limit=limit, min_score=min_score,
            device=device, timeout=timeout, ranker=ranker, explain=explain, all_copies=all_copies,
        )

    def embedder(self, device: str = "auto", graph: str | None = None) -> Embedder:
        """Loaded once per device and graph and kept warm (the MCP server relies on this)."""
        key = (device, graph)
        if key not in self._embedders:
            from gmtool.rank.embed import load_embedder

            self._embedders[key] = load_embedder(device=device, settings=self.settings, graph=graph)
        return self._embedders[key]

    def question_embedder(self, requested: str, lib: Library) -> Embedder:
        """The embedder for one question (see gmtool.rank.device): the CPU unless CUDA is asked
        for, or a GPU session that `warm_gpu` opened is ready; always the graph of the index."""
        from gmtool.index.embedding import graph_of
        from gmtool.rank.device import for_question

        graph = graph_of(lib.manifest.state.vector_space)
        gpu = self._gpu
        if requested == "auto" and graph != "rewrite" and gpu is not None and gpu.done() and not gpu.exception():
            return gpu.result()
        return self.embedder(for_question(requested).device, graph)

    def warm_gpu(self) -> Future[Embedder] | None:
        """For a long-lived server: open a GPU session in the background, used by questions once
        it is ready (until then they run on the CPU). None when no GPU is usable or the index's
        vectors come from the CPU-only graph."""
        from gmtool.index.embedding import graph_of
        from gmtool.rank import cuda

        if self._gpu is not None:
            return self._gpu
        if not self.has_index() or graph_of(self.library().manifest.state.vector_space) == "rewrite":
            return None
        if not cuda.RUNTIME.check()[0]:
            return None
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(1, thread_name_prefix="gmtool-gpu-load")
        self._gpu = pool.submit(self._load_gpu)
        pool.shutdown(wait=False)
        return self._gpu

    def _load_gpu(self) -> Embedder:
        from gmtool.errors import GmtoolError
        from gmtool.rank.embed import load_embedder

        emb = load_embedder(device="cuda", settings=self.settings, graph="shipped")
        if emb.device != "cuda":
            raise GmtoolError("GPU_NOT_AVAILABLE", "; ".join(emb.warnings) or "CUDA could not be used", "")
        return emb

    def embedding_status(self) -> dict[str, JSONValue]:
        """How far the sentence vectors are: books and sections still waiting (for `ls`, `doctor`)."""
        from gmtool.storage.vectors import embedding_status

        lib = self.library()
        state = lib.manifest.state
        return embedding_status(self.paths.index_dir, lib.metas, state.vector_space, state.vector_device)

    def read(
        self, source_id: str, title: str | None = None, page: int | None = None, max_chars: int = 8000
    ) -> ReadResult:
        from gmtool.query.reader import read_page, read_section

        if title is not None and not title.strip():
            raise UsageError("INVALID_QUERY", "the section title is empty", 'e.g. gmtool show SOURCE "Fireball"')
        if max_chars < 0:
            raise UsageError("INVALID_ARGUMENT", f"max_chars must be 0 (no cut) or more, not {max_chars}",
                             "e.g. --max-chars 8000")
        sid = self.source_id(source_id)
        lib = self.library()
        if title is None and page is None:
            raise UsageError("INVALID_QUERY", "give a section title or --page N", 'e.g. gmtool show SOURCE "Fireball"')
        if title is not None:
            return read_section(lib, sid, title, max_chars, page=page)
        assert page is not None
        return read_page(lib, sid, page, max_chars)

    # --- write side ------------------------------------------------------------------------

    def scan(
        self,
        force: bool = False,
        *,
        embed: bool = True,
        workers: int | None = None,
        device: str = "auto",
        wait: bool = True,
        progress: Progress | None = None,
        notice: Callable[[str], None] | None = None,
    ) -> ScanReport:
        """`index` over the whole library; `notice` hears at once when it waits for another writer."""
        from gmtool.index.indexer import run_index

        if workers is not None:
            _check_count("workers", workers)
        report = run_index(
            self.paths, force=force, embed=embed, workers=workers, device=device, wait=wait, progress=progress,
            notice=notice, settings=self.settings,
        )
        self._lib = None
        return report

    def index(
        self,
        files: list[Path] | None = None,
        force_clean: bool = False,
        *,
        include: list[str] | None = None,
        exclude: list[str] | None = None,
        types: list[str] | None = None,
        force: bool = False,
        max_files: int = 250_000,
        workers: int | None = None,
        embed: bool = True,
        wait: bool = True,
        device: str = "auto",
        progress: Progress | None = None,
        notice: Callable[[str], None] | None = None,
    ) -> ScanReport:
        from gmtool.index.indexer import run_index

        _check_count("max_files", max_files)
        if workers is not None:
            _check_count("workers", workers)
        if force_clean:
            self.clean(wait=wait)
        report = run_index(
            self.paths, files=files, include=include, exclude=exclude, types=types, force=force,
            max_files=max_files, workers=workers, embed=embed, wait=wait, device=device, progress=progress,
            notice=notice, settings=self.settings,
        )
        self._lib = None
        return report

    def clean(self, wait: bool = True) -> None:
        """Wipe the index (corruption recovery): only the files gmtool wrote; INDEX_DIR_NOT_OURS
        for a folder that is not a gmtool index."""
        d = self.paths.index_dir
        if d.exists():
            from gmtool.storage import store

            with store.writer_lock(d, wait=wait):
                store.clean(d)
        self._lib = None

    def verify(self) -> VerifyReport:
        from gmtool.index.verify import verify

        return verify(self.paths)

    def doctor(self, device: str = "auto") -> dict[str, dict[str, JSONValue]]:
        from gmtool.engine.doctor import doctor

        return doctor(self, device)


__all__ = ["Engine", "GmtoolError", "Problem", "ReadResult", "TocResult", "VerifyReport"]
