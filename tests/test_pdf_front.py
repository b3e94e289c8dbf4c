"""The text before a PDF's first heading, or all of a PDF without headings, is an entry:
every readable line of a book can be found."""

from __future__ import annotations

from pathlib import Path

from conftest import scan_isolated
from pdfgen import make_headingless_pdf, make_outline_pdf
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.index.extract.pdf import extract_pdf

NOTES = [
    "Just some notes about the goblins of the marsh and their lanterns.",
    "The quartermaster keeps a ledger of stolen turnips in the cellar.",
]


def test_headingless_pdf_gets_one_entry(tmp_path: Path) -> None:
    doc = extract_pdf(make_headingless_pdf(tmp_path / "notes.pdf", NOTES))
    assert len(doc.entries) == 1
    e = doc.entries[0]
    assert e.title.startswith("Just some notes")  # no metadata title: the first line
    assert e.page == 1 and e.parent is None
    assert "goblins" in e.body and "turnips" in e.body


def test_front_entry_titled_by_metadata(tmp_path: Path) -> None:
    doc = extract_pdf(make_headingless_pdf(tmp_path / "notes.pdf", NOTES, title="Marsh Notes"))
    assert [e.title for e in doc.entries] == ["Marsh Notes"]


def test_first_line_a_heading_adds_nothing(tmp_path: Path) -> None:
    doc = extract_pdf(make_outline_pdf(tmp_path / "book.pdf"))
    assert all(e.origin != "text" for e in doc.entries)


def test_search_finds_a_headingless_pdf(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    make_headingless_pdf(lib / "notes.pdf", NOTES)
    make_outline_pdf(lib / "book.pdf")  # a second book: a word in every entry has no weight
    scan_isolated(lib, tmp_path / "config")
    r = CliRunner().invoke(app, ["search", "turnips", "--json", "--library", str(lib)],
                           env={"GMTOOL_CONFIG_DIR": str(tmp_path / "config")})
    assert r.exit_code == 0, r.stderr
    assert "notes.pdf" in r.stdout and "turnips" in r.stdout.lower()
