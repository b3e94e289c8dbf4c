"""parse_fields: typed fields read from an entry's own text, in every line style we meet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gmtool.index.fields import FIELD_TYPES, KEY_FIELDS, parse_fields

# SRD 5.1 PDF text as pypdfium2 gives it: each word gap is tab + CR + space + no-break space,
# each in-word hyphen is "-" followed by a soft hyphen and two hyphen variants.
GAP = "\t\r \u00a0"
HY = "-\u00ad\u2010\u2011"


# --- spells -----------------------------------------------------------------------------


def test_spell_2014_line_and_labels() -> None:
    body = (
        "3rd-level evocation\n"
        "Classes: Sorcerer, Wizard\n"
        "Casting Time: 1 action\n"
        "Range: 150 feet\n"
        "Components: V, S, M (a tiny ball of bat guano and sulfur)\n"
        "Duration: Instantaneous\n"
        "A bright streak flashes from your pointing finger to a point you choose."
    )
    assert parse_fields("spell", "Fireball", body) == {
        "level": 3,
        "school": "evocation",
        "casting_time": "1 action",
        "range": "150 feet",
        "duration": "Instantaneous",
        "concentration": False,
        "ritual": False,
    }


def test_cantrip_is_level_zero() -> None:
    f = parse_fields("spell", "Fire Bolt", "Evocation cantrip\nCasting Time: 1 action\nRange: 120 feet\n")
    assert f is not None
    assert f["level"] == 0
    assert f["school"] == "evocation"


def test_ritual_and_concentration() -> None:
    body = "1st-level divination (ritual)\nCasting Time: 1 action\nRange: Self\nDuration: Concentration, up to 10 minutes\n"
    f = parse_fields("spell", "Detect Magic", body)
    assert f is not None
    assert (f["level"], f["school"], f["ritual"], f["concentration"]) == (1, "divination", True, True)
    assert f["duration"] == "Concentration, up to 10 minutes"


def test_spell_markdown_emphasis_and_links() -> None:
    body = (
        "*4th-level abjuration*\n\n"
        "**Classes:** [Cleric](#cleric), [Paladin](#paladin)\n\n"
        "**Casting Time:** 1 action\n\n"
        "_Range:_ Touch\n\n"
        "**Components:** V, S\n\n"
        "**Duration:** 8 hours\n\n"
        "You touch a creature and grant it a measure of protection from death."
    )
    f = parse_fields("spell", "Death Ward", body)
    assert f is not None
    assert (f["level"], f["school"], f["range"], f["duration"]) == (4, "abjuration", "Touch", "8 hours")


def test_spell_srd52_formats() -> None:
    body = (
        "*Level 1 Abjuration (Ranger, Wizard)*\n\n"
        "**Casting Time:** 1 minute or Ritual\n\n"
        "**Range:** 30 feet \n\n"
        "**Components:** V, S, M (a bell and silver wire)\n\n"
        "**Duration:** 8 hours\n"
    )
    f = parse_fields("spell", "Alarm", body)
    assert f is not None
    assert (f["level"], f["school"], f["ritual"], f["casting_time"]) == (
        1,
        "abjuration",
        True,
        "1 minute or Ritual",
    )
    g = parse_fields("spell", "Acid Splash", "Evocation Cantrip (Sorcerer, Wizard)\nCasting Time: Action\n")
    assert g is not None
    assert (g["level"], g["school"], g["ritual"]) == (0, "evocation", False)


def test_srd52_class_list_wrapped() -> None:
    body = "Level 5 Conjuration (Bard, Cleric, Druid,\nSorcerer, Wizard)\nCasting Time: Action\nRange: Self\n"
    f = parse_fields("spell", "Teleportation Circle", body)
    assert f is not None
    assert (f["level"], f["school"]) == (5, "conjuration")


def test_spell_noisy_pdf_text() -> None:
    body = (
        f"2nd{HY}level{GAP}evocation\r\n"
        f"Casting{GAP}Time: 1{GAP}action\r\n"
        f"Range:{GAP}60{GAP}feet\r\n"
        f"Components: V,{GAP}M{GAP}(bat{GAP}fur{GAP}and{GAP}a{GAP}drop{GAP}of{GAP}pitch{GAP}or{GAP}\r\n"
        f"piece{GAP}of{GAP}coal)\r\n"
        f"Duration: Concentration,{GAP}up{GAP}to{GAP}10{GAP}minutes\r\n"
        f"Magical{GAP}darkness{GAP}spreads{GAP}from{GAP}a{GAP}point\r\n"
    )
    f = parse_fields("spell", "Darkness", body)
    assert f == {
        "level": 2,
        "school": "evocation",
        "casting_time": "1 action",
        "range": "60 feet",
        "duration": "Concentration, up to 10 minutes",
        "concentration": True,
        "ritual": False,
    }


def test_wrapped_casting_time_is_joined() -> None:
    body = (
        "1st-level abjuration\nCasting Time: 1 reaction, which you take when you are hit by an attack or\n"
        "targeted by the magic missile spell\nRange: Self\nDuration: 1 round\n"
    )
    f = parse_fields("spell", "Shield", body)
    assert f is not None
    assert f["casting_time"].endswith("targeted by the magic missile spell")
    assert f["range"] == "Self"


def test_heading_repeated_in_body_is_skipped() -> None:
    f = parse_fields("spell", "Light", "Light\nEvocation cantrip\nCasting Time: 1 action\n")
    assert f is not None
    assert f["level"] == 0


def test_spell_without_spell_line_is_none() -> None:
    assert (
        parse_fields("spell", "Spellcasting", "Nothing here looks like a spell block.\nJust prose.") is None
    )


def test_spell_level_in_prose_is_not_a_spell_line() -> None:
    body = "When you cast this spell using a\n3rd-level spell slot or higher, the damage increases."
    assert parse_fields("spell", "Upcasting", body) is None


def test_missing_spell_labels_are_none() -> None:
    f = parse_fields("spell", "Odd", "5th-level necromancy\nA terrible spell.")
    assert f is not None
    assert f["level"] == 5
    assert f["casting_time"] is None and f["range"] is None and f["duration"] is None
    assert f["concentration"] is None


# --- monsters ---------------------------------------------------------------------------


def test_monster_2014_stat_block() -> None:
    body = (
        "Large monstrosity, unaligned\n"
        "Armor Class 17 (natural armor)\n"
        "Hit Points 114 (12d10 + 48)\n"
        "Speed 40 ft.\n"
        "STR DEX CON INT WIS CHA\n"
        "18 (+4) 11 (+0) 18 (+4) 7 (-2) 12 (+1) 8 (-1)\n"
        "Senses darkvision 60 ft., passive Perception 11\n"
        "Languages -\n"
        "Challenge 5 (1,800 XP)\n"
    )
    assert parse_fields("monster", "Bulette", body) == {
        "size": "large",
        "type": "monstrosity",
        "alignment": "unaligned",
        "armor_class": 17,
        "hit_points": 114,
        "challenge": 5.0,
    }


@pytest.mark.parametrize(
    ("text", "value"), [("1/4", 0.25), ("1/8", 0.125), ("1/2", 0.5), ("0", 0.0), ("10", 10.0), ("30", 30.0)]
)
def test_challenge_fractions(text: str, value: float) -> None:
    body = f"Small humanoid (goblinoid), neutral evil\nArmor Class 15\nHit Points 7 (2d6)\nChallenge {text} (50 XP)\n"
    f = parse_fields("monster", "Goblin", body)
    assert f is not None
    assert f["challenge"] == value


def test_swarm_and_tags_reduce_to_base_type() -> None:
    f = parse_fields(
        "monster", "Swarm of Bats", "Medium swarm of Tiny beasts, unaligned\nChallenge 1/4 (50 XP)\n"
    )
    assert f is not None
    assert (f["size"], f["type"]) == ("medium", "beast")
    g = parse_fields("monster", "Imp", "Tiny fiend (devil, shapechanger), lawful evil\nArmor Class 13\n")
    assert g is not None
    assert (g["type"], g["alignment"]) == ("fiend", "lawful evil")


def test_monster_markdown_bold_labels() -> None:
    body = (
        "*Huge dragon, chaotic evil*\n\n**Armor Class** 19 (natural armor)\n\n"
        "**Hit Points** 195 (17d12 + 85)\n\n<table><tr><td>23 (+6)</td></tr></table>\n\n"
        "**Challenge** 14 (11,500 XP)\n"
    )
    f = parse_fields("monster", "Adult Black Dragon", body)
    assert f is not None
    assert (f["type"], f["armor_class"], f["hit_points"], f["challenge"]) == ("dragon", 19, 195, 14.0)


def test_monster_srd52_formats() -> None:
    body = (
        "*Huge Dragon (Chromatic), Chaotic Evil*\n\n"
        "- **Armor Class:** 19\n- **Hit Points:** 195 (17d12 + 85)\n- **Speed:** 40 ft.\n\n"
        "- **CR** 14 (XP 11,500, or 13,000 in lair)\n"
    )
    f = parse_fields("monster", "Adult Black Dragon", body)
    assert f == {
        "size": "huge",
        "type": "dragon",
        "alignment": "chaotic evil",
        "armor_class": 19,
        "hit_points": 195,
        "challenge": 14.0,
    }
    pdf = "Large Monstrosity, Unaligned\nAC 17 Initiative +3 (13)\nHP 114 (12d10 + 48)\nCR 5 (XP 1,800; PB +3)\n"
    g = parse_fields("monster", "Bulette", pdf)
    assert g is not None
    assert (g["armor_class"], g["hit_points"], g["challenge"]) == (17, 114, 5.0)


def test_medium_or_small_and_space_before_comma() -> None:
    f = parse_fields("monster", "Priest", "Medium or Small Humanoid (Cleric), Neutral\nAC 13\n")
    assert f is not None
    assert (f["size"], f["type"], f["alignment"]) == ("medium or small", "humanoid", "neutral")
    g = parse_fields("monster", "Imp", "*Medium Fiend , Lawful Evil*\n")
    assert g is not None
    assert (g["type"], g["alignment"]) == ("fiend", "lawful evil")


def test_challenge_on_a_merged_column_line() -> None:
    f = parse_fields(
        "monster", "T-Rex", f"Huge beast, unaligned\nLanguages {chr(0x2014)} Challenge 8 (3,900 XP)\n"
    )
    assert f is not None
    assert f["challenge"] == 8.0


def test_monster_missing_fields_are_none() -> None:
    f = parse_fields("monster", "Sketch", "Medium undead, any alignment\nIt shambles.\n")
    assert f is not None
    assert f["armor_class"] is None and f["hit_points"] is None and f["challenge"] is None
    assert parse_fields("monster", "Monsters", "This chapter describes many creatures.") is None


# --- items ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "category", "rarity", "attunement"),
    [
        ("Wondrous item, rare (requires attunement)", "wondrous item", "rare", True),
        ("Weapon (any sword), very rare", "weapon", "very rare", False),
        ("Armor (plate), legendary", "armor", "legendary", False),
        ("Potion, rarity varies", "potion", "varies", False),
        ("Ring, rare (requires attunement by a cleric)", "ring", "rare", True),
        ("Potion, uncommon", "potion", "uncommon", False),
        ("Wondrous item, common", "wondrous item", "common", False),
        ("Wondrous item, artifact (requires attunement)", "wondrous item", "artifact", True),
        ("Armor (medium or heavy, but not hide), uncommon", "armor", "uncommon", False),
        ("Weapon (any ammunition), uncommon (+1), rare (+2), or very rare (+3)", "weapon", "varies", False),
        ("Wondrous item, very rare or legendary (requires attunement)", "wondrous item", "varies", True),
        ("Wondrous item, rarity by figurine", "wondrous item", "varies", False),
        ("Scroll, varies", "scroll", "varies", False),
        ("*Wondrous Item, Rare (Requires Attunement)*", "wondrous item", "rare", True),
        ("*Armor (Shield), Very Rare (Requires Attunement)*", "armor", "very rare", True),
    ],
)
def test_item_lines(line: str, category: str, rarity: str, attunement: bool) -> None:
    assert parse_fields("item", "Thing", f"{line}\nSome description follows.\n") == {
        "category": category,
        "rarity": rarity,
        "attunement": attunement,
    }


def test_item_line_wrapped_across_lines() -> None:
    body = "Weapon (any sword that deals slashing damage), very\nrare (requires attunement)\nWhen you attack"
    assert parse_fields("item", "Sword of Sharpness", body) == {
        "category": "weapon",
        "rarity": "very rare",
        "attunement": True,
    }
    body = "Staff, uncommon (requires attunement by a cleric,\ndruid, or warlock)\nYou can use an action"
    f = parse_fields("item", "Staff of the Python", body)
    assert f is not None
    assert (f["rarity"], f["attunement"]) == ("uncommon", True)


def test_item_noisy_whitespace() -> None:
    f = parse_fields("item", "Folding Boat", f"Wondrous{GAP}item,{GAP}rare\r\nThis{GAP}object")
    assert f == {"category": "wondrous item", "rarity": "rare", "attunement": False}


def test_item_without_item_line_is_none() -> None:
    assert parse_fields("item", "Magic Items", "Magic items are gleaned from the hoards of monsters.") is None


# --- contracts --------------------------------------------------------------------------


@pytest.mark.parametrize("ctype", [None, "rule", "class", "condition", "feat"])
def test_other_types_have_no_fields(ctype: str | None) -> None:
    assert parse_fields(ctype, "Fireball", "3rd-level evocation\nCasting Time: 1 action") is None


def test_field_types_cover_every_parsed_field() -> None:
    bodies = {
        "spell": "3rd-level evocation\nCasting Time: 1 action",
        "monster": "Large beast, unaligned\nArmor Class 12",
        "item": "Ring, rare",
    }
    for ctype, body in bodies.items():
        fields = parse_fields(ctype, "X", body)
        assert fields is not None
        assert set(fields) <= set(FIELD_TYPES)
        assert set(KEY_FIELDS[ctype]) <= set(fields)
    assert set(FIELD_TYPES.values()) <= {"int", "float", "str", "bool", "list"}
    assert KEY_FIELDS == {
        "spell": ["level", "school"],
        "monster": ["challenge", "type"],
        "item": ["rarity"],
        "class": ["hit_die", "armor"],
    }


def test_values_have_declared_types() -> None:
    f = parse_fields(
        "monster", "X", "Large beast, unaligned\nArmor Class 12\nHit Points 5 (1d8)\nChallenge 1 (200 XP)"
    )
    assert f is not None
    kinds = {"int": int, "float": float, "str": str, "bool": bool}
    for name, value in f.items():
        assert value is None or type(value) is kinds[FIELD_TYPES[name]], name


# --- classes -----------------------------------------------------------------------------


def test_class_fields_from_the_2014_lines() -> None:
    body = (
        "Hit Dice: 1d10 per paladin level\nHit Points at 1st Level: 10 + your Constitution modifier\n"
        "Armor: All armor, shields\nWeapons: Simple weapons, martial weapons\n"
        "Saving Throws: Wisdom, Charisma\nSpellcasting Ability\n"
        "Charisma is your spellcasting ability for your paladin spells."
    )
    assert parse_fields("class", "Paladin", body) == {
        "hit_die": 10,
        "armor": ["light", "medium", "heavy", "shields"],
        "saving_throws": ["wisdom", "charisma"],
        "spellcasting": "charisma",
        "primary_ability": None,
    }


def test_class_fields_from_the_2024_table_and_pdf_run_on_lines() -> None:
    body = (
        "Primary Ability  Strength or Dexterity\nHit Point Die  D10 per Fighter level\n"
        "Saving Throw Proficiencies  Strength and Constitution\n"
        "Armor Training  Light, Medium, and Heavy armor and Shields"
    )
    f = parse_fields("class", "Fighter", body)
    assert f is not None and f["hit_die"] == 10 and f["spellcasting"] == "none"
    assert f["primary_ability"] == ["strength", "dexterity"] and f["saving_throws"] == ["strength", "constitution"]
    assert f["armor"] == ["light", "medium", "heavy", "shields"]
    # a PDF column can run labels together on one line; each value stops at the next label
    g = parse_fields(
        "class",
        "Wizard",
        "Hit Dice: 1d6 per wizard level\nArmor: None Weapons: Daggers Saving Throws: Intelligence, Wisdom Skills: Arcana",
    )
    assert g is not None and g["armor"] == [] and g["saving_throws"] == ["intelligence", "wisdom"]


def test_class_without_a_hit_die_has_no_fields() -> None:
    assert parse_fields("class", "Classes", "Every adventurer is a member of a class.") is None


def _srd_class_truth() -> dict[str, dict]:
    path = (
        Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "srd-data" / "2014" / "5e-SRD-Classes.json"
    )
    if not path.exists():
        pytest.skip(f"SRD data not found at {path}")
    abbr = {
        "STR": "strength",
        "DEX": "dexterity",
        "CON": "constitution",
        "INT": "intelligence",
        "WIS": "wisdom",
        "CHA": "charisma",
    }
    out = {}
    for c in json.loads(path.read_text(encoding="utf-8")):
        profs = {p["name"].lower() for p in c["proficiencies"]}
        armor = {w for w in ("light", "medium", "heavy") if f"{w} armor" in profs or "all armor" in profs}
        armor |= {"shields"} & profs
        cast = c.get("spellcasting")
        out[c["name"]] = {
            "hit_die": c["hit_die"],
            "armor": armor,
            "saving_throws": {abbr[s["name"]] for s in c["saving_throws"]},
            "spellcasting": abbr[cast["spellcasting_ability"]["name"]] if cast else "none",
        }
    return out


@pytest.mark.parametrize(
    "file", ["SRD5.1-CCBY4.0_License_live_links.pdf", "cc-srd5.pdf", "cc-srd5.md", "DND-SRD-5.2-CC.md"]
)
def test_class_fields_on_the_srd_match_the_srd_data(
    corpus_lib: Path, file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gmtool.engine import Engine

    truth = _srd_class_truth()
    monkeypatch.setenv("GMTOOL_CONFIG_DIR", str(corpus_lib / ".config"))
    engine = Engine(corpus_lib)
    sid = next((m.source_id for m in engine.sources() if m.file == file), None)
    if sid is None:
        pytest.skip(f"{file} not in the corpus library")
    got = {n["title"].strip(): n["fields"] for n in engine.toc(sid, types=["class"]).entries}
    assert set(got) == set(truth)
    for cls, want in truth.items():
        f = got[cls] or {}
        assert f.get("hit_die") == want["hit_die"], cls
        assert set(f.get("saving_throws") or []) == want["saving_throws"], cls
        if file.startswith("DND-SRD-5.2"):
            continue  # the 2024 rules changed some armour and spellcasting lines; hit die and saves held
        assert set(f.get("armor") or []) == want["armor"], cls
        assert f.get("spellcasting") == want["spellcasting"], cls
    # the filters the "tanky" questions rely on
    heavy = {n["title"].strip() for n in engine.toc(sid, where=["armor=heavy"]).entries}
    assert heavy == {"Fighter", "Paladin"}
    big = {n["title"].strip() for n in engine.toc(sid, where=["hit_die>=10"]).entries}
    assert big == {"Barbarian", "Fighter", "Paladin", "Ranger"}


def test_other_systems_stat_line_and_tags_become_fields() -> None:
    from gmtool.index.fields import set_fields
    from gmtool.types import Document, Entry

    goblin = Entry(
        title="Goblin", level=2, page=1, content_type="monster", tags=["Horde", "Small"],
        body="Spear (d6 damage) 3 HP 1 Armor\nClose, Reach\nInstinct: To steal",
    )
    doc = Document(format="pdf", title=None, pages=1, entries=[goblin])
    set_fields(doc)
    assert goblin.fields is not None
    assert goblin.fields["hit_points"] == 3 and goblin.fields["armor_class"] == 1
    assert goblin.fields["tags"] == ["horde", "small"]


def test_any_and_all_armour_is_every_armour() -> None:
    # The Black Hack's Warrior: "Weapons & Armor : Any and All" on the line of its other stats
    text = "Starting HP : d10 + 4 HP Per Level/Resting : 1d10 Weapons & Armor : Any and All Attack Damage : 1d8"
    fields = parse_fields("class", "WARRIOR", text)
    assert fields is not None and fields["armor"] == ["light", "medium", "heavy", "shields"]
