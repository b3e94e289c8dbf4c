"""Typing any system's book: section context, the genre's type words, table headers, stat-block
and class shape, and the TYPE_FILTER_EMPTY warning when a type filter finds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gmtool.engine import Engine
from gmtool.index.classify import classify
from gmtool.types import Document, Entry


def doc_of(*rows: tuple) -> Document:
    """rows: (title, level, body[, origin[, tags]]); the parent is the nearest lower level."""
    entries: list[Entry] = []
    for row in rows:
        title, level, body = row[:3]
        origin = row[3] if len(row) > 3 else "heading"
        tags = row[4] if len(row) > 4 else None
        parent = next((i for i in range(len(entries) - 1, -1, -1) if entries[i].level < level), None)
        entries.append(Entry(title=title, level=level, page=1, parent=parent, body=body, origin=origin, tags=tags))
    return Document(format="pdf", title=None, pages=1, entries=entries)


def types(doc: Document) -> dict[str, str | None]:
    classify(doc)
    return {e.title: e.content_type for e in doc.entries}


@pytest.mark.parametrize(
    ("section", "origin", "body", "want"),
    [
        ("Bestiary", "row", "2 Bite (1d6) and a nasty smell.", "monster"),
        ("Adversaries", "row", "3 Claws (1d4).", "monster"),
        ("Grimoire", "runin", "A Nearby target falls asleep - 1hr.", "spell"),
        ("Rituals", "runin", "The caster blesses an ally.", "spell"),
        ("Miracles", "runin", "The faithful are healed.", "spell"),
        ("Gear", "row", "5 - carry more", "item"),
        ("Loot", "line", "50 coins, 1 weight", "item"),
        ("Debilities", "runin", "You can't exert much force.", "condition"),
        ("Talents", "runin", "You gain +1 to hit with bows.", "feat"),
        ("Ancestries", "heading", "Long-lived folk of the forest, keen of eye and light of step. " * 2, "race"),
        ("Kin", "heading", "Small folk of the hills who like their comforts and their pipes. " * 2, "race"),
        ("Communities", "heading", "You grew up among river traders and learned to haggle. " * 2, "background"),
        ("Playbooks", "heading", "You fight with blade and shield in the front line. " * 5, "class"),
    ],
)
def test_section_words_of_other_systems_map_onto_the_ten_types(section, origin, body, want):
    doc = doc_of(("Chapter", 1, "Some prose about the game and how it is played."), (section, 2, ""), ("Thing", 3, body, origin))
    assert types(doc)["Thing"] == want


def test_a_table_header_outranks_the_section_it_sits_in():
    doc = doc_of(
        ("Arcane Spells", 1, "Fireball : boom.\nCREATURE HD SPECIAL\nFire Beetle 1 glows\nOgre 4 big"),
        ("Fireball", 2, "Boom.", "runin"),
        ("Fire Beetle", 2, "1 glows", "row"),
        ("Ogre", 2, "4 big", "row"),
    )
    got = types(doc)
    assert got["Fireball"] == "spell" and got["Fire Beetle"] == got["Ogre"] == "monster"


def test_stat_block_shape_makes_a_monster_anywhere_and_rules_about_monsters_stay_rules():
    doc = doc_of(
        ("Monsters", 1, "Great heroes need horrendous antagonists."),
        ("Using Monsters", 2, "A monster is any living thing that stands in the characters' way."),
        ("Cavern Dwellers", 1, ""),
        ("Goblin", 2, "Spear (d6 damage) 3 HP 1 Armor\nClose, Reach\nInstinct: To steal", "heading", ["Horde", "Small"]),
        ("Spear", 3, "Close, Reach", "line", ["(d6 damage) 3 HP 1 Armor"]),
        ("Folk of the Realm", 1, ""),
        ("Acolyte", 2, "\u201cScrub the floor, they told me.\u201d Instinct: To serve dutifully"),
    )
    got = types(doc)
    assert got["Goblin"] == got["Acolyte"] == "monster"
    assert got["Spear"] is None  # an attack line inside the stat block
    assert got["Using Monsters"] == "rule" and got["Monsters"] == "rule"


def test_class_shape_beats_stat_shape_and_advanced_moves_are_feats():
    doc = doc_of(
        ("Warrior", 1, "Starting HP : d10 + 4 HP Per Level/Resting : 1d10 Attack Damage : 1d8"),
        ("Special Features", 2, "Once per hour a Warrior can regain d8 lost HP."),
        ("Leveling Up", 2, "Roll to see if attributes increase."),
        ("The Bard", 1, "The poems say an adventurer's life is all open roads."),
        ("Starting Moves", 2, "Choose a race and gain the corresponding move."),
        ("Arcane Art", 3, "When you weave a performance into a basic spell, roll+Cha."),
        ("Advanced Moves", 2, "When you gain a level from 2-5, choose from these moves."),
        ("Healing Song", 3, "When you heal with arcane art, you heal +1d8 damage."),
        ("Requires", 3, "Healing Song"),
    )
    got = types(doc)
    assert got["Warrior"] == got["The Bard"] == "class"
    assert got["Healing Song"] == "feat"
    assert got["Arcane Art"] is None and got["Requires"] is None  # a class's own features, a label
    assert got["Special Features"] is None and got["Starting Moves"] is None


def test_lists_and_their_labels_are_not_things():
    doc = doc_of(
        ("Equipment", 1, "The tombs of the world are filled with useful items."),
        ("Weapons", 2, "Weapons don't kill monsters, people do."),
        ("Weapon Tags", 3, "Weapons may have tags that describe them."),
        ("Weapon List", 3, ""),
        ("Crossbow", 4, "Bundle of Arrows 3 ammo", "line", ["near", "35 coins", "3 weight"]),
        ("Hirelings", 1, "Hirelings are easy to make."),
        ("Tracker", 2, "A tracker finds the trail.", "runin"),
    )
    got = types(doc)
    assert got["Crossbow"] == "item"
    assert got["Weapons"] is None and got["Weapon List"] is None and got["Weapon Tags"] != "item"
    assert got["Tracker"] is None  # a run-in outside any listing section


def test_context_does_not_add_a_type_the_book_prints_in_its_own_format():
    spells = tuple((f"Zap {i}", 2, "1st-level evocation\nCasting Time: 1 action") for i in range(5))
    doc = doc_of(
        ("Spell Descriptions", 1, ""),
        *spells,
        ("Casting Spells", 1, "How casting works."),
        ("Range", 2, "The target of a spell must be within range.", "runin"),
        ("Cleric Spells", 1, ""),
        ("Bless", 2, "Allies gain +1.", "runin"),
    )
    got = types(doc)
    assert got["Zap 0"] == "spell"
    assert got["Range"] is None and got["Bless"] is None


# --- through a scanned library ----------------------------------------------------------

BOOK = """# Bestiary

Monsters of the deep places.

## Goblin

Spear (d6 damage) 3 HP 1 Armor

Instinct: To steal shiny things.

## Using Monsters

A monster is any living thing that stands in the characters' way.

# Grimoire

## Sleep

The caster puts a target to sleep for an hour.

# Debilities

## Weak

You can't exert much force; take -1 to Strength rolls.

# Credits

Written by someone, with thanks to many friends.
"""

OTHER = """# Playing the Game

You roll two dice and add your stat when the outcome is uncertain.

## Harm

Harm takes away your hit points until you rest.
"""


@pytest.fixture
def genre_lib(tmp_path: Path) -> Engine:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "hack.md").write_text(BOOK, encoding="utf-8")
    (lib / "plain.md").write_text(OTHER, encoding="utf-8")
    engine = Engine(lib)
    engine.scan(embed=False)
    return engine


def test_markdown_book_typed_by_chapter_context(genre_lib: Engine) -> None:
    sid = next(m.source_id for m in genre_lib.sources() if m.file == "hack.md")
    got = {n["title"]: n["content_type"] for n in genre_lib.toc(sid, types=None).entries for n in [n, *n["children"]]}
    assert got["Goblin"] == "monster" and got["Sleep"] == "spell" and got["Weak"] == "condition"
    assert got["Using Monsters"] == "rule" and got["Credits"] is None
    share = next(m.typed_share for m in genre_lib.sources() if m.source_id == sid)
    assert share == 0.5  # Goblin, Using Monsters, Sleep, Weak of 8 entries


def test_type_filter_that_empties_the_result_says_so(genre_lib: Engine) -> None:
    empty = genre_lib.search("goblin", types=["background"])
    assert empty.results == []
    warning = next(w for w in empty.warnings if w.startswith("TYPE_FILTER_EMPTY"))
    for m in genre_lib.sources():
        assert m.source_id in warning
    assert "drop the type filter" in warning
    found = genre_lib.search("goblin", types=["monster"])
    assert found.results and not any(w.startswith("TYPE_FILTER_EMPTY") for w in found.warnings)
    # a book without monsters, searched alone, is named
    plain = next(m.source_id for m in genre_lib.sources() if m.file == "plain.md")
    alone = genre_lib.search("goblin", types=["monster"], sources=[plain])
    assert any(w.startswith("TYPE_FILTER_EMPTY") and plain in w for w in alone.warnings)


def test_a_state_its_own_text_puts_characters_in_is_a_condition():
    doc = doc_of(
        ("Optional Rules", 1, "Rules you may add to the game as you see fit."),
        ("Paralysed", 2, "Some monsters cause PCs to become Paralysed. Whilst Paralysed a character cannot move."),
        ("Blocking", 2, "Once per turn, when an enemy moves nearby, you may block it."),
    )
    got = types(doc)
    assert got["Paralysed"] == "condition" and got["Blocking"] == "rule"


def test_a_header_of_numbers_about_a_kind_names_no_kind() -> None:
    """"Armor Values" heads a column of numbers, not of armour; "Item | Value" still names items (the measure must
    be the whole first cell, and only a Markdown header row shows where that cell ends)."""
    from gmtool.index import genre

    assert genre.header_type("Armor Values  Power Point Cost") is None
    assert genre.header_type("Armor Class  Cost") is None
    assert genre.header_type("Item  Value  Weight") == "item"
    assert genre.header_type("Item Value Weight") == "item"
    assert genre.header_type("Armor  Cost") == "item"
