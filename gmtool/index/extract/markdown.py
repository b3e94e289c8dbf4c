"""Markdown -> Document: one entry per ATX (`#`) or setext (`===`/`---`) heading.

Headings inside fenced code blocks and YAML front matter are ignored. Markdown has no pages,
so every entry has `page=None` and carries its 1-based source line instead.
"""

from __future__ import annotations

import re
from pathlib import Path

from gmtool.index.extract.sections import MAX_ENTRIES, EntryList, entries_capped
from gmtool.index.extract.titles import clean_title, split_tags
from gmtool.index.files import read_text
from gmtool.textnorm import shown_name
from gmtool.types import Document, Entry

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSE = re.compile(r"[ \t]+#+$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_ATTR = re.compile(r"[ \t]*\{[#.][^{}]*\}$")  # pandoc `{#anchor .class}`
_TAG = re.compile(r"<[^>]+>")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EM_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_EM_UNDER = re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])")
_CODE = re.compile(r"`([^`]+)`")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_GENERIC_TITLES = re.compile(
    r"^(legal( information)?|licen[cs]e|credits|(table of )?contents|introduction|preface|foreword)$",
    re.IGNORECASE,
)


def read_text_file(path: Path) -> str:
    """UTF-8 or UTF-16 (with a BOM) text; a binary or otherwise encoded file raises UNSUPPORTED_FORMAT."""
    return read_text(path)


def clean_inline(text: str) -> str:
    """Strip inline Markdown (emphasis, links, code ticks, HTML tags) from a title."""
    text = _ATTR.sub("", text)
    text = _TAG.sub("", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _REF_LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    for _ in range(2):
        text = _STRONG.sub(r"\2", text)
    text = _EM_STAR.sub(r"\1", text)
    text = _EM_UNDER.sub(r"\1", text)
    text = text.replace("\\", "") if "\\" in text else text
    return " ".join(text.split())


def clean_body(lines: list[str]) -> str:
    """A section's text with the loudest Markdown removed; paragraphs and lists stay as they are."""
    text = "\n".join(lines)
    if "<" in text:
        # flatten HTML tables: one row per line, cells separated by two spaces
        text = re.sub(r"</t[dh]>\s*<t[dh][^>]*>", "  ", text)
        text = re.sub(r"</tr>", "\n", text)
        text = re.sub(r"^\s*<[^>]+>\s*$\n?", "", text, flags=re.MULTILINE)  # lines that are only a tag
        text = _TAG.sub("", text)
    out: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("|") or (stripped.endswith("|") and stripped.count("|") >= 2):
            if _TABLE_SEP.match(stripped):
                continue
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            line = "  ".join(c for c in cells if c)
            if not line:
                continue
        elif _TABLE_SEP.match(stripped) and "|" in stripped:
            continue
        if "](" in line:  # each pattern needs its marker: most lines skip the regexes (a third of a Markdown scan)
            line = _LINK.sub(r"\1", _IMAGE.sub(r"\1", line))
        if "*" in line or "_" in line:
            line = line.replace("***", "").replace("**", "").replace("__", "")
            line = _EM_STAR.sub(r"\1", line) if "*" in line else line
            line = _EM_UNDER.sub(r"\1", line) if "_" in line else line
        out.append(line.rstrip())
    body = "\n".join(out)
    body = re.sub(r"\n{3,}", "\n\n", body)
    return body.strip()


def _front_matter(lines: list[str]) -> tuple[int, str | None]:
    """Lines taken by YAML front matter at the top, and its title if any."""
    if not lines or lines[0].strip() != "---":
        return 0, None
    for i in range(1, min(len(lines), 200)):
        if lines[i].strip() in ("---", "..."):
            title = None
            for fm in lines[1:i]:
                m = re.match(r"^title\s*:\s*(.+)$", fm.strip(), re.IGNORECASE)
                if m:
                    title = m.group(1).strip().strip("'\"") or None
            return i + 1, title
    return 0, None


def parse_markdown(text: str, name: str | None = None,
                   warnings: list[str] | None = None) -> tuple[list[Entry], str | None]:
    """Entries (with bodies) and a document title from Markdown source. Text before the first
    heading (all of it, in a file without headings) is an entry titled by the front matter's
    title or by `name` (the file's stem), so no readable text is left out of the index.
    Headings past MAX_ENTRIES are counted, not kept (the text from the first of them on is not
    indexed), with an ENTRIES_CAPPED warning in `warnings`."""
    lines = text.split("\n")
    start, title = _front_matter(lines)
    headings: list[tuple[int, int, str, int]] = []  # (line index, level, title, first body line)
    dropped, stop = 0, len(lines)  # headings past the cap, and the line of the first of them
    fence: str | None = None
    prev_para = False  # the previous line is paragraph text that a setext underline could promote
    for i in range(start, len(lines)):
        line = lines[i]
        m = _FENCE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            prev_para = False
            continue
        if m:
            fence = m.group(1)
            prev_para = False
            continue
        m = _ATX.match(line)
        if m:
            raw = _ATX_CLOSE.sub("", m.group(2) or "")
            if raw.strip("# \t"):
                if len(headings) >= MAX_ENTRIES:
                    stop = min(stop, i)
                    dropped += 1
                else:
                    headings.append((i, len(m.group(1)), raw, i + 1))
            prev_para = False
            continue
        s = _SETEXT.match(line)
        # only a one-line paragraph is taken as a heading (after a blank line or the top)
        if (
            s
            and prev_para
            and (s.group(1)[0] == "=" or len(s.group(1)) >= 2)
            and (i - 2 < start or not lines[i - 2].strip() or (headings and headings[-1][0] == i - 2))
        ):
            if len(headings) >= MAX_ENTRIES:
                stop = min(stop, i - 1)
                dropped += 1
            else:
                headings.append((i - 1, 1 if s.group(1)[0] == "=" else 2, lines[i - 1].strip(), i + 1))
            prev_para = False
            continue
        stripped = line.strip()
        prev_para = (
            bool(stripped)
            and not stripped.startswith(("|", ">", "<", "-", "*", "+"))
            and not re.match(r"^\d+[.)]\s", stripped)
            and not line.startswith(("    ", "\t"))
        )

    if dropped and warnings is not None:
        warnings.append(entries_capped(len(headings) + dropped, len(headings), "headings"))
    gone = _furniture(lines, headings)
    if gone:
        # a running header carried over from a PDF: out of the tree and out of the text; the
        # text after it continues the section it interrupted
        lines = ["" if i in gone else ln for i, ln in enumerate(lines)]
        headings = [h for h in headings if h[0] not in gone]
    out = EntryList("markdown")
    first = headings[0][0] if headings else stop
    out.add_preamble(title or name or "Notes", clean_body(lines[start:first]), start + 1)
    for n, (idx, level, raw, body_start) in enumerate(headings):
        body_end = headings[n + 1][0] if n + 1 < len(headings) else stop
        out.add(clean_inline(raw) or raw.strip(), level, clean_body(lines[body_start:body_end]), idx + 1,
                body_line=body_start + 1)
    entries = out.entries
    for e in entries:
        # a stray emphasis marker ("**Wand of Fireballs"), a bracketed tag or a price after a name
        e.title, tags = split_tags(clean_title(e.title) or e.title)
        e.tags = tags or None
    if title is None and headings:
        first_text = next((j for j in range(start, len(lines)) if lines[j].strip()), None)
        if (
            first_text is not None
            and first_text == headings[0][0]
            and entries[0].level <= 2
            and not _GENERIC_TITLES.match(entries[0].title)
        ):
            title = entries[0].title
    return entries, title


# A heading printed this often, that interrupts the text (the next text is another heading, or
# a sentence going on in lower case) in this share of its places or more, is a PDF's running
# header carried into a conversion: Basic Fantasy's "BASIC FANTASY RPG" (184 times, 76% of them
# interrupting) and chapter headers ("MONSTERS", 94%). The most a real repeated heading of the
# corpus interrupts is 0% ("Actions", 330 times in the SRD 5.2 Markdown).
_FURNITURE_REPEATS = 5
_FURNITURE_INTERRUPTS = 0.25


def _furniture(lines: list[str], headings: list[tuple[int, int, str, int]]) -> set[int]:
    """Line indexes of the headings that are page furniture (see _FURNITURE_REPEATS)."""
    places: dict[str, list[int]] = {}
    for idx, _level, raw, _body in headings:
        places.setdefault(clean_inline(raw).lower(), []).append(idx)
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


def extract_markdown(path: Path) -> Document:
    """Extract a Markdown file's headings and sections."""
    path = Path(path)
    text = read_text_file(path)
    warnings: list[str] = []
    entries, title = parse_markdown(text, shown_name(path.stem), warnings)
    return Document(format="md", title=title, pages=1, entries=entries, page_texts=[text], lines=text.count("\n") + 1,
                    warnings=warnings)
