"""`gmtool search` through the CLI and the Engine: typo tolerance, normalisation, filters, result shape.

Small Markdown libraries written per test cover the mechanics; the corpus (session-scoped,
read-only) covers the real books, including the SRD 5.1 PDF's odd hyphens.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import needs_corpus, scan_isolated
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine

runner = CliRunner()

SRD51 = "srd5-1-ccby4-0-license-live-links"  # the SRD 5.1 PDF
SRD_SOURCES = {"cc-srd5", "cc-srd5-md", "dnd-srd-5-2-cc", SRD51}
HIT_KEYS = {"rank", "title", "content_type", "source_id", "source_name", "file", "page", "page_label",
            "section_path", "score", "snippet"}

# The grimoire (and the codex, its first part) declare their game in a licence line, as an SRD does:
# copies fold only within one game system (rank.copies.book_system); the tome declares none.
GRIMOIRE = """# Spells

Material from the System Reference Document 5.1.

## Fireball

*3rd-level evocation*

**Casting Time:** 1 action

A bright streak flashes from your pointing finger and blossoms into flame.

## Magic Missile

*1st-level evocation*

**Casting Time:** 1 action

You create three glowing darts of magical force.

## Shield

*1st-level abjuration*

An invisible barrier of magical force appears and protects you.

# Monsters

## Owl

*Tiny beast, unaligned*

**Armor Class** 11

**Challenge** 0 (10 XP)

A small night bird.

## Owlbear

*Large monstrosity, unaligned*

**Armor Class** 13

**Challenge** 3 (700 XP)

A monstrous cross between an owl and a bear.

# Combat

## Opportunity Attacks

You can make an opportunity attack when a hostile creature leaves your reach.
"""

TOME = """# Spells

## Fireball

*3rd-level evocation*

A bright streak flashes from your pointing finger. The second book's copy of the spell.
"""


def _run(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args), env={"COLUMNS": "250"})
    return r.exit_code, r.stdout, r.stderr


def _search(lib: Path, *args: str) -> dict:
    code, out, err = _run("search", *args, "--library", str(lib), "--json")
    assert code == 0, err
    return json.loads(out)


def _titles(data: dict) -> list[str]:
    return [r["title"] for r in data["results"]]


def _scanned(lib: Path, books: dict[str, str]) -> Path:
    lib.mkdir()
    for name, text in books.items():
        (lib / name).write_text(text, encoding="utf-8")
    report = Engine(lib).scan(embed=False)
    assert not report.failed, report.failed
    return lib


# A third book holding the grimoire's Fireball word for word (a copy), where the tome's differs (a namesake).
CODEX = GRIMOIRE.split("## Magic Missile")[0]


@pytest.fixture(scope="module")
def books(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three small Markdown books, scanned once for the module (read-only): the grimoire and the
    codex share a Fireball word for word; the tome has another."""
    lib = tmp_path_factory.mktemp("books") / "books"
    lib.mkdir()
    for name, text in {"grimoire.md": GRIMOIRE, "tome.md": TOME, "codex.md": CODEX}.items():
        (lib / name).write_text(text, encoding="utf-8")
    scan_isolated(lib, lib.parent / "config")
    return lib


# --- typo tolerance, normalisation, plurals ----------------------------------------------


@pytest.mark.parametrize(
    ("query", "title"),
    [("firball", "Fireball"), ("owl bear", "Owlbear"), ("magic misile", "Magic Missile"),
     ("opportunity attack", "Opportunity Attacks")],
)
def test_typos_and_plurals_small_library(books: Path, query: str, title: str) -> None:
    assert _titles(_search(books, query))[0] == title


@pytest.mark.parametrize(("heading", "query"), [("Ranséur", "ranseur"), ("Ranseur", "ranséur")])
def test_diacritics_match_both_ways(tmp_path: Path, heading: str, query: str) -> None:
    text = f"# Weapons\n\n## {heading}\n\nA polearm with a broad blade and two side prongs.\n\n## Glaive\n\nA blade on a pole.\n"
    lib = _scanned(tmp_path / "lib", {"armoury.md": text})
    data = _search(lib, query)
    assert _titles(data)[0] == heading
    res = Engine(lib).search(query)
    assert res.results[0].title == heading


@needs_corpus
@pytest.mark.parametrize(
    ("query", "title"),
    [
        ("firball", "Fireball"),
        ("owl bear", "Owlbear"),
        ("magic misile", "Magic Missile"),
        ("opportunity attack", "Opportunity Attacks"),
    ],
)
def test_typos_and_plurals_corpus(corpus_lib: Path, query: str, title: str) -> None:
    assert _titles(_search(corpus_lib, query))[0] == title


@needs_corpus
@pytest.mark.parametrize("query", ["half-elf", "half elf", "half-\u00ad\u2010\u2011elf", "HALF-ELF"])
def test_hyphen_variants_find_half_elf_in_srd51_pdf(corpus_lib: Path, query: str) -> None:
    data = _search(corpus_lib, query, "--source", SRD51, "--limit", "3")
    assert {r["source_id"] for r in data["results"]} == {SRD51}
    assert "Half-Elf" in _titles(data)


@needs_corpus
def test_spaced_hyphen_query_ranks_exact_title_first(corpus_lib: Path) -> None:
    data = _search(corpus_lib, "half elf", "--source", SRD51)
    assert data["results"][0]["title"] == "Half-Elf"


# --- filters ------------------------------------------------------------------------------


def test_type_filter_is_repeatable(books: Path) -> None:
    data = _search(books, "fireball owl", "--type", "monster")
    assert data["results"] and all(r["content_type"] == "monster" for r in data["results"])
    assert all(r["content_type"] == "spell" for r in _search(books, "fireball owl", "-t", "spell")["results"])
    data = _search(books, "owl fireball", "--type", "spell", "--type", "monster")
    types = {r["content_type"] for r in data["results"]}
    assert types == {"spell", "monster"}


def test_unknown_type_is_a_usage_error(books: Path) -> None:
    code, out, err = _run("search", "fireball", "--type", "banana", "--library", str(books), "--json")
    assert code == 2
    assert out == ""
    assert "INVALID_TYPE" in err and "spell" in err  # the hint lists the valid types


def test_source_filter_repeatable_and_default_all(books: Path) -> None:
    every = {r["source_id"] for r in _search(books, "fireball", "--all-copies")["results"]}
    assert every == {"grimoire", "tome", "codex"}
    assert {r["source_id"] for r in _search(books, "fireball", "--source", "tome")["results"]} == {"tome"}
    both = _search(books, "fireball", "--source", "tome", "--source", "grimoire")
    assert {r["source_id"] for r in both["results"]} == {"grimoire", "tome"}
    assert both["warnings"] == []


def test_unknown_source_is_an_error_with_the_nearest_ids(books: Path) -> None:
    """Never an empty result a script would trust: exit 2, the nearest ids, nothing on stdout."""
    for sources in (["nosuchbook"], ["tome", "nosuchbook"]):
        args = [a for sid in sources for a in ("--source", sid)]
        code, out, err = _run("search", "fireball", *args, "--library", str(books), "--json")
        assert code == 2 and out == ""
        assert err.startswith("error SOURCE_NOT_FOUND: no source 'nosuchbook'") and "did you mean:" in err


def test_limit_default_and_respected(tmp_path: Path) -> None:
    text = "# Spells\n\n" + "".join(f"## Spark {i}\n\nA spark of fire number {i}.\n\n" for i in range(30))
    lib = _scanned(tmp_path / "lib", {"sparks.md": text})
    assert len(_search(lib, "spark")["results"]) == 20
    assert len(_search(lib, "spark", "--limit", "5")["results"]) == 5
    assert len(_search(lib, "spark", "-n", "25")["results"]) == 25
    ranks = [r["rank"] for r in _search(lib, "spark", "-n", "7")["results"]]
    assert ranks == list(range(1, 8))
    assert len(Engine(lib).search("spark").results) == 20


WINTER_GEAR = """## Ice Axe

A sturdy axe with a frostbrand rune along the haft. It bites deep into glacier ice.

## Snow Boots

Fur-lined boots that keep a traveller's feet warm on long marches.

## Wolf Pelt Cloak

A heavy cloak, etched with a frostbrand sigil, that turns the worst of the wind.

## Lantern Oil

A flask of oil that burns for six hours in a hooded lantern.
"""


def test_a_word_in_half_the_entries_is_found(tmp_path: Path) -> None:
    """Four entries, two of them with the word: Okapi's idf made it worth nothing (issue 25)."""
    lib = _scanned(tmp_path / "lib", {"winter.md": WINTER_GEAR})
    assert len(Engine(lib).toc("winter").entries) == 4
    hits = _search(lib, "frostbrand")["results"]
    assert {h["title"] for h in hits} == {"Ice Axe", "Wolf Pelt Cloak"}
    assert _search(lib, "frostbrand rune")["results"][0]["title"] == "Ice Axe"


@pytest.mark.parametrize("query", ["", "   ", "\t \n"])
def test_empty_query_is_a_usage_error(books: Path, query: str) -> None:
    for extra in ([], ["--json"]):
        code, out, err = _run("search", query, "--library", str(books), *extra)
        assert code == 2
        assert out == ""
        assert "INVALID_QUERY" in err


def test_filters_without_words_list_matches_in_book_order(books: Path) -> None:
    data = _search(books, "--type", "spell", "--source", "grimoire")
    assert _titles(data) == ["Fireball", "Magic Missile", "Shield"]
    assert [r["title"] for r in _search(books, "   ", "--type", "monster")["results"]] == ["Owl", "Owlbear"]
    assert _titles(_search(books, "--type", "spell", "--where", "level=1")) == ["Magic Missile", "Shield"]
    assert len(_search(books, "--type", "spell", "--limit", "2")["results"]) == 2


def test_source_alone_is_not_enough_without_words(books: Path) -> None:
    code, out, err = _run("search", "--source", "grimoire", "--library", str(books), "--json")
    assert code == 2 and out == "" and "INVALID_QUERY" in err


# --- output shape -------------------------------------------------------------------------


def test_json_shape(books: Path) -> None:
    code, out, err = _run("search", "fireball", "--library", str(books), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)  # stdout is one JSON document and nothing else
    assert set(data) == {"query", "mode", "results", "warnings"}
    assert data["query"] == "fireball" and data["mode"] == "keyword" and data["warnings"] == []
    assert data["results"]
    for r in data["results"]:
        assert set(r) >= HIT_KEYS, HIT_KEYS - set(r)
        assert isinstance(r["rank"], int) and isinstance(r["score"], float)
        # a PDF hit has a page; a Markdown/text hit has a line and page null
        assert isinstance(r["page"], int) if r["file"].endswith(".pdf") else (r["page"] is None and r["line"] >= 1)
        assert isinstance(r["section_path"], list) and isinstance(r["snippet"], str)
    first = data["results"][0]
    assert first["title"] == "Fireball" and first["content_type"] == "spell"
    assert first["file"] in ("grimoire.md", "tome.md", "codex.md") and first["page"] is None and first["line"] >= 1
    assert first["section_path"][0] == "Spells"


def test_copies_fold_into_one_row_and_namesakes_stay(books: Path) -> None:
    fire = [r for r in _search(books, "fireball")["results"] if r["title"] == "Fireball"]
    by_source = {r["source_id"]: r for r in fire}
    assert len(fire) == 2 and "tome" in by_source  # the codex copy folds into the grimoire's row
    copy = by_source.get("grimoire") or by_source["codex"]
    other = "codex" if copy["source_id"] == "grimoire" else "grimoire"
    assert copy["also_in"] == [{"source_id": other, "page": None}] and "duplicate_of" not in copy  # Markdown: no pages
    tome = by_source["tome"]
    assert "also_in" not in tome
    assert (tome.get("namesake_of") or copy.get("namesake_of")) in ("grimoire", "codex", "tome")
    owl = _search(books, "owlbear")["results"][0]
    assert "also_in" not in owl and "duplicate_of" not in owl and "namesake_of" not in owl


def test_all_copies_shows_every_copy(books: Path) -> None:
    fire = [r for r in _search(books, "fireball", "--all-copies")["results"] if r["title"] == "Fireball"]
    assert sorted(r["source_id"] for r in fire) == ["codex", "grimoire", "tome"]
    copies = [r for r in fire if r["source_id"] != "tome"]
    assert "duplicate_of" not in copies[0] and copies[1]["duplicate_of"] == copies[0]["source_id"]


def test_table_groups_by_book_and_shows_also_in(books: Path) -> None:
    code, out, err = _run("search", "fireball", "magic", "--library", str(books), "--group")
    assert code == 0 and err == ""
    assert out.count("(grimoire)") == 1 and out.count("(tome)") == 1
    assert "+1" in out and "+N: also in N more books" in out  # the codex's copy, as a count
    assert "level 3" in out  # the key fields of a spell


def test_no_results_is_not_an_error(books: Path) -> None:
    code, out, _ = _run("search", "zzzqqqxxx", "--library", str(books))
    assert code == 0 and "no entry matches 'zzzqqqxxx'" in out
    data = _search(books, "zzzqqqxxx")
    assert data["results"] == [] and data["message"] == "no entry matches 'zzzqqqxxx'"


# --- corpus -------------------------------------------------------------------------------


@needs_corpus
def test_corpus_source_ids(corpus_lib: Path) -> None:
    ids = {m.source_id for m in Engine(corpus_lib).sources()}
    assert ids >= SRD_SOURCES
    assert {"basic-fantasy-rpg-rules-r142", "fate-condensed-srd-cc-by"} <= ids


SRD51_COPIES = {"cc-srd5", "cc-srd5-md", SRD51}  # the same SRD 5.1 text, as two PDFs and a Markdown file


@needs_corpus
def test_corpus_fireball_is_one_row_per_edition(corpus_lib: Path) -> None:
    fire = [r for r in _search(corpus_lib, "fireball")["results"] if r["title"] == "Fireball" and r["content_type"] == "spell"]
    srd51 = [r for r in fire if r["source_id"] in SRD51_COPIES]
    assert len(srd51) == 1
    assert {c["source_id"] for c in srd51[0]["also_in"]} == SRD51_COPIES - {srd51[0]["source_id"]}
    assert all(c["page"] is None or isinstance(c["page"], int) for c in srd51[0]["also_in"])
    newer = [r for r in fire if r["source_id"] == "dnd-srd-5-2-cc"]
    assert len(newer) == 1  # SRD 5.2 words it otherwise: another edition, its own row
    assert newer[0].get("namesake_of") or srd51[0].get("namesake_of")
    every = [r for r in _search(corpus_lib, "fireball", "--all-copies")["results"] if r["title"] == "Fireball"]
    assert {r["source_id"] for r in every} >= SRD51_COPIES


@needs_corpus
def test_corpus_table_groups_by_book(corpus_lib: Path) -> None:
    code, out, err = _run("search", "fireball", "--library", str(corpus_lib), "--limit", "10", "--group")
    assert code == 0 and err == ""
    shown = [sid for sid in SRD_SOURCES if f"({sid})" in out]
    assert shown and all(out.count(f"({sid})") == 1 for sid in shown)
    assert "+N: also in N more books" in out


@needs_corpus
def test_corpus_type_and_source_filters(corpus_lib: Path) -> None:
    data = _search(corpus_lib, "dragon", "--type", "monster", "--source", "cc-srd5", "--source", SRD51, "-n", "50",
                   "--all-copies")
    assert data["results"]
    assert {r["content_type"] for r in data["results"]} == {"monster"}
    assert {r["source_id"] for r in data["results"]} <= {"cc-srd5", SRD51}
    assert len({r["source_id"] for r in data["results"]}) == 2


@needs_corpus
def test_corpus_json_stdout_is_pure(corpus_lib: Path) -> None:
    code, out, err = _run("search", "grapple", "--source", "lasers", "--library", str(corpus_lib), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["results"] == [] and data["message"] == "no entry matches 'grapple'"


def test_a_query_matching_nothing_says_so(books: Path) -> None:
    code, out, _ = _run("search", "xyzzy plugh", "--library", str(books))
    assert code == 0 and out.startswith("no entry matches 'xyzzy plugh'")
    typo = _search(books, "firbal")  # a typo still finds its name
    assert typo["results"][0]["title"] == "Fireball" and "message" not in typo
    text = _search(books, "streak")  # only in a text: said so
    assert text["results"] and text["message"] == "no entry is titled 'streak'; these entries mention it"


def test_a_gear_line_without_text_shows_its_tags(tmp_path: Path) -> None:
    """A priced line with no paragraph of its own ("Crossbow near, +1 damage, reload, 35 coins") has an
    empty text: its snippet is its tags, not nothing."""
    pytest.importorskip("fpdf")
    from tests.pdfgen import make_bare_price_list_pdf

    lib = tmp_path / "lib"
    make_bare_price_list_pdf(lib / "gear.pdf")
    scan_isolated(lib, tmp_path / "config")
    hit = next(h for h in Engine(lib).search("crossbow").results if h.title == "Crossbow")
    assert "35 coins" in hit.snippet and "reload" in hit.snippet
