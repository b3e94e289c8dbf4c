"""What gets embedded for a source: result-worthy entries, their folded subsections, and the
windows their text is cut into. Index time embeds these; query time maps vectors back through them."""

from __future__ import annotations

import re
from collections import Counter
from typing import NamedTuple

from gmtool.rank.abbrev import expander
from gmtool.types import INLINE_ORIGINS, Entry

CHUNK_CHARS = 700  # about 150 tokens: well inside the model's 256-token window
# An entity scores its best window. Fitted on dev_ask (evaluation library, embedded once, later
# windows masked): MRR@10 0.858 with 4 windows, 0.858 with 3, 0.855 with 2; held-out more/ask
# 0.609 / 0.609 / 0.609 and more2/ask 0.583 / 0.590 / 0.577. A 4th window costs 4 % of the tokens.
MAX_CHUNKS = 3
# A window is headed by the entry's parent heading as well as its own ("Damage and Healing >
# Finishing Blows"): a rules section's title alone often says little of what it is about, and the
# section above it ("Traps", "Combat") is the context a question names. A long entry (more than one
# window) also gets a short lead window, its title and the opening LEAD_CHARS of its text: what a
# section is about is said first, and a full window dilutes it with what follows.
# WINDOWS_NOTE: measured by embedding each variant's windows for the make-eval libraries and scoring
# them with bench/ask_sets.py's rule; sum of MRR@10 over the five ask sets, odd / even halves: 3.656 /
# 3.535 before; parent heading alone 3.640 / 3.595; lead window alone 3.678 / 3.560; both, with long
# template parts kept (PART_TEMPLATE_KEEP_CHARS) and SHORT_SHRINK, 3.635 / 3.658: the odd halves, the
# constants' fitting half, do not prefer them, so the choice was made by sets instead. Over seven
# sets (adding md-more/ask and dev_ask on the 15-book library with md-more), each set left out in
# turn and the variant chosen among the 16 tried on the other six, all four together were chosen
# every time; held-out MRR@10 dev_ask 0.859 -> 0.876 (4 books) and 0.804 -> 0.811 (15 books),
# more/ask 0.701 -> 0.690, more2/ask 0.742 -> 0.747, md-more/ask 0.485 -> 0.518 (md-more alone) and
# 0.366 -> 0.419 (15 books + md-more), dev_ask 0.767 -> 0.776 (15 books + md-more); sum 4.725 -> 4.837.
# Tried and not kept: the two headings above (3.640 / 3.547), the parent heading on rules sections
# only (3.627 / 3.641), windows of 350 characters, six of them (3.601 / 3.455), a lead of 150
# (3.668 / 3.512) or 350 characters (3.654 / 3.581), and the question moved away from the library's
# mean vector (hubness; 3.645-3.651 / 3.503-3.538).
LEAD_CHARS = 250
# A window with little text beyond its heading (a table row's name, a section whose text sits in
# its subsections) is close to a question by its name alone, which the keyword side already
# weighs: "Stone Golem (monster)" with nothing after it was the closest window to "monster that
# turns people to stone". Its similarity counts times 1 - SHORT_SHRINK * (1 - min(c, SHORT_CHARS) /
# SHORT_CHARS), c its characters after the heading. Fitted on the odd halves alone (before the
# changes above): 3.656 -> 3.667 at 0.15 / 100 characters (0.3 / 100: 3.668, 0.15 / 200: 3.640);
# even 3.535 -> 3.536. Beside the changes above, 3.642 / 3.637 -> 3.635 / 3.658, md-more/ask 0.505 ->
# 0.518 and 0.406 -> 0.419 (15 books + md-more). Without it among the leave-one-set-out candidates
# above, the other three are chosen for five of the seven sets (held-out sum 4.725 -> 4.759).
SHORT_SHRINK = 0.15
SHORT_CHARS = 100
NUMERIC_LINE_SHARE = 0.3
# Named parts of a stat block ("Petrifying Gaze.", "Regeneration.", an adversary's "Spit Acid -
# Action:") are units of their own that roll up to the monster: a question about what a monster
# does meets the part that says it, which a window of the whole stat block dilutes (issue #20,
# "units a question can meet"). A part's window is the monster's name, the part's name and the
# opening of its text. Only monsters: measured by rescanning the make-eval libraries with parts of
# every typed entity, the sum of MRR@10 over the five ask sets fell 3.632 -> 3.598 (odd halves) and
# 3.548 -> 3.474 (even; a class's spellcasting parts put the Cleric above the Bard for "musician who
# casts spells"); with monsters' parts alone 3.636 and 3.511 (more/ask's m20 swaps Basilisk and
# Gorgon, both gaze monsters), and "undead that drain life" gets Wraith 1st (was 4th) on the
# 15-book library. With query.ranking's window_penalty in, parts of every typed entity again lost
# on the odd halves (3.618 against 3.656; even 3.580 against 3.535). A keyword score per part moved
# no question (query.ranking's notes).
PART_TYPES = frozenset({"monster"})
PART_CHARS = 350
PART_MIN_CHARS = 60  # a shorter part (once number-heavy lines are dropped) says too little alone
# A part name printed in more of a book's entities than this share (and more than
# PART_TEMPLATE_MIN of them) is a template slot ("Bite", "Multiattack", "Components"), the same in
# every entry: it tells the entries apart no better than their own windows do.
PART_TEMPLATE_SHARE = 0.05
PART_TEMPLATE_MIN = 3
# ...unless its own text is long: a vampire's Bite that drains its victim's hit point maximum says
# more than the attack roll every Bite prints. Alone: 3.656 / 3.535 -> 3.654 / 3.582 (see WINDOWS_NOTE).
PART_TEMPLATE_KEEP_CHARS = 200
UNITS_VERSION = "units-7"  # in the embedding stamp: a change to what is embedded re-embeds on the next scan
# A run-in part: a line opening with up to six capitalised words (small joining words allowed),
# perhaps a parenthesis ("(Recharge 5-6)", "(1/Day)"), then '.', ':' or ' - Kind:', then its text.
_PART = re.compile(
    r"^([A-Z][\w'’\-]*(?:\s+(?:[A-Z][\w'’\-]*|of|the|and|or|to|in|a|an|with|from|on)){0,5})"
    r"(?:\s*\([^)\n]{1,30}\))?(?:\.|:|\s[-–—]\s\w+:)\s+(\S.{20,})$")
# A long rules section of many run-in entries is a list of like things (a glossary of 115
# abilities): its members answer questions, the list does not. "Long" is longer than the model
# reads of one entry (MAX_CHUNKS windows); shorter lists ("Wound Level Effects", six run-ins) are
# one answer. Checked on the development sets (make eval; rescanned in place): with no length
# bar, more2/ask fell 0.696 -> 0.640 (the short lists' members outranked them); with this one,
# every set within 0.003 of before (more2 0.699: odd 0.631, even 0.767; md-more 0.483). Kept for
# what the sets do not measure: a glossary's member is found by itself, and the 42,000-character
# list no longer tops keyword results for any question its members touch.
LIST_MIN_MEMBERS = 5
LIST_MIN_CHARS = MAX_CHUNKS * CHUNK_CHARS
# FOLD_NOTE: a heading that typing left untyped under a rules section (an example, a sample faction,
# a short section) is a result of its own, as it is in `search`; before, it folded into the rules
# section above it, so `ask` could not name "5. Faerie queen" under "Example factions" but only the
# whole "Hexcrawl toolbox" chapter. Its text still rolls up into the section (rollup_targets: the
# section's windows, and query.ranking's rollup_share of its keyword score): without that, sections
# lost questions their examples had answered (md-more/ask 0.518 -> 0.505, more2/ask 0.772 -> 0.765);
# with it 0.509 and 0.772 (make eval), the one loss md-more's "Legend Points" (2nd -> 6th; its
# example, now a result, is 2nd). An untyped heading over typed entries (a chapter over its items)
# is a container and still folds. Names found in the text (run-ins, rows) fold into their section.
# The same holds under a class: a feature printed as a heading ("Arcane Recovery" under the Wizard,
# "Gather Power" under the Sorcerer) is a result of its own, and its text still rolls up into the class.
# Before, "wizard getting spell slots back during a short rest" could only be answered "Wizard". make eval:
# every set as before but md-more/ask 0.511 -> 0.494 (odd 0.596 both; even 0.427 -> 0.392: Arcane
# Recovery None -> 3rd, two answers 1st -> 2nd behind Cypher sections the new results do not touch, by
# the scaling of the scores) and md-more/ask on all+md 0.415 -> 0.399 (even); unseen books (each its own
# library, bench/ask_sets.py): 13th Age 0.583 -> 0.678 (odd 0.646 -> 0.719, even 0.512 -> 0.631), Classic
# Fantasy 0.839 -> 0.863, the nine others unchanged. A subclass's features fold still: standing alone,
# "Level 3: Frenzy" outranked the Path of the Berserker it belongs to (md-more/ask 0.476).
STAND_ALONE_UNDER = frozenset({"rule", "class"})


def list_containers(entries: list[Entry]) -> set[int]:
    """Long rules sections (or untyped ones outside any typed entry) with at least
    LIST_MIN_MEMBERS run-in entries directly under them. A typed entry's run-in parts (a spell's
    options, a monster's actions) stay part of it."""
    count: dict[int, int] = {}
    for e in entries:
        if e.parent is not None and e.origin == "runin":
            count[e.parent] = count.get(e.parent, 0) + 1
    out = set()
    for p, c in count.items():
        if c < LIST_MIN_MEMBERS or len(entries[p].body) <= LIST_MIN_CHARS:
            continue
        q: int | None = p
        while q is not None and entries[q].content_type is None:
            q = entries[q].parent
        if q is None or entries[q].content_type == "rule":
            out.add(p)
    return out


def own_bodies(entries: list[Entry]) -> list[str]:
    """Each entry's own text: a list's lead, without its members' text (theirs, and it would
    make the list hold every word its members do); any other entry's whole body."""
    out = [e.body for e in entries]
    firsts: dict[int, int] = {}
    for i, e in enumerate(entries):
        if e.parent is not None and e.origin == "runin" and e.parent not in firsts:
            firsts[e.parent] = i
    for p in list_containers(entries):
        head = entries[firsts[p]].body[:60]
        cut = out[p].find(head) if head else -1
        if cut >= 0:
            out[p] = out[p][:cut].rstrip()
    return out


def fold_targets(entries: list[Entry]) -> list[int]:
    """For each entry, the entry a result should name: itself, or its nearest typed ancestor
    when it is an untyped subsection of a typed entry (a stat block's "Actions"). A member of a
    long list under a rules section stands alone (see LIST_MIN_CHARS), and so does an untyped
    heading under a rules section or a class (FOLD_NOTE)."""
    return _targets(entries, stand_alone=True)


def rollup_targets(entries: list[Entry]) -> list[int]:
    """For each entry, the entry its evidence adds to: its fold target, or, for an untyped heading
    under a rules section, that section too. A sample under "Legend Points" is a result of its own,
    and its words still count for the section (its windows, its keyword score: query.ask)."""
    return _targets(entries, stand_alone=False)


def _targets(entries: list[Entry], stand_alone: bool) -> list[int]:
    lists = list_containers(entries)
    holds = _holds_typed(entries) if stand_alone else []
    out: list[int] = []
    for i, e in enumerate(entries):
        target = i
        if e.content_type is None and not (e.origin == "runin" and e.parent in lists):
            p = e.parent
            while p is not None:
                if entries[p].content_type is not None:
                    alone = stand_alone and entries[p].content_type in STAND_ALONE_UNDER and e.origin not in INLINE_ORIGINS
                    if not alone or holds[i]:
                        target = out[p]
                    break
                p = entries[p].parent
        out.append(target)
    return out


def _holds_typed(entries: list[Entry]) -> list[bool]:
    """Whether each entry has a typed entry below it: an untyped chapter over a list of items
    ("Chapter 6: Wealth & Equipment") is a container, whose lead is no answer of its own."""
    out = [False] * len(entries)
    for i in range(len(entries) - 1, -1, -1):
        p = entries[i].parent
        if p is not None and (entries[i].content_type is not None or out[i]):
            out[p] = True
    return out


def _clean_for_embedding(text: str) -> str:
    """Drop number-heavy lines (stat-block rows, tables): they drown a small model's signal."""
    out = []
    for line in text.splitlines():
        toks = line.split()
        if not toks:
            continue
        numeric = sum(1 for t in toks if any(c.isdigit() for c in t))
        if numeric / len(toks) > NUMERIC_LINE_SHARE:
            continue
        out.append(line)
    return " ".join(" ".join(out).split())


def _chunks(body: str, size: int = CHUNK_CHARS, most: int = MAX_CHUNKS) -> list[str]:
    """Windows of about `size` characters, cut at word boundaries, at most `most` of them."""
    if not body:
        return [""]
    out: list[str] = []
    start = 0
    while start < len(body) and len(out) < most:
        end = min(len(body), start + size)
        if end < len(body):
            space = body.rfind(" ", start + size // 2, end)
            end = space if space > start else end
        out.append(body[start:end].strip())
        start = end + 1
    return out


def runin_parts(body: str) -> list[tuple[str, str]]:
    """(name, text) of each run-in part of a body: a part runs to the next one."""
    out: list[tuple[str, str]] = []
    for raw in body.splitlines():
        line = raw.strip()
        m = _PART.match(line)
        if m:
            out.append((m.group(1), line))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]} {line}")
    return out


def named_parts(entries: list[Entry], targets: list[int]) -> dict[int, list[tuple[str, str]]]:
    """Per entity of PART_TYPES, its named parts worth a unit: run-in parts of its own text and
    its folded subsections, less the book's template slots and parts too short."""
    parts: dict[int, list[tuple[str, str]]] = {}
    for i, e in enumerate(entries):
        t = targets[i]
        if entries[t].content_type not in PART_TYPES:
            continue
        if t == i:
            parts.setdefault(i, []).extend(runin_parts(e.body))
        else:
            parts.setdefault(t, []).append((e.title, e.body))
    seen = Counter(name.lower() for found in parts.values() for name in {n for n, _ in found})
    limit = max(PART_TEMPLATE_MIN, PART_TEMPLATE_SHARE * len(parts))
    out: dict[int, list[tuple[str, str]]] = {}
    for i, found in parts.items():
        names: set[str] = set()
        for name, text in found:
            key = name.lower()
            clean = _clean_for_embedding(text)
            template = seen[key] > limit and len(clean) < PART_TEMPLATE_KEEP_CHARS
            if template or key in names or len(clean) < PART_MIN_CHARS:
                continue
            names.add(key)
            out.setdefault(i, []).append((name, clean))
    return out


def _part_window(name: str, text: str) -> str:
    """A part's window: its own name and the opening of its text, cut at a word."""
    text = _chunks(text, PART_CHARS, 1)[0]
    return text if text.lower().startswith(name.lower()) else f"{name}. {text}"


def _head(entries: list[Entry], i: int) -> str:
    """A window's heading: the parent's title, then the entry's own with its type."""
    e = entries[i]
    head = e.title if not e.content_type else f"{e.title} ({e.content_type})"
    parent = entries[e.parent].title if e.parent is not None else ""
    return f"{parent} > {head}" if parent else head


class Units(NamedTuple):
    """Parallel lists, one item per window: the entry it rolls up to, its text, and the weight
    its similarity counts with (see SHORT_SHRINK)."""

    idx: list[int]
    texts: list[str]
    weights: list[float]


def _weight(chars: int) -> float:
    return round(1.0 - SHORT_SHRINK * (1.0 - min(max(chars, 0), SHORT_CHARS) / SHORT_CHARS), 4)


def units(entries: list[Entry]) -> Units:
    """What gets embedded: for each result-worthy entry (folded subsections are not), its text
    (parent and own title, type, body and folded subsections, number-heavy lines dropped) in a
    few windows, a lead window when there is more than one, then one window per named part
    (named_parts). An entry scores its best window."""
    targets = fold_targets(entries)
    parts = named_parts(entries, targets)
    own = own_bodies(entries)
    expand = expander(own)  # the book's short forms read with their long forms ("CTRL (control)")
    own = [expand(b) for b in own]
    extra: dict[int, list[str]] = {}
    for i, t in enumerate(rollup_targets(entries)):  # a section's windows hold its subsections' text
        if t != i:
            extra.setdefault(t, []).append(f"{entries[i].title}: {_clean_for_embedding(expand(entries[i].body))}")
    out = Units([], [], [])
    for i, e in enumerate(entries):
        if targets[i] != i:
            continue
        body = " ".join([_clean_for_embedding(own[i]), *extra.get(i, [])]).strip()
        if not body and not e.content_type and len(e.title) < 3:
            continue
        head = _head(entries, i)
        windows = [(f"{head}. {chunk}" if chunk else head, len(chunk)) for chunk in _chunks(body)]
        if len(body) > CHUNK_CHARS:
            lead = _chunks(body, LEAD_CHARS, 1)[0]
            windows.append((f"{head}. {lead}", len(lead)))
        for name, text in parts.get(i, []):
            part = _part_window(name, text)
            windows.append((f"{head}: {part}", len(part)))
        for text, chars in windows:
            out.idx.append(i)
            out.texts.append(text)
            out.weights.append(_weight(chars))
    return out
