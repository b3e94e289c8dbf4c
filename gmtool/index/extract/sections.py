"""Building the entry list of a Markdown or text file: nesting by level, the text before the
first heading, and a cap on what one entry holds.

Markdown and text have no pages, so their entries carry `page=None` and the 1-based source
`line` of their heading; a reader or a script never sees a made-up page 1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gmtool.types import Entry

# One entry's body is tokenized, classified and field-parsed whole, so an unbounded body (a
# 50 MB one-line file) costs memory in proportion. Longer sections continue in child entries
# of at most this many characters, all searchable; `show` on the section prints them all.
# 200k characters is ~30,000 words, longer than any single rule section in the corpus.
MAX_ENTRY_CHARS = 200_000
# Entries one book may have. The corpus' largest book has about 5,000; a file of a million `# H`
# lines (9.9 MB) took 5.3 GB to index and wrote a 509 MB index. Past the cap the book is indexed up
# to it, with an ENTRIES_CAPPED warning; a scan of such a file stays under 400 MB (bench/memory.py).
MAX_ENTRIES = 25_000
# The split looks back this far for a paragraph, a line or a word boundary to cut at.
_CUT_WINDOW = 2_000


def body_chunks(body: str, limit: int = MAX_ENTRY_CHARS) -> list[tuple[int, str]]:
    """`body` in (offset, piece) pairs of at most `limit` characters, cut at a blank line, a
    line end or a space where one is near the limit."""
    if len(body) <= limit:
        return [(0, body)]
    out: list[tuple[int, str]] = []
    pos, n = 0, len(body)
    while n - pos > limit:
        end = pos + limit
        lo = max(pos + 1, end - _CUT_WINDOW)
        cut = -1
        for sep in ("\n\n", "\n", " "):
            cut = body.rfind(sep, lo, end)
            if cut != -1:
                break
        cut = end if cut == -1 else cut
        out.append((pos, body[pos:cut].strip()))
        pos = cut
        while pos < n and body[pos] in " \n":
            pos += 1
    if pos < n:
        out.append((pos, body[pos:].strip()))
    return [c for c in out if c[1]]


def entries_capped(found: int, kept: int, what: str = "entries") -> str:
    """The warning of a book cut at MAX_ENTRIES (the indexer reports it with the file's name)."""
    return f"ENTRIES_CAPPED: {found:,} {what}, more than one book may hold; the first {kept:,} are indexed"


def cap_entries(entries: list[Entry], warnings: list[str]) -> list[Entry]:
    """`entries` cut at MAX_ENTRIES (parents always come first, so the tree stays whole)."""
    if len(entries) <= MAX_ENTRIES:
        return entries
    if not any(w.startswith("ENTRIES_CAPPED") for w in warnings):  # the extractor may have said so
        warnings.append(entries_capped(len(entries), MAX_ENTRIES))
    return entries[:MAX_ENTRIES]


@dataclass
class EntryList:
    """Entries in document order with their parents, fed one heading at a time."""

    origin: str
    entries: list[Entry] = field(default_factory=list)
    _open: list[int] = field(default_factory=list)  # indices of open entries, by increasing level

    def add(self, title: str, level: int, body: str, line: int, body_line: int | None = None) -> None:
        """`body_line` is the source line where the body starts (for the lines of its parts)."""
        body_line = line + 1 if body_line is None else body_line
        while self._open and self.entries[self._open[-1]].level >= level:
            self._open.pop()
        chunks = body_chunks(body)
        me = len(self.entries)
        self.entries.append(
            Entry(title=title, level=level, page=None, end_page=0,
                  parent=self._open[-1] if self._open else None,
                  body=chunks[0][1] if chunks else "", origin=self.origin, line=line)
        )
        self._open.append(me)
        for k, (offset, chunk) in enumerate(chunks[1:], 2):
            # children of the section, never parents of what follows: they are not opened
            self.entries.append(
                Entry(title=f"{title} (part {k})", level=level + 1, page=None, end_page=0, parent=me,
                      body=chunk, origin=self.origin, line=body_line + body.count("\n", 0, offset))
            )

    def add_inline(self, title: str, body: str, line: int, origin: str) -> None:
        """A name inside the open section (a table row): its child, never a parent (see `extract.inline`)."""
        parent = self._open[-1] if self._open else None
        level = self.entries[parent].level + 1 if parent is not None else 1
        self.entries.append(Entry(title=title, level=level, page=None, end_page=0, parent=parent,
                                  body=body[:MAX_ENTRY_CHARS], origin=origin, line=line))

    def add_preamble(self, title: str, body: str, line: int) -> None:
        """The text before the first heading (or of a file without headings) as a top-level
        entry, so every readable line of a file can be found."""
        if body.strip():
            self.add(title, 1, body, line, body_line=line)
            self._open.clear()  # it heads nothing: the headings that follow stand on their own
