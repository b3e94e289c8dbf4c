"""Markdown -> Document: one entry per ATX (`#`) or setext (`===`/`---`) heading.

Headings inside fenced code blocks and YAML front matter are ignored. Markdown has no pages,
so every entry has `page=None` and carries its 1-based source line instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from gmtool.index.extract import mdgrid, mdmarkup, mdnotes
from gmtool.index.extract.labels import drop_template_rows, fold_labels
from gmtool.index.extract.mdrows import TABLE_SEP, drop_index_rows, field_tables, table_rows
from gmtool.index.extract.mdrunin import runins
from gmtool.index.extract.sections import MAX_ENTRIES, EntryList, entries_capped
from gmtool.index.extract.titles import clean_title, split_tags
from gmtool.index.files import read_text
from gmtool.textnorm import shown_name
from gmtool.types import Document, Entry

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
# A fence, an ATX or setext heading or a blockquote opens with one of these after its indent: a line
# without one (and without a shortcode's `{{`, a name box) is none of them.
_BLOCK_MARK = re.compile(r"\s*[#>=`~-]")
_ORDERED_ITEM = re.compile(r"^\d+[.)]\s")
_ATX_CLOSE = re.compile(r"[ \t]+#+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_ATTR = re.compile(r"[ \t]*\{[#.][^{}]*\}$")  # pandoc `{#anchor .class}`
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_CODE = re.compile(r"`([^`]+)`")
# a line that is only tags or shortcodes (wrappers such as `<div …>`, `{{< hint >}}`)
_ONLY_MARKUP = re.compile(r"^(\s*(</?[A-Za-z][^<>]*>|\{\{[<%].*?[>%]\}\}))+\s*$")
# Every markup clean_body takes out needs one of these characters: a line without any is kept as it is.
_MARKUP_CHAR = re.compile(r"[<>{|&\[\]*_^\\]")
_FENCE_LINE = re.compile(r"^(?:```|~~~)[\w+.-]*\s*$")  # a code fence's marker line (```statblock): markup, not text
_BLANK_RUN = re.compile(r"\n{3,}")
_GENERIC_TITLES = re.compile(
    r"^(legal( information)?|licen[cs]e|credits|(table of )?contents|index|introduction|preface|foreword)$",
    re.IGNORECASE,
)


def read_text_file(path: Path) -> str:
    """UTF-8 or UTF-16 (with a BOM) text; a binary or otherwise encoded file raises UNSUPPORTED_FORMAT."""
    return read_text(path)


def clean_inline(text: str) -> str:
    """Strip inline Markdown (emphasis, links, code ticks, HTML tags, shortcodes, entities) from a title.
    Each pattern runs only where its marker is (most titles have none), as in clean_body."""
    escaped = mdmarkup.has_escapes(text)
    if escaped:
        text = mdmarkup.protect_escapes(text)
    if "{" in text:
        text = _ATTR.sub("", text)
    text = mdmarkup.inline_text(text)
    if "][" in text:
        text = _REF_LINK.sub(r"\1", text)
    if "`" in text:
        text = _CODE.sub(r"\1", text)
    for _ in range(2):
        if "**" in text or "__" in text:
            text = _STRONG.sub(r"\2", text)
    if "*" in text:
        text = _EM_STAR.sub(r"\1", text)
    if "_" in text:
        text = _EM_UNDER.sub(r"\1", text)
    if "**" in text or "__" in text:  # a stray marker, unpaired ("The player rolls the dice** and ...")
        text = text.replace("**", "").replace("__", " ")
    text = text.replace("\\", "") if "\\" in text else text
    text = mdmarkup.restore_escapes(text) if escaped else text
    return " ".join(text.split())


def clean_body(lines: list[str]) -> str:
    """A section's text with the loudest Markdown removed; paragraphs and lists stay as they are."""
    out: list[str] = []
    for line in lines:
        if line.startswith(("```", "~~~")) and _FENCE_LINE.match(line):
            continue
        if not _MARKUP_CHAR.search(line):  # plain text (most lines): nothing below would change it
            out.append(line.rstrip())
            continue
        escaped = mdmarkup.has_escapes(line)
        if escaped:  # `sack\*, flint and tinder\*\*`: footnote marks, not emphasis; `1\.`: no list
            line = mdmarkup.protect_escapes(line)
        if line.lstrip().startswith(">"):
            line = mdmarkup.unquote(line)
        stripped = line.strip()
        if stripped.startswith(("<", "{{")) and _ONLY_MARKUP.match(stripped):
            continue  # `<div class=…>`, `</div>`, `{{< hint >}}`: wrappers, not text
        if stripped.startswith("|") or (stripped.endswith("|") and stripped.count("|") >= 2):
            if TABLE_SEP.match(stripped):
                continue
            cells = [mdmarkup.inline_text(c).strip() for c in stripped.strip("|").split("|")]
            line = "  ".join(c for c in cells if c)
            if not line:
                continue
        elif "|" in stripped and TABLE_SEP.match(stripped):
            continue
        elif "<" in line or "&" in line or "{{" in line or "[" in line or "^" in line:
            line = mdmarkup.inline_text(line, br="\n")
        if "](" in line:  # each pattern needs its marker: most lines skip the regexes (a third of a Markdown scan)
            line = mdmarkup.links_as_text(line)
        if "*" in line or "_" in line:
            line = line.replace("***", "").replace("**", "").replace("__", "")
            line = _EM_STAR.sub(r"\1", line) if "*" in line else line
            line = _EM_UNDER.sub(r"\1", line) if "_" in line else line
        out.append(mdmarkup.restore_escapes(line).rstrip() if escaped else line.rstrip())
    body = mdmarkup.dashes("\n".join(out))
    if "\n\n\n" in body:
        body = _BLANK_RUN.sub("\n\n", body)
    return body.strip()


_FM_TITLE = re.compile(r"^title\s*[:=]\s*(.+)$", re.IGNORECASE)


def _front_matter(lines: list[str]) -> tuple[int, str | None]:
    """Lines taken by front matter at the top (YAML `---` or Hugo's TOML `+++`), and its title if any."""
    fence = lines[0].strip() if lines else ""
    if fence not in ("---", "+++"):
        return 0, None
    ends = ("---", "...") if fence == "---" else ("+++",)
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ends:
            title = None
            for k in range(1, i):
                m = _FM_TITLE.match(lines[k].strip())
                if m and not lines[k].startswith((" ", "\t")):
                    title = clean_inline(_fm_value(m.group(1).strip(), lines[k + 1:i]).strip("'\"")) or None
            return i + 1, title
    return 0, None


# a YAML block scalar's indicator: the value is on the indented lines below (`title: |`, `title: >-`)
_BLOCK_SCALAR = re.compile(r"^[|>][+-]?\d?$")


def _fm_value(value: str, below: list[str]) -> str:
    """A front matter value, joined from its indented lines when it is a block scalar (a pandoc title
    with a cover image before the name: `title: |`, then `![](cover.jpg){width=…}` and `*13^th^ Age* …`)."""
    if not _BLOCK_SCALAR.match(value):
        return value
    out = []
    for line in below:
        if line.strip() and not line.startswith((" ", "\t")):
            break
        out.append(line.strip())
    return " ".join(" ".join(out).split())


@dataclass
class Parsed:
    """One Markdown file read: its entries, the title it gives itself, and what a folder book
    needs to place it (its front-matter title, whether it is only a heading or nothing)."""

    entries: list[Entry]
    title: str | None  # front matter `title`, else a title heading (see `_title_heading`)
    front_title: str | None = None
    headings: int = 0  # heading entries (not rows, not the text before the first heading)
    has_text: bool = False  # any body text at all
    preamble: bool = False  # the first entry is the text before the first heading
    heading_title: str | None = None  # the first heading, when it is a title (`_title_heading`)
    lines: int = 0  # the file's line count


@dataclass
class _Heading:
    idx: int  # line index of the heading
    level: int
    raw: str
    body_start: int
    lead: str = ""  # text the heading line itself carries (a name box's values)
    box: bool = False


def _heading_at(lines: list[str], i: int, start: int, prev_para: bool, last_level: int,
                headings: list[_Heading]) -> _Heading | None:
    line = lines[i]
    m = _ATX.match(line)
    if m is None and line.lstrip().startswith(">"):
        m = _ATX.match(mdmarkup.unquote(line))  # `> ### Sidebar`, `>## Combat Step by Step`
    if m:
        raw = _ATX_CLOSE.sub("", m.group(2) or "")
        return _Heading(i, len(m.group(1)), raw, i + 1) if raw.strip("# \t") else None
    box = mdmarkup.name_box(line) if "{{" in line else None
    if box is not None:
        return _Heading(i, min(6, last_level + 1), box[0], i + 1, lead=box[1], box=True)
    s = _SETEXT.match(line)
    # only a one-line paragraph is taken as a heading (after a blank line or the top)
    if (
        s
        and prev_para
        and (s.group(1)[0] == "=" or len(s.group(1)) >= 2)
        and (i - 2 < start or not lines[i - 2].strip() or (headings and headings[-1].idx == i - 2))
    ):
        return _Heading(i - 1, 1 if s.group(1)[0] == "=" else 2, lines[i - 1].strip(), i + 1)
    return None


def _find_headings(lines: list[str], start: int) -> tuple[list[_Heading], int, int]:
    """The headings, at most MAX_ENTRIES; past it they are counted (dropped), not kept, and the text
    from the first of them on (stop) is not indexed."""
    headings: list[_Heading] = []
    dropped, stop = 0, len(lines)
    fence: str | None = None
    after_text = False  # the previous line is no fence, code or heading: it may be a paragraph's
    last_level = 0  # of the last real heading: a name box sits one below it
    for i in range(start, len(lines)):
        line = lines[i]
        marked = _BLOCK_MARK.match(line) is not None or "{{" in line
        m = _FENCE.match(line) if marked else None
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            after_text = False
            continue
        if m:
            fence = m.group(1)
            after_text = False
            continue
        h = None
        if marked:  # a setext underline promotes the paragraph line above it: asked only here
            h = _heading_at(lines, i, start, after_text and _para_line(lines[i - 1]), last_level, headings)
        if h is not None and len(headings) >= MAX_ENTRIES:
            dropped, stop = dropped + 1, min(stop, h.idx)
        elif h is not None:
            headings.append(h)
            if not h.box:
                last_level = h.level
            after_text = False
            continue
        after_text = True
    return headings, dropped, stop


def _para_line(line: str) -> bool:
    """Paragraph text, which a setext underline on the next line could promote to a heading."""
    stripped = line.strip()
    return (
        bool(stripped)
        and not stripped.startswith(("|", ">", "<", "-", "*", "+", "{{"))
        and not _ORDERED_ITEM.match(stripped)
        and not line.startswith(("    ", "\t"))
    )


def _title_heading(entries: list[Entry], lines: list[str], start: int, first_idx: int, preamble: str,
                   name: str | None = None) -> str | None:
    """The file's first heading when it is the book's title rather than its first section: it is
    the first text, or follows only a cover's short notice (a copyright line, a dedication), is not
    generic ("Legal Information"), and either no other heading is as high (the one H1 over the H2s),
    or it heads only a short title page (followed by its peers), or it shares two words with the
    file's name (a book's file is named after it: "Basic-Fantasy-RPG-Rules" for "Basic Fantasy
    Role-Playing Game", whose title page runs to 405 words of licence)."""
    first_text = next((j for j in range(start, len(lines)) if lines[j].strip()), None)
    if preamble:
        if len(preamble.split()) > _NOTICE_WORDS:
            return None
        entries = entries[1:]  # the notice's own entry
    elif first_text != first_idx:
        return None
    if not entries:
        return None
    top = entries[0]
    if top.level > 2 or _GENERIC_TITLES.match(top.title):
        return None
    if name and len(_words(top.title) & _words(name)) >= 2:
        return top.title
    heads = [e for e in entries if e.origin == "markdown"]
    peers = [e for e in heads[1:] if e.level <= top.level]
    if not peers:
        return top.title
    second = heads[1] if len(heads) > 1 else None
    title_page = second is not None and second.level <= top.level and len(top.body.split()) <= _TITLE_PAGE_WORDS
    return top.title if title_page else None


# A title page holds a subtitle, a byline, a copyright and attribution notice, and no sections
# of its own: a first heading with subsections, or with more words than this before its next
# peer, is a chapter ("The Basics"), not the book's title. Fate Condensed's title page with
# its attribution notice is 120 words; a chapter without subsections runs to thousands.
_TITLE_PAGE_WORDS = 300
def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2}


# A cover may print a notice above the title heading (Basic Fantasy's Markdown: a copyright line and
# a dedication, 40 words); more text than this before the first heading is a book's own opening.
_NOTICE_WORDS = 80


def parse_chapter(text: str, name: str | None = None, warnings: list[str] | None = None) -> Parsed:
    """Entries (with bodies) and a title from Markdown source. Text before the first heading
    (all of it, in a file without headings) is an entry titled by the front matter's title or by
    `name` (the file's stem), so no readable text is left out of the index. Headings past
    MAX_ENTRIES are counted, not kept, with an ENTRIES_CAPPED warning in `warnings`."""
    file_name = name
    lines = mdmarkup.prepare(text).split("\n")
    if mdgrid.has_tables(text):
        lines = mdgrid.as_pipes(lines)
    start, front = _front_matter(lines)
    if mdnotes.has_markup(text):  # a vault's note: its fields read through Dataview's inline queries
        lines = mdnotes.render(lines, start, mdnotes.front_fields(lines, start) if start else {})
    lines = field_tables(lines, start)
    headings, dropped, stop = _find_headings(lines, start)
    if dropped and warnings is not None:
        warnings.append(entries_capped(len(headings) + dropped, len(headings), "headings"))
    gone = _furniture(lines, headings)
    if gone:
        # a running header carried over from a PDF: out of the tree and out of the text; the
        # text after it continues the section it interrupted
        lines = ["" if i in gone else ln for i, ln in enumerate(lines)]
        headings = [h for h in headings if h.idx not in gone]
    out = EntryList("markdown")
    first = headings[0].idx if headings else stop
    preamble = clean_body(lines[start:first])
    out.add_preamble(front or name or "Notes", preamble, start + 1)
    heading_idx = [h.idx for h in headings]
    inline = sorted([(row.idx, row.name, row.body, None, "row") for row in table_rows(lines, start, heading_idx)]
                    + [(x.idx, x.name, clean_body(lines[x.idx + x.head:x.end]), x.tags, "runin")
                       for x in runins(lines, start, set(heading_idx))])
    r = 0
    for n, h in enumerate(headings):
        body_end = headings[n + 1].idx if n + 1 < len(headings) else stop
        body = clean_body(lines[h.body_start:body_end])
        if h.lead:
            body = f"{h.lead}\n\n{body}".strip()
        out.add(clean_inline(h.raw) or h.raw.strip(), h.level, body, h.idx + 1, body_line=h.body_start + 1)
        if h.box:  # a name box is a one-row table (name | level | price): a name, typed like a table row
            out.entries[-1].origin = "row"
        while r < len(inline) and inline[r][0] < body_end:
            idx, name, text, tags, origin = inline[r]
            if idx > h.idx:
                out.add_inline(name, text, idx + 1, origin)
                out.entries[-1].tags = tags
            r += 1
    entries = out.entries
    for e in entries:
        # a stray emphasis marker ("**Wand of Fireballs"), a bracketed tag or a price after a name
        e.title, tags = split_tags(clean_title(e.title) or e.title)
        if tags:
            e.tags = [*(e.tags or []), *(t for t in tags if t not in (e.tags or []))]
    heading_title = _title_heading(entries, lines, start, headings[0].idx, preamble, file_name) if headings else None
    has_text = bool(preamble) or any(e.body for e in entries)
    return Parsed(entries, front or heading_title, front, len(headings), has_text, bool(preamble), heading_title,
                  len(lines))


def parse_markdown(text: str, name: str | None = None,
                   warnings: list[str] | None = None) -> tuple[list[Entry], str | None]:
    """Entries and a document title (see `parse_chapter`)."""
    p = parse_chapter(text, name, warnings)
    return p.entries, p.title


# A heading printed this often, that interrupts the text (the next text is another heading, or
# a sentence going on in lower case) in this share of its places or more, is a PDF's running
# header carried into a conversion: Basic Fantasy's "BASIC FANTASY RPG" (184 times, 76% of them
# interrupting) and chapter headers ("MONSTERS", 94%). The most a real repeated heading of the
# corpus interrupts is 0% ("Actions", 330 times in the SRD 5.2 Markdown).
_FURNITURE_REPEATS = 5
_FURNITURE_INTERRUPTS = 0.25


def _furniture(lines: list[str], headings: list[_Heading]) -> set[int]:
    """Line indexes of the headings that are page furniture (see _FURNITURE_REPEATS)."""
    places: dict[str, list[int]] = {}
    for h in headings:
        places.setdefault(clean_inline(h.raw).lower(), []).append(h.idx)
    gone: set[int] = set()
    for at in places.values():
        if len(at) < _FURNITURE_REPEATS:
            continue
        cut = sum(1 for i in at if _interrupts(lines, i))
        if cut >= _FURNITURE_INTERRUPTS * len(at):
            gone.update(at)
    return gone


def _interrupts(lines: list[str], i: int) -> bool:
    """The first text after line i (images and comments aside) is a heading or goes on in lower case."""
    for ln in lines[i + 1 : i + 40]:
        t = ln.strip()
        if not t or t.startswith("<!--"):
            continue
        return t.startswith("#") or t[:1].islower()
    return True


def book_entries(entries: list[Entry]) -> list[Entry]:
    """A whole book's entries, one file or a folder of chapters: a table of contents' link rows
    dropped, repeated stat-block labels folded into their entry, and a template's row slots dropped."""
    return drop_template_rows(fold_labels(drop_index_rows(entries), leaves_only=True))


def spelled_out(name: str, entries: list[Entry]) -> str | None:
    """The long form of an acronym in a file or folder name, as the book's opening pages define it
    ("DND-SRD-5.2-CC" -> "System Reference Document 5.2", from "System Reference Document 5.2 (“SRD 5.2”)")."""
    text = "\n".join(e.body for e in entries[:8])[:20_000]
    for token in re.findall(r"[A-Za-z]+", name):  # "srd5" gives "srd"
        if not 2 <= len(token) <= 6:
            continue
        pattern = rf"((?:[A-Z][A-Za-z'’]*\s+){{{len(token)}}}(?:\d[\d.]*\d\s+|\d\s+)?)\(\s*[\"“]?(?i:{token})\b"
        for m in re.finditer(pattern, text):
            long = m.group(1).strip()
            initials = "".join(w[0] for w in long.split() if w[0].isalpha())
            if initials.lower() == token.lower() and all(w[0].isupper() or w[0].isdigit() for w in long.split()):
                return long
    return None


def extract_markdown(path: Path) -> Document:
    """Extract a Markdown file's headings and sections. Its title: front matter, a title heading,
    else the long form of an acronym its file name uses (None: the file name is shown)."""
    path = Path(path)
    text = read_text_file(path)
    warnings: list[str] = []
    entries, title = parse_markdown(text, shown_name(path.stem), warnings)
    title = title or spelled_out(path.stem, entries)
    return Document(format="md", title=title, pages=1, entries=book_entries(entries),
                    page_texts=[text], lines=text.count("\n") + 1, warnings=warnings)
