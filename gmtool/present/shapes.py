"""The one JSON shape of gmtool's results, as TypedDicts.

`gmtool.present.jsonout` builds these for `--json`, and the MCP server declares them as its
tools' return types, from which fastmcp derives each tool's outputSchema: one definition,
two ways out.
"""

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict  # pydantic needs these on Python < 3.12

from gmtool.types import TocNode, VerifyReport


class CopyOut(TypedDict):
    source_id: str
    page: int | None


class HitOut(TypedDict):
    rank: int
    title: str
    content_type: str | None
    source_id: str
    source_name: str
    file: str
    page: int | None  # None for Markdown/text, which have `line`
    page_label: str | None
    section_path: list[str]
    score: float
    snippet: str
    line: NotRequired[int]
    also_in: NotRequired[list[CopyOut]]
    duplicate_of: NotRequired[str]
    namesake_of: NotRequired[str]
    similarity_score: NotRequired[float]
    matched_terms: NotRequired[list[str]]
    fields: NotRequired[dict[str, Any]]
    explain: NotRequired[dict[str, Any]]


class SearchOut(TypedDict):
    query: str
    mode: str
    results: list[HitOut]
    warnings: list[str]
    confidence: NotRequired[float]  # ask: how well the library covers the question (0-1)
    message: NotRequired[str]  # nothing good was found
    weak: NotRequired[list[HitOut]]  # ask: the nearest entries, below --min-score
    suggestions: NotRequired[list[str]]  # search: near-miss titles


class SourceOut(TypedDict):
    source_id: str
    title: str
    file: str
    path: str
    format: str
    size: int
    mtime: float
    sha256: str
    pages: int | None  # None for Markdown/text, which have `lines`
    has_outline: bool
    pages_without_text: int
    indexed_at: str
    gmtool_version: str
    format_version: int
    entries: int
    types: dict[str, int]
    typed_share: float
    lines: int | None


class LibraryOut(TypedDict):
    sources: list[SourceOut]
    message: NotRequired[str]


class TocNodeOut(TypedDict):
    title: str
    level: int
    depth: int
    page: int | None  # None for Markdown/text, which have `line`
    page_label: str | None
    end_page: int | None
    content_type: str | None
    fields: dict[str, Any] | None
    index: int
    line: int | None


class TocTreeOut(TypedDict):
    """`gmtool toc --json` and the gmtool://source/{id}/toc resource: the tree as the engine built it."""

    source_id: str
    source_name: str
    file: str
    entries: list[TocNode]


class TocOut(TypedDict):
    """get_library_toc: the tree flattened in document order (depth = nesting level), one page of it."""

    source_id: str
    source_name: str
    file: str
    entries: list[TocNodeOut]
    total: int
    next_cursor: str | None


class FailureOut(TypedDict):
    file: str
    code: str
    message: str
    hint: str


class ScanOut(TypedDict):
    library: str
    index_dir: str
    files_found: int
    indexed: int
    unchanged: int
    removed: int
    failed: list[FailureOut]
    sections: int
    embeddings_generated: int
    workers: int
    duration_ms: int
    warnings: list[str]
    indexed_files: list[str]
    log_file: str | None
    storage: dict[str, Any]
    files_indexed: int


class IndexOut(TypedDict):
    action: Literal["index", "verify"]
    report: ScanOut | None
    verify: VerifyReport | None
