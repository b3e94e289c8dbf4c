"""MCP hardening (issue 25): the TOC resource comes in pages, an expected resource failure carries
gmtool's code, and a filter's number must be finite.

Through fastmcp's in-memory client, as tests/test_mcp.py does; the sizes of real libraries are
measured in bench/memory.py (the toc-resource case).
"""
# ruff: noqa: F811 - test arguments named `sample` are that imported fixture

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_mcp import Server, sample  # noqa: F401 - `sample`, the scanned sample library, is a fixture

from gmtool.present.jsonout import toc_rows


def _error(srv: Server, uri: str) -> Any:
    from mcp.shared.exceptions import MCPError

    with pytest.raises(MCPError) as err:
        srv.resource(uri)
    return err.value.error


def test_the_toc_resource_comes_in_pages(sample: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    """It used to send a book's whole tree as one message (172 MB for a book of a million headings)."""
    from gmtool.engine import Engine
    from gmtool.present import mcpout

    monkeypatch.setattr(mcpout, "RESOURCE_PAGE_CHARS", 2_000)
    every = toc_rows(Engine(sample.lib).toc("grimoire"))
    pages = [sample.resource("gmtool://source/grimoire/toc")]
    while pages[-1]["next_uri"]:
        assert pages[-1]["next_uri"] == f"gmtool://source/grimoire/toc?cursor={pages[-1]['next_cursor']}"
        pages.append(sample.resource(pages[-1]["next_uri"]))
    assert len(pages) > 2
    assert [row for p in pages for row in p["entries"]] == every
    assert all(p["total"] == len(every) for p in pages)
    assert all(len(json.dumps(p["entries"])) <= 2_000 + len(json.dumps(p["entries"][0])) for p in pages)


def test_the_toc_resource_takes_a_depth(sample: Server) -> None:
    top = sample.resource("gmtool://source/grimoire/toc?depth=1")
    assert top["entries"] and {row["depth"] for row in top["entries"]} == {1}
    assert top == {**sample.ok("get_library_toc", {"source_id": "grimoire", "depth": 1}), "next_uri": None}
    err = _error(sample, "gmtool://source/grimoire/toc?depth=zero")
    assert err.code == -32602 and err.data["code"] == "INVALID_ARGUMENT"
    err = _error(sample, "gmtool://source/grimoire/toc?cursor=zz")
    assert err.code == -32602 and err.data["code"] == "INVALID_CURSOR"


def test_expected_resource_errors_carry_the_code(sample: Server) -> None:
    """They came as -32603, JSON-RPC's 'internal error', which says the server broke."""
    for uri, code in (("gmtool://source/nope/toc", "SOURCE_NOT_FOUND"),
                      ("gmtool://source/nope/page/1", "SOURCE_NOT_FOUND"),
                      ("gmtool://source/grimoire/page/999", "INVALID_PAGE"),
                      ("gmtool://source/grimoire/page/abc", "INVALID_PAGE")):
        err = _error(sample, uri)
        assert err.code == -32602, (uri, err)
        assert err.message.startswith(f"{code}: ") and "(hint: " in err.message
        assert err.data["code"] == code and err.data["hint"] and err.data["message"]


def test_an_index_that_cannot_answer_is_a_server_error(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    err = _error(Server(lib, tmp_path / "config"), "gmtool://source/grimoire/toc")
    assert err.code == -32000 and err.data["code"] == "INDEX_NOT_FOUND" and "scan_library" in err.data["hint"]


def test_a_bug_in_a_resource_is_still_internal_error(sample: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from gmtool.engine import Engine

    def broken(self: Engine, *a: Any, **kw: Any) -> Any:
        raise KeyError("boom")

    monkeypatch.setattr(Engine, "toc", broken)
    err = _error(sample, "gmtool://source/grimoire/toc")
    assert err.code == -32603 and err.message.startswith("INTERNAL_ERROR: KeyError")


@pytest.mark.parametrize("where", [["level>=nan"], ["level>=1e400"], ["cr=inf..3"], {"level": ">=inf"},
                                   {"challenge": "nan"}])
def test_a_non_finite_filter_number_is_invalid_filter(sample: Server, where: Any) -> None:
    """It ended in INTERNAL_ERROR (nan or inf cannot be an int)."""
    for tool in ("search_library", "ask_books"):
        text = sample.error_text(tool, {"query": "fog", "where": where})
        assert text.startswith("INVALID_FILTER: ") and "finite" in text, text
