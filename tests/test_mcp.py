"""`gmtool serve`: driven as a subprocess through a real MCP client over stdio.

One server process per library (module-scoped); a background event loop lets plain sync tests
share it. The raw-pipe test checks that nothing but JSON-RPC ever reaches stdout.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from conftest import REPO, SAMPLE, SESSION_CACHE, SHARED

DEV_ASK = SHARED / "eval" / "dev_ask.jsonl"
TOOLS = {"scan_library", "list_library", "get_library_toc", "search_library", "ask_books", "read_section",
         "index_library"}
READ_ONLY = {"list_library", "get_library_toc", "search_library", "ask_books", "read_section"}
LIMIT = 20_000


def _env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_LIBRARY", "GMTOOL_INDEX_DIR", "GMTOOL_DEBUG")}
    env.update(GMTOOL_CONFIG_DIR=str(config), GMTOOL_CACHE_DIR=os.environ.get("GMTOOL_CACHE_DIR", str(SESSION_CACHE)),
               PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1")
    return env


class Server:
    """`python -m gmtool serve --library LIB` behind a fastmcp Client, callable from sync code."""

    def __init__(self, lib: Path, config: Path) -> None:
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        self.lib = lib
        self.env = _env(config)
        self.stderr = config.parent / f"serve-{lib.name}.stderr"
        transport = StdioTransport(sys.executable, ["-m", "gmtool", "serve", "--library", str(lib)], env=self.env,
                                   cwd=str(REPO), keep_alive=False, log_file=self.stderr)
        self.client = Client(transport, timeout=120)
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),), daemon=True)
        self.thread.start()
        if not self.ready.wait(60) or self.error:
            raise RuntimeError(f"server did not start: {self.error}\n{self.stderr_text()}")

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with self.client:
                self.ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - surfaced by __init__ / close
            self.error = exc
            self.ready.set()

    def stderr_text(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""

    def run(self, coro: Any, timeout: float = 180) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> Any:
        return self.run(self.client.call_tool(name, args or {}, raise_on_error=False, **kw))

    def ok(self, name: str, args: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
        res = self.call(name, args, **kw)
        assert not res.is_error, res.content[0].text
        data = res.structured_content
        assert isinstance(data, dict)
        jsonschema.validate(data, self.schemas()[name])
        assert len(json.dumps(data)) < LIMIT
        assert res.content and res.content[0].text
        return data

    def error_text(self, name: str, args: dict[str, Any]) -> str:
        res = self.call(name, args)
        assert res.is_error
        assert res.structured_content is None
        return res.content[0].text

    def schemas(self) -> dict[str, dict[str, Any]]:
        if not hasattr(self, "_schemas"):
            self.tools = self.run(self.client.list_tools())
            self._schemas = {t.name: t.output_schema for t in self.tools}
        return self._schemas

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)


def _scan(lib: Path, config: Path) -> None:
    from gmtool.engine import Engine

    old = os.environ.get("GMTOOL_CONFIG_DIR")
    os.environ["GMTOOL_CONFIG_DIR"] = str(config)
    try:
        Engine(lib).scan(embed=False)
    finally:
        if old is None:
            os.environ.pop("GMTOOL_CONFIG_DIR", None)
        else:
            os.environ["GMTOOL_CONFIG_DIR"] = old


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("mcp-sample")
    lib = base / "lib"
    shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
    _scan(lib, base / "config")
    srv = Server(lib, base / "config")
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def corpus(corpus_lib: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    base = tmp_path_factory.mktemp("mcp-corpus")
    srv = Server(corpus_lib, base / "config")
    yield srv
    srv.close()


# --- schemas and annotations -----------------------------------------------------------------------------


def test_tools_schemas_and_annotations(sample: Server) -> None:
    sample.schemas()
    by_name = {t.name: t for t in sample.tools}
    assert set(by_name) == TOOLS
    for name, tool in by_name.items():
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        assert "x-fastmcp-wrap-result" not in tool.output_schema, name
        assert tool.annotations is not None and tool.annotations.read_only_hint is (name in READ_ONLY), name
        assert "ctx" not in tool.input_schema["properties"], name
    props = {n: set(t.input_schema["properties"]) for n, t in by_name.items()}
    assert {"force"} <= props["scan_library"]
    assert props["list_library"] == {"format"}
    assert props["get_library_toc"] == {"source_id", "depth", "content_type", "cursor"}
    assert props["search_library"] == {"query", "content_types", "documents", "limit", "where"}
    assert props["ask_books"] == {"query", "content_types", "documents", "limit", "min_score", "where"}
    assert props["read_section"] == {"source_id", "title", "page", "max_chars"}
    assert {"files", "include", "exclude", "force", "verify"} <= props["index_library"]
    assert by_name["search_library"].input_schema["required"] == ["query"]
    schema = by_name["search_library"].output_schema
    hit = _deref(schema, schema["properties"]["results"]["items"])
    from gmtool.present.jsonout import _OPTIONAL_HIT_KEYS

    assert set(hit["required"]) | set(_OPTIONAL_HIT_KEYS) == set(hit["properties"])
    assert "gmtool" in (sample.run(_instructions(sample)) or "")


async def _instructions(srv: Server) -> str | None:
    return srv.client.instructions


def _deref(root: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if not ref:
        return node
    out: Any = root
    for part in ref.lstrip("#/").split("/"):
        out = out[part]
    return out


# --- every tool on the sample library ------------------------------------------------------------------------


def test_instructions_describe_the_library(sample: Server) -> None:
    text = sample.run(_instructions(sample))
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


def test_search_matches_cli_json(sample: Server) -> None:
    data = sample.ok("search_library", {"query": "fog veil", "limit": 5})
    assert data["results"][0]["title"] == "Fog Veil"
    out = subprocess.run([sys.executable, "-m", "gmtool", "search", "fog", "veil", "-n", "5", "--json",
                          "-L", str(sample.lib)], capture_output=True, text=True, env=sample.env, cwd=REPO, check=True)
    assert json.loads(out.stdout) == data


def test_search_filters(sample: Server) -> None:
    spells = sample.ok("search_library", {"query": "lantern", "content_types": ["spell"], "limit": 50})
    assert spells["results"] and {h["content_type"] for h in spells["results"]} == {"spell"}
    assert sample.ok("search_library", {"query": "lantern", "documents": []})["results"] == []
    assert sample.ok("search_library", {"query": "lantern", "content_types": []})["results"] == []
    only = sample.ok("search_library", {"query": "lantern", "documents": ["grimoire"]})
    assert {h["source_id"] for h in only["results"]} == {"grimoire"}
    unknown = sample.ok("search_library", {"query": "lantern", "documents": ["nope"]})
    assert unknown["results"] == [] and any("grimoire" in w for w in unknown["warnings"])
    assert "INVALID_TYPE" in sample.error_text("search_library", {"query": "x", "content_types": ["dragonz"]})
    assert "INVALID_TYPE" in sample.error_text("ask_books", {"query": "x", "content_types": ["dragonz"]})


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
    short = sample.ok("read_section", {"source_id": "grimoire", "title": "Fog Veil", "max_chars": 20})
    assert short["truncated"]


def test_index_library_verify_and_targeted(sample: Server) -> None:
    v = sample.ok("index_library", {"verify": True})
    assert v["action"] == "verify" and v["verify"]["healthy"] and v["report"] is None
    r = sample.ok("index_library", {"files": ["grimoire.pdf"], "force": True, "embed": False})
    assert r["action"] == "index" and r["report"]["indexed"] == 1 and r["report"]["failed"] == []


def test_errors(sample: Server) -> None:
    text = sample.error_text("read_section", {"source_id": "nope", "title": "x"})
    assert text.startswith("SOURCE_NOT_FOUND") and "hint" in text and "grimoire" in text
    assert "SOURCE_NOT_FOUND" in sample.error_text("get_library_toc", {"source_id": "nope"})
    assert sample.error_text("search_library", {"query": "   "}).startswith("INVALID_QUERY")
    assert sample.error_text("ask_books", {"query": ""}).startswith("INVALID_QUERY")
    assert "INVALID_QUERY" in sample.error_text("read_section", {"source_id": "grimoire"})
    assert "INVALID_PAGE" in sample.error_text("read_section", {"source_id": "grimoire", "page": 999})
    assert "INVALID_CURSOR" in sample.error_text("get_library_toc", {"source_id": "grimoire", "cursor": "zz"})
    sample.error_text("search_library", {"query": "x", "limit": "many"})  # schema validation, not a crash
    assert sample.ok("list_library")["sources"]  # still alive


def test_resources(sample: Server) -> None:
    from mcp.shared.exceptions import MCPError

    data = json.loads(sample.run(sample.client.read_resource("gmtool://sources"))[0].text)
    assert len(data["sources"]) == 3
    toc = json.loads(sample.run(sample.client.read_resource("gmtool://source/grimoire/toc"))[0].text)
    assert toc["source_id"] == "grimoire" and toc["entries"][0]["children"]
    page = json.loads(sample.run(sample.client.read_resource("gmtool://source/grimoire/page/1"))[0].text)
    assert page["page"] == 1 and page["text"]
    templates = {t.uri_template for t in sample.run(sample.client.list_resource_templates())}
    assert templates == {"gmtool://source/{source_id}/toc", "gmtool://source/{source_id}/page/{n}"}
    for uri in ("gmtool://nothing", "gmtool://source/nope/toc"):
        with pytest.raises(MCPError):
            sample.run(sample.client.read_resource(uri))


# --- empty library, scan_library with progress, a scan from another process ---------------------------------


def test_empty_then_scan_then_external_scan(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    srv = Server(lib, tmp_path / "config")
    try:
        assert "scan_library" in srv.run(_instructions(srv))
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

        (lib / "extra.md").write_text("# Extra Rules\n\n## Moonfire Lance\n\nA spear of silver light.\n")
        subprocess.run([sys.executable, "-m", "gmtool", "scan", str(lib), "--no-embed", "--json"], env=srv.env,
                       cwd=REPO, capture_output=True, check=True)
        ids = [s["source_id"] for s in srv.ok("list_library")["sources"]]
        assert "extra" in ids
        hit = srv.ok("search_library", {"query": "moonfire lance"})["results"][0]
        assert hit["title"] == "Moonfire Lance" and hit["source_id"] == "extra"
    finally:
        srv.close()


# --- stdout carries only JSON-RPC ---------------------------------------------------------------------------

NOISY = """
import os, sys
from pathlib import Path
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
from gmtool.mcp import run_server
run_server(Path(sys.argv[1]))
"""


def test_stdout_is_only_jsonrpc(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
    msgs = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "scan_library", "arguments": {"embed": False}, "_meta": {"progressToken": "p"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "search_library", "arguments": {"query": ""}}},
    ]
    for script in (None, NOISY):
        cmd = [sys.executable, "-m", "gmtool", "serve", "--library", str(lib)] if script is None else \
            [sys.executable, "-c", script, str(lib)]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_env(tmp_path / "config"), cwd=REPO, text=True)
        assert proc.stdin and proc.stdout
        replies: list[dict[str, Any]] = []
        for m in msgs:
            proc.stdin.write(json.dumps(m) + "\n")
            proc.stdin.flush()
            while "id" in m:  # read up to this request's reply
                line = proc.stdout.readline()
                assert line, proc.stderr.read() if proc.stderr else ""
                msg = json.loads(line)  # every stdout line is one JSON-RPC message
                assert msg["jsonrpc"] == "2.0"
                replies.append(msg)
                if msg.get("id") == m["id"]:
                    break
        proc.stdin.close()  # the server exits cleanly when stdin closes
        assert proc.wait(30) == 0
        rest = proc.stdout.read()
        assert all(json.loads(x)["jsonrpc"] == "2.0" for x in rest.splitlines() if x.strip())
        by_id = {r["id"]: r for r in replies if "id" in r}
        assert by_id[1]["result"]["serverInfo"]["name"] == "gmtool"
        assert by_id[2]["result"]["structuredContent"]["failed"] == []
        assert by_id[3]["result"]["isError"] is True
        assert any(r.get("method") == "notifications/progress" for r in replies)
        if script:
            assert "stray print" in (proc.stderr.read() if proc.stderr else "")


# --- the corpus ---------------------------------------------------------------------------------------------


def _source_for(srv: Server, filename: str) -> str:
    for s in srv.ok("list_library", {"format": "json"})["sources"]:
        if s["file"] == filename:
            return s["source_id"]
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


@pytest.mark.corpus
def test_toc_pages_under_limit(corpus: Server) -> None:
    sid = _source_for(corpus, "SRD5.1-CCBY4.0_License_live_links.pdf")
    first = corpus.ok("get_library_toc", {"source_id": sid})
    assert first["next_cursor"] is not None
    seen = list(first["entries"])
    cursor = first["next_cursor"]
    while cursor:
        page = corpus.ok("get_library_toc", {"source_id": sid, "cursor": cursor})
        seen += page["entries"]
        cursor = page["next_cursor"]
    assert len(seen) == first["total"]
    idx = [n["index"] for n in seen]
    assert idx == sorted(idx) and len(set(idx)) == len(idx)
    big = corpus.ok("search_library", {"query": "spell damage", "limit": 500})
    assert 0 < len(big["results"]) <= 50


@pytest.mark.corpus
def test_ask_books_matches_cli(corpus: Server) -> None:
    queries = [json.loads(x) for x in DEV_ASK.read_text().splitlines() if x.strip()][:4]
    for q in queries:
        args: dict[str, Any] = {"query": q["query"], "limit": 10}
        cli = [sys.executable, "-m", "gmtool", "ask", q["query"], "--json", "-n", "10", "-L", str(corpus.lib)]
        if q.get("type"):
            args["content_types"] = [q["type"]]
            cli += ["--type", q["type"]]
        got = corpus.ok("ask_books", args)
        want = json.loads(subprocess.run(cli, capture_output=True, text=True, env=corpus.env, cwd=REPO,
                                         check=True).stdout)
        assert [(h["title"], h["source_id"]) for h in got["results"]] == \
            [(h["title"], h["source_id"]) for h in want["results"]], q["query"]
        assert got["mode"] == want["mode"]
