"""Variants described against a base stat block: full run-in bodies, and the base's fields."""

from __future__ import annotations

import pytest

from gmtool.index.classify import classify
from gmtool.index.extract.pdf import extract_pdf
from gmtool.index.fields import set_fields
from tests.pdfgen import make_slanted_wrap_pdf, make_variant_pdf


@pytest.fixture(scope="module")
def entries(tmp_path_factory):
    pytest.importorskip("fpdf")
    doc = extract_pdf(make_variant_pdf(tmp_path_factory.mktemp("variants") / "variants.pdf"))
    classify(doc)
    set_fields(doc)
    return {e.title: e for e in doc.entries}


def test_runin_body_runs_past_an_indented_first_line(entries):
    # the first line is indented, the rest are flush left: one paragraph, not one line
    assert "moonless night" in entries["Swarm of Glowmoths"].body


def test_variant_takes_its_base_fields(entries):
    for name in ("Swarm of Glowmoths", "Swarm of Ashmoths", "Swarm of Silkmoths"):
        f = entries[name].fields or {}
        assert (f.get("challenge"), f.get("size"), f.get("armor_class")) == (0.5, "medium", 12), name
    # the prose's "0 hit points" is no stat line of its own
    assert entries["Swarm of Ashmoths"].fields["hit_points"] == 22


def test_a_base_keeps_its_own_fields(entries):
    assert entries["Marsh Hound"].fields["challenge"] == 0.25
    assert entries["Swarm of Moths"].fields["challenge"] == 0.5


@pytest.fixture(scope="module")
def price_list(tmp_path_factory):
    pytest.importorskip("fpdf")
    from tests.pdfgen import make_price_list_pdf

    doc = extract_pdf(make_price_list_pdf(tmp_path_factory.mktemp("prices") / "prices.pdf"))
    return {e.title: e for e in doc.entries}


def test_a_word_that_ends_several_names_before_a_comma_is_a_tag(price_list):
    for name in ("Trail Bread", "Salt Pork", "Honey Cake"):
        assert price_list[name].tags[0] == "Ration", name
    assert not any(t.endswith(" Ration") for t in price_list)


def test_of_the_names_stay_whole_and_phrases_are_no_entries(price_list):
    assert "Lamp of the Old Road" in price_list
    assert not any(t in ("A", "Lamp") for t in price_list)
    assert "A night at the harbour inn" in price_list["Provisions"].body


def test_run_ins_wrapped_around_a_slanted_picture_edge_are_entries(tmp_path):
    """Each name starts further right than the last (text wrapping around a picture), so no two
    share an indent: the slant, and the column's other styled run-ins, make them run-ins too."""
    pytest.importorskip("fpdf")
    doc = extract_pdf(make_slanted_wrap_pdf(tmp_path / "slanted.pdf"))
    titles = [e.title for e in doc.entries]
    assert {"Badger", "Boar", "Wolf", "Treant", "Troll", "Vampire"} <= set(titles), titles
    assert next(e for e in doc.entries if e.title == "Troll").body.startswith("HD 6d8+2")


def test_title_lines_without_text_of_their_own(tmp_path):
    """A priced line straight above the next one has no paragraph: its text is empty, not the next
    line's ("Crossbow" is not "Bundle of Arrows 3 ammo"); an inverted name keeps its tail
    ("Lantern, hooded" and "Lantern, bullseye" are two entries, not two "Lantern"s)."""
    pytest.importorskip("fpdf")
    from tests.pdfgen import make_bare_price_list_pdf

    doc = extract_pdf(make_bare_price_list_pdf(tmp_path / "gear.pdf"))
    es = {e.title: e for e in doc.entries}
    for name in ("Ragged Bow", "Fine Bow", "Crossbow", "Bundle of Arrows", "Lantern, bullseye"):
        assert es[name].body == "", (name, es[name].body)
    assert es["Hunter's Bow"].body.startswith("Strung with gut")
    assert es["Lantern, hooded"].body.startswith("Its shutters") and es["Lantern, hooded"].tags == ["7 coins", "1 weight"]
    assert "Lantern" not in es
