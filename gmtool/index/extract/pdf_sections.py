"""Headings, the outline merge and section bodies for the PDF extractor.

Input: per-page lines in reading order (from `pdf_layout`) plus the outline. Output: a flat
list of `Entry` in document order with parents, levels, page ranges and bodies.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from typing import NamedTuple

from gmtool.index.extract.inline import Inline, Pos
from gmtool.index.extract.pdf_layout import Line
from gmtool.index.extract.sections import body_chunks
from gmtool.types import Entry

_NORM = re.compile(r"[^a-z0-9]+")
_DIGITS = re.compile(r"\d+")
# a page number: digits or a well-formed roman numeral in one case ("Mimic" is not one)
_ROMAN = r"(?=[ivxlcdm])m{0,3}(c[md]|d?c{0,3})(x[cl]|l?x{0,3})(i[xv]|v?i{0,3})"
_PAGE_NUMBER = re.compile(rf"^((?i:page)\s*)?([0-9]{{1,4}}|{_ROMAN}|{_ROMAN.upper()})$")
_WORD = re.compile(r"[A-Za-z]+")
_SECTION_NO = re.compile(r"^(\d+ )+")
_LETTER = re.compile(r"[A-Za-z\u00c0-\u024f]")


def norm(s: str) -> str:
    return _NORM.sub(" ", s.lower()).strip()


class OutlineItem(NamedTuple):
    title: str
    level: int  # 1 = top
    page: int  # 0-based page index
    y: float | None  # distance from the page top of the destination, when known


_EDGE_NUMBER = re.compile(r"^\d+\s+|\s+\d+$")
# lines that are content whatever their position: stat-block and spell-header shapes
CONTENT_SHAPE = re.compile(
    r"^(armor class|hit points|hit dice|speed|challenge|senses|languages|skills|saving throws|"
    r"damage (immunities|resistances|vulnerabilities)|condition immunities|casting time|range|"
    r"components|duration|str dex con)\b"
    r"|^(tiny|small|medium|large|huge|gargantuan)\b.*,"
    r"|^\d+(st|nd|rd|th)[- ]level\b|\bcantrip\b",
    re.IGNORECASE,
)


def _margin_keys(pages: list[tuple[float, float, list[Line]]]) -> tuple[Counter, Counter, Counter, Counter, list[list[tuple | None]]]:
    """Per margin line a key (band, height, text with edge numbers masked), and how often each key,
    text and page-number offset occurs: the statistics furniture is judged by."""
    at_pos: Counter = Counter()
    in_margin: Counter = Counter()
    in_body: Counter = Counter()
    offsets: Counter = Counter()
    keys: list[list[tuple | None]] = []
    for pi, (_w, h, lines) in enumerate(pages):
        pk: list[tuple | None] = []
        seen = set()
        for ln in lines:
            txt = _EDGE_NUMBER.sub(" #", norm(ln.text))
            if ln.top < h * 0.12 or ln.bottom > h * 0.88:
                k = ((ln.top < h * 0.12), round(ln.base / 4), txt)
                pk.append(k)
                if k not in seen:
                    seen.add(k)
                    at_pos[k] += 1
                    in_margin[txt] += 1
                m = _PAGE_NUMBER.match(ln.text.strip())
                if m and m.group(2).isdigit():
                    offsets[int(m.group(2)) - pi] += 1
            else:
                pk.append(None)
                in_body[txt] += 1
        keys.append(pk)
    return at_pos, in_margin, in_body, offsets, keys


def find_furniture(pages: list[tuple[float, float, list[Line]]]) -> list[set[int]]:
    """Running headers/footers and page numbers: per page, the indexes of lines to drop.

    A line is furniture only when all of these hold:
    - it sits in the top or bottom margin band and nothing else on the page lies between it
      and the page edge (so a stat line or heading that happens to top a page is kept);
    - it does not have the shape of a stat-block or spell-header line;
    - it is a page number whose value follows the page index on many pages, or its text (a
      page number at either end aside) sits at the same height on several pages, hardly ever
      appears inside the text block, and either recurs on a large share of the pages or sits
      in a slot (height) that holds repeated text on a large share of the pages (chapter-wise
      running headers).
    """
    n = len(pages)
    n_text = sum(1 for _, _, lines in pages if lines)
    at_pos, in_margin, in_body, offsets, keys = _margin_keys(pages)
    if n < 6:
        return [set() for _ in pages]
    need = 3
    share = max(need, 0.25 * n_text)
    slot_pages: Counter = Counter()
    for pk in keys:
        slots = {k[:2] for k in pk if k is not None and at_pos[k] >= need}
        for s in slots:
            slot_pages[s] += 1

    def slot_share(k) -> int:
        band, y = k[:2]
        return max(slot_pages[(band, y + d)] for d in (-1, 0, 1))

    good_offsets = {o for o, c in offsets.items() if c >= share}
    drop: list[set[int]] = []
    for pi, ((_w, h, lines), pk) in enumerate(zip(pages, keys, strict=False)):
        cand = set()
        for i, (ln, key) in enumerate(zip(lines, pk, strict=False)):
            if key is None or CONTENT_SHAPE.search(ln.text):
                continue
            k = key
            m = _PAGE_NUMBER.match(ln.text.strip())
            if m:
                if (m.group(2).isdigit() and int(m.group(2)) - pi in good_offsets) or slot_share(k) >= share:
                    cand.add(i)
            elif (
                at_pos[k] >= need
                and in_body[k[2]] * 2 <= in_margin[k[2]]
                and (at_pos[k] >= share or slot_share(k) >= share)
            ):
                cand.add(i)
        if cand:
            # only what lies between the text block and the page edge
            rest = [ln for i, ln in enumerate(lines) if i not in cand]
            top_lim = min((ln.top for ln in rest), default=h)
            bot_lim = max((ln.bottom for ln in rest), default=0.0)
            cand = {
                i for i in cand
                if (lines[i].bottom <= top_lim + 1 and lines[i].top < h * 0.12)
                or (lines[i].top >= bot_lim - 1 and lines[i].bottom > h * 0.88)
            }
        drop.append(cand)
    return drop


def body_size(pages) -> float:
    c: Counter = Counter()
    for _, _, lines in pages:
        for ln in lines:
            c[ln.size] += len(ln.text)
    if not c:
        return 10.0
    return c.most_common(1)[0][0]


def _size_class(size: float, classes: list[float]) -> int:
    for i, c in enumerate(classes):
        if abs(size - c) <= max(0.35, c * 0.025):
            return i
    return -1


_STAT_LABEL = re.compile(r"^\D{2,40}?\s*[-:\u2013\u2014=]\s*(?=[^\n]*\d)[\d\sdD+\u00d7x/()-]+$")


def _side_by_side(ln: Line) -> list[str] | None:
    """The texts of headings printed side by side on one baseline, apart by a column gap."""
    if len(ln.cells) < 2:
        return None
    parts = [c[2] for c in ln.cells]
    gaps = [b[0] - a[1] for a, b in zip(ln.cells, ln.cells[1:], strict=False)]
    if min(gaps) < 2 * ln.size or not all(_LETTER.search(t) for t in parts):
        return None
    return parts


class Heading(NamedTuple):
    pos: Pos  # first line
    end: Pos  # last line (inclusive)
    text: str
    size: float


def detect_headings(pages, drop, bsize: float) -> tuple[list[Heading], list[float]]:
    """Lines set in a font clearly bigger than the body text; wrapped headings merged."""
    thr = bsize * 1.07
    heads: list[Heading] = []
    for pi, (_w, _h, lines) in enumerate(pages):
        prev: Line | None = None
        for i, ln in enumerate(lines):
            ok = (
                ln.size >= thr
                and i not in drop[pi]
                and len(ln.text) <= 90
                and _LETTER.search(ln.text) is not None
                and not _PAGE_NUMBER.match(ln.text)
            )
            if not ok:
                # a long line continuing the last heading's font: that was a lead paragraph
                if (
                    prev is not None
                    and heads
                    and heads[-1].end == Pos(pi, i - 1)
                    and len(ln.text) > 90
                    and abs(prev.size - ln.size) < 0.3
                    and prev.bold == ln.bold
                ):
                    heads.pop()
                prev = None
                continue
            last = heads[-1] if heads else None
            if (
                prev is not None
                and last is not None
                and last.end == Pos(pi, i - 1)
                and abs(prev.size - ln.size) < 0.3
                and prev.bold == ln.bold
                and prev.col == ln.col
                and 0 < ln.base - prev.base <= 1.6 * ln.size
                and len(last.text) + len(ln.text) <= 150
            ):
                sep = "" if prev.soft_end or (last.text.endswith("-") and ln.text[:1].islower()) else " "
                if prev.soft_end is False and last.text.endswith("-") and ln.text[:1].islower():
                    sep = ""
                heads[-1] = Heading(last.pos, Pos(pi, i), last.text + sep + ln.text, last.size)
            else:
                parts = _side_by_side(ln)
                if parts:
                    # two headings set side by side (one per column) came out as one line
                    heads.extend(Heading(Pos(pi, i), Pos(pi, i), t, ln.size) for t in parts)
                    prev = None
                    continue
                heads.append(Heading(Pos(pi, i), Pos(pi, i), ln.text, ln.size))
            prev = ln
    # a long sentence set large is a lead paragraph, not a heading; a label with its value
    # ("STARTING HIT POINTS - 6") is a stat line set large
    heads = [
        hd for hd in heads
        if not (hd.text.endswith(".") and len(hd.text.split()) > 10) and not _STAT_LABEL.match(hd.text)
    ]
    # where headings are capitalised, a lower-case one is a decorative label ("check out")
    low = [hd for hd in heads if hd.text[:1].islower()]
    if low and len(low) * 3 <= len(heads):
        heads = [hd for hd in heads if not hd.text[:1].islower()]
    # size classes, biggest first (sizes within ~2.5% are one class)
    classes: list[float] = []
    for s in sorted({hd.size for hd in heads}, reverse=True):
        if _size_class(s, classes) < 0:
            classes.append(s)
    return heads, classes


class Node:
    __slots__ = ("body_from", "cut", "origin", "rank", "start", "title")

    def __init__(self, title: str, rank: float, start: Pos, body_from: Pos, origin: str, cut: str = "") -> None:
        self.title = title
        self.rank = rank
        self.start = start
        self.body_from = body_from  # first line of the body
        self.origin = origin
        self.cut = cut  # a run-in title to strip from the first body line


def _title_match(head_norm: str, title_norm: str) -> bool:
    if not head_norm or not title_norm:
        return False
    return (
        head_norm == title_norm
        or (head_norm.endswith(" " + title_norm)
        and head_norm[: -len(title_norm)].strip().replace(" ", "").isdigit())
    )


def _match_outline(
    pages, drop, heads, outline: list[OutlineItem]
) -> tuple[dict[int, int], dict[int, tuple[Pos, Pos, str]]]:
    """Pair each bookmark with the detected heading it names (near its page), else with a line of
    its page that starts with its title (a run-in heading)."""
    by_page: dict[int, list[int]] = {}
    for hi, hd in enumerate(heads):
        by_page.setdefault(hd.pos.page, []).append(hi)
    head_norms = [norm(hd.text) for hd in heads]
    matched: dict[int, int] = {}  # heading index -> outline index
    out_pos: dict[int, tuple[Pos, Pos, str]] = {}  # outline index -> (start, body_from, cut)
    n_pages = len(pages)
    for oi, item in enumerate(outline):
        tn = norm(item.title)
        best = None
        for pg in (item.page, item.page + 1, item.page - 1):
            cands = [hi for hi in by_page.get(pg, []) if hi not in matched and _title_match(head_norms[hi], tn)]
            if cands:
                if item.y is not None and pg == item.page:
                    lines = pages[pg][2]
                    best = min(cands, key=lambda hi: abs(lines[heads[hi].pos.idx].top - item.y))
                else:
                    best = cands[0]
                break
        if best is not None:
            matched[best] = oi
            continue
        # no heading: a line of the page that starts with the title (a run-in heading)
        if 0 <= item.page < n_pages and tn:
            lines = pages[item.page][2]
            for li, ln in enumerate(lines):
                if li in drop[item.page]:
                    continue
                ln_n = _SECTION_NO.sub("", norm(ln.text))
                if ln_n == tn:
                    out_pos[oi] = (Pos(item.page, li), Pos(item.page, li + 1), "")
                    break
                if ln_n.startswith(tn + " ") and len(tn) >= 3:
                    out_pos[oi] = (Pos(item.page, li), Pos(item.page, li), item.title)
                    break
    return matched, out_pos


def _class_levels(heads, classes, outline: list[OutlineItem], matched: dict[int, int], trusted: bool) -> tuple[list[float], list[int]]:
    """The level of each heading size class: the outline level its matched headings mostly carry."""
    class_levels: list[float] = []
    cls_of = [_size_class(hd.size, classes) for hd in heads]
    votes: dict[int, Counter] = {}
    if trusted:
        for hi, oi in matched.items():
            votes.setdefault(cls_of[hi], Counter())[outline[oi].level] += 1
    prev = 0.0
    for ci in range(len(classes)):
        if ci in votes:
            lvl = max(float(votes[ci].most_common(1)[0][0]), prev)
        else:
            lvl = prev + 1 if prev else 1.0
            if trusted and not votes:
                lvl = prev + 1 if prev else 1.0
        class_levels.append(lvl)
        prev = lvl
    if trusted and votes:
        # classes bigger than every matched class sit above the outline's top level? no:
        # unmatched classes finer than the outline go below its deepest matched level
        deepest = max(outline[oi].level for oi in matched.values()) if matched else 1
        max_voted = max(votes)
        for ci in range(max_voted + 1, len(classes)):
            class_levels[ci] = max(class_levels[ci], deepest + (ci - max_voted))
    return class_levels, cls_of


def build_nodes(pages, drop, heads, classes, outline: list[OutlineItem]) -> tuple[list[Node], list[str]]:
    """Merge outline items and detected headings into one ordered list of nodes."""
    warnings: list[str] = []
    n_pages = len(pages)
    matched, out_pos = _match_outline(pages, drop, heads, outline)
    n_out = len(outline)
    n_matched = len(matched) + len(out_pos)
    trusted = n_out > 0 and (n_matched >= 0.5 * n_out or (n_out >= 20 and n_matched >= 0.2 * n_out))
    if n_out and not trusted:
        warnings.append(
            f"outline ignored: only {n_matched} of {n_out} bookmarks match text on their page"
        )
    class_levels, cls_of = _class_levels(heads, classes, outline, matched, trusted)
    nodes: list[Node] = []
    for hi, hd in enumerate(heads):
        nxt = Pos(hd.end.page, hd.end.idx + 1)
        if hi in matched and trusted:
            item = outline[matched[hi]]
            nodes.append(Node(item.title, float(item.level), hd.pos, nxt, "outline"))
        else:
            nodes.append(Node(hd.text, class_levels[cls_of[hi]], hd.pos, nxt, "heading"))
    if trusted:
        for oi, item in enumerate(outline):
            if oi in matched.values():
                continue
            if oi in out_pos:
                start, body_from, cut = out_pos[oi]
            elif 0 <= item.page < n_pages:
                lines = pages[item.page][2]
                li = 0
                if item.y is not None:
                    li = next((i for i, ln in enumerate(lines) if ln.bottom >= item.y - 2), len(lines))
                start, body_from, cut = Pos(item.page, li), Pos(item.page, li), ""
            else:
                continue
            nodes.append(Node(item.title, float(item.level), start, body_from, "outline", cut))
    nodes.sort(key=lambda nd: (nd.start, 0 if nd.origin == "outline" else 1))
    ungroup_alphabetical(nodes)
    return nodes, warnings


# the origin of a node that closes the section open from an earlier page at a table of its own; the
# node is no entry (it has no title): labels.fold_table_breaks hands its text and rows to its parent
TABLE_BREAK = "table"


# words by which a section's text leads into a table of its own ("roll on the table", "from the
# options below", "the following items"): that table is the section's, wherever the page breaks
_ANNOUNCES = re.compile(r"\b(tables?|below|following)\b", re.IGNORECASE)


def _leads_into_table(pages, drop, start: Pos, stop: Pos) -> bool:
    """The section text from `start` up to the table at `stop` leads into it: it names a table, or
    there is none (a heading at a page's foot titles the table the next page holds)."""
    texts: list[str] = []
    for pg in range(start.page, min(stop.page + 1, len(pages))):
        lines = pages[pg][2]
        lo = start.idx if pg == start.page else 0
        hi = stop.idx if pg == stop.page else len(lines)
        texts.extend(lines[i].text for i in range(lo, min(hi, len(lines))) if i not in drop[pg])
    return not texts or any(_ANNOUNCES.search(t) for t in texts)


def table_breaks(pages, drop, nodes: list[Node], rows: list[Inline]) -> None:
    """Close the section open where a table with its own header row opens a page (`Inline.opens_page`).

    A table whose header is the first line of a page that no heading starts on is no part of the
    last section an earlier page opened (the equipment list after "Armor Proficiency", the monster
    list after the spells), unless that section's text leads into a table ("match the total to the
    table") or it has none (it titles the table): its rows and text belong to that section's parent. A node of the section's rank, with
    no title, is put at the header; it is folded away once the rows are placed. A section with no
    parent keeps the table (there is no ancestor to hand it to).
    """
    starts = [nd.start for nd in nodes]
    added: list[Node] = []
    for at in sorted({r.opens_page for r in rows if r.opens_page is not None}):
        k = bisect.bisect_right(starts, at) - 1
        if k < 0 or nodes[k].start.page >= at.page or nodes[k].origin == TABLE_BREAK:
            continue
        if k + 1 < len(nodes) and nodes[k + 1].start.page == at.page:
            continue  # a heading further down the page: the table tops a page of sections
        rank = nodes[k].rank
        if not any(nd.rank < rank for nd in nodes[:k]) or _leads_into_table(pages, drop, nodes[k].body_from, at):
            continue
        added.append(Node("", rank, at, at, TABLE_BREAK))
    if added:
        nodes.extend(added)
        nodes.sort(key=lambda nd: nd.start)


_ALPHA = re.compile(r"[^a-z]+")


def _akey(title: str) -> str:
    return _ALPHA.sub("", title.lower())


def _group_stem(title: str) -> str:
    """First word of a group title, singular, with "Dragons, Metallic" read as "Metallic Dragons"."""
    words = norm(", ".join(reversed(title.split(", ", 1))) if ", " in title else title).split()
    if not words:
        return ""
    w = words[0]
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("es") and len(w) > 4 and w[-3] in "sxzh":
        return w[:-2]
    return w[:-1] if w.endswith("s") and len(w) > 3 else w


def ungroup_alphabetical(nodes: list[Node]) -> None:
    """Detected group headings in an alphabetical run must not swallow the entries after them.

    In a bestiary a group heading ("Oozes", "Mephits") is set bigger than the entries it
    groups, so by font size alone every following entry up to the next group would nest under
    it ("Owlbear" under "Oozes"). The trailing members that continue the alphabetical run of
    the group's siblings (in order, sorting after the group title and before the group's next
    sibling, with the same initial, and not named after the group) are lifted to the group's
    own rank, when there is evidence that they do not belong to the group: the sibling right
    before the group is set like its members (and sorts before it), or the members
    break alphabetical order right before the tail. Only detected headings are touched.
    """
    n = len(nodes)
    stack: list[int] = []
    kids: dict[int, list[int]] = {}
    lifted: set[int] = set()
    for g in range(n):
        G = nodes[g]
        while stack and nodes[stack[-1]].rank >= G.rank:
            stack.pop()
        parent = stack[-1] if stack else -1
        sibs = kids.setdefault(parent, [])
        stack.append(g)
        prev_sibs = list(sibs)
        sibs.append(g)
        gk = _akey(G.title)
        if G.origin != "heading" or not gk:
            continue
        # the group's members: following nodes ranked deeper, up to the next one at its rank or above
        end = g + 1
        while end < n and nodes[end].rank > G.rank:
            end += 1
        if end - g < 3:
            continue
        member_rank = nodes[g + 1].rank
        members = [k for k in range(g + 1, end) if nodes[k].rank == member_rank]
        if len(members) < 2 or any(nodes[k].origin != "heading" for k in range(g + 1, end)):
            continue
        bound = _akey(nodes[end].title) if end < n and nodes[end].rank == G.rank else None
        stem = _group_stem(G.title)
        tail: list[int] = []
        for k in reversed(members[1:]):
            t = nodes[k].title
            tk = _akey(t)
            if (
                not tk
                or tk <= gk
                or tk[0] != gk[0]
                or (bound is not None and tk >= bound)
                or (tail and tk >= _akey(nodes[tail[-1]].title))
                or (stem and norm(t).split()[:1] == [stem])
            ):
                break
            tail.append(k)
        if not tail:
            continue
        first = tail[-1]
        before = members[members.index(first) - 1]
        descent = _akey(nodes[before].title) > _akey(nodes[first].title)
        # the sibling right before the group is an entry like its members and sorts before it
        kin = bool(prev_sibs) and (nodes[prev_sibs[-1]].rank == member_rank or prev_sibs[-1] in lifted)
        if not (descent or (kin and _akey(nodes[prev_sibs[-1]].title) <= gk)):
            continue
        # lift the tail members (their own subheadings keep nesting under them)
        delta = member_rank - G.rank
        for k in range(first, end):
            nodes[k].rank -= delta
        lifted.update(tail)


def _join_lines(lines: list[Line], vocab: set[str]) -> str:
    """Join lines into paragraphs: a space inside a paragraph, a newline between them."""
    out: list[str] = []
    prev: Line | None = None
    for ln in lines:
        t = ln.text
        if prev is None:
            out.append(t)
            prev = ln
            continue
        cont = (
            t[:1].islower()
            and not prev.text.endswith((".", "!", "?", ":"))
            and abs(ln.size - prev.size) <= 0.3
            and ln.bold == prev.bold
        )
        new_par = not cont and (
            ln.col != prev.col
            or ln.base - prev.base > 1.55 * max(ln.size, prev.size)
            or ln.base < prev.base
            or abs(ln.size - prev.size) > 0.3
            or ln.lead_bold
            or ln.bold != prev.bold
            or ln.x0 > prev.x0 + 0.7 * ln.size
            or (ln.x0 < prev.x0 - 0.7 * ln.size and prev.x1 < ln.x1 - 2.5 * ln.size)
        )
        if new_par:
            out.append("\n")
            out.append(t)
        else:
            last = out[-1]
            if prev.soft_end:
                out.append(t)
            elif last.endswith("-") and len(last) > 1 and last[-2].isalpha() and t[:1].islower():
                # a hyphen at the end of a line: drop it only when the joined word is known
                m1 = re.search(r"([A-Za-z]+)-$", last)
                m2 = _WORD.match(t)
                joined = (m1.group(1) + m2.group(0)).lower() if m1 and m2 else ""
                if joined and joined in vocab:
                    out[-1] = last[:-1]
                out.append(t)
            elif last.endswith(("-", "/")):
                out.append(t)
            else:
                out.append(" ")
                out.append(t)
        prev = ln
    return "".join(out)


def page_text(lines: list[Line], drop: set[int], vocab: set[str]) -> str:
    return _join_lines([ln for i, ln in enumerate(lines) if i not in drop], vocab)


def build_entries(pages, drop, nodes: list[Node], labels: list[str] | None, vocab: set[str]) -> list[Entry]:
    """Nodes -> entries with parents (by rank), end pages and bodies."""
    n = len(nodes)
    entries: list[Entry] = []
    stack: list[int] = []
    ranks = [nd.rank for nd in nodes]
    for k, nd in enumerate(nodes):
        while stack and ranks[stack[-1]] >= nd.rank:
            stack.pop()
        parent = stack[-1] if stack else None
        level = entries[parent].level + 1 if parent is not None else 1
        # body: lines from body_from up to the next node's start
        stop = nodes[k + 1].start if k + 1 < n else Pos(len(pages), 0)
        blines: list[Line] = []
        pg, idx = nd.body_from
        last_page = nd.start.page
        while (pg, idx) < stop and pg < len(pages):
            lines = pages[pg][2]
            if idx >= len(lines):
                pg, idx = pg + 1, 0
                continue
            if idx not in drop[pg]:
                blines.append(lines[idx])
                last_page = pg
            idx += 1
        body = _join_lines(blines, vocab)
        if nd.cut and body:
            cn = norm(nd.cut)
            # strip the run-in title from the first line
            m = re.match(r"[\d.\s]*\W*" + r"\W+".join(map(re.escape, cn.split())) + r"[\s.:\u2014-]*", body, re.IGNORECASE)
            if m:
                body = body[m.end():]
        page = nd.start.page + 1
        entries.append(
            Entry(
                title=nd.title,
                level=level,
                page=page,
                end_page=last_page + 1,
                page_label=labels[page - 1] if labels else None,
                parent=parent,
                body=body.strip(),
                origin=nd.origin,
            )
        )
        stack.append(k)
    # end_page covers the subsections: the last page before the next entry at the same or a higher level
    for k in range(n - 1, -1, -1):
        e = entries[k]
        p = e.parent
        if p is not None and entries[p].end_page < e.end_page:
            entries[p].end_page = e.end_page
    return entries


def merge_inline(entries: list[Entry], starts: list[Pos], inline: list[Inline], labels: list[str] | None) -> list[Entry]:
    """Put the inline entries (run-ins, table rows) into the tree, each under the innermost
    section open where it is printed; headings keep their order and bodies."""
    order = sorted([(st, 0, k) for k, st in enumerate(starts)] + [(e.pos, 1, j) for j, e in enumerate(inline)])
    out: list[Entry] = []
    new_index: dict[int, int] = {}
    last: int | None = None
    for _pos, kind, k in order:
        if kind == 0:
            e = entries[k]
            e.parent = new_index.get(e.parent) if e.parent is not None else None
            new_index[k] = len(out)
            last = len(out)
            out.append(e)
            continue
        inl = inline[k]
        page = inl.pos.page + 1
        out.append(
            Entry(
                title=inl.title,
                level=out[last].level + 1 if last is not None else 1,
                page=page,
                end_page=page,
                page_label=labels[page - 1] if labels else None,
                parent=last,
                body=inl.body,
                origin=inl.kind,
                tags=inl.tags,
            )
        )
    return out


def preamble(pages, drop, first: Pos | None, title: str | None, labels: list[str] | None, vocab: set[str]) -> list[Entry]:
    """The text before the first heading (all of it when there is none) as a top-level entry,
    so every readable line of a PDF can be found: titled by the document title, else its first
    line; long text continues in "(part N)" children. Empty when the first line is a heading."""
    stop = first if first is not None else Pos(len(pages), 0)
    texts: list[tuple[int, str]] = []  # (0-based page, joined text)
    for pg in range(min(stop.page + 1, len(pages))):
        lines = pages[pg][2]
        end = stop.idx if pg == stop.page else len(lines)
        kept = [lines[i] for i in range(min(end, len(lines))) if i not in drop[pg]]
        text = _join_lines(kept, vocab).strip() if kept else ""
        if text:
            texts.append((pg, text))
    if not texts:
        return []
    body = "\n".join(t for _, t in texts)
    starts: list[int] = []  # offset of each page's text in body
    off = 0
    for _, t in texts:
        starts.append(off)
        off += len(t) + 1
    name = title or body.split("\n", 1)[0][:120].strip()

    def page_at(offset: int) -> int:
        k = max(0, bisect.bisect_right(starts, offset) - 1)
        return texts[k][0] + 1

    out: list[Entry] = []
    chunks = body_chunks(body)
    for k, (offset, chunk) in enumerate(chunks, 1):
        page = page_at(offset)
        out.append(
            Entry(
                title=name if k == 1 else f"{name} (part {k})",
                level=1 if k == 1 else 2,
                page=page,
                end_page=page_at(offset + len(chunk)),
                page_label=labels[page - 1] if labels else None,
                parent=None if k == 1 else 0,
                body=chunk,
                origin="text",
            )
        )
    out[0].end_page = texts[-1][0] + 1
    return out


def prepend(front: list[Entry], entries: list[Entry]) -> list[Entry]:
    """`front` before `entries`, whose parent indices shift by its length."""
    if not front:
        return entries
    for e in entries:
        if e.parent is not None:
            e.parent += len(front)
    return front + entries
