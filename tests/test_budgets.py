"""Budgets for hostile sizes (issue 25, items 3, 4 and 11, and the minor ones): a book past a cap
is indexed up to it with a warning code, or the bad part skipped with a code; never all the
memory, never a hang. The inputs are small here and the caps lowered to fit them; the full-size
inputs and their peak memory are in bench/memory.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.index.extract import markdown, sections

runner = CliRunner()


def _scan(lib: Path) -> dict:
    r = runner.invoke(app, ["scan", str(lib), "--no-embed", "--json", "--workers", "1"])
    assert r.stdout, r.stderr
    return json.loads(r.stdout)


# --- 3: heading-dense Markdown ----------------------------------------------------------------


def test_a_heading_dense_markdown_file_is_indexed_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: every `# H` line became an entry (a million of them took 5.3 GB and a 509 MB index)."""
    monkeypatch.setattr(sections, "MAX_ENTRIES", 100)
    monkeypatch.setattr(markdown, "MAX_ENTRIES", 100)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "dense.md").write_text("".join(f"# H{i}\n" for i in range(1000)), encoding="utf-8")
    (lib / "plain.md").write_text("# Plain\n\nA plain book about a beryl.\n", encoding="utf-8")
    rep = _scan(lib)
    assert rep["indexed"] == 2 and not rep["failed"]
    capped = [w for w in rep["warnings"] if w.startswith("ENTRIES_CAPPED")]
    assert len(capped) == 1 and "dense.md" in capped[0] and "1,000 headings" in capped[0], rep["warnings"]
    counts = {m.file: m.entry_count for m in Engine(lib).sources()}
    assert counts["dense.md"] == 100
    toc = Engine(lib).toc("dense")
    assert len(toc.entries) == 100 and toc.entries[-1]["title"] == "H99"
    assert Engine(lib).verify().healthy


def test_any_book_past_the_cap_is_cut_keeping_its_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    from gmtool.types import Entry

    monkeypatch.setattr(sections, "MAX_ENTRIES", 3)
    entries = [Entry(title=f"E{i}", level=1 + (i % 2), page=1, parent=(i - 1 if i % 2 else None)) for i in range(6)]
    warnings: list[str] = []
    kept = sections.cap_entries(entries, warnings)
    assert [e.title for e in kept] == ["E0", "E1", "E2"]
    assert all(e.parent is None or e.parent < len(kept) for e in kept)
    assert warnings == ["ENTRIES_CAPPED: 6 entries, more than one book may hold; the first 3 are indexed"]


# --- 4: a PDF flate bomb -------------------------------------------------------------------------


def _library_with(tmp_path: Path, pdf_name: str) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    for word in ("beryl", "garnet", "jasper"):
        (lib / f"{word}.md").write_text(f"# {word.title()}\n\nA note about a {word}.\n", encoding="utf-8")
    return lib / pdf_name


def _bomb(path: Path, inflated: int) -> Path:
    import zlib

    import pdfgen

    return pdfgen.text_pages_pdf(path, [b"A first page about a topaz.", b"", b"", b"The last page, of a zircon."],
                                 shared=zlib.compress(b" " * inflated, 9))


def test_a_flate_bomb_skips_its_pages_and_keeps_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: pdfium inflated every page's content whole, so a 783 KB PDF took 1.56 GB (5.1 GB with two
    workers); nothing limited the decompressed size. Here 4 MB of content against a 1 MB cap."""
    from gmtool.index.extract import pdf_streams

    monkeypatch.setattr(pdf_streams, "MAX_STREAM_BYTES", 1 << 20)
    pdf = _bomb(_library_with(tmp_path, "bomb.pdf"), 4 << 20)
    assert pdf.stat().st_size < 20_000
    rep = _scan(pdf.parent)
    assert rep["indexed"] == 4 and not rep["failed"], rep
    skipped = [w for w in rep["warnings"] if w.startswith("PAGE_SKIPPED")]
    assert len(skipped) == 1 and "bomb.pdf" in skipped[0] and "2 page(s) not indexed (2, 3)" in skipped[0], skipped
    eng = Engine(pdf.parent)
    assert eng.search("topaz").results and eng.search("zircon").results  # the pages around the bomb


def test_a_book_whose_streams_inflate_past_the_book_cap_is_skipped_with_a_code(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gmtool.index.extract import pdf_streams

    monkeypatch.setattr(pdf_streams, "MAX_BOOK_BYTES", 2 << 20)
    pdf = _bomb(_library_with(tmp_path, "bomb.pdf"), 3 << 20)
    rep = _scan(pdf.parent)
    assert [(f["file"], f["code"]) for f in rep["failed"]] == [("bomb.pdf", "CONTENT_TOO_LARGE")]
    assert rep["indexed"] == 3


# --- minor: page labels and a lying /Count -------------------------------------------------------


def test_a_huge_page_label_start_makes_no_huge_label(tmp_path: Path) -> None:
    """Before: `/St 999999999` in roman numerals made a label of a million characters."""
    import pdfgen

    pdf = pdfgen.text_pages_pdf(_library_with(tmp_path, "labels.pdf"), [b"Roman page of an agate.", b"Second page."],
                                catalog_extra=b"/PageLabels << /Nums [0 << /S /R /St 999999999 >>] >> ")
    rep = _scan(pdf.parent)
    assert rep["indexed"] == 4 and not rep["failed"], rep
    hit = Engine(pdf.parent).search("agate").results[0]
    assert hit.page == 1 and hit.page_label is not None and len(hit.page_label) <= 24


def test_a_pdf_whose_count_lies_fails_only_the_missing_pages(tmp_path: Path) -> None:
    """Before: a page tree whose /Count promises more pages than it holds failed the whole book."""
    import pdfgen

    pdf = pdfgen.text_pages_pdf(_library_with(tmp_path, "liar.pdf"), [b"Onyx on the first page.", b"Opal on the second."],
                                kids_count=5)
    rep = _scan(pdf.parent)
    assert rep["indexed"] == 4 and not rep["failed"], rep
    assert [w for w in rep["warnings"] if w.startswith("PAGE_SKIPPED")] == [
        "PAGE_SKIPPED: liar.pdf: 3 page(s) not indexed (3, 4, 5): pdfium cannot load it (Failed to load page.)"]
    eng = Engine(pdf.parent)
    assert eng.search("onyx").results and eng.search("opal").results


# --- 11: a read that would block -----------------------------------------------------------------


def test_a_read_that_would_block_is_not_a_file_within_the_guard() -> None:
    """Before: a `book.md` link to a kernel file that blocks on read (/proc/kmsg) hung the scan: the
    descriptor was made blocking after the open. A pipe with no writer stands in for such a file (the
    scan refuses a pipe by its type before this; the guard is for what looks like a regular file)."""
    import os
    import time

    from gmtool.errors import ExtractError
    from gmtool.index.files import read_guarded

    r, w = os.pipe()
    os.set_blocking(r, False)
    try:
        t0 = time.monotonic()
        with pytest.raises(ExtractError) as exc:
            read_guarded(r, "kmsg.md", wait_s=0.3)
        assert exc.value.code == "NOT_A_FILE" and time.monotonic() - t0 < 5
        os.write(w, b"late data")
        assert read_guarded(r, "kmsg.md", wait_s=0.3) == b"late data"  # data that comes is read
    finally:
        os.close(r)
        os.close(w)
