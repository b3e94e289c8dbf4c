"""`gmtool serve`: the Engine behind MCP tools over stdio.

A thin shell: each tool checks its arguments against limits declared in its schema, calls the one
warm Engine, and returns the CLI's `--json` shape as structured content plus a short text
(gmtool.present.mcpout). Every failure a client can cause becomes a tool error reading
"CODE: message (hint: ...)" and one log line on stderr; tracebacks only with `gmtool --debug serve`.
stdout carries only protocol messages: while serving, the MCP stdio transport points fd 1 at
stderr, so stray prints (and extraction workers) cannot reach the wire.
"""

import functools
import json
import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar
from urllib.parse import urlencode

import anyio
import anyio.from_thread
import anyio.to_thread
from fastmcp import Context, FastMCP
from fastmcp.exceptions import FastMCPError, ResourceError, ToolError, ValidationError
from fastmcp.server.middleware import Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolRequestParams, TextContent, ToolAnnotations
from pydantic import BeforeValidator, Field
from pydantic import ValidationError as PydanticValidationError

from gmtool.engine import Engine
from gmtool.errors import GmtoolError, UsageError
from gmtool.mcpstdio import serve_stdio
from gmtool.present import mcpout
from gmtool.present.jsonout import scan_dict, search_dict
from gmtool.present.shapes import IndexOut, LibraryOut, ScanOut, SearchOut, TocOut
from gmtool.present.terminal import line as one_line
from gmtool.types import CONTENT_TYPES, ReadResult, SearchResult

log = logging.getLogger("gmtool.mcp")

MAX_LIMIT = 50  # results per call: more would not fit the 20,000-character budget anyway
MAX_READ_CHARS = 18_000  # read_section's text, leaving room for the envelope under mcpout.MAX_CHARS
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

# Argument limits live in the schema, so a client sees them and a value outside them is an error
# (INVALID_ARGUMENT, or INVALID_PAGE for a page), never silently clamped.


def _not_bool(v: Any) -> Any:
    """JSON true is no count: pydantic would read it as 1."""
    if isinstance(v, bool):
        raise ValueError("a number is required, not a boolean")
    return v


NoBool = BeforeValidator(_not_bool)
SearchLimit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"how many results, 1-{MAX_LIMIT}"), NoBool]
MinScore = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False, description="drop results scoring below this (0-1)"),
                     NoBool]
Page = Annotated[int | None, Field(ge=1, description="a physical page, 1-based"), NoBool]
Title = Annotated[str | None, Field(min_length=1, pattern=r"\S", description="a section title, e.g. 'Fireball'")]
MaxChars = Annotated[int, Field(ge=0, le=MAX_READ_CHARS,
                                description=f"cut the text after this many characters (0: up to {MAX_READ_CHARS})"), NoBool]
Depth = Annotated[int | None, Field(ge=1, description="show at most this many nesting levels"), NoBool]
# Array arguments also take a JSON-encoded array or one plain string: the MCP Inspector CLI passes
# every --tool-arg value as a string when the schema is not a plain array.
Where = Annotated[list[str] | dict[str, Any] | str | None, Field(
    description='typed field filters: ["level=3", "school=evocation"], {"cr": "<=5"}, or one expression "cr<=5"')]
Types = Annotated[list[str] | str | None, Field(
    description=f"only these content types ({', '.join(CONTENT_TYPES)}); None: all, []: none")]
Sources = Annotated[list[str] | str | None, Field(
    description="only these books: id, unique start of an id, file name or title; None: all, []: none")]
Source = Annotated[str | None, Field(description="the book: id, unique start of an id, file name or title")]
Names = Annotated[list[str] | str | None, Field(description="an array of paths or globs (or one, as a string)")]
OLD_NAME = "the old name of {}, still accepted"

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter number
MMAP_THRESHOLD = 1 << 20  # blocks of 1 MiB and more (keyword matrices, vectors) are mmapped and given back

T = TypeVar("T")
PAGE_NUMBER = re.compile(r"[0-9]{1,9}")


# --- errors: one line for the client, one line for the log ------------------------------------------------------


class ResourceFailure(ResourceError, MCPError):
    """An expected failure to read a resource, as the wire carries it: JSON-RPC -32602 when the URI
    names what is not there or asks for it wrongly, -32000 when the index cannot answer (never
    -32603, which says the server broke), with gmtool's code, message and hint in `data`.
    A ResourceError first, so fastmcp logs it at its level and passes the MCPError on as it is."""

    def __init__(self, rpc_code: int, line: str, data: dict[str, str]) -> None:
        MCPError.__init__(self, rpc_code, line, data)
        self.log_level = logging.DEBUG


SERVER_ERROR = -32000  # JSON-RPC's range for an implementation's own errors: the index, not the request
NOT_THERE = frozenset({"SOURCE_NOT_FOUND", "SECTION_NOT_FOUND", "SECTION_NOT_ON_PAGE"})


def failure(exc: BaseException, tool: str, kind: type[FastMCPError], debug: bool) -> FastMCPError:
    """The client's error for `exc`, logged once (code and message) as this server's own line.

    fastmcp logs the error it is handed at the level it carries; DEBUG keeps its traceback out of
    the log unless --debug asks for it."""
    level = logging.WARNING
    if isinstance(exc, GmtoolError):
        code, message, hint = exc.code, exc.message, mcpout.mcp_hint(exc.code, exc.hint, tool)
    else:  # a bug: one line still, the traceback with --debug
        level, code, message = logging.ERROR, "INTERNAL_ERROR", f"{type(exc).__name__}: {exc}"
        hint = "the server's log has the details (start it with `gmtool --debug serve` for the traceback); please report it"
    traced = debug and exc.__traceback__ is not None  # an argument error has no traceback worth showing
    log.log(level, "%s: %s", tool, mcpout.error_line(code, message), exc_info=exc if traced else None)
    line = mcpout.error_line(code, message, hint)
    if kind is ResourceError and isinstance(exc, GmtoolError):
        rpc = INVALID_PARAMS if isinstance(exc, UsageError) or code in NOT_THERE else SERVER_ERROR
        return ResourceFailure(rpc, line, {"code": code, "message": mcpout.one_line(message), "hint": hint})
    return kind(line, log_level=logging.DEBUG)


def argument_error(exc: ValidationError, schema: dict[str, Any]) -> UsageError:
    """fastmcp's schema check failed: name the argument, what was wrong and what it accepts."""
    cause = exc.__cause__
    errors = cause.errors() if isinstance(cause, PydanticValidationError) else []
    if not errors:
        return UsageError("INVALID_ARGUMENT", str(exc).splitlines()[0], "check the arguments against the tool's schema")
    err = errors[0]
    props: dict[str, Any] = schema.get("properties", {})
    name = str(err["loc"][0]) if err.get("loc") else "arguments"
    if err["type"] == "unexpected_keyword_argument":
        return UsageError("INVALID_ARGUMENT", f"unknown argument '{name}'", f"arguments: {', '.join(props)}")
    if err["type"] == "missing_argument":
        return UsageError("INVALID_ARGUMENT", f"{name} is required", _accepts(name, props.get(name, {})))
    if err["type"] in ("string_pattern_mismatch", "string_too_short"):
        return UsageError("INVALID_ARGUMENT", f"{name} is blank", _accepts(name, props.get(name, {})))
    got = json.dumps(err.get("input"), default=str)[:80]
    code = "INVALID_PAGE" if name == "page" else "INVALID_ARGUMENT"
    return UsageError(code, f"{name}: {err['msg']} (got {got})", _accepts(name, props.get(name, {})))


def _accepts(name: str, prop: dict[str, Any]) -> str:
    options = prop.get("anyOf", [prop])
    kinds = [o.get("type", "value") for o in options if o.get("type") != "null"]
    bounds = [f"{word} {o[key]}" for o in options for key, word in (("minimum", "from"), ("maximum", "to"))
              if key in o]
    text = f"{name}: {' or '.join(kinds) or 'a value'}" + (f" {' '.join(bounds)}" if bounds else "")
    return text + (f" ({prop['description']})" if prop.get("description") else "")


class ArgumentErrors(Middleware):
    """Turns fastmcp's argument validation failures into the server's coded errors."""

    def __init__(self, debug: bool) -> None:
        self.debug = debug

    async def on_call_tool(self, context: MiddlewareContext[CallToolRequestParams], call_next: Any) -> Any:
        try:
            return await call_next(context)
        except ValidationError as exc:
            name = context.message.name
            schema: dict[str, Any] = {}
            if context.fastmcp_context is not None:
                tool = await context.fastmcp_context.fastmcp.get_tool(name)
                schema = tool.parameters if tool is not None else {}
            raise failure(argument_error(exc, schema), name, ToolError, self.debug) from None


# --- the service: one warm engine, errors translated in one place ---------------------------------------------


class Service:
    """The warm Engine, shared by every call; writers use their own Engine and a separate lock."""

    def __init__(self, library: Path | None, debug: bool = False) -> None:
        self.engine = Engine(library)
        self.debug = debug
        self._read = threading.RLock()
        self._write = threading.Lock()
        self._stamp: tuple[int, int] | None = None  # the snapshot the last read used

    @contextmanager
    def _failing_as(self, tool: str, kind: type[FastMCPError]) -> Iterator[None]:
        try:
            yield
        except FastMCPError:
            raise
        except Exception as exc:  # noqa: BLE001 - every failure reaches the client as one coded line
            raise failure(exc, tool, kind, self.debug) from None

    def call(self, tool: str, fn: Callable[[Engine], T], kind: type[FastMCPError] = ToolError) -> T:
        with self._read, self._failing_as(tool, kind):
            out = fn(self.engine)
            stamp = self.engine.snapshot_stamp
            if stamp != self._stamp:
                if self._stamp is not None:  # a scan swapped a new snapshot in: the old one is garbage now
                    release_old_snapshot()
                self._stamp = stamp
            return out

    def write(self, tool: str, fn: Callable[[Engine], T]) -> T:
        """Scans run on a fresh Engine so readers stay usable; they see the result via the manifest stamp."""
        with self._write, self._failing_as(tool, ToolError):
            return fn(Engine(self.engine.paths.library, settings=self.engine.settings))

    def has_embeddings(self) -> bool:
        from gmtool.storage.vectors import has_vectors

        return has_vectors(self.engine.paths.index_dir)

    def warm(self) -> None:
        """Load the index (and the embedding model when vectors exist) before the first question."""
        try:
            with self._read:
                if not self.engine.has_index():
                    return
                self.engine.library().keyword()
            if self.has_embeddings():
                with self._read:  # questions run on the CPU at once, on a GPU once its session is open
                    self.engine.question_embedder("cpu", self.engine.library())
                    self.engine.warm_gpu()
        except Exception as exc:  # noqa: BLE001 - warming is best effort; the first call reports real errors
            log.warning("warm-up skipped: %s", mcpout.one_line(str(exc)))

    def instructions(self) -> str:
        base = (
            "gmtool indexes tabletop RPG rulebooks (PDF, Markdown, text). Use search_library for names "
            "(a spell, a monster), ask_books for plain-language questions, read_section to quote the text, "
            "get_library_toc to browse a book. Results give book (source_id) and page (or line, for "
            f"Markdown and text). Content types: {', '.join(CONTENT_TYPES)}."
        )
        lib = self.engine.paths.library
        try:
            if not self.engine.has_index():
                return f"{base}\nThe library {lib} has no index yet: call scan_library first."
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
            f"{base}\nLibrary {lib}: {len(metas)} books "
            f"({', '.join(m.source_id for m in metas[:12])}{', ...' if len(metas) > 12 else ''}). "
            f"Types present: {present}. Embeddings: {emb}."
        )


def result(data: Any, text: str) -> Any:
    """Structured content (the JSON shape) plus a short text rendering."""
    return ToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _listed(v: list[str] | str | None, name: str) -> list[str] | None:
    """None (not given) means every type or book; [] means none. A string is a JSON-encoded array
    or one item, as the MCP Inspector CLI sends them."""
    if v is None or isinstance(v, list):
        return v
    text = v.strip()
    if not text.startswith("["):
        return [v]
    try:
        items = json.loads(text)
    except ValueError:
        items = None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise UsageError("INVALID_ARGUMENT", f"{name}: '{one_line(text[:80])}' is not an array of strings",
                         f'give {name} as an array such as ["spell"], or as one string')
    return items


def _where(v: list[str] | dict[str, Any] | str | None) -> list[str] | dict[str, Any] | None:
    """`where` as a list of expressions or an object; a string is JSON-encoded or one expression."""
    if not isinstance(v, str):
        return v
    text = v.strip()
    if text.startswith(("[", "{")):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) or (isinstance(parsed, list) and all(isinstance(i, str) for i in parsed)):
            return parsed
        raise UsageError("INVALID_ARGUMENT", f"where: '{one_line(text[:80])}' is not an array or object",
                         'give where as ["level=3"], {"cr": "<=5"} or one expression "cr<=5"')
    return [v]


def _either(new: T | None, old: T | None, name: str, alias: str) -> T | None:
    """The argument under its CLI name, else under its old MCP name."""
    if new is not None and old is not None and new != old:
        raise UsageError("INVALID_ARGUMENT", f"{name} and {alias} (its old name) disagree",
                         f"give only {name}")
    return new if new is not None else old


def _filters(type_: list[str] | str | None, content_types: list[str] | str | None, source: list[str] | str | None,
             documents: list[str] | str | None) -> tuple[list[str] | None, list[str] | None]:
    """The type and source filters, under their CLI names or their old MCP ones."""
    types = _either(_listed(type_, "type"), _listed(content_types, "content_types"), "type", "content_types")
    sources = _either(_listed(source, "source"), _listed(documents, "documents"), "source", "documents")
    return types, sources


def _required_source(source: str | None, source_id: str | None) -> str:
    sid = _either(source, source_id, "source", "source_id")
    if sid is None or not sid.strip():
        raise UsageError("INVALID_ARGUMENT", "source is required", "source: a book's id, file name or title "
                         "(list_library gives every source_id)")
    return sid


def query_number(name: str, text: str) -> int:
    """A resource URI's numeric query value (?depth=2): a whole number from 1, else INVALID_ARGUMENT."""
    if not PAGE_NUMBER.fullmatch(text) or int(text) < 1:
        raise UsageError("INVALID_ARGUMENT", f"{name}={text!r} is not a whole number from 1", f"e.g. ?{name}=2")
    return int(text)


def page_number(n: str) -> int:
    """A resource URI's page segment: digits, else INVALID_PAGE (as for page 0 or one past the end)."""
    if not PAGE_NUMBER.fullmatch(n):
        raise UsageError("INVALID_PAGE", f"'{n}' is not a page number", "pages are whole numbers from 1")
    return int(n)


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
            log.debug("progress not sent: %s", exc)

    return cb


# --- the server ---------------------------------------------------------------------------------------------


def build_server(library: Path | None = None, debug: bool = False) -> FastMCP:
    svc = Service(library, debug)
    mcp = FastMCP("gmtool", instructions=svc.instructions(), middleware=[ArgumentErrors(debug)])
    mcp.gmtool_service = svc  # type: ignore[attr-defined]
    _add_write_tools(mcp, svc)
    _add_read_tools(mcp, svc)
    _add_resources(mcp, svc)
    return mcp


def _add_write_tools(mcp: FastMCP, svc: Service) -> None:
    @mcp.tool(annotations=WRITES)
    async def scan_library(ctx: Context, force: bool = False, embed: bool = True) -> ScanOut:
        """Discover and index every PDF/Markdown/text file in the library folder (unchanged files are
        skipped). Reports progress while it runs. force: re-index every file; embed: also compute the
        sentence embeddings used by ask_books (slower)."""
        cb = progress_cb(ctx)
        report = await anyio.to_thread.run_sync(
            lambda: svc.write("scan_library", lambda e: e.scan(force=force, embed=embed, progress=cb)))
        data = mcpout.cap_scan(scan_dict(report))
        return result(data, mcpout.scan_text(data))

    @mcp.tool(annotations=WRITES)
    async def index_library(ctx: Context, files: Names = None, include: Names = None, exclude: Names = None,
                            force: bool = False, verify: bool = False, embed: bool = True) -> IndexOut:
        """Targeted indexing: exactly these files (paths relative to the library), or files matching
        include/exclude globs; force re-indexes unchanged files. verify=true only checks the index
        (missing, stale, orphaned, corrupt entries) and changes nothing."""
        if verify:
            rep = await anyio.to_thread.run_sync(lambda: svc.call("index_library", lambda e: e.verify()))
            v = asdict(rep)
            v["problems"] = v["problems"][:mcpout.REPORT_ITEMS]
            return result({"action": "verify", "report": None, "verify": v}, mcpout.verify_text(rep))
        root = svc.engine.paths.library
        cb = progress_cb(ctx)

        def run(e: Engine) -> Any:
            chosen = _listed(files, "files")
            paths = None if chosen is None else [p if p.is_absolute() else root / p for p in map(Path, chosen)]
            return e.index(files=paths, include=_listed(include, "include"), exclude=_listed(exclude, "exclude"),
                           force=force, embed=embed, progress=cb)

        report = await anyio.to_thread.run_sync(lambda: svc.write("index_library", run))
        data = mcpout.cap_scan(scan_dict(report))
        return result({"action": "index", "report": data, "verify": None}, mcpout.scan_text(data))


def _add_read_tools(mcp: FastMCP, svc: Service) -> None:
    @mcp.tool(annotations=READ_ONLY)
    def list_library(format: Literal["json", "text"] = "json") -> LibraryOut:
        """The indexed books: id, title, pages, entry counts per content type; largest first.
        format: 'text' for a compact table in the text content, 'json' for the JSON in it."""
        data = mcpout.library_out(svc.call("list_library", lambda e: e.sources() if e.has_index() else []))
        text = mcpout.library_text(data) if format == "text" else json.dumps(data, ensure_ascii=False)
        return result(data, text)

    @mcp.tool(annotations=READ_ONLY)
    def get_library_toc(source: Source = None, depth: Depth = None, type: Types = None, where: Where = None,
                        cursor: str | None = None,
                        source_id: Annotated[str | None, Field(description=OLD_NAME.format("source"))] = None,
                        content_type: Annotated[str | None, Field(description=OLD_NAME.format("type"))] = None,
                        ) -> TocOut:
        """A book's table of contents, flattened in document order (depth = nesting level), paged:
        when next_cursor is set, call again with cursor=next_cursor for the rest. type keeps only
        entries of those types, where only entries whose typed fields match; depth limits the nesting."""
        def run(e: Engine) -> TocOut:
            types = _either(_listed(type, "type"), _listed(content_type, "content_type"), "type", "content_type")
            toc = e.toc(_required_source(source, source_id), depth=depth, types=types, where=_where(where))
            return mcpout.toc_page(toc, cursor)

        data = svc.call("get_library_toc", run)
        return result(data, mcpout.toc_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def search_library(query: str, type: Types = None, source: Sources = None,
                       limit: SearchLimit = 20, where: Where = None, all_copies: bool = False,
                       content_types: Annotated[list[str] | str | None, Field(description=OLD_NAME.format("type"))] = None,
                       documents: Annotated[list[str] | str | None, Field(description=OLD_NAME.format("source"))] = None,
                       ) -> SearchOut:
        """Fast, typo-tolerant keyword lookup of named things (spells, monsters, items, rules), as
        `gmtool search`. type / source: None = all, [] = nothing. where: typed field filters such as
        ["level=3", "school=evocation"] or {"cr": "<=5"}; An entry held by several books is one result (the other copies in also_in)
        unless all_copies."""
        def run(e: Engine) -> SearchResult:
            types, sources = _filters(type, content_types, source, documents)
            return e.search(query, types=types, sources=sources, limit=limit, where=_where(where),
                            all_copies=all_copies)

        res = svc.call("search_library", run)
        data = mcpout.fit(search_dict(res), "results")
        return result(data, mcpout.search_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def ask_books(query: str, type: Types = None, source: Sources = None,
                  limit: SearchLimit = 10, min_score: MinScore | None = None, where: Where = None,
                  all_copies: bool = False,
                  content_types: Annotated[list[str] | str | None, Field(description=OLD_NAME.format("type"))] = None,
                  documents: Annotated[list[str] | str | None, Field(description=OLD_NAME.format("source"))] = None,
                  ) -> SearchOut:
        """Ask in plain language ("a tanky spellcaster class", "what happens when I fall"), as `gmtool ask`:
        ranks sections by keywords and meaning. Same filters as search_library; min_score drops results
        below a 0-1 score (default: the calibrated floor under which answers are weak)."""
        def run(e: Engine) -> SearchResult:
            types, sources = _filters(type, content_types, source, documents)
            return e.ask(query, types=types, sources=sources, limit=limit, min_score=min_score,
                         where=_where(where), all_copies=all_copies)

        res = svc.call("ask_books", run)
        data = mcpout.fit(search_dict(res), "results")
        return result(data, mcpout.search_text(data))

    @mcp.tool(annotations=READ_ONLY)
    def read_section(source: Source = None, title: Title = None, page: Page = None, max_chars: MaxChars = 8000,
                     source_id: Annotated[str | None, Field(description=OLD_NAME.format("source"))] = None,
                     ) -> ReadResult:
        """The text of a section (by title, with its subsections) or of a physical page, with book,
        page, label and the titles before and after, as `gmtool show`. With both title and page: the
        section of that title on that page (a book may repeat a title)."""
        cap = max_chars or MAX_READ_CHARS
        res = svc.call("read_section", lambda e: e.read(_required_source(source, source_id), title=title,
                                                        page=page, max_chars=cap))
        data = asdict(res)
        return result(data, mcpout.read_text(data))


def _add_resources(mcp: FastMCP, svc: Service) -> None:
    def read(uri: str, fn: Callable[[Engine], Any]) -> str:
        return json.dumps(svc.call(uri, fn, ResourceError), ensure_ascii=False)

    @mcp.resource("gmtool://sources", mime_type="application/json")
    def sources_resource() -> str:
        """The indexed books (the list_library JSON)."""
        return read("gmtool://sources", lambda e: mcpout.library_out(e.sources() if e.has_index() else []))

    @mcp.resource("gmtool://source/{source_id}/toc{?depth,cursor}", mime_type="application/json")
    def toc_resource(source_id: str, depth: str | None = None, cursor: str | None = None) -> str:
        """A book's table of contents, flattened in document order (the get_library_toc shape), paged:
        when next_cursor is set, read next_uri for the rest. ?depth=N shows N nesting levels."""
        def toc_uri(**query: str | None) -> str:
            given = {k: v for k, v in query.items() if v is not None}
            return f"gmtool://source/{source_id}/toc" + (f"?{urlencode(given)}" if given else "")

        def page(e: Engine) -> dict[str, Any]:
            levels = None if depth is None else query_number("depth", depth)
            data: dict[str, Any] = dict(mcpout.toc_page(e.toc(source_id, depth=levels), cursor,
                                                        mcpout.RESOURCE_PAGE_CHARS))
            after = data["next_cursor"]
            data["next_uri"] = after and toc_uri(depth=depth, cursor=after)
            return data

        return read(toc_uri(depth=depth, cursor=cursor), page)

    @mcp.resource("gmtool://source/{source_id}/page/{n}", mime_type="application/json")
    def page_resource(source_id: str, n: str) -> str:
        """The text of one physical page of a book (the `gmtool show --page --json` shape)."""
        return read(f"gmtool://source/{source_id}/page/{n}",
                    lambda e: asdict(e.read(source_id, page=page_number(n), max_chars=MAX_READ_CHARS)))


def configure_logging(debug: bool) -> None:
    """One plain line per record on stderr. gmtool logs each client error itself (code and message);
    fastmcp's own records (and tracebacks) show only with --debug."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("gmtool serve: %(levelname)s: %(message)s"))
    for name, level in (("gmtool", logging.INFO), ("fastmcp", logging.ERROR)):
        logger = logging.getLogger(name)
        for old in logger.handlers[:]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG if debug else level)
        logger.propagate = False


@functools.cache
def _glibc() -> Any:
    """The C library when it is glibc on Linux (whose allocator the two calls below tune), else None.
    Looked up once: find_library runs ldconfig, and every reload would ask again."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if sys.platform != "linux" or not name:
        return None
    try:
        return ctypes.CDLL(name)
    except OSError:
        return None


def hand_back_freed_memory() -> None:
    """The server outlives many library snapshots (every scan swaps one in). glibc raises its mmap
    threshold to the largest block freed, so later big arrays come from the heap and their memory is
    kept after the old snapshot goes: RSS climbed ~100 MB per reload in bench/soak.py. A fixed
    threshold keeps big blocks in mmap, which free() hands back. No-op off glibc."""
    libc = _glibc()
    if libc is not None and hasattr(libc, "mallopt"):
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)


def release_old_snapshot() -> None:
    """Free a replaced snapshot now and give its pages back. Its objects sit in reference cycles
    that would wait for a full collection while the next snapshot's are allocated beside them, and
    glibc keeps freed heap pages: bench/soak.py saw RSS climb 10-50 MB with every reload (263 ->
    378 MB over 11 scans); collecting and trimming keeps it flat (+2.8 % over 8 scans). Costs one
    full collection per reload. The trim is a no-op off glibc."""
    import gc

    gc.collect()
    libc = _glibc()
    if libc is not None and hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def run_server(library: Path | None, debug: bool = False) -> None:
    """Serve over stdio until stdin closes. Logs go to stderr; stdout carries only MCP messages.
    Ctrl-C raises KeyboardInterrupt once the server has stopped (the CLI exits 130)."""
    configure_logging(debug)
    hand_back_freed_memory()
    with redirect_stdout(sys.stderr):  # the transport has not claimed fd 1 yet
        mcp = build_server(library, debug)
    svc: Service = mcp.gmtool_service  # type: ignore[attr-defined]
    threading.Thread(target=svc.warm, name="gmtool-warm", daemon=True).start()
    if serve_stdio(mcp):
        raise KeyboardInterrupt
