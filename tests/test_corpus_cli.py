"""The CLI on the real corpus: TOC coverage, page numbers, `show`, `--where` (issue 8) and `ls`."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, needs_corpus, toc_nodes
from typer.testing import CliRunner

from gmtool.cli import app

pytestmark = needs_corpus

runner = CliRunner()

SRD51 = "srd5-1-ccby4-0-license-live-links"  # the SRD 5.1 PDF
BFRPG = "basic-fantasy-rpg-rules-r142"
SRD_PDFS = ["cc-srd5", SRD51]
EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "eval"
SPELLS_2014 = CORPUS / "srd-data" / "2014" / "5e-SRD-Spells.json"
NODE_KEYS = {"title", "level", "page", "page_label", "end_page", "content_type", "children"}


def _run(lib: Path, *args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, [*args, "--library", str(lib)], env={"COLUMNS": "250"})
    return r.exit_code, r.stdout, r.stderr


def _json(lib: Path, *args: str) -> dict:
    code, out, err = _run(lib, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", s.lower()).strip()


# --- toc ----------------------------------------------------------------------------------


@pytest.mark.parametrize("source", SRD_PDFS)
def test_toc_coverage_of_srd51(corpus_lib: Path, tmp_path: Path, source: str) -> None:
    code, out, err = _run(corpus_lib, "toc", source, "--json")
    assert code == 0, err
    toc_file = tmp_path / f"{source}.json"
    toc_file.write_text(out, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(EVAL / "toc_coverage.py"), str(EVAL / "toc_expected_srd51.json"), str(toc_file),
         "--min-found", "0.95", "--min-typed", "0.95"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_toc_json_shape(corpus_lib: Path) -> None:
    data = _json(corpus_lib, "toc", "cc-srd5")
    assert {"source_id", "source_name", "file", "entries"} <= set(data)
    assert data["source_id"] == "cc-srd5" and data["file"] == "cc-srd5.pdf"
    nodes = toc_nodes(data["entries"])
    assert len(nodes) > 1000
    for n in nodes:
        assert set(n) >= NODE_KEYS, NODE_KEYS - set(n)
        assert isinstance(n["page"], int) and 1 <= n["page"] <= n["end_page"] <= 818
    assert any(n["children"] for n in data["entries"])


def test_toc_depth_one_has_no_children(corpus_lib: Path) -> None:
    data = _json(corpus_lib, "toc", "cc-srd5", "--depth", "1")
    assert data["entries"]
    assert all(n["level"] == 1 and n["children"] == [] for n in data["entries"])
    two = _json(corpus_lib, "toc", "cc-srd5", "--depth", "2")
    assert any(n["children"] for n in two["entries"])
    assert all(c["children"] == [] for n in two["entries"] for c in n["children"])


def test_toc_type_spell_lists_only_spells(corpus_lib: Path) -> None:
    data = _json(corpus_lib, "toc", SRD51, "--type", "spell")
    nodes = toc_nodes(data["entries"])
    assert len(nodes) > 300
    assert {n["content_type"] for n in nodes} == {"spell"}
    assert "Fireball" in {n["title"] for n in nodes}


def test_toc_unknown_source_suggests(corpus_lib: Path) -> None:
    code, out, err = _run(corpus_lib, "toc", "cc-srd", "--json")  # the start of two ids
    assert code == 2 and out == ""
    assert "SOURCE_AMBIGUOUS" in err and "cc-srd5, cc-srd5-md" in err
    code, out, err = _run(corpus_lib, "toc", "srd", "--json")  # the start of one id: that book
    assert code == 0 and json.loads(out)["source_id"] == "srd5-1-ccby4-0-license-live-links"
    code, out, err = _run(corpus_lib, "toc", "srd-5-1", "--json")
    assert code == 2 and out == "" and "SOURCE_NOT_FOUND" in err
    assert "did you mean" in err and "srd5-1-ccby4-0-license-live-links" in err


# --- pages and show -----------------------------------------------------------------------


@pytest.mark.parametrize("source", SRD_PDFS)
@pytest.mark.parametrize("title", ["Fireball", "Owlbear", "Bag of Holding", "Grappled"])
def test_result_page_is_where_the_heading_is_printed(corpus_lib: Path, source: str, title: str) -> None:
    hit = _json(corpus_lib, "search", title, "--source", source, "--limit", "1")["results"][0]
    assert hit["title"] == title and hit["source_id"] == source
    page = _json(corpus_lib, "show", source, "--page", str(hit["page"]), "--max-chars", "0")
    assert page["page"] == hit["page"]
    assert title.lower() in page["text"].lower()


@pytest.mark.parametrize("source", SRD_PDFS)
def test_show_fireball_text_in_order(corpus_lib: Path, source: str) -> None:
    data = _json(corpus_lib, "show", source, "Fireball")
    text = " ".join(data["text"].split())
    start = text.find("A bright streak flashes from your pointing finger")
    end = text.find("for each slot level above 3rd")
    assert 0 <= start < end, text[:300]


# --- --where (issue 8) --------------------------------------------------------------------


def _expected_3rd_level_evocations() -> set[str]:
    spells = json.loads(SPELLS_2014.read_text(encoding="utf-8"))
    return {_norm(s["name"]) for s in spells if s["level"] == 3 and s["school"]["name"] == "Evocation"}


@pytest.mark.parametrize("source", SRD_PDFS)
def test_where_level_and_school_with_query(corpus_lib: Path, source: str) -> None:
    data = _json(corpus_lib, "search", "evocation", "--type", "spell", "--where", "level=3", "--where",
                 "school=evocation", "--limit", "100", "--source", source)
    assert {_norm(r["title"]) for r in data["results"]} == _expected_3rd_level_evocations()
    assert all(r["fields"]["level"] == 3 for r in data["results"])


@pytest.mark.parametrize("source", SRD_PDFS)
def test_where_level_and_school_without_query(corpus_lib: Path, source: str) -> None:
    """Issue 8's acceptance command, exactly as the README shows it (no query words)."""
    data = _json(corpus_lib, "search", "--type", "spell", "--where", "level=3", "--where", "school=evocation",
                 "--limit", "100", "--source", source)
    assert {_norm(r["title"]) for r in data["results"]} == _expected_3rd_level_evocations()
    assert {r["source_id"] for r in data["results"]} == {source}
    assert all(r["content_type"] == "spell" for r in data["results"])


def test_where_cr_bound(corpus_lib: Path) -> None:
    data = _json(corpus_lib, "search", "dragon wolf giant", "--where", "cr<=1", "--type", "monster", "-n", "100")
    assert data["results"]
    for r in data["results"]:
        assert r["content_type"] == "monster"
        assert r["fields"]["challenge"] <= 1, r


def test_where_unknown_field(corpus_lib: Path) -> None:
    code, out, err = _run(corpus_lib, "search", "fireball", "--where", "foo=1", "--json")
    assert code == 2 and out == ""
    assert "INVALID_FILTER" in err
    assert "valid fields" in err and "level" in err and "challenge" in err


def test_where_table_shows_key_fields(corpus_lib: Path) -> None:
    code, out, err = _run(corpus_lib, "search", "fireball", "--where", "level=3", "--source", "cc-srd5")
    assert code == 0 and err == ""
    assert "Fireball" in out and "level 3" in out and "evocation" in out


# --- ls and multi-source search -----------------------------------------------------------


def test_ls_json(corpus_lib: Path) -> None:
    sources = {s["source_id"]: s for s in _json(corpus_lib, "ls")["sources"]}
    assert len(sources) == 8
    for s in sources.values():
        assert {"pages", "entries", "types", "has_outline"} <= set(s)
        assert (s["pages"] >= 1 if s["format"] == "pdf" else s["pages"] is None and s["lines"] > 1)
        assert s["entries"] >= 1 and isinstance(s["types"], dict)
    assert sources["cc-srd5"]["has_outline"] is True and sources["cc-srd5"]["pages"] == 818
    assert sources["cc-srd5-md"]["has_outline"] is False


def test_search_two_sources_first_page_is_int(corpus_lib: Path) -> None:
    data = _json(corpus_lib, "search", "grapple", "--source", SRD51, "--source", BFRPG)
    assert data["results"]
    assert isinstance(data["results"][0]["page"], int) and not isinstance(data["results"][0]["page"], bool)
    assert {r["source_id"] for r in data["results"]} <= {SRD51, BFRPG}
