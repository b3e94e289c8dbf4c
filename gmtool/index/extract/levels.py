"""Spell and move levels from the layout: a list grouped under level headings ("Level 3",
"3rd Level", "Third-Level Spells", "Cantrips") gives each entry of a group its level, as a tag
("Level 3", "Cantrip") that the field parser reads. An entry whose own tag line names another
level than its group's (Dungeon World prints every wizard spell's level on its title line, and
its only bookmark is "Cantrips") does not belong to that group: it moves up to the group's
parent. A name ending with the group's word ("Light Cantrip" under "Cantrips") is cut there.
"""

from __future__ import annotations

import re

from gmtool.types import Entry

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
_ORDINAL = "|".join(_ORDINALS)
_GROUP = re.compile(
    rf"^(?:level\s+(?P<a>\d)|(?P<b>\d)(?:st|nd|rd|th)[- ]level|(?P<c>{_ORDINAL})[- ]level)\b"
    r"(?:\s+(?:spells?|moves?|rituals?|prayers?))?$"
    r"|^(?P<zero>cantrips?|orisons?)$",
    re.IGNORECASE,
)
_OWN = re.compile(r"^level\s+(\d)$|^(cantrip)$", re.IGNORECASE)


def group_level(title: str) -> int | None:
    """The level a group heading names: "Level 3" -> 3, "3rd Level" -> 3, "Cantrips" -> 0."""
    m = _GROUP.match(title.strip())
    if not m:
        return None
    if m.group("zero"):
        return 0
    if m.group("c"):
        return _ORDINALS.index(m.group("c").lower()) + 1
    return int(m.group("a") or m.group("b"))


def own_level(e: Entry) -> int | None:
    """The level an entry's own tags name ("Level 1"; "Cantrip" is 0)."""
    for t in e.tags or ():
        m = _OWN.match(t.strip())
        if m:
            return 0 if m.group(2) else int(m.group(1))
    return None


def _singular(word: str) -> str:
    return word[:-1] if word.lower().endswith("s") else word


def apply_levels(entries: list[Entry]) -> None:
    """Tag the members of level groups with their level, in place (see the module docstring)."""
    groups = {k: lvl for k, e in enumerate(entries) if (lvl := group_level(e.title)) is not None}
    if not groups:
        return
    for e in entries:
        g = e.parent
        if g not in groups:
            continue
        assert g is not None
        word = _singular(entries[g].title.split()[-1])
        if len(e.title.split()) > 1 and e.title.split()[-1].lower() == word.lower():
            e.title = e.title.rsplit(" ", 1)[0]
            e.tags = [word.capitalize(), *(e.tags or [])]
        own = own_level(e)
        if own is None:
            tag = "Cantrip" if groups[g] == 0 else f"Level {groups[g]}"
            e.tags = [tag, *(e.tags or [])]
        elif own != groups[g]:
            e.parent = entries[g].parent
    for e in entries:
        e.level = entries[e.parent].level + 1 if e.parent is not None else 1
