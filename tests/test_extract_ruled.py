"""Ruled tables: pdfplumber's table finder on the rules pypdfium2 reports, rows as entries."""

from __future__ import annotations

import pytest

from gmtool.index.classify import classify
from gmtool.index.extract.pdf import extract_pdf
from gmtool.index.extract.pdf_layout import extract_page_range
from gmtool.index.extract.ruled import find_ruled_rows, may_be_grid
from tests.pdfgen import RULED_ROWS, make_ruled_table_pdf


@pytest.fixture(scope="module")
def ruled_pdf(tmp_path_factory):
    pytest.importorskip("fpdf")
    return make_ruled_table_pdf(tmp_path_factory.mktemp("ruled") / "ruled.pdf")


def test_rows_of_a_ruled_table_are_entries_whole(ruled_pdf):
    doc = extract_pdf(ruled_pdf)
    classify(doc)
    rows = [e for e in doc.entries if e.origin == "row"]
    # names that wrap inside their cell stay one name; no wrapped piece becomes an entry
    assert [e.title for e in rows] == [r[0] for r in RULED_ROWS[1:]]
    by = {e.title: e for e in rows}
    assert by["War Flail"].body.startswith("d8 Ignores a shield.")
    assert "the next attack is hindered." in by["War Flail"].body
    assert by["Hooked Glaive of the River Wardens"].body.startswith("d10 Two hands.")
    assert all(doc.entries[e.parent].title == "Weapons" for e in rows)
    assert {e.content_type for e in rows} == {"item"}  # the WEAPON column header says so


def test_the_page_reports_its_rules_and_passes_the_grid_test(ruled_pdf):
    (_w, _h, lines), = extract_page_range(str(ruled_pdf), 0, 1)
    assert len(lines.rules) == len(RULED_ROWS) * 3  # fpdf2 boxes every cell
    assert may_be_grid(lines.rules)


def test_no_rules_no_table_finder(tmp_path):
    pytest.importorskip("fpdf")
    from tests.pdfgen import make_entries_pdf

    pages = extract_page_range(str(make_entries_pdf(tmp_path / "e.pdf")), 0, 1)
    rules = [getattr(lines, "rules", ()) for _, _, lines in pages]
    assert find_ruled_rows(pages, rules, [set()], 100.0) == ([], set())
