"""HTML and static-site markup inside Markdown, read the way a browser would show it.

Markdown books exported from wikis and static sites carry HTML comments, entities, `<br>` and
`<div>` wrappers, raw `<table>`s, blockquoted headings (`> ### Sidebar`), Hugo shortcodes
(`{{< hint >}}`) and `[[…]]` placeholders. None of that is text a reader sees. The multi-line
constructs (comments, raw tables) are rewritten in place line for line, so every entry keeps the
line number of its source; the rest is cleaned per line or per title.
"""

from __future__ import annotations

import html
import re

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_RAW_TABLE = re.compile(r"<table\b.*?</table\s*>", re.DOTALL | re.IGNORECASE)
_ROW = re.compile(r"<tr\b[^>]*>(.*?)</tr\s*>", re.DOTALL | re.IGNORECASE)
_CELL = re.compile(r"<t[dh]\b[^>]*>(.*?)</t[dh]\s*>", re.DOTALL | re.IGNORECASE)
_BR = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<[-=]{2,}>")  # tags, and Hugo's `<--->` column break
_SHORTCODE = re.compile(r"\{\{[<%].*?[>%]\}\}")
_WIKI = re.compile(r"(!?)\[\[([^\[\]]*)\]\]")
_EMPTY_LINK = re.compile(r"!?\[\]\([^()]*\)(?:\{[^{}]*\})?")
# a link or image may carry pandoc's attributes: `![](cover.jpg){width="8.5in"}`, `[Dodge](#dodge){.term}`
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)(?:\{[^{}]*\})?")
_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)(?:\{[^{}]*\})?")
# pandoc's superscript ("13^th^ Age", "1^st^ level", a table cell's lone "^th^"): no spaces inside
_SUPERSCRIPT = re.compile(r"\^([^\s^]{1,12})\^")
# pandoc's bracketed span with attributes: `[Nastier Specials]{.underline}` reads as its text
_SPAN = re.compile(r"\[([^\[\]\n]+)\]\{[^{}\n]*\}")
# A backslash escape (`sack\*`, a footnote mark that is no emphasis): the character it escapes, kept
# apart while emphasis is read (protect_escapes) and put back after (restore_escapes)
ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!<>~^|])")
_PROTECTED = re.compile("[\ue000-\ue0ff]")
# GitHub alerts (`> [!NOTE]`) and Obsidian callouts, folded or not, perhaps titled (`> [!info]- Spell Lists`)
_ALERT = re.compile(r"^\[!([A-Za-z][\w-]*)\][+-]?(?:\s+(\S.*?))?\s*$")
_QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
# a Hugo name box: a line of shortcodes around one short name (and values after `<--->`)
_BOX = re.compile(r"^\s*(?:\{\{[<%][^{}]*[>%]\}\}\s*)+(?P<inner>[^{}]+?)\s*(?:\{\{[<%][^{}]*[>%]\}\}\s*)+$")
_COLUMN_BREAK = re.compile(r"\s*<[-=]{2,}>\s*")
_BOX_VALUE = re.compile(r"\s+(?:---|\u2014)\s+")  # "Rolling Boulder --- 6 (12)": a name, then its values
_EM_DASH = re.compile(r"(?<=\w)---(?=\w)|(?<=\s)---(?=\s)")  # pandoc's em dash: "Abilities---A"
_EN_DASH = re.compile(r"(?<=\d)--(?=\d)")  # pandoc's en dash in a range: "a natural 18--20"
_WORD_EM_DASH = re.compile(r"(?<=\w)---(?=\w)")


def dashes(text: str) -> str:
    """pandoc's dashes inside a text: a range's en dash ("18--20") and an em dash between words
    ("Abilities---A"); a line of dashes (a rule) stays as it is."""
    return _EN_DASH.sub("\u2013", _WORD_EM_DASH.sub("\u2014", text)) if "--" in text else text
_PARA_BREAK = re.compile(r"</p\s*>|<br\s*/?>", re.IGNORECASE)
# A layout table's label cell holds short names ("AC", "Hit Points") and its value cell short values
# ("24", "1d8+2"): longer cells are text, read as it stands.
LABEL_CHARS = 20
VALUE_CHARS = 12


def _blank_keeping_lines(match: re.Match[str]) -> str:
    return "\n" * match.group(0).count("\n")


def _paragraphs(cell: str) -> list[str]:
    """A cell's paragraphs (`<p>`s, lines a `<br>` breaks), as text."""
    parts = _PARA_BREAK.split(cell)
    return [t for t in (" ".join(inline_text(p).split()) for p in parts) if t]


def _is_field(text: str, limit: int) -> bool:
    return len(text) <= limit and len(text.split()) <= 3


def _layout_lines(cells: list[list[str]]) -> list[str]:
    """A layout table's one row as the lines it shows: a cell of short labels beside a cell of as
    many short values as "label: value" lines, first (a stat block laid out as a table: "AC", "PD",
    "HP" beside "24", "22", "270", which a stat block prints at its head), then each other cell's
    paragraphs in turn."""
    fields: list[str] = []
    text: list[str] = []
    k = 0
    while k < len(cells):
        here = cells[k]
        there = cells[k + 1] if k + 1 < len(cells) else []
        if (len(here) >= 2 and len(there) == len(here) and all(_is_field(t, LABEL_CHARS) for t in here)
                and all(_is_field(t, VALUE_CHARS) for t in there)):
            fields += [f"{label}: {value}" for label, value in zip(here, there, strict=True)]
            k += 2
            continue
        text += here
        k += 1
    return fields + text


def _layout(block: str, rows: list[re.Match[str]]) -> str | None:
    """A raw table that lays out one thing rather than listing things: one row of text whose cells hold
    several paragraphs each (pandoc writes a stat block so). Its lines, placed from the row's start
    within the table's own lines (the line count is unchanged); None for any other table."""
    full = [[_paragraphs(c) for c in _CELL.findall(r.group(1))] for r in rows]
    full = [[c for c in cells if c] for cells in full]
    filled = [(r, cells) for r, cells in zip(rows, full, strict=True) if cells]
    if len(filled) != 1 or sum(len(c) >= 2 for c in filled[0][1]) < 2:
        return None
    row, cells = filled[0]
    lines = [""] * (block.count("\n") + 1)
    start = block.count("\n", 0, row.start())
    shown = _layout_lines(cells)
    room = len(lines) - start
    shown = [*shown[:room - 1], " ".join(shown[room - 1:])] if len(shown) > room else shown
    lines[start:start + len(shown)] = shown
    return "\n".join(lines)


def _table_as_pipes(match: re.Match[str]) -> str:
    """A raw `<table>` as pipe rows, each on the line its `<tr>` starts on, so it reads like a
    Markdown table and its rows keep their line numbers; a layout table (see _layout) as its text."""
    block = match.group(0)
    rows = list(_ROW.finditer(block))
    laid = _layout(block, rows) if "<p" in block or "<br" in block else None
    if laid is not None:
        return laid
    lines = [""] * (block.count("\n") + 1)
    at = []
    for row in rows:
        cells = [" ".join(inline_text(c).split()) for c in _CELL.findall(row.group(1))]
        if any(cells):
            at.append(block.count("\n", 0, row.start()))
            lines[at[-1]] = "| " + " | ".join(cells) + " |"
    for k in range(at[0] + 1, at[-1]) if at else ():
        lines[k] = lines[k] or "|"  # an empty row: the table stays one block (`<thead>`, `<p>` lines)
    return "\n".join(lines)


# A container fence (markdown-it's `:::statblock`, Docusaurus's `:::tip Title`, pandoc's `::: {.note}`, a
# closing `:::`): markup around text, like a <div>. It reads as its title, or as its kind as an alert does
# ("Statblock:", "Tip:"); a closing fence or attributes alone are nothing.
_CONTAINER = re.compile(r"^[ \t]*:{3,}[ \t]*(?:\{[^}\n]*\}|([A-Za-z][\w-]*))?(?:\[([^\]\n]*)\])?[ \t]*([^\n]*?)[ \t]*$",
                        re.MULTILINE)


def _container(m: re.Match[str]) -> str:
    kind, bracket, rest = m.group(1), m.group(2), m.group(3)
    return bracket or rest or (kind.replace("-", " ").capitalize() + ":" if kind else "")


def has_escapes(text: str) -> bool:
    """Whether `text` holds a backslash escape to protect: a text that already holds characters of the
    stand-ins' private-use range (an icon font's glyphs) keeps its escapes, so no glyph turns into one."""
    return "\\" in text and ESCAPED.search(text) is not None and _PROTECTED.search(text) is None


def protect_escapes(text: str) -> str:
    """Each escaped character as a private-use stand-in, so no markup pattern reads it (see has_escapes)."""
    return ESCAPED.sub(lambda m: chr(0xE000 + ord(m.group(1))), text)


def restore_escapes(text: str) -> str:
    """The escaped characters that protect_escapes set apart, as themselves."""
    return _PROTECTED.sub(lambda m: chr(ord(m.group(0)) - 0xE000), text)


def prepare(text: str) -> str:
    """Comments out, container fences out, and raw tables as pipe rows; the line count is unchanged."""
    if "<!--" in text:
        text = _COMMENT.sub(_blank_keeping_lines, text)
    if ":::" in text:
        text = _CONTAINER.sub(_container, text)
    if "<table" in text or "<TABLE" in text:
        text = _RAW_TABLE.sub(_table_as_pipes, text)
    return text


def _wiki(match: re.Match[str]) -> str:
    """`[[Page|label]]` reads as its label, `[[Page]]` as the page; an embed (`![[…]]`) or an
    upper-case placeholder (`[[PHYSICAL ICON]]`, an icon the site draws) is not text."""
    embed, inner = match.group(1), match.group(2).strip()
    if embed:  # an embedded image or note ("![[sprite.png|right]]": "right" is its size, not text)
        return ""
    if "|" in inner:
        return inner.split("|")[-1].strip()
    letters = [c for c in inner if c.isalpha()]
    if not letters or all(c.isupper() for c in letters):
        return ""
    return inner


def inline_text(text: str, br: str = " ") -> str:
    """Markup that is not text, taken out of one line or cell: tags (`<br>` becomes `br`),
    shortcodes, placeholders, empty links; links read as their text; entities decoded."""
    if "{{" in text:
        text = _SHORTCODE.sub(" ", text)
    if "[[" in text:
        text = _WIKI.sub(_wiki, text)
    if "[]" in text:
        text = _EMPTY_LINK.sub("", text)
    if "]{" in text:
        text = _SPAN.sub(r"\1", text)
    if "](" in text:
        text = links_as_text(text)
    if "<" in text:
        text = _BR.sub(br, text)
        text = _COLUMN_BREAK.sub("  ", text)
        text = _TAG.sub("", text)
    if "&" in text:
        text = html.unescape(text).replace("\xa0", " ")
    if "--" in text:
        text = _EN_DASH.sub("\u2013", _EM_DASH.sub("\u2014", text))
    if "^" in text:
        text = superscripts(text)
    return text


def superscripts(text: str) -> str:
    """pandoc's superscripts read as plain text: "13^th^ Age" is "13th Age"."""
    return _SUPERSCRIPT.sub(r"\1", text)


def links_as_text(text: str) -> str:
    """Links and images read as their text (`[Reactions](/rules/#reactions)` is "Reactions")."""
    return _LINK.sub(r"\1", _IMAGE.sub(r"\1", text))


def unquote(line: str) -> str:
    """A blockquote line without its `>` markers (nested `>>` too); an alert or callout marker reads as
    its title, or as its word when it has none ("Note:")."""
    if ">" not in line[:4] and not line.lstrip().startswith(">"):
        return line
    rest = _QUOTE.sub("", line.lstrip()) if line.lstrip().startswith(">") else line
    alert = _ALERT.match(rest.strip())
    if alert is None:
        return rest
    return alert.group(2) or alert.group(1).replace("-", " ").capitalize() + ":"


def name_box(line: str) -> tuple[str, str] | None:
    """(name, values) of a Hugo name box (`{{< hint >}} {{< columns2 >}} Abomination <---> 5 (15)
    {{< /columns2 >}}{{< /hint >}}`): a line that is only shortcodes around a name."""
    if not line.lstrip().startswith("{{"):
        return None
    m = _BOX.match(line)
    if m is None:
        return None
    parts = _COLUMN_BREAK.split(m.group("inner"))
    parts = [*_BOX_VALUE.split(parts[0], maxsplit=1), *parts[1:]]
    name = " ".join(inline_text(parts[0]).split())
    if not name or "{{" in name:
        return None
    return name, "  ".join(" ".join(inline_text(ESCAPED.sub(r"\1", p)).split()) for p in parts[1:])


def shortcode_only(line: str) -> bool:
    """A line of shortcodes and nothing else (`{{< hint danger >}}`, `{{< /columns >}}`)."""
    return "{{" in line and not _SHORTCODE.sub("", line).strip()
