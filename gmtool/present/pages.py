"""The one way a place in a book is written, in every command and in MCP text.

A PDF entry is at its physical page (what a viewer's page box and `open --page` take), with the
page number printed on it in brackets when the book numbers its pages otherwise; a Markdown or
text entry has no pages, only the line of its heading. JSON keeps the two numbers as fields.
"""

from __future__ import annotations


def page_ref(page: int | None, label: str | None = None, line: int | None = None) -> str:
    """"p.26", "p.26 (printed 25)" or "l.120"."""
    if page is None:
        return f"l.{line}" if line is not None else ""
    if label and label != str(page):
        return f"p.{page} (printed {label})"
    return f"p.{page}"
