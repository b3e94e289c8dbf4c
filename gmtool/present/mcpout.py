"""What the MCP tools hand back: the shared JSON shapes cut to a client's budget, a short text
rendering of each, and error lines whose hints name MCP tools rather than CLI commands.

The JSON shapes themselves come from `gmtool.present.jsonout`, so `--json` and the tools agree;
only the size limits and the text are MCP's own.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from gmtool.errors import UsageError
from gmtool.present.jsonout import iter_toc_rows, source_dict
from gmtool.present.pages import page_ref
from gmtool.present.terminal import line as one_line  # a file name or an argument can hold control characters

if TYPE_CHECKING:
    from gmtool.present.shapes import LibraryOut, ScanOut, SearchOut, TocNodeOut, TocOut
    from gmtool.types import SourceMeta, TocResult, VerifyReport

MAX_CHARS = 20_000  # every tool result stays under this (structured JSON); clients truncate larger ones
PAGE_CHARS = 15_000  # one TOC page's budget, leaving room for the envelope under MAX_CHARS
# One page of the TOC resource: a client reads a resource whole, not into a model's context, so
# pages are larger (a 3,000-entry SRD in one or two), yet a book of a million headings (172 MB
# as one message once) still comes in messages of about 1 MB.
RESOURCE_PAGE_CHARS = 1_000_000
REPORT_ITEMS = 100  # a scan report lists at most this many files, failures and warnings
EMPTY_LIBRARY = "No sources indexed yet; run scan_library"

# Hints for an MCP client, chosen by error code: the engine's hints name CLI commands. Codes not
# listed keep the engine's hint, which names no command.
_REBUILD = "call scan_library with force=true to rebuild the index"
MCP_HINTS: dict[str, str] = {
    "INDEX_NOT_FOUND": "call scan_library first (or run `gmtool scan DIR` on the library)",
    "INDEX_CORRUPT": _REBUILD,
    "INDEX_MISSING": _REBUILD,
    "INDEX_STALE": "call scan_library to refresh the index",
    "INDEX_VERSION": _REBUILD,
    "SOURCE_NOT_FOUND": "list_library gives every source_id",
    "SECTION_NOT_FOUND": "find the exact title with search_library (documents=[source_id]) or get_library_toc",
    "FILE_NOT_FOUND": "the file was moved or deleted since it was indexed; call scan_library",
    "INDEX_LOCKED": "another scan is writing the index; call again when it has finished",
    "DISK_FULL": "free some disk space, then call scan_library again; the previous index is still intact",
}
_QUERY_HINTS = {
    "read_section": "give a section title or a page",
    "search_library": 'give some words to look for, e.g. "fireball"',
    "ask_books": 'ask in words, e.g. "what happens when I fall"',
}


def mcp_hint(code: str, hint: str, tool: str = "") -> str:
    if code == "INVALID_QUERY" and tool in _QUERY_HINTS:
        return _QUERY_HINTS[tool]
    if code == "SOURCE_NOT_FOUND" and hint.startswith("did you mean"):  # keep the nearest ids
        return hint.split(" (`gmtool", 1)[0] + "; " + MCP_HINTS[code]
    return MCP_HINTS.get(code, hint)


def error_line(code: str, message: str, hint: str = "") -> str:
    """The one error format of the server, for the client and the log alike: 'CODE: message (hint: …)'."""
    return one_line(f"{code}: {message}" + (f" (hint: {hint})" if hint else ""))


# --- budgets -----------------------------------------------------------------------------------------


def size(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str))


def fit(data: Any, key: str, limit: int = MAX_CHARS) -> Any:
    """Drop items from the end of data[key] until the JSON fits; say so in warnings when present."""
    items = data[key]
    dropped = 0
    while items and size(data) > limit:
        cut = max(1, len(items) // 5)
        del items[-cut:]
        dropped += cut
    if dropped and isinstance(data.get("warnings"), list):
        data["warnings"].append(f"RESULTS_CAPPED: {dropped} results left out to stay under {limit} characters")
    return data


def cap_scan(d: ScanOut) -> ScanOut:
    for key in ("indexed_files", "warnings", "failed"):
        items: list[Any] = d[key]  # type: ignore[literal-required]
        if len(items) > REPORT_ITEMS:
            n = len(items) - REPORT_ITEMS
            del items[REPORT_ITEMS:]
            if key == "warnings":
                items.append(f"... {n} more warnings in the log file")
    return d


def library_out(metas: list[SourceMeta]) -> LibraryOut:
    metas = sorted(metas, key=lambda m: (-m.entry_count, m.source_id))
    data: LibraryOut = {"sources": [source_dict(m) for m in metas]}
    if not metas:
        data["message"] = EMPTY_LIBRARY
    return fit(data, "sources")


def toc_page(res: TocResult, cursor: str | None, budget: int = PAGE_CHARS) -> TocOut:
    """One page of the flattened TOC under `budget` characters; next_cursor resumes after it.
    Only the page's own rows are made (a book can have a hundred thousand)."""
    start = 0
    if cursor is not None:
        start = int(cursor) if cursor.isdigit() else -1
        if not 0 <= start < max(res.total, 1):
            raise UsageError("INVALID_CURSOR", f"'{cursor}' is not a cursor from a previous page",
                             "pass next_cursor from the previous page, or leave cursor out")
    page: list[TocNodeOut] = []
    used = 0
    for row in itertools.islice(iter_toc_rows(res), start, None):
        n = size(row) + 2
        if page and used + n > budget:
            break
        used += n
        page.append(row)
    end = start + len(page)
    return {"source_id": res.source_id, "source_name": res.source_name, "file": res.file,
            "entries": page, "total": res.total, "next_cursor": str(end) if end < res.total else None}


# --- text renderings ----------------------------------------------------------------------------------


def where(d: Any) -> str:
    """The page (and printed page) of a PDF entry, the line of a Markdown or text one (present.pages)."""
    return page_ref(d.get("page"), d.get("page_label"), d.get("line"))


def library_text(data: LibraryOut) -> str:
    if not data["sources"]:
        return EMPTY_LIBRARY
    lines = [f"{len(data['sources'])} sources (most entries first):"]
    for s in data["sources"]:
        types = ", ".join(f"{t} {n}" for t, n in sorted(s["types"].items(), key=lambda kv: -kv[1]))
        size = f"{s['pages']} pages" if s["pages"] is not None else f"{s.get('lines')} lines"
        lines.append(f"- {s['source_id']}: {s['title']} ({size}, {s['entries']} entries"
                     + (f"; {types}" if types else "") + ")")
    return "\n".join(lines)


def _hit_line(h: Any) -> str:
    """One result: title, type, book, page, score; its copies elsewhere and a namesake marker."""
    text = f"{h['rank']}. {h['title']} [{h['content_type'] or '-'}] {h['source_id']} {where(h)} ({h['score']:.2f})"
    if h.get("also_in"):
        text += "; also in " + ", ".join(f"{c['source_id']} {where(c)}".rstrip() for c in h["also_in"])
    if h.get("namesake_of"):
        text += f"; namesake of {h['namesake_of']}'s (another edition or game)"
    return text


def search_text(data: SearchOut) -> str:
    lines = [f"{len(data['results'])} results for '{data['query']}' ({data['mode']})"]
    if data.get("message"):
        lines.append(data["message"])
    lines += [_hit_line(h) for h in data["results"]]
    if data.get("weak"):
        lines.append("nearest entries (weak):")
        lines += [_hit_line(h) for h in data["weak"]]
    if data.get("suggestions"):
        lines.append("near misses: " + ", ".join(data["suggestions"]))
    lines += [f"warning: {w}" for w in data["warnings"]]
    return "\n".join(lines)


def toc_text(data: TocOut) -> str:
    lines = [f"{data['source_name']} ({data['source_id']}): entries {len(data['entries'])} of {data['total']}"]
    for n in data["entries"]:
        lines.append(f"{'  ' * (n['depth'] - 1)}{n['title']}  {where(n)}"
                     + (f" [{n['content_type']}]" if n["content_type"] else ""))
    if data["next_cursor"]:
        lines.append(f"(more: call again with cursor='{data['next_cursor']}')")
    return "\n".join(lines)


def read_text(d: dict[str, Any]) -> str:
    at = page_ref(d["page"], d["page_label"], d.get("line"))
    loc = f"{d['source_name']} ({d['source_id']}), {at}"
    head = f"{d['title']} — {loc}" if d["title"] else loc
    nav = f"\n[previous: {d['previous_title'] or '-'} | next: {d['next_title'] or '-'}]"
    return f"{head}\n\n{d['text']}" + (" …(truncated)" if d["truncated"] else "") + nav


def scan_text(d: ScanOut) -> str:
    lines = [(f"indexed {d['indexed']}, unchanged {d['unchanged']}, removed {d['removed']}, failed "
              f"{len(d['failed'])} of {d['files_found']} files; {d['sections']} sections, "
              f"{d['embeddings_generated']} embeddings, {d['duration_ms']} ms")]
    lines += [f"failed: {f['file']}: {f['code']}: {f['message']}" for f in d["failed"][:20]]
    lines += [f"warning: {w}" for w in d["warnings"][:20]]
    return "\n".join(lines)


def verify_text(rep: VerifyReport) -> str:
    if rep.healthy:
        return "index healthy"
    return "\n".join(f"{p.code}: {p.file}: {p.message}" for p in rep.problems[:30])
