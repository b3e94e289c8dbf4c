"""PDF -> Document: outline, page labels, detected headings and section bodies.

The bulk pass reads pypdfium2 text objects (`pdf_layout`), which runs at a few hundred
pages per second per core; pdfplumber is not used at all. pypdfium2 resolves named
destinations of bookmarks (Songs of Maya) and page labels itself.

Heavy imports (pypdfium2, numpy) happen inside the functions.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.errors import ExtractError
from gmtool.types import Document

# Pages per worker task when workers > 1.
_CHUNK_MIN = 16
# a line this much larger than the body text is a heading (as in pdf_sections.detect_headings)
_HEADING_RATIO = 1.07


def _open(path: Path):
    import pypdfium2 as pdfium

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ExtractError("PDF_CORRUPT", f"{path.name}: cannot be read ({exc.strerror})", "check the file exists and is readable") from exc
    if size == 0:
        raise ExtractError("PDF_CORRUPT", f"{path.name}: the file is empty (0 bytes)", "re-download or re-export the PDF")
    try:
        return pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        msg = str(exc).lower()
        if "password" in msg:
            raise ExtractError(
                "PDF_ENCRYPTED",
                f"{path.name}: the PDF is password protected",
                "save an unprotected copy (e.g. qpdf --decrypt --password=... in.pdf out.pdf)",
            ) from exc
        raise ExtractError(
            "PDF_CORRUPT",
            f"{path.name}: not a readable PDF ({exc})",
            "re-download the file or repair it (e.g. qpdf in.pdf out.pdf)",
        ) from exc


def _outline(doc):

    items = []
    for bm in doc.get_toc(max_depth=32):
        title = re.sub(r"\s+", " ", bm.get_title() or "").strip()
        if not title:
            continue
        dest = bm.get_dest()
        if dest is None:
            continue
        page = dest.get_index()
        if page is None or page < 0:
            continue
        y = None
        try:
            mode, pos = dest.get_view()
            if mode == 1 and len(pos) >= 2 and pos[1]:  # XYZ: left, top, zoom
                y = pos[1]
        except (ValueError, TypeError, IndexError, RuntimeError):  # a view pdfium cannot parse
            y = None
        items.append((title, bm.level + 1, page, y))
    return items


# A page label longer than this is not a label (`/St 999999999` with roman numerals makes one of
# a million characters): the page's number stands in for it.
MAX_LABEL_CHARS = 24


def _labels(doc, n: int) -> list[str] | None:
    labels = [lb if len(lb := doc.get_page_label(i) or "") <= MAX_LABEL_CHARS else str(i + 1) for i in range(n)]
    if not any(labels):
        return None
    return [lb or str(i + 1) for i, lb in enumerate(labels)]


def page_ranges(n: int, workers: int) -> list[tuple[int, int]]:
    """How a PDF's pages are split across workers (two chunks per worker, for balance)."""
    if workers <= 1 or n < 2 * _CHUNK_MIN:
        return [(0, n)]
    workers = min(workers, max(1, n // _CHUNK_MIN))
    n_chunks = workers * 2
    bounds = [round(n * k / n_chunks) for k in range(n_chunks + 1)]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _read_pages(path: Path, n: int, workers: int, skip: dict[int, str]):
    from gmtool.index.extract.pdf_layout import extract_page_range

    ranges = page_ranges(n, workers)
    if len(ranges) == 1:
        return extract_page_range(str(path), 0, n, skip)
    from gmtool.index.pool import process_pool

    pages = []
    with process_pool(min(workers, len(ranges))) as pool:
        futs = [pool.submit(extract_page_range, str(path), a, b, skip) for a, b in ranges]
        for f in futs:
            pages.extend(f.result())
    return pages


@dataclass(frozen=True)
class PdfHead:
    """What the parent reads before the page pass: cheap, and needed to merge the pages."""

    pages: int
    title: str | None
    outline: list[tuple[str, int, int, float | None]]
    labels: list[str] | None
    skip: dict[int, str] = field(default_factory=dict)  # 0-based page -> why it is not read (pdf_streams)


def page_count(path: Path) -> int:
    """The number of pages, without reading the outline or labels."""
    doc = _open(Path(path))
    try:
        return len(doc)
    finally:
        doc.close()


def read_head(path: Path) -> PdfHead:
    """Open the PDF (raising PDF_ENCRYPTED / PDF_CORRUPT) and read its outline, labels and title,
    and which pages are over the stream budget (CONTENT_TOO_LARGE for the whole book)."""
    from gmtool.index.extract.pdf_streams import pages_to_skip

    path = Path(path)
    skip = pages_to_skip(path)
    doc = _open(path)
    try:
        n = len(doc)
        if n == 0:
            raise ExtractError("PDF_CORRUPT", f"{path.name}: the PDF has no pages", "re-export the PDF")
        title = (doc.get_metadata_dict().get("Title") or "").strip() or None
        return PdfHead(n, title, _outline(doc), _labels(doc, n), skip)
    finally:
        doc.close()


def extract_pdf(path: Path, workers: int = 1) -> Document:
    """Read one PDF into a Document (see gmtool.types); raises ExtractError."""
    path = Path(path)
    head = read_head(path)
    return assemble(path, head, _read_pages(path, head.pages, workers, head.skip))


def assemble(path: Path, head: PdfHead, pages: list) -> Document:  # type: ignore[type-arg]
    """Turn the per-page line data (from any number of workers, in page order) into a Document."""
    from gmtool.index.extract.labels import fold_field_labels, fold_labels, fold_table_breaks, merge_twins
    from gmtool.index.extract.levels import apply_levels
    from gmtool.index.extract.pdf_sections import (
        TABLE_BREAK,
        OutlineItem,
        body_size,
        build_entries,
        build_nodes,
        detect_headings,
        find_furniture,
        merge_inline,
        page_text,
        preamble,
        prepend,
        table_breaks,
    )
    from gmtool.index.extract.tables import find_rows
    from gmtool.index.extract.titles import cut_tag_words, tidy_titles
    from gmtool.index.extract.words import hyphenated, rejoin_pages, resolve_pages, vocabulary

    n, title, raw_outline, labels = head.pages, head.title, head.outline, head.labels
    heights = {}
    for i, (_w, h, _lines) in enumerate(pages):
        heights[i] = h
    outline = [OutlineItem(t, lvl, pg, (heights[pg] - y) if y is not None and pg in heights else None) for t, lvl, pg, y in raw_outline if pg < n]
    # a page skipped as too dense has a text layer: it is not reported as missing one
    skipped = [(i + 1, lines.skipped) for i, (_, _, lines) in enumerate(pages) if getattr(lines, "skipped", "")]
    empty = [i + 1 for i, (_, _, lines) in enumerate(pages)
             if not lines and not getattr(lines, "plain", 0) and not getattr(lines, "skipped", "")]
    if len(skipped) == n:
        raise ExtractError("PAGES_UNREADABLE", f"{Path(path).name}: none of its {n} pages could be read "
                           f"(page 1: {skipped[0][1]})", "re-export the PDF (e.g. qpdf in.pdf out.pdf)")
    if len(empty) == n:
        raise ExtractError(
            "NO_TEXT_LAYER",
            f"{Path(path).name}: none of its {n} pages has a text layer (a scanned PDF?)",
            "run OCR first, e.g. ocrmypdf in.pdf out.pdf",
        )
    texts = [ln.text for _, _, lines in pages for ln in lines]
    vocab_c = vocabulary(texts)
    resolve_pages(pages, vocab_c, body_size(pages) * _HEADING_RATIO)
    _part_glued(str(path), pages, vocab_c, texts)
    plain = [(i + 1, getattr(lines, "plain", 0)) for i, (_, _, lines) in enumerate(pages) if getattr(lines, "plain", 0)]
    rules = [getattr(lines, "rules", ()) for _, _, lines in pages]
    pages = _repair_ligatures(pages, vocab_c)
    drop = find_furniture(pages)
    rejoin_pages(pages, drop, vocab_c, hyphenated(texts))
    vocab = set(vocab_c)
    bsize = body_size(pages)
    heads, classes = detect_headings(pages, drop, bsize)
    nodes, warnings = build_nodes(pages, drop, heads, classes, outline)
    rows = find_rows(pages, drop, bsize * _HEADING_RATIO)
    table_breaks(pages, drop, nodes, rows)
    entries = build_entries(pages, drop, nodes, labels, vocab)
    starts = [nd.start for nd in nodes]
    leads = [_lead_at(pages, st) for st in starts]
    tidy_titles(entries, leads, vocab_c)
    found = _inline(pages, drop, bsize * _HEADING_RATIO, entries, starts, rules, rows)
    entries = fold_table_breaks(merge_inline(entries, starts, found, labels), TABLE_BREAK)
    cut_tag_words(entries)
    entries = fold_field_labels(merge_twins(fold_labels(entries)))
    apply_levels(entries)
    front = preamble(pages, drop, starts[0] if starts else None, title, labels, vocab)
    entries = prepend(front, entries)
    texts = [page_text(lines, drop[i], vocab) for i, (_, _, lines) in enumerate(pages)]
    if empty:
        warnings.append(f"{len(empty)} of {n} pages have no text layer")
    for why in dict.fromkeys(w for _, w in skipped):  # one warning per reason, not per page
        pgs = [pg for pg, w in skipped if w == why]
        shown = ", ".join(map(str, pgs[:10])) + (f" and {len(pgs) - 10} more" if len(pgs) > 10 else "")
        warnings.append(f"PAGE_SKIPPED: {len(pgs)} page(s) not indexed ({shown}): {why}")
    for pg, objects in plain:
        if objects > 0:
            warnings.append(f"page {pg} has {objects} objects: read as plain text, without headings")
        else:
            warnings.append(f"page {pg} has {-objects} objects: too many to read, its text is skipped")
    return Document(
        format="pdf",
        title=title,
        pages=n,
        entries=entries,
        page_texts=texts,
        page_labels=labels,
        has_outline=bool(raw_outline),
        pages_without_text=empty,
        warnings=warnings,
    )


def _part_glued(path: str, pages: list, vocab: Counter, texts: list[str]) -> None:  # type: ignore[type-arg]
    """Part, in place, the words run together with no mark in the text layer: printed once, made
    of two words of the book, and either set a word space apart in the glyphs or made of two of
    the book's commonest words printed apart elsewhere (see words.common_glue)."""
    from gmtool.index.extract.pdf_layout import lost_spaces
    from gmtool.index.extract.words import common_glue, glued_candidates, glued_places, split_glued

    cands = glued_candidates(vocab)
    places = glued_places(pages, cands) if cands else {}
    if not places:
        return
    cuts = lost_spaces(path, places)
    common = common_glue(cands, vocab, texts)
    for pi, words in places.items():
        for w in words:
            if w.lower() in common:
                cuts.setdefault(pi, {}).setdefault(w, common[w.lower()])
    split_glued(pages, cuts)


def _repair_ligatures(pages: list, vocab: Counter) -> list:  # type: ignore[type-arg]
    """Lines with a lost-ligature marker, repaired against the book's own words."""
    from gmtool.index.extract.pdf_layout import LIGATURE
    from gmtool.index.extract.titles import repair_ligatures

    out = []
    for w, h, lines in pages:
        if any(LIGATURE in ln.text for ln in lines):
            lines = [
                ln._replace(
                    text=repair_ligatures(ln.text, vocab),
                    lead=repair_ligatures(ln.lead, vocab),
                    cells=tuple((a, b, repair_ligatures(t, vocab)) for a, b, t in ln.cells),
                )
                if LIGATURE in ln.text else ln
                for ln in lines
            ]
        out.append((w, h, lines))
    return out


def _lead_at(pages: list, pos) -> str | None:  # type: ignore[type-arg]
    if pos.page >= len(pages) or pos.idx >= len(pages[pos.page][2]):
        return None
    return pages[pos.page][2][pos.idx].lead or None


def _inline(pages: list, drop: list, thr: float, entries: list, starts: list, rules: list, rows: list) -> list:  # type: ignore[type-arg]
    """Run-in entries and table rows, minus those a heading or bookmark already names. A ruled
    table's rows come from its rules; the text-only finders keep out of it. `rows`: the name-first
    table rows (tables.find_rows), found before the sections since they can close one."""
    from gmtool.index.extract.inline import drop_repeats, norm
    from gmtool.index.extract.ruled import find_ruled_rows
    from gmtool.index.extract.runin import find_runins, find_title_lines
    from gmtool.index.extract.tables import find_captions

    ruled, covered = find_ruled_rows(pages, rules, drop, thr)
    texts = (
        find_runins(pages, drop, thr)
        + rows
        + find_title_lines(pages, drop, thr)
        + find_captions(pages, drop, thr)
    )
    found = drop_repeats(ruled + [e for e in texts if e.pos not in covered])
    taken = set(starts)
    named = {(norm(e.title), e.page) for e in entries}
    blocks = [_stat_block(e.body) for e in entries]
    seen: set = set()
    out = []
    k = -1
    for e in sorted(found, key=lambda e: e.pos):
        while k + 1 < len(starts) and starts[k + 1] <= e.pos:
            k += 1
        key = (norm(e.title), e.pos.page + 1)
        if e.pos in taken or key in named or e.pos in seen:
            continue
        if e.kind == "runin" and k >= 0 and blocks[k]:
            continue  # a trait inside a stat block: the block is one entry
        seen.add(e.pos)
        out.append((k, e))
    # title lines are a list when they repeat within one section; one per section is a slot
    # of a template (the attack line of every stat block)
    per_section = Counter(k for k, e in out if e.kind == "line")
    return [e for k, e in out if e.kind != "line" or per_section[k] >= _LIST_MIN]


_STAT_LINE = re.compile(r"\d")
# title lines needed in one section to make it a list of entries
_LIST_MIN = 3


def _stat_block(body: str) -> bool:
    """A section that opens with a stat block: among its first paragraphs, at least two are
    short value lines ("Armor Class 12 (natural armor)", "Hit Points 7 (2d6)", "8 (-1) 14 (+2)")."""
    n = 0
    for par in body.split("\n", 10)[:10]:
        par = par.strip()
        words = par.split()
        if (
            2 <= len(words) <= 8
            and _STAT_LINE.search(par)
            and re.search(r"[A-Za-z]{2}", par)
            and ":" not in par
            and not par.endswith((".", ":"))
        ):
            n += 1
            if n >= 2:
                return True
    return False
