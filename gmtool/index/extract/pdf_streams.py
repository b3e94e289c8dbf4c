"""A bounded look at a PDF's compressed streams before pdfium inflates them.

pdfium inflates a page's content stream whole when it loads the page, with no limit: a 783 KB
"flate bomb" whose content inflates to gigabytes took 1.56 GB (5.1 GB with two workers). So
before the page pass, every Flate stream in the file (images aside: pdfium does not decode them
for text) is inflated here, in 64 KB steps and counting, never held: a stream past
MAX_STREAM_BYTES marks the pages that draw it (their content or a form they use) to be skipped
with a warning, and a book whose streams inflate past MAX_BOOK_BYTES in all is not read at all
(CONTENT_TOO_LARGE). Costs one pass over the file at zlib speed; the page map (pdfminer, from
pdfplumber's dependencies) is read only when a stream is over the cap.
"""

from __future__ import annotations

import mmap
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from gmtool.errors import ExtractError

# The largest content stream of a page in the corpus inflates to a few MB; 64 MiB is ten times the
# densest page anyone prints, and what pdfium then holds (about twice that) stays in budget.
MAX_STREAM_BYTES = 64 << 20
# Everything the page pass would inflate, summed over the book: the corpus' largest book has
# ~200 MB of Flate streams (fonts and content); a 2 GiB total is a book no one could read.
MAX_BOOK_BYTES = 2 << 30
_STEP = 1 << 16
_STREAM = re.compile(rb">>\s*stream(?:\r\n|\n|\r)")
_OBJ_NUM = re.compile(rb"(\d+)\s+\d+\s+$")
_MAX_DICT = 8192  # how far back from `stream` its object's dictionary may start
_MAX_LAYERS = 4  # /Filter [/FlateDecode /FlateDecode ...]


@dataclass
class StreamBudget:
    """What the look found: objects whose stream is over the cap, and the book's inflated total."""

    oversized: set[int] = field(default_factory=set)
    total: int = 0


def _inflated_size(mm: mmap.mmap, pos: int, layers: int, cap: int) -> tuple[int, int]:
    """(bytes the stream at `pos` inflates to, capped at cap + 1; where its compressed data ends).
    Each layer's output feeds the next in small steps, so nothing big is ever held."""
    chain = [zlib.decompressobj() for _ in range(layers)]
    total = 0

    def feed(k: int, data: bytes) -> bool:  # False once over the cap
        nonlocal total
        d = chain[k]
        while data and not d.eof:
            out = d.decompress(data, _STEP)
            data = d.unconsumed_tail
            if k + 1 < layers:
                if not feed(k + 1, out):
                    return False
            else:
                total += len(out)
                if total > cap:
                    return False
        return True

    start = pos
    try:
        while not chain[0].eof and pos < len(mm):
            block = mm[pos:pos + _STEP]
            pos += len(block)
            if not feed(0, block):
                return cap + 1, pos
    except zlib.error:  # damaged data: pdfium copes (or fails the page) without inflating much
        return total, start
    return total, pos - len(chain[0].unused_data)


def scan_streams(path: Path, stream_cap: int | None = None) -> StreamBudget:
    """Every Flate stream of the file, inflated and counted (see the module docstring)."""
    stream_cap = MAX_STREAM_BYTES if stream_cap is None else stream_cap
    budget = StreamBudget()
    with open(path, "rb") as fh:
        try:
            mm = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file
            return budget
    with mm:
        pos = 0
        while (m := _STREAM.search(mm, pos)) is not None:
            pos = m.end()
            head = mm.rfind(b"obj", max(0, m.start() - _MAX_DICT), m.start())
            if head < 0:
                continue
            info = mm[head:m.start()]
            layers = info.count(b"/FlateDecode") + len(re.findall(rb"/Fl\b", info))
            if not layers or b"/Image" in info or layers > _MAX_LAYERS:
                continue
            size, pos = _inflated_size(mm, m.end(), layers, stream_cap)
            pos = max(pos, m.end())
            budget.total += size
            if size > stream_cap and (num := _OBJ_NUM.search(mm[max(0, head - 24):head])):
                budget.oversized.add(int(num.group(1)))
    return budget


def pages_drawing(path: Path, objects: set[int]) -> set[int]:
    """0-based pages whose content streams, or forms in their resources, are among `objects`."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import PDFObjRef, resolve1

    def refs(value: object) -> set[int]:
        out: set[int] = set()
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, PDFObjRef):
                out.add(v.objid)
        return out

    found: set[int] = set()
    with open(path, "rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        for i, page in enumerate(PDFPage.create_pages(doc)):
            drawn = refs(page.attrs.get("Contents"))
            xobjects = resolve1((page.resources or {}).get("XObject")) or {}
            if isinstance(xobjects, dict):
                drawn |= refs(list(xobjects.values()))
            if drawn & objects:
                found.add(i)
    return found


def pages_to_skip(path: Path) -> dict[int, str]:
    """0-based page -> why it is skipped; CONTENT_TOO_LARGE for a book past MAX_BOOK_BYTES."""
    budget = scan_streams(path)
    if budget.total > MAX_BOOK_BYTES:
        raise ExtractError("CONTENT_TOO_LARGE",
                           f"{path.name}: its compressed streams inflate to over {MAX_BOOK_BYTES >> 20} MiB",
                           "the PDF is damaged or hostile; re-export it (e.g. qpdf in.pdf out.pdf)")
    if not budget.oversized:
        return {}
    why = f"its content inflates to over {MAX_STREAM_BYTES >> 20} MiB (a damaged or hostile page)"
    try:
        return dict.fromkeys(pages_drawing(path, budget.oversized), why)
    except Exception as exc:  # pdfminer failing on the same damaged file
        raise ExtractError("CONTENT_TOO_LARGE", f"{path.name}: a stream inflates to over "
                           f"{MAX_STREAM_BYTES >> 20} MiB and its pages cannot be told ({type(exc).__name__})",
                           "the PDF is damaged or hostile; re-export it") from exc
