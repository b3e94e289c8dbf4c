"""Typed fields parsed from an entry's own text: spell level, monster CR, item rarity, class hit die.

Everything here reads the book's own lines ("3rd-level evocation", "Challenge 5 (1,800 XP)",
"Wondrous item, rare (requires attunement)"); nothing is looked up in a name list and
nothing is guessed, so a field the text does not state is None. Both the 2014 SRD 5.1
wording and the SRD 5.2 wording ("Level 3 Evocation (...)", "AC 17", "CR 5 (XP 1,800; ...)")
are understood. Pure Python and cheap to import.
"""

from __future__ import annotations

import re
from typing import Any

from gmtool.fieldspec import FIELD_TYPES, KEY_FIELDS  # noqa: F401 - re-exported for the parsers' callers
from gmtool.types import Document, Entry

# How far into a body the header lines (spell line, size/type line, item line) may sit.
_HEAD_LINES = 8
# Spell labels follow the spell line within a few lines; a monster's CR can sit far below.
_SPELL_LINES = 24
_MONSTER_LINES = 80

# --- text clean-up -------------------------------------------------------------------

# A hyphen followed by invisible/variant hyphens (SRD 5.1 stores "-\xad\u2010\u2011").
_HYPHEN_RUN = re.compile(r"[-\u2010\u2011\u2012\u2013\u2212][\u00ad\u2010\u2011\u2012\u2013\u2212]+")
_HYPHENS = str.maketrans(
    {"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2212": "-", "\u00ad": None}
)
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u205f\u3000]+")
_MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"(?<!\w)[*_]+|[*_]+(?!\w)")
_MARKUP = re.compile(r"[\[<*_]")
_BULLET = re.compile(r"^(?:[-+•>]\s+)+")
_BULLETS = ("-", "+", "•", ">")  # what _BULLET's lines open with


def _clean_line(line: str) -> str:
    # Each pass only where it can change something: the hyphen variants and the odd spaces are not
    # ASCII, an ASCII space run needs two spaces or a tab, a bullet opens the line.
    ascii_ = line.isascii()
    if not ascii_:
        line = _HYPHEN_RUN.sub("-", line).translate(_HYPHENS)
    if _MARKUP.search(line):  # most lines (all of a PDF's) carry no markup: three passes saved
        line = _MD_LINK.sub(r"\1", line)
        line = _HTML_TAG.sub(" ", line)
        line = _EMPHASIS.sub("", line)
    if not ascii_ or "  " in line or "\t" in line:
        line = _SPACES.sub(" ", line)
    line = line.strip()
    if line.startswith(_BULLETS):
        line = _BULLET.sub("", line)
    return line.replace(" ,", ",").replace(" :", ":").strip()


def _lines(body: str, limit: int) -> list[str]:
    out: list[str] = []
    for raw in body.replace("\r\n", "\n").replace("\r", " ").split("\n"):
        line = _clean_line(raw)
        if line:
            out.append(line)
            if len(out) >= limit:
                break
    return out


def _skip_title(lines: list[str], title: str) -> list[str]:
    """Drop a leading repeat of the heading, which some extractors keep in the body."""
    t = _clean_line(title).lower()
    if lines and t and lines[0].lower() == t:
        return lines[1:]
    return lines


# --- spells ----------------------------------------------------------------------------

_SPELL_2014 = re.compile(
    r"^(?P<level>\d)\s*(?:st|nd|rd|th)[- ]?level\s+(?P<school>[a-z]+)(?P<ritual>\s*\(ritual\))?\s*$",
    re.IGNORECASE,
)
_CANTRIP_2014 = re.compile(r"^(?P<school>[a-z]+)\s+cantrip(?P<ritual>\s*\(ritual\))?\s*$", re.IGNORECASE)
# SRD 5.2: "Level 3 Evocation (Sorcerer, Wizard)" / "Evocation Cantrip (Sorcerer, Wizard)";
# the class list may wrap onto the next line, so the closing parenthesis is optional.
_SPELL_2024 = re.compile(r"^level\s+(?P<level>\d)\s+(?P<school>[a-z]+)(?:\s*\([^)]*\)?)?\s*$", re.IGNORECASE)
_CANTRIP_2024 = re.compile(r"^(?P<school>[a-z]+)\s+cantrip(?:\s*\([^)]*\)?)?\s*$", re.IGNORECASE)
_NOT_SCHOOLS = {"spell", "spells", "slot", "slots", "or", "and", "a", "the", "level", "caster", "character"}

_LABEL = re.compile(r"(?:^|\s)(casting\s*time|range|components|duration)\s*:\s*", re.IGNORECASE)
_LABEL_KEYS = {
    "castingtime": "casting_time",
    "range": "range",
    "components": "components",
    "duration": "duration",
}


def _spell_line(line: str) -> tuple[int, str, bool] | None:
    for rx, cantrip in (
        (_SPELL_2014, False),
        (_CANTRIP_2014, True),
        (_SPELL_2024, False),
        (_CANTRIP_2024, True),
    ):
        m = rx.match(line)
        if m and m.group("school").lower() not in _NOT_SCHOOLS:
            level = 0 if cantrip else int(m.group("level"))
            ritual = "ritual" in m.groupdict() and bool(m.group("ritual"))
            return level, m.group("school").lower(), ritual
    return None


def _labels(lines: list[str]) -> dict[str, str]:
    """Read "Casting Time:", "Range:", "Components:", "Duration:" values, joining wrapped lines."""
    found: dict[str, str] = {}
    current: str | None = None
    for line in lines:
        parts = list(_LABEL.finditer(line))
        if not parts:
            if current is None:
                continue
            value = found[current]
            # A wrapped value: empty so far, ends mid-phrase, an open parenthesis, or a
            # lower-case continuation. Anything else is the description starting.
            if (
                not value
                or value.endswith((",", "(", " or", " and"))
                or value.count("(") > value.count(")")
                or (line[:1].islower() and current != "duration")
            ):
                found[current] = f"{value} {line}".strip()
                continue
            current = None
            if len(found) == len(_LABEL_KEYS):
                break
            continue
        for i, m in enumerate(parts):
            key = _LABEL_KEYS[re.sub(r"\s+", "", m.group(1).lower())]
            end = parts[i + 1].start() if i + 1 < len(parts) else len(line)
            if key not in found:
                found[key] = line[m.end() : end].strip()
                current = key
            else:
                current = None
    return {k: v.strip(" ;") for k, v in found.items()}


def _parse_spell(lines: list[str]) -> dict[str, Any] | None:
    level = school = None
    ritual = False
    start = 0
    for i, line in enumerate(lines[:_HEAD_LINES]):
        got = _spell_line(line)
        if got:
            level, school, ritual = got
            start = i + 1
            break
    labels = _labels(lines[start:])
    if level is None and not labels:
        return None
    casting_time = labels.get("casting_time") or None
    duration = labels.get("duration") or None
    if casting_time and re.search(r"\bor\s+ritual\b", casting_time, re.IGNORECASE):
        ritual = True  # SRD 5.2: "Casting Time: 1 minute or Ritual"
    concentration = (
        bool(duration and re.match(r"concentration\b", duration, re.IGNORECASE)) if duration else None
    )
    return {
        "level": level,
        "school": school,
        "casting_time": casting_time,
        "range": labels.get("range") or None,
        "duration": duration,
        "concentration": concentration,
        "ritual": ritual if (level is not None or casting_time) else None,
    }


# --- monsters --------------------------------------------------------------------------

_SIZES = "tiny|small|medium|large|huge|gargantuan"
_SIZE_LINE = re.compile(
    rf"^(?P<size>(?:{_SIZES})(?:\s+or\s+(?:{_SIZES}))?)\s+(?P<type>(?:[^,(]|\([^)]*\))+?)\s*,\s*(?P<align>.+?)\s*$",
    re.IGNORECASE,
)
_AC = re.compile(r"^(?:armor\s+class|ac)\s*:?\s*(\d+)\b", re.IGNORECASE)
_HP = re.compile(r"^(?:hit\s+points|hp)\s*:?\s*(\d+)\b", re.IGNORECASE)
_CR_XP = re.compile(
    r"\b(?:challenge(?:\s+rating)?|cr)\s*:?\s*(\d+(?:\s*/\s*\d+)?)\s*\(\s*(?:xp\s*[\d,]+|[\d,]+\s*xp)",
    re.IGNORECASE,
)
_HP_AFTER = re.compile(r"\b(\d+)\s*(?:hp|hit points)\b", re.IGNORECASE)
_ARMOR_AFTER = re.compile(r"\b(\d+)\s*armou?r\b", re.IGNORECASE)
_CR_LINE = re.compile(r"^(?:challenge(?:\s+rating)?|cr)\s*:?\s*(\d+(?:\s*/\s*\d+)?)\b", re.IGNORECASE)


def _fraction(text: str) -> float | None:
    text = text.replace(" ", "")
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            return int(num) / int(den)
        return float(text)
    except (ValueError, ZeroDivisionError):
        return None


def _monster_type(raw: str) -> str | None:
    t = re.sub(r"\([^)]*\)?", " ", raw).strip().lower()
    m = re.match(rf"swarm\s+of\s+(?:(?:{_SIZES})\s+)?(\w+)", t)
    if m:
        t = m.group(1)
        if t.endswith("ies"):
            t = t[:-3] + "y"
        elif t.endswith("s") and not t.endswith("ss"):
            t = t[:-1]
    t = re.sub(r"\s+", " ", t).strip()
    return t or None


def _parse_monster(lines: list[str]) -> dict[str, Any] | None:
    size = mtype = alignment = None
    for line in lines[:_HEAD_LINES]:
        m = _SIZE_LINE.match(line)
        if m and len(line) <= 100:
            size = re.sub(r"\s+", " ", m.group("size")).lower()
            mtype = _monster_type(m.group("type"))
            alignment = m.group("align").lower()
            break
    ac = hp = None
    challenge = None
    for line in lines:
        if ac is None and (m := _AC.match(line)):
            ac = int(m.group(1))
        elif hp is None and (m := _HP.match(line)):
            hp = int(m.group(1))
    if hp is None:  # other systems' stat lines: "Bite (d8 damage) 10 HP 3 Armor"
        head = " ".join(lines[:3])
        if (m := _HP_AFTER.search(head)) is not None:
            hp = int(m.group(1))
            if ac is None and (m := _ARMOR_AFTER.search(head)) is not None:
                ac = int(m.group(1))
    text = "\n".join(lines)
    m = _CR_XP.search(text)
    if m is None:
        m = next((x for x in (_CR_LINE.match(line) for line in lines) if x), None)
    if m:
        challenge = _fraction(m.group(1))
    if size is None and ac is None and hp is None and challenge is None:
        return None
    return {
        "size": size,
        "type": mtype,
        "alignment": alignment,
        "armor_class": ac,
        "hit_points": hp,
        "challenge": challenge,
    }


# --- magic items -----------------------------------------------------------------------

_RARITIES = ("very rare", "uncommon", "common", "rare", "legendary", "artifact")
_RARITY_RX = re.compile(r"\b(very\s+rare|uncommon|common|rare|legendary|artifact)\b", re.IGNORECASE)
_ITEM_LINE = re.compile(
    r"^(?P<cat>[a-z][a-z' -]{1,40}?)\s*(?P<paren>\([^)]*\))?\s*,\s*(?P<rest>.+)$", re.IGNORECASE
)
_RARITY_START = re.compile(
    r"^(?:very\s+rare|uncommon|common|rare|legendary|artifact|rarity\s+varies|rarity\s+by\b|varies)\b",
    re.IGNORECASE,
)


def _parse_item(lines: list[str]) -> dict[str, Any] | None:
    head = lines[:_HEAD_LINES]
    for i, line in enumerate(head):
        m = _ITEM_LINE.match(line)
        if (not m or not _RARITY_START.match(m.group("rest"))) and i + 1 < len(head):
            # "Weapon (any sword that deals slashing damage), very\nrare (requires ...)"
            m = _ITEM_LINE.match(f"{line} {head[i + 1]}")
            i += 1
        if not m or not _RARITY_START.match(m.group("rest")):
            continue
        rest = m.group("rest")
        # "(requires attunement by a\n wizard)": join the wrapped remainder.
        if rest.count("(") > rest.count(")") and i + 1 < len(head):
            rest = f"{rest} {head[i + 1]}"
        # Parentheses after the rarity are attunement notes or "(+1)" bonuses, not rarities.
        bare = re.sub(r"\([^)]*\)?", " ", rest)
        found = {re.sub(r"\s+", " ", r.lower()) for r in _RARITY_RX.findall(bare)}
        if (
            re.match(r"(?:rarity\s+)?var(?:ies|y)\b|rarity\s+by\b", bare.strip(), re.IGNORECASE)
            or len(found) > 1
        ):
            rarity = "varies"
        elif found:
            rarity = found.pop()
        else:
            continue
        return {
            "category": re.sub(r"\s+", " ", m.group("cat")).strip().lower(),
            "rarity": rarity,
            "attunement": bool(re.search(r"requires\s+attunement", rest, re.IGNORECASE)),
        }
    return None


# --- classes ---------------------------------------------------------------------------

# How much of a class's section (its own text and its features below it) is read: the
# hit die, proficiencies and spellcasting ability all sit in the first features.
_CLASS_CHARS = 60000
_ABILITIES = ("strength", "dexterity", "constitution", "intelligence", "wisdom", "charisma")
_ABILITY_RX = re.compile(r"\b(strength|dexterity|constitution|intelligence|wisdom|charisma|str|dex|con|int|wis|cha)\b")
_HIT_DIE = re.compile(
    r"\bhit\s+(?:dice|die|point\s+die)\s*:?\s*(?:1\s*)?d\s*(\d{1,2})\b"
    r"|\bstarting\s+hp\s*:?\s*1?d(\d{1,2})\b",
    re.IGNORECASE,
)
# A label anywhere on a line (PDF columns can run two label lines together); its value ends
# at the next label of the proficiency block.
_ARMOR = re.compile(r"(?:^|\s)armou?r(?:\s+training|\s+proficienc(?:y|ies))?\s*:?\s+(?P<value>[^\n]+)", re.IGNORECASE)
_SAVES = re.compile(r"(?:^|\s)saving\s+throws?(?:\s+proficiencies)?\s*:?\s+(?P<value>[^\n]+)", re.IGNORECASE)
_PRIMARY = re.compile(r"(?:^|\s)primary\s+abilit(?:y|ies)\s*:?\s+(?P<value>[^\n]+)", re.IGNORECASE)
_NEXT_LABEL = re.compile(r"\b(weapons?|tools|saving|skills?|hit\s+point|starting|armou?r\s+training)\b", re.IGNORECASE)
_CASTING = re.compile(
    r"\b(strength|dexterity|constitution|intelligence|wisdom|charisma)\s+is\s+(?:your|the)\s+spellcasting\s+ability\s+for\s+your\b"
    r"|^\s*spellcasting\s+ability\s*:\s*(strength|dexterity|constitution|intelligence|wisdom|charisma)\b",
    re.IGNORECASE | re.MULTILINE,
)
# A label that starts its line ("Armor: All armor, shields") is the field itself; the loose form
# above also matches prose ("wears heavy armor and stands…"), so it is only the fallback.
_ARMOR_LINE = re.compile(r"^\s*armou?r(?:\s+training|\s+proficienc(?:y|ies))?\s*:\s*(?P<value>[^\n]+)",
                         re.IGNORECASE | re.MULTILINE)


def _abilities(text: str) -> list[str]:
    out: list[str] = []
    for m in _ABILITY_RX.finditer(text.lower()):
        name = next(a for a in _ABILITIES if a.startswith(m.group(1)))
        if name not in out:
            out.append(name)
    return out


def _value(m: re.Match[str] | None) -> str | None:
    if m is None:
        return None
    value = m.group("value")
    cut = _NEXT_LABEL.search(value, 1)
    return value[: cut.start()] if cut else value


def _armor(text: str) -> list[str]:
    """Armour proficiencies as categories: "All armor, shields" -> light, medium, heavy, shields."""
    t = text.lower()
    if re.match(r"\s*none\b", t):
        return []
    if re.match(r"\s*(any\s+and\s+all\b|all\s*$)", t):
        return ["light", "medium", "heavy", "shields"]  # The Black Hack: "Weapons & Armor : Any and All"
    out: list[str] = []
    if re.search(r"\ball\s+armou?r\b", t):
        out += ["light", "medium", "heavy"]
    out += [w for w in ("light", "medium", "heavy") if re.search(rf"\b{w}\b", t) and w not in out]
    if re.search(r"\bshields?\b", t):
        out.append("shields")
    return out


def _parse_class(text: str) -> dict[str, Any] | None:
    """Hit die, armour, saving throws, spellcasting ability and primary ability of a class.

    `text` is the class's whole section (its features included), with lines cleaned; a class
    that states no hit die is not read at all, so prose about classes yields nothing.
    """
    m = _HIT_DIE.search(text)
    if m is None:
        return None
    armor = _value(_ARMOR_LINE.search(text) or _ARMOR.search(text))
    saves = _value(_SAVES.search(text))
    primary = _value(_PRIMARY.search(text))
    casting = _CASTING.search(text)
    return {
        "hit_die": int(m.group(1) or m.group(2)),
        "armor": _armor(armor) if armor is not None else None,
        "saving_throws": (_abilities(saves) or None) if saves else None,
        "spellcasting": (casting.group(1) or casting.group(2)).lower() if casting else "none",
        "primary_ability": (_abilities(primary) or None) if primary else None,
    }


def _section_text(entries: list[Entry], index: int, limit: int) -> str:
    """A class's body and the text after it, up to the next class or a higher heading.

    Not only the class's children: heading levels slip in real books (a level-2 "As a
    Multiclass Character" ends the class's subtree early), and the class's features follow
    it anyway. Subclass sections are left out: their own spellcasting is not the class's.
    """
    top = entries[index]
    parts = [top.body]
    size = len(top.body)
    skipped: set[int] = set()
    for j in range(index + 1, len(entries)):
        e = entries[j]
        if e.content_type == "class" or e.level < top.level or size >= limit:
            break
        if e.content_type == "subclass" or e.parent in skipped:
            skipped.add(j)
            continue
        parts.append(e.title)
        parts.append(e.body)
        size += len(e.body)
    return "\n".join(parts)


# --- entry point -----------------------------------------------------------------------


def parse_fields(content_type: str | None, title: str, body: str) -> dict[str, Any] | None:
    """Typed fields for a spell, monster or item entry; None for other types or no match."""
    if content_type == "spell":
        return _parse_spell(_skip_title(_lines(body, _SPELL_LINES + 1), title))
    if content_type == "monster":
        return _parse_monster(_skip_title(_lines(body, _MONSTER_LINES + 1), title))
    if content_type == "item":
        return _parse_item(_skip_title(_lines(body, _HEAD_LINES + 1), title))
    if content_type == "class":
        return _parse_class("\n".join(_lines(body, 10**6)))
    return None


_TAG_LEVEL = re.compile(r"^level (\d)$")


def _tag_level(fields: dict[str, Any], tags: list[str]) -> dict[str, Any]:
    """A spell's level from its tag line or its level group ("Level 3", "Cantrip"), when its
    text states none (Dungeon World prints "Fireball Level 3 Evocation")."""
    for t in tags:
        m = _TAG_LEVEL.match(t)
        if m or t == "cantrip":
            return {**fields, "level": int(m.group(1)) if m else 0}
    return fields


def set_fields(doc: Document) -> None:
    """Fill `fields` on every entry of a classified document (in place).

    A class's fields are read from its whole section, since books state the hit die and
    proficiencies in features below the class heading; other types read their own body.
    """
    entries = doc.entries
    for i, e in enumerate(entries):
        body = _section_text(entries, i, _CLASS_CHARS) if e.content_type == "class" else e.body
        fields = parse_fields(e.content_type, e.title, body)
        if e.tags and e.content_type is not None:  # "Horde, Small": --where tags=small
            words = [re.sub(r"\s+", " ", t).strip().lower() for t in e.tags if t.strip()]
            fields = {**(fields or {}), "tags": words}
            if e.content_type == "spell" and fields.get("level") is None:
                fields = _tag_level(fields, words)
        e.fields = fields
    _inherit_variants(entries)


# the types whose variants a book describes against a base entry
_VARIANT_TYPES = ("monster", "spell", "item")
# stated fields that make an entry's own stat line (fewer is prose, or nothing)
_OWN_BLOCK = 2


def _name_key(title: str) -> frozenset[str]:
    """A title's stemmed content words, after a "Label:" prefix: "Variant: Insect Swarms" and
    "Swarm of Insects" have the same key."""
    from gmtool.textnorm import content_tokens

    return frozenset(content_tokens(title.rsplit(": ", 1)[-1]))


def _stated(fields: dict[str, Any] | None) -> int:
    return sum(v is not None for k, v in (fields or {}).items() if k != "tags")


def _inherit_variants(entries: list[Entry]) -> None:
    """Entries that state at most one of their type's fields, inside a section that names an
    entry of that type ("Variant: Insect Swarms" after "Swarm of Insects"), take that base
    entry's fields: a variant is described as its base with changes, and a lone value read
    from its prose ("reduced to 0 hit points") is no stat line."""
    bases: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
    for e in entries:
        if e.content_type in _VARIANT_TYPES and _stated(e.fields) >= _OWN_BLOCK:
            bases.setdefault((e.content_type, _name_key(e.title)), e.fields or {})
    if not bases:
        return
    for e in entries:
        if e.content_type not in _VARIANT_TYPES or e.parent is None or _stated(e.fields) >= _OWN_BLOCK:
            continue
        section = entries[e.parent]
        if section.content_type == e.content_type:
            continue  # a part of an entry (a trait, a version), not a variant named by a section
        base = bases.get((e.content_type, _name_key(section.title)))
        if base is not None and _name_key(e.title) != _name_key(section.title):
            tags = (e.fields or {}).get("tags")
            e.fields = {**base, "tags": tags} if tags else {k: v for k, v in base.items() if k != "tags"}
