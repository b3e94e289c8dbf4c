"""classify(): each structural signal on small synthetic Documents, then precision on the SRDs.

The srd-data JSON is used here only to *measure* the classifier, never inside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gmtool.index.classify import classify
from gmtool.types import Document, Entry

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
SRD_DATA = CORPUS / "srd-data" / "2014"


def doc_of(*rows: tuple) -> Document:
    """rows: (title, level, body[, parent]); parent defaults to the nearest lower level."""
    entries: list[Entry] = []
    for row in rows:
        title, level, body = row[:3]
        parent = (
            row[3]
            if len(row) > 3
            else next((i for i in range(len(entries) - 1, -1, -1) if entries[i].level < level), None)
        )
        entries.append(Entry(title=title, level=level, page=1, parent=parent, body=body))
    return Document(format="md", title=None, pages=1, entries=entries)


def types(doc: Document) -> dict[str, str | None]:
    classify(doc)
    return {e.title: e.content_type for e in doc.entries}


# --- body first lines ------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "3rd-level evocation",
        "Evocation cantrip",
        "1st-level abjuration (ritual)",
        "2nd level necromancy",
        "Level 2 Evocation (Wizard)",
        "Conjuration Cantrip (Sorcerer, Wizard)",
    ],
)
def test_spell_line_makes_a_spell_anywhere(line):
    doc = doc_of(("Stuff", 1, ""), ("Zap", 2, f"{line}\n\nCasting Time: 1 action"))
    assert types(doc)["Zap"] == "spell"


def test_spell_by_context_needs_casting_time():
    doc = doc_of(
        ("Spell Descriptions", 1, ""),
        ("Zap", 2, "Casting Time: 1 action\nRange: 60 feet"),
        ("Reading the Entries", 2, "Each spell has a level."),
    )
    got = types(doc)
    assert got["Zap"] == "spell" and got["Reading the Entries"] is None


@pytest.mark.parametrize(
    "line",
    [
        "Large monstrosity, unaligned",
        "Medium humanoid (any race), any alignment",
        "Medium swarm of Tiny beasts, unaligned",
        "Large Aberration, Lawful Evil",
    ],
)
def test_stat_block_type_line_makes_a_monster(line):
    doc = doc_of(
        ("Beasts", 1, ""),
        ("Thing", 2, f"{line}\n\nArmor Class 12\nHit Points 11 (2d8 + 2)"),
        ("Actions", 3, "Bite. Melee Weapon Attack: +4 to hit."),
    )
    got = types(doc)
    assert got["Thing"] == "monster" and got["Actions"] is None and got["Beasts"] is None


def test_stat_block_lines_without_type_line():
    body = "Armor Class 15 (natural armor)\nHit Points 52 (8d10 + 8)\nSpeed 40 ft.\nChallenge 3 (700 XP)"
    assert types(doc_of(("Owlbear", 1, body)))["Owlbear"] == "monster"


def test_stat_block_rules_text_is_not_a_monster():
    doc = doc_of(
        ("Monsters", 1, ""),
        ("Parts of a Stat Block", 2, ""),
        ("Armor Class", 3, "A monster's Armor Class includes its natural armor."),
        ("Hit Points", 3, "A monster usually dies or is destroyed when it drops to 0 hit points."),
    )
    assert set(types(doc).values()) == {None}


def test_monster_variant_child_shares_the_family_name():
    body = "Medium swarm of Tiny beasts, unaligned\nArmor Class 12\nHit Points 22 (5d8)\nChallenge 1/2"
    doc = doc_of(
        ("Swarm of Insects", 1, body),
        ("Actions", 2, "Bites."),
        ("Swarm of Beetles", 2, "A swarm of beetles gains a burrowing speed of 5 feet.", 0),
        ("Variant: Insect Swarms", 2, "Different kinds of insects.", 0),
    )
    got = types(doc)
    assert got["Swarm of Beetles"] == "monster" and got["Variant: Insect Swarms"] is None


@pytest.mark.parametrize(
    "line",
    [
        "Wondrous item, rare (requires attunement)",
        "Weapon (any sword), very rare",
        "Armor (plate), legendary",
        "Potion, uncommon",
        "Ring, rare",
        "Wondrous item, rarity by figurine",
        "Wand, uncommon (requires attunement by a wizard)",
    ],
)
def test_item_line_makes_an_item(line):
    assert types(doc_of(("Magic Items", 1, ""), ("Gizmo", 2, line + "\n\nIt hums.")))["Gizmo"] == "item"


def test_feat_line_and_prerequisite():
    doc = doc_of(
        ("Feats", 1, "A feat represents a talent."),
        ("Grappler", 2, "Prerequisite: Strength 13 or higher\n\nYou gain the following benefits:"),
        ("Inspiration", 2, "Inspiration is a rule the game master can use."),
        ("Elsewhere", 1, ""),
        ("Alert", 2, "Origin Feat\n\nYou gain the following benefits."),
    )
    got = types(doc)
    assert got["Grappler"] == "feat" and got["Alert"] == "feat" and got["Inspiration"] != "feat"


def test_background_needs_skill_proficiencies_line():
    doc = doc_of(
        ("Backgrounds", 1, "Every story has a beginning."),
        ("Components of a Background", 2, ""),
        ("Proficiencies", 3, "Each background gives proficiency in two skills."),
        (
            "Acolyte",
            2,
            (
                "You have spent your life in a temple.\n\nSkill Proficiencies: Insight, Religion\n"
                "Languages: Two of your choice\nEquipment: A holy symbol"
            ),
        ),
        ("Feature: Shelter of the Faithful", 3, "You command respect."),
    )
    got = types(doc)
    assert got["Acolyte"] == "background"
    assert got["Proficiencies"] is None and got["Feature: Shelter of the Faithful"] is None


# --- enclosing sections and children ----------------------------------------------------


def test_conditions_appendix_children_are_conditions():
    doc = doc_of(
        ("Appendix PH-A: Conditions", 1, "Conditions alter a creature's capabilities."),
        ("Blinded", 2, "A blinded creature can't see."),
        ("Prone", 2, "A prone creature crawls."),
    )
    got = types(doc)
    assert got["Blinded"] == got["Prone"] == "condition" and got["Appendix PH-A: Conditions"] is None


def test_condition_tag_in_title():
    assert (
        types(doc_of(("Rules Definitions", 1, ""), ("Blinded [Condition]", 2, "You can't see.")))[
            "Blinded [Condition]"
        ]
        == "condition"
    )


def test_conditions_section_of_another_game_is_not_a_condition_list():
    doc = doc_of(
        ("Conditions", 1, "Conditions are like stress."),
        ("Moving Conditions Further Apart", 2, "Text."),
        ("Other Versions of Conditions", 2, "Text."),
    )
    assert set(types(doc).values()) == {None}


def test_race_has_a_traits_child_and_subrace_its_own_increase():
    doc = doc_of(
        ("Races", 1, ""),
        ("Racial Traits", 2, "The description of each race."),
        ("Dwarf", 2, "Bold and hardy."),
        ("Dwarf Traits", 3, "Ability Score Increase. Your Constitution score increases by 2."),
        ("Hill Dwarf", 4, "As a hill dwarf you have keen senses.\nAbility Score Increase. Wisdom +1."),
    )
    got = types(doc)
    assert got["Dwarf"] == "race" and got["Hill Dwarf"] == "race"
    assert got["Dwarf Traits"] is None and got["Racial Traits"] is None and got["Races"] is None


def test_species_by_creature_type_line():
    doc = doc_of(
        ("Species Descriptions", 1, ""),
        ("Goliath", 2, "Creature Type: Humanoid\nSize: Medium\nSpeed: 35 feet"),
    )
    assert types(doc)["Goliath"] == "race"


def test_class_subclass_container_and_choice_feature():
    doc = doc_of(
        ("Classes", 1, ""),
        ("Cleric", 2, "Clerics are intermediaries."),
        ("Class Features", 3, "As a cleric, you gain the following class features."),
        ("Hit Points", 4, "Hit Dice: 1d8 per cleric level"),
        ("Proficiencies", 4, "Armor: Light armor"),
        (
            "Divine Domain",
            3,
            "Choose one domain related to your deity. Your choice grants you domain spells.",
        ),
        ("Domain Spells", 4, "Each domain has a list of spells."),
        ("Domains", 2, ""),
        ("Life Domain", 3, "The Life domain focuses on positive energy."),
        ("Bonus Proficiency", 4, "When you choose this domain at 1st level, you gain heavy armor."),
        ("Martial Archetypes", 2, "Different fighters choose different approaches."),
        ("Champion", 3, "The archetypal Champion focuses on raw physical power. Starting at 3rd level, ..."),
    )
    got = types(doc)
    assert got["Cleric"] == "class"
    assert got["Life Domain"] == "subclass" and got["Champion"] == "subclass"
    for title in (
        "Class Features",
        "Hit Points",
        "Proficiencies",
        "Divine Domain",
        "Domain Spells",
        "Domains",
        "Martial Archetypes",
        "Classes",
        "Bonus Proficiency",
    ):
        assert got[title] is None, title


def test_subclass_title_with_class_prefix():
    assert (
        types(doc_of(("Barbarian Subclass: Path of the Berserker", 3, "Channel Rage into Violent Fury")))[
            "Barbarian Subclass: Path of the Berserker"
        ]
        == "subclass"
    )


def test_multiclassing_is_not_a_class():
    doc = doc_of(
        ("Multiclassing", 1, "Multiclassing allows you to gain levels in multiple classes."),
        ("Prerequisites", 2, "x"),
        ("Experience Points", 2, "x"),
        ("Hit Points and Hit Dice", 2, "x"),
        ("Proficiencies", 2, "x"),
        ("Class Features", 2, "When you gain a new level in a class ..."),
    )
    assert types(doc)["Multiclassing"] != "class"


SRD_LIKE_SPELLS = tuple((f"Zap {i}", 2, "1st-level evocation\nCasting Time: 1 action") for i in range(5))


def test_rules_chapter_sections_are_rules_but_containers_stay_none():
    # a book whose spells print their own spell lines is read with the D&D chapter map
    doc = doc_of(
        ("Spells", 1, ""),
        *SRD_LIKE_SPELLS,
        ("Combat", 1, "This chapter provides the rules you need."),
        ("Cover", 2, "Walls, trees, creatures, and other obstacles can provide cover during combat."),
        ("Adventuring", 1, ""),
        ("Conditions", 2, "Conditions alter a creature's capabilities in a variety of ways."),
        ("Blinded", 3, "A blinded creature can't see."),
    )
    got = types(doc)
    # a chapter of the map with its own prose is a rule too (md-more gold: "Combat", "Multiclassing")
    assert got["Cover"] == "rule" and got["Combat"] == "rule"
    assert got["Conditions"] is None and got["Blinded"] == "condition"
    assert got["Adventuring"] is None  # a chapter heading with no text of its own


def test_other_games_get_rules_and_no_entities_without_evidence():
    doc = doc_of(
        ("Credits", 1, "Written by someone, with thanks to many people."),
        ("Getting Started", 1, "Define your setting."),
        ("Aspects", 2, "An aspect is a phrase that describes something important."),
        ("Stunts", 2, "Stunts are special abilities your character has."),
        ("Conflicts", 1, "Conflicts are how characters harm one another."),
    )
    got = types(doc)
    assert got["Aspects"] == got["Stunts"] == got["Conflicts"] == got["Getting Started"] == "rule"
    assert got["Credits"] is None


def test_old_school_stats_and_spell_fields():
    doc = doc_of(
        ("Monsters", 1, ""),
        ("Ogre", 2, "Armor Class: 15\nHit Dice: 4+1\nNo. of Attacks: 1 weapon\nMorale: 10"),
        ("SPELLS", 1, "Range: 120'\nDuration: 2 turns"),
        ("Light*", 2, "Range: 120'\nCleric 1\nDuration: 6 turns"),
    )
    got = types(doc)
    assert got["Ogre"] == "monster" and got["Light*"] == "spell" and got["SPELLS"] is None


def test_classify_sets_every_entry_and_handles_empty():
    classify(Document(format="md", title=None, pages=1, entries=[]))
    doc = doc_of(("", 1, ""), ("x", 2, ""))
    classify(doc)
    assert [e.content_type for e in doc.entries] == [None, None]


# --- precision on the real SRDs ----------------------------------------------------------


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(s).lower()).strip()


def _truth() -> dict[str, set[str]]:
    def names(fname: str) -> list[dict]:
        return json.loads((SRD_DATA / fname).read_text(encoding="utf-8"))

    monsters = {_norm(m["name"]) for m in names("5e-SRD-Monsters.json")}
    # "Werebear, Human Form" names the Werebear stat block
    monsters |= {_norm(m["name"].split(",")[0]) for m in names("5e-SRD-Monsters.json") if "," in m["name"]}
    races = {_norm(r["name"]) for r in names("5e-SRD-Races.json")}
    for sub in names("5e-SRD-Subraces.json"):  # "Lightfoot Halfling" is headed "Lightfoot" in the SRD
        races |= {_norm(sub["name"]), _norm(sub["name"].replace(sub["race"]["name"], ""))}
    return {
        "spell": {_norm(s["name"]) for s in names("5e-SRD-Spells.json")},
        "monster": monsters,
        "class": {_norm(c["name"]) for c in names("5e-SRD-Classes.json")},
        "race": races,
        "condition": {_norm(c["name"]) for c in names("5e-SRD-Conditions.json")},
    }


def _matches(title: str, truth: set[str]) -> bool:
    t = _norm(title)
    # "Gnome, Deep (Svirfneblin)" names "Deep Gnome (Svirfneblin)": compare the sets of words too
    return t in truth or frozenset(t.split()) in {frozenset(x.split()) for x in truth}


def precision_report(doc: Document) -> dict[str, tuple[float, int, list[str]]]:
    truth = _truth()
    out = {}
    for ctype, names in truth.items():
        typed = [e.title for e in doc.entries if e.content_type == ctype]
        bad = [t for t in typed if not _matches(t, names)]
        out[ctype] = (1 - len(bad) / len(typed) if typed else 1.0, len(typed), bad)
    return out


def _expected_typed_ratio(doc: Document) -> float:
    """toc_coverage.py's `typed` figure, computed in-process."""
    path = CORPUS.parent / "eval" / "toc_expected_srd51.json"
    if not path.exists():
        pytest.skip(f"eval data not available: {path}")
    expected = json.loads(path.read_text(encoding="utf-8"))
    prefix = re.compile(r"^(path of the|college of|circle of the|oath of|school of|way of the|the) ")
    seen: dict[str, set] = {}
    for e in doc.entries:
        t = _norm(e.title)
        for key in {t, prefix.sub("", t)}:
            seen.setdefault(key, set()).add(e.content_type)
    found = typed = 0
    for ctype, names in expected.items():
        for n in names:
            if _norm(n) in seen:
                found += 1
                typed += ctype in seen[_norm(n)]
    return typed / max(found, 1)


@pytest.fixture(scope="module")
def cc_srd_md():
    path = CORPUS / "md" / "cc-srd5.md"
    if not path.exists() or not SRD_DATA.exists():
        pytest.skip(f"corpus not available under {CORPUS}")
    from gmtool.index.extract.markdown import extract_markdown

    doc = extract_markdown(path)
    classify(doc)
    return doc


def _pdf_doc(get: Callable[[str], Document], name: str) -> Document:
    if not SRD_DATA.exists():
        pytest.skip(f"corpus not available under {CORPUS}")
    doc = get(name)  # as the session's corpus library indexed it (conftest.corpus_pdf_doc)
    classify(doc)
    return doc


@pytest.fixture(scope="module")
def cc_srd_pdf(corpus_pdf_doc):
    return _pdf_doc(corpus_pdf_doc, "cc-srd5.pdf")


@pytest.fixture(scope="module")
def srd51_pdf(corpus_pdf_doc):
    return _pdf_doc(corpus_pdf_doc, "SRD5.1-CCBY4.0_License_live_links.pdf")


def _check(doc: Document, min_typed: float = 0.95) -> None:
    report = precision_report(doc)
    for ctype, (prec, count, bad) in report.items():
        assert count > 0, f"no {ctype} typed"
        assert prec >= 0.95, f"{ctype} precision {prec:.3f} of {count}: {bad[:10]}"
    assert _expected_typed_ratio(doc) >= min_typed


@pytest.mark.corpus
def test_precision_and_coverage_cc_srd5_md(cc_srd_md):
    _check(cc_srd_md)
    counts = {
        ct: sum(e.content_type == ct for e in cc_srd_md.entries)
        for ct in ("spell", "monster", "item", "class")
    }
    assert (
        counts["spell"] >= 300
        and counts["monster"] >= 300
        and counts["item"] >= 200
        and counts["class"] == 12
    )


@pytest.mark.corpus
@pytest.mark.slow
def test_precision_and_coverage_cc_srd5_pdf(cc_srd_pdf):
    _check(cc_srd_pdf)


@pytest.mark.corpus
@pytest.mark.slow
def test_precision_and_coverage_srd51_pdf(srd51_pdf):
    _check(srd51_pdf)


def test_a_section_opening_with_its_own_advancement_table_is_a_class():
    table = ("Exp.\nLevel  Points  Hit Dice\n1  0  1d8\n2  2,000  2d8\n3  4,000  3d8\n4  8,000  4d8\n"
             "Wardens guard the old roads and fight with any weapon.")
    doc = doc_of(("Player Characters", 1, "Choose a class."), ("Warden", 2, table),
                 ("Ogre", 2, "Armor Class 15, Hit Dice 4d8, No. of Attacks 1, Damage 2d6, Level 4, XP 240"))
    got = types(doc)
    assert got["Warden"] == "class"
    assert got["Ogre"] != "class"  # one creature's hit dice, not a table growing a die a level


def test_a_short_section_over_rules_sections_is_a_rule_but_not_over_entities():
    doc = doc_of(
        ("Spells", 1, ""),
        *SRD_LIKE_SPELLS,
        ("Combat", 1, "This chapter provides the rules you need."),
        ("Underwater Combat", 2, "Wet."),
        ("Impeded Weapons", 3, "A melee weapon attack has disadvantage unless the weapon is a dagger or spear."),
        ("Fire Resistance", 3, "Anything underwater has resistance to fire damage while it stays under."),
    )
    got = types(doc)
    assert got["Impeded Weapons"] == "rule" and got["Underwater Combat"] == "rule"  # not folded into "Combat"


def test_a_part_title_alone_among_rules_sections_is_a_rule_among_parts_it_is_a_part():
    """"Reactions" is a stat block's part in D&D, but in another game's core rules, between "Armor" and
    "Morale", it is a rules section of its own: left untyped, it folded into its chapter and was never a
    result. Among parts of its kind ("Age", "Size", "Speed" of a people) it stays a part."""
    prose = "When the party meets someone whose mood is not obvious, roll two dice and read the table."
    doc = doc_of(
        ("Core Rules", 1, prose),
        ("Armor", 2, "Armor reduces the damage of every attack that hits you, down to a minimum of zero."),
        ("Reactions", 2, prose),
        ("Morale", 2, "Enemies must pass a save to avoid fleeing when they take their first casualty."),
        ("Wood Folk", 1, "A quiet people of the deep forest, who keep to the old paths and the old ways."),
        ("Age", 2, "Wood folk reach adulthood at twenty and live to see two hundred winters pass."),
        ("Size", 2, "Wood folk are tall and slender, between six and seven feet tall when grown."),
        ("Speed", 2, "Your base walking speed is 35 feet, and forest ground does not slow you down."),
    )
    got = types(doc)
    assert got["Reactions"] == got["Armor"] == got["Morale"] == "rule"
    assert got["Age"] is None and got["Size"] is None and got["Speed"] is None


def test_a_thing_priced_in_its_title_is_no_monster_whatever_hit_points_it_gives():
    doc = doc_of(
        ("Treasures", 1, "Magic items the party may find or buy."),
        ("+5% Shield (250 GP)", 2, "This shield is enchanted: it has +5 Armor Points and +2 Hit Points for its type."),
        ("Cave Bear", 2, "A huge bear. Armor 2, 18 Hit Points, claws 1d8 damage."),
    )
    got = types(doc)
    assert got["+5% Shield (250 GP)"] != "monster"
    assert got["Cave Bear"] == "monster"


def test_a_people_described_by_its_parts_is_a_race_but_a_section_about_the_kind_is_not():
    """Under "Races", a heading whose text sits in its parts ("Racial Bonus", "Racial Power") is one of
    them; "Parts of a Background" under "Backgrounds" names the kind: it is about them, not one."""
    doc = doc_of(
        ("Races", 1, "Each race gives a bonus to one of two ability scores and a power once per battle."),
        ("Human", 2, ""),
        ("Racial Bonus", 3, "+2 to any ability score."),
        ("Racial Power", 3, "Roll initiative twice and choose the result you want."),
        ("Dwarf", 2, ""),
        ("Racial Bonus", 3, "+2 Constitution or +2 Wisdom."),
        ("Racial Power", 3, "Once per battle, heal using a recovery when you are hit."),
        ("Character Backgrounds", 1, "Your background is what you did before you took up adventuring."),
        ("Parts of a Background", 2, ""),
        ("Ability Scores", 3, "A background lists three ability scores to raise."),
        ("Feat", 3, "A background gives you an origin feat."),
    )
    got = types(doc)
    assert got["Human"] == got["Dwarf"] == "race"
    assert got["Parts of a Background"] != "background"


def test_a_heading_named_for_the_tables_columns_heads_the_table_not_a_class():
    """"Level" over the one advancement table of a classless game is that table's heading."""
    table = "Level  Hit Dice  Grit  Experience points\n1  1d6  0  0\n2  2d6  1  1000\n3  3d6  2  3000\n"
    doc = doc_of(("How to Play", 1, "How the game is played."), ("Advancement", 2, "Mice earn experience for treasure."),
                 ("Level", 3, "Mice start at Level 1.\n" + table), ("Grit", 3, "Grit lets a mouse ignore Conditions."))
    assert types(doc)["Level"] != "class"


def test_a_creature_named_for_its_kind_with_its_own_stat_block_is_a_monster():
    """"Rust Monster" over its own AC, PD, MD and HP is a creature, as "Ogre Mage" beside it is; "Powerful
    Opponents" (a rule with a sample stat line) and a "Riot Shield" with AP/HP are not."""
    block = "AC: {}\nPD: 17\nMD: 13\nHP: 45\nInitiative: +5\nCaustic bite +8 vs. AC: 10 damage, and 5 ongoing acid damage."
    doc = doc_of(("Monster Reference", 1, "The monsters of the book."), ("Rust Monster", 2, block.format(19)),
                 ("Ogre Mage", 2, block.format(22)), ("Combat", 1, "How fights go."),
                 ("Powerful Opponents", 2, "For every HD above the character's level, add 1 to the roll.\nHP: 10\n"
                  "AC: 14\nAttack: 1d8 damage"),
                 ("Shields", 2, "Shields block blows."), ("Riot Shield", 3, "Damage: 1d4\nSize: L\nAP/HP: 4/12"))
    got = types(doc)
    assert got["Rust Monster"] == got["Ogre Mage"] == "monster"
    assert got["Powerful Opponents"] != "monster" and got["Riot Shield"] != "monster"


def test_a_heading_under_classes_that_names_classes_is_about_them_not_one():
    """"Class Rank Structure" opens a Classes chapter: how classes are organised, not a class."""
    long = " The order trains its members, who rise in rank by deeds and service to the guild." * 4
    doc = doc_of(("Characters", 1, "How to make a character."), ("Classes", 2, "Every hero belongs to a class."),
                 ("Class Rank Structure", 3, "Classes are arranged as guilds and orders." + long),
                 ("Fighter", 3, "Fighters are trained warriors." + long), ("Thief", 3, "Thieves steal." + long))
    got = types(doc)
    assert got["Class Rank Structure"] != "class" and got["Fighter"] == got["Thief"] == "class"


def test_a_heading_under_spells_that_names_spells_is_about_them_not_one():
    """"Casting a spell" and "Recharging a spell" under "Spells" are its rules; "Fireball" is a spell."""
    doc = doc_of(("Magic", 1, "How magic works in the game."), ("Spells", 2, "Spells are spirits trapped in tablets."),
                 ("Casting a spell", 3, "To cast a spell, hold the tablet and read it aloud."),
                 ("Recharging a spell", 3, "A depleted spell recharges when its requirement is met."),
                 ("Fireball", 3, "A ball of fire bursts where you point, burning all within."))
    got = types(doc)
    assert got["Casting a spell"] != "spell" and got["Recharging a spell"] != "spell"
    assert got["Fireball"] == "spell"


def test_a_heading_among_rules_about_spells_is_one_more_rule():
    """"Miscasts" after "Selling spells", "Casting a spell" and "Recharging a spell" is a rule of casting too."""
    doc = doc_of(("Magic", 1, "How magic works in the game."), ("Spells", 2, "Spells are spirits trapped in tablets."),
                 ("Selling spells", 3, "Spells sell for their level in pips."),
                 ("Casting a spell", 3, "To cast a spell, hold the tablet and read it aloud."),
                 ("Recharging a spell", 3, "A depleted spell recharges when its requirement is met."),
                 ("Miscasts", 3, "Roll a six on any die and the spell goes wrong: take damage."))
    assert types(doc)["Miscasts"] != "spell"


def test_spells_under_a_heading_naming_their_kind_before_a_list_word_are_spells():
    """"Spell Descriptions" names its spells in the singular, before "Descriptions": "Bladesharp" under it is a
    spell, though its spells print no field labels of their own (only "Touch" or "Ranged, Resist")."""
    doc = doc_of(("Magic and Sorcery", 1, "How magic works in the game."),
                 ("Spell Descriptions", 2, "The spells, in alphabetical order."),
                 ("Alarm", 3, "Special Duration\nCasting Alarm on a room wakes the caster when someone enters."),
                 ("Bladesharp", 3, "Touch\nBladesharp raises the damage of an edged weapon by one step."),
                 ("Witchsight", 3, "Ranged\nWitchsight lets the caster see invisible beings and magic."))
    got = types(doc)
    assert got["Alarm"] == got["Bladesharp"] == got["Witchsight"] == "spell"


def test_headings_numbered_one_after_another_are_one_list():
    """"1. Bounty Hunter", "2. Croaker", ... under "Archetypes": one list, so all are classes, the short ones too
    (a lone short section under "Archetypes" is not described enough to be a class)."""
    long = " Starts with a rifle, a coat, a licence, a stunner and a long list of debts to pay off." * 3
    doc = doc_of(("Archetypes", 1, "Pick one."),
                 ("1. Bounty Hunter", 2, "Brings scoundrels to justice.\n- Rifle\n- Coat"),
                 ("2. Croaker", 2, "A redundant graduate.\n- Medikit"),
                 ("3. Highborn", 2, "Member of the highest castes." + long),
                 ("4. Smuggler", 2, "Moves goods past the patrols.\n- Pistol"))
    got = types(doc)
    assert [got[t] for t in ("1. Bounty Hunter", "2. Croaker", "3. Highborn", "4. Smuggler")] == ["class"] * 4


def test_value_first_stat_lines_with_a_weapon_and_what_they_do_not_make():
    """"4 HP, 12 STR, 5 DEX, 6 WIL, tusks (d6+d6)" is a creature's stat line wherever it sits (here under a
    place); one in square brackets inside an item's text is a summoned creature's; a creature printed one
    level too high, over the next creatures, is not a monster holding them as parts."""
    doc = doc_of(("Forest Seeds", 1, "Places in the woods."), ("8 - Black Mass", 2, "A ruined chapel in the trees."),
                 ("Boar", 3, "4 HP, 12 STR, 5 DEX, 6 WIL, tusks (d6+d6)"),
                 ("Wood Troll", 3, "12 HP, 16 STR, 8 DEX, 6 WIL, claws (d8)\n- Regrows lost limbs overnight."),
                 ("Reliquary", 1, "Relics of the woods."), ("Gossip Box, 1 charge", 2, "Hear what was said here."),
                 ("Jar of Ants", 2, "Break to release a colony of fire ants [6 HP, 2 STR, 10 DEX, 1 WIL, bite (d10)]."),
                 ("Eyestone, 3 charges", 2, "See through walls for a moment."),
                 ("Red Cap", 1, "6 HP, 6 STR, 12 DEX, 8 WIL, dual sickles (d6+d6)"),
                 ("Reptilian", 2, "5 HP, 10 STR, 12 DEX, 6 WIL, bite (d6)"),
                 ("Root Goblin", 2, "3 HP, 8 STR, 14 DEX, 8 WIL, spear (d6)"))
    got = types(doc)
    assert got["Boar"] == got["Wood Troll"] == "monster"
    assert got["Jar of Ants"] != "monster" and got["Red Cap"] != "monster"
    assert got["Reptilian"] == got["Root Goblin"] == "monster"


def test_a_rule_defining_instinct_is_no_monster():
    """"Instinct: To hunt" is a monster's drive; "Instinct: Instinct is the animal equivalent of
    Education" defines a characteristic."""
    doc = doc_of(("Wilderness Encounters", 1, "How to meet animals in the wild."),
                 ("Animals and Characteristics", 2, "Animals differ from people.\nInstinct: Instinct is the animal "
                  "equivalent of Education.\nPack: Pack is the animal equivalent of Social Standing."),
                 ("Griffon", 2, "Claws (d10 damage)\nInstinct: To hunt from above"))
    got = types(doc)
    assert got["Animals and Characteristics"] != "monster" and got["Griffon"] == "monster"


def test_a_part_titled_by_the_kind_itself_holds_the_kind_not_its_siblings():
    """"Names & Background" > "Names", "Clothing", "Background": the heading names backgrounds for its last
    part; names and clothing are other topics, described or not."""
    long = "Pick something that suits the investigator and the world they come from, in a few words. " * 2
    doc = doc_of(("Character Creation", 1, "Make an investigator."), ("Names & Background", 2, "Who you are."),
                 ("Names", 3, long), ("Clothing", 3, long), ("Background", 3, "Roll for one."),
                 ("Backgrounds", 2, "What you did before."), ("Journalist", 3, long), ("Medic", 3, long))
    got = types(doc)
    assert got["Names"] != "background" and got["Clothing"] != "background"
    assert got["Journalist"] == "background" and got["Medic"] == "background"


def test_a_heading_carrying_on_its_parents_title_is_more_of_that_topic():
    """"Faction status changes" under "Faction Status" (a heading whose last word names conditions) says more
    about faction status; "Dazed" under "Status Effects" is one."""
    doc = doc_of(("Factions", 1, "The city's powers."), ("Faction Status", 2, "How factions see your crew."),
                 ("Faction status changes", 3, "An operation that hurts a faction costs you status with it."),
                 ("Status Effects", 2, "What can befall a scoundrel."),
                 ("Dazed", 3, "You are dazed until the end of your next turn."))
    got = types(doc)
    assert got["Faction status changes"] != "condition" and got["Dazed"] == "condition"
