"""Text from books and file names made safe to print on a terminal.

A heading, a file name or a page of text can hold escape sequences (`ESC ] 0 ; … BEL` retitles
the window, `ESC [ 2 J` clears the screen) or bidirectional overrides that reorder what the
reader sees. rich passes ESC through, so every string that came from a file goes through
`line` (titles, names, messages) or `text` (a section's body) before it is printed: control
characters become visible escapes such as `\\x1b`. JSON output is never filtered (orjson
escapes control characters itself, and a script must get the exact text).
"""

from __future__ import annotations

_C0_C1 = [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]  # embeddings, overrides and isolates

# the bytes of a file name that is not UTF-8 (Python's surrogate escapes), as in textnorm.shown_name
_NAME_BYTES = {0xDC00 + b: f"\\x{b:02x}" for b in range(0x80, 0x100)}
_ESCAPED: dict[int, str] = {c: f"\\x{c:02x}" for c in _C0_C1} | {c: f"\\u{c:04x}" for c in _BIDI} | _NAME_BYTES

# One line (a title, a cell, a message): line breaks and tabs are spaces.
_LINE: dict[int, str] = _ESCAPED | {0x09: " ", 0x0A: " ", 0x0D: " "}
# A body of text: tabs and line breaks stay, a carriage return or form feed is a line break.
_TEXT: dict[int, str] = {k: v for k, v in _ESCAPED.items() if k not in (0x09, 0x0A)} | {0x0D: "", 0x0C: "\n"}


def line(s: object) -> str:
    """`s` as one printable line."""
    return str(s).translate(_LINE)


def text(s: str) -> str:
    """A multi-line body, printable: line breaks and tabs kept, other control characters escaped."""
    return s.translate(_TEXT)
