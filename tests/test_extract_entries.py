"""Entries beyond headings (run-ins, table rows, stat blocks) and clean titles, on a generated PDF."""

from __future__ import annotations

import pytest

from gmtool.index.extract.pdf import extract_pdf
from gmtool.index.extract.titles import clean_title, repair_kerning, repair_ligatures, sibling_tag_cuts
from tests.pdfgen import make_entries_pdf


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    pytest.importorskip("fpdf")
    return extract_pdf(make_entries_pdf(tmp_path_factory.mktemp("entries") / "entries.pdf"))


def _by_title(doc):
    return {e.title: e for e in doc.entries}


def test_runin_entries_have_parent_and_body(doc):
    es = _by_title(doc)
    for name in ("Frost Lance", "Quiet Step", "Ember Ward"):
        e = es[name]
        assert e.origin == "runin"
        assert doc.entries[e.parent].title == "Spells"
        assert e.page == 1
    assert "1d8 damage" in es["Frost Lance"].body
    # the section keeps the text too
    assert "1d8 damage" in es["Spells"].body


def test_name_first_table_rows(doc):
    es = _by_title(doc)
    for name in ("Lantern", "Iron Pot", "Rope Ladder", "Chalk"):
        assert es[name].origin == "row"
        assert doc.entries[es[name].parent].title == "Gear"
    assert "10 coins" in es["Lantern"].body
    assert "ITEM" not in es  # the header row is not an entry


def test_soft_hyphen_reads_as_hyphen(doc):
    assert "1-hand weapon" in _by_title(doc)


def test_stat_block_name_split_from_tag_line(doc):
    es = _by_title(doc)
    troll = es["Cave Troll"]
    assert troll.tags == ["Large", "Solitary"]
    assert "12 HP" in troll.body
    assert not any(t.startswith("Cave Troll ") for t in es)


def test_repeated_label_folded_into_parent(doc):
    es = _by_title(doc)
    assert "Notes" not in es
    assert "keeps to its lair" in es["Cave Troll"].body


def test_title_repairs():
    assert clean_title("WARRIOR \u00b6") == "WARRIOR"
    assert clean_title("``Hacking'' the Game") == "\u201cHacking\u201d the Game"
    assert clean_title("1\u00adhand weapon") == "1-hand weapon"
    vocab = {"handed": 4, "two": 3, "knife": 2, "difficulty": 2}
    assert repair_kerning("Two-Hand ed", vocab) == "Two-Handed"
    assert repair_ligatures("a di\ufffeculty", vocab) == "a difficulty"
    cuts = sibling_tag_cuts(["Sleep Level 3 Enchantment", "Bless Level 1", "Light Rote", "Fireball Level 3 Evocation"])
    assert cuts[0] == len("Sleep") and cuts[2] is None


def test_side_by_side_headings_split(doc):
    es = _by_title(doc)
    assert "Supply" in es and "Bolster" in es
    assert not any("Supply" in t and "Bolster" in t for t in es)


def test_stat_line_set_large_is_not_a_heading(doc):
    assert not any(t.startswith("STARTING HIT POINTS") for t in _by_title(doc))
    assert any("STARTING HIT POINTS - 6" in e.body for e in doc.entries)


def test_bookmark_and_heading_twins_merge():
    from gmtool.index.extract.labels import merge_twins
    from gmtool.types import Entry

    es = [
        Entry("Dungeon World", 1, 1, 1, origin="heading", body="intro"),
        Entry("Dungeon World", 1, 1, 1, origin="outline"),
        Entry("The Bard", 2, 1, 1, parent=1, origin="outline", body="poems"),
    ]
    out = merge_twins(es)
    assert [e.title for e in out] == ["Dungeon World", "The Bard"]
    assert out[0].origin == "outline" and out[0].body == "intro"
    assert out[1].parent == 0


def test_field_label_with_value_is_no_entry():
    """'Challenge 2' over a list of names is the stat blocks' own field ('Challenge 2 (450 XP)'): its
    names stay in the section's text, and the stat blocks that print the field stay entries."""
    from pathlib import Path

    bestiary = extract_pdf(Path(__file__).parent.parent / "gmtool" / "sample" / "bestiary.pdf")
    es = _by_title(bestiary)
    assert not [t for t in es if t.startswith("Challenge ")]
    assert "Drowned Bellringer, Tidecrawler Crab" in es["Monsters by Challenge"].body
    assert "Fogmaw Serpent" in es


def test_field_label_keeps_named_entries():
    """A leaf named like a field ('Con', 'Dagger') is kept when it reads as an entry: prose under a
    heading (a move called 'Con'), or a table row; a label heading's text joins its parent."""
    from gmtool.index.extract.labels import fold_field_labels
    from gmtool.types import Entry

    blocks = [Entry(f"Beast {k}", 2, 1, 1, parent=0, origin="heading", body=f"Con 12, Dagger +2 (1d4)\nHit: {k} damage")
              for k in range(3)]
    es = [
        Entry("Bestiary", 1, 1, 1, origin="heading"),
        *blocks,
        Entry("Con", 2, 1, 1, parent=0, origin="heading", body="When you parley with someone, on a 7+ you also take +1 forward."),
        Entry("Dagger", 2, 1, 1, parent=0, origin="row", body="2gp 1d4"),
        Entry("Hit", 2, 1, 1, parent=0, origin="heading", body="6 (1d8 + 2) piercing damage."),
    ]
    out = fold_field_labels(es)
    assert [e.title for e in out] == ["Bestiary", "Beast 0", "Beast 1", "Beast 2", "Con", "Dagger"]
    assert "Hit\n6 (1d8 + 2) piercing damage." in out[0].body


def test_page_top_table_leaves_the_section_before(tmp_path):
    """A full-page table opening a page with no heading is not the last section's: its rows sit under
    that section's parent (gear and creatures kept apart, typed as such), its text leaves the section."""
    pytest.importorskip("fpdf")
    from gmtool.index.classify import classify
    from tests.pdfgen import make_page_table_pdf

    doc = extract_pdf(make_page_table_pdf(tmp_path / "hack.pdf"))
    classify(doc)
    es = _by_title(doc)
    for name in ("Lantern", "Gargoyle"):
        assert doc.entries[es[name].parent].title == "The Small Hack"
    assert "Lantern" not in es["Armor Proficiency"].body and "Lantern" in es["The Small Hack"].body
    assert "Gargoyle" not in es["Arcane Spells"].body
    assert es["Lantern"].content_type == "item" and es["Gargoyle"].content_type == "monster"


def test_page_top_table_led_into_stays(tmp_path):
    """A section whose text leads into a table ("the table below") keeps the table on the next page."""
    pytest.importorskip("fpdf")
    from tests.pdfgen import make_page_table_pdf

    doc = extract_pdf(make_page_table_pdf(tmp_path / "hack.pdf", lead="Buy your gear from the table below."))
    es = _by_title(doc)
    assert doc.entries[es["Lantern"].parent].title == "Armor Proficiency"
    assert "Lantern" in es["Armor Proficiency"].body


def test_side_by_side_tables_read_row_by_row(tmp_path):
    """Two price tables in a page's two columns: each row is read whole and alone. The gap
    between one table's columns is no gutter (its cells share baselines and fill little of
    their width); the gap between the two tables is one (each repeats its header row)."""
    pytest.importorskip("fpdf")
    from tests.pdfgen import SIDE_TABLES, make_side_tables_pdf

    doc = extract_pdf(make_side_tables_pdf(tmp_path / "arms.pdf"))
    es = _by_title(doc)
    names = [row[0] for _title, _header, rows in SIDE_TABLES for row in rows]
    for _title, _header, rows in SIDE_TABLES:
        for name, cost, damage in rows:
            assert name in es, f"{name} is not an entry: {sorted(es)}"
            body = es[name].body
            assert cost in body and damage in body, (name, body)
            assert not any(other in body for other in names if other != name), (name, body)
