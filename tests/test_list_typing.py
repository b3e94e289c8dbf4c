"""Lists of like things: siblings that share a shape are typed as a whole from their pooled evidence
(field labels through a general map, the kind named above them or in their tag lines), and a lone odd
entry does not type its list. Small generated books, through classify()."""

from __future__ import annotations

import json

from gmtool.index import lists
from gmtool.index.classify import classify
from gmtool.types import Document, Entry

PROSE = "Some prose about how the game is played, and what the table should expect from it."


def doc_of(*rows: tuple) -> Document:
    """rows: (title, level, body[, origin]); the parent is the nearest lower level."""
    entries: list[Entry] = []
    for row in rows:
        title, level, body = row[:3]
        origin = row[3] if len(row) > 3 else "heading"
        parent = next((i for i in range(len(entries) - 1, -1, -1) if entries[i].level < level), None)
        entries.append(Entry(title=title, level=level, page=1, parent=parent, body=body, origin=origin))
    return Document(format="pdf", title=None, pages=1, entries=entries)


def types(doc: Document) -> dict[str, str | None]:
    classify(doc)
    return {e.title: e.content_type for e in doc.entries}


def test_field_labels_map_to_general_meanings():
    got = lists.labels_of("Tier 1 Solo\nDifficulty: 14 | Thresholds: 8/15 | HP: 8 | Stress: 3\nATK: +3 | Claws: Very Close")
    assert {"hp", "atk", "difficulty", "thresholds"} <= got
    assert lists.meanings(got) >= {"hp", "attack"}
    assert lists.meaning("armor class") == "defence" and lists.meaning("hit points") == "hp"
    assert lists.meaning("starting hit points") == "start"  # a class's, not a creature's
    assert lists.meaning("motives tactics") is None


def test_one_clear_stat_line_shape_types_every_sibling_even_a_truncated_one():
    beasts = [(name, 3, f"HD {n}d8 ({n * 4} hp), AC {12 + n}, Bite +{n} (1d{4 + n})", "runin")
              for n, name in enumerate(["Badger", "Boar", "Wolf", "Bear", "Lion"], 1)]
    doc = doc_of(("Beasts of the Field", 1, PROSE), *beasts, ("Griffon", 3, "HD", "runin"))
    got = types(doc)
    assert all(got[name] == "monster" for name, *_ in beasts)
    assert got["Griffon"] == "monster"  # says nothing alone; its list says it
    assert got["Beasts of the Field"] is None  # the heading groups them, it is not one


def test_labels_the_book_repeats_make_a_stat_block_list_among_rule_sections():
    block = "A hungry thing.\nMotives: Feed\nDifficulty: {d} | HP: {h} | Stress: 2\nATK: +{a} | Bite: Melee | 1d8 phy"
    rows = [(f"Thing {k}", 2, block.format(d=10 + n, h=4 + n, a=n)) for n, k in enumerate("ABCDE")]
    doc = doc_of(("Foes and Places", 1, PROSE), ("Using This Chapter", 2, PROSE), *rows,
                 ("Balancing Fights", 2, PROSE + " Count the party."))
    got = types(doc)
    assert all(got[f"Thing {k}"] == "monster" for k in "ABCDE")
    assert got["Using This Chapter"] != "monster" and got["Balancing Fights"] != "monster"


def test_a_lone_odd_entry_does_not_type_its_list():
    notes = [(f"Note {k}", 2, f"{PROSE} Point {k}.", "runin") for k in "ABCDE"]
    doc = doc_of(("Table Advice", 1, PROSE), *notes, ("Note F", 2, "HD 2d8 (9 hp), AC 14, Bite +3 (1d6)", "runin"))
    got = types(doc)
    assert all(got[f"Note {k}"] != "monster" for k in "ABCDE")


def test_a_tag_line_naming_the_kind_splits_spell_cards_from_ability_cards():
    cards = [(f"Card {k}", 3, f"Level {n} Arcana Spell Recall Cost: 1\nMake a roll against a target within Far range.")
             for n, k in enumerate("ABCD", 1)]
    abilities = [(f"Move {k}", 3, f"Level {n} Arcana Ability Recall Cost: 1\nOnce per rest, move anywhere nearby.")
                 for n, k in enumerate("ABCD", 1)]
    doc = doc_of(("Card Reference", 1, PROSE), ("Arcana Cards", 2, ""), *cards, *abilities)
    got = types(doc)
    assert all(got[f"Card {k}"] == "spell" for k in "ABCD")
    assert all(got[f"Move {k}"] != "spell" for k in "ABCD")


def test_a_marker_heading_above_a_run_names_its_kind():
    sub = "Play the {t} if you want to lead.\nSPELLCAST TRAIT\nPresence\nFOUNDATION FEATURE\nRally: spend Hope."
    doc = doc_of(
        ("Character Options", 1, PROSE),
        ("Bard Subclasses", 2, "Choose either the Troubadour or Wordsmith subclass."),
        ("Troubadour", 2, sub.format(t="Troubadour")),
        ("Wordsmith", 2, sub.format(t="Wordsmith")),
        ("Druid Subclasses", 2, "Choose either the Warden or the Keeper subclass."),
        ("Warden", 2, sub.format(t="Warden")),
        ("Keeper", 2, sub.format(t="Keeper")),
    )
    got = types(doc)
    assert {got[t] for t in ("Troubadour", "Wordsmith", "Warden", "Keeper")} == {"subclass"}
    assert got["Bard Subclasses"] != "subclass"


def test_a_marked_run_without_the_lists_labels_joins_the_list_its_markers_head():
    """The casters' subclasses print a spellcasting trait, the warriors' do not: the same markers
    ("X Subclasses") head both runs, so all are subclasses; the rules section after them is not."""
    caster = "Play the {t} to cast.\nSPELLCAST TRAIT\nPresence\nFOUNDATION FEATURE"
    fighter = "Play the {t} to fight.\nFOUNDATION FEATURE"
    rows = [("Character Options", 1, PROSE)]
    for cls, subs, shape in (("Bard", ("Troubadour", "Wordsmith"), caster), ("Druid", ("Warden", "Keeper"), caster),
                             ("Warrior", ("Call of the Brave", "Call of the Slayer"), fighter)):
        rows.append((f"{cls} Subclasses", 2, f"Choose one of the {cls.lower()}'s two subclasses."))
        for sub in subs:
            rows += [(sub, 2, shape.format(t=sub)), (f"{sub} Gift", 3, "Once per rest: gain a Hope.", "runin"),
                     (f"{sub} Edge", 3, "Add a die to a roll.", "runin")]
    rows.append(("Multiclassing", 2, PROSE))
    got = types(doc_of(*rows))
    assert {got[t] for t in ("Troubadour", "Keeper", "Call of the Brave", "Call of the Slayer")} == {"subclass"}
    assert got["Multiclassing"] != "subclass"


def test_a_heading_word_for_another_kind_does_not_outvote_the_members_stat_blocks():
    blocks = [(name, 2, f"Claws (d10 damage) {h} HP {a} Armor\nClose\nSpecial Qualities: Wings\nInstinct: To hunt")
              for name, h, a in (("Angel", 18, 4), ("Imp", 6, 1), ("Djinn", 14, 2), ("Larva", 3, 0))]
    odd = ("Swarm", 2, "Bites (d6 damage)\nSpecial Qualities: Many\nInstinct: To feed")  # no HP line
    doc = doc_of(("Planar Powers", 1, ""), *blocks, odd)
    got = types(doc)
    assert all(got[name] == "monster" for name, *_ in blocks)
    assert got["Swarm"] != "spell"


def test_the_shipped_weights_are_data_with_the_script_that_fits_them():
    data = json.loads(lists.WEIGHTS_FILE.read_text())
    assert data["features"] == list(lists.FEATURES) and len(data["weights"]) == len(lists.FEATURES)
    assert data["fitted_by"] == "bench/fit_typing.py" and data["fitted_on"]
    assert 0.5 <= data["threshold"] < 1 and data["margin"] > 0


def test_a_field_name_defined_as_a_run_in_is_a_rule_term_not_one_of_the_things():
    terms = [("Cost", 2, "What the item costs, in silver pieces.", "runin"),
             ("Damage", 2, "The die rolled when the weapon hits.", "runin"),
             ("Range", 2, "How far the weapon reaches, in feet.", "runin")]
    doc = doc_of(("Weapons", 1, PROSE), *terms)
    got = types(doc)
    assert all(got[name] != "item" for name, *_ in terms)
    assert lists.meaning("range increment") is None and lists.meaning("range") == "range"


def test_a_list_under_a_singular_descriptions_heading_past_a_glossary_of_its_own_field_is_typed():
    # "Extraordinary Item Descriptions" names items; "Properties", a sibling above the list, explains the
    # field every item prints ("Properties: ..."), so it does not start a section of its own
    items = [(name, 4, f"Wealth Level: {n}\nA strange device.\nProperties: Deadly {n}")
             for n, name in enumerate(["Jet Boots", "Sun Blade", "Mind Probe", "Storm Horn"], 1)]
    doc = doc_of(("Special Equipment", 2, PROSE), ("Extraordinary Item Descriptions", 3, PROSE),
                 ("Properties", 4, "Deadly - the item kills. Potent - the item is strong."), *items)
    got = types(doc)
    assert all(got[name] == "item" for name, *_ in items)
    assert got["Properties"] != "item"
    # without the heading's word, the same shapes say nothing: untyped beats wrong
    doc = doc_of(("Special Things", 2, PROSE), ("Descriptions", 3, PROSE),
                 ("Properties", 4, "Deadly - the item kills."), *items)
    assert all(v is None or v == "rule" for v in types(doc).values())


def test_a_table_of_the_parents_kind_above_a_list_names_the_list():
    arts = [(name, 4, f"Level: 1d6 + {n}\nForm: A small thing\nEffect: Does things.\nDepletion: 1 in 1d{n + 4}")
            for n, name in enumerate(["Glow Stone", "Rope of Climbing", "Wind Fan"], 1)]
    doc = doc_of(("Fantasy Artifacts", 2, PROSE), ("Example Fantasy Artifacts", 3, PROSE),
                 ("Minor Artifacts Table", 4, "01-20 Glow Stone\n21-40 Rope of Climbing\n41-60 Wind Fan\n" * 10), *arts)
    got = types(doc)
    assert all(got[name] == "item" for name, *_ in arts)


def test_a_sort_order_after_a_lists_name_is_not_its_kind():
    from gmtool.index import genre

    assert genre.context_of("science fiction creatures and npcs by level tech") == "monster"
    assert genre.context_of("spells by class") == "spell"
    assert genre.context_of("item descriptions") is None  # a lone entry below it may be a preamble
    assert genre.context_of("item descriptions", singular=True) == "item"


def test_parts_that_step_through_an_entrys_own_progression_make_it_a_class():
    tiers = [(f"{o}-Tier Warden", 3, PROSE) for o in ("First", "Second", "Third", "Fourth")]
    doc = doc_of(("Character Types", 1, PROSE), ("Warden", 2, PROSE * 3), *tiers,
                 ("Gear", 1, PROSE), ("Tier 1 (Level 1)", 2, PROSE), ("Tier 2 (Levels 2-4)", 2, PROSE),
                 ("Tier 3 (Levels 5-7)", 2, PROSE))
    got = types(doc)
    assert got["Warden"] == "class"
    assert got["Gear"] != "class"  # level groups of a list name no one's progression


def test_a_heading_naming_weapons_keeps_stat_words_from_typing_its_rows_monsters():
    """Rows under "Sample Melee Weapons" print "Damage" and "AP/HP" (a weapon's own hit points): a
    stat word, not a stat line, so they are not monsters; untyped beats wrong. Rows printing whole
    stat lines under such a heading stay monsters (a kind backed by full stat lines)."""
    weapons = [(name, 3, f"Damage: 1d{n + 4} | Size: M | AP/HP: 4/{n + 6}", "row")
               for n, name in enumerate(["Axe", "Broadsword", "Club", "Mace", "Whip"])]
    doc = doc_of(("Combat", 1, PROSE), ("Sample Melee Weapons", 2, PROSE), *weapons)
    got = types(doc)
    assert all(got[name] != "monster" for name, *_ in weapons), got
    beasts = [(name, 3, f"HD {n}d8 ({n * 4} hp), AC {12 + n}, Bite +{n} (1d{4 + n})", "runin")
              for n, name in enumerate(["Badger", "Boar", "Wolf", "Bear", "Lion"], 1)]
    doc = doc_of(("Planar Powers", 1, PROSE), *beasts)
    assert all(t == "monster" for name, t in types(doc).items() if name != "Planar Powers")


def test_a_traits_child_makes_a_race_only_when_it_reads_as_a_peoples():
    doc = doc_of(("Game System", 1, PROSE), ("Disease and Poison", 2, PROSE),
                 ("Disease and Poison Traits", 3, "Application: how it is caught. Potency: how hard it is to resist."),
                 ("Peoples", 1, PROSE), ("Dwarf", 2, PROSE),
                 ("Dwarf Traits", 3, "Ability Score Increase. Constitution +2.\nAge. Long-lived.\nSpeed. 25 feet."))
    got = types(doc)
    assert got["Disease and Poison"] != "race"
    assert got["Dwarf"] == "race"


def test_a_starting_label_means_a_class_field_only_when_what_starts_is_a_field():
    assert lists.meaning("starting evasion") == "start"
    assert lists.meaning("starting percentage") is None and lists.meaning("starting on page") is None


def test_two_fields_to_a_line_and_a_spell_that_costs_points():
    """A stat table read with two "Label: value" cells to a line keeps both labels ("Sphere: None  Duration:
    Instant" is "sphere" and "duration", not "none duration"), and a list of spells that print a cost beside
    their range and duration is a list of spells, not of gear (Classic Fantasy Imperative's spell blocks)."""
    got = lists.labels_of("Rank: Mage 0  Casting Time: 1 Turn\nSphere: None  Duration: Instant\nCost: 1  Range: Touch")
    assert {"rank", "casting time", "sphere", "duration", "cost", "range"} <= got and "none duration" not in got
    block = "Rank: Mage {n}  Casting Time: 1 Round\nSphere: None  Duration: {n} Minutes\nCost: {n}  Range: Touch\n" + PROSE
    spells = [(name, 3, block.format(n=n)) for n, name in enumerate(["Appraise", "Armor", "Avert", "Befuddle", "Calm"], 1)]
    got = types(doc_of(("Spells", 1, PROSE), ("Spell Descriptions", 2, PROSE), *spells))
    assert all(got[name] == "spell" for name, *_ in spells), got


def test_value_first_stat_lines_type_the_whole_list():
    """Stat lines that print each value before its label ("6 HP, 1 Armor, 13 STR"), as many small-press
    games do, are field labels too: the creatures that print no armour are typed with those that do."""
    assert lists.labels_of("6 HP, 13 STR, 12 DEX, 15 WIL, bite (d8)") == {"hp", "str", "dex", "wil"}
    assert not lists.labels_of("He has 3 sons, 2 daughters and a dog.") & {"sons", "daughters"}  # prose
    line = "{hp} HP, {armor}{s} STR, 12 DEX, 9 WIL, {attack}\n\n- Lurks where the road bends.\n- Flees from fire."
    beasts = [(name, 2, line.format(hp=4 + n, armor="1 Armor, " if n % 2 else "", s=10 + n, attack=att))
              for n, (name, att) in enumerate([("Acolyte", "dagger (d6)"), ("Bog Hound", "bite (d8)"),
                                               ("Cave Eel", "bite (d6)"), ("Dune Crab", "claws (d8)"),
                                               ("Elm Walker", "slam (d10)"), ("Fen Wisp", "touch (d4)")])]
    doc = doc_of(("Bestiary", 1, PROSE), *beasts)
    got = types(doc)
    assert [name for name, *_ in beasts if got[name] != "monster"] == []


def test_a_row_that_groups_other_entries_of_the_book_is_not_one_of_them():
    """A bestiary's table of kinds ("Avian | Roc, Wyvern") lists creatures the book describes one by one:
    its rows group them, they are not creatures."""
    kinds = [("Avian", "Avian\nMonsters: Roc, Wyvern"), ("Beast", "Beast\nMonsters: Bear, Wolf"),
             ("Plant", "Plant\nMonsters: Treant, Vines")]
    beasts = [(name, 2, f"{4 + n} HP, 1 Armor, 12 STR, 10 DEX, 8 WIL, bite (d{6 + n % 2 * 2})")
              for n, name in enumerate(["Bear", "Roc", "Treant", "Vines", "Wolf", "Wyvern"])]
    doc = doc_of(("Bestiary", 1, PROSE), ("Monster Kinds", 2, "Roll a d6 for a kind of monster."),
                 *[(k, 3, body, "row") for k, body in kinds], *beasts)
    got = types(doc)
    assert all(got[name] == "monster" for name, *_ in beasts)
    assert [k for k, _ in kinds if got[k] is not None] == []


def test_an_introduction_before_a_list_does_not_hide_the_kind_its_parent_names():
    """"Classes" opens with "Class Basics" (a section with parts of its own), then the classes. The
    heading above the list names their kind, so the class printing fewer parts than the others is a class
    too; before, the introduction hid the parent's name and the odd one out stayed untyped."""
    intro = [("Class Basics", 2, PROSE), ("Ability Scores", 3, PROSE), ("Gear", 3, PROSE)]
    rows = []
    for name in ("Bard", "Cleric", "Fighter", "Rogue", "Monk", "Wizard", "Druid"):
        rows += [(name, 2, f"Ability Scores: +2 Strength or Wisdom.\nThe {name.lower()} is a class. " + PROSE),
                 ("Class Features", 3, PROSE), ("Class Talents", 3, PROSE)]
    rows += [("Ranger", 2, "Ability Scores: +2 Dexterity or Wisdom.\nThe ranger is a class. " + PROSE),
             ("Class Talents", 3, PROSE)]
    got = {}
    doc = doc_of(("Classes", 1, PROSE), *intro, *rows)
    classify(doc)
    for e in doc.entries:
        got.setdefault(e.title, e.content_type)
    assert [n for n in ("Bard", "Cleric", "Fighter", "Rogue", "Monk", "Wizard", "Druid", "Ranger")
            if got[n] != "class"] == []


def test_a_cost_in_points_is_no_price():
    """A commander's commands print "Cost: 2 command points" beside their target and effect: powers paid from a
    pool, not gear; a pack's "Cost: 10 gp" is a price."""
    assert lists.labels_of("Interrupt action\nCost: 2 command points\nTarget: One nearby ally\nEffect: A reroll.") == {
        "target", "effect"}
    assert lists.labels_of("Cost: 10 gp\nWeight: 2") == {"cost", "weight"}
    commands = [(n, 3, f"Interrupt action\nCost: {k} command points\nTarget: One nearby ally\nEffect: {n} now.")
                for k, n in enumerate(("Rally Now", "Try Again", "Hit Harder", "Save Now"), 1)]
    packs = [(n, 3, f"Cost: {k} gp\nWeight: 2\nA pack for the road.") for k, n in ((10, "Pack A"), (12, "Pack B"), (15, "Pack C"))]
    got = types(doc_of(("Commander", 1, PROSE), ("1st Level Commands", 2, PROSE), *commands,
                       ("Gear", 1, PROSE), ("Packs", 2, PROSE), *packs))
    assert [n for n, *_ in commands if got[n] == "item"] == []
    assert [got[n] for n, *_ in packs] == ["item"] * 3


def test_the_rows_of_a_random_table_under_a_bestiary_are_not_creatures():
    """A bestiary's idea table ("d20 | Spark One | Spark Two") names things to roll for; a row of a
    table of creatures, without a die column, is one of them."""
    sparks = [(w, 3, f"{w}\nd20: {n}; Spark Two: {o}", "row")
              for n, (w, o) in enumerate([("Germinating", "Swarm"), ("Bubbling", "Heart"), ("Oracle", "Church")], 1)]
    beasts = [(w, 3, f"{w}\nHabitat: {h}; Size: large", "row") for w, h in (("Gulper", "marsh"), ("Nightjar", "wood"))]
    doc = doc_of(("Paranatural Bestiary", 1, PROSE), ("Spark Tables", 2, "Roll 2d20 and combine them."), *sparks,
                 ("Wild Creatures", 2, "What lives out there."), *beasts)
    got = types(doc)
    assert [w for w, *_ in sparks if got[w] is not None] == []
    assert [got[w] for w, *_ in beasts] == ["monster", "monster"]
