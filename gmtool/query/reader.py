"""Reading a section or a page back, so a user (or an assistant) can check the answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gmtool.errors import UsageError
from gmtool.storage import store

if TYPE_CHECKING:
    from gmtool.query.library import Library
    from gmtool.types import ReadResult


def _descendants(entries: list, i: int) -> list[int]:  # type: ignore[type-arg]
    """Entries are in document order, so a section's subsections follow it contiguously."""
    out = []
    level = entries[i].level
    for j in range(i + 1, len(entries)):
        if entries[j].level <= level:
            break
        out.append(j)
    return out


def find_entry(lib: Library, sid: str, title: str) -> int:
    from gmtool.textnorm import normalize

    entries = lib.require(sid).entries
    want = normalize(title)
    exact = [i for i, e in enumerate(entries) if normalize(e.title) == want]
    if exact:
        # prefer the copy that carries a type or the longest text (a heading over a TOC line)
        return max(exact, key=lambda i: (entries[i].content_type is not None, len(entries[i].body)))
    import difflib

    titles = [normalize(e.title) for e in entries]
    close = difflib.get_close_matches(want, titles, n=3, cutoff=0.75)
    if close:
        return titles.index(close[0])
    starts = [i for i, t in enumerate(titles) if t.startswith(want)]
    if starts:
        return starts[0]
    raise UsageError(
        "SECTION_NOT_FOUND",
        f"no section titled '{title}' in {sid}",
        f'try `gmtool search "{title}" --source {sid}` or `gmtool toc {sid}`',
        exit_code=1,
    )


def read_section(lib: Library, sid: str, title: str, max_chars: int) -> ReadResult:
    from gmtool.types import ReadResult

    entries = lib.require(sid).entries
    i = find_entry(lib, sid, title)
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
        file=meta.file,
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


def read_page(lib: Library, sid: str, page: int, max_chars: int) -> ReadResult:
    from gmtool.types import ReadResult

    meta = lib.metas[sid]
    if page < 1 or page > max(meta.pages, 1):
        raise UsageError(
            "INVALID_PAGE", f"{sid} has pages 1–{meta.pages}, not {page}", f"pick a page between 1 and {meta.pages}"
        )
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
