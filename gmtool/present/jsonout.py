"""The one JSON shape, shared by `--json` on the CLI and the MCP tools' structured content."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any, cast

import orjson

from gmtool.types import Hit, ScanReport, SearchResult, SourceMeta, TocNode, TocResult

if TYPE_CHECKING:  # the TypedDicts need typing_extensions (~3 ms): the CLI's --json never needs them at run time
    from gmtool.present.shapes import HitOut, ScanOut, SearchOut, SourceOut, TocNodeOut, TocTreeOut

_OPTIONAL_HIT_KEYS = ("line", "also_in", "duplicate_of", "namesake_of", "similarity_score", "matched_terms", "fields", "explain")


def hit_dict(h: Hit) -> HitOut:
    d: dict[str, Any] = {
        "rank": h.rank,
        "title": h.title,
        "content_type": h.content_type,
        "source_id": h.source_id,
        "source_name": h.source_name,
        "file": h.file,
        "page": h.page,
        "page_label": h.page_label,
        "section_path": h.section_path,
        "score": h.score,
        "snippet": h.snippet,
    }
    for key in _OPTIONAL_HIT_KEYS:
        value = getattr(h, key)
        if value is not None:
            d[key] = value
    return cast("HitOut", d)


def search_dict(r: SearchResult) -> SearchOut:
    d: dict[str, Any] = {"query": r.query, "mode": r.mode, "results": [hit_dict(h) for h in r.results],
                         "warnings": r.warnings}
    if r.confidence is not None:
        d["confidence"] = r.confidence
    if r.message:
        d["message"] = r.message
    if r.weak:
        d["weak"] = [hit_dict(h) for h in r.weak]
    if r.suggestions:
        d["suggestions"] = r.suggestions
    return cast("SearchOut", d)


def source_dict(m: SourceMeta) -> SourceOut:
    d = asdict(m)
    d["entries"] = d.pop("entry_count")
    d["types"] = d.pop("type_counts")
    d["typed_share"] = m.typed_share
    d["pages_without_text"] = len(m.pages_without_text)
    if m.lines is not None:  # Markdown/text: lines, no pages
        d["pages"] = None
    return cast("SourceOut", d)


def scan_dict(r: ScanReport) -> ScanOut:
    d = asdict(r)
    d["files_indexed"] = r.indexed
    return cast("ScanOut", d)


def toc_dict(r: TocResult) -> TocTreeOut:
    """The one TOC shape: `toc --json` and the MCP toc resource print this; get_library_toc pages
    through `toc_rows` of the same tree."""
    return {"source_id": r.source_id, "source_name": r.source_name, "file": r.file, "entries": r.entries}


def toc_rows(r: TocResult) -> list[TocNodeOut]:
    """The tree flattened in document order; `depth` (1 = top) replaces the children."""
    return list(iter_toc_rows(r))


def iter_toc_rows(r: TocResult) -> Iterator[TocNodeOut]:
    """toc_rows one at a time: a page of a large book's TOC then copies only its own rows."""
    stack: list[tuple[Iterator[TocNode], int]] = [(iter(r.entries), 1)]
    while stack:
        nodes, depth = stack[-1]
        n = next(nodes, None)
        if n is None:
            stack.pop()
            continue
        row: dict[str, Any] = {k: v for k, v in n.items() if k != "children"}
        row["depth"] = depth
        yield cast("TocNodeOut", row)
        stack.append((iter(n["children"]), depth + 1))


def to_data(obj: Any) -> Any:
    if isinstance(obj, SearchResult):
        return search_dict(obj)
    if isinstance(obj, ScanReport):
        return scan_dict(obj)
    if isinstance(obj, SourceMeta):
        return source_dict(obj)
    if isinstance(obj, TocResult):
        return toc_dict(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        return asdict(obj)
    return obj


def dumps(obj: Any, pretty: bool = True) -> str:
    """A file name that is not UTF-8 appears in its printable form (`caf\\xe9.md`, see textnorm.shown_name)."""
    opt = orjson.OPT_INDENT_2 if pretty else 0
    opt |= orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY
    data = to_data(obj)
    try:
        return orjson.dumps(data, option=opt).decode()
    except TypeError as exc:
        if "surrogates" not in str(exc):
            raise
    from gmtool.textnorm import shown_name, walk_strings

    return orjson.dumps(walk_strings(data, shown_name), option=opt).decode()
