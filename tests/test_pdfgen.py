"""The PDF generators in tests/pdfgen.py produce what they claim."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pdfgen

pytest.importorskip("fpdf")
pdfium = pytest.importorskip("pypdfium2")
pdfplumber = pytest.importorskip("pdfplumber")

from pdfminer.pdfdocument import PDFNoOutlines
from pdfplumber.utils.exceptions import PdfminerException

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "gmtool" / "sample"


def _toc(path: Path) -> list[tuple[int, str, int | None]]:
    doc = pdfium.PdfDocument(str(path))
    try:
        out = []
        for bm in doc.get_toc():
            dest = bm.get_dest()
            out.append((bm.level, bm.get_title(), dest.get_index() if dest is not None else None))
        return out
    finally:
        doc.close()


def _page_texts(path: Path) -> list[str]:
    with pdfplumber.open(str(path)) as pdf:
        return [p.extract_text() or "" for p in pdf.pages]


def test_outline_pdf_has_two_level_outline_matching_headings(tmp_path):
    path = pdfgen.make_outline_pdf(tmp_path / "o.pdf")
    assert path.exists()
    toc = _toc(path)
    titles = [t for _, t, _ in toc]
    expected = [t for t, lvl, _ in pdfgen.DEFAULT_SECTIONS if lvl <= 1]
    assert titles == expected
    assert {lvl for lvl, _, _ in toc} == {0, 1}
    texts = _page_texts(path)
    assert len(texts) == 3
    for _lvl, title, page in toc:
        assert page is not None and title in texts[page]
    # headings are bigger and bold
    with pdfplumber.open(str(path)) as pdf:
        sizes = {round(c["size"]) for c in pdf.pages[0].chars}
        fonts = {c["fontname"] for c in pdf.pages[0].chars}
    assert 18 in sizes and 10 in sizes
    assert any("Bold" in f for f in fonts)


def test_outline_pdf_custom_sections(tmp_path):
    sections = [("Alpha", 0, ["alpha body"]), ("Beta", 1, ["beta body"]), ("Gamma", 0, ["gamma body"])]
    path = pdfgen.make_outline_pdf(tmp_path / "c.pdf", sections)
    assert [(lvl, t, p) for lvl, t, p in _toc(path)] == [(0, "Alpha", 0), (1, "Beta", 0), (0, "Gamma", 1)]


def test_plain_pdf_has_no_outline_but_same_text(tmp_path):
    path = pdfgen.make_plain_pdf(tmp_path / "p.pdf")
    assert _toc(path) == []
    with pdfplumber.open(str(path)) as pdf:
        assert not _has_outlines(pdf)
    text = "\n".join(_page_texts(path))
    for title, _, _ in pdfgen.DEFAULT_SECTIONS:
        assert title in text


def _has_outlines(pdf) -> bool:
    try:
        return bool(list(pdf.doc.get_outlines()))
    except PDFNoOutlines:
        return False


def test_two_column_pdf_has_two_x_ranges_on_shared_lines(tmp_path):
    path = pdfgen.make_two_column_pdf(tmp_path / "2c.pdf")
    with pdfplumber.open(str(path)) as pdf:
        assert len(pdf.pages) == 1
        page = pdf.pages[0]
        split = pdfgen.TWO_COL_SPLIT_X * 72 / 25.4
        words = page.extract_words()
    left = [w for w in words if w["x1"] < split]
    right = [w for w in words if w["x0"] > split]
    assert left and right and len(left) + len(right) == len(words)
    assert all("RIGHT" not in w["text"] for w in left)
    assert all("LEFT" not in w["text"] for w in right)
    assert {"LEFT-ONE", "LEFT-TWO", "LEFT"} <= {w["text"] for w in left}
    assert {"RIGHT-ONE", "RIGHT-TWO", "RIGHT"} <= {w["text"] for w in right}
    # the columns' lines share baselines, so a naive extractor interleaves them
    left_tops = {round(w["top"], 1) for w in left}
    right_tops = {round(w["top"], 1) for w in right}
    assert left_tops == right_tops
    naive = _page_texts(path)[0]
    assert "LEFT-ONE the first left paragraph RIGHT-ONE" in naive


def test_encrypted_pdf_needs_password(tmp_path):
    path = pdfgen.make_encrypted_pdf(tmp_path / "e.pdf")
    with pytest.raises(pdfium.PdfiumError):
        pdfium.PdfDocument(str(path))
    with pytest.raises(PdfminerException), pdfplumber.open(str(path)) as pdf:
        pdf.pages[0].extract_text()
    doc = pdfium.PdfDocument(str(path), password=pdfgen.ENCRYPTED_USER_PASSWORD)
    try:
        assert "Chapter One" in doc[0].get_textpage().get_text_range()
    finally:
        doc.close()


def test_image_only_pdf_has_no_text(tmp_path):
    path = pdfgen.make_image_only_pdf(tmp_path / "i.pdf")
    with pdfplumber.open(str(path)) as pdf:
        assert len(pdf.pages) == 1
        page = pdf.pages[0]
        assert page.chars == []
        assert (page.extract_text() or "").strip() == ""
        assert page.rects  # but something is drawn
    doc = pdfium.PdfDocument(str(path))
    try:
        assert doc[0].get_textpage().count_chars() == 0
    finally:
        doc.close()


@pytest.mark.parametrize("kind", ["zero", "garbage", "truncated", "not_pdf"])
def test_corrupt_pdf_fails_to_open(tmp_path, kind):
    path = pdfgen.make_corrupt_pdf(tmp_path / f"{kind}.pdf", kind)
    assert path.suffix == ".pdf"
    with pytest.raises(pdfium.PdfiumError):
        pdfium.PdfDocument(str(path))
    with pytest.raises(PdfminerException), pdfplumber.open(str(path)) as pdf:
        pdf.pages[0].extract_text()


def test_corrupt_broken_xref_is_damaged_but_repairable(tmp_path):
    path = pdfgen.make_corrupt_pdf(tmp_path / "bx.pdf", "broken_xref")
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and b"startxref\n9999" in data
    # both readers rebuild the cross-reference table by scanning the file
    doc = pdfium.PdfDocument(str(path))
    try:
        assert len(doc) == 3
        assert "Chapter One" in doc[0].get_textpage().get_text_range()
    finally:
        doc.close()
    assert "Chapter One" in _page_texts(path)[0]


def test_corrupt_kind_sizes(tmp_path):
    assert pdfgen.make_corrupt_pdf(tmp_path / "z.pdf", "zero").stat().st_size == 0
    assert pdfgen.make_corrupt_pdf(tmp_path / "g.pdf", "garbage").stat().st_size == 4096
    with pytest.raises(ValueError):
        pdfgen.make_corrupt_pdf(tmp_path / "x.pdf", "nope")


def test_build_sample_matches_committed_files(tmp_path):
    made = pdfgen.build_sample(tmp_path)
    assert [p.name for p in made] == ["bestiary.pdf", "grimoire.pdf"]
    for p in made:
        committed = SAMPLE_DIR / p.name
        assert committed.exists(), f"run: python tests/pdfgen.py --sample gmtool/sample ({p.name} missing)"
        assert (
            hashlib.sha256(committed.read_bytes()).hexdigest() == hashlib.sha256(p.read_bytes()).hexdigest()
        ), f"{committed} is stale: run python tests/pdfgen.py --sample gmtool/sample"


def test_sample_bestiary_outline_and_grimoire_plain():
    bestiary = SAMPLE_DIR / "bestiary.pdf"
    grimoire = SAMPLE_DIR / "grimoire.pdf"
    toc = _toc(bestiary)
    titles = [t for _, t, _ in toc]
    for monster in ("Tidecrawler Crab", "Saltglass Gazer", "Drowned Bellringer", "Fogmaw Serpent"):
        assert monster in titles
    assert 4 <= len(_page_texts(bestiary)) <= 6
    assert _toc(grimoire) == []
    text = "\n".join(_page_texts(grimoire))
    for line in ("Evocation cantrip", "1st-level evocation", "Wondrous item, rare (requires attunement)"):
        assert line in text
    assert (
        bestiary.stat().st_size + grimoire.stat().st_size + (SAMPLE_DIR / "lantern-coast.md").stat().st_size
    ) < 200_000
