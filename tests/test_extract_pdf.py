"""The PDF extractor: generated PDFs for the edge cases, the shared corpus for the real books."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gmtool.errors import ExtractError
from gmtool.index.extract.pdf import extract_pdf

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "pdf"
SRD51 = CORPUS / "SRD5.1-CCBY4.0_License_live_links.pdf"
CCSRD = CORPUS / "cc-srd5.pdf"
MAYA = CORPUS / "Songs-of-Maya_rules.pdf"
LASERS = CORPUS / "lasers_and_feelings_rpg.pdf"

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus PDFs not found at {CORPUS}")

LOREM = (
    "The old lighthouse keeper watches the cliffs at night and writes every ship into his log. "
    "Nobody in the village reads it, but the harbor master pays him all the same. "
)


def _fpdf():
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF(format="A4")
    pdf.set_auto_page_break(True, margin=15)
    return pdf


# ----------------------------------------------------------------------------- errors


def test_zero_byte_file(tmp_path):
    p = tmp_path / "empty.pdf"
    p.write_bytes(b"")
    with pytest.raises(ExtractError) as ei:
        extract_pdf(p)
    assert ei.value.code == "PDF_CORRUPT"


def test_text_file_renamed(tmp_path):
    p = tmp_path / "notes.pdf"
    p.write_text("just some notes, not a PDF\n" * 20)
    with pytest.raises(ExtractError) as ei:
        extract_pdf(p)
    assert ei.value.code == "PDF_CORRUPT"


def test_truncated_pdf(tmp_path):
    pdf = _fpdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, LOREM * 20, new_x="LMARGIN", new_y="NEXT")
    data = bytes(pdf.output())
    p = tmp_path / "cut.pdf"
    p.write_bytes(data[: len(data) // 3])
    with pytest.raises(ExtractError) as ei:
        extract_pdf(p)
    assert ei.value.code in ("PDF_CORRUPT", "NO_TEXT_LAYER")


def test_encrypted_pdf(tmp_path):
    pdf = _fpdf()
    pdf.set_encryption(owner_password="owner", user_password="secret")
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, LOREM, new_x="LMARGIN", new_y="NEXT")
    p = tmp_path / "locked.pdf"
    pdf.output(str(p))
    with pytest.raises(ExtractError) as ei:
        extract_pdf(p)
    assert ei.value.code == "PDF_ENCRYPTED"


def test_no_text_layer(tmp_path):
    pdf = _fpdf()
    for _ in range(2):
        pdf.add_page()
        pdf.rect(20, 20, 100, 50, style="F")
    p = tmp_path / "scan.pdf"
    pdf.output(str(p))
    with pytest.raises(ExtractError) as ei:
        extract_pdf(p)
    assert ei.value.code == "NO_TEXT_LAYER"
    assert "ocr" in ei.value.hint.lower()


def test_some_pages_without_text(tmp_path):
    pdf = _fpdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    pdf.multi_cell(0, 5, LOREM, new_x="LMARGIN", new_y="NEXT")
    pdf.add_page()
    pdf.rect(20, 20, 100, 50, style="F")
    p = tmp_path / "mixed.pdf"
    pdf.output(str(p))
    doc = extract_pdf(p)
    assert doc.pages == 2
    assert doc.pages_without_text == [2]


# ----------------------------------------------------------------------------- layout


def test_two_columns_read_left_then_right(tmp_path):
    pdf = _fpdf()
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    left = " ".join(f"leftword{i}" for i in range(120))
    right = " ".join(f"rightword{i}" for i in range(120))
    pdf.set_xy(15, 20)
    pdf.multi_cell(85, 5, left, new_x="LMARGIN", new_y="NEXT")
    pdf.set_xy(110, 20)
    pdf.multi_cell(85, 5, right, new_x="LMARGIN", new_y="NEXT")
    p = tmp_path / "columns.pdf"
    pdf.output(str(p))
    text = extract_pdf(p).page_texts[0]
    assert "leftword119" in text and "rightword0" in text
    assert text.index("leftword119") < text.index("rightword0")
    # each column's words stay in order
    assert text.index("leftword10 ") < text.index("leftword11 ") < text.index("leftword100")
    assert text.index("rightword10 ") < text.index("rightword100")


def test_headings_detected_without_outline(tmp_path):
    pdf = _fpdf()
    pdf.add_page()
    for chapter in ("The Harbor Town", "The Sunken Keep"):
        pdf.set_font("Helvetica", style="B", size=18)
        pdf.multi_cell(0, 9, chapter, new_x="LMARGIN", new_y="NEXT")
        for section in ("Arrival", "Rumours"):
            pdf.set_font("Helvetica", style="B", size=14)
            pdf.multi_cell(0, 7, f"{section} at {chapter.split()[-1]}", new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, LOREM * 3, new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("Helvetica", style="B", size=10)
            pdf.write(5, "Run-in Label. ")
            pdf.set_font("Helvetica", size=10)
            pdf.multi_cell(0, 5, LOREM, new_x="LMARGIN", new_y="NEXT")
    p = tmp_path / "plain.pdf"
    pdf.output(str(p))
    doc = extract_pdf(p)
    assert not doc.has_outline
    titles = [(e.title, e.level) for e in doc.entries]
    assert ("The Harbor Town", 1) in titles
    assert ("Arrival at Town", 2) in titles
    assert ("Rumours at Keep", 2) in titles
    assert not any("Run-in" in t for t, _ in titles)
    keep = next(i for i, e in enumerate(doc.entries) if e.title == "The Sunken Keep")
    rumours = next(e for e in doc.entries if e.title == "Rumours at Keep")
    assert rumours.parent == keep
    assert rumours.body.startswith("The old lighthouse keeper")
    assert all(e.origin == "heading" for e in doc.entries)


def test_outline_entries(tmp_path):
    pdf = _fpdf()
    for name in ("Goblins", "Trolls"):
        pdf.add_page()
        pdf.start_section(name, level=0)
        pdf.set_font("Helvetica", style="B", size=16)
        pdf.multi_cell(0, 8, name, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(0, 5, f"All about {name.lower()}. " + LOREM, new_x="LMARGIN", new_y="NEXT")
    p = tmp_path / "outline.pdf"
    pdf.output(str(p))
    doc = extract_pdf(p)
    assert doc.has_outline
    byname = {e.title: e for e in doc.entries}
    assert byname["Goblins"].page == 1 and byname["Trolls"].page == 2
    assert byname["Trolls"].origin == "outline"
    assert byname["Trolls"].body.startswith("All about trolls.")


def test_workers_give_the_same_result(tmp_path):
    pdf = _fpdf()
    for k in range(40):
        pdf.add_page()
        pdf.set_font("Helvetica", style="B", size=16)
        pdf.multi_cell(0, 8, f"Room {k}", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(0, 5, LOREM, new_x="LMARGIN", new_y="NEXT")
    p = tmp_path / "rooms.pdf"
    pdf.output(str(p))
    one, two = extract_pdf(p, workers=1), extract_pdf(p, workers=2)
    assert one.page_texts == two.page_texts
    assert [(e.title, e.page, e.body) for e in one.entries] == [(e.title, e.page, e.body) for e in two.entries]


# ----------------------------------------------------------------------------- corpus


@pytest.fixture(scope="module")
def srd51(corpus_pdf_doc):
    return corpus_pdf_doc(SRD51.name)  # as the session's corpus library indexed it (conftest)


@pytest.fixture(scope="module")
def ccsrd(corpus_pdf_doc):
    return corpus_pdf_doc(CCSRD.name)


def _entry(doc, title):
    hits = [e for e in doc.entries if e.title == title]
    assert hits, f"no entry titled {title!r}"
    return hits[0]


# where each heading is printed (1-based physical page), checked by eye
EXPECTED_PAGES = {
    "srd51": {"Fireball": 144, "Owlbear": 339, "Bag of Holding": 210, "Grappled": 358},
    "ccsrd": {"Fireball": 282, "Owlbear": 581, "Bag of Holding": 431, "Grappled": 147},
}


@needs_corpus
@pytest.mark.parametrize("which", ["srd51", "ccsrd"])
def test_srd_pages_and_fireball(which, request):
    doc = request.getfixturevalue(which)
    for title, page in EXPECTED_PAGES[which].items():
        e = _entry(doc, title)
        assert e.page == page, title
        assert title in doc.page_texts[page - 1]
        assert e.end_page >= e.page
    fb = _entry(doc, "Fireball")
    assert fb.body.startswith("3rd-level evocation")
    body = " ".join(fb.body.split())
    start = body.index("A bright streak flashes from your pointing finger")
    end = body.index("for each slot level above 3rd.")
    assert start < end
    assert "20-foot-radius sphere" in body
    assert "The fire spreads around corners. It ignites flammable objects" in body
    owl = _entry(doc, "Owlbear")
    assert owl.body.startswith("Large monstrosity, unaligned\nArmor Class 13")
    assert _entry(doc, "Bag of Holding").body.startswith("Wondrous item, uncommon")


@needs_corpus
def test_srd51_cleaning(srd51):
    text = "\n".join(srd51.page_texts)
    assert "half-elf" in text.lower()
    for odd in ("\u00ad", "\u2010", "\u2011", "\t", "\xa0"):
        assert odd not in text
    # running footer "System Reference Document 5.1 <n>" is gone
    assert "System Reference Document 5.1" not in srd51.page_texts[200]
    assert srd51.page_labels is None
    assert srd51.title is None or isinstance(srd51.title, str)


@needs_corpus
def test_songs_of_maya_outline_and_labels():
    doc = extract_pdf(MAYA)
    assert doc.has_outline
    assert doc.page_labels is not None and len(doc.page_labels) == doc.pages
    assert doc.page_labels[0] == "1" and doc.page_labels[1] == "1"
    assert all(doc.page_labels[i] == str(i) for i in range(1, doc.pages))
    outline = [e for e in doc.entries if e.origin == "outline"]
    assert len(outline) >= 100
    intro = _entry(doc, "Introduction")
    assert intro.page == 6 and intro.page_label == "5"
    goals = _entry(doc, "Goals")
    assert goals.parent is not None and doc.entries[goals.parent].title == "Introduction"


@needs_corpus
def test_lasers_two_columns():
    doc = extract_pdf(LASERS)
    assert doc.pages == 1
    text = doc.page_texts[0]
    assert "LASERS" in text.upper()


@needs_corpus
def test_lasers_reading_order():
    """The left panel holds two columns under a full-width intro; read the left one first."""
    doc = extract_pdf(LASERS)
    text = " ".join(doc.page_texts[0].split())
    left = ["Choose a style for your character", "Give your character a cool space adventure", "PLAYERS: CREATE THE SHIP"]
    right = ["When you do something risky, roll 1d6", "If you roll your number exactly", "HELPING: If you want to help someone"]
    pos = {p: text.index(p) for p in left + right}
    assert text.index("YOU ARE THE CREW") < pos[left[0]]
    assert max(pos[p] for p in left) < min(pos[p] for p in right)
    # the sidebar credits do not interleave with the adventure tables
    assert "Space Pirates" in text and "THE DOUBLECLICKS" in text
    assert not re.search(r"Alien Brain Worms under a CC", text)
    # a heading at a band's foot is read with the paragraph it introduces
    assert re.search(r"GM: RUN THE GAME\s+Play to find out", doc.page_texts[0])


@needs_corpus
def test_srd_furniture_keeps_content(srd51, ccsrd):
    """Repeated lines at the top of a page are only dropped when they are real running heads."""
    for title in ("Ice Mephit", "Magma Mephit", "Steam Mephit"):
        assert _entry(ccsrd, title).body.startswith("Small elemental, neutral evil"), title
    for title in ("Adult Red Dragon", "Androsphinx", "Dragon Turtle"):
        assert "Challenge 17 (18,000 XP)" in _entry(srd51, title).body, title
    assert _entry(srd51, "Preparing and Casting Spells")


@needs_corpus
def test_srd51_group_headings(srd51):
    """"Mimic" is no roman page number; entries after a monster group are not its members."""
    mimic = _entry(srd51, "Mimic")
    assert mimic.page == 332 and mimic.body.startswith("Medium monstrosity (shapechanger)")

    def parent(title):
        e = _entry(srd51, title)
        return srd51.entries[e.parent].title if e.parent is not None else None

    assert parent("Owlbear") == "Monsters (O)"
    assert parent("Gray Ooze") == "Oozes"
    assert parent("Merfolk") == "Monsters (M)"
    assert parent("Steam Mephit") == "Mephits"
    assert parent("Werewolf") == "Lycanthropes"
    assert parent("Dragon Turtle") == "Monsters (D)"
    assert parent("Silver Dragon Wyrmling") == "Dragons, Metallic"
    assert parent("Vampire Spawn") == "Vampires"
    assert parent("Thief") == "Roguish Archetypes"
    assert parent("Roguish Archetypes") == "Rogue"


def test_page_number_pattern():
    from gmtool.index.extract.pdf_sections import _PAGE_NUMBER

    for s in ("12", "xiv", "XIV", "Page 3", "iv"):
        assert _PAGE_NUMBER.match(s), s
    for s in ("Mimic", "MIMIC", "Civil", "Dim", "Xiv"):
        assert not _PAGE_NUMBER.match(s), s
