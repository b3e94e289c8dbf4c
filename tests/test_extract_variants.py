"""Variants described against a base stat block: full run-in bodies, and the base's fields."""

from __future__ import annotations

import pytest

from gmtool.index.classify import classify
from gmtool.index.extract.pdf import extract_pdf
from gmtool.index.fields import set_fields
from tests.pdfgen import make_variant_pdf


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
