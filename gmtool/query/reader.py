"""Reading a section or a page back, so a user (or an assistant) can check the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gmtool.errors import UsageError
from gmtool.storage import store

if TYPE_CHECKING:
    from gmtool.query.library import Library
    from gmtool.types import Entry, ReadResult


def _descendants(entries: list, i: int) -> list[int]:  # type: ignore[type-arg]
    """Entries are in document order, so a section's subsections follow it contiguously."""
    out = []
    level = entries[i].level
    for j in range(i + 1, len(entries)):
        if entries[j].level <= level:
            break
        out.append(j)
    return out


def _named(titles: list[str], want: str) -> tuple[list[int], bool]:
    """Entries whose title is `want` (exact: True), else close to it (best first), else starting with it."""
    exact = [i for i, t in enumerate(titles) if t == want]
    if exact:
        return exact, True
    import difflib

    close = difflib.get_close_matches(want, titles, n=3, cutoff=0.75)
    if close:
        return [i for c in close for i, t in enumerate(titles) if t == c], False
    return [i for i, t in enumerate(titles) if t.startswith(want)], False


def _covers(e: Entry, page: int) -> bool:
    """Whether a section spans `page` (a Markdown or text section has lines, no pages)."""
    return e.page is not None and e.page <= page <= max(e.end_page or e.page, e.page)


def find_entry(lib: Library, sid: str, title: str, page: int | None = None) -> int:
    """The section titled `title`; with `page`, the one whose pages cover it, since a book may repeat a
    title (a spell list and the spell itself)."""
    from gmtool.textnorm import normalize

    entries = lib.require(sid).entries
    named, exact = _named([normalize(e.title) for e in entries], normalize(title))
    if not named:
        raise UsageError(
            "SECTION_NOT_FOUND",
            f"no section titled '{title}' in {sid}",
            f'try `gmtool search "{title}" --source {sid}` or `gmtool toc {sid}`',
            exit_code=1,
        )
    if page is not None:
        elsewhere = sorted({p for i in named if (p := entries[i].page) is not None})
        named = [i for i in named if _covers(entries[i], page)]
        if not named:
            pages = [str(p) for p in elsewhere[:10]]
            listed = ", ".join(pages[:-1]) + " or " + pages[-1] if len(pages) > 1 else pages[0]
            raise UsageError("SECTION_NOT_ON_PAGE", f"'{title}' is not on page {page} of {sid}",
                             f"it is on page {listed}: give one of those, or no page", exit_code=1)
    if exact:
        # prefer the copy that carries a type or the longest text (a heading over a TOC line)
        return max(named, key=lambda i: (entries[i].content_type is not None, len(entries[i].body)))
    return named[0]


def read_section(lib: Library, sid: str, title: str, max_chars: int, page: int | None = None) -> ReadResult:
    from gmtool.types import ReadResult

    entries = lib.require(sid).entries
    if page is not None:
        check_page(lib, sid, page)
    i = find_entry(lib, sid, title, page)
    e = entries[i]
    parts = [e.body.strip()]
    for j in _descendants(entries, i):
        parts.append(f"\n{entries[j].title}\n{entries[j].body.strip()}")
    text = "\n".join(p for p in parts if p).strip()
    truncated = len(text) > max_chars > 0
    if truncated:
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    gid = lib.offsets[sid] + i
    meta = lib.metas[sid]
    return ReadResult(
        source_id=sid,
        source_name=meta.title,
        file=e.file or meta.file,  # a folder book's chapter file
        title=e.title,
        page=e.page,
        page_label=e.page_label if e.page_label is not None else lib.page_label(sid, e.page),
        end_page=max(e.end_page, e.page) if e.page is not None else None,
        content_type=e.content_type,
        text=text,
        truncated=truncated,
        previous_title=entries[i - 1].title if i > 0 else None,
        next_title=entries[i + 1].title if i + 1 < len(entries) else None,
        section_path=lib.section_path(gid),
        line=e.line,
    )


def check_page(lib: Library, sid: str, page: int) -> None:
    pages = lib.metas[sid].pages or 0
    if page < 1 or page > max(pages, 1):
        raise UsageError("INVALID_PAGE", f"{sid} has pages 1–{pages}, not {page}", f"pick a page between 1 and {pages}")


def read_page(lib: Library, sid: str, page: int, max_chars: int) -> ReadResult:
    from gmtool.types import ReadResult

    meta = lib.metas[sid]
    check_page(lib, sid, page)
    texts = store.load_pages(lib.index_dir, sid, meta.sha256)
    text = texts[page - 1] if page <= len(texts) else ""
    truncated = len(text) > max_chars > 0
    if truncated:
        text = text[:max_chars].rsplit(" ", 1)[0] + " …"
    entries = lib.require(sid).entries
    paged = [e for e in entries if e.page is not None]  # Markdown/text entries have lines, not pages
    on_page = [e for e in paged if e.page == page]
    before = [e for e in paged if e.page < page]  # type: ignore[operator]
    after = [e for e in paged if e.page > page]  # type: ignore[operator]
    return ReadResult(
        source_id=sid,
        source_name=meta.title,
        file=meta.file,
        title=on_page[0].title if on_page else None,
        page=page,
        page_label=lib.page_label(sid, page),
        end_page=page,
        content_type=None,
        text=text,
        truncated=truncated,
        previous_title=before[-1].title if before else None,
        next_title=after[0].title if after else None,
    )
