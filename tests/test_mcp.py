"""`gmtool serve`: the MCP tools and resources.

Most tests drive the server in-process through fastmcp's in-memory client (the same server object,
protocol and schema checks as over stdio, without a subprocess per library). A real stdio run checks
what only a process shows: stdout carries nothing but JSON-RPC, even while scan_library runs and
code prints, and an expected error is one line on stderr, not a traceback.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REPO, SAMPLE, SESSION_CACHE, SHARED, scan_isolated
from typer.testing import CliRunner

DEV_ASK = SHARED / "eval" / "dev_ask.jsonl"
TOOLS = {"scan_library", "list_library", "get_library_toc", "search_library", "ask_books", "read_section",
         "index_library"}
READ_ONLY = {"list_library", "get_library_toc", "search_library", "ask_books", "read_section"}
LIMIT = 20_000


@contextmanager
def _config(config: Path) -> Iterator[None]:
    """Module-scoped servers are built before the per-test isolation: point the user config dir away."""
    old = os.environ.get("GMTOOL_CONFIG_DIR")
    os.environ["GMTOOL_CONFIG_DIR"] = str(config)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("GMTOOL_CONFIG_DIR", None)
        else:
            os.environ["GMTOOL_CONFIG_DIR"] = old


class Server:
    """gmtool's FastMCP server behind fastmcp's in-memory client, callable from sync tests."""

    def __init__(self, lib: Path, config: Path, debug: bool = False) -> None:
        from gmtool.mcp import build_server

        self.lib = lib
        with _config(config):
            self.server = build_server(lib, debug=debug)
        self._schemas: dict[str, dict[str, Any]] = {}

    def run(self, fn: Callable[[Any], Awaitable[Any]]) -> Any:
        from fastmcp import Client

        async def go() -> Any:
            async with Client(self.server) as client:
                return await fn(client)

        return asyncio.run(go())

    def call(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        return self.run(lambda c: c.call_tool(name, args or {}, raise_on_error=False, **kw))

    def ok(self, name: str, args: dict[str, Any] | None = None, *, validate: bool = True, **kw: Any) -> dict[str, Any]:
        res = self.call(name, args, **kw)
        assert not res.is_error, res.content[0].text
        data = res.structured_content
        assert isinstance(data, dict)
        if validate:  # against the declared output schema (slow for large results: once per shape is enough)
            jsonschema.validate(data, self.schemas()[name])
        assert len(json.dumps(data)) < LIMIT
        assert res.content and res.content[0].text
        return data

    def error_text(self, name: str, args: dict[str, Any]) -> str:
        res = self.call(name, args)
        assert res.is_error, res.structured_content
        assert res.structured_content is None
        text: str = res.content[0].text
        assert "(hint: " in text, text
        return text

    def resource(self, uri: str) -> Any:
        return json.loads(self.run(lambda c: c.read_resource(uri))[0].text)

    def resource_error(self, uri: str) -> str:
        from mcp.shared.exceptions import MCPError

        with pytest.raises(MCPError) as err:
            self.resource(uri)
        return str(err.value)

    def tools(self) -> list[Any]:
        return list(self.run(lambda c: c.list_tools()))

    def schemas(self) -> dict[str, dict[str, Any]]:
        if not self._schemas:
            self._schemas = {t.name: t.output_schema for t in self.tools()}
        return self._schemas

    def instructions(self) -> str:
        async def get(c: Any) -> str:
            return str(c.instructions)

        return str(self.run(get))


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("mcp-sample")
    lib = base / "lib"
    shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
    scan_isolated(lib, base / "config")
    return Server(lib, base / "config")


@pytest.fixture(scope="module")
def corpus(corpus_lib: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    return Server(corpus_lib, tmp_path_factory.mktemp("mcp-corpus") / "config")


# --- schemas, limits and annotations -----------------------------------------------------------------------


def test_tools_schemas_and_annotations(sample: Server) -> None:
    by_name = {t.name: t for t in sample.tools()}
    assert set(by_name) == TOOLS
    for name, tool in by_name.items():
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        assert "x-fastmcp-wrap-result" not in tool.output_schema, name
        assert tool.annotations is not None and tool.annotations.read_only_hint is (name in READ_ONLY), name
        assert "ctx" not in tool.input_schema["properties"], name
    props = {n: set(t.input_schema["properties"]) for n, t in by_name.items()}
    assert {"force"} <= props["scan_library"]
    assert props["list_library"] == {"format"}
    # the CLI's names (source, type, where, limit, min_score, all_copies), the old ones kept as aliases
    assert props["get_library_toc"] == {"source", "depth", "type", "where", "cursor", "source_id", "content_type"}
    assert props["search_library"] == {"query", "type", "source", "limit", "where", "all_copies", "content_types",
                                       "documents"}
    assert props["ask_books"] == {"query", "type", "source", "limit", "min_score", "where", "all_copies",
                                  "content_types", "documents"}
    assert props["read_section"] == {"source", "title", "page", "max_chars", "source_id"}
    assert {"files", "include", "exclude", "force", "verify"} <= props["index_library"]
    assert by_name["search_library"].input_schema["required"] == ["query"]
    schema = by_name["search_library"].output_schema
    hit = _deref(schema, schema["properties"]["results"]["items"])
    from gmtool.present.jsonout import _OPTIONAL_HIT_KEYS

    assert set(hit["required"]) | set(_OPTIONAL_HIT_KEYS) == set(hit["properties"])
    assert "gmtool" in sample.instructions()


def _deref(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    out: Any = root
    for part in ref.lstrip("#/").split("/"):
        out = out[part]
    return out


def _bounds(prop: dict[str, Any]) -> tuple[Any, Any]:
    for option in prop.get("anyOf", [prop]):
        if "minimum" in option or "maximum" in option:
            return option.get("minimum"), option.get("maximum")
    return None, None


def test_argument_limits_are_in_the_schema(sample: Server) -> None:
    inputs = {t.name: t.input_schema["properties"] for t in sample.tools()}
    assert _bounds(inputs["search_library"]["limit"]) == (1, 50)
    assert _bounds(inputs["ask_books"]["limit"]) == (1, 50)
    assert _bounds(inputs["ask_books"]["min_score"]) == (0, 1)
    assert _bounds(inputs["read_section"]["page"]) == (1, None)
    assert _bounds(inputs["read_section"]["max_chars"]) == (0, 18_000)
    assert _bounds(inputs["get_library_toc"]["depth"]) == (1, None)


# --- every tool on the sample library ------------------------------------------------------------------------


def test_instructions_describe_the_library(sample: Server) -> None:
    text = sample.instructions()
    assert "3 books" in text and "Embeddings: no" in text
    assert "spell" in text


def test_list_library(sample: Server) -> None:
    data = sample.ok("list_library")
    ids = [s["source_id"] for s in data["sources"]]
    assert sorted(ids) == ["bestiary", "grimoire", "lantern-coast"]
    entries = [s["entries"] for s in data["sources"]]
    assert entries == sorted(entries, reverse=True)
    from gmtool.engine import Engine
    from gmtool.present.jsonout import source_dict

    cli = {m.source_id: source_dict(m) for m in Engine(sample.lib).sources()}
    assert {s["source_id"]: s for s in data["sources"]} == cli
    text = sample.call("list_library", {"format": "text"}).content[0].text
    assert "lantern-coast" in text and not text.lstrip().startswith("{")
    assert sample.resource("gmtool://sources") == data


def _cli_json(*args: str) -> Any:
    from gmtool.cli import app

    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.stdout)


def test_search_ask_and_toc_match_cli_json(sample: Server) -> None:
    data = sample.ok("search_library", {"query": "fog veil", "limit": 5})
    assert data["results"][0]["title"] == "Fog Veil"
    assert _cli_json("search", "fog", "veil", "-n", "5", "-L", str(sample.lib)) == data
    asked = sample.ok("ask_books", {"query": "hide in fog", "limit": 3, "content_types": ["spell"]})
    assert _cli_json("ask", "hide in fog", "-n", "3", "--type", "spell", "-L", str(sample.lib)) == asked
    # one TOC: the toc resource pages through `toc --json`'s tree flattened, as get_library_toc does
    from gmtool.present.jsonout import toc_rows
    from gmtool.types import TocResult

    toc = sample.resource("gmtool://source/grimoire/toc")
    assert toc == {**sample.ok("get_library_toc", {"source_id": "grimoire"}), "next_uri": None}
    assert toc["entries"] == toc_rows(TocResult(**_cli_json("toc", "grimoire", "-L", str(sample.lib)), total=0))


def test_search_filters(sample: Server) -> None:
    spells = sample.ok("search_library", {"query": "lantern", "content_types": ["spell"], "limit": 50})
    assert spells["results"] and {h["content_type"] for h in spells["results"]} == {"spell"}
    assert sample.ok("search_library", {"query": "lantern", "documents": []})["results"] == []
    assert sample.ok("search_library", {"query": "lantern", "content_types": []})["results"] == []
    only = sample.ok("search_library", {"query": "lantern", "documents": ["grimoire"]})
    assert {h["source_id"] for h in only["results"]} == {"grimoire"}
    text = sample.error_text("search_library", {"query": "lantern", "documents": ["nope"]})
    assert text.startswith("SOURCE_NOT_FOUND") and "did you mean" in text
    assert sample.error_text("search_library", {"query": "x", "content_types": ["dragonz"]}).startswith("INVALID_TYPE")
    assert sample.error_text("ask_books", {"query": "x", "content_types": ["dragonz"]}).startswith("INVALID_TYPE")


def test_ask_books(sample: Server) -> None:
    data = sample.ok("ask_books", {"query": "a spell that hides you in fog", "limit": 5})
    assert data["results"] and len(data["results"]) <= 5
    assert sample.ok("ask_books", {"query": "fog", "documents": []})["results"] == []


def test_toc_and_read(sample: Server) -> None:
    toc = sample.ok("get_library_toc", {"source_id": "grimoire"})
    titles = [n["title"] for n in toc["entries"]]
    assert "Fog Veil" in titles and toc["next_cursor"] is None and toc["total"] == len(titles)
    spells = sample.ok("get_library_toc", {"source_id": "grimoire", "content_type": "spell"})
    assert spells["entries"] and {n["content_type"] for n in spells["entries"]} == {"spell"}
    top = sample.ok("get_library_toc", {"source_id": "grimoire", "depth": 1})
    assert {n["depth"] for n in top["entries"]} == {1}
    sec = sample.ok("read_section", {"source_id": "grimoire", "title": "Fog Veil"})
    assert sec["title"] == "Fog Veil" and "fog" in sec["text"].lower()
    assert sec["previous_title"] and sec["next_title"]
    page = sample.ok("read_section", {"source_id": "grimoire", "page": sec["page"]})
    assert "Fog Veil" in page["text"]
    assert sample.resource(f"gmtool://source/grimoire/page/{sec['page']}") == page
    short = sample.ok("read_section", {"source_id": "grimoire", "title": "Fog Veil", "max_chars": 20})
    assert short["truncated"] and len(short["text"]) <= 22


@pytest.fixture(scope="module")
def repeats(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A generated book that repeats a section title in three chapters, on pages 1, 2 and 3."""
    from pdfgen import make_outline_pdf

    base = tmp_path_factory.mktemp("mcp-repeats")
    lib = base / "lib"
    lib.mkdir()
    sections = []
    for n, place in enumerate(["Harbor", "Marsh", "Tower"], 1):
        sections += [(f"Chapter {n}: The {place}", 0, [f"The party reaches the {place.lower()}."]),
                     ("Random Encounters", 1, [f"Roll a d6 for the {place.lower()}: {n} smugglers appear."])]
    make_outline_pdf(lib / "travels.pdf", sections, title="Travels")
    scan_isolated(lib, base / "config")
    return Server(lib, base / "config")


def test_read_section_with_title_and_page_reads_that_page(repeats: Server) -> None:
    by_page = {p: repeats.ok("read_section", {"source_id": "travels", "title": "Random Encounters", "page": p})
               for p in (1, 2, 3)}
    assert {p: d["page"] for p, d in by_page.items()} == {1: 1, 2: 2, 3: 3}
    assert [("smugglers" in d["text"], d["text"].count(f"{p} smugglers")) for p, d in by_page.items()] == \
        [(True, 1)] * 3
    text = repeats.error_text("read_section", {"source_id": "travels", "title": "Chapter 1: The Harbor", "page": 3})
    assert text.startswith("SECTION_NOT_ON_PAGE") and "page 1" in text
    assert repeats.error_text("read_section", {"source_id": "travels", "title": "Random Encounters", "page": 9}
                              ).startswith("INVALID_PAGE")


def test_index_library_verify_and_targeted(sample: Server) -> None:
    v = sample.ok("index_library", {"verify": True})
    assert v["action"] == "verify" and v["verify"]["healthy"] and v["report"] is None
    r = sample.ok("index_library", {"files": ["grimoire.pdf"], "force": True, "embed": False})
    assert r["action"] == "index" and r["report"]["indexed"] == 1 and r["report"]["failed"] == []


# --- errors: a stable code, isError and a hint for every bad input -----------------------------------------


def test_engine_errors_carry_mcp_hints(sample: Server) -> None:
    text = sample.error_text("read_section", {"source_id": "nope", "title": "x"})
    assert text.startswith("SOURCE_NOT_FOUND") and "list_library" in text and "gmtool" not in text
    assert sample.error_text("get_library_toc", {"source_id": "nope"}).startswith("SOURCE_NOT_FOUND")
    assert sample.error_text("search_library", {"query": "   "}).startswith("INVALID_QUERY")
    assert sample.error_text("ask_books", {"query": ""}).startswith("INVALID_QUERY")
    assert sample.error_text("read_section", {"source_id": "grimoire"}).startswith("INVALID_QUERY")
    assert "search_library" in sample.error_text("read_section", {"source_id": "grimoire", "title": "zzqx"})
    assert sample.error_text("read_section", {"source_id": "grimoire", "page": 999}).startswith("INVALID_PAGE")
    assert sample.error_text("get_library_toc", {"source_id": "grimoire", "cursor": "zz"}).startswith("INVALID_CURSOR")
    assert sample.ok("list_library")["sources"]  # still serving


@pytest.mark.parametrize(("tool", "args", "code"), [
    ("search_library", {"query": "x", "limit": "many"}, "INVALID_ARGUMENT"),
    ("search_library", {"query": "x", "limit": 0}, "INVALID_ARGUMENT"),
    ("search_library", {"query": "x", "limit": 51}, "INVALID_ARGUMENT"),
    ("search_library", {"query": "x", "bogus": 1}, "INVALID_ARGUMENT"),
    ("search_library", {}, "INVALID_ARGUMENT"),
    ("ask_books", {"query": "x", "min_score": 2}, "INVALID_ARGUMENT"),
    ("ask_books", {"query": "x", "min_score": -0.5}, "INVALID_ARGUMENT"),
    ("read_section", {"source_id": "grimoire", "page": 0}, "INVALID_PAGE"),
    ("read_section", {"source_id": "grimoire", "page": "abc"}, "INVALID_PAGE"),
    ("read_section", {"source_id": "grimoire", "max_chars": 50_000}, "INVALID_ARGUMENT"),
    ("read_section", {"source_id": "grimoire", "title": "  "}, "INVALID_ARGUMENT"),
    ("get_library_toc", {"source_id": "grimoire", "depth": -1}, "INVALID_ARGUMENT"),
])
def test_malformed_arguments_get_a_code(sample: Server, tool: str, args: dict[str, Any], code: str) -> None:
    text = sample.error_text(tool, args)
    assert text.startswith(f"{code}: "), text
    assert "\n" not in text


def test_resources(sample: Server) -> None:
    assert len(sample.resource("gmtool://sources")["sources"]) == 3
    page = sample.resource("gmtool://source/grimoire/page/1")
    assert page["page"] == 1 and page["text"]
    templates = {t.uri_template for t in sample.run(lambda c: c.list_resource_templates())}
    assert templates == {"gmtool://source/{source_id}/toc{?depth,cursor}", "gmtool://source/{source_id}/page/{n}"}
    assert "INVALID_PAGE" in sample.resource_error("gmtool://source/grimoire/page/abc")
    assert "INVALID_PAGE" in sample.resource_error("gmtool://source/grimoire/page/0")
    assert "INVALID_PAGE" in sample.resource_error("gmtool://source/grimoire/page/-3")
    assert "SOURCE_NOT_FOUND" in sample.resource_error("gmtool://source/nope/toc")
    assert "not found" in sample.resource_error("gmtool://nothing")


def test_expected_errors_log_one_line_and_debug_adds_the_traceback(
        sample: Server, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="gmtool.mcp")
    sample.error_text("read_section", {"source_id": "grimoire", "page": 999})
    sample.error_text("search_library", {"query": "x", "limit": 0})
    lines = [r for r in caplog.records if r.name == "gmtool.mcp"]
    assert [r.getMessage().split(": ")[:2] for r in lines] == [["read_section", "INVALID_PAGE"],
                                                              ["search_library", "INVALID_ARGUMENT"]]
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in lines)
    caplog.clear()
    debug = Server(sample.lib, tmp_path / "config", debug=True)
    debug.error_text("read_section", {"source_id": "grimoire", "page": 999})
    assert [r.exc_info is not None for r in caplog.records if r.name == "gmtool.mcp"] == [True]


def test_a_bug_is_internal_error_in_one_line(sample: Server, monkeypatch: pytest.MonkeyPatch,
                                            caplog: pytest.LogCaptureFixture) -> None:
    from gmtool.engine import Engine

    def broken(self: Engine, *a: Any, **kw: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(Engine, "search", broken)
    text = sample.error_text("search_library", {"query": "fog"})
    assert text.startswith("INTERNAL_ERROR: KeyError: 'boom'") and "--debug" in text
    [rec] = [r for r in caplog.records if r.name == "gmtool.mcp"]
    assert rec.levelno == logging.ERROR and rec.exc_info is None
    monkeypatch.undo()
    assert sample.ok("search_library", {"query": "fog"})["results"]  # the server carries on


# --- empty library, scan_library with progress, a scan from elsewhere ---------------------------------------


def test_empty_then_scan_then_external_scan(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    srv = Server(lib, tmp_path / "config")
    assert "scan_library" in srv.instructions()
    empty = srv.ok("list_library", {"format": "text"})
    assert empty["sources"] == [] and empty["message"] == "No sources indexed yet; run scan_library"
    assert srv.call("list_library", {"format": "text"}).content[0].text == empty["message"]
    err = srv.error_text("search_library", {"query": "fog"})
    assert err.startswith("INDEX_NOT_FOUND") and "scan_library" in err

    for f in SAMPLE.iterdir():
        if f.is_file():
            shutil.copy2(f, lib / f.name)
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    rep = srv.ok("scan_library", {"embed": False}, progress_handler=on_progress)
    assert rep["files_indexed"] == 3 and rep["failed"] == []
    assert seen and seen[-1][0] == seen[-1][1]
    assert len(srv.ok("list_library")["sources"]) == 3

    # another writer (the CLI, another Engine) adds a book: the running server sees it
    from gmtool.engine import Engine

    (lib / "extra.md").write_text("# Extra Rules\n\n## Moonfire Lance\n\nA spear of silver light.\n")
    Engine(lib).scan(embed=False)
    ids = [s["source_id"] for s in srv.ok("list_library")["sources"]]
    assert "extra" in ids
    hit = srv.ok("search_library", {"query": "moonfire lance"})["results"][0]
    assert hit["title"] == "Moonfire Lance" and hit["source_id"] == "extra"


def test_a_replaced_snapshot_is_freed_at_the_next_call(tmp_path: Path) -> None:
    """A long-lived server must not keep the snapshots that scans replaced: the first call after a
    swap frees the old one at once (it sits in reference cycles, which would wait for a full collection)."""
    import gc
    import weakref

    from gmtool.engine import Engine

    lib = tmp_path / "lib"
    shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
    scan_isolated(lib, tmp_path / "config")
    srv = Server(lib, tmp_path / "config")
    assert srv.ok("search_library", {"query": "fog"})["results"]
    engine = srv.server.gmtool_service.engine  # type: ignore[attr-defined]
    old = weakref.ref(engine.library())
    (lib / "extra.md").write_text("# Extra Rules\n\n## Moonfire Lance\n\nA spear of silver light.\n")
    with _config(tmp_path / "config"):
        Engine(lib).scan(embed=False)
    gc.disable()  # only the server may collect now
    try:
        assert srv.ok("search_library", {"query": "moonfire lance"})["results"][0]["source_id"] == "extra"
        assert old() is None
    finally:
        gc.enable()


# --- a real stdio server: stdout carries only JSON-RPC; errors are one stderr line ----------------------------

NOISY = """
import os, sys
import gmtool.engine as engine
real = engine.Engine.scan
def noisy(self, *a, **kw):
    print("stray print from the engine")
    os.write(1, b"stray fd-1 write\\n")
    return real(self, *a, **kw)
engine.Engine.scan = noisy
real_init = engine.Engine.__init__
def noisy_init(self, *a, **kw):
    print("stray print while the server starts")
    real_init(self, *a, **kw)
engine.Engine.__init__ = noisy_init
from gmtool.cli import main
sys.argv = ["gmtool", "serve", "--library", sys.argv[1]]
main()
"""


def _rpc(i: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "method": method, "params": params}


def test_stdio_stdout_is_only_jsonrpc_and_errors_are_one_stderr_line(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
    msgs = [
        _rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "t", "version": "0"}}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _rpc(2, "tools/call", {"name": "scan_library", "arguments": {"embed": False}, "_meta": {"progressToken": "p"}}),
        _rpc(3, "tools/call", {"name": "search_library", "arguments": {"query": ""}}),
        _rpc(4, "tools/call", {"name": "read_section", "arguments": {"source_id": "grimoire", "page": "abc"}}),
        _rpc(5, "resources/read", {"uri": "gmtool://source/grimoire/page/abc"}),
        _rpc(6, "resources/read", {"uri": "gmtool://source/grimoire/page/0"}),
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_LIBRARY", "GMTOOL_INDEX_DIR", "GMTOOL_DEBUG")}
    env.update(GMTOOL_CONFIG_DIR=str(tmp_path / "config"), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
               GMTOOL_CACHE_DIR=os.environ.get("GMTOOL_CACHE_DIR", str(SESSION_CACHE)))
    proc = subprocess.Popen([sys.executable, "-c", NOISY, str(lib)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, cwd=REPO, text=True)
    assert proc.stdin and proc.stdout and proc.stderr
    replies: list[dict[str, Any]] = []
    for m in msgs:
        proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()
        while "id" in m:  # read up to this request's reply
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            msg = json.loads(line)  # every stdout line is one JSON-RPC message
            assert msg["jsonrpc"] == "2.0"
            replies.append(msg)
            if msg.get("id") == m["id"]:
                break
    proc.stdin.close()  # the server exits cleanly when stdin closes
    assert proc.wait(30) == 0
    assert all(json.loads(x)["jsonrpc"] == "2.0" for x in proc.stdout.read().splitlines() if x.strip())
    by_id = {r["id"]: r for r in replies if "id" in r}
    assert by_id[1]["result"]["serverInfo"]["name"] == "gmtool"
    assert by_id[2]["result"]["structuredContent"]["failed"] == []
    assert any(r.get("method") == "notifications/progress" for r in replies)
    for i, code in ((3, "INVALID_QUERY"), (4, "INVALID_PAGE")):
        assert by_id[i]["result"]["isError"] is True
        assert by_id[i]["result"]["content"][0]["text"].startswith(f"{code}: ")
    for i in (5, 6):
        assert by_id[i]["error"]["message"].startswith("INVALID_PAGE: ")
    stderr = proc.stderr.read()
    assert "stray print" in stderr and "Traceback" not in stderr
    logged = [x for x in stderr.splitlines() if x.startswith("gmtool serve: WARNING: ")]
    codes = [x.split(": ")[3] for x in logged]
    assert codes == ["INVALID_QUERY", "INVALID_PAGE", "INVALID_PAGE", "INVALID_PAGE"], stderr
    others = [x for x in stderr.splitlines() if x.strip() and x not in logged and "stray" not in x]
    assert not others, others  # nothing else: no traceback, no second line per error


# --- the corpus ---------------------------------------------------------------------------------------------


def _source_for(srv: Server, filename: str) -> str:
    for s in srv.ok("list_library", {"format": "json"})["sources"]:
        if s["file"] == filename:
            return str(s["source_id"])
    raise AssertionError(f"{filename} not indexed")


@pytest.mark.corpus
@pytest.mark.parametrize("pdf", ["cc-srd5.pdf", "SRD5.1-CCBY4.0_License_live_links.pdf"])
def test_read_fireball_from_srd_pdfs(corpus: Server, pdf: str) -> None:
    sid = _source_for(corpus, pdf)
    sec = corpus.ok("read_section", {"source_id": sid, "title": "Fireball"})
    assert sec["title"].lower() == "fireball" and sec["content_type"] == "spell"
    text = " ".join(sec["text"].split())
    assert "bright streak" in text and "20-foot-radius" in text and "8d6" in text and not sec["truncated"]
    # the heading page names the spell; the description starts there or, when the heading ends a page
    # (cc-srd5.pdf), on the next one, which the section's end_page covers
    pages = [corpus.ok("read_section", {"source_id": sid, "page": n, "max_chars": 0})["text"]
             for n in range(sec["page"], sec["end_page"] + 1)]
    assert "Fireball" in pages[0]
    assert "bright streak" in " ".join(" ".join(pages).split())
    same = corpus.ok("read_section", {"source_id": sid, "title": "Fireball", "page": sec["page"]})
    assert (same["page"], same["text"]) == (sec["page"], sec["text"])


@pytest.mark.corpus
def test_toc_pages_under_limit(corpus: Server) -> None:
    from gmtool.engine import Engine
    from gmtool.present.mcpout import toc_page

    sid = _source_for(corpus, "SRD5.1-CCBY4.0_License_live_links.pdf")
    first = corpus.ok("get_library_toc", {"source_id": sid})
    second = corpus.ok("get_library_toc", {"source_id": sid, "cursor": first["next_cursor"]})
    assert second["entries"][0]["index"] > first["entries"][-1]["index"]
    # every page, as the tool cuts them (the client's schema check of 30 pages would take seconds)
    toc = Engine(corpus.lib).toc(sid)
    pages = [toc_page(toc, None)]
    while pages[-1]["next_cursor"]:
        pages.append(toc_page(toc, pages[-1]["next_cursor"]))
    assert pages[:2] == [first, second] and len(pages) > 5
    assert all(len(json.dumps(p)) < LIMIT for p in pages)
    seen = [n for p in pages for n in p["entries"]]
    assert len(seen) == first["total"]
    idx = [n["index"] for n in seen]
    assert idx == sorted(idx) and len(set(idx)) == len(idx)
    big = corpus.ok("search_library", {"query": "spell damage", "limit": 50})
    assert 0 < len(big["results"]) <= 50


@pytest.mark.corpus
def test_ask_books_matches_the_engine_and_cli(corpus: Server) -> None:
    from gmtool.engine import Engine
    from gmtool.present.jsonout import search_dict

    engine = Engine(corpus.lib)  # one other engine for all queries: the first ask on a library costs seconds
    queries = [json.loads(x) for x in DEV_ASK.read_text().splitlines() if x.strip()][:4]
    for q in queries:
        types = [q["type"]] if q.get("type") else None
        got = corpus.ok("ask_books", {"query": q["query"], "limit": 10, "content_types": types}, validate=False)
        assert got == search_dict(engine.ask(q["query"], types=types, limit=10)), q["query"]


# --- the CLI's argument names, and shapes the MCP Inspector CLI can send ------------------------------------


def test_cli_argument_names_with_the_old_ones_as_aliases(sample: Server) -> None:
    new = sample.ok("search_library", {"query": "lantern", "type": ["spell"], "source": ["grimoire"]})
    old = sample.ok("search_library", {"query": "lantern", "content_types": ["spell"], "documents": ["grimoire"]})
    assert new["results"] and new == old
    toc_new = sample.ok("get_library_toc", {"source": "grimoire", "type": "spell"})
    assert toc_new == sample.ok("get_library_toc", {"source_id": "grimoire", "content_type": "spell"})
    assert sample.ok("read_section", {"source": "grimoire", "title": "Fog Veil"})["title"] == "Fog Veil"
    assert sample.error_text("get_library_toc", {}).startswith("INVALID_ARGUMENT: source is required")
    text = sample.error_text("search_library", {"query": "x", "type": ["spell"], "content_types": ["monster"]})
    assert text.startswith("INVALID_ARGUMENT") and "type" in text


def test_where_on_every_listing_tool(sample: Server) -> None:
    toc = sample.ok("get_library_toc", {"source": "grimoire", "where": ["level=2"]})
    assert {n["title"] for n in toc["entries"]} == {"Fog Veil", "Gull's Leap"}
    found = sample.ok("search_library", {"query": "fog", "where": {"level": 2}})
    assert found["results"] and all(h["fields"]["level"] == 2 for h in found["results"])
    text = sample.error_text("get_library_toc", {"source": "grimoire", "where": ["cr<=5"], "type": "spell"})
    assert text.startswith("INVALID_FILTER") and "level" in text  # the fields spells do have


@pytest.mark.parametrize(("name", "value"), [("type", '["spell"]'), ("type", "spell"),
                                             ("content_types", '["spell"]'), ("where", '["level=2"]'),
                                             ("where", "level=2"), ("where", '{"level": 2}')])
def test_array_arguments_as_the_inspector_cli_sends_them(sample: Server, name: str, value: str) -> None:
    """The Inspector CLI passes --tool-arg values as strings: a JSON-encoded array or object, or one item."""
    data = sample.ok("search_library", {"query": "fog veil", name: value})
    assert data["results"] and all(h["content_type"] == "spell" for h in data["results"])
    if name == "where":
        assert all(h["fields"]["level"] == 2 for h in data["results"])


def test_limit_is_a_count_never_a_boolean(sample: Server) -> None:
    assert sample.error_text("search_library", {"query": "fog", "limit": True}).startswith("INVALID_ARGUMENT")
    assert len(sample.ok("search_library", {"query": "fog", "limit": "2"})["results"]) <= 2  # as the CLI sends it
    assert sample.error_text("search_library", {"query": "fog", "type": "[spell"}).startswith("INVALID_ARGUMENT")


@pytest.mark.skipif(not (SHARED / "corpus").is_dir(), reason="corpus not found")
def test_text_output_names_copies_and_namesakes(corpus: Server) -> None:
    res = corpus.call("search_library", {"query": "fireball", "limit": 5})
    text = res.content[0].text
    first = next(line for line in text.splitlines() if line.startswith("1. Fireball"))
    assert "; also in " in first and "p." in first
    assert "namesake of" in text
