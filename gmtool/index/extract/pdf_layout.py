"""Per-page layout for the PDF extractor: text objects -> lines in reading order.

Works on pypdfium2's page objects (one text object is usually a run of one line in one
font), which is an order of magnitude faster than pdfplumber's per-character model. Each
page yields a list of `Line` tuples in reading order: on a two-column page the left column
is read before the right one, and anything spanning the gutter (full-width headings,
tables) splits the page into bands that are read top to bottom.

Everything here runs inside worker processes too, so it only returns plain tuples.
"""

from __future__ import annotations

import bisect
import ctypes
import itertools
import re
from typing import NamedTuple

from gmtool.index.extract.words import GAP, JOINT, MARKS

# SRD 5.1 stores each in-word hyphen as "-" followed by soft/variant hyphens, and each
# word gap as tab + CR + space + NBSP: both collapse to their plain forms.
_ODD_HYPHEN = re.compile("[-\u2010\u2011][\u00ad\u2010\u2011]+|[\u2010\u2011\u00ad]")
_SPACES = re.compile("[\t\r\n \u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufeff\uffff]")
# a lost ligature inside a word (U+FFFE or NUL from fonts without a Unicode map): kept as
# one marker character that `titles.repair_ligatures` resolves against the book's words
LIGATURE = "\ufffe"
_LOST_LIGATURE = re.compile("(?<=[A-Za-z])[\ufffe\x00]+(?=[a-z])")
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi|extrabold|SFSX|SFBX|CMBX|\bBX", re.IGNORECASE)
_ITALIC_NAME = re.compile(r"italic|oblique|-it\b|SFTI|CMTI", re.IGNORECASE)
# Gaps between two runs of a line, in font sizes: wider than _WORD_GAP is a word space (or a
# kerning gap inside a word); letters meeting across more than _GLYPH_GAP (wider than the
# glyph gaps inside words of the corpus, up to ~0.1) may be a lost word space ("Theplayer" in
# Additional Things is 0.13 apart). Both are marked for `words.resolve`.
_WORD_GAP = 0.15
_GLYPH_GAP = 0.11
# A gap between cells that share baselines is a table's, not a gutter between text columns, when
# at least TABLE_ALIGNED of the left side's runs have a run on the right at their baseline and
# on neither side do runs of TEXT_WORDS words or more that fill TEXT_FILL of its width hold
# TEXT_SHARE of its characters
# (running text does, even beside a table: an SRD class page; Microlite20's price tables, set in a
# page's two columns, were read column by column: "Cost" under "Weapon").
TABLE_ALIGNED = 0.7
TEXT_FILL = 0.6
TEXT_WORDS = 4
TEXT_SHARE = 0.3
# ...and unless the right side's rows start with names (NAMES_LEAD of them, nearly all different):
# then it is the next column of a list or the right half of a long table (SRD 5.1's gear and spell
# lists), and the gap is a gutter.
NAMES_LEAD = 0.7
# a page whose widest clear gaps are a table's (Item | Cost) has its gutter elsewhere: this many
# gaps are tried, clearest first
GUTTER_TRIES = 12
# pdfium reports a hyphen that ends a line as 0x02 or U+FFFE in some files
_SOFT_END = "\u00ad\x02\ufffe"


class Line(NamedTuple):
    top: float  # distance from the page top (points)
    bottom: float
    base: float  # baseline, from the page top
    x0: float
    x1: float
    size: float  # dominant effective font size (points, 0.1 precision)
    bold: bool  # most of the line's characters are bold
    lead_bold: bool  # the line starts with a bold run (a run-in label such as "Armor Class")
    col: int  # 0 single column / full width, 1 left, 2 right
    text: str  # normalised text
    soft_end: bool  # the line ended with a soft hyphen
    # the leading run's text when the line changes font after it (a run-in name, a name
    # before its tag line), else ""
    lead: str = ""
    # (x0, x1, text) of each gap-separated fragment when there are several (table cells)
    cells: tuple = ()


def clean_text(s: str) -> str:
    if "\u00ad" in s or "\u2010" in s or "\u2011" in s:
        # a soft hyphen inside a line is a typed hyphen (Chromium/Skia writes every "-" so)
        s = _ODD_HYPHEN.sub("-", s)
    if not s.isprintable():
        parts = _LOST_LIGATURE.split(s)
        s = LIGATURE.join(_CONTROL.sub("", p).replace(LIGATURE, "") for p in parts)
    return " ".join(s.replace("\u200b", " ").split())


_PROTOS: dict = {}


def _fast(raw):
    """Prototypes of the hot pdfium calls taking and returning plain ints (no casts)."""
    if _PROTOS:
        return _PROTOS
    vp, i, f = ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)
    specs = {
        "FPDFPage_GetObject": (vp, vp, i),
        "FPDFPageObj_GetType": (i, vp),
        "FPDFPageObj_GetBounds": (i, vp, f, f, f, f),
        "FPDFPageObj_GetMatrix": (i, vp, ctypes.POINTER(raw.FS_MATRIX)),
        "FPDFTextObj_GetFontSize": (i, vp, f),
        "FPDFTextObj_GetFont": (vp, vp),
        "FPDFTextObj_GetText": (ctypes.c_ulong, vp, vp, vp, ctypes.c_ulong),
    }
    for name, (res, *args) in specs.items():
        addr = ctypes.cast(getattr(raw, name), ctypes.c_void_p).value
        _PROTOS[name] = ctypes.CFUNCTYPE(res, *args)(addr)
    return _PROTOS


def _font_flags(key: int | None, cache: dict, raw) -> tuple[bool, bool, str]:
    """(bold, italic, style name) of a font; the name tells runs of one line apart."""
    hit = cache.get(key)
    if hit is not None:
        return hit
    bold = italic = False
    name = ""
    if key:
        font = ctypes.cast(ctypes.c_void_p(key), raw.FPDF_FONT)
        n = raw.FPDFFont_GetBaseFontName(font, None, 0)
        if n > 0:
            buf = ctypes.create_string_buffer(n)
            raw.FPDFFont_GetBaseFontName(font, buf, n)
            name = buf.value.decode("latin-1", "replace")
        weight = raw.FPDFFont_GetWeight(font)
        flags = raw.FPDFFont_GetFlags(font)
        bold = bool(_BOLD_NAME.search(name)) or weight >= 600 or bool(flags & (1 << 18))
        italic = bool(_ITALIC_NAME.search(name)) or bool(flags & (1 << 6))
    cache[key] = (bold, italic, name.split("+")[-1] + ("/i" if italic else "") + ("/b" if bold else ""))
    return cache[key]


# Page objects above which a page is read as plain text: pdfium looks up each text object's
# characters by scanning the whole page, so per-object reading is quadratic in the object count.
# The densest page of the corpus has about 3,000 objects; an adversarial page may have millions.
MAX_PAGE_OBJECTS = 10_000
# Page objects above which a page is not read at all (with a warning): pdfium's text page costs
# about 0.5 KB an object, so reading 400,000 objects would take ~200 MB beyond the page itself.
MAX_READ_OBJECTS = 100_000
# the size given to the lines of a page read as plain text (only its ratio to nothing matters:
# every line of such a page has it, so none stands out as a heading)
_PLAIN_SIZE = 10.0


class PageLines(list[Line]):
    """A page's lines; `plain` is its object count when it was read as plain text (too many
    objects), minus that count when it was not read at all (far too many). `rules` holds the
    boxes of its path objects (see page_spans), for the ruled-table finder. `skipped` says why a
    page was not read at all (over a budget, or unreadable), for the book's warnings."""

    plain: int = 0
    rules: tuple = ()
    skipped: str = ""


# pdfium's page object type of a path (a rule, a box, a shape)
_PATH = 2
# Path objects read per page for tables: a ruled table of 40 rows and 4 columns drawn cell by
# cell has 160; a page with more is artwork (maps, ornaments), whose boxes make no table.
MAX_RULES = 400


def plain_lines(textpage, width: float) -> list[Line]:
    """The page's text as plain body lines, in pdfium's own order: linear in the text, and
    without the layout pass (whose keys and fragments cost ~4 KB a line)."""
    lines = []
    y = 0.0
    for raw_line in textpage.get_text_range().splitlines():
        text = clean_text(raw_line)
        if not text:
            continue
        lines.append(Line(y, y + _PLAIN_SIZE, y + _PLAIN_SIZE, 0.0, width, _PLAIN_SIZE, False, False, 0, text, False))
        y += _PLAIN_SIZE * 1.2
    return lines


def page_spans(page, textpage, raw, font_cache: dict, rules: list | None = None) -> tuple[list[tuple], float, float]:
    """Text runs of one page: (x0, top, x1, bottom, base, size, bold, text, style), y from the top.
    Given a `rules` list, the boxes (x0, top, x1, bottom) of the page's path objects (rules,
    cell borders, shading) are appended to it, up to MAX_RULES (more is artwork, not a table)."""
    width, height = page.get_size()
    fast = _fast(raw)
    praw = ctypes.cast(page.raw, ctypes.c_void_p).value
    tpraw = ctypes.cast(textpage.raw, ctypes.c_void_p).value
    L, B, R, T = ctypes.c_float(), ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    M = raw.FS_MATRIX()
    fs = ctypes.c_float()
    buf = (ctypes.c_ushort * 8192)()
    bufp = ctypes.addressof(buf)
    Lp, Bp, Rp, Tp, Mp, fsp = (ctypes.pointer(x) for x in (L, B, R, T, M, fs))
    get_obj = fast["FPDFPage_GetObject"]
    get_type = fast["FPDFPageObj_GetType"]
    get_bounds = fast["FPDFPageObj_GetBounds"]
    get_matrix = fast["FPDFPageObj_GetMatrix"]
    get_size = fast["FPDFTextObj_GetFontSize"]
    get_font = fast["FPDFTextObj_GetFont"]
    get_text = fast["FPDFTextObj_GetText"]
    string_at = ctypes.string_at
    spans = []
    for i in range(raw.FPDFPage_CountObjects(page.raw)):
        obj = get_obj(praw, i)
        kind = get_type(obj)
        if kind == _PATH and rules is not None and len(rules) <= MAX_RULES:
            get_bounds(obj, Lp, Bp, Rp, Tp)
            rules.append((L.value, height - T.value, R.value, height - B.value))
            continue
        if kind != 1:
            continue
        n = get_text(obj, tpraw, bufp, 16384)
        if n <= 2:
            continue
        if n > 16384:  # a very long run: fetch it whole
            big = (ctypes.c_ushort * n)()
            get_text(obj, tpraw, ctypes.addressof(big), n * 2)
            text = string_at(big, n * 2 - 2).decode("utf-16-le", "replace")
        else:
            text = string_at(buf, n - 2).decode("utf-16-le", "replace")
        if not text.strip():
            continue
        get_bounds(obj, Lp, Bp, Rp, Tp)
        get_matrix(obj, Mp)
        get_size(obj, fsp)
        scale = abs(M.a * M.d - M.b * M.c) ** 0.5
        size = round(fs.value * scale, 1)
        if size <= 0:
            size = round(T.value - B.value, 1)
        bold, _italic, style = _font_flags(get_font(obj), font_cache, raw)
        spans.append((L.value, height - T.value, R.value, height - B.value, height - M.f, size, bold, text, style))
    return spans, width, height


def _find_gutter(frags: list[list], lo_x: float, hi_x: float) -> float | None:
    """x of the gap between two text columns, or None for a single-column page."""
    if len(frags) < 8:
        return None
    import numpy as np

    x0 = np.array([f[0] for f in frags])
    x1 = np.array([f[2] for f in frags])
    w = np.array([len(f[7]) for f in frags], dtype=float)
    total = w.sum()
    if total < 200:
        return None
    span = hi_x - lo_x
    xs = np.arange(int(lo_x + span * 0.2), int(lo_x + span * 0.8), 1.0)[:, None]
    if xs.size == 0:
        return None
    crossing = (x0 < xs - 1) & (x1 > xs + 1)
    left = ((x1 <= xs + 1) * w).sum(axis=1)
    right = ((x0 >= xs - 1) * w).sum(axis=1) - (crossing * w).sum(axis=1) * 0
    cross = (crossing * w).sum(axis=1)
    ok = (left >= total * 0.15) & (right >= total * 0.15)
    if not ok.any():
        return None
    cross = np.where(ok, cross, np.inf)
    for _try in range(GUTTER_TRIES):
        best = cross.min()
        if best > total * 0.6:
            return None
        idx = np.flatnonzero(cross == best)
        # the middle of the widest run of best positions next to the first one
        run = [idx[0]]
        for i in idx[1:]:
            if i == run[-1] + 1:
                run.append(i)
            else:
                break
        x = float(xs[(run[0] + run[-1]) // 2, 0])
        if _table_split(frags, x):
            cross[run[0]:run[-1] + 1] = np.inf  # a table's own columns: look for the gutter elsewhere
            continue
        if best <= total * 0.08 or _banded(frags, x, lo_x, hi_x):
            return x
        return None
    return None


def _table_split(frags: list[list], x: float) -> bool:
    """Whether a gap at x runs between the columns of one table rather than between two columns
    of text or of lists: the runs on either side share baselines, neither side is running text
    (see TEXT_SHARE), the right side does not repeat a header row of the left (two tables side by
    side), and its rows do not start with names as the left side's do. A table's next column
    holds prices, dice or a few repeated values ("Melee", "Far"); the right half of a long price
    list, or a spell list's next column, starts each row with a name of its own ("Hunting trap",
    "Shatter")."""
    left = [f for f in frags if f[2] <= x + 1]
    right = [f for f in frags if f[0] >= x - 1]
    if len(left) < 3 or len(right) < 3:
        return False
    rows = _by_baseline(right)
    if _aligned(left, rows) < TABLE_ALIGNED * len(left):
        return False
    if max(_full_share(left, x - min(f[0] for f in left)),
           _full_share(right, max(f[2] for f in right) - x)) >= TEXT_SHARE:
        return False
    return not (_same_header(left, rows) or _names_lead(right))


def _same_header(left: list[list], rows: dict[int, list]) -> bool:
    """Whether a row of the left side is repeated on the right at its baseline: two tables set
    side by side, each with its own header row ("Weapon Cost Damage Range" twice)."""
    for base, cells in _by_baseline(left).items():
        texts = [f[7].strip().lower() for f in sorted(cells, key=lambda f: f[0])]
        theirs = [f[7].strip().lower() for f in sorted(rows.get(base, []), key=lambda f: f[0])]
        if len(texts) >= 2 and texts == theirs:
            return True
    return False


def _names_lead(side: list[list]) -> bool:
    """Whether a side's rows start with names: a letter first and no digit (outside a parenthesis:
    "Ladder (10-foot)"), nearly all different."""
    rows = _by_baseline(side)
    lead = [re.sub(r"\([^)]*\)?", "", min(cells, key=lambda f: f[0])[7]).strip() for cells in rows.values()]
    named = [t for t in lead if t[:1].isalpha() and not any(c.isdigit() for c in t)]
    return len(named) >= NAMES_LEAD * len(lead) and len({t.lower() for t in named}) >= NAMES_LEAD * len(named)


def _by_baseline(frags: list[list]) -> dict[int, list]:
    """Fragments grouped by their rounded baseline: the rows of a side."""
    rows: dict[int, list] = {}
    for f in frags:
        rows.setdefault(round(f[4]), []).append(f)
    return rows


def _aligned(left: list[list], rows: dict[int, list]) -> int:
    """How many of the left side's fragments have a row of the right side at their baseline (±1 pt)."""
    return sum(1 for f in left if any(round(f[4]) + d in rows for d in (-1, 0, 1)))


def _full_share(side: list[list], width: float) -> float:
    """The share of a side's characters in runs of running text: TEXT_WORDS words or more, filling
    TEXT_FILL of its width (a name cell may fill a narrow column: "Chain, spiked")."""
    total = sum(len(f[7]) for f in side)
    full = sum(len(f[7]) for f in side if f[2] - f[0] >= TEXT_FILL * width and len(f[7].split()) >= TEXT_WORDS)
    return full / total if total else 0.0


def _banded(frags: list[list], x: float, lo_x: float, hi_x: float) -> bool:
    """XY-cut test for a gutter that full-width elements cross (a heading, an intro
    paragraph, a title): cut the region into bands at those elements (anything else across
    the gap rejects it) and accept when bands
    holding text columns on both sides (several lines each; lines on one side mostly fill
    their column, on the other at least a quarter of it, and they are not rows of a table
    set side by side on shared baselines, unless each table prints its own header row)
    carry most of the text that does not cross."""
    two_sided = side_total = 0.0
    band: list[list] = [[], []]

    def close() -> float:
        left, right = band
        if len(left) >= 3 and len(right) >= 3:
            lw = sorted(f[2] - f[0] for f in left)[len(left) // 2] / max(1.0, x - min(f[0] for f in left))
            rw = sorted(f[2] - f[0] for f in right)[len(right) // 2] / max(1.0, max(f[2] for f in right) - x)
            by_row = _by_baseline(right)
            text = min(lw, rw) >= 0.25 and max(lw, rw) >= 0.6 and _aligned(left, by_row) < 0.7 * len(left)
            if text or _same_header(left, by_row):  # two text columns, or two tables side by side
                return sum(len(f[7]) for f in left) + sum(len(f[7]) for f in right)
        return 0.0

    full = 0.85 * (max(f[2] for f in frags) - min(f[0] for f in frags))
    cross = [f for f in frags if f[0] < x - 1 and f[2] > x + 1]
    wide = [f for f in cross if f[2] - f[0] >= full]
    for f in cross:
        # a short line across the gap is fine next to a full-width one (a paragraph's last
        # line); anywhere else it is a table cell or a stray line: no gutter
        if f[2] - f[0] < full and not any(abs(g[1] - f[1]) <= 2.0 * max(f[5], g[5]) for g in wide):
            return False
    for f in sorted(frags, key=lambda f: f[1]):
        if f[0] < x - 1 and f[2] > x + 1:
            two_sided += close()
            band = [[], []]
            continue
        band[0 if f[2] <= x + 1 else 1].append(f)
        side_total += len(f[7])
    two_sided += close()
    return side_total > 0 and two_sided >= 0.6 * side_total


def layout_page(spans: list[tuple], width: float, height: float) -> list[Line]:
    """Group text runs into lines and put them in reading order."""
    if not spans:
        return []
    # 1. fragments: runs on one baseline with no wide gap between them
    spans = sorted(spans, key=lambda s: (round(s[4]), s[0]))
    frags: list[list] = []  # [x0, top, x1, bottom, base, size, parts, text]
    for s in spans:
        x0, top, x1, bottom, base, size, _bold, text = s[:8]
        f = frags[-1] if frags else None
        if (
            f is not None
            and abs(base - f[4]) <= 0.5 * min(size, f[5])
            and -0.5 * size <= x0 - f[2] <= 0.9 * min(size, f[5])
        ):
            f[2] = max(f[2], x1)
            f[1] = min(f[1], top)
            f[3] = max(f[3], bottom)
            f[6].append(s)
            f[7] += text
        else:
            frags.append([x0, top, x1, bottom, base, size, [s], text])
    # runs sorted by rounded baseline may still leave same-line runs apart: merge again
    # 2. columns (recursively: a column may split again, e.g. a three-column poster)
    keyed: list = []
    _order(frags, 0.0, width, (), keyed, [0], 0)
    keyed.sort(key=lambda k: k[0])
    # 3. lines: consecutive fragments of one band/column on one baseline
    lines: list[Line] = []
    group: list = []
    for key, col, f in keyed:
        if group:
            gk, gcol, gf = group[0]
            if gcol == col and gk[:-1] == key[:-1] and abs(f[4] - gf[4]) <= 0.5 * min(f[5], gf[5]):
                group.append((key, col, f))
                continue
            lines.append(_make_line(group))
        group = [(key, col, f)]
    if group:
        lines.append(_make_line(group))
    return [ln for ln in lines if ln.text]


def _order(frags, lo_x, hi_x, prefix, out, next_col, col, depth=0):
    """Append (key, col, frag) in reading order; columns side by side, bands top to bottom."""
    gutter = _find_gutter(frags, lo_x, hi_x) if depth < 3 else None
    if gutter is None:
        for f in frags:
            out.append(((*prefix, (f[4], f[0])), col, f))
        return
    full = sorted(f[1] for f in frags if f[0] < gutter - 1 and f[2] > gutter + 1)
    bands: dict = {}
    for f in frags:
        if f[0] < gutter - 1 and f[2] > gutter + 1:
            j = bisect.bisect_left(full, f[1])
            out.append(((*prefix, (j, 3, f[4], f[0])), col, f))
        else:
            j = bisect.bisect_right(full, f[1])
            side = 1 if f[2] <= gutter + 1 else 2
            bands.setdefault((j, side), []).append(f)
    # a line closing one side of a band below everything on the other side, and nearer to the
    # full-width block that follows than to its own column (a heading such as "GM: RUN THE
    # GAME" above a full-width paragraph), is read with that block
    for (j, side), group in list(bands.items()):
        other = bands.get((j, 3 - side))
        if j >= len(full) or not other or len(group) < 2:
            continue
        group.sort(key=lambda f: f[1])
        c, before = group[-1], group[-2]
        gap_next = full[j] - c[3]
        if c[1] > max(f[3] for f in other) and 0 <= gap_next <= 2 * c[5] and c[1] - before[3] > gap_next:
            group.pop()
            out.append(((*prefix, (j, 3, c[4], c[0])), col, c))
    for (j, side), group in bands.items():
        next_col[0] += 1
        sub_lo, sub_hi = (lo_x, gutter) if side == 1 else (gutter, hi_x)
        _order(group, sub_lo, sub_hi, (*prefix, (j, side, 0, 0)), out, next_col, next_col[0], depth + 1)


def _make_line(group: list) -> Line:
    if len(group) == 1 and len(group[0][2][6]) == 1:  # the common case: one run
        _key, col, f = group[0]
        x0, top, x1, bottom, base, size, bold, raw_text = f[6][0][:8]
        raw_text = raw_text.rstrip(" \t\r\n\xa0")
        soft = raw_text.endswith(tuple(_SOFT_END))
        if soft:
            raw_text = raw_text.rstrip(_SOFT_END)
        return Line(top, bottom, base, x0, x1, size, bold, False, col, clean_text(raw_text), soft)
    group.sort(key=lambda g: g[2][0])
    runs = [s for _, _, f in group for s in sorted(f[6], key=lambda s: s[0])]
    parts: list[str] = []
    prev = None
    sizes: dict[float, int] = {}
    bold_chars = chars = 0
    lead_n = 0  # parts in the leading same-style run
    for s in runs:
        t = s[7]
        if prev is not None:
            gap = s[0] - prev[2]
            spaced = parts[-1].endswith((" ", "\t", "\xa0")) or t[:1].isspace()
            letters = parts[-1][-1:].isalpha() and t[:1].isalpha()
            if gap > _WORD_GAP * s[5] and not spaced:
                parts.append(GAP if letters else " ")  # a word space, or a kerning gap: the vocabulary decides
            elif letters and (gap > _GLYPH_GAP * s[5] or (len(s) > 8 and s[8] != prev[8])):
                parts.append(JOINT)  # a lost word space, or one word: the vocabulary decides
        if not lead_n and prev is not None and len(s) > 8 and s[8] != runs[0][8] and t.strip():
            lead_n = len(parts)
        parts.append(t)
        n = len(t.strip())
        sizes[s[5]] = sizes.get(s[5], 0) + n
        chars += n
        if s[6]:
            bold_chars += n
        prev = s
    raw_text = "".join(parts).rstrip(" \t\r\n\xa0")
    soft = raw_text.endswith(tuple(_SOFT_END))
    if soft:
        raw_text = raw_text.rstrip(_SOFT_END)
    text = clean_text(raw_text).strip()
    size = max(sizes.items(), key=lambda kv: kv[1])[0] if sizes else runs[0][5]
    first = next((s for s in runs if s[7].strip()), runs[0])
    lead_bold = first[6] and not (chars and bold_chars == chars)
    x0 = min(s[0] for s in runs)
    x1 = max(s[2] for s in runs)
    top = min(s[1] for s in runs)
    bottom = max(s[3] for s in runs)
    base = group[0][2][4]
    lead = clean_text("".join(parts[:lead_n]).strip(MARKS)) if lead_n else ""
    cells: tuple = ()
    if len(group) > 1:
        cells = tuple((f[0], f[2], clean_text(f[7])) for _, _, f in group)
    return Line(top, bottom, base, x0, x1, size, chars > 0 and bold_chars * 2 > chars, lead_bold, group[0][1], text, soft, lead, cells)


def _skipped(doc, i: int, why: str) -> tuple[float, float, list[Line]]:
    """A page left out: its size where pdfium knows it without loading the page."""
    lines = PageLines()
    lines.skipped = why
    try:
        w, h = doc.get_page_size(i)
    except Exception:  # noqa: BLE001 - a page that is not there has no size either
        w, h = 612.0, 792.0
    return w, h, lines


def extract_page_range(path: str, start: int, stop: int,
                       skip: dict[int, str] | None = None) -> list[tuple[float, float, list[Line]]]:
    """Open the PDF and lay out pages [start, stop): (width, height, lines) per page. A page in
    `skip` (over the stream budget) is not loaded, and a page pdfium cannot load (a `/Count` that
    promises more pages than the tree holds) is left out alone, not the book."""
    import pypdfium2 as pdfium
    from pypdfium2 import raw

    doc = pdfium.PdfDocument(path)
    out: list[tuple[float, float, list[Line]]] = []
    cache: dict = {}
    try:
        for i in range(start, stop):
            if skip and i in skip:
                out.append(_skipped(doc, i, skip[i]))
                continue
            try:
                page = doc[i]
            except pdfium.PdfiumError as exc:
                out.append(_skipped(doc, i, f"pdfium cannot load it ({exc})"))
                continue
            try:
                out.append(_read_page(page, raw, cache))
            finally:
                page.close()
    finally:
        doc.close()
    return out


def _read_page(page, raw, cache: dict) -> tuple[float, float, list[Line]]:
    """One page's (width, height, lines); an over-dense page as plain text, or not at all."""
    objects = raw.FPDFPage_CountObjects(page.raw)
    w, h = page.get_size()
    if objects > MAX_READ_OBJECTS:
        lines = PageLines()
        lines.plain = -objects  # skipped: its text page alone would cost ~0.5 KB an object
        return w, h, lines
    tp = page.get_textpage()
    try:
        if objects > MAX_PAGE_OBJECTS:
            lines = PageLines(plain_lines(tp, w))
            lines.plain = objects
            return w, h, lines
        rules: list = []
        spans, w, h = page_spans(page, tp, raw, cache, rules)
    finally:
        tp.close()
    lines = PageLines(layout_page(spans, w, h))
    if 0 < len(rules) <= MAX_RULES:
        lines.rules = tuple(rules)
    return w, h, lines


# A lost word space inside a text run ("Youmust": the text layer has no space and the run no
# break, the gap is a TJ offset): the glyphs' advance boxes stand this many font heights apart at
# the cut, and half this much wider than any other gap of the word (kerning inside the words of
# the corpus is at most ~0.03 of the height; the lost spaces of Minimal OpenD6 are 0.25 to 0.42).
_LOST_SPACE = 0.1
# pages read again to look at glyph gaps, at most, per book (each costs a page load); a text
# layer that loses spaces does so throughout, so a book whose first _GLUE_PROBE pages (those
# with the most candidates) show none is read no further
MAX_GLUE_PAGES = 200
_GLUE_PROBE = 12


def lost_spaces(path: str, places: dict[int, dict[str, list[int]]]) -> dict[int, dict[str, int]]:
    """Of the words run together that `places` names per page (word as printed -> where it may
    part), those whose glyphs stand a word space apart at one of its cuts: page -> word -> cut.
    Read from pdfium's advance (loose) boxes, which the run-level layout does not see."""
    import pypdfium2 as pdfium

    out: dict[int, dict[str, int]] = {}
    doc = pdfium.PdfDocument(path)
    try:
        order = sorted(places, key=lambda p: -len(places[p]))[:MAX_GLUE_PAGES]
        for n, pi in enumerate(order):
            if n >= _GLUE_PROBE and not out:
                break
            page = doc[pi]
            tp = page.get_textpage()
            try:
                text = tp.get_text_range()
                for w, cuts in places[pi].items():
                    cut = _cut_at_gap(tp, text, w, cuts)
                    if cut:
                        out.setdefault(pi, {})[w] = cut
            finally:
                tp.close()
                page.close()
    finally:
        doc.close()
    return out


def _cut_at_gap(tp, text: str, word: str, cuts: list[int]) -> int:
    """The cut of `word` (printed on the text page `tp`) where its glyphs stand apart, or 0."""
    for m in re.finditer(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", text):
        boxes = [tp.get_charbox(k, loose=True) for k in range(m.start(), m.end())]
        gaps = [b[0] - a[2] for a, b in itertools.pairwise(boxes)]
        size = boxes[0][3] - boxes[0][1]  # the advance box is as tall as the font (the Tf size may be 1)
        for c in cuts:
            rest = max((g for i, g in enumerate(gaps) if i != c - 1), default=0.0)
            if gaps[c - 1] >= _LOST_SPACE * size and gaps[c - 1] - rest >= _LOST_SPACE * size / 2:
                return c
    return 0
