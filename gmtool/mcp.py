"""`gmtool serve`: the Engine behind MCP tools over stdio.

Every tool calls the one warm Engine and returns the CLI's `--json` shape (gmtool.present.jsonout)
as structured content, plus a short text rendering; a GmtoolError becomes a ToolError that reads
"CODE: message (hint: ...)". stdout carries only protocol messages: while serving, the MCP stdio
transport points fd 1 at stderr, so stray prints (and extraction workers) cannot reach the wire.
"""

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import asdict
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio
import anyio.from_thread
import anyio.to_thread
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ResourceError, ToolError
from fastmcp.tools.base import ToolResult
from mcp_types import TextContent, ToolAnnotations

from gmtool.engine import Engine
from gmtool.errors import GmtoolError
from gmtool.present.jsonout import scan_dict, search_dict, source_dict
from gmtool.present.shapes import (
    IndexOut,
    LibraryOut,
    ScanOut,
    SearchOut,
    TocOut,
)
from gmtool.types import CONTENT_TYPES, ReadResult, TocNode, TocResult

MAX_CHARS = 20_000  # every tool result stays under this (structured JSON)
PAGE_CHARS = 15_000  # a TOC page's budget, leaving room for the envelope
MAX_READ_CHARS = 18_000
MAX_LIMIT = 50
EMPTY_LIBRARY = "No sources indexed yet; run scan_library"
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


T = TypeVar("T")


# --- the service: one warm engine, errors translated in one place ---------------------------------------------


def tool_error(exc: GmtoolError) -> ToolError:
    hint = exc.hint
    if exc.code == "INDEX_NOT_FOUND":
        hint = "run scan_library (or `gmtool scan DIR`) first"
    hint = hint.replace("`gmtool ls` lists them", "list_library lists them").replace("gmtool ls", "list_library")
    return ToolError(f"{exc.code}: {exc.message}" + (f" (hint: {hint})" if hint else ""))


class Service:
    """The warm Engine, shared by every call; writers use their own Engine and a separate lock."""

    def __init__(self, library: Path | None) -> None:
        self.engine = Engine(library)
        self._read = threading.RLock()
        self._write = threading.Lock()

    @contextmanager
    def reading(self) -> Iterator[Engine]:
        with self._read:
            try:
                yield self.engine
            except GmtoolError as exc:
                raise tool_error(exc) from None

    def call(self, fn: Callable[[Engine], T]) -> T:
        with self.reading() as eng:
            return fn(eng)

    def write(self, fn: Callable[[Engine], T]) -> T:
        """Scans run on a fresh Engine so readers stay usable; they see the result via the manifest stamp."""
        with self._write:
            try:
                return fn(Engine(self.engine.paths.library))
            except GmtoolError as exc:
                raise tool_error(exc) from None

    def has_embeddings(self) -> bool:
        return any((self.engine.paths.index_dir / "vectors").glob("*.npy"))

    def warm(self) -> None:
        """Load the index (and the embedding model when vectors exist) before the first question."""
        try:
            with self._read:
                if not self.engine.has_index():
                    return
                self.engine.library().keyword()
            if self.has_embeddings():
                with self._read:
                    self.engine.embedder("auto")
        except Exception as exc:  # noqa: BLE001 - warming is best effort; the first call reports real errors
            print(f"gmtool serve: warm-up skipped: {exc}", file=sys.stderr)

    def instructions(self) -> str:
        base = (
            "gmtool indexes tabletop RPG rulebooks (PDF, Markdown, text). Use search_library for names "
            "(a spell, a monster), ask_books for plain-language questions, read_section to quote the text, "
            "get_library_toc to browse a book. Results give book (source_id) and page. "
            f"Content types: {', '.join(CONTENT_TYPES)}."
        )
        try:
            if not self.engine.has_index():
                return f"{base}\nThe library {self.engine.paths.library} has no index yet: call scan_library first."
            with self._read:
                metas = self.engine.sources()
        except GmtoolError as exc:
            return f"{base}\nThe index could not be read ({exc.code}); call scan_library."
        types: dict[str, int] = {}
        for m in metas:
            for t, n in m.type_counts.items():
                types[t] = types.get(t, 0) + n
        present = ", ".join(f"{t} ({n})" for t, n in sorted(types.items(), key=lambda kv: -kv[1])) or "none"
        emb = "yes (ask_books ranks by meaning and keywords)" if self.has_embeddings() else (
            "no (ask_books is keyword-only; scan_library adds them)")
        return (
            f"{base}\nLibrary {self.engine.paths.library}: {len(metas)} books "
            f"({', '.join(m.source_id for m in metas[:12])}{', ...' if len(metas) > 12 else ''}). "
            f"Types present: {present}. Embeddings: {emb}."
        )


# --- shaping helpers --------------------------------------------------------------------------------------


def _size(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str))


def fit(data: Any, key: str, limit: int = MAX_CHARS) -> Any:
    """Drop items from the end of data[key] until the JSON fits; say so in warnings when present."""
    items = data[key]
    dropped = 0
    while items and _size(data) > limit:
        cut = max(1, len(items) // 5)
        del items[-cut:]
        dropped += cut
    if dropped and isinstance(data.get("warnings"), list):
        data["warnings"].append(f"RESULTS_CAPPED: {dropped} results left out to stay under {limit} characters")
    return data


def result(data: Any, text: str) -> Any:
    """Structured content (the JSON shape) plus a short text rendering."""
    return ToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def library_data(eng: Engine) -> dict[str, Any]:
    metas = eng.sources() if eng.has_index() else []
    metas = sorted(metas, key=lambda m: (-m.entry_count, m.source_id))
    data: dict[str, Any] = {"sources": [source_dict(m) for m in metas]}
    if not metas:
        data["message"] = EMPTY_LIBRARY
    return data


def library_text(data: dict[str, Any]) -> str:
    if not data["sources"]:
        return EMPTY_LIBRARY
    lines = [f"{len(data['sources'])} sources (most entries first):"]
    for s in data["sources"]:
        types = ", ".join(f"{t} {n}" for t, n in sorted(s["types"].items(), key=lambda kv: -kv[1]))
        lines.append(f"- {s['source_id']}: {s['title']} ({s['pages'] if s['pages'] is not None else s.get('lines')} {'pages' if s['pages'] is not None else 'lines'}, {s['entries']} entries"
                     + (f"; {types}" if types else "") + ")")
    return "\n".join(lines)


def search_text(data: dict[str, Any]) -> str:
    lines = [f"{len(data['results'])} results for '{data['query']}' ({data['mode']})"]
    for h in data["results"]:
        label = f"p.{h['page_label'] or h['page']}" if h["page"] is not None else f"l.{h.get('line')}"
        lines.append(f"{h['rank']}. {h['title']} [{h['content_type'] or '-'}] {h['source_id']} {label}"
                     f" ({h['score']:.2f})")
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def flat_toc(res: TocResult) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def walk(nodes: list[TocNode], depth: int) -> None:
        for n in nodes:
            row: dict[str, Any] = {k: v for k, v in n.items() if k != "children"}
            row["depth"] = depth
            out.append(row)
            walk(n["children"], depth + 1)

    walk(res.entries, 1)
    return out


def toc_page(res: TocResult, cursor: str | None, budget: int = PAGE_CHARS) -> dict[str, Any]:
    rows = flat_toc(res)
    start = 0
    if cursor:
        try:
            start = int(cursor)
        except ValueError:
            start = -1
        if not 0 <= start < max(len(rows), 1):
            raise ToolError(f"INVALID_CURSOR: '{cursor}' is not a cursor from get_library_toc "
                            "(hint: pass next_cursor from the previous page, or leave it out)")
    page: list[dict[str, Any]] = []
    used = 0
    i = start
    while i < len(rows):
        n = _size(rows[i]) + 2
        if page and used + n > budget:
            break
        page.append(rows[i])
        used += n
        i += 1
    return {"source_id": res.source_id, "source_name": res.source_name, "file": res.file, "entries": page,
            "total": len(rows), "next_cursor": str(i) if i < len(rows) else None}


def toc_text(data: dict[str, Any]) -> str:
    lines = [f"{data['source_name']} ({data['source_id']}): entries {len(data['entries'])} of {data['total']}"]
    for n in data["entries"]:
        where = f"p.{n['page_label'] or n['page']}" if n["page"] is not None else f"l.{n['line']}"
        lines.append(f"{'  ' * (n['depth'] - 1)}{n['title']}  {where}"
                     + (f" [{n['content_type']}]" if n["content_type"] else ""))
    if data["next_cursor"]:
        lines.append(f"(more: call again with cursor='{data['next_cursor']}')")
    return "\n".join(lines)


def read_text(d: dict[str, Any]) -> str:
    where = f"{d['source_name']} ({d['source_id']}), " + (
        f"page {d['page_label'] or d['page']}" if d["page"] is not None else f"line {d.get('line')}")
    head = f"{d['title']} — {where}" if d["title"] else where
    nav = f"\n[previous: {d['previous_title'] or '-'} | next: {d['next_title'] or '-'}]"
    return f"{head}\n\n{d['text']}" + (" …(truncated)" if d["truncated"] else "") + nav


def scan_text(d: dict[str, Any]) -> str:
    lines = [(f"indexed {d['indexed']}, unchanged {d['unchanged']}, removed {d['removed']}, failed "
              f"{len(d['failed'])} of {d['files_found']} files; {d['sections']} sections, "
              f"{d['embeddings_generated']} embeddings, {d['duration_ms']} ms")]
    lines += [f"failed: {f['file']}: {f['code']}: {f['message']}" for f in d["failed"][:20]]
    lines += [f"warning: {w}" for w in d["warnings"][:20]]
    return "\n".join(lines)


def _cap_scan(d: Any) -> Any:
    for key in ("indexed_files", "warnings", "failed"):
        if len(d[key]) > 100:
            n = len(d[key]) - 100
            d[key] = d[key][:100]
            if key == "warnings":
                d[key].append(f"... {n} more warnings in the log file")
    return d


def _limit(n: int) -> int:
    return max(1, min(int(n), MAX_LIMIT))


def _none_if_unset(v: list[str] | None) -> list[str] | None:
    return None if v is None else list(v)


# --- the server ---------------------------------------------------------------------------------------------


def build_server(library: Path | None = None) -> FastMCP:
    svc = Service(library)
    mcp = FastMCP("gmtool", instructions=svc.instructions())
    mcp.gmtool_service = svc  # type: ignore[attr-defined]

    def progress_cb(ctx: Context) -> Callable[[int, int, str], None]:
        last = [0.0]

        def cb(done: int, total: int, message: str) -> None:
            now = time.monotonic()
            if now - last[0] < 0.1 and done < total:
                return
            last[0] = now
            try:
                anyio.from_thread.run(ctx.report_progress, done, total or None, message[:200])
            except Exception as exc:  # noqa: BLE001 - a vanished client must not stop the scan
                print(f"gmtool serve: progress not sent: {exc}", file=sys.stderr)

        return cb

    @mcp.tool(annotations=WRITES)
    async def scan_library(ctx: Context, force: bool = False, embed: bool = True) -> ScanOut:
        """Discover and index every PDF/Markdown/text file in the library folder (unchanged files are
        skipped). Reports progress while it runs. force: re-index every file; embed: also compute the
        sentence embeddings used by ask_books (slower)."""
        cb = progress_cb(ctx)
        report = await anyio.to_thread.run_sync(
            lambda: svc.write(lambda e: e.scan(force=force, embed=embed, progress=cb)))
        data = _cap_scan(scan_dict(report))
        return result(data, scan_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def list_library(format: Literal["json", "text"] = "json") -> LibraryOut:
        """The indexed books: id, title, pages, entry counts per content type; largest first.
        format: 'text' for a compact table in the text content, 'json' for the JSON in it."""
        data = svc.call(library_data)
        if _size(data) > MAX_CHARS:
            fit(data, "sources")
        text = library_text(data) if format == "text" else json.dumps(data, ensure_ascii=False)
        return result(data, text)

    @mcp.tool(annotations=READ_ONLY)
    def get_library_toc(source_id: str, depth: int | None = None, content_type: str | None = None,
                        cursor: str | None = None) -> TocOut:
        """A book's table of contents, flattened in document order (depth = nesting level), paged:
        when next_cursor is set, call again with cursor=next_cursor for the rest. content_type keeps
        only entries of that type; depth limits the nesting shown."""
        types = [content_type] if content_type else None
        res = svc.call(lambda e: e.toc(source_id, depth=depth, types=types))
        data = toc_page(res, cursor)
        return result(data, toc_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def search_library(query: str, content_types: list[str] | None = None, documents: list[str] | None = None,
                       limit: int = 20, where: list[str] | dict[str, Any] | None = None) -> SearchOut:
        """Fast, typo-tolerant keyword lookup of named things (spells, monsters, items, rules).
        content_types / documents: None = all, [] = nothing. where: typed field filters such as
        ["level=3", "school=evocation"] or {"cr": "<=5"}."""
        res = svc.call(lambda e: e.search(query, types=_none_if_unset(content_types),
                                          sources=_none_if_unset(documents), limit=_limit(limit), where=where))
        data = fit(search_dict(res), "results")
        return result(data, search_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def ask_books(query: str, content_types: list[str] | None = None, documents: list[str] | None = None,
                  limit: int = 10, min_score: float = 0.0,
                  where: list[str] | dict[str, Any] | None = None) -> SearchOut:
        """Ask in plain language ("a tanky spellcaster class", "what happens when I fall"): ranks sections
        by keywords and meaning. Same filters as search_library; min_score drops results below a 0-1 score."""
        res = svc.call(lambda e: e.ask(query, types=_none_if_unset(content_types),
                                       sources=_none_if_unset(documents), limit=_limit(limit),
                                       min_score=min_score, where=where))
        data = fit(search_dict(res), "results")
        return result(data, search_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def read_section(source_id: str, title: str | None = None, page: int | None = None,
                     max_chars: int = 8000) -> ReadResult:
        """The text of a section (by title, with its subsections) or of a physical page, with book,
        page, label and the titles before and after. max_chars cuts the text (at most 18000)."""
        cap = MAX_READ_CHARS if max_chars <= 0 else min(max_chars, MAX_READ_CHARS)
        res = svc.call(lambda e: e.read(source_id, title=title, page=page, max_chars=cap))
        data = asdict(res)
        return result(data, read_text(data))

    @mcp.tool(annotations=WRITES)
    async def index_library(ctx: Context, files: list[str] | None = None, include: list[str] | None = None,
                            exclude: list[str] | None = None, force: bool = False, verify: bool = False,
                            embed: bool = True) -> IndexOut:
        """Targeted indexing: exactly these files (paths relative to the library), or files matching
        include/exclude globs; force re-indexes unchanged files. verify=true only checks the index
        (missing, stale, orphaned, corrupt entries) and changes nothing."""
        if verify:
            rep = await anyio.to_thread.run_sync(lambda: svc.call(lambda e: e.verify()))
            v = asdict(rep)
            v["problems"] = v["problems"][:100]
            text = "index healthy" if rep.healthy else "\n".join(
                f"{p['code']}: {p['file']}: {p['message']}" for p in v["problems"][:30])
            return result({"action": "verify", "report": None, "verify": v}, text)
        root = svc.engine.paths.library
        paths = None if files is None else [p if p.is_absolute() else root / p for p in map(Path, files)]
        cb = progress_cb(ctx)
        report = await anyio.to_thread.run_sync(lambda: svc.write(
            lambda e: e.index(files=paths, include=include, exclude=exclude, force=force, embed=embed,
                              progress=cb)))
        data = _cap_scan(scan_dict(report))
        return result({"action": "index", "report": data, "verify": None}, scan_text(data))

    # --- resources ---------------------------------------------------------------------------------------

    def resource_call(fn: Callable[[Engine], T]) -> T:
        with svc._read:
            try:
                return fn(svc.engine)
            except GmtoolError as exc:
                raise ResourceError(str(tool_error(exc))) from None

    @mcp.resource("gmtool://sources", mime_type="application/json")
    def sources_resource() -> str:
        """The indexed books (the list_library JSON)."""
        return json.dumps(resource_call(library_data), ensure_ascii=False)

    @mcp.resource("gmtool://source/{source_id}/toc", mime_type="application/json")
    def toc_resource(source_id: str) -> str:
        """A book's whole table of contents as a tree (the `gmtool toc --json` shape)."""
        res = resource_call(lambda e: e.toc(source_id))
        return json.dumps({"source_id": res.source_id, "source_name": res.source_name, "file": res.file,
                           "entries": res.entries}, ensure_ascii=False)

    @mcp.resource("gmtool://source/{source_id}/page/{n}", mime_type="application/json")
    def page_resource(source_id: str, n: int) -> str:
        """The text of one physical page of a book (the `gmtool show --page --json` shape)."""
        res = resource_call(lambda e: e.read(source_id, page=int(n), max_chars=MAX_READ_CHARS))
        return json.dumps(asdict(res), ensure_ascii=False)

    return mcp


def run_server(library: Path | None) -> None:
    """Serve over stdio until stdin closes. Logs go to stderr; stdout carries only MCP messages."""
    import logging

    logging.getLogger("fastmcp").setLevel(logging.WARNING)
    with redirect_stdout(sys.stderr):  # the transport has not claimed fd 1 yet
        mcp = build_server(library)
    svc: Service = mcp.gmtool_service  # type: ignore[attr-defined]
    threading.Thread(target=svc.warm, name="gmtool-warm", daemon=True).start()
    try:
        mcp.run(transport="stdio", show_banner=False, log_level="WARNING")
    except KeyboardInterrupt:
        pass
