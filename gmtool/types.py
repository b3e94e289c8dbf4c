"""Plain data passed between the layers: extract -> classify -> store -> rank -> present.

Only dataclasses of built-in values live here, so orjson can serialise them directly and
the CLI, the JSON output and the MCP server all see one shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict, Union

# JSON-shaped values: what the presenters and the MCP layer receive from the engine.
JSONValue = Union[str, int, float, bool, None, list["JSONValue"], dict[str, "JSONValue"]]
WhereArg = Union[list[str], dict[str, JSONValue], None]  # --where expressions, or the MCP object form

CONTENT_TYPES: tuple[str, ...] = (
    "class",
    "subclass",
    "race",
    "background",
    "feat",
    "spell",
    "monster",
    "item",
    "condition",
    "rule",
)

SUPPORTED_SUFFIXES: tuple[str, ...] = (".pdf", ".md", ".markdown", ".txt")


# Entries found as names inside a section's text (a run-in, a table row, a stat line, a caption), not as
# headings: the section holds their text too.
INLINE_ORIGINS = ("runin", "row", "line", "caption")


@dataclass(slots=True)
class Entry:
    """One TOC entry and the section of text it heads.

    Entries of a source are kept in document order; `parent` is the index of the enclosing
    entry in that same list (None at the top), which is enough to rebuild the tree and the
    section path without nesting.
    """

    title: str
    level: int  # 1 = top level
    page: int | None  # 1-based physical page of the heading; None for Markdown/text (see `line`)
    end_page: int = 0  # last physical page of the section (inclusive); 0 when it has no pages
    page_label: str | None = None  # printed page label where the PDF defines one
    content_type: str | None = None
    parent: int | None = None
    body: str = ""  # the section's own text (up to the next heading), in reading order
    origin: str = "heading"  # outline | heading | markdown | text
    line: int | None = None  # 1-based source line (Markdown / text)
    fields: dict[str, Any] | None = None  # typed fields parsed from the body (spell level, CR, ...)
    tags: list[str] | None = None  # a tag line printed after the name ("Horde, Small"), split off the title
    file: str | None = None  # a folder book's chapter file (library-relative) holding the entry; None: the source's file


class TocNode(TypedDict):
    """One node of `gmtool toc --json`; `index` is the entry's position in its source."""

    title: str
    level: int
    page: int | None  # None for Markdown/text, which have `line`
    page_label: str | None
    end_page: int | None
    content_type: str | None
    fields: dict[str, Any] | None
    index: int
    line: int | None
    file: str | None  # a folder book's chapter file (library-relative); None in a one-file book
    children: list[TocNode]


@dataclass(slots=True)
class Document:
    """What an extractor returns for one file, before classification."""

    format: str  # pdf | md | txt
    title: str | None
    pages: int
    entries: list[Entry]
    page_texts: list[str] = field(default_factory=list)  # per physical page, reading order
    page_labels: list[str] | None = None  # per physical page, when the PDF defines labels
    has_outline: bool = False
    pages_without_text: list[int] = field(default_factory=list)  # 1-based
    warnings: list[str] = field(default_factory=list)
    lines: int | None = None  # Markdown/text: the file's line count (they have no pages)
    chapters: list[dict[str, Any]] | None = None  # a folder book's parsed chapters, cached by the indexer


@dataclass(slots=True)
class SourceMeta:
    """What the index records about one file, so staleness can be judged without parsing."""

    source_id: str
    title: str
    file: str  # path relative to the library root
    path: str  # absolute path when indexed
    format: str
    size: int
    mtime: float
    sha256: str
    pages: int
    has_outline: bool
    pages_without_text: list[int]
    indexed_at: str  # ISO 8601, UTC
    gmtool_version: str
    format_version: int
    entry_count: int = 0
    type_counts: dict[str, int] = field(default_factory=dict)
    lines: int | None = None  # Markdown/text: the file's line count, shown instead of pages
    files: list[str] = field(default_factory=list)  # a folder book's chapter files, in reading order
    extract_version: str = ""  # index.extract.EXTRACT_VERSION when indexed: another one is indexed again

    @property
    def typed_share(self) -> float:
        """The share of entries that carry a content type: low for a system typing does not read."""
        return round(sum(self.type_counts.values()) / self.entry_count, 3) if self.entry_count else 0.0


@dataclass(slots=True)
class Failure:
    file: str
    code: str
    message: str
    hint: str = ""


@dataclass(slots=True)
class ScanReport:
    library: str
    index_dir: str
    files_found: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: list[Failure] = field(default_factory=list)
    sections: int = 0
    embeddings_generated: int = 0
    workers: int = 0  # the extraction pool's size; 0 when the job was small enough to run in-process
    duration_ms: int = 0
    warnings: list[str] = field(default_factory=list)
    indexed_files: list[str] = field(default_factory=list)
    log_file: str | None = None
    storage: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Hit:
    """One search/ask result in the shared JSON shape (CLI --json and MCP alike)."""

    rank: int
    title: str
    content_type: str | None
    source_id: str
    source_name: str
    file: str
    page: int | None  # None for Markdown/text results, which carry `line`
    page_label: str | None
    section_path: list[str]
    score: float
    snippet: str
    entry_index: int = 0
    line: int | None = None  # 1-based line of the heading in a Markdown or text source
    also_in: list[dict[str, Any]] | None = None  # the same entry in other books: {"source_id", "page" (None in Markdown)}
    duplicate_of: str | None = None  # --all-copies: the source of the row above that shows this entry
    namesake_of: str | None = None  # the source of a row above with the same title and type but another text
    similarity_score: float | None = None
    matched_terms: list[str] | None = None
    fields: dict[str, Any] | None = None
    explain: dict[str, Any] | None = None


@dataclass(slots=True)
class SearchResult:
    query: str
    mode: str  # keyword | hybrid
    results: list[Hit]
    warnings: list[str] = field(default_factory=list)
    message: str | None = None  # nothing good was found: what to tell the user instead of a list
    weak: list[Hit] = field(default_factory=list)  # ask: the nearest entries when none scores high enough
    suggestions: list[str] = field(default_factory=list)  # search: near-miss titles when nothing matches
    confidence: float | None = None  # ask: how well the library covers the question at all (0-1)


# --- what the engine returns besides hits (the presenters and the MCP layer read these) ---


@dataclass
class TocResult:
    source_id: str
    source_name: str
    file: str
    entries: list[TocNode]
    total: int


@dataclass
class ReadResult:
    source_id: str
    source_name: str
    file: str
    title: str | None
    page: int | None  # None for a Markdown/text section (see `line`)
    page_label: str | None
    end_page: int | None
    content_type: str | None
    text: str
    truncated: bool
    previous_title: str | None
    next_title: str | None
    section_path: list[str] = field(default_factory=list)
    line: int | None = None  # 1-based line of a Markdown/text section


@dataclass
class Problem:
    code: str
    file: str
    message: str
    hint: str


@dataclass
class VerifyReport:
    healthy: bool
    sources: int
    problems: list[Problem]
    log_file: str | None = None


class Embedder(Protocol):
    """What the index and query sides need of a sentence embedder; `rank.embed` provides the ONNX
    one, tests a fake, so ranking logic runs without a model."""

    fingerprint: str  # identifies the weights and graph, so stored vectors are matched to them
    dim: int
    device: str
    warnings: list[str]

    def embed(
        self, texts: list[str], batch_size: int = 32, progress: Callable[[int], None] | None = None
    ) -> Any: ...

    def embed_query(self, text: str) -> Any: ...
