"""Clean text and clean entries from a generated PDF (issue 21): words broken at a line end are
whole again, a word glued to a bold one is parted, page furniture is gone, a wrapped table cell
stays in its row, tags and prices leave titles, and level groups give their spells a level."""

from __future__ import annotations

import pytest

from gmtool.index.extract.pdf import extract_pdf
from gmtool.types import Document
from tests.pdfgen import TEXT_REPAIR_HEADER, make_lost_space_pdf, make_text_repair_pdf


@pytest.fixture(scope="module")
def doc(tmp_path_factory) -> Document:
    return extract_pdf(make_text_repair_pdf(tmp_path_factory.mktemp("repair") / "salt.pdf"))


def _entry(doc: Document, title: str):
    found = [e for e in doc.entries if e.title == title]
    assert found, f"no entry {title!r} in {[e.title for e in doc.entries]}"
    return found[0]


def test_a_word_hyphenated_across_a_line_is_whole(doc: Document) -> None:
    body = _entry(doc, "Rules of the Road").body
    assert "you may manipulate the price" in body
    assert "ma-" not in body and "ma nipulate" not in body


def test_a_word_hyphenated_across_a_line_is_whole_in_a_run_in_entry_too(doc: Document) -> None:
    assert _entry(doc, "Parley").body == "When you have leverage on a guard you may manipulate them into letting you pass."


def test_a_real_compound_keeps_its_hyphen_across_a_line(doc: Document) -> None:
    assert "carry a two-handed spear" in _entry(doc, "Rules of the Road").body


def test_a_soft_hyphen_break_is_joined(doc: Document) -> None:
    body = _entry(doc, "Rules of the Road").body
    assert "The toll is absolutely fixed" in body
    assert "\u00ad" not in body


def test_a_space_after_a_ligature_is_closed_but_real_words_stay_apart(doc: Document) -> None:
    assert "A fiery staff absorbs the blow." in _entry(doc, "Rules of the Road").body


def test_a_word_glued_to_a_bold_word_is_parted(doc: Document) -> None:
    body = _entry(doc, "Holding On").body
    assert "make a successful WIS test" in body
    assert "successfulWIS" not in body


def test_a_word_space_lost_in_the_text_layer_is_put_back(tmp_path) -> None:
    """"Youmust" (a gap in the glyphs) and "youare" (two of the book's commonest words, printed
    apart elsewhere) part; "tollgate" (no gap, uncommon parts) stays one word."""
    text = " ".join(e.body for e in extract_pdf(make_lost_space_pdf(tmp_path / "toll.pdf")).entries)
    assert "You must pay the toll" in text
    assert "Roll when you are ready" in text
    assert "the tollgate." in text
    assert "Youmust" not in text and "youare" not in text


def test_the_running_header_and_page_numbers_are_not_content(doc: Document) -> None:
    assert all(TEXT_REPAIR_HEADER.lower() not in e.title.lower() for e in doc.entries)
    assert all(TEXT_REPAIR_HEADER not in e.body for e in doc.entries)
    assert all(TEXT_REPAIR_HEADER not in t for t in doc.page_texts)
    assert not any(line.strip().isdigit() for t in doc.page_texts for line in t.splitlines())


def test_a_wrapped_table_cell_stays_in_its_row(doc: Document) -> None:
    rows = [e for e in doc.entries if e.origin == "row"]
    titles = [e.title for e in rows]
    assert "in the depth of a dungeon" in titles
    assert "dungeon" not in titles and "in the depth of a" not in titles
    assert _entry(doc, "in the depth of a dungeon").body.endswith("convinced to perform a ritual")


def test_a_row_of_a_random_table_keeps_its_roll(doc: Document) -> None:
    """Under a "d6" column header each row is a result to roll for (genre.roll_result), so its roll is a field."""
    assert _entry(doc, "a free colony").body == "d6: 1; refuses a ritual"
    assert _entry(doc, "in the depth of a dungeon").body.startswith("d6: 3; wants to retire")


def test_a_price_and_a_bracketed_tag_leave_the_title(doc: Document) -> None:
    assert _entry(doc, "Grappling Hook").tags == ["2 GP"]
    assert _entry(doc, "Grappled").tags == ["Condition"]
    assert not any("[" in e.title or "GP)" in e.title for e in doc.entries)


def test_a_level_grouped_spell_list_gives_each_spell_its_level(doc: Document) -> None:
    for name, level in (("Frost Lance", 1), ("Quiet Step", 1), ("Ember Ward", 2), ("Stone Skin", 2)):
        e = _entry(doc, name)
        assert f"Level {level}" in (e.tags or []), (name, e.tags)
        assert doc.entries[e.parent].title == f"Level {level}"


def test_a_running_header_carried_into_markdown_is_not_an_entry(tmp_path) -> None:
    from gmtool.index.extract.markdown import extract_markdown

    parts = ["# Marsh Rules", "## Reeds", "The reeds grow tall and"]
    for k in range(6):
        parts += ["## SALT MARCHES RPG", "<!-- image -->", f"hide a path number {k} for the careful walker."]
    parts += ["## Actions", "A real heading, kept.", "## Actions", "Another.", "## Tides", "The sea comes in."]
    md = tmp_path / "marsh.md"
    md.write_text("\n\n".join(parts), encoding="utf-8")
    doc = extract_markdown(md)
    titles = [e.title for e in doc.entries]
    assert "SALT MARCHES RPG" not in titles
    assert titles.count("Actions") == 2
    reeds = next(e for e in doc.entries if e.title == "Reeds")
    assert "The reeds grow tall and" in reeds.body and "path number 5 for the careful walker" in reeds.body
    assert "SALT MARCHES" not in reeds.body


def test_books_sharing_a_title_are_told_apart_by_file_name(tmp_path) -> None:
    from gmtool.engine import Engine
    from tests.conftest import scan_isolated

    lib = tmp_path / "lib"
    lib.mkdir()
    for name, body in (("salt-marches-extras.md", "Optional rules."), ("salt-marches.md", "The core rules.")):
        (lib / name).write_text(f"---\ntitle: Salt Marches\n---\n\n# Rules\n\n{body}\n", encoding="utf-8")
    scan_isolated(lib, tmp_path / "config")
    titles = {m.file: m.title for m in Engine(lib).sources()}
    assert titles == {"salt-marches.md": "Salt Marches", "salt-marches-extras.md": "Salt Marches (salt-marches-extras.md)"}
