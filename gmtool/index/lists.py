"""Lists of like things: siblings that share a shape are typed together, from their combined evidence.

A book prints its monsters, spells or ancestries as runs of siblings in one style: run-in names under one
heading, or headings whose bodies repeat the same field labels ("HP: 8", "Range: Touch", "STARTING HIT
POINTS - 5"). One entry alone says little (a truncated run-in, an odd one out), but a run of them says a
lot, so the evidence is pooled over the list and the list is typed as a whole, or not at all.

The evidence per list and candidate type is a handful of shares (members strongly typed so, members whose
labels mean so through a short general map, members whose first line names the type, the heading or the
marker heading above the run), combined by a logistic model whose weights are data
(gmtool/data/typing_weights.json), fitted by bench/fit_typing.py on labelled books and checked by leaving
each book out. Nothing here names a book or an entry.

Measured and not added: the sentence model as one more signal (the mean vector of a list's first twelve
members' titles and openings against a one-line description of each type). On the lists of The Black Hack,
Dungeon World and the Cypher SRD it agreed with the other evidence on monsters and gear, but named Dungeon
World's advanced moves monster, spell or item, its cantrips item, The Black Hack's divine spells condition,
and Cypher's cyphers condition, its descriptors and foci feat, with margins of 0.01-0.2 in cosine: too
weak for typing that puts precision first, and scanning would need the model before typing.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from gmtool.index import genre

WEIGHTS_FILE = Path(__file__).resolve().parents[1] / "data" / "typing_weights.json"
# The types a list can be given: rules are prose sections, typed by the chapter map, never as a list.
LIST_TYPES: tuple[str, ...] = (
    "monster", "spell", "item", "class", "subclass", "race", "background", "feat", "condition",
)
FEATURES: tuple[str, ...] = (
    "named", "named_other", "own", "own_other", "weak", "lab_full", "lab_any", "lab_other", "sig",
)
# The constants below are set by hand, not fitted (only the weights are): chosen while reading the
# development books' lists, then checked by bench/fit_typing.py --lobo on every book left out.
# A run of fewer siblings than this is not a list (two headings can share a label by chance).
MIN_MEMBERS = 3
# How far into a body field labels are read: a stat block or a spell's tag lines open the entry.
LABEL_LINES = 8
LABEL_CHARS = 1200
# A label is shared by the list when this share of its members (and at least two) print it.
SHARED_SHARE = 1 / 3
# A tag line naming its entry's kind is short ("Level 1 Arcana Spell Recall Cost: 0").
TAG_WORDS = 8
# Another type is backed by a list when this share of its members is typed so by the genre rules and
# prints labels of that type: then a heading's word for another kind ("Planar Powers") does not win.
BACKED = 0.5
# A heading above a run of siblings that names their kind says a sentence or two at most.
MARKER_BODY = 200
# A leaf entry printing this many field labels of its own is a thing with a stat block, even when its title
# is a kind or field word that would otherwise head a run ("Armor", "Charm Monster" among a book's spells);
# a chapter does not count, though it print a sample stat line in its lead ("PART 6: MONSTERS"): the
# entry's text is at most OWN_BLOCK_CHARS (a spell or item; Basic Fantasy's chapter is longer).
OWN_BLOCK = 3
OWN_BLOCK_CHARS = 4000
# A list whose members mostly carry their type's full stat lines is a list of whole entries, so the
# heading above it groups them rather than being one of them.
FULL_LIST = 0.5
# A heading sibling joins a list when its labels overlap the list's this much (Jaccard).
JOIN_OVERLAP = 0.4

# What follows a label: ": value", " - value", or a number, a bonus or dice ("AC 15", "Claw +4").
_AFTER_LABEL = re.compile(r"\s*:\s*(?=\S)|\s+[-–]\s+(?=\S)|\s+(?=[+\-–−]?\d|½|d\d)")
# A label is the one to three words before that, back to the previous field's end (punctuation, a
# number, or the wide space between two cells of a row: "Sphere: None  Duration: Instant").
_FIELD_END = re.compile(r"[|,;(.:\d*]|\s{2,}")
# A stat line that prints each value before its label, fields parted by commas ("6 HP, 1 Armor, 13 STR,
# 12 DEX, bite (d8)"), as many small-press games do: one field is a number, then one or two words, up to
# the next comma or the line's end. A line holds a stat line of this kind when VALUE_FIRST_MIN of its
# fields are such (one alone is prose: "3 goblins").
_VALUE_FIRST = re.compile(r"(?:^|[,;])\s*[+\-–−]?\d+(?:/\d+)?\s+([A-Za-z][A-Za-z'’]*(?: [A-Za-z][A-Za-z'’]*)?)\s*(?=[,;]|$)")
VALUE_FIRST_MIN = 2
# A cost paid in points ("Cost: 2 command points", "Cost: 3 Intellect points") is an ability's, drawn from a
# character's pool; it is not a price, which marks gear.
_POINTS = re.compile(r"\d[\d,]*\s+(?:[A-Za-z]+\s+)?points?\b", re.IGNORECASE)
_LABEL_WORD = re.compile(r"^[A-Za-z][A-Za-z'’&/]*$")
# A label line printed on its own, in capitals, above its value ("SPELLCAST TRAIT" / "Presence").
_CAPS_LABEL = re.compile(r"^[A-Z][A-Z'’&/ ]{2,30}$")
_STOP = {"a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "by", "per", "up", "you", "your",
         "it", "is", "are", "be", "as", "if", "when", "each", "all", "one", "two", "three", "from", "into", "than"}

# What a label means, for any system: a short general map, matched against the whole normalised label.
# Order matters: a "starting"/"per level" label is a character-building one before it is hit points.
_MEANINGS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (meaning, re.compile(rf"^(?:{words})$"))
    for meaning, words in (
        ("start", r"(?:starting|base|initial) [a-z ]+|[a-z ]+ per level|[a-z ]+ at 1st level"),
        ("hp", r"hp|hit points?|hit dice|hit die|hd|health|wounds?|vitality|body points|life points"),
        ("defence", r"ac|armou?r(?: class| rating| points)?|defen[cs]e|evasion|parry|dodge|soak|toughness|dr"),
        ("attack", r"atk|attacks?|damage|dmg|to hit|thac0|attack bonus"),
        ("cost", r"cost|price|value|weight|wt"),
        ("range", r"range|area|area of effect|targets?|reach"),
        ("duration", r"duration|casting time|cast time"),
        ("level", r"level|lvl|circle|rank"),
    )
)


_NOT_WORD = re.compile(r"[^a-z0-9 ]+")


def _norm(text: str) -> str:
    return _NOT_WORD.sub(" ", text.lower().replace("’", "'")).strip()


def labels_of(body: str) -> frozenset[str]:
    """The field labels an entry's opening lines print, normalised ("hp", "motives tactics", "range")."""
    out: set[str] = set()
    lines = [x.strip() for x in body[:LABEL_CHARS].split("\n")[:LABEL_LINES]]
    for k, line in enumerate(lines):
        if _CAPS_LABEL.match(line) and k + 1 < len(lines) and lines[k + 1] and len(line.split()) <= 4:
            out.add(" ".join(_norm(line).split()))
            continue
        for m in _AFTER_LABEL.finditer(line):
            raw = _FIELD_END.split(line[max(0, m.start() - 60) : m.start()])[-1].split()[-3:]
            label = _label(" ".join(raw)) if raw else None
            if label is not None and not (meaning(label) == "cost" and _POINTS.match(line, m.end())):
                out.add(label)
        out.update(_value_first(line))
    return frozenset(out)


def _value_first(line: str) -> list[str]:
    """The labels of a value-first stat line ("6 HP, 1 Armor, 13 STR"), or none."""
    found = [x for x in (_label(m.group(1)) for m in _VALUE_FIRST.finditer(line)) if x is not None]
    return found if len(found) >= VALUE_FIRST_MIN else []


@lru_cache(maxsize=1 << 16)  # the same few words come before a value again and again ("Hit Points", "you gain")
def _label(words: str) -> str | None:
    """The normalised label that `words` (one to three, space-separated) make, or None when they are no label."""
    if not all(_LABEL_WORD.match(w) for w in words.split(" ")):
        return None
    normed = _norm(words).split()
    return " ".join(normed) if normed and normed[0] not in _STOP and normed[-1] not in _STOP else None


_START = re.compile(r"^(?:starting|base|initial) (.+)$")


@cache
def meaning(label: str) -> str | None:
    """What a normalised label means. A "starting ..." label is a character-building one only when
    what starts is itself a field ("starting hp", "starting evasion"; not "starting percentage")."""
    start = _START.match(label)
    if start and meaning(start.group(1)) is None and not label.endswith((" per level", " at 1st level")):
        return None
    for name, rx in _MEANINGS:
        if rx.match(label):
            return name
    return None


def field_meaning(text: str) -> str | None:
    """What a field name printed as it stands means ("Armor Class" -> defence), or None."""
    return meaning(" ".join(_norm(text).split()))


def meanings(labels: frozenset[str]) -> frozenset[str]:
    return frozenset(m for m in map(meaning, labels) if m is not None)


def signals(ms: frozenset[str]) -> tuple[dict[str, bool], dict[str, bool]]:
    """(full, any) evidence per type from what an entry's labels mean."""
    spell = ("range" in ms and "duration" in ms) or ("level" in ms and bool(ms & {"range", "duration"}))
    full = {
        "monster": "hp" in ms and bool(ms & {"defence", "attack"}),
        "spell": spell,
        # a spell may print its cost (in power points) beside its range and duration; gear does not
        # last for a duration
        "item": "cost" in ms and "hp" not in ms and "duration" not in ms,
        "class": "start" in ms,
    }
    any_ = {
        "monster": bool(ms & {"hp", "defence", "attack"}),
        "spell": bool(ms & {"range", "duration"}),
        "item": "cost" in ms,
        "class": "start" in ms,
    }
    return full, any_


@dataclass(slots=True)
class ListOf:
    """A run of like siblings under one parent, with the labels most of them print."""

    parent: int | None
    members: list[int]
    named: bool  # run-ins or table rows rather than headings
    labels: frozenset[str] = frozenset()
    features: dict[str, dict[str, float]] = field(default_factory=dict)


def _shared(sets: list[frozenset[str]], need: int = 0) -> frozenset[str]:
    """Labels printed by `need` of the sets (default: SHARED_SHARE of them, and at least two)."""
    counts: dict[str, int] = {}
    for s in sets:
        for x in s:
            counts[x] = counts.get(x, 0) + 1
    need = need or max(2, math.ceil(SHARED_SHARE * len(sets)))
    return frozenset(x for x, c in counts.items() if c >= need)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def _by_tag(members: list[int], tags: dict[int, str | None]) -> list[list[int]]:
    """A run split by the kind each member's tag line names (spell cards beside ability cards); a
    handful naming another kind than the rest stay with the largest part."""
    parts: dict[str | None, list[int]] = {}
    for m in members:
        parts.setdefault(tags[m], []).append(m)
    big = [p for p in parts.values() if len(p) >= MIN_MEMBERS]
    if len(big) <= 1:
        return [members]
    small = [m for p in parts.values() if len(p) < MIN_MEMBERS for m in p]
    big.sort(key=len, reverse=True)
    big[0] = sorted(big[0] + small)
    return big


def _apart(kids: list[int], names: list[int], named: dict[int, str | None]) -> list[list[int]]:
    """`names` (one parent's run-ins or rows, in order) split where headings of that parent stand between
    them: two tables a chapter apart (the gear at its start, the monsters at its end) are two lists.
    A part too short to be a list stays with the part before it."""
    at = {k: i for i, k in enumerate(kids)}
    parts: list[list[int]] = [[names[0]]]
    for a, b in itertools.pairwise(names):
        if any(named[k] is None for k in kids[at[a] + 1:at[b]]):
            parts.append([])
        parts[-1].append(b)
    out: list[list[int]] = []
    for part in parts:
        if out and (len(part) < MIN_MEMBERS or len(out[-1]) < MIN_MEMBERS):
            out[-1].extend(part)
        else:
            out.append(part)
    return out


def _runs(kids: list[int], labels: dict[int, frozenset[str]], named: dict[int, str | None],
          apart: dict[int, bool], tags: dict[int, str | None], numbers: dict[int, int | None]) -> list[ListOf]:
    """Split one parent's children into lists: all its run-ins/rows, and headings grouped by shared labels.
    `apart`: children that are in no list (see find_lists)."""
    out: list[ListOf] = []
    for style in genre.NAME_ORIGINS:  # run-ins, table rows and name lines are three styles
        names = [k for k in kids if named[k] == style and not apart[k]]
        if len(names) >= MIN_MEMBERS:
            out.extend(ListOf(None, part, True) for run in _apart(kids, names, named) for part in _by_tag(run, tags))
    heads = [k for k in kids if not named[k] and not apart[k]]
    common = _shared([labels[k] for k in heads], MIN_MEMBERS) if len(heads) >= MIN_MEMBERS else frozenset()
    groups: list[tuple[frozenset[str], list[int]]] = []
    bare: list[int] = []
    for k in heads:
        own = labels[k] & common if common else frozenset()  # no shared labels: no need to read k's
        if not own:
            bare.append(k)
            continue
        for i, (sig, members) in enumerate(groups):
            if _jaccard(sig, own) >= JOIN_OVERLAP:
                members.append(k)
                groups[i] = (sig | own if len(members) <= 2 else sig, members)
                break
        else:
            groups.append((own, [k]))
    runs = [m for _, m in groups if len(m) >= MIN_MEMBERS]
    out.extend(ListOf(None, part, False) for run in runs for part in _by_tag(run, tags))
    # Headings that share no labels share no shape, unless their tag lines name one kind, or their titles
    # number them one after another ("1. Bounty Hunter", "2. Croaker", ...).
    for kind in {tags[k] for k in bare} - {None}:
        part = [k for k in bare if tags[k] == kind]
        if len(part) >= MIN_MEMBERS:
            out.append(ListOf(None, part, False))
    out.extend(ListOf(None, run, False) for run in _numbered_runs([k for k in bare if tags[k] is None], numbers))
    return out


def _numbered_runs(heads: list[int], numbers: dict[int, int | None]) -> list[list[int]]:
    """Runs of MIN_MEMBERS or more headings whose titles count up one by one from their first."""
    runs: list[list[int]] = []
    for k in heads:
        n = numbers[k]
        if n is None:
            continue
        if runs and numbers[runs[-1][-1]] == n - 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    return [run for run in runs if len(run) >= MIN_MEMBERS]


_NUMBERED = re.compile(r"^\s*(\d{1,3})[.)]\s+\S")


def _title_number(title: str) -> int | None:
    m = _NUMBERED.match(title)
    return int(m.group(1)) if m else None


def is_marker(node: Any, labels: frozenset[str]) -> bool:
    """A heading that names a kind ("Bard Subclasses") in a sentence at most, with no fields of its own:
    it labels the run below it and is not one of its members."""
    return len(node.entry.body) <= MARKER_BODY and not labels and genre.context_of(node.title) is not None


def _own_text(nodes: list[Any], node: Any, named: dict[int, str | None]) -> str:
    """The body up to its first run-in or row child: a heading's text that is its children's is theirs."""
    body = node.entry.body
    first = next((c for c in node.children if named[c]), None)
    if first is None:
        return body
    title = nodes[first].entry.title.strip()
    cut = 0 if body.startswith(title) else body.find("\n" + title)
    return body[:cut] if cut >= 0 else body


class _Labels(dict[int, frozenset[str]]):
    """Each entry's labels (labels_of its own text), read when first asked for: an entry in no run of
    siblings long enough to be a list, and beside none, never is (one in seven of the Markdown corpus's)."""

    def __init__(self, nodes: list[Any], named: dict[int, str | None]) -> None:
        super().__init__()
        self._nodes = nodes
        self._named = named

    def __missing__(self, i: int) -> frozenset[str]:
        got = self[i] = labels_of(_own_text(self._nodes, self._nodes[i], self._named))
        return got


def _own_block(node: Any, labels: frozenset[str]) -> bool:
    """A leaf that prints a stat block of its own (OWN_BLOCK)."""
    return not node.children and len(node.entry.body) <= OWN_BLOCK_CHARS and len(labels) >= OWN_BLOCK


def own_block(node: Any) -> bool:
    """Whether an entry prints a stat block of its own, whatever its title says ("Rust Monster", "Armor")."""
    return _own_block(node, labels_of(node.entry.body))


def find_lists(nodes: list[Any]) -> tuple[list[ListOf], dict[int, frozenset[str]]]:
    """Every list of the book, parents before children, and each entry's labels."""
    named = {n.index: n.entry.origin if n.entry.origin in genre.NAME_ORIGINS else None for n in nodes}
    labels = _Labels(nodes, named)
    tags = {n.index: tag_type(n.entry) for n in nodes}
    numbers = {n.index: None if named[n.index] else _title_number(n.entry.title) for n in nodes}
    # A heading that names a kind ("Bard Subclasses", "Weapons") heads a run, and a field's name ("Range",
    # "Damage", "Cost") defines a rule term: neither is a member of a list of things (a run-in may well
    # end in a kind word: "Rust Monster").
    # ...unless it prints a stat block of its own: a spell called "Armor", "Charm Monster" or "Shield".
    apart = {n.index: (meaning(n.title) is not None
                       or (named[n.index] is None and genre.context_of(n.title) is not None))
             and not _own_block(n, labels[n.index])
             for n in nodes}
    by_parent: dict[int | None, list[int]] = {}
    for n in nodes:
        if n.title:
            by_parent.setdefault(n.entry.parent, []).append(n.index)
    lists: list[ListOf] = []
    for parent in sorted(by_parent, key=lambda p: -1 if p is None else p):
        here = _runs(by_parent[parent], labels, named, apart, tags, numbers)
        _extend_by_markers(nodes, by_parent[parent], here, labels, named, apart)
        for lst in here:
            lst.parent = parent
            lst.labels = _shared([labels[m] for m in lst.members])
            if len({nodes[m].title for m in lst.members}) >= MIN_MEMBERS:  # not one running header, repeated
                lists.append(lst)
    return lists, labels


def _marker_runs(nodes: list[Any], kids: list[int], labels: dict[int, frozenset[str]],
                 apart: dict[int, bool], taken: set[int]) -> list[tuple[int, list[int]]]:
    """(marker, the siblings after it up to the next marker or a member of a list) for each marker
    heading among one parent's children ("Warrior Subclasses" above "Call of the Brave")."""
    out: list[tuple[int, list[int]]] = []
    for k in kids:
        if apart[k] and is_marker(nodes[k], labels[k]):
            out.append((k, []))
        elif out and k not in taken and not apart[k]:
            out[-1][1].append(k)
        elif out:
            out.append((-1, []))  # a list member or another heading ends the run
    return [(m, run) for m, run in out if m >= 0]


def _extend_by_markers(nodes: list[Any], kids: list[int], lists: list[ListOf], labels: dict[int, frozenset[str]],
                       named: dict[int, str | None], apart: dict[int, bool]) -> None:
    """A list of headings that its members' shared labels found (the spellcasters' subclasses, which
    print a spellcasting trait) takes in the headings that markers of the same kind head elsewhere among
    the siblings (the warriors' subclasses, which print none). Only when most of the list sits in runs
    that markers of one kind head (two or more), and only as many headings as those runs hold, shaped like
    its members (with or without run-in parts, as most of them)."""
    heads = [lst for lst in lists if not lst.named]
    if not heads:
        return
    members = {m for lst in lists for m in lst.members}
    for lst in heads:
        mine = set(lst.members)
        runs = _marker_runs(nodes, kids, labels, apart, members - mine)
        marked = [(m, run) for m, run in runs if mine & set(run)]
        kinds = {genre.context_of(nodes[m].title, singular=True) for m, _ in marked} - {None}
        under = sum(len(mine & set(run)) for _, run in marked)
        if len(kinds) != 1 or len(marked) < 2 or under * 2 < len(mine):
            continue  # the list is not the markers' runs: no pattern of marker, then members
        longest = max(len(run) for _, run in marked)
        parts = sum(1 for m in lst.members if any(named[c] for c in nodes[m].children)) * 2 > len(lst.members)
        for m, run in runs:
            if genre.context_of(nodes[m].title, singular=True) in kinds and not mine & set(run):
                lst.members.extend(k for k in run[:longest] if not named[k] and any(named[c] for c in nodes[k].children) == parts)
        lst.members.sort()


_UNDER_PARENT = "parent"


def _headings_beside(nodes: list[Any], lst: ListOf) -> list[int]:
    """The list parent's child headings outside the list, in order: where _marker looks. Found once
    per list, so a list of thousands of run-ins does not walk back over its members for each one."""
    inside = set(lst.members)
    kids = nodes[lst.parent].children if lst.parent is not None else [n.index for n in nodes if n.entry.parent is None]
    return sorted(i for i in kids if i not in inside and nodes[i].entry.origin not in genre.NAME_ORIGINS)


def _marker(nodes: list[Any], lst: ListOf, member: int, labels: dict[int, frozenset[str]],
            beside: list[int]) -> str | None:
    """What the nearest sibling heading above `member` (outside its list) says the member is: the kind
    it names when it is a marker ("Bard Subclasses"); None when it is a section of its own, which the
    member then follows (a flattened nesting); _UNDER_PARENT when no heading sits between it and its parent
    but introductions: sections with parts of their own that come before the whole list.
    A sibling titled by one of the list's own field labels ("Properties" above items that print
    "Properties: ...") explains that field: it is about the list, not a section the list belongs to."""
    for i in reversed(beside[:bisect.bisect_left(beside, member)]):
        n = nodes[i]
        if " ".join(_norm(n.title).split()) in lst.labels:
            continue
        kind = genre.context_of(n.title, singular=True)
        # a longer section (a table of these things) names their kind too when the parent agrees
        agrees = kind is not None and lst.parent is not None and genre.context_of(nodes[lst.parent].title, True) == kind
        if (is_marker(n, labels[i]) or agrees) and len(n.children) <= 2:
            return kind
        if n.children and i < lst.members[0]:
            continue  # an introduction with sections of its own ("Class Basics"), before the whole list
        return None
    return _UNDER_PARENT


def tag_type(entry: Any) -> str | None:
    """The type an entry's short first line (or tag line) names: "Level 1 Arcana Spell" -> spell."""
    tags = " ".join(entry.tags or [])
    line = next((x.strip() for x in entry.body.split("\n") if x.strip()), "")
    own_line = entry.origin not in genre.NAME_ORIGINS and len(line.split()) <= TAG_WORDS  # a run-in's is its text
    text = _norm(f"{tags} {line}") if own_line else _norm(tags)
    if not text:
        return None
    return next((t for t in LIST_TYPES if genre.TYPE_WORD[t].search(text)), None)


def evidence(nodes: list[Any], lst: ListOf, labels: dict[int, frozenset[str]],
             strong: list[str | None], weak: list[str | None], header: str | None) -> None:
    """Fill lst.features: per candidate type, the shares that speak for (and against) it. The book names
    a member's kind in the heading above it (a column header, a marker heading, the parent) or in the
    member's own tag line; its field labels mean a kind through the general map."""
    n = len(lst.members)
    parent_ctx = genre.context_of(nodes[lst.parent].title, singular=True) if lst.parent is not None else None
    named_n = dict.fromkeys(LIST_TYPES, 0)
    other_n = dict.fromkeys(LIST_TYPES, 0)
    full_n = dict.fromkeys(LIST_TYPES, 0)
    any_n = dict.fromkeys(LIST_TYPES, 0)
    beside = [] if header else _headings_beside(nodes, lst)
    for m in lst.members:
        above = header or _marker(nodes, lst, m, labels, beside)
        names = {parent_ctx if above == _UNDER_PARENT else above, tag_type(nodes[m].entry)} - {None}
        full, any_ = signals(meanings(labels[m] & lst.labels if lst.labels else labels[m]))
        for t in LIST_TYPES:
            named_n[t] += t in names
            other_n[t] += bool(names - {t}) and t not in names
            full_n[t] += full.get(t, False)
            any_n[t] += any_.get(t, False)
    for t in LIST_TYPES:
        lst.features[t] = {
            "named": named_n[t] / n,
            "named_other": other_n[t] / n,
            "own": sum(strong[m] == t for m in lst.members) / n,
            "own_other": sum(strong[m] not in (None, t, "rule") for m in lst.members) / n,
            "weak": sum(weak[m] == t for m in lst.members) / n,
            "lab_full": full_n[t] / n,
            "lab_any": any_n[t] / n,
            "lab_other": max((full_n[o] / n for o in LIST_TYPES if o != t), default=0.0),
            "sig": 0.0,
        }


def add_signature(lists: list[ListOf], decided: dict[int, str]) -> None:
    """A list printing the same labels as a list already typed in this book is likely the same kind."""
    typed = [(lst.labels, decided[id(lst)]) for lst in lists if id(lst) in decided and lst.labels]
    for lst in lists:
        if id(lst) in decided or not lst.labels:
            continue
        for sig, t in typed:
            lst.features[t]["sig"] = max(lst.features[t]["sig"], _jaccard(lst.labels, sig))


@dataclass(frozen=True, slots=True)
class Weights:
    weights: dict[str, float]
    bias: float
    threshold: float  # the probability a list needs to be typed
    margin: float  # how far the best type must beat the runner-up (precision first)

    def probability(self, x: dict[str, float]) -> float:
        z = self.bias + sum(self.weights.get(k, 0.0) * v for k, v in x.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Weights:
        return cls(dict(zip(data["features"], data["weights"], strict=True)), float(data["bias"]),
                   float(data["threshold"]), float(data["margin"]))


@cache
def shipped_weights() -> Weights:
    return Weights.from_json(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8")))


def decide(lst: ListOf, w: Weights) -> str | None:
    """The list's type, or None when no type is likely enough, or two are close, or the members' own
    text and the genre rules agree on another type (untyped beats wrong)."""
    scored = sorted(((w.probability(lst.features[t]), t) for t in LIST_TYPES), reverse=True)
    (p1, best), (p2, _) = scored[0], scored[1]
    if p1 < w.threshold or p1 - p2 < w.margin:
        return None
    f = lst.features
    backed = [t for t in LIST_TYPES if t != best and f[t]["weak"] >= BACKED and f[t]["lab_any"] >= BACKED]
    return None if backed else best
