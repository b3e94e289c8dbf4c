"""Which typed fields exist, of what kind, and which a table shows first: the contract between
the parsers (index side), `--where` (query side) and the presenters."""

from __future__ import annotations

FIELD_TYPES: dict[str, str] = {
    # spell
    "level": "int",
    "school": "str",
    "casting_time": "str",
    "range": "str",
    "duration": "str",
    "concentration": "bool",
    "ritual": "bool",
    # monster
    "size": "str",
    "type": "str",
    "alignment": "str",
    "armor_class": "int",
    "hit_points": "int",
    "challenge": "float",
    # item
    "category": "str",
    "rarity": "str",
    "attunement": "bool",
    # class ("list" fields hold several lower-case words; `=` means "one of them is")
    "hit_die": "int",
    "armor": "list",
    "saving_throws": "list",
    "spellcasting": "str",
    "primary_ability": "list",
    # any type: a tag line printed after the name ("Solitary, Huge, Construct")
    "tags": "list",
}

KEY_FIELDS: dict[str, list[str]] = {
    "spell": ["level", "school"],
    "monster": ["challenge", "type"],
    "item": ["rarity"],
    "class": ["hit_die", "armor"],
}
