"""Entry -> content_type, from structure only: enclosing section titles, children and body lines.

No list of names (from the SRD or anywhere) is consulted: a spell is recognised by its
"3rd-level evocation" line or by sitting under a "Spell Descriptions" section, a monster by its
stat block, a class by its "Class Features" subsection, and so on. Entries that merely hold
others (chapters, "Actions", "Class Features", "<Race> Traits") stay None.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gmtool.index import genre, lists
from gmtool.textnorm import folded_has
from gmtool.types import Document, Entry

_SCHOOLS = r"(abjuration|conjuration|divination|enchantment|evocation|illusion|necromancy|transmutation)"
_DASH = r"[-‐‑‒–—\s]"
SPELL_LINE = re.compile(
    rf"^(?:(\d)\s*(?:st|nd|rd|th){_DASH}*level\s+{_SCHOOLS}(\s*\(ritual\))?"
    rf"|{_SCHOOLS}\s+cantrip"
    rf"|level\s+(\d)\s+{_SCHOOLS}(\s*\(ritual\))?)",
    re.IGNORECASE,
)
_SIZES = r"(tiny|small|medium|large|huge|gargantuan)"
_CREATURE_TYPES = (
    r"(aberration|beast|celestial|construct|dragon|elemental|fey|fiend|giant|humanoid|monstrosity"
    r"|ooze|plant|undead|swarm)"
)
STAT_TYPE_LINE = re.compile(rf"^{_SIZES}(\s+or\s+{_SIZES})?\s+{_CREATURE_TYPES}\b", re.IGNORECASE)
_AC = re.compile(r"\barmou?r class\b\s*:?\s*\d", re.IGNORECASE)
_HP = re.compile(r"\bhit points\b\s*:?\s*\d", re.IGNORECASE)
_HD = re.compile(r"\bhit dice\b\s*:?\s*\d", re.IGNORECASE)
_CR = re.compile(r"\b(challenge|cr)\b\s*:?\s*(\d|1/[248])", re.IGNORECASE)
_OLD_STATS = re.compile(r"\b(no\. of attacks|morale|save as)\s*:", re.IGNORECASE)
_RANGE = re.compile(r"^range\s*:", re.IGNORECASE)
_DURATION = re.compile(r"^duration\s*:", re.IGNORECASE)
_CLASS_TABLE = re.compile(r"\bhit (point die|dice)\b", re.IGNORECASE)
_CLASS_TABLE2 = re.compile(r"\bsaving throw(s| proficiencies)\b", re.IGNORECASE)
_CASTING_TIME = re.compile(r"^\W*casting time\W*:", re.IGNORECASE | re.MULTILINE)
_SKILL_PROF = re.compile(r"skill proficiencies\s*:", re.IGNORECASE)
_EQUIPMENT = re.compile(r"\bequipment\s*:", re.IGNORECASE)
_ORIGIN_FIELDS = re.compile(r"\b(feat|languages|tool proficienc\w*)\s*:", re.IGNORECASE)
_BENEFITS = re.compile(r"you gain the following benefits", re.IGNORECASE)
_ASI = re.compile(r"ability score increase", re.IGNORECASE)
_CREATURE_TYPE = re.compile(r"creature type\s*:", re.IGNORECASE)
_SPEED = re.compile(r"\bspeed\s*:", re.IGNORECASE)
_RARITY = r"(common|uncommon|rare|very rare|legendary|artifact|rarity\b|varies)"
ITEM_LINE = re.compile(
    r"^(wondrous item|weapon|armou?r|potion|ring|rod|staff|wand|scroll|shield|ammunition)\b"
    rf"[^\n]{{0,80}}?,\s*{_RARITY}\b",
    re.IGNORECASE,
)
FEAT_LINE = re.compile(r"^(origin|general|fighting style|epic boon)\s+feat\b", re.IGNORECASE)
_PREREQ = re.compile(r"^prerequisites?\s*:", re.IGNORECASE)
_LEVEL_WORDS = re.compile(
    r"\b(\d+(st|nd|rd|th)[- ]level|level \d+|(at|starting at|beginning at|by) \d+(st|nd|rd|th)\b)",
    re.IGNORECASE,
)
_CHOICE_FEATURE = re.compile(
    r"\b(you )?(choose|swear|commit yourself to|delve into) (a|an|one|the)\b"
    r"|\byour (archetype )?choice grants\b",
    re.IGNORECASE,
)
_SUBCLASS_HEADING = re.compile(r"^[a-z]+ subclass \w")
_SUBCLASS_BODY = re.compile(
    r"\b(archetype|your choice|when you (choose|join|adopt|take)|subclass)\b", re.IGNORECASE
)

# How many entries a book must type by its own lines before context stops adding that type.
OWN_FORMAT_MIN = 5
# The types whose own lines (spell line, stat block) mark a book laid out like the SRD.
ENTITY_FORMATS = {"spell", "monster", "item"}
# A section holding more than this share of the book's entries is the book's title section.
ROOT_SHARE = 0.5
ROOT_MIN_ENTRIES = 10  # below this a share says nothing
# Prose of a rule section: shorter bodies are captions or labels.
RULE_MIN_BODY = 40
CREATURE_KIDS = 5  # _holds_creatures reads this many child headings
# A class described in its chapter runs to a few paragraphs at least.
CLASS_MIN_BODY = 200
_ROLL_CELL = re.compile(r"^\d+(?:\s*[-\u2013\u00ad]\s*\d+)?\s+")
_EXAMPLE = re.compile(r"\bexamples?\b")

# Section titles that give context to what they hold (matched against normalised titles).
SPELL_CTX = re.compile(r"^(spell descriptions|spells( a z)?|[a-z] spells|spell list descriptions)$")
MONSTER_CTX = re.compile(
    r"(^|\b)(monsters?|creatures|monster descriptions|creature descriptions|bestiary"
    r"|nonplayer characters?|npcs?|nonplayer character descriptions|monsters a z)$"
)
ITEM_CTX = re.compile(
    r"(^|\b)(magic items?|magic item descriptions|magic items a z|artifacts|wondrous items|treasure)$"
)
CONDITION_CTX = re.compile(r"(^|\b)conditions$")
RACE_CTX = re.compile(
    r"(^|\b)(races|species|character species|species descriptions|racial traits|character races)$"
)
CLASS_CTX = re.compile(r"(^|\b)(classes|character classes)$")
FEAT_CTX = re.compile(r"(^|\b)(feats|feat descriptions|(origin|general|fighting style|epic boon) feats)$")
BACKGROUND_CTX = re.compile(r"(^|\b)(backgrounds|background descriptions|character backgrounds)$")
SUBCLASS_CTX = re.compile(
    r"\b(paths?|colleges?|domains?|circles?|archetypes?|traditions?|oaths?|origins?|patrons?"
    r"|subclass(es)?|bloodlines?|conclaves?)$"
)
SUBCLASS_TITLE = re.compile(
    r"^(path of( the)?|college of|circle of( the)?|oath of|school of|way of( the)?|the) \w"
    r"|\b(domain|bloodline)$"
)
RULE_CTX = re.compile(
    r"(^|\b)(using ability scores|adventuring|combat|spellcasting|rules glossary|rules definitions"
    r"|playing the game|beyond 1st level|character advancement|multiclassing|gameplay toolbox|exploration"
    r"|environment|resting|movement|actions in combat|making an attack|damage and healing)$"
)
_LIST_TITLE = re.compile(r"(\bspells|spell lists?|\btables?)$")
# Subsections of stat blocks, classes and races: never an entity of their own.
STRUCTURAL_TITLES = re.compile(
    r"^(actions|bonus actions|reactions|legendary actions|lair actions|mythic actions|regional effects"
    r"|traits|special traits|spellcasting|innate spellcasting|class features|hit points|hit dice"
    r"|proficiencies"
    r"|equipment|starting equipment|features?|suggested characteristics|variants?|variant .*|.* traits"
    r"|.* class features|.* features|becoming an? .*|as an? .* character|.* spells|uncategorized"
    r"|quick build|creating an? .*|ability score increase|age|alignment|size|speed|languages|subraces?"
    r"|armou?r class|challenge|skills|senses|saving throws)$"
)


_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_BULLET = re.compile(r"^[-•·▪*+]\s+")


def norm(text: str) -> str:
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def first_lines(body: str, n: int = 6) -> list[str]:
    """The first n non-empty body lines, without list bullets or leftover emphasis."""
    out: list[str] = []
    for line in body.split("\n"):
        s = line.strip().strip("*_").strip()
        s = _BULLET.sub("", s).strip("*_ ")
        if s:
            out.append(s)
            if len(out) >= n:
                break
    return out


@dataclass(slots=True)
class _Node:
    entry: Entry
    index: int
    title: str  # normalised
    children: list[int] = field(default_factory=list)
    ancestors: list[int] = field(default_factory=list)  # nearest first
    head: list[str] = field(default_factory=list)
    up: int = -1  # the nearest entry before this one at its level or above (-1: none)
    # What the entry's own text and titles say, whatever the types around it: worked out once, though
    # the typing passes ask it again and again (see _memo).
    memo: dict[str, Any] = field(default_factory=dict)


_T = TypeVar("_T")


def _memo(node: _Node, key: str, compute: Callable[[], _T]) -> _T:
    """`compute()`, once per node and key. Only for facts of the entry's own text, titles and children's
    text, never its types: classify asks the same of every node in up to four passes."""
    try:
        return node.memo[key]
    except KeyError:
        value = node.memo[key] = compute()
        return value


def _tree(entries: list[Entry]) -> list[_Node]:
    nodes = [_Node(e, i, norm(e.title)) for i, e in enumerate(entries)]
    above: list[int] = []  # the earlier entries that can still be a later one's `up`, shallowest first
    for node in nodes:
        p = node.entry.parent
        if p is not None and 0 <= p < len(nodes) and p != node.index:
            nodes[p].children.append(node.index)
            node.ancestors = [p, *nodes[p].ancestors] if p < node.index else [p]
        node.head = first_lines(node.entry.body)
        while above and nodes[above[-1]].entry.level > node.entry.level:
            above.pop()
        node.up = above[-1] if above else -1
        above.append(node.index)
    _mark_grouping_rows(nodes)
    return nodes


# A table row whose cells list other entries of the book ("Avian | Phoenix, Roc, Wyvern" in a bestiary
# that describes each of them) groups those things; it is not one of them. It needs GROUPED_MIN such
# names, and they must be at least half the items its cells list.
GROUPED_MIN = 2
_ITEM_SPLIT = re.compile(r"[,;\n]")
_CELL_LABEL = re.compile(r"^[^:]{1,30}:\s*")


def _mark_grouping_rows(nodes: list[_Node]) -> None:
    rows = [n for n in nodes if n.entry.origin == "row"]
    if not rows:
        return
    titles = {n.title for n in nodes if n.title}
    for n in rows:
        items = [norm(_CELL_LABEL.sub("", x.strip())) for x in _ITEM_SPLIT.split(n.entry.body.split("\n", 1)[-1])]
        items = [x for x in items if x]
        named = sum(1 for x in items if x in titles and x != n.title)
        n.memo["groups_others"] = named >= GROUPED_MIN and 2 * named >= len(items)


def _under(nodes: list[_Node], node: _Node, pattern: re.Pattern[str], depth: int = 99) -> bool:
    return any(pattern.search(nodes[a].title) for a in node.ancestors[:depth])


def has_spell_line(head: list[str]) -> bool:
    return any(SPELL_LINE.match(line) for line in head[:3])


def has_stat_block(body: str, head: list[str]) -> bool:
    if any(STAT_TYPE_LINE.match(line) for line in head[:3]):
        return True
    top = body[:1500]
    return bool(folded_has(top, "armo") and _AC.search(top) and (_HP.search(top) or _HD.search(top))
                and _CR.search(body[:3000]))


def has_old_school_stats(body: str) -> bool:
    """Basic-Fantasy style: Armor Class, Hit Dice, No. of Attacks / Morale / Save As."""
    top = body[:1500]
    return bool(folded_has(top, "armo") and _AC.search(top) and _HD.search(top) and _OLD_STATS.search(top))


def has_spell_fields(head: list[str]) -> bool:
    """Range: and Duration: among the first lines (older games' spell format)."""
    return any(_RANGE.match(x) for x in head[:4]) and any(_DURATION.match(x) for x in head[:8])


def has_item_line(head: list[str]) -> bool:
    return any(ITEM_LINE.match(line) for line in head[:2])


def _previous_sibling(nodes: list[_Node], node: _Node) -> _Node | None:
    for i in range(node.index - 1, -1, -1):
        if nodes[i].entry.parent == node.entry.parent:
            return nodes[i]
        if node.entry.parent is not None and i <= node.entry.parent:
            return None
    return None


def _is_structural(title: str) -> bool:
    return bool(STRUCTURAL_TITLES.match(title))


# A structural title among its siblings: a stat block's or a class's parts come in runs of them ("Age",
# "Size", "Speed"; "Actions", "Reactions"), so a title is a part when this share of its siblings are such
# titles too. Alone among rules sections ("Reactions" between "Armor" and "Morale" in a core rules chapter)
# it is a rules section of its own, which, left untyped, folded into its chapter and was never a result.
PART_SIBLINGS = 0.5


def _is_part(nodes: list[_Node], node: _Node, types: list[str | None]) -> bool:
    """A title a stat block, class or race uses for its parts, where it is one: inside an entity, or
    among siblings titled so (see PART_SIBLINGS)."""
    if not _is_structural(node.title):
        return False
    p = node.entry.parent
    if p is None or types[p] not in (None, "rule"):
        return True
    kids = nodes[p].children
    parts = _memo(nodes[p], "part_kids", lambda: sum(_is_structural(nodes[c].title) for c in kids))
    own = node.index in kids
    sibs = len(kids) - own
    return not sibs or parts - own >= PART_SIBLINGS * sibs


def _statblock_children_only(nodes: list[_Node], node: _Node) -> bool:
    kids = [nodes[c].title for c in node.children]
    return "actions" in kids and all(_is_structural(k) for k in kids)


def _classify_one(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    e, t = node.entry, node.title
    if not t:
        return None
    variant = bool(node.ancestors) and nodes[node.ancestors[0]].title.startswith("variant")
    if (
        e.origin in genre.NAME_ORIGINS
        and not variant
        and any(types[a] not in (None, "rule") for a in node.ancestors[:2])
    ):
        return None  # a run-in or row inside an entity is one of its parts (a trait, an action)
    return _by_own_lines(nodes, node, types) or _by_children(nodes, node, types) or _by_sections(nodes, node, types)


def _by_own_lines(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    """1. Explicit tags ("Blinded [Condition]") and the body's first lines."""
    got = _memo(node, "own", lambda: _own_lines_type(node))
    if got == "monster" and any(types[a] == "monster" for a in node.ancestors[:2]):
        return None  # a stat block inside a monster's is one of its forms
    return got


def _own_lines_type(node: _Node) -> str | None:
    """What the entry's tag and first lines say it is; a monster's stat block counts only outside another
    monster (_by_own_lines checks that)."""
    e, t, head, body = node.entry, node.title, node.head, node.entry.body
    if e.title.rstrip().lower().endswith("[condition]"):
        return "condition"
    if has_spell_line(head):
        return "spell"
    if has_spell_fields(head) and not _is_structural(t) and not node.children and not e.title.isupper():
        return "spell"
    if has_item_line(head) and not _is_structural(t):
        return "item"
    if FEAT_LINE.match(head[0] if head else ""):
        return "feat"
    shouting = e.title.isupper()  # running headers ("SPELLS", "BASIC FANTASY RPG") are not entities
    stat = has_stat_block(body, head) or (has_old_school_stats(body) and not shouting)
    return "monster" if stat and not _is_structural(t) else None


def _by_children(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    """2. Children that only entities have, and the family a variant belongs to."""
    t = node.title
    parent = nodes[node.ancestors[0]] if node.ancestors else None
    by_kids = _memo(node, "kids", lambda: _kids_type(nodes, node))
    if by_kids is not None:
        return by_kids
    family = next((nodes[a] for a in node.ancestors[:2] if types[a] == "monster"), None)
    if family is None and parent is not None and parent.title.startswith("variant"):
        sib = _previous_sibling(nodes, parent)  # "Variant: Insect Swarms" right after "Swarm of Insects"
        if (
            sib is not None
            and types[sib.index] == "monster"
            and not _is_structural(t)
            and t.split()[0] == sib.title.split()[0]
        ):
            return "monster"
    if (
        family is not None
        and not _is_structural(t)
        and t.split()[0] == family.title.split()[0]
        and all(
            nodes[a].title.startswith("variant") for a in node.ancestors[: node.ancestors.index(family.index)]
        )
    ):
        return "monster"  # "Swarm of Beetles" below "Swarm of Insects" (or its "Variant: ..." section)
    if _statblock_children_only(nodes, node) and _under(nodes, node, MONSTER_CTX) and not _is_structural(t):
        return "monster"
    return None


# What a people's traits describe: a "Disease and Poison Traits" section (application, potency) is no race's.
_PEOPLE_TRAITS = re.compile(r"\b(age|size|speed|languages?|lifespan|height)\b", re.IGNORECASE)


def _people_traits(body: str) -> bool:
    """Whether a "<Name> Traits" section reads as a people's: an ability score increase, or two of
    age, size, speed, languages..."""
    text = body[:2000]
    return bool(_ASI.search(text)) or len({m.lower() for m in _PEOPLE_TRAITS.findall(text)}) >= 2


def _kids_type(nodes: list[_Node], node: _Node) -> str | None:
    """A race by its "<Race> Traits" child, a class by its "Class Features" child or its class table."""
    t, body = node.title, node.entry.body
    if len(t.split()) > 3 or _is_structural(t):
        return None
    kid_titles = [nodes[c].title for c in node.children]
    if any(nodes[c].title == t + " traits" and _people_traits(nodes[c].entry.body) for c in node.children):
        return "race"
    if any(k in ("class features", t + " class features") for k in kid_titles[:3]):
        return "class"
    # SRD 5.2: a "Core <Class> Traits" table right under the class heading
    if (
        node.children
        and _under(nodes, node, CLASS_CTX, 2)
        and folded_has(body[:1500], "hit ")
        and _CLASS_TABLE.search(body[:1500])
        and _CLASS_TABLE2.search(body[:1500])
    ):
        return "class"
    return None


def _by_sections(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    """3. Enclosing sections (a conditions list, a spells chapter) with the body's evidence."""
    if _in_conditions(nodes, node, types):
        return "condition"
    by_section = _memo(node, "sections", lambda: _section_type(nodes, node))
    if by_section is not None:
        return by_section
    t, body = node.title, node.entry.body
    # subraces: a section below a race (or its traits) that grants its own ability increase
    race_anc = next((a for a in node.ancestors[:3] if types[a] == "race"), None)
    if (
        race_anc is not None
        and not _is_structural(t)
        and not t.startswith(nodes[race_anc].title + " ")
        and _ASI.search(body)
    ):
        return "race"
    if race_anc is None and _memo(node, "race", lambda: _race_fields(nodes, node)):
        return "race"
    if _is_subclass(nodes, node, types):
        return "subclass"
    return None


def _in_conditions(nodes: list[_Node], node: _Node, types: list[str | None]) -> bool:
    """A short entry in a conditions list (or mis-nested below one of its conditions)."""
    t = node.title
    parent = nodes[node.ancestors[0]] if node.ancestors else None
    return (
        parent is not None
        and len(t.split()) <= 2
        and "condition" not in t
        and bool(
            CONDITION_CTX.search(parent.title)
            # a mis-nested one ("Exhaustion" below "Deafened") still sits in the conditions list
            or (
                types[parent.index] == "condition"
                and len(node.ancestors) > 1
                and CONDITION_CTX.search(nodes[node.ancestors[1]].title)
            )
        )
    )


def _section_type(nodes: list[_Node], node: _Node) -> str | None:
    """What an enclosing spells, items, monsters, backgrounds or feats section and the body's own
    fields say together; the body's fields alone for a background."""
    t, head, body = node.title, node.head, node.entry.body
    if _under(nodes, node, SPELL_CTX, 3) and _CASTING_TIME.search(body[:600]):
        return "spell"
    if _under(nodes, node, ITEM_CTX, 3) and any(ITEM_LINE.match(x) for x in head[:4]):
        return "item"
    if (
        _under(nodes, node, MONSTER_CTX, 3)
        and _AC.search(body[:2500])
        and _HP.search(body[:2500])
        and not _is_structural(t)
    ):
        return "monster"
    if _under(nodes, node, BACKGROUND_CTX, 3) and not _is_structural(t) and _SKILL_PROF.search(body):
        return "background"
    if (
        folded_has(body[:1500], "skill proficiencies")
        and _SKILL_PROF.search(body[:1500])
        and _EQUIPMENT.search(body)
        and _ORIGIN_FIELDS.search(body)
        and not _is_structural(t)
    ):
        return "background"
    if (
        _under(nodes, node, FEAT_CTX, 3)
        and not _is_structural(t)
        and head
        and (_PREREQ.match(head[0]) or _BENEFITS.search(body[:800]))
    ):
        return "feat"
    return None


def _race_fields(nodes: list[_Node], node: _Node) -> bool:
    """In a races chapter, with the creature type and speed a species entry states."""
    body = node.entry.body
    return bool(
        _under(nodes, node, RACE_CTX, 2)
        and not _is_structural(node.title)
        and _CREATURE_TYPE.search(body[:400])
        and _SPEED.search(body[:600])
    )


def _in_class_area(nodes: list[_Node], node: _Node, types: list[str | None]) -> bool:
    if any(types[a] == "class" for a in node.ancestors):
        return True
    if _memo(node, "class_ctx", lambda: _under(nodes, node, CLASS_CTX)):
        return True
    # containers such as "Barbarian Paths" sit beside their class rather than inside it
    for a in node.ancestors[:2]:
        prev = nodes[a].up
        if prev >= 0 and types[prev] == "class":
            return True
    return False


def _is_subclass(nodes: list[_Node], node: _Node, types: list[str | None]) -> bool:
    t = node.title
    by_title = _memo(node, "sub_title", lambda: _subclass_by_title(t))
    if by_title is not None:
        return by_title
    parent = nodes[node.ancestors[0]] if node.ancestors else None
    if parent is None or not _in_class_area(nodes, node, types):
        return False
    if any(types[a] == "class" and t in ("the " + nodes[a].title, nodes[a].title) for a in node.ancestors):
        return False  # "The Fighter": the class table, not an archetype
    levelled, choice = _memo(node, "sub_text", lambda: _subclass_text(nodes, node))
    if choice:
        return False  # the class feature that makes you pick one ("Divine Domain"), not a subclass
    if SUBCLASS_CTX.search(parent.title) and types[parent.index] is None and levelled:
        return True
    return bool(SUBCLASS_TITLE.search(t)) and levelled and bool(node.children or len(node.entry.body) > 400)


def _subclass_by_title(t: str) -> bool | None:
    """True: the title names a subclass ("Barbarian Subclass: ..."); False: it cannot be one; None: ask on."""
    if _SUBCLASS_HEADING.match(t):  # SRD 5.2: "Barbarian Subclass: Path of the Berserker"
        return True
    if _is_structural(t) or len(t.split()) > 6:
        return False
    return None


def _subclass_text(nodes: list[_Node], node: _Node) -> tuple[bool, bool]:
    """Whether the entry's text (and its first children's) speaks of levels or of choosing a subclass, and
    whether its opening makes you choose one (the class feature, not a subclass)."""
    text = node.entry.body[:3000] + " " + " ".join(nodes[c].entry.body[:400] for c in node.children[:8])
    levelled = bool(_LEVEL_WORDS.search(text) or _SUBCLASS_BODY.search(text))
    return levelled, bool(_CHOICE_FEATURE.search(node.entry.body[:400]))


def _row_header(nodes: list[_Node], node: _Node) -> str | None:
    """The column header above a table row: the line before the table's first row name in
    the enclosing section's text ("CREATURE" above "Fire Beetle"); None when not found."""
    if node.entry.origin != "row" or not node.ancestors:
        return None
    parent = nodes[node.ancestors[0]]
    first = node
    for i in range(node.index - 1, parent.index, -1):
        e = nodes[i].entry
        if e.parent != parent.index:
            continue
        if e.origin != "row":
            break
        first = nodes[i]
    lines = [x.strip() for x in parent.entry.body.split("\n") if x.strip()]
    name = first.entry.title.strip()
    for k, line in enumerate(lines):
        line = _ROLL_CELL.sub("", line)  # a roll table's first cell: "1-2 free colony"
        if line == name or line.startswith(name + " "):
            return lines[k - 1] if k > 0 else None
    return None


def _header_type(nodes: list[_Node], node: _Node) -> str | None:
    """The type the column header above a table row names."""
    header = _row_header(nodes, node)
    return genre.header_type(header) if header is not None else None


def _bought(node: _Node) -> bool:
    """The section's text says its entries are bought when levelling up (a list of feat-like options)."""
    return _memo(node, "bought", lambda: genre.bought_at_level_up(node.entry.body))


def _context(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    """What the entry's table header or nearest listing section says it is."""
    by_header = _memo(node, "header", lambda: _header_type(nodes, node))
    if by_header is not None:
        return by_header
    for a in node.ancestors[:3]:
        title = nodes[a].title
        ctx = genre.context_of(title, singular=True)
        if ctx is None and _bought(nodes[a]):
            ctx = "feat"
        if ctx is not None:
            return ctx
        if types[a] not in (None, "rule", "class"):
            return None  # inside another entity: its parts are not listed things
    return None


_NOT_AN_ENTITY = "-"  # _genre_shape: a title no entity has (structural, a level label, a sentence)


def _genre_shape(nodes: list[_Node], node: _Node) -> str | None:
    """Other systems' entries by their own shape: a class, a stat block, a condition; _NOT_AN_ENTITY
    for a title that no entity has; None when the shape says nothing (the listing may)."""
    e, t = node.entry, node.title
    if not t or _is_structural(t) or genre.is_level_label(t) or len(t.split()) > 6:
        return _NOT_AN_ENTITY
    named = e.origin in genre.NAME_ORIGINS
    if not named and len(t.split()) <= 3:  # before stat shape: a class states hit points too
        kids = [nodes[c] for c in node.children]
        heads = [k.entry.body[:300] for k in kids[:genre.CLASS_KID_HEADS]]
        if genre.class_shape(t, e.body, [k.title for k in kids], heads):
            return "class"
    tags = " ".join(e.tags or [])
    # a thing priced in its own title is gear, whatever hit points and armour it gives ("+5% Shield (250 GP)");
    # a title naming a kind ("Monsters") is a chapter with a sample stat line, unless it names one creature
    # and the entry is a leaf that prints a stat block of its own ("Rust Monster": AC, PD, MD, HP; a "Riot
    # Shield" with AP/HP is still gear)
    kind = genre.context_of(t)
    listing = kind is not None and not (kind == "monster" and genre.one_creature(t) and lists.own_block(node))
    # a row under a column header naming another kind ("Weapon | Damage | AP/HP") is that kind, whatever its
    # damage and hit points (an object's)
    header = _memo(node, "header", lambda: _header_type(nodes, node)) if e.origin == "row" else None
    if (not listing and header in (None, "monster") and genre.has_stat_shape(f"{e.title} {tags}", e.body)
            and not genre.has_price(e.title) and not _holds_creatures(nodes, node)):
        return "monster"
    if genre.describes_state(t, e.body):
        return "condition"
    return None


def _holds_creatures(nodes: list[_Node], node: _Node) -> bool:
    """Headings with stat blocks of their own below it: a creature set one level too high ("# Red Cap" above
    "## Reptilian", "## Root Goblin", ...) heads the ones after it only by mistake, and is no monster whose
    parts they are (a stat block's "Actions" prints none)."""
    kids = [nodes[c] for c in node.children if nodes[c].entry.origin not in genre.NAME_ORIGINS][:CREATURE_KIDS]
    return sum(genre.has_stat_shape(k.entry.title, k.entry.body) for k in kids) >= 2


def _genre_type(nodes: list[_Node], node: _Node, types: list[str | None]) -> str | None:
    """Other systems' entries: stat-block shape first, then the listing they sit in."""
    e, t = node.entry, node.title
    shape = _memo(node, "shape", lambda: _genre_shape(nodes, node))
    if shape is _NOT_AN_ENTITY:
        return None
    if any(types[a] == "monster" for a in node.ancestors[:2]):
        return None  # an attack or move line inside a stat block
    if shape is not None:
        return shape
    named = e.origin in genre.NAME_ORIGINS
    if node.memo.get("groups_others"):
        return None  # a row grouping other entries of the book
    leaf = not node.children
    own = genre.context_of(t)
    ctx = _context(nodes, node, types)
    if ctx is None or (own == ctx and not named):
        return None  # a heading naming a list of such things ("Weapons" in "Equipment"), not one
    body = e.body.strip()
    # Headings are typed only directly under their listing section; deeper down sit the parts
    # of one ("Feat" inside a background). Names (run-ins, rows) may sit a level or two deeper.
    parent = nodes[node.ancestors[0]] if node.ancestors else None
    direct = parent is not None and (_lists_kind(parent) == ctx or (ctx == "feat" and _bought(parent)))
    if not (named or direct):
        return None
    if direct and ctx in _PEOPLE_AND_STATES and _subtopic(parent.title, t):  # type: ignore[union-attr]
        return None  # "Faction Status" > "Faction status changes": more about the heading's topic, not one of them
    if ctx == "spell":  # a heading naming the kind in its title is about spells ("Casting a spell"), and so is
        # one among such headings ("Miscasts" after "Casting a spell" and "Recharging a spell")
        about = genre.TYPE_WORD[ctx].search(t) or (parent is not None and _among_rules_about(nodes, parent, node, ctx))
        return "spell" if named or (leaf and 0 < len(body) < 3000 and not about) else None
    if ctx == "feat":  # an option a character takes: it speaks to "you", or names a prerequisite
        if re.match(r"^(requires?|required|replaces)\b", t):
            return None
        return "feat" if named or (leaf and len(body) < 3000 and genre.speaks_to_player(body)) else None
    if ctx == "item":  # a table row, or a name with its price
        priced = genre.has_price(f"{' '.join(e.tags or [])} {body[:200]}")
        return "item" if e.origin == "row" or (priced and (named or (leaf and len(t.split()) <= 4))) else None
    if ctx == "monster":
        return "monster" if named and e.origin == "row" and not genre.roll_result(body) else None
    if ctx == "condition":
        short = (named or leaf) and len(t.split()) <= 3 and 0 < len(body) < 800
        return "condition" if direct and short else None
    if ctx == "class":  # "Playbooks" > "The Fighter": a described class directly in its chapter
        described = bool(node.children) or len(body) >= CLASS_MIN_BODY
        container = bool(SUBCLASS_CTX.search(t))  # "Domains", "Martial Archetypes"
        about = bool(genre.TYPE_WORD[ctx].search(t))  # "Class Rank Structure": about classes, not one of them
        return "class" if direct and len(t.split()) <= 3 and described and not (container or about) else None
    if ctx in ("race", "background"):  # a row of an origin table, or a heading described by its text or parts
        short = len(t.split()) <= 4
        # parts below it describe it too, unless its title names the kind: "Parts of a Background" is about them
        described = len(body) >= 80 or (bool(node.children) and not genre.TYPE_WORD[ctx].search(t))
        if direct and e.origin != "row" and _kind_sibling(nodes, node, ctx):
            return None  # "Names & Background" > "Names", "Clothing", "Background": the last one holds the kind
        return ctx if short and (e.origin == "row" or (direct and described)) else None
    return None


def _lists_kind(parent: _Node) -> str | None:
    """The kind a heading lists: "Spells", or "Spell Descriptions" over a run of entries (MIN_MEMBERS or
    more; over one or two it may head a preamble: "Reading the Entries")."""
    kind = genre.context_of(parent.title)
    if kind is None and len(parent.children) >= lists.MIN_MEMBERS:
        kind = genre.context_of(parent.title, singular=True)
    return kind


def _among_rules_about(nodes: list[_Node], parent: _Node, node: _Node, kind: str) -> bool:
    """Whether most of `node`'s heading siblings, three or more, name the kind in their titles: rules about it,
    not things of it (one spell beside two rules of casting may still be a spell). The parent's headings are
    counted once (a list of 300 spells asks for each of them)."""
    def count() -> tuple[frozenset[int], frozenset[int]]:
        heads = frozenset(c for c in parent.children if nodes[c].entry.origin not in genre.NAME_ORIGINS)
        return heads, frozenset(c for c in heads if genre.TYPE_WORD[kind].search(nodes[c].title))

    heads, about = _memo(parent, f"about {kind}", count)
    n_about = len(about) - (node.index in about)
    return n_about >= 3 and 2 * n_about > len(heads) - (node.index in heads)


_PEOPLE_AND_STATES = frozenset({"condition", "race", "background", "class", "feat"})


def _subtopic(parent: str, title: str) -> bool:
    """The title carries on a heading of two or more words ("faction status" -> "faction status changes")."""
    return len(parent.split()) >= 2 and title != parent and title.startswith(parent + " ")


def _kind_sibling(nodes: list[_Node], node: _Node, ctx: str) -> bool:
    """A sibling heading titled by the kind's word alone ("Background", "Races"): the parent names the kind
    because of that part, and its other parts are other topics."""
    parent = nodes[node.ancestors[0]] if node.ancestors else None
    if parent is None:
        return False
    kind_parts = _memo(parent, f"kind_parts:{ctx}", lambda: {
        c for c in parent.children
        if nodes[c].entry.origin not in genre.NAME_ORIGINS and genre.TYPE_WORD[ctx].fullmatch(nodes[c].title)})
    return bool(kind_parts - {node.index})


def _descendants(nodes: list[_Node], node: _Node) -> list[int]:
    out, todo = [], list(node.children)
    while todo:
        i = todo.pop()
        out.append(i)
        todo.extend(nodes[i].children)
    return out


def _is_rule(nodes: list[_Node], node: _Node, types: list[str | None]) -> bool:
    if len(node.entry.body) < 40 or _is_part(nodes, node, types):
        return False
    if any(types[a] not in (None, "rule") or _LIST_TITLE.search(nodes[a].title) for a in node.ancestors):
        return False  # inside an entity, or in a spell list ("Bard Spells" > "3rd Level")
    if any(types[d] not in (None, "rule") for d in _descendants(nodes, node)):
        return False  # a container of typed entries ("Conditions") is not itself a rule
    if not node.ancestors:  # a chapter of its own (a folder book's chapter file): named by the chapter map
        return bool(RULE_CTX.search(node.title))
    top = nodes[node.ancestors[-1]]
    return bool(RULE_CTX.search(top.title) or (len(node.ancestors) > 1 and _under(nodes, node, RULE_CTX, 2)))


def _rule_containers(nodes: list[_Node], types: list[str | None]) -> None:
    """A section over rules sections is a rule too, however short its own text ("Underwater Combat"
    over "Impeded Weapons" and "Fire Resistance"): left untyped, it would be folded into the chapter
    above it and never be a result of its own."""
    for node in reversed(nodes):  # children first: a container of containers
        i = node.index
        if types[i] is not None or not node.ancestors or _is_part(nodes, node, types):
            continue
        if any(types[a] not in (None, "rule") for a in node.ancestors):
            continue  # a part of an entity
        if any(types[d] not in (None, "rule") for d in _descendants(nodes, node)):
            continue  # a container of typed entries ("Backgrounds", "Spell Descriptions")
        if any(types[c] == "rule" for c in node.children):
            types[i] = "rule"


def _broad_rules(nodes: list[_Node], types: list[str | None], holders: set[int]) -> None:
    """Other systems: every prose section outside an entity is a rule, except front and back
    matter, examples, the book's own title section and lists of typed things ("Weapons").

    Measured and not kept: a top-level chapter that opens with 300+ characters of its own text typed rule
    whatever it lists ("Paranatural Bestiary", "Chapter 4: Equipment", as answer keys type chapters). Typed
    on eight unseen books' entry gold 0.796 -> 0.807, md-more 0.851 -> 0.858; but a chapter typed rule earns
    `ask`'s typed prior and takes its untyped sections' folds and rollups: more2/ask 0.773 -> 0.760 ("Monster
    List" above "Monster Advancement"), Cepheus 0.786 -> 0.775; with the folds kept out of such chapters,
    Mausritter 0.702 -> 0.669 and more2/ask still 0.760."""
    n = len(nodes)
    for node in reversed(nodes):  # children first: a container of rules is a rule
        i, e, t = node.index, node.entry, node.title
        if types[i] is not None or not t or e.origin in genre.NAME_ORIGINS or _is_part(nodes, node, types) or i in holders:
            continue
        if any(types[a] not in (None, "rule") for a in node.ancestors):
            continue  # a part of an entity (a class's starting moves)
        if any(genre.FRONT_MATTER.search(nodes[a].title) or _EXAMPLE.search(nodes[a].title) for a in [i, *node.ancestors]):
            continue
        below = _descendants(nodes, node)
        if len(below) > ROOT_SHARE * n and n >= ROOT_MIN_ENTRIES:
            continue  # the book's title section holds everything
        if genre.context_of(t) is not None and any(types[d] not in (None, "rule") for d in below):
            continue  # a list of typed things
        if len(e.body.strip()) >= RULE_MIN_BODY or any(types[c] == "rule" for c in node.children):
            types[i] = "rule"


def _genre_pass(nodes: list[_Node], types: list[str | None], own_format: set[str], skip: set[int]) -> list[str | None]:
    """What the D&D lines left untyped, by the genre's section words and shapes (in place on a copy).
    A type this book already prints in its own recognisable format (spell lines, stat blocks) is not
    added by context: there, an entry without that format is something else."""
    out = list(types)
    for node in nodes:
        if out[node.index] is None and node.index not in skip:
            got = _genre_type(nodes, node, out)
            out[node.index] = got if got not in own_format else None
    return out


@dataclass(slots=True)
class Steps:
    """classify's intermediate results: the tree, the types by the SRD's own lines (`strong`) and by the
    genre's words and shapes (`weak`), and the book's lists with their evidence. bench/fit_typing.py
    fits the list weights on exactly these."""

    nodes: list[_Node]
    strong: list[str | None]
    own_format: set[str]
    weak: list[str | None]
    lists: list[lists.ListOf]
    entity_format: bool  # the book prints the SRD's own entity lines (spell lines, stat blocks)


def typing_steps(doc: Document) -> Steps:
    nodes = _tree(doc.entries)
    types: list[str | None] = [None] * len(nodes)
    # Two passes: the second sees types of later siblings/children (class before its subclass
    # container is enough in document order, but children-typed parents need the first pass).
    for _ in range(2):
        for node in nodes:
            types[node.index] = _classify_one(nodes, node, types)
    found = Counter(t for t in types if t is not None)
    own_format = {t for t, n in found.items() if n >= OWN_FORMAT_MIN}
    weak = _genre_pass(nodes, types, own_format, set())
    runs, labels = lists.find_lists(nodes)
    runs = [lst for lst in runs if lst.parent is None or types[lst.parent] in (None, "rule")]
    for lst in runs:
        first = nodes[lst.members[0]]
        header = genre.header_type(h) if lst.named and (h := _row_header(nodes, first)) else None
        lists.evidence(nodes, lst, labels, types, weak, header)
    entity = bool(found.keys() & ENTITY_FORMATS) and max(found[t] for t in ENTITY_FORMATS) >= OWN_FORMAT_MIN
    return Steps(nodes, types, own_format, weak, runs, entity)


def _list_pass(st: Steps, weights: lists.Weights) -> tuple[dict[int, str], set[int]]:
    """Lists of like siblings typed as a whole: {member: type}, and the parents that hold typed lists."""
    decided: dict[int, str] = {}
    for rnd in range(2):  # the second round sees the label signatures of the lists typed in the first
        if rnd:
            lists.add_signature(st.lists, decided)
        for lst in st.lists:
            t = None if id(lst) in decided else lists.decide(lst, weights)
            if t is not None and (t not in st.own_format or lst.features[t]["own"] > 0):
                decided[id(lst)] = t
    out: dict[int, str] = {}
    holders: set[int] = set()
    for lst in st.lists:
        t = decided.get(id(lst))
        if t is None:
            continue
        p = lst.parent
        ptype = None if p is None else out.get(p, st.weak[p])
        if p is not None and _in_entity(st, p, out):
            continue  # a table under a section of a monster ("Hit Locations & Armor"): the monster's parts
        if p is not None and ptype not in (None, "rule"):
            whole = lst.features[t]["lab_full"] >= lists.FULL_LIST or lst.features[t]["own"] >= lists.FULL_LIST
            if not (whole and ptype == t):
                continue  # a list inside a typed entry is its parts (a monster's features)
            out.pop(p, None)  # a heading over whole entries of its kind groups them ("Animals")
        for m in lst.members:
            if st.strong[m] is None:
                out[m] = t
        if p is not None:
            holders.add(p)
    return out, holders


# Entities whose sections hold their own parts, not lists of other things (a class's sections may list its
# subclasses).
_PART_HOLDERS = frozenset({"monster", "item", "spell"})


def _in_entity(st: Steps, p: int, out: dict[int, str]) -> bool:
    """Whether the list's parent is an untyped section of a monster, an item or a spell."""
    node = st.nodes[p]
    if out.get(p, st.weak[p]) is not None or not node.ancestors:
        return False
    a = node.ancestors[0]
    return out.get(a, st.weak[a]) in _PART_HOLDERS


def _named_elsewhere(st: Steps, by_list: dict[int, str]) -> dict[int, set[str]]:
    """Members of untyped lists whose heading names one kind, with the other kinds that only the
    genre rules' weaker signs (a stat word, not a full stat line) would give them: a "Sample Melee
    Weapons" table whose rows print "Damage" and "AP/HP" is not a list of monsters, and untyped
    beats wrong. A kind backed by full stat lines stands (a list's labels, or a member's hit points
    beside its armour: "Planar Powers" of whole stat blocks)."""
    out: dict[int, set[str]] = {}
    for lst in st.lists:
        if any(m in by_list for m in lst.members):
            continue
        f = lst.features
        named = max(lists.LIST_TYPES, key=lambda t: f[t]["named"])
        if f[named]["named"] < lists.BACKED:
            continue
        weaker = {t for t in lists.LIST_TYPES if t != named and f[t]["lab_full"] < lists.BACKED}
        for m in lst.members:
            out[m] = weaker
    return out


def classify(doc: Document, weights: lists.Weights | None = None) -> None:
    """Set `content_type` on every entry of `doc` (in place). `weights`: the list model's, when not
    the shipped ones (bench/fit_typing.py leaves a book out). Other systems' lists of like things are
    typed from their pooled evidence first; the genre's words and shapes then type what no list did."""
    st = typing_steps(doc)
    nodes = st.nodes
    types = list(st.strong)
    by_list, holders = _list_pass(st, weights or lists.shipped_weights())
    for i, t in by_list.items():
        types[i] = t
    types = _genre_pass(nodes, types, st.own_format, holders)
    for m, kinds in _named_elsewhere(st, by_list).items():
        if st.strong[m] is None and types[m] in kinds and not (
                types[m] == "monster" and genre.hp_and_defence(nodes[m].entry.body)):
            types[m] = None
    if st.entity_format:
        # a book whose entities print their own lines (the SRDs): rules by the chapter map
        for node in nodes:
            if types[node.index] is None and _is_rule(nodes, node, types):
                types[node.index] = "rule"
        _rule_containers(nodes, types)
    else:
        _broad_rules(nodes, types, holders)
    for node, ct in zip(nodes, types, strict=False):
        node.entry.content_type = ct
