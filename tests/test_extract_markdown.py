"""Markdown and plain-text extraction: headings, levels, parents, bodies, odd inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from gmtool.errors import ExtractError
from gmtool.index.extract.markdown import extract_markdown
from gmtool.index.extract.plaintext import extract_text

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_atx_levels_parents_lines_and_bodies(tmp_path):
    doc = extract_markdown(
        write(
            tmp_path,
            "a.md",
            (
                "# Spells {#chapter-spells}\n"
                "Intro text.\n"
                "\n"
                "## **Fireball** ##\n"
                "*3rd-level evocation*\n"
                "\n"
                "**Range:** 150 feet\n"
                "### Notes\n"
                "## Light\n"
                "# Monsters\n"
                "#### Deep one\n"
            ),
        )
    )
    assert doc.format == "md" and doc.pages == 1 and doc.page_texts[0].startswith("# Spells")
    got = [(e.title, e.level, e.parent, e.line) for e in doc.entries]
    assert got == [
        ("Spells", 1, None, 1),
        ("Fireball", 2, 0, 4),
        ("Notes", 3, 1, 8),
        ("Light", 2, 0, 9),
        ("Monsters", 1, None, 10),
        ("Deep one", 4, 4, 11),
    ]
    fire = doc.entries[1]
    assert fire.body == "3rd-level evocation\n\nRange: 150 feet"
    assert all(e.page is None and e.end_page == 0 and e.origin == "markdown" for e in doc.entries)
    assert doc.entries[0].body == "Intro text."


def test_setext_headings_and_fenced_code(tmp_path):
    doc = extract_markdown(
        write(
            tmp_path,
            "b.md",
            (
                "Title Here\n"
                "==========\n"
                "\n"
                "```\n"
                "# not a heading\n"
                "```\n"
                "\n"
                "Section Two\n"
                "-----------\n"
                "text\n"
                "\n"
                "---\n"
                "\n"
                "~~~python\n"
                "## still code\n"
                "~~~\n"
            ),
        )
    )
    assert [(e.title, e.level, e.parent) for e in doc.entries] == [
        ("Title Here", 1, None),
        ("Section Two", 2, 0),
    ]
    assert "# not a heading" in doc.entries[0].body
    assert doc.title == "Title Here"
    # a fence's marker lines are markup: the code stays, the backticks and the language go
    assert "```" not in doc.entries[0].body and "~~~" not in doc.entries[1].body
    assert "## still code" in doc.entries[1].body and "python" not in doc.entries[1].body


def test_tables_links_and_html_are_flattened(tmp_path):
    doc = extract_markdown(
        write(
            tmp_path,
            "c.md",
            (
                "## Table\n"
                "| Armor | Cost |\n"
                "|:------|-----:|\n"
                "| **Padded** | 5 gp |\n"
                "See [heal](#heal) and <b>bold</b>.\n"
                "<table>\n<tr>\n<td>STR</td>\n<td>DEX</td>\n</tr>\n</table>\n"
            ),
        )
    )
    body = doc.entries[0].body
    assert "|" not in body and "**" not in body and "<" not in body
    # a header of labels over one row of values reads as the fields of one thing
    assert "Armor: Padded; Cost: 5 gp" in body and "See heal and bold." in body
    assert "STR  DEX" in body


def test_empty_markdown_and_text_give_no_entries(tmp_path):
    for fn in (extract_markdown, extract_text):
        doc = fn(write(tmp_path, "empty" + (".md" if fn is extract_markdown else ".txt"), ""))
        assert doc.entries == [] and doc.pages == 1


def test_binary_file_is_unsupported(tmp_path):
    p = tmp_path / "x.md"
    p.write_bytes(b"%PDF-1.4\x00\x01\x02binary")
    for fn in (extract_markdown, extract_text):
        with pytest.raises(ExtractError) as exc:
            fn(p)
        assert exc.value.code == "UNSUPPORTED_FORMAT" and exc.value.hint


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    p = tmp_path / "latin.md"
    p.write_bytes("# Caf\xe9\nbody\n".encode("latin-1"))
    doc = extract_markdown(p)
    assert doc.entries[0].title.startswith("Caf")


def test_text_heading_heuristic(tmp_path):
    doc = extract_text(
        write(
            tmp_path,
            "t.txt",
            (
                "CHAPTER ONE: COMBAT\n"
                "\n"
                "Rules for fighting.\n"
                "\n"
                "Opportunity Attacks\n"
                "You can make one when a creature leaves your reach.\n"
                "\n"
                "This is a sentence that ends with a period.\n"
                "\n"
                "not a heading because lowercase\n"
                "more text\n"
                "\n"
                "Underlined Part\n"
                "==============\n"
                "Body of part.\n"
                "\n"
                "Cover and Concealment\n"
                "Half cover gives +2.\n"
            ),
        )
    )
    got = [(e.title, e.level, e.parent, e.line) for e in doc.entries]
    assert got == [
        ("CHAPTER ONE: COMBAT", 1, None, 1),
        ("Opportunity Attacks", 2, 0, 5),
        ("Underlined Part", 1, None, 13),
        ("Cover and Concealment", 2, 2, 17),
    ]
    assert doc.format == "txt" and all(e.origin == "text" for e in doc.entries)
    assert doc.entries[1].body.startswith("You can make one")


@pytest.fixture(scope="module")
def cc_srd_md():
    path = CORPUS / "md" / "cc-srd5.md"
    if not path.exists():
        pytest.skip(f"corpus not available: {path}")
    return extract_markdown(path)


@pytest.mark.corpus
def test_cc_srd5_markdown_structure(cc_srd_md):
    doc = cc_srd_md
    assert len(doc.entries) > 2000
    titles = {e.title for e in doc.entries}
    assert {"Races", "Fireball", "Adult Red Dragon", "Bag of Holding", "Grappled"} <= titles
    assert not any("{#" in t or "**" in t for t in titles)
    fireball = next(e for e in doc.entries if e.title == "Fireball")
    assert fireball.body.startswith("3rd-level evocation")
    chain, i = [], fireball.parent
    while i is not None:
        chain.append(doc.entries[i].title)
        i = doc.entries[i].parent
    assert chain == ["Spell Descriptions", "Spell Lists"]


def test_text_skips_stat_lines_and_lists_of_words(tmp_path):
    doc = extract_text(
        write(
            tmp_path,
            "s.txt",
            (
                "Owlbear\n"
                "Large monstrosity, unaligned\n"
                "\n"
                "Armor Class 13\n"
                "\n"
                "Skills Perception +3\n"
                "\n"
                "Challenge 3 (700 XP)\n"
                "\n"
                "Tools: None\n"
                "\n"
                "Epic\n"
                "\n"
                "Great\n"
                "\n"
                "Good\n"
                "\n"
                "Fair\n"
                "\n"
                "Pass without Trace\n"
                "A veil of shadows.\n"
            ),
        )
    )
    assert [e.title for e in doc.entries] == ["Owlbear", "Pass without Trace"]


def test_site_markup_and_titles_of_a_single_file(tmp_path):
    """HTML comment before the first heading, front matter, entities, <br>, <div>, raw table,
    blockquote heading, shortcode box, placeholders: read as a browser shows the page."""
    doc = extract_markdown(write(tmp_path, "export.md", (
        "<!-- exported by a wiki\n     on a Tuesday -->\n"
        "# Tidewater Rules\n\n"
        "A game of &ldquo;salt&rdquo; and&nbsp;storms.<br/>By the crew.\n\n"
        "## Dots\n\n"
        '<div class="rating">\n\n'
        "| Trait | Rating |\n|---|---|\n| Nerve | &#x25CF;&#x25CF;&#x25CB; |\n\n"
        "</div>\n\n"
        "Strength [[PHYSICAL ICON]] is one of them. An empty link []() is nothing.\n\n"
        ">> ##### Optional Rule: Squalls\n>> Wind gusts.\n\n"
        "{{< hint info >}}\nA hint box's text is text.\n{{< /hint >}}\n"
    )))
    assert doc.title == "Tidewater Rules"  # the one H1, not the comment, not the stem
    titles = [e.title for e in doc.entries]
    assert titles == ["Tidewater Rules", "Dots", "Optional Rule: Squalls"]
    dots = doc.entries[1].body
    assert "Nerve  ●●○" in dots and "Strength is one of them. An empty link is nothing." in " ".join(dots.split())
    assert "{{" not in dots and "<" not in dots
    assert doc.entries[0].body == "A game of \u201csalt\u201d and storms.\nBy the crew."
    assert doc.entries[2].body == "Wind gusts.\n\nA hint box's text is text." and doc.entries[2].line == 19


def test_title_is_front_matter_or_a_title_heading_never_a_section(tmp_path):
    fm = extract_markdown(write(tmp_path, "a.md", "---\ntitle: \"Salt &amp; Storm\"\n---\n# Chapter One\n\nText.\n"))
    assert fm.title == "Salt & Storm"
    chapters = extract_markdown(write(tmp_path, "b.md", (
        "# The Basics\n\nHow to play.\n\n## Rolling\n\nRoll dice.\n\n# Combat\n\nFight.\n")))
    assert chapters.title is None  # the first of several chapters is not the book's title
    cover = extract_markdown(write(tmp_path, "c.md", "# Fate of Tides\n\n(c) 2020 the crew.\n\n# Credits\n\nUs.\n\n# Play\n\nGo.\n"))
    assert cover.title == "Fate of Tides"  # a short title page before the chapters
    index = extract_markdown(write(tmp_path, "d.md", (
        "**Void Run** is licensed to you.\n\n## Index\n- [Overview](#overview)\n- [Combat](#combat)\n\n"
        "# Overview\n\nFly.\n\n# Combat\n\nShoot.\n")))
    assert index.title is None  # a list of the book's sections is no title page


def test_title_after_a_cover_notice_named_like_the_file_or_spelled_out_by_the_licence(tmp_path):
    licence = " ".join(["Licensed to all of you under these terms."] * 60)  # a 420-word title page
    cover = extract_markdown(write(tmp_path, "Salt-Storm-RPG-r3.md", (
        "Copyright 2020 the crew. Dedicated to the first table.\n\n"
        f"## Salt and Storm Role-Playing Game\n\n{licence}\n\n## Contents\n\nA list.\n\n## Part 1\n\nPlay.\n")))
    assert cover.title == "Salt and Storm Role-Playing Game"  # a short notice above it, the file's words in it
    unnamed = extract_markdown(write(tmp_path, "notes.md", (
        "Copyright 2020 the crew.\n\n"
        f"## Salt and Storm Role-Playing Game\n\n{licence}\n\n## Contents\n\nA list.\n")))
    assert unnamed.title is None  # a long first section, and nothing ties it to the file
    long_notice = extract_markdown(write(tmp_path, "Salt-Storm-2.md", f"{licence}\n\n## Salt and Storm Rules\n\nText.\n"))
    assert long_notice.title is None  # a book's own opening text, not a cover's notice
    srd = extract_markdown(write(tmp_path, "XYZ-TRD-5.2-CC.md", (
        "# Legal Information\n\nThe Tabletop Reference Document 5.2 (“TRD 5.2”) is provided free of charge.\n\n"
        "# Playing the Game\n\nRoll.\n")))
    assert srd.title == "Tabletop Reference Document 5.2"  # the acronym of its file name, as its licence spells it


def test_a_row_slot_that_every_class_table_repeats_is_not_an_entry(tmp_path):
    classes = "".join(
        f"## {name}\n\n| | |\n|---|---|\n| Hit Point Die | 1d{die} per {name} level |\n| Armor Training | Light |\n"
        f"| Saving Throw Proficiencies | Wisdom |\n| Skill Proficiencies | Choose 2 |\n\n"
        f"The {name} fights.\n\n" for name, die in (("Warden", 10), ("Seer", 6), ("Bard", 8), ("Monk", 8), ("Thief", 8)))
    gear = "## Gear\n\n| Item | Cost |\n|---|---|\n| Rope | 1 gp |\n| Lantern | 5 gp |\n| Chalk | 1 cp |\n"
    doc = extract_markdown(write(tmp_path, "book.md", f"# Classes\n\nPick one.\n\n{classes}{gear}"))
    titles = [e.title for e in doc.entries]
    assert "Hit Point Die" not in titles and "Armor Training" not in titles  # a template's slots, five times over
    assert {"Rope", "Lantern", "Chalk", "Warden"} <= set(titles)
    warden = next(e for e in doc.entries if e.title == "Warden")
    assert "1d10 per Warden level" in warden.body  # the slot's text stays with its class


def test_bold_run_ins_are_entries_fields_are_not(tmp_path):
    doc = extract_markdown(write(tmp_path, "p.md", (
        "# Poisons\n\n"
        "**_Drow Poison (Injury)._** This poison is typically made only by the drow.\n\n"
        "**Again and Again (8 Speed points):** You can take another action on your turn.\n\n"
        "**Range:** 150 feet\n\n"
        "- **Armor Class:** 17 (natural armor) and a lot more words here\n"
    )))
    got = [(e.title, e.origin, e.tags, e.parent, e.line) for e in doc.entries]
    assert got == [("Poisons", "markdown", None, None, 1), ("Drow Poison", "runin", ["Injury"], 0, 3),
                   ("Again and Again", "runin", ["8 Speed points"], 0, 5)]
    assert doc.entries[1].body == "Drow Poison (Injury). This poison is typically made only by the drow."
    assert "Range: 150 feet" in doc.entries[0].body


def test_a_backslash_escape_in_a_table_cell_is_its_character(tmp_path):
    """`Dagger\\*` marks a footnote with an escaped asterisk: the row is "Dagger", not "Dagger\\"."""
    doc = extract_markdown(write(tmp_path, "gear.md", (
        "# Gear\n\n## Weapons\n\n| Weapon | Damage | Cost |\n| :-- | :-: | :-: |\n"
        "| Dagger\\* | 1d4+1 | 3 GP |\n| Crossbow, heavy\\*\\* | 1d10 | 35 GP |\n| Sling \\(cord\\) | 1d8 | 1 SP |\n"
        "| Club | 1d6 | 1 SP |\n\n\\* Can be thrown. \\*\\* Two hands.\n"
    )))
    titles = [e.title for e in doc.entries]
    assert {"Dagger", "Crossbow, heavy", "Sling (cord)", "Club"} <= set(titles), titles
    assert not any("\\" in t for t in titles)


def test_a_blank_header_row_over_a_bold_one_is_the_table_header(tmp_path):
    """Converters write an empty header row and set the real one in bold below it: that row names the
    columns; it is no thing of its own."""
    doc = extract_markdown(write(tmp_path, "beasts.md", (
        "# Beasts\n\n## Kinds\n\n|  |  |  |\n| --- | --- | --- |\n| **d6** | **Group** | **Members** |\n"
        "| **1** | Avian | Roc, Wyvern |\n| **2** | Beast | Bear, Wolf |\n| **3** | Plant | Treant, Vines |\n"
    )))
    rows = {e.title: e.body for e in doc.entries if e.origin == "row"}
    assert set(rows) == {"Avian", "Beast", "Plant"}
    assert "Members: Roc, Wyvern" in rows["Avian"]


def test_a_link_in_a_table_row_reads_as_its_text(tmp_path):
    doc = extract_markdown(write(tmp_path, "events.md", (
        "# Events\n\n| d6 | Event | Effect |\n| --- | --- | --- |\n"
        "| 1 | Encounter | Roll for its [reactions](/rules/core.md/#reactions). |\n"
        "| 2 | Sign | A clue: ![spoor](img/spoor.png) or tracks. |\n| 3 | Loss | Lose a torch. |\n"
    )))
    rows = {e.title: e.body for e in doc.entries if e.origin == "row"}
    assert "Roll for its reactions." in rows["Encounter"] and "A clue: spoor or tracks." in rows["Sign"]
    assert not any("](" in b for b in rows.values())


def test_pandoc_simple_and_multiline_tables_read_as_tables(tmp_path):
    """pandoc writes tables as columns of spaces under a rule of dash groups. Read as plain Markdown, the
    last row above a multiline table's closing rule was a setext heading ("Shield +1 --2")."""
    doc = extract_markdown(write(tmp_path, "gear.md", (
        "# Gear\n\n#### Armor\n\n"
        "  -----------------------------------------------\n"
        "  Armor Type        Base AC        Atk Penalty\n"
        "  ----------------- -------------- --------------\n"
        "  None              10             ---\n\n"
        "  Heavy             13             --2\n\n"
        "  Shield            +1             --2\n"
        "  -----------------------------------------------\n\n"
        "#### Weapons\n\n"
        "  Weapon        Damage   Cost\n"
        "  ------------- -------- ------\n"
        "  Dagger        d4       2 gp\n"
        "  Longsword     d8       15 gp\n"
        "  Warhammer     d8       7 gp\n\n"
        "After the table.\n"
    )))
    titles = [e.title for e in doc.entries]
    assert not any("+1" in t for t in titles), titles
    rows = {e.title: e.body for e in doc.entries if e.origin == "row"}
    assert {"None", "Heavy", "Shield", "Dagger", "Longsword", "Warhammer"} <= set(rows), titles
    assert "Base AC: +1" in rows["Shield"] and "Cost: 15 gp" in rows["Longsword"]
    weapons = next(e for e in doc.entries if e.title == "Weapons")
    assert "After the table." in weapons.body


def test_alert_and_callout_markers_read_as_their_titles(tmp_path):
    """`> [!NOTE]` reads "Note:"; an Obsidian callout, folded or titled, reads as its title."""
    doc = extract_markdown(write(tmp_path, "notes.md", (
        "# Weather\n\n> [!NOTE]\n> Storms come at dusk.\n\n"
        "> [!info]- Squall Table\n> Roll a d6 each watch.\n\n> [!stat-block]\n> 3 HP, 1 Armor\n"
    )))
    body = doc.entries[0].body
    assert "Note:\nStorms come at dusk." in body and "Squall Table\nRoll a d6 each watch." in body
    assert "Stat block:" in body and "[!" not in body


def test_a_bold_line_alone_heads_the_text_after_it(tmp_path):
    """`**Ghost**` on a line of its own, then its stat line or a blank line and its text: a heading set in
    bold. Its text runs to the next bold name or heading, so a creature's bullet lines stay with it; a bold
    sentence, or a bold label the file repeats, heads nothing."""
    doc = extract_markdown(write(tmp_path, "b.md", (
        "# Bestiary\n\n**Ghost**\n10 HP, 3 Armor, 12 CTRL\nSpectral embrace (d6 CTRL)\n\n"
        "- Incorporeal spirits unable to leave after death.\n- Can attempt a possession.\n\n"
        "**Mother**\n14 HP, 1 Armor, 14 STR\n\n- Impossibly tall, curvy, pale.\n\n"
        "**Healing Rate**\n\nA character heals one hit point a day while resting.\n\n"
        "**Roll on the table below.**\n\n| d6 | Event |\n|---|---|\n| 1 | Rain |\n\n"
        "**Examples:**\n\nOne example of many words in a row here.\n\n"
        "**Examples:**\n\nAnother example of many words in a row here.\n\n## Next\n\n"
        "**d6/d8 damage**\nWielded in: main paw or both paws, d8 in both.\n\n"
        "### Rations\n\n**Food for the road**\n\nEating a ration and resting a watch heals all HP.\n"
    )))
    runins = {e.title: e for e in doc.entries if e.origin == "runin"}
    assert list(runins) == ["Ghost", "Mother", "Healing Rate"]
    assert "Can attempt a possession." in runins["Ghost"].body and "Mother" not in runins["Ghost"].body
    assert runins["Ghost"].body.startswith("10 HP, 3 Armor")  # a heading's text, without the heading
    assert runins["Mother"].body.endswith("Impossibly tall, curvy, pale.") and runins["Ghost"].parent == 0
    assert runins["Healing Rate"].body.endswith("one hit point a day while resting.")


def test_a_key_column_of_one_scales_steps_makes_no_entries(tmp_path):
    """"TL 7", "TL 8", … down a table's first column are steps of a technology level, not things."""
    doc = extract_markdown(write(tmp_path, "c.md", (
        "# Computers\n\n| Optimum TL | Power | Cost |\n| --- | --- | --- |\n"
        "| TL 7 | Model 0 | 50 |\n| TL 8 | Model 1 | 100 |\n| TL 9 | Model 1 | 250 |\n\n"
        "| Drug | Cost |\n| --- | --- |\n| Fast Drug | 200 |\n| Slow Drug | 500 |\n| Panacea | 800 |\n"
    )))
    assert [e.title for e in doc.entries if e.origin == "row"] == ["Fast Drug", "Slow Drug", "Panacea"]


def test_cells_that_differ_only_in_their_numbers_are_a_scale_not_things(tmp_path):
    """A baseline-stats table ("+9 vs. AC", "+10 vs. AC" by level) and a size table ("+1 level", "+2 levels"):
    each name cell is one step of a scale, whatever words stand beside its number."""
    doc = extract_markdown(write(tmp_path, "b.md", (
        "# Baseline Stats\n\n| Level | Attack | Hit | HP |\n| --- | --- | --- | --- |\n"
        "| 3 | +9 vs. AC | 3d6 | 45 |\n| 4 | +10 vs. AC | 4d6 | 54 |\n| 5 | +11 vs. AC | 5d6 | 72 |\n\n"
        "| Size | Cost |\n| --- | --- |\n| +1 level | x2 |\n| +2 levels | x3 |\n| +3 levels | x4 |\n\n"
        "| Weapon | Cost |\n| --- | --- |\n| +1 Sword | 500 |\n| Bow | 20 |\n| Axe | 10 |\n"
    )))
    assert [e.title for e in doc.entries if e.origin == "row"] == ["+1 Sword", "Bow", "Axe"]


def test_rows_picked_by_a_die_in_the_first_column_are_results_to_roll_for_not_creatures(tmp_path):
    """Under a creature, "d6 or d8 | Demonic Ability" rows are abilities to roll for; a "Level | Monster" table's
    rows, numbered by level, not by a die, are creatures."""
    from gmtool.index.classify import classify

    doc = extract_markdown(write(tmp_path, "d.md", (
        "# Monsters\n\n## Demon\n\nDemons may have a random ability.\n\n| d6 or d8 | Demonic Ability | Description |\n"
        "| --- | --- | --- |\n| 1 | True seeing | Immune to invisibility. |\n| 2 | Fear aura | Enemies are afraid. |\n"
        "| 3 | Demonic speed | It acts twice. |\n\n## Monsters by Level\n\n| Level | Monster | Size |\n| --- | --- | --- |\n"
        "| 1 | Goblin Scum | normal |\n| 2 | Hobgoblin Warrior | normal |\n| 3 | Ogre | large |\n"
    )))
    classify(doc)
    got = {e.title: (e.content_type, e.body) for e in doc.entries if e.origin == "row"}
    assert got["Fear aura"] == (None, "Fear aura\nd6 or d8: 2; Description: Enemies are afraid.")
    assert [got[n][0] for n in ("True seeing", "Demonic speed", "Goblin Scum", "Ogre")] == [None, None, "monster", "monster"]


def test_numbers_before_the_name_and_a_random_table_printed_in_two_halves(tmp_path):
    """"HP | Pips | Background": the name is the first column after the numbers, which are its values. A d6
    table printed in two halves side by side gives all six names when its header or the heading above
    names what they are; a two-half table of words under "Physique" names ideas to roll for, not things."""
    from gmtool.index.classify import classify

    doc = extract_markdown(write(tmp_path, "m.md", (
        "# Make a Character\n\n## Backgrounds\n\n| HP | Pips | Background | Item A |\n| --- | --- | --- | --- |\n"
        "| 1 | 1 | Test subject | Lead coat |\n| 1 | 2 | Kitchen forager | Cookpots |\n| 2 | 1 | Hedge witch | Incense |\n\n"
        "## Callings\n\n| | | | |\n| --- | --- | --- | --- |\n| **d6** | **Background** | | |\n"
        "| **1** | Aurifex | **4** | Kettlewright |\n| **2** | Fieldwarden | **5** | Marchguard |\n"
        "| **3** | Hexenbane | **6** | Outrider |\n\n## Physique\n\n| | | | |\n| --- | --- | --- | --- |\n"
        "| 1 | Athletic | 4 | Scrawny |\n| 2 | Brawny | 5 | Lanky |\n| 3 | Flabby | 6 | Rugged |\n"
    )))
    classify(doc)
    rows = {e.title: (e.body, e.content_type) for e in doc.entries if e.origin == "row"}
    assert rows["Hedge witch"] == ("Hedge witch\nHP: 2; Pips: 1; Item A: Incense", "background")
    assert sorted(n for n in rows if n not in ("Test subject", "Kitchen forager", "Hedge witch")) == [
        "Aurifex", "Fieldwarden", "Hexenbane", "Kettlewright", "Marchguard", "Outrider"]
    assert rows["Kettlewright"] == ("Kettlewright\nd6: 4", "background")


def test_aligned_delimiter_rows_and_what_a_column_header_says(tmp_path):
    """A delimiter row of ":--" and ":-:" cells is no text. Rows under "Weapon | Damage | AP/HP" are weapons,
    though they print damage and (an object's) hit points; a table of hit locations in a creature's section is
    its parts, not armour, though the section's title ends in "Armor"; "Armor Values" heads no armour."""
    from gmtool.index.classify import classify

    doc = extract_markdown(write(tmp_path, "w.md", (
        "# Combat\n\n## Sample Melee Weapons\n\n| Weapon | Damage | Size | AP/HP |\n| :-- | :-: | :-: | :-: |\n"
        "| Axe | 1d6+1 | M | 4/8 |\n| Broadsword | 1d8 | M | 6/10 |\n| Club | 1d6 | M | 4/4 |\n\n"
        "# Creatures\n\n## Sample Creatures\n\n### Giant Ant\n\nSTR 20, CON 12, SIZ 16, DEX 11, INT 2.\n"
        "Hit Points 12, Armor 4, Bite (1d6) damage.\n\n#### Hit Locations & Armor\n\n| 1d20 | Location | AP/HP |\n"
        "| :-: | :-- | :-: |\n| 1-3 | Right Leg | 4/6 |\n| 4-6 | Left Leg | 4/6 |\n| 7-9 | Abdomen | 4/7 |\n"
        "| 10-20 | Head | 4/6 |\n\n# Powers\n\n## Animation\n\nAnimate a construct of some material, at a cost.\n\n"
        "| Armor Values | Power Point Cost |\n| :-- | :-: |\n| Soft Wood | 2 |\n| Hard Wood | 4 |\n| Hard Metal | 8 |\n"
    )))
    classify(doc)
    got = {e.title: e.content_type for e in doc.entries}
    assert [got[n] for n in ("Axe", "Broadsword", "Club")] == ["item"] * 3
    assert got["Giant Ant"] == "monster" and {got[n] for n in ("Right Leg", "Abdomen", "Head")} == {None}
    assert "item" not in {got[n] for n in ("Soft Wood", "Hard Metal")}
    assert not any(":-" in e.body for e in doc.entries)


def test_a_bold_name_with_a_long_description_in_its_cell(tmp_path):
    """"**Molotov Cocktail** (sets area alight, causing d6 continued damage until put out) | $50": the cell is
    too long for a name; its bold lead is the name and the parentheses its text. A short cell stays whole."""
    from gmtool.index.classify import classify

    doc = extract_markdown(write(tmp_path, "g.md", (
        "# Gear\n\n## Specialty Items\n\n| Item | Cost |\n| --- | --- |\n"
        "| **Molotov Cocktail** (sets area alight, causing d6 continued damage until put out) | $50 |\n"
        "| **Flashbang** (blast, temporarily blinds those who fail a DEX save) | $100 |\n"
        "| **Stims** (immediate recovery from critical damage, +1d4 temporary DEX) | $100 |\n"
        "| **Pistol** (d6 damage) | $200 |\n"
    )))
    classify(doc)
    rows = {e.title: (e.body, e.content_type) for e in doc.entries if e.origin == "row"}
    assert sorted(rows) == ["Flashbang", "Molotov Cocktail", "Pistol (d6 damage)", "Stims"]
    assert rows["Stims"] == ("Stims\n(immediate recovery from critical damage, +1d4 temporary DEX); Cost: $100", "item")


def test_a_bold_name_and_its_text_in_a_random_tables_one_cell(tmp_path):
    """"5 | **Mirror World:** Everything seemed okay at first…": a table of one described cell per roll names a
    thing in bold and describes it; the text is the entry's own. "**Book**, blank" stays a name as printed."""
    doc = extract_markdown(write(tmp_path, "f.md", (
        "# Stress\n\n## Fallout\n\n| | Stress Fallout Tables |\n| --- | --- |\n"
        "| 1 | **Paranoia:** Is it paranoia if the worries are completely reasonable? You watch the door. |\n"
        "| 2 | **Mirror World:** Everything seemed okay at first, but now the world in the mirror is different. |\n"
        "| 3 | **Odd:** You adopt an odd behavior that makes others uncomfortable when you resist it. |\n\n"
        "## Gear\n\n| Item | Price |\n| --- | --- |\n| **Book**, blank | 300p |\n| **Caltrops**, bag | 10p |\n"
        "| Lantern | 50p |\n"
    )))
    rows = {e.title: e.body for e in doc.entries if e.origin == "row"}
    assert sorted(rows) == ["Book, blank", "Caltrops, bag", "Lantern", "Mirror World", "Odd", "Paranoia"]
    assert rows["Mirror World"].startswith("Mirror World\nEverything seemed okay at first")


def test_pandoc_markup_a_block_scalar_title_superscripts_and_attributes(tmp_path):
    """A pandoc export: front matter whose title is a YAML block with a cover image before the name, "13^th^"
    superscripts, and an image's `{width=…}` attributes: the title reads "13th Age Archmage Engine"."""
    doc = extract_markdown(write(tmp_path, "srd.md", (
        "---\nsubtitle: System Reference Document\ntitle: |\n  ![](/media/image1.jpeg){width=\"8.5in\"\n  height=\"11in\"}\n\n"
        "  *13^th^ Age* Archmage Engine\n---\n\n# Character Rules\n\nAt 1^st^ level you pick a class.\n\n"
        "## 3^rd^ Level Spells\n\n![map](/media/image2.png){width=\"2in\"} A map of the realm.\n"
    )))
    assert doc.title == "13th Age Archmage Engine"
    assert [e.title for e in doc.entries] == ["Character Rules", "3rd Level Spells"]
    assert doc.entries[0].body == "At 1st level you pick a class." and doc.entries[1].body == "map A map of the realm."


def test_backslash_escapes_spans_and_stray_markers_read_as_text(tmp_path):
    """pandoc escapes: "sack\\*, tinder\\*\\*" are footnote marks, not emphasis; "1,000 feet \\[300 m\\]" and
    "0\\." are plain; a `[text]{.underline}` span is its text; an unpaired "**" in a heading is dropped."""
    doc = extract_markdown(write(tmp_path, "e.md", (
        "# The player rolls the dice** and we judge\n\nGear: small empty sack\\*, flint and tinder\\*\\*, *two* torches.\n"
        "Range rises to 1,000 feet \\[300 m\\]; the sum is 0\\.\n\n## Dire Rat\n\n[Nastier Specials]{.underline} Squeal: it calls"
        " for help.\n\n| Level | Hit |\n| --- | --- |\n| 1^st^ | 1d6 |\n"
    )))
    first, rat = doc.entries
    assert first.title == "The player rolls the dice and we judge"
    assert first.body == ("Gear: small empty sack*, flint and tinder**, two torches.\n"
                          "Range rises to 1,000 feet [300 m]; the sum is 0.")
    assert rat.body.startswith("Nastier Specials Squeal: it calls for help.") and "1st" in rat.body and "^" not in rat.body
    from gmtool.index.extract.markdown import clean_body
    assert clean_body(["An icon \ue02a beside a mark\\* stays an icon"]) == "An icon \ue02a beside a mark\\* stays an icon"


def test_a_roll_is_no_name(tmp_path):
    """"1d4 Stress" opens a row with a roll, as "10 gp" opens one with a number: a value, not a thing."""
    doc = extract_markdown(write(tmp_path, "s.md", (
        "# Stress Examples\n\n| Stress | Example |\n| --- | --- |\n| 1 Stress | Glimpse: the odd. |\n"
        "| 1d4 Stress | Contact: the weird. |\n| 1d6 Stress | Exposure: the unknowable. |\n"
        "| 2d6 Stress | Doom: old powers. |\n"
    )))
    assert [e.title for e in doc.entries] == ["Stress Examples"]


def test_a_run_in_describing_a_table_row_takes_the_rows_values(tmp_path):
    """A gear table, then each piece described in a bold run-in: the row is dropped as a copy, and its
    price goes to the run-in, which is then typed as the item it is."""
    from gmtool.index.classify import classify

    doc = extract_markdown(write(tmp_path, "g.md", (
        "# Equipment\n\n## Sensors\n\nDevices you can buy.\n\n| Description | TL | Cost |\n| --- | --- | --- |\n"
        "| Compass | 3 | Cr10 |\n| Watch | 4 | Cr100 |\n| Counter | 5 | Cr250 |\n\n"
        "**Compass:** Indicates the direction of magnetic north, if any exists at all.\n\n"
        "**Watch:** Allows the user to tell the time on many worlds and in many places.\n\n"
        "**Counter:** Counts radiation around the user and warns of danger to health.\n"
    )))
    classify(doc)
    got = {e.title: (e.origin, e.content_type, e.body.split("\n")[-1]) for e in doc.entries[2:]}
    assert got["Watch"] == ("runin", "item", "TL: 4; Cost: Cr100") and len(got) == 3
    assert all(t == "item" for _, t, _ in got.values())


def test_a_name_column_headed_by_a_scale_holds_its_steps_not_things(tmp_path):
    """"Level | Cost | Impact" over "Marginal", "Minor", "Major": degrees of one scale, not three things."""
    doc = extract_markdown(write(tmp_path, "p.md", (
        "# Plot Edits\n\n|Level|Cost|Impact|\n|:-:|:-:|:-:|\n|Marginal|1|An alternate avenue.|\n"
        "|Minor|2|A deus ex machina.|\n|Major|3|A stroke of luck that ends it.|\n"
    )))
    assert [e.title for e in doc.entries] == ["Plot Edits"]


def test_container_fences_are_markup_their_titles_text(tmp_path):
    """`:::statblock` … `:::` (markdown-it), `:::tip Pro Tip` (Docusaurus), `::: {.note}` (pandoc) wrap text as a
    <div> does: a fence reads as its title, or as its kind as an alert does ("Statblock:"), or not at all."""
    doc = extract_markdown(write(tmp_path, "c.md", (
        "# Frog\n\n:::statblock\n6hp, STR 12, DEX 15\nAttacks: d10 spear\n:::\n\n"
        ":::tip Leaping\nFrogs always go first.\n:::\n\n::: {.note}\nA pandoc div.\n:::\n"
    )))
    body = doc.entries[0].body
    assert ":::" not in body and "{.note}" not in body
    assert "Statblock:\n6hp, STR 12, DEX 15" in body and "Leaping\nFrogs always go first." in body


def test_pandocs_range_dash_reads_as_an_en_dash(tmp_path):
    doc = extract_markdown(write(tmp_path, "r.md", "# Saves\n\nOn a natural 18--20 you succeed; Abilities---a list.\n"))
    assert doc.entries[0].body == "On a natural 18\u201320 you succeed; Abilities\u2014a list."
