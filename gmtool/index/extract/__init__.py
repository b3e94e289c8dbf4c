"""Files in, `Document`s out: one entry point whatever the format.

The extractors themselves import their heavy libraries lazily, so importing this package
costs nothing at CLI start-up.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import ExtractError
from gmtool.types import SUPPORTED_SUFFIXES, Document

# What extraction and typing make of a file. Bump it when they change what a book's entries or types
# are: a source indexed under another value is indexed again on the next scan, changed or not, so an
# upgrade's better reading reaches books indexed before it (1: side-by-side tables read row by row,
# priced title lines without text of their own, typing that a list's heading contradicts stays untyped;
# 2: value-first stat lines, a bold header row under a blank one, a part title alone among rules sections
# is a rule, rows that group other entries untyped, vault notes read through their Dataview fields, pandoc
# tables read as tables, peoples described by their parts are races; x4: a column of one scale's steps gives
# no rows, a heading naming classes is about them, a creature named for its kind with its own stat block is
# a monster, a row picked by a die in the first column is a roll result, a heading among rules about spells is
# a rule, pandoc superscripts and block-scalar titles, a cost in points is no price, backslash escapes and
# bracketed spans read as text; x5: numbers before a table's name column are its values, a random table
# printed in two halves gives both halves' rows, "d%" is a die, a kind named before a list word
# ("Spell Descriptions") types the headings under it, headings numbered one after another are one list,
# a delimiter row of ":-:" cells, rows under a header naming another kind are no monsters, a table in a
# section of a monster is its parts, a value-first stat line ending in a weapon is a creature's, a bold
# name leads a table cell too long for a name).
EXTRACT_VERSION = "x5"


def extract(path: Path, workers: int = 1) -> Document:
    suffix = path.suffix.lower()
    if suffix == ".pdf":
        from gmtool.index.extract.pdf import extract_pdf

        return extract_pdf(path, workers=workers)
    if suffix in (".md", ".markdown"):
        from gmtool.index.extract.markdown import extract_markdown

        return extract_markdown(path)
    if suffix == ".txt":
        from gmtool.index.extract.plaintext import extract_text

        return extract_text(path)
    raise ExtractError(
        "UNSUPPORTED_FORMAT",
        f"{path.name}: '{suffix or 'no extension'}' is not a supported format",
        f"gmtool reads {', '.join(SUPPORTED_SUFFIXES)}",
    )
