"""Typing for any game system: section context, table headers and stat-block shape.

classify.py reads D&D's own lines ("3rd-level evocation", "Challenge 5"); most other books
print none of them. What they do share is the genre's vocabulary for *sections*: a monster
sits in a "Bestiary" or under a "Creature" column, a spell under "Cleric Spells" or
"Rituals", gear under "Equipment". The words below are those general section words (never
a name from any book), each mapped onto one of the ten types. A section word alone is not
enough: the entry must also look like a thing of that kind (a named run-in or table row, a
stat line, a price), so that rules text about monsters is not a monster. Precision first:
an entry that fits no rule stays untyped.
"""

from __future__ import annotations

import re
from functools import lru_cache

from gmtool.textnorm import folded_has

# The genre's section words, by the type of what such a section lists. Matched against the
# normalised title's last words ("cleric spells", "dungeon gear", "armor list").
_CONTEXT_WORDS: dict[str, str] = {
    "monster": r"monsters?|creatures?|bestiary|bestiaries|adversar(?:y|ies)|foes|enemies|npcs?"
    r"|nonplayer characters?|non player characters?|antagonists|opponents|denizens",
    "spell": r"spells|grimoires?|rituals|miracles|powers|prayers|incantations|rotes|cantrips",
    "item": r"equipment|gear|loot|treasures?|items|artifacts|relics|weapons?|armou?rs?|shields?|goods|provisions"
    r"|supplies|price list",
    "race": r"ancestr(?:y|ies)|races|kin|kindreds?|lineages?|species|heritages?|peoples",
    "background": r"backgrounds?|communit(?:y|ies)|upbringings?",
    "class": r"classes|playbooks|archetypes|callings|professions|careers",
    "subclass": r"subclasses|sub classes|specializations|specialisations",
    "feat": r"feats|talents|edges|advanced moves|advances|boons|perks",
    "condition": r"conditions|debilit(?:y|ies)|status(?:es)?(?: effects)?|afflictions|ailments|injuries",
}
_SUFFIX = r"(?: list| lists| table| tables| descriptions| a z)?"
# Before a list word the kind is singular: "Spell Descriptions", "Item Table", "Monster List".
_LIST_SUFFIX = r" (?:list|lists|table|tables|descriptions)"
_SINGULAR: dict[str, str] = {
    "monster": "monster|creature|adversary|foe|enemy|npc",
    "spell": "spell|ritual|power|prayer|miracle",
    "item": "item|artifact|relic|weapon|armou?r|shield|gear|equipment",
    "race": "race|ancestry|species|lineage|heritage",
    "background": "background",
    "class": "class|playbook",
    "subclass": "subclass",
    "feat": "feat|talent",
    "condition": "condition",
}
CONTEXT = {t: re.compile(rf"(?:^|\s)(?:{w}){_SUFFIX}$") for t, w in _CONTEXT_WORDS.items()}
LIST_CONTEXT = {t: re.compile(rf"(?:^|\s)(?:{_SINGULAR[t]}){_LIST_SUFFIX}$") for t in _CONTEXT_WORDS}
# A list's sort order trails its name: "Creatures and NPCs by Level & Tech", "Spells by Class".
_SORT_ORDER = re.compile(r"\s+by\s+\S.*$")
# A column header names what its rows are, often in the singular ("CREATURE HD ...", "ITEM COST").
_HEADER_SINGULAR: dict[str, str] = {
    "monster": _SINGULAR["monster"],
    "spell": _SINGULAR["spell"],
    "item": "item|weapon|armou?r|shield|gear|equipment",
    "background": "background|origin|community|upbringing",
}
HEADER = {t: re.compile(rf"^(?:{w}|{_HEADER_SINGULAR.get(t, w)})\b") for t, w in _CONTEXT_WORDS.items()}
# The nouns that name an entry's kind in its own short first line or tag line ("Level 1 Arcana Spell",
# "Wondrous item, rare"), singular or plural. Narrower than the section words: a stat line's "Armor"
# or "Weapon" is a field, not the entry's kind.
_KIND_NOUNS: dict[str, str] = {
    "monster": "monsters?|creatures?|adversar(?:y|ies)|npcs?",
    "spell": "spells?|rituals?|cantrips?|prayers?|miracles?|incantations?|grimoires?",
    "item": "items?|artifacts?|relics?",
    "race": "ancestr(?:y|ies)|races?|kindreds?|lineages?|heritages?|species",
    "background": "backgrounds?|communit(?:y|ies)|upbringings?",
    "class": "(?<!armor )(?<!armour )class(?:es)?|playbooks?|callings?",
    "subclass": "subclass(?:es)?|specializations?|specialisations?",
    "feat": "feats?|talents?|edges?|boons?|perks?",
    "condition": "conditions?|debilit(?:y|ies)|afflictions?|ailments?",
}
TYPE_WORD = {t: re.compile(rf"\b(?:{w})\b") for t, w in _KIND_NOUNS.items()}
# Headings that are about a kind, not lists of it ("Monster Tags", "Making Monsters").
_NOT_A_LIST = re.compile(r"\b(tags?|rules?|making|using|creating|building|designing|elements of|parts of|about|reading|formatting|format)\b")

# Stat-block shape: hit points with armour, attacks or hit dice, in the first lines.
_HP = re.compile(r"\b\d+\s*(?:hp|hit points)\b|\b(?:hp|hit points|hd|hit dice)\s*:?\s*\d+", re.IGNORECASE)
_DEFENCE = re.compile(
    r"\b\d+\s*armou?r\b|\b(?:ac|armou?r class|armou?r|defen[cs]e)\s*:?\s*\d+|\bhd\s*:?\s*\d", re.IGNORECASE
)
_ATTACK = re.compile(r"\(\s*[bw]?\[?\d*d\d+[^)]*damage|\bdamage\s*:?\s*\d*d\d+|\bmorale\s*:?\s*\d"
                     r"|,\s*[a-z][a-z ]{1,20}\(\s*\d*d\d+(?:\s*\+\s*\d*d?\d+)?\s*\)", re.IGNORECASE)
# (the last: a weapon after a comma in a value-first stat line, "6 HP, 12 STR, 5 DEX, tusks (d6+d6)")
# a monster's drive ("Instinct: To devour"), not a rule defining the word ("Instinct: Instinct is the animal's...")
_INSTINCT = re.compile(r"(?:^|\n|[.!?\"”]\s)instinct\s*:\s*(?!instinct\b)\w", re.IGNORECASE)
# Priced or weighed like gear: "15 coins", "50 gp", "2 weight", "Cost: 5", "costs Cr200" (a currency's
# short name before the sum).
_PRICE = re.compile(
    r"\b\d[\d,./]*\s*(?:gp|sp|cp|gc|gold|silver|copper|coins?|credits?|weight|wt)\b"
    r"|\b(?:costs?|price)\s*:?\s*(?:[A-Z][A-Za-z]{0,2}\s?)?\d",
    re.IGNORECASE,
)
# "Level 1", "Ongoing": a spell's tag line (the level alone is not enough outside a spell list).
_SPELL_TAGS = re.compile(r"^(?:level|lvl|circle|rank)\s*\d", re.IGNORECASE)
# Headings of level groups inside a list: "1st Level", "Cantrips (0 Level)", "3".
_LEVEL_LABEL = re.compile(r"^(?:\d+(?:st|nd|rd|th)?(?: level)?|level \d+|cantrips?(?: 0 level)?|\d+ \d+)$")
# A section whose text says its entries are bought when levelling up lists feat-like options.
_BOUGHT = re.compile(
    r"\bwhen you (?:gain|reach|advance) (?:a|to a|each) (?:new )?level\b[^.]{0,60}\bchoose\b"
    r"|\bchoose (?:one|from) (?:of )?these\b[^.]{0,40}\blevel|\beach time you (?:level|gain a level)\b[^.]{0,60}\b(?:choose|pick|take)\b",
    re.IGNORECASE,
)
# Class shape: a class states its hit points or hit die, and has feature or advancement parts.
_CLASS_HP = re.compile(
    r"\bstarting hp\b|\bhp per level\b|\bhit (?:die|dice)\s*:?\s*\d*d\d+|\bmaximum hp is\b|\bbase hp\b"
    r"|\bd\d+\s+(?:hp|hit points)\b",
    re.IGNORECASE,
)
_CLASS_PART = re.compile(
    r"^(?:(?:starting|advanced|special|class|core) (?:moves|features|abilities|talents)|features"
    r"|level(?:l)?ing up|level up|advancement|advances)$"
)
_CHARACTER_CLASS = re.compile(r"\bcharacter class\b|\bthis character\b|\bthis class\b", re.IGNORECASE)
# Front and back matter: never rules, whatever their length.
FRONT_MATTER = re.compile(
    r"\b(contents|credits|thanks|thank you|licen[cs]e|legal|colophon|foreword|preface|acknowledg\w*|backers"
    r"|kickstarter|contributors|influences|dedication|copyright|open game|ogl|index|about the authors?"
    r"|changelog|change log|version history|living document|designer s notes|what s this)\b"
)
NAME_ORIGINS = ("runin", "row", "line")  # entries extract found as names, not headings


@lru_cache(maxsize=1 << 16)  # asked of every ancestor of every entry: titles repeat
def context_of(title: str, singular: bool = False) -> str | None:
    """The type a section lists, from its (normalised) title; None for other sections. With
    `singular`, "Item Descriptions" counts too: a list of like siblings has shape evidence of its own,
    while a lone entry under such a heading may be the list's preamble ("Reading the Entries")."""
    if _NOT_A_LIST.search(title):
        return None
    title = _SORT_ORDER.sub("", title)
    for t, rx in CONTEXT.items():
        if rx.search(title) or (singular and LIST_CONTEXT[t].search(title)):
            return t
    return None


_ONE_CREATURE = re.compile(rf"\S\s+(?:{_SINGULAR['monster']})$")


def one_creature(title: str) -> bool:
    """A (normalised) title of more than one word ending in a creature noun in the singular names one
    ("Rust Monster", "Tar Creature"), where "Monsters" or "Powerful Opponents" name a list."""
    return bool(_ONE_CREATURE.search(title))


_MEASURE = re.compile(r"\w+ (?:values?|points?|class|rating|bonus|penalty|modifiers?|dm)")


def header_type(line: str) -> str | None:
    """The type a table's first column header names ("creature", "item", "d10 origin" is none)."""
    h = re.sub(r"[^a-z0-9]+", " ", line.lower()).strip()
    h = re.sub(r"^(?:\d*d\d+|roll)\s+", "", h)  # a roll column comes first: "d10 origin"
    cells = re.split(r"\s{2,}", line.strip().lower())  # a Markdown table's header row: cells two spaces apart
    if len(cells) > 1 and _MEASURE.fullmatch(re.sub(r"[^a-z0-9]+", " ", cells[0]).strip()):
        return None  # "Armor Values", "Armor Class": a column of numbers about the kind, not names of it
    for t, rx in HEADER.items():
        if rx.match(h):
            return t
    return None


def hp_and_defence(body: str) -> bool:
    """Hit points beside an armour or defence value in the first lines: a creature's whole stat
    line, which a weapon's own "AP/HP" and "Damage" are not."""
    head = body[:400]
    return bool(_HP.search(head) and _DEFENCE.search(head))


# A stat line in square brackets inside prose is another creature's ("Break to release fire ants [6 HP, 2 STR,
# bite (d10)]"), not the entry's own.
_BRACKETED = re.compile(r"\[[^\]\n]{0,200}\]")


def has_stat_shape(title_tags: str, body: str) -> bool:
    """A stat block of any system: hit points with armour/attacks, or an NPC's instinct line."""
    head = _BRACKETED.sub(" ", f"{title_tags}\n{body[:400]}")
    if folded_has(head, "hp", "hit", "hd") and _HP.search(head) and (_DEFENCE.search(head) or _ATTACK.search(head)):
        return True
    return folded_has(body[:1500], "instinct") and bool(_INSTINCT.search(body[:1500]))


# A table row read as "label: value" fields, one of them a die's roll ("d20: 1", "2d6: 7"): the row is
# a result of a random table, not a thing's entry.
_ROLL_FIELD = re.compile(r"(?:^|\n|; )(?:\d*d(?:\d+|%)(?: or \d*d\d+)?|roll): \d+(?:\s*[-–]\s*\d+)?(?:;|$|\n)", re.IGNORECASE)


def roll_result(body: str) -> bool:
    """A random table's row ("Germinating  d20: 1; Spark Two: Swarm" under a bestiary): it names an
    idea to roll for, not a creature of the book, unless its own text says what a creature is."""
    return bool(_ROLL_FIELD.search(body[:300]))


def has_price(text: str) -> bool:
    return bool(_PRICE.search(text))


def spell_tags(tags: list[str] | None) -> bool:
    return bool(tags) and bool(_SPELL_TAGS.match(" ".join(tags or [])))


def is_level_label(title: str) -> bool:
    return bool(_LEVEL_LABEL.match(title))


def bought_at_level_up(body: str) -> bool:
    head = body[:600]
    return folded_has(head, "choose", "each time you") and bool(_BOUGHT.search(head))


_TO_PLAYER = re.compile(
    r"^\W*(?:when\b|you |your |if you|once per|requires?\b|prerequisites?\b|replaces\b|\+\d)", re.IGNORECASE
)


def speaks_to_player(body: str) -> bool:
    """An option's text addresses the player ("When you...", "You gain..."); rules text rarely opens so."""
    return bool(_TO_PLAYER.match(body))


_STATE_VERB = r"(?:become|becomes|becoming|became|are|is|be|been|being|whilst|while|remain|remains|left|knocked)"


def describes_state(title: str, body: str) -> bool:
    """A condition of any system: a short state name ("Paralysed", "Out of Action") that its own
    text uses as a state a character is in ("...cause PCs to become Paralysed. Whilst Paralysed...")."""
    words = title.split()
    if not 1 <= len(words) <= 3 or not 0 < len(body) < 1200 or not words[-1].endswith(("ed", "ened")):
        return False
    rx = rf"\b{_STATE_VERB}\s+(?:\w+\s+)?{re.escape(title)}\b"
    return len(re.findall(rx, re.sub(r"[^a-z0-9]+", " ", body.lower()))) >= 2


# A step of a character's progression: "First-Tier Warrior", "Warrior Level 3", "2nd Rank Monk".
_PROGRESSION = re.compile(
    r"\b(?:(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))[ -]"
    r"(?:tier|level|rank|circle)|(?:tier|level|rank|circle) \d+)\b"
)
# A class advances through at least this many named steps.
PROGRESSION_STEPS = 3


def progression_steps(title: str, kid_titles: list[str]) -> int:
    """Parts that are steps of the entry's own progression: they name it ("Third-Tier Warrior" under
    "Warrior"). A list's level groups ("Tier 2 (Levels 2-4)" under "Weapons") name no one."""
    steps = [k for k in kid_titles if _PROGRESSION.search(k)] if title else []
    if not steps:
        return 0  # no title pattern compiled: most entries have no such parts
    own = re.compile(rf"\b{re.escape(title)}\b")
    return sum(1 for k in steps if own.search(k))


# An advancement table opening a section: level, experience and hit dice columns, whose hit dice grow
# one die a level ("Level | Exp. Points | Hit Dice" over "1 0 1d6", "2 1,500 2d6", ...).
_ADVANCE_HEAD = (re.compile(r"\blevel\b", re.I), re.compile(r"\b(?:exp\.?|xp|experience)\b", re.I),
                 re.compile(r"\b(?:hit dice|hd)\b", re.I))
_GROWING_DICE = re.compile(r"\b1d(\d+)\b[\s\S]{0,200}?\b2d\1\b[\s\S]{0,200}?\b3d\1\b")
ADVANCE_CHARS = 800


def advancement_table(body: str) -> bool:
    head = body[:ADVANCE_CHARS]
    return folded_has(head, "level") and all(rx.search(head) for rx in _ADVANCE_HEAD) and bool(_GROWING_DICE.search(head))


CLASS_KID_HEADS = 4  # how many of a class's first parts class_shape reads for its hit points


def class_shape(title: str, body: str, kid_titles: list[str], kid_heads: list[str]) -> bool:
    """Hit points stated for the class, with feature or advancement parts below it, or parts that are
    the steps of its progression ("First-Tier Warrior" … "Sixth-Tier Warrior"), or an advancement
    table of its own opening its text, under a name that is not one of the table's columns."""
    if progression_steps(title, kid_titles) >= PROGRESSION_STEPS:
        return True
    if advancement_table(body):  # a heading named for the table's own columns ("Level") heads the table
        return not any(rx.search(title) for rx in _ADVANCE_HEAD)
    parts = sum(1 for k in kid_titles[:6] if _CLASS_PART.match(k))
    if parts == 0:
        return False
    if _CLASS_HP.search(body[:600]):
        return True
    if parts >= 2:
        return True
    return any(_CLASS_HP.search(h) and _CHARACTER_CLASS.search(h) for h in kid_heads[:CLASS_KID_HEADS])
