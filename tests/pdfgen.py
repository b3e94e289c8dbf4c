"""PDF generators for the test-suite and for the bundled sample library.

Every ``make_*`` function writes one PDF to ``path`` and returns ``path`` (as a ``Path``).
fpdf2 is a test-only dependency, so it is imported inside the functions that need it.

The sample library's PDFs (``gmtool/sample/bestiary.pdf`` and ``grimoire.pdf``) are built
from the content below by :func:`build_sample`; rebuild them with::

    python tests/pdfgen.py --sample gmtool/sample

Text is kept to ASCII: fpdf2's core fonts only cover latin-1.

Section format used throughout: a flat list of ``(title, level, paragraphs)`` tuples in
document order. ``level`` 0 is a chapter (starts a new page, 18 pt bold), 1 a section
(14 pt bold), 2 a minor heading such as "Actions" (11 pt bold). ``paragraphs`` is a list of
strings, each printed as its own 10 pt paragraph (a stat-block line is one paragraph).
In outline PDFs, levels 0 and 1 get bookmarks; level 2 headings are typography only.
"""

from __future__ import annotations

import argparse
import random
import re
from collections.abc import Sequence
from pathlib import Path

Section = tuple[str, int, Sequence[str]]

HEADING_SIZES = {0: 18, 1: 14, 2: 11}
BODY_SIZE = 10
BODY_LINE_H = 5.0

# --------------------------------------------------------------------------------------
# Generic content for tests
# --------------------------------------------------------------------------------------

DEFAULT_SECTIONS: list[Section] = [
    (
        "Chapter One: The Harbor",
        0,
        [
            (
                "The harbor town of Wickmouth sits where the river meets the grey sea. "
                "Its lamps burn all night, and its people trade in salt, rope and rumours."
            ),
        ],
    ),
    (
        "Dockside Taverns",
        1,
        [
            (
                "The Gull and Anchor serves fish stew and cheap ale. The owner, a retired "
                "smuggler named Berrin Oakhollow, knows every captain on the coast."
            ),
        ],
    ),
    (
        "The Lamplighters' Guild",
        1,
        [
            (
                "The guild keeps the harbor lamps lit. Members carry brass hooks and swear "
                "never to let a light go out while a ship is still at sea."
            ),
        ],
    ),
    (
        "Chapter Two: The Marsh",
        0,
        [
            "East of town the land dissolves into reed beds, tidal pools and fog.",
        ],
    ),
    (
        "Reed Paths",
        1,
        [
            (
                "Safe paths through the marsh are marked with knotted red cords. A traveller "
                "who strays from them sinks to the knee with every step."
            ),
        ],
    ),
    (
        "Marsh Lights",
        1,
        [
            (
                "Pale lights drift above the water at dusk. Locals say they are the lanterns "
                "of drowned fishermen still looking for the way home."
            ),
        ],
    ),
    (
        "Chapter Three: The Cliffs",
        0,
        [
            "North of Wickmouth the coast rises into chalk cliffs full of nesting birds.",
        ],
    ),
    (
        "The Old Lighthouse",
        1,
        [
            (
                "A ruined lighthouse stands at the cliff edge. Its lamp has been dark for "
                "forty years, yet sailors still swear they see it lit on stormy nights."
            ),
        ],
    ),
]


def _new_pdf():
    from fpdf import FPDF

    pdf = FPDF(format="A4", unit="mm")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_margins(15, 15, 15)
    pdf.set_creator("gmtool tests/pdfgen.py")
    return pdf


def _heading(pdf, title: str, level: int) -> None:
    size = HEADING_SIZES.get(level, 11)
    pdf.set_font("helvetica", "B", size)
    pdf.ln(2 if level else 0)
    pdf.multi_cell(0, size * 0.5, title, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(1)


def _paragraphs(pdf, paragraphs: Sequence[str]) -> None:
    pdf.set_font("helvetica", "", BODY_SIZE)
    for para in paragraphs:
        pdf.multi_cell(0, BODY_LINE_H, para, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(1.5)


def _render(pdf, sections: Sequence[Section], outline: bool) -> None:
    """Render sections; a level-0 section starts a new page."""
    for title, level, paragraphs in sections:
        if level == 0 or pdf.page == 0:
            pdf.add_page()
        if outline and level <= 1:
            # start_section only records the bookmark (no section_title_styles set);
            # the visible heading is drawn by _heading just after, on the same spot.
            pdf.start_section(title, level=level)
        _heading(pdf, title, level)
        _paragraphs(pdf, paragraphs)


def make_outline_pdf(
    path, sections: Sequence[Section] | None = None, title: str = "Outline Test Book"
) -> Path:
    """A few pages with bold headings and a two-level outline matching them."""
    pdf = _new_pdf()
    pdf.set_title(title)
    _render(pdf, sections or DEFAULT_SECTIONS, outline=True)
    return _out(pdf, path)


def make_plain_pdf(path, sections: Sequence[Section] | None = None, title: str = "Plain Test Book") -> Path:
    """Same kind of content as make_outline_pdf but with no outline: headings only by font."""
    pdf = _new_pdf()
    pdf.set_title(title)
    _render(pdf, sections or DEFAULT_SECTIONS, outline=False)
    return _out(pdf, path)


# Column geometry (mm) for make_two_column_pdf: left x in [15, 100], right x in [110, 195].
TWO_COL_LEFT_X = 15.0
TWO_COL_RIGHT_X = 110.0
TWO_COL_WIDTH = 85.0
TWO_COL_SPLIT_X = 105.0  # any x between the columns; in PDF points that is ~297.6

_LEFT_LINES = [
    ("LEFT HEADING", True),
    ("LEFT-ONE the first left paragraph", False),
    ("begins here and continues with", False),
    ("more words of the left side.", False),
    ("", False),
    ("LEFT-TWO the second left paragraph", False),
    ("speaks of lanterns and harbors", False),
    ("and ends on this left line.", False),
]
_RIGHT_LINES = [
    ("RIGHT HEADING", True),
    ("RIGHT-ONE the first right paragraph", False),
    ("starts here and goes on with", False),
    ("more words of the right side.", False),
    ("", False),
    ("RIGHT-TWO the second right paragraph", False),
    ("speaks of reefs and fog banks", False),
    ("and ends on this right line.", False),
]


def make_two_column_pdf(path) -> Path:
    """One page with two text columns whose lines share the same y positions.

    Left column text contains LEFT-ONE / LEFT-TWO, right column RIGHT-ONE / RIGHT-TWO,
    each column has a bold 16 pt heading. A naive line-by-line extractor interleaves them.
    """
    pdf = _new_pdf()
    pdf.set_title("Two Column Test")
    pdf.add_page()
    top = 30.0
    for x, lines in ((TWO_COL_LEFT_X, _LEFT_LINES), (TWO_COL_RIGHT_X, _RIGHT_LINES)):
        y = top
        for text, is_heading in lines:
            pdf.set_font("helvetica", "B" if is_heading else "", 16 if is_heading else BODY_SIZE)
            pdf.set_xy(x, y)
            if text:
                pdf.cell(TWO_COL_WIDTH, 8 if is_heading else BODY_LINE_H, text)
            y += 10 if is_heading else BODY_LINE_H
    return _out(pdf, path)


ENCRYPTED_USER_PASSWORD = "lantern"
ENCRYPTED_OWNER_PASSWORD = "keeper"


def make_encrypted_pdf(path) -> Path:
    """A PDF with a user password (ENCRYPTED_USER_PASSWORD); RC4, so no extra packages."""
    pdf = _new_pdf()
    pdf.set_title("Encrypted Test Book")
    _render(pdf, DEFAULT_SECTIONS[:3], outline=True)
    pdf.set_encryption(owner_password=ENCRYPTED_OWNER_PASSWORD, user_password=ENCRYPTED_USER_PASSWORD)
    return _out(pdf, path)


CORRUPT_KINDS = ("zero", "garbage", "truncated", "broken_xref", "not_pdf")


def _valid_pdf_bytes() -> bytes:
    pdf = _new_pdf()
    pdf.set_title("Soon Corrupt")
    _render(pdf, DEFAULT_SECTIONS, outline=False)
    return bytes(pdf.output())


def make_corrupt_pdf(path, kind: str) -> Path:
    """Write a damaged ``.pdf`` of the given kind.

    - ``zero``: an empty file.
    - ``garbage``: 4 KiB of (seeded) random bytes, no PDF header.
    - ``truncated``: the first half of a valid PDF (no xref, no trailer, cut mid-stream).
    - ``broken_xref``: a complete PDF whose ``startxref`` value and every xref table offset
      point to wrong places. pdfium and pdfminer/pdfplumber both rebuild the xref by
      scanning the file, so this one usually STILL OPENS (tests treat it as "repairable").
    - ``not_pdf``: a plain-text file that merely has a .pdf name.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "zero":
        data = b""
    elif kind == "garbage":
        data = random.Random(1234).randbytes(4096)
        if data.startswith(b"%PDF"):  # practically impossible, but be sure
            data = b"\x00" + data[1:]
    elif kind == "truncated":
        good = _valid_pdf_bytes()
        data = good[: len(good) // 2]
    elif kind == "broken_xref":
        good = _valid_pdf_bytes()
        data = re.sub(rb"startxref\s+(\d+)", lambda m: b"startxref\n" + b"9" * len(m.group(1)), good)
        # each xref entry is "nnnnnnnnnn ggggg n \n": shift every in-use offset by +7
        data = re.sub(
            rb"(\d{10}) (\d{5}) n",
            lambda m: b"%010d %s n" % (int(m.group(1)) + 7, m.group(2)),
            data,
        )
        assert data != good and b"startxref" in data
    elif kind == "not_pdf":
        data = b"These are my session notes, not a PDF.\nSession 3: the party reached the old lighthouse.\n"
    else:
        raise ValueError(f"unknown corrupt kind {kind!r}; expected one of {CORRUPT_KINDS}")
    path.write_bytes(data)
    return path


def make_image_only_pdf(path) -> Path:
    """One page of drawn shapes (rectangles, lines, a circle) and no text layer at all."""
    pdf = _new_pdf()
    pdf.add_page()
    pdf.set_fill_color(200, 200, 210)
    pdf.rect(20, 20, 170, 40, style="F")
    pdf.set_draw_color(40, 40, 60)
    pdf.set_line_width(0.8)
    pdf.rect(20, 70, 80, 120, style="D")
    pdf.set_fill_color(120, 150, 180)
    pdf.rect(110, 70, 80, 60, style="DF")
    pdf.circle(x=150, y=165, radius=20, style="D")
    for i in range(8):
        pdf.line(25, 80 + i * 12, 95, 80 + i * 12)
    return _out(pdf, path)


def make_entries_pdf(path) -> Path:
    """Entries that are not headings: run-in spells, a name-first gear table (one name with a
    soft hyphen), a stat block whose name is followed by its tag line in another font, and a
    label ("Notes") repeated under every creature."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Spells", 1)
    pdf.set_font("helvetica", "", BODY_SIZE)
    for name, text in (("Frost Lance", "A spear of ice hits a nearby foe for 1d8 damage."),
                       ("Quiet Step", "Your steps make no sound for one hour."),
                       ("Ember Ward", "Fire cannot harm the target until dawn.")):
        pdf.multi_cell(0, 5, f"{name} : {text}", new_x="LMARGIN", new_y="NEXT")
    _heading(pdf, "Gear", 1)
    pdf.set_font("helvetica", "", BODY_SIZE)
    for name, cost in (("ITEM", "COST"), ("Lantern", "10 coins"), ("Iron Pot", "3 coins"),
                       ("Rope Ladder", "12 coins"), ("1\u00adhand weapon", "5 coins"), ("Chalk", "1 coin")):
        pdf.cell(50, 7, name)
        pdf.cell(40, 7, cost, new_x="LMARGIN", new_y="NEXT")
    _heading(pdf, "Creatures", 1)
    for name, tags in (("Cave Troll", "Large, Solitary"), ("Marsh Imp", "Tiny, Horde"),
                       ("Stone Hound", "Medium, Group"), ("Bog Witch", "Medium, Magical"),
                       ("Ash Wolf", "Medium, Horde")):
        pdf.set_font("helvetica", "B", 13)
        pdf.cell(pdf.get_string_width(name + " ") + 1, 7, name + " ")
        pdf.set_font("helvetica", "BI", 13)
        pdf.cell(0, 7, tags, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", "", BODY_SIZE)
        pdf.multi_cell(0, 5, "Claws (d8 damage) 12 HP 1 Armor. It hunts at night.", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", "B", 11)
        pdf.multi_cell(0, 6, "Notes", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("helvetica", "", BODY_SIZE)
        pdf.multi_cell(0, 5, f"The {name.lower()} keeps to its lair by day.", new_x="LMARGIN", new_y="NEXT")
    # two headings side by side, and a stat line set as large as a heading
    pdf.add_page()
    pdf.set_font("helvetica", "B", 14)
    pdf.cell(90, 8, "Supply")
    pdf.cell(90, 8, "Bolster", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("helvetica", "", BODY_SIZE)
    pdf.multi_cell(0, 5, LOREM_LINE * 3, new_x="LMARGIN", new_y="NEXT")
    _heading(pdf, "STARTING HIT POINTS - 6", 1)
    pdf.set_font("helvetica", "", BODY_SIZE)
    pdf.multi_cell(0, 5, LOREM_LINE * 2, new_x="LMARGIN", new_y="NEXT")
    return _out(pdf, path)


LOREM_LINE = "When you spend a day in town you may buy what the market offers at fair prices. "


def _out(pdf, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # fixed dates keep the generated sample files byte-stable between rebuilds
    import datetime as _dt

    pdf.set_creation_date(_dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc))
    pdf.output(str(path))
    return path


# --------------------------------------------------------------------------------------
# Sample library content (original; CC0, see gmtool/sample/SOURCES.md)
# --------------------------------------------------------------------------------------

BESTIARY_TITLE = "Bestiary of the Lantern Coast"

BESTIARY_SECTIONS: list[Section] = [
    (
        BESTIARY_TITLE,
        0,
        [
            (
                "This bestiary collects the creatures that haunt the shores, wrecks and cliffs of the "
                "Lantern Coast, a long stretch of fog-bound harbors where every village keeps a lamp "
                "burning through the night. Each entry gives a short description followed by a stat "
                "block for use at the table."
            ),
            (
                "Monsters are grouped by where travellers are most likely to meet them: on the shore and "
                "in the shallows, among wrecks and drowned places, and on the cliffs and the open water."
            ),
        ],
    ),
    (
        "How to Read a Stat Block",
        1,
        [
            (
                "The line under a creature's name gives its size, type and alignment. Armor Class, Hit "
                "Points and Speed follow, then the six ability scores. Challenge rates how dangerous the "
                "creature is for a party of four adventurers, with the experience points it is worth."
            ),
            (
                "Under Actions you will find what the creature can do on its turn. Attacks list their "
                "bonus to hit, their reach or range, and the damage they deal on a hit."
            ),
        ],
    ),
    (
        "Shore and Shallows",
        0,
        [
            (
                "Tide pools, sandbars and rocky beaches. Most creatures here are hungry rather than "
                "cruel, but a careless beachcomber can still end up as a meal or a statue."
            ),
        ],
    ),
    (
        "Tidecrawler Crab",
        1,
        [
            (
                "A crab the size of a rowing boat, its shell crusted with barnacles and kelp. Tidecrawlers "
                "bury themselves in wet sand at low tide and burst out when something walks overhead."
            ),
            "Large beast, unaligned",
            "Armor Class 15 (natural armor)",
            "Hit Points 45 (6d10 + 12)",
            "Speed 30 ft., swim 30 ft.",
            "STR 17 (+3)  DEX 10 (+0)  CON 15 (+2)  INT 1 (-5)  WIS 10 (+0)  CHA 3 (-4)",
            "Skills Stealth +4 (+8 when buried in sand)",
            "Senses blindsight 30 ft., passive Perception 10",
            "Challenge 2 (450 XP)",
            "Amphibious. The crab can breathe air and water.",
        ],
    ),
    (
        "Actions",
        2,
        [
            "Multiattack. The crab makes two claw attacks.",
            (
                "Claw. Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 8 (1d10 + 3) "
                "bludgeoning damage, and the target is grappled (escape DC 13). The crab has two claws, "
                "each of which can grapple only one target."
            ),
        ],
    ),
    (
        "Saltglass Gazer",
        1,
        [
            (
                "A squat, six-legged lizard whose scales glitter like wet salt. Its gaze turns living "
                "flesh into grey, glassy stone: beaches near its lair are dotted with petrified gulls, "
                "crabs and the occasional unlucky fisherman, frozen mid-stride. A polished mirror turned "
                "against the gazer can turn its own gaze back on it."
            ),
            "Medium monstrosity, unaligned",
            "Armor Class 14 (natural armor)",
            "Hit Points 52 (8d8 + 16)",
            "Speed 25 ft.",
            "STR 15 (+2)  DEX 9 (-1)  CON 15 (+2)  INT 3 (-4)  WIS 11 (+0)  CHA 6 (-2)",
            "Senses darkvision 60 ft., passive Perception 10",
            "Challenge 3 (700 XP)",
            (
                "Petrifying Gaze. When a creature that can see the gazer's eyes starts its turn within "
                "30 feet of it, the gazer can force it to make a DC 12 Constitution saving throw. On a "
                "failure the creature begins to turn to stone and is restrained. At the end of its next "
                "turn it repeats the save; on a second failure it is petrified until freed by magic that "
                "ends curses or by a Saltglass Mirror. A creature can avert its eyes to avoid the save, "
                "but then has disadvantage on attacks against the gazer."
            ),
        ],
    ),
    (
        "Actions",
        2,
        [
            (
                "Bite. Melee Weapon Attack: +4 to hit, reach 5 ft., one target. Hit: 9 (2d6 + 2) "
                "piercing damage plus 5 (2d4) acid damage."
            ),
        ],
    ),
    (
        "Wrecks and Drowned Places",
        0,
        [
            (
                "Broken hulls, sunken chapels and flooded cellars. The dead of the sea do not always "
                "rest, and the lamps of the coast were first lit to keep them away."
            ),
        ],
    ),
    (
        "Drowned Bellringer",
        1,
        [
            (
                "The swollen corpse of a sailor who drowned with a ship's bell still in hand. Bellringers "
                "wade out of the surf on foggy nights, tolling their bells to lure the living into the "
                "water. They hate lantern light and will not step into a brightly lit area willingly."
            ),
            "Medium undead, neutral evil",
            "Armor Class 13",
            "Hit Points 27 (5d8 + 5)",
            "Speed 30 ft., swim 30 ft.",
            "STR 14 (+2)  DEX 10 (+0)  CON 13 (+1)  INT 6 (-2)  WIS 10 (+0)  CHA 8 (-1)",
            "Damage Immunities poison",
            "Condition Immunities exhaustion, poisoned",
            "Senses darkvision 60 ft., passive Perception 10",
            "Challenge 2 (450 XP)",
            "Lantern Dread. While in bright light, the bellringer has disadvantage on attack rolls.",
        ],
    ),
    (
        "Actions",
        2,
        [
            (
                "Slam. Melee Weapon Attack: +4 to hit, reach 5 ft., one target. Hit: 7 (1d10 + 2) "
                "bludgeoning damage."
            ),
            (
                "Drowning Toll (Recharge 5-6). The bellringer rings its bell. Each creature within 20 feet "
                "that can hear it must succeed on a DC 11 Wisdom saving throw or spend its next turn "
                "moving toward the nearest deep water, as if sleepwalking."
            ),
        ],
    ),
    (
        "Lamplighter Wisp",
        1,
        [
            (
                "A small floating flame that imitates a lantern carried by an unseen hand. Wisps lead "
                "lost travellers onto rocks and into sinking sand, and feed on the fear they cause."
            ),
            "Tiny undead, chaotic evil",
            "Armor Class 17",
            "Hit Points 18 (7d4)",
            "Speed 0 ft., fly 50 ft. (hover)",
            "STR 1 (-5)  DEX 24 (+7)  CON 10 (+0)  INT 12 (+1)  WIS 12 (+1)  CHA 10 (+0)",
            "Damage Resistances fire, cold; bludgeoning, piercing and slashing from nonmagical attacks",
            "Senses darkvision 120 ft., passive Perception 11",
            "Challenge 1 (200 XP)",
            "False Lantern. The wisp can dim itself to invisibility as a bonus action.",
        ],
    ),
    (
        "Actions",
        2,
        [
            (
                "Scorching Touch. Melee Spell Attack: +9 to hit, reach 5 ft., one creature. Hit: 7 (2d6) "
                "fire damage."
            ),
        ],
    ),
    (
        "Cliffs and Open Water",
        0,
        [
            "Chalk cliffs, sea caves and the grey water beyond the last buoy.",
        ],
    ),
    (
        "Cliff Shrieker",
        1,
        [
            (
                "A gull-winged harpy-like bird with a human-sized skull for a head. Shriekers nest in "
                "flocks on the highest ledges and try to knock climbers off the cliff face."
            ),
            "Medium monstrosity, chaotic evil",
            "Armor Class 12",
            "Hit Points 33 (6d8 + 6)",
            "Speed 20 ft., fly 50 ft.",
            "STR 12 (+1)  DEX 15 (+2)  CON 12 (+1)  INT 5 (-3)  WIS 12 (+1)  CHA 7 (-2)",
            "Senses passive Perception 13",
            "Challenge 1 (200 XP)",
        ],
    ),
    (
        "Actions",
        2,
        [
            (
                "Talons. Melee Weapon Attack: +4 to hit, reach 5 ft., one target. Hit: 6 (1d8 + 2) "
                "slashing damage."
            ),
            (
                "Deafening Shriek. Each creature within 15 feet must succeed on a DC 11 Constitution "
                "saving throw or be deafened and pushed 10 feet away. A creature clinging to a cliff "
                "that fails the save falls."
            ),
        ],
    ),
    (
        "Fogmaw Serpent",
        1,
        [
            (
                "A sea serpent as long as a galley, whose breath is a cold, blinding fog. Fogmaws coil "
                "around ships caught in their fog and drag sailors over the rail one by one."
            ),
            "Huge monstrosity, unaligned",
            "Armor Class 16 (natural armor)",
            "Hit Points 136 (13d12 + 52)",
            "Speed 10 ft., swim 60 ft.",
            "STR 22 (+6)  DEX 12 (+1)  CON 18 (+4)  INT 4 (-3)  WIS 12 (+1)  CHA 6 (-2)",
            "Senses blindsight 60 ft., passive Perception 11",
            "Challenge 7 (2,900 XP)",
            "Water Breathing. The serpent can breathe only underwater, but can hold its breath for an hour.",
        ],
    ),
    (
        "Actions",
        2,
        [
            "Multiattack. The serpent makes one bite attack and one constrict attack.",
            (
                "Bite. Melee Weapon Attack: +9 to hit, reach 10 ft., one target. Hit: 19 (2d12 + 6) "
                "piercing damage."
            ),
            (
                "Constrict. Melee Weapon Attack: +9 to hit, reach 15 ft., one creature. Hit: 15 (2d8 + 6) "
                "bludgeoning damage, and the target is grappled (escape DC 17)."
            ),
            (
                "Fog Breath (Recharge 5-6). The serpent exhales a 30-foot cube of freezing fog. Each "
                "creature in it takes 22 (4d10) cold damage, or half on a DC 15 Constitution save, and "
                "is blinded while it remains in the fog. The fog lasts 1 minute."
            ),
        ],
    ),
    (
        "Monsters by Challenge",
        0,
        [
            "Challenge 1: Cliff Shrieker, Lamplighter Wisp.",
            "Challenge 2: Drowned Bellringer, Tidecrawler Crab.",
            "Challenge 3: Saltglass Gazer.",
            "Challenge 7: Fogmaw Serpent.",
            (
                "More creatures of the coast, such as the Reef Hag and harbor rat swarms, are described "
                "in the Lantern Coast Compendium."
            ),
        ],
    ),
]

GRIMOIRE_TITLE = "The Lantern Coast Grimoire"

# Spells: rendered single-column, no outline. Page breaks are explicit (level 0).
GRIMOIRE_SPELL_SECTIONS: list[Section] = [
    (
        GRIMOIRE_TITLE,
        0,
        [
            (
                "Spells and wonders of the Lantern Coast, gathered by the tidewardens of Wickmouth. The "
                "first part lists spells; the second describes magic items found along the coast."
            ),
        ],
    ),
    (
        "Spells",
        0,
        [
            (
                "Each spell gives its level and school, then how long it takes to cast, its range, its "
                "components and how long it lasts."
            ),
        ],
    ),
    (
        "Brine Lash",
        1,
        [
            "Evocation cantrip",
            "Casting Time: 1 action",
            "Range: 30 feet",
            "Components: V, S",
            "Duration: Instantaneous",
            (
                "A whip of stinging seawater lashes out at one creature you can see within range. Make a "
                "ranged spell attack. On a hit, the target takes 1d8 cold damage and its speed drops by "
                "10 feet until the start of your next turn."
            ),
            (
                "This spell's damage increases by 1d8 when you reach 5th level (2d8), 11th level (3d8) "
                "and 17th level (4d8)."
            ),
        ],
    ),
    (
        "Lanternlight Mend",
        1,
        [
            "1st-level evocation",
            "Casting Time: 1 bonus action",
            "Range: 60 feet",
            "Components: V, S, M (a lit candle or lantern)",
            "Duration: Instantaneous",
            (
                "Warm golden light washes over up to three allies you can see within range. Each of them "
                "regains hit points equal to 1d4 + your spellcasting ability modifier, and a creature "
                "that regains hit points this way can end the frightened condition on itself."
            ),
            (
                "At Higher Levels. When you cast this spell using a spell slot of 2nd level or higher, "
                "the healing increases by 1d4 for each slot level above 1st."
            ),
        ],
    ),
    (
        "Fog Veil",
        1,
        [
            "2nd-level illusion",
            "Casting Time: 1 action",
            "Range: Self",
            "Components: V, S",
            "Duration: Concentration, up to 10 minutes",
            (
                "A thin, clinging fog wraps you and up to four willing creatures within 10 feet of you. "
                "While the spell lasts, each of them has advantage on Dexterity (Stealth) checks and "
                "ranged attacks against them have disadvantage. The veil ends for a creature that moves "
                "more than 30 feet away from you."
            ),
        ],
    ),
    (
        "Gull's Leap",
        1,
        [
            "2nd-level conjuration",
            "Casting Time: 1 bonus action",
            "Range: Self",
            "Components: V",
            "Duration: Instantaneous",
            (
                "You vanish in a flurry of white feathers and reappear in an unoccupied space you can see "
                "within 40 feet. If you reappear in the air, you drift down at 60 feet per round and take "
                "no falling damage this turn."
            ),
        ],
    ),
    (
        "Stonewake Ward",
        1,
        [
            "3rd-level abjuration",
            "Casting Time: 1 reaction, which you take when you or a creature within 30 feet is hit by an attack",
            "Range: 30 feet",
            "Components: V, S, M (a pebble from a breakwater)",
            "Duration: 1 round",
            (
                "A shell of grey stone flows over the creature. It gains resistance to bludgeoning, "
                "piercing and slashing damage until the start of your next turn, including against the "
                "triggering attack, and cannot be moved against its will."
            ),
        ],
    ),
    (
        "Call of the Drowned Bell",
        1,
        [
            "4th-level necromancy",
            "Casting Time: 1 action",
            "Range: 120 feet",
            "Components: V, S, M (a cracked ship's bell)",
            "Duration: Concentration, up to 1 minute",
            (
                "You ring a phantom bell. Each creature of your choice in a 20-foot-radius sphere centered "
                "on a point within range must make a Wisdom saving throw. On a failure, a creature takes "
                "3d8 necrotic damage and is frightened of you until the end of its next turn. Undead have "
                "disadvantage on the save."
            ),
        ],
    ),
    (
        "Tide of Renewal",
        1,
        [
            "5th-level evocation",
            "Casting Time: 1 action",
            "Range: Self (30-foot radius)",
            "Components: V, S, M (a shell filled with seawater)",
            "Duration: Instantaneous",
            (
                "A surging wave of blue-green light rolls out from you. Every ally in the area regains "
                "4d8 + your spellcasting ability modifier hit points and is cured of one disease or of "
                "the poisoned condition. Constructs and undead are not affected."
            ),
        ],
    ),
]

GRIMOIRE_ITEMS_INTRO: Section = (
    "Magic Items",
    0,
    [
        "The wonders below are found in wrecks, harbor vaults and the hoards of sea creatures.",
    ],
)

# The items page is two columns: (left column sections, right column sections).
GRIMOIRE_ITEM_COLUMNS: tuple[list[Section], list[Section]] = (
    [
        (
            "Gillcloak",
            1,
            [
                "Wondrous item, uncommon",
                (
                    "This sea-green cloak is stitched from the skin of a great eel. While you wear it, "
                    "you can breathe underwater and you gain a swimming speed equal to your walking "
                    "speed. Folded gills along the collar flutter whenever you are submerged."
                ),
            ],
        ),
        (
            "Lantern of Steady Flame",
            1,
            [
                "Wondrous item, uncommon",
                (
                    "This brass hooded lantern never goes out in wind or rain and needs no oil. It sheds "
                    "bright light in a 30-foot radius. Undead that start their turn in its bright light "
                    "have disadvantage on attack rolls until the start of their next turn."
                ),
            ],
        ),
        (
            "Anchorstone Shield",
            1,
            [
                "Armor (shield), rare (requires attunement)",
                (
                    "While holding this heavy iron shield you gain +1 to AC and cannot be knocked prone "
                    "or pushed against your will. As a reaction when an ally within 5 feet is hit, you "
                    "can take the damage instead."
                ),
            ],
        ),
    ],
    [
        (
            "Saltglass Mirror",
            1,
            [
                "Wondrous item, rare (requires attunement)",
                (
                    "A hand mirror framed in driftwood. While you hold it, you have advantage on saving "
                    "throws against being petrified. As an action you can touch a petrified creature "
                    "with the mirror to restore it to flesh; the mirror then cracks and cannot do so "
                    "again until the next dawn. Turned toward a creature with a petrifying gaze, it "
                    "forces that creature to save against its own gaze."
                ),
            ],
        ),
        (
            "Wavecutter Bow",
            1,
            [
                "Weapon (longbow), rare (requires attunement)",
                (
                    "You gain +1 to attack and damage rolls with this bow. Arrows fired from it are not "
                    "slowed by water and can strike targets you can hear but not see without "
                    "disadvantage, making it a favorite of reedstalkers."
                ),
            ],
        ),
        (
            "Driftwood Staff",
            1,
            [
                "Staff, very rare (requires attunement by a spellcaster)",
                (
                    "This staff has 6 charges. You can expend 1 charge to cast Lanternlight Mend, or 3 "
                    "charges to cast Tide of Renewal. It regains 1d6 charges at dawn, or all of them if "
                    "it was wet with seawater at dawn."
                ),
            ],
        ),
    ],
)

GRIMOIRE_APPENDIX: Section = (
    "Spell Lists",
    0,
    [
        "Bulwark Mage: Brine Lash, Stonewake Ward, Call of the Drowned Bell.",
        "Reedstalker: Fog Veil, Gull's Leap.",
        "Tidewarden: Lanternlight Mend, Fog Veil, Stonewake Ward, Tide of Renewal.",
    ],
)


def _render_columns(pdf, columns: Sequence[Sequence[Section]], top: float, gap: float = 10.0) -> None:
    """Render each list of sections into its own column starting at the same y."""
    page_w = pdf.w
    left_m, right_m = pdf.l_margin, pdf.r_margin
    usable = page_w - left_m - right_m
    col_w = (usable - gap * (len(columns) - 1)) / len(columns)
    bottom = top
    for i, col in enumerate(columns):
        x = left_m + i * (col_w + gap)
        pdf.set_left_margin(x)
        pdf.set_right_margin(page_w - x - col_w)
        pdf.set_xy(x, top)
        for title, level, paragraphs in col:
            _heading(pdf, title, level)
            _paragraphs(pdf, paragraphs)
        bottom = max(bottom, pdf.get_y())
    pdf.set_left_margin(left_m)
    pdf.set_right_margin(right_m)
    pdf.set_xy(left_m, bottom)


def make_grimoire_pdf(path) -> Path:
    pdf = _new_pdf()
    pdf.set_title(GRIMOIRE_TITLE)
    pdf.set_author("gmtool sample library")
    # put the title and Spells intro on page 1, spells from page 1 on; let pages break naturally
    title, _, intro = GRIMOIRE_SPELL_SECTIONS[0]
    pdf.add_page()
    pdf.set_font("helvetica", "B", 22)
    pdf.multi_cell(0, 11, title, new_x="LMARGIN", new_y="NEXT")
    _paragraphs(pdf, intro)
    pdf.ln(3)
    for s_title, level, paragraphs in GRIMOIRE_SPELL_SECTIONS[1:]:
        if level == 1 and pdf.get_y() > pdf.h - 95:  # keep a spell on one page
            pdf.add_page()
        _heading(pdf, s_title, level)
        _paragraphs(pdf, paragraphs)
    pdf.add_page()
    _heading(pdf, GRIMOIRE_ITEMS_INTRO[0], 0)
    _paragraphs(pdf, GRIMOIRE_ITEMS_INTRO[2])
    _render_columns(pdf, GRIMOIRE_ITEM_COLUMNS, top=pdf.get_y() + 2)
    pdf.add_page()
    _heading(pdf, GRIMOIRE_APPENDIX[0], 0)
    _paragraphs(pdf, GRIMOIRE_APPENDIX[2])
    return _out(pdf, path)


def make_bestiary_pdf(path) -> Path:
    pdf = _new_pdf()
    pdf.set_title(BESTIARY_TITLE)
    pdf.set_author("gmtool sample library")
    _render(pdf, BESTIARY_SECTIONS, outline=True)
    return _out(pdf, path)


def build_sample(dest_dir) -> list[Path]:
    """Write bestiary.pdf (with outline) and grimoire.pdf (no outline) into dest_dir."""
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    return [make_bestiary_pdf(dest / "bestiary.pdf"), make_grimoire_pdf(dest / "grimoire.pdf")]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", metavar="DIR", help="rebuild the sample library PDFs into DIR")
    ap.add_argument("--all", metavar="DIR", help="write one of every test PDF into DIR (for inspection)")
    args = ap.parse_args(argv)
    if not args.sample and not args.all:
        ap.error("nothing to do: pass --sample DIR or --all DIR")
    if args.sample:
        for p in build_sample(args.sample):
            print(f"wrote {p} ({p.stat().st_size} bytes)")
    if args.all:
        d = Path(args.all)
        made = [
            make_outline_pdf(d / "outline.pdf"),
            make_plain_pdf(d / "plain.pdf"),
            make_two_column_pdf(d / "two_column.pdf"),
            make_encrypted_pdf(d / "encrypted.pdf"),
            make_image_only_pdf(d / "image_only.pdf"),
        ] + [make_corrupt_pdf(d / f"corrupt_{k}.pdf", k) for k in CORRUPT_KINDS]
        for p in made:
            print(f"wrote {p} ({p.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def make_headingless_pdf(path, paragraphs: Sequence[str], title: str | None = None) -> Path:
    """Plain paragraphs in one font and size, no heading and no outline (a letter, notes)."""
    pdf = _new_pdf()
    if title:
        pdf.set_title(title)
    pdf.add_page()
    pdf.set_font("Helvetica", size=10)
    for par in paragraphs:
        pdf.multi_cell(0, 5, par)
        pdf.ln(2)
    return _out(pdf, path)


def make_variant_pdf(path) -> Path:
    """A "Monsters" chapter: a stat block, then a "Variant:" box naming it, whose run-in
    variants (bold name, first line indented) state no stats of their own."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Monsters", 0)
    for name, line, ac, hp, cr in (
        ("Marsh Hound", "Medium beast, unaligned", 13, "11 (2d8 + 2)", "1/4 (50 XP)"),
        ("Swarm of Moths", "Medium swarm of Tiny beasts, unaligned", 12, "22 (5d8)", "1/2 (100 XP)"),
    ):
        _heading(pdf, name, 1)
        _paragraphs(pdf, [line, f"Armor Class {ac}", f"Hit Points {hp}", "Speed 30 ft.", f"Challenge {cr}",
                          f"Keen Smell. The {name.lower()} has advantage on checks that rely on smell."])
    _heading(pdf, "Variant: Moth Swarms", 2)
    _paragraphs(pdf, ["Moths gather in swarms of many kinds, each with the traits below."])
    for name, text in (("Swarm of Glowmoths", "A swarm of glowmoths sheds dim light in a 10-foot radius and "
                        "can be seen from far away on a moonless night by any creature."),
                       ("Swarm of Ashmoths", "A creature reduced to 0 hit points by a swarm of ashmoths "
                        "coughs for an hour and cannot speak above a whisper."),
                       ("Swarm of Silkmoths", "A swarm of silkmoths leaves threads on everything it "
                        "crosses, and creatures in its space have their speed halved.")):
        _runin_line(pdf, 4, name + ". ", text, 6)
    return _out(pdf, path)


def _runin_line(pdf, indent: float, name: str, text: str, advance: float) -> None:
    """One paragraph at `indent`: a bold run-in name (none when empty), then plain text."""
    pdf.set_x(pdf.l_margin + indent)
    if name:
        pdf.set_font("helvetica", "B", BODY_SIZE)
        pdf.write(4.5, name)
    pdf.set_font("helvetica", "", BODY_SIZE)
    pdf.write(4.5, text)
    pdf.ln(advance)


def make_slanted_wrap_pdf(path) -> Path:
    """A creature list whose lower lines wrap around a picture with a slanted edge: each line
    starts further right than the one above, so no two run-in names share an indent."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Creatures", 1)
    _paragraphs(pdf, ["Creatures of the wild lands, each with its hit dice, armour and attacks."])
    tail = "and it fights to the end when it is cornered."
    rows = [(0.0, name, f"{stats} {tail}") for name, stats in (
        ("Badger", "HD 1d8+2 (6 hp), AC 15, Claw +2 (1d2)"), ("Boar", "HD 3d8+12 (25 hp), AC 16, Gore +4"),
        ("Wolf", "HD 2d8+4 (13 hp), AC 14, Bite +3 (1d6+1)"))]
    for k, name in enumerate(("Ogre", "Treant", "Troll", "Vampire", "Wight")):
        rows += [(8.0 + 12 * k, name, f"HD {k + 4}d8+{k} ({20 + k} hp), AC {14 + k}, Slam +{k + 3}"),
                 (14.0 + 12 * k, "", tail)]
    for x, name, text in rows:
        _runin_line(pdf, x, name + ": " if name else "", text, 5.5)
    return _out(pdf, path)


def make_price_list_pdf(path) -> Path:
    """A price list of one-line entries, each above its paragraph: three share a first tag
    ("Ration") printed after the name, one is named "X of the Y", and one line is a phrase
    with a price ("A night at the harbour inn"), not a name."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Provisions", 1)
    for line, text in (
        ("Trail Bread Ration, 5 uses, 3 coins, 1 weight", "Dry and hard, but it keeps for a month."),
        ("Salt Pork Ration, 4 uses, 2 coins, 1 weight", "Salty enough to make anyone thirsty."),
        ("Honey Cake Ration, 1 use, 6 coins, 0 weight", "A treat for the road, gone in a bite."),
        ("Lamp of the Old Road 2 coins, 1 weight", "Burns for a night on a flask of oil."),
        ("A night at the harbour inn 5 coins", "Clean straw, a dry roof and a bowl of stew."),
    ):
        pdf.set_font("helvetica", "", BODY_SIZE)
        pdf.multi_cell(0, 4.5, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(1.5)
        pdf.multi_cell(0, 4.5, text, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    return _out(pdf, path)


BARE_GEAR = (
    ("Ragged Bow near, 15 coins, 2 weight", None),
    ("Fine Bow near, far, 60 coins, 2 weight", None),
    ("Hunter's Bow near, far, 100 coins, 1 weight", "Strung with gut, it pulls hard enough to drop a stag."),
    ("Crossbow near, +1 damage, reload, 35 coins, 3 weight", None),
    ("Bundle of Arrows 3 ammo, 1 coin, 1 weight", None),
    ("Lantern, hooded 7 coins, 1 weight", "Its shutters hide the flame when the guards come by."),
    ("Lantern, bullseye 12 coins, 1 weight", None),
    ("Iron Spikes 1 coin, 1 weight", "Ten of them, for doors that must stay shut."),
    ("Chalk 1 coin, 0 weight", "A stick of it marks a wall for the way back."),
)


def make_bare_price_list_pdf(path) -> Path:
    """Gear on one line each, name then tags: some lines have a paragraph of their own below
    them, others stand straight above the next line; two names are inverted ("Lantern, hooded")."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Gear", 1)
    for line, text in BARE_GEAR:
        pdf.set_font("helvetica", "", BODY_SIZE)
        pdf.multi_cell(0, 4.5, line, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(1.5)
        if text:
            pdf.multi_cell(0, 4.5, text, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    return _out(pdf, path)


PAGE_TABLES = (
    (("ITEM", "COST", "NOTES"), ("Lantern", "10 coins", "Lights a room"), ("Iron Pot", "3 coins", "Cooks for four"),
     ("Rope Ladder", "5 coins", "Ten feet long"), ("Chalk", "1 coin", "Marks a wall"), ("Bedroll", "2 coins", "Warm"),
     ("Grappling Hook", "4 coins", "Holds a rope")),
    (("CREATURE", "HD", "ATTACK"), ("Fire Beetle", "1", "Bite (1d4)"), ("Cave Bear", "4", "Claws (1d8)"),
     ("Gargoyle", "4", "Horn (1d6)"), ("Ghoul", "2", "Claws (1d3)"), ("Marsh Troll", "6", "Bite (2d6)"),
     ("Stone Giant", "9", "Rock (3d6)")),
)


def make_page_table_pdf(path, lead: str = "Armor not listed in a class adds its points to every roll.") -> Path:
    """Two full-page tables with no heading on their page, their header row the page's first line:
    the gear after "Armor Proficiency" (whose text is `lead`), the creatures after "Arcane Spells"."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "The Small Hack", 0)
    _paragraphs(pdf, ["A game of torches and dark places, played with a handful of dice."])
    for title, text in (("Armor Points", "Armor soaks damage."), ("Armor Proficiency", lead)):
        _heading(pdf, title, 1)
        _paragraphs(pdf, [text])
    tables = iter(PAGE_TABLES)
    for title, text in ((None, None), ("Arcane Spells", "Spells are cast from memory."), (None, None)):
        pdf.add_page()
        if title:
            _heading(pdf, title, 1)
            _paragraphs(pdf, [text])
            continue
        for k, row in enumerate(next(tables)):
            pdf.set_font("helvetica", "B" if k == 0 else "", BODY_SIZE)
            pdf.cell(50, 7, row[0])
            pdf.cell(30, 7, row[1])
            pdf.cell(60, 7, row[2], new_x="LMARGIN", new_y="NEXT")
    return _out(pdf, path)


SIDE_TABLES = (
    ("Hand Weapons", ("Weapon", "Cost", "Damage"),
     (("Axe, hand", "6gp", "1d6"), ("Club", "1sp", "1d6"), ("Dagger", "2gp", "1d4"), ("Mace, light", "5gp", "1d6"),
      ("Sword, short", "10gp", "1d6"), ("Whip", "1gp", "1d3"))),
    ("Missile Weapons", ("Weapon", "Cost", "Damage"),
     (("Crossbow, hand", "100gp", "1d4"), ("Crossbow, heavy", "50gp", "1d10"), ("Dart", "5sp", "1d4"),
      ("Longbow", "75gp", "1d8"), ("Shortbow", "30gp", "1d6"), ("Sling", "1sp", "1d4"))),
)


def make_side_tables_pdf(path) -> Path:
    """Two price tables set side by side, one in each of a page's two columns: their rows share
    baselines and each prints its own header row ("Weapon Cost Damage"), as Microlite20's do."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Weapons", 1)
    _paragraphs(pdf, ["Every weapon below sells at its listed price in any market town, though a smith far from the "
                      "roads may ask for twice as much, and a village may have none of them at all."])
    top = pdf.get_y() + 2
    for k, (title, header, rows) in enumerate(SIDE_TABLES):
        x = 15 + 95 * k
        pdf.set_xy(x, top)
        pdf.set_font("helvetica", "B", BODY_SIZE + 1)
        pdf.cell(80, 7, title)
        for j, row in enumerate((header, *rows)):
            pdf.set_xy(x, top + 7 * (j + 1))
            pdf.set_font("helvetica", "B" if j == 0 else "", BODY_SIZE)
            for text, width in zip(row, (40, 20, 20), strict=True):
                pdf.cell(width, 7, text)
    return _out(pdf, path)


RULED_ROWS = (
    ("WEAPON", "DAMAGE", "NOTES"),
    ("Long Knife", "d6", "Quick to draw; can be thrown at a foe within reach of a short throw."),
    ("Hooked Glaive of the River Wardens", "d10", "Two hands. Pulls a rider from the saddle on a hit."),
    ("Sling", "d4", "Stones are free; a pouch holds twenty."),
    ("War Flail", "d8", "Ignores a shield. Slow to recover after a miss, so the next attack is hindered."),
    ("Throwing Axes of the Hill Clans", "d6", "A set of three, balanced for throwing."),
    ("Spear", "d8", "Reach. Set against a charge to strike first."),
)


def make_ruled_table_pdf(path) -> Path:
    """A "Weapons" section holding a ruled table (every cell boxed) whose names and notes wrap
    inside their cells: rows only the ruling tells apart."""
    pdf = _new_pdf()
    pdf.add_page()
    _heading(pdf, "Weapons", 1)
    _paragraphs(pdf, ["Every weapon below costs what the market asks; the table lists damage and notes."])
    pdf.set_font("helvetica", "", BODY_SIZE)
    with pdf.table(col_widths=(45, 20, 115), text_align="LEFT", first_row_as_headings=False) as table:
        for r in RULED_ROWS:
            row = table.row()
            for cell in r:
                row.cell(cell)
    _paragraphs(pdf, ["Weapons break on a roll of 1, as the rules for gear say."])
    return _out(pdf, path)


# --- hand-written PDFs for hostile structures (issue 25) ----------------------------------------


def raw_pdf(path, objs: Sequence[bytes]) -> Path:
    """A PDF of exactly these objects (numbered from 1; the first is the catalog) and an xref table:
    for structures no PDF library writes (a lying /Count, a shared bomb stream)."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % off for off in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    Path(path).write_bytes(bytes(out))
    return Path(path)


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s>>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def text_pages_pdf(path, texts: Sequence[bytes], *, kids_count: int | None = None, catalog_extra: bytes = b"",
                   shared: bytes | None = None) -> Path:
    """One page per text (a line of Helvetica each); `shared` (a Flate-compressed content stream)
    is drawn by every page whose text is empty; `kids_count` overrides the page tree's /Count."""
    n = len(texts)
    font, shared_obj = 3, 4
    first = 5
    objs = [b"<< /Type /Catalog /Pages 2 0 R " + catalog_extra + b">>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % (first + 2 * k) for k in range(n)),
                                                        n if kids_count is None else kids_count),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            _stream(shared or b"", b"/Filter /FlateDecode " if shared else b"")]
    for k, text in enumerate(texts):
        contents = first + 2 * k + 1 if text or shared is None else shared_obj
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                    b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (contents, font))
        objs.append(_stream(b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET"))
    return raw_pdf(path, objs)
def make_lost_space_pdf(path) -> Path:
    """One page of Helvetica lines that lose a word space two ways: "You" and "must" drawn by one
    TJ with a 0.13 em offset between them (too narrow for pdfium to put a space, a word space in
    the glyphs), and "youare" printed with no space at all beside many "you are". "tollgate" is
    printed whole with no gap: a word, though "toll" and "gate" are words too."""
    lines = [b"[(You) -130 (must pay the toll at the gate.)] TJ", b"(Roll when youare ready to pass the tollgate.) Tj",
             b"(The toll is paid at the gate. You must wait and you must bow.) Tj"]
    lines += [b"(You are here and you are there, you are where you are.) Tj"] * 4
    content = b"BT /F1 12 Tf 14 TL 72 720 Td " + b" T* ".join(lines) + b" ET"
    return raw_pdf(path, [
        b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R /Resources << /Font << /F1 3 0 R >> >> >>",
        _stream(content)])


# Text repair and clean entries (issue 21): every page carries a running header and a page
# number; the text breaks words at line ends (a hyphen, a soft hyphen), glues a bold word to
# the word before it, wraps a cell of a numbered table, titles two entries with a price and a
# bracketed tag, and groups spells under level headings.
TEXT_REPAIR_HEADER = "THE SALT MARCHES"


def _lines(pdf, lines: Sequence[str], size: float = BODY_SIZE) -> None:
    pdf.set_font("helvetica", "", size)
    for ln in lines:
        pdf.cell(0, 4.5, ln, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def _furnished_page(pdf) -> None:
    pdf.add_page()
    pdf.set_font("helvetica", "", 8)
    pdf.set_xy(15, 6)
    pdf.cell(0, 4, TEXT_REPAIR_HEADER)
    pdf.set_xy(100, 287)
    pdf.cell(10, 4, str(pdf.page))
    pdf.set_xy(15, 20)


def _glued_style(pdf, before: str, word: str, after: str) -> None:
    """`before` in regular type and `word` in bold set right after it, with no space."""
    pdf.set_font("helvetica", "", BODY_SIZE)
    pdf.write(5, before)
    pdf.set_font("helvetica", "B", BODY_SIZE)
    pdf.write(5, word)
    pdf.set_font("helvetica", "", BODY_SIZE)
    pdf.write(5, after)
    pdf.ln(7)


def make_text_repair_pdf(path) -> Path:
    pdf = _new_pdf()
    pdf.set_auto_page_break(False)
    pdf.set_title("Salt Marches")
    _furnished_page(pdf)
    _heading(pdf, "Rules of the Road", 0)
    _lines(pdf, [
        "When you try to sway a merchant you may ma-",
        "nipulate the price by one step, once a day.",
        "Guards carry a two-",
        "handed spear and a horn to call for help.",
        "The toll is abso\u00ad",
        "lutely fixed by the harbour master.",
    ])
    _lines(pdf, ["A bard can manipulate a crowd. A two-handed axe is slow. Guards manipulate rumours."])
    # a text layer that sets a ligature glyph apart with a space (Daggerheart's "fi ery")
    _lines(pdf, ["A fi ery staff absorbs the blow. A staff of oak."])
    _lines(pdf, [
        "Parley : When you have leverage on a guard you may ma-",
        "nipulate them into letting you pass.",
        "Bribe : Coins open doors at the harbour gate.",
        "Bluff : A fast tongue buys a moment of doubt.",
    ])
    _furnished_page(pdf)
    _heading(pdf, "Holding On", 1)
    _glued_style(pdf, "To keep your grip, make a successful", "WIS", " test at the start of your turn.")
    _glued_style(pdf, "A ", "WIS", " test is rolled under your score; a successful roll keeps you steady.")
    _furnished_page(pdf)
    _heading(pdf, "Where the Shaman Lives", 1)
    pdf.set_font("helvetica", "", BODY_SIZE)
    for roll, place, trait in (("d6", "location", "trait"), ("1", "a free colony", "refuses a ritual"),
                               ("2", "a house in the hills", "cannot work at night"),
                               ("3", "in the depth of a", "wants to retire, has to be convinced to"),
                               ("", "dungeon", "perform a ritual"), ("4", "in custody", "blind in one eye"),
                               ("5", "on a boat", "drinks too much")):
        pdf.cell(15, 6, roll)
        pdf.cell(55, 6, place)
        pdf.cell(0, 6, trait, new_x="LMARGIN", new_y="NEXT")
    _furnished_page(pdf)
    _heading(pdf, "Gear and Perils", 0)
    for title, text in (("Grappling Hook (2 GP)", "An iron hook on fifty feet of rope."),
                        ("Grappled [Condition]", "Your speed is 0 until you break free.")):
        _heading(pdf, title, 1)
        _lines(pdf, [text])
    _furnished_page(pdf)
    _heading(pdf, "Spells", 0)
    for group, spells in (("Level 1", ("Frost Lance", "Quiet Step")), ("Level 2", ("Ember Ward", "Stone Skin"))):
        _heading(pdf, group, 1)
        for name in spells:
            _heading(pdf, name, 2)
            _lines(pdf, [f"The {name.lower()} lasts one hour and ends at dawn."])
    for _ in range(3):
        _furnished_page(pdf)
        _lines(pdf, ["The road goes on through reeds and salt pans."] * 5)
    return _out(pdf, path)
