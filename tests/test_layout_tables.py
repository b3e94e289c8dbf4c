"""A stat block laid out as a raw HTML table (as pandoc writes one) reads as the text it shows, its
label cell beside its value cell as "label: value" lines at its head, so a bestiary of such blocks
types its creatures (#27: "a creature chapter with stat lines types its creatures").

Through the engine on generated Markdown: `show` text, line numbers, `toc` types.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.engine import Engine

PROSE = """
<p><em>Resist fire 16+:</em> When a fire attack targets this creature, the attacker must roll a natural
16+ on the attack roll or it only deals half damage.</p>
<p><em>Warlord of the pack:</em> As a standard action, it can command one nearby ally that has
resistance to fire to make a melee attack as a free action.</p>
<p><em>Unquenchable:</em> Enemies engaged with it take a –5 penalty to saves against ongoing damage.</p>"""


def _block(name: str, role: str, kind: str, attack: str, defences: tuple[int, int, int, int], prose: str = "") -> str:
    """One creature as a pandoc layout table: size/level/role/kind, its powers, labels, values."""
    ac, pd, md, hp = defences
    return f"""#### {name}

<table>
<colgroup>
<col style="width: 16%" />
<col style="width: 72%" />
</colgroup>
<tbody>
<tr class="odd">
<td><p>Normal</p>
<p>3<sup>rd</sup> level</p>
<p>{role}</p>
<p>{kind}</p></td>
<td><p>Initiative: +7</p>
<p><strong>{attack} +7 vs. AC</strong>—10 damage</p>
<p><em>Natural even hit:</em> The target is dazed until the end of its next turn.</p>{prose}</td>
<td><p><strong>AC</strong></p>
<p><strong>PD</strong></p>
<p><strong>MD</strong></p>
<p><strong>HP</strong></p></td>
<td><p>{ac}</p>
<p>{pd}</p>
<p>{md}</p>
<p>{hp}</p></td>
</tr>
<tr class="even">
<td></td>
<td></td>
</tr>
</tbody>
</table>

"""


FAMILIES = {
    "Gnoll": [("Gnoll Savage", "Troop", "Humanoid", "Spear"), ("Gnoll Ranger", "Archer", "Humanoid", "Hand axes")],
    "Giant": [("Hill Giant", "Wrecker", "Giant", "Club"), ("Frost Giant", "Spoiler", "Giant", "Icy axe")],
    "Ghouls": [("Ghoul", "Spoiler", "Undead", "Claws"), ("Ghoul Fleshripper", "Wrecker", "Undead", "Bite")],
}


def _bestiary(lib: Path) -> Path:
    text = "# Bestiary\n\n## Creatures\n\n"
    for family, members in FAMILIES.items():
        text += f"### {family}\n\nThey hunt in packs and fear fire.\n\n"
        for k, (name, role, kind, attack) in enumerate(members):
            # the first of each family says more in prose than in fields: alone it reads as rules text
            text += _block(name, role, kind, attack, (17 + k, 15, 12, 40 + 6 * k), PROSE if k == 0 else "")
    text += "## Running Fights\n\nKeep the fight moving: describe, ask, roll.\n"
    lib.mkdir()
    path = lib / "bestiary.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_layout_table_reads_as_its_fields_then_its_text(tmp_path: Path) -> None:
    path = _bestiary(tmp_path / "lib")
    eng = Engine(tmp_path / "lib")
    eng.scan(embed=False)
    body = eng.read("bestiary", "Gnoll Ranger").text
    lines = [x.strip() for x in body.splitlines() if x.strip()]
    assert lines[:4] == ["AC: 18", "PD: 15", "MD: 12", "HP: 46"]
    assert "Initiative: +7" in lines and "Hand axes +7 vs. AC—10 damage" in lines
    assert not any("|" in x or "<" in x for x in lines)
    # the table keeps its lines: every heading is where the file has it
    toc = {n["title"]: n["line"] for n in _flat(eng.toc("bestiary").entries)}
    source = path.read_text(encoding="utf-8").splitlines()
    for title, line in toc.items():
        assert source[line - 1].lstrip("#").strip() == title, title


def test_a_bestiary_of_layout_tables_types_its_creatures(tmp_path: Path) -> None:
    _bestiary(tmp_path / "lib")
    eng = Engine(tmp_path / "lib")
    eng.scan(embed=False)
    types = {n["title"]: n["content_type"] for n in _flat(eng.toc("bestiary").entries)}
    creatures = [name for members in FAMILIES.values() for name, *_ in members]
    assert all(types[c] == "monster" for c in creatures), types
    assert all(types[f] != "monster" for f in FAMILIES), types  # a family heading groups them
    assert types["Running Fights"] != "monster"
    found = eng.search("ghoul fleshripper", types=["monster"]).results
    assert found and found[0].title == "Ghoul Fleshripper"


def _flat(nodes: list) -> list:
    out = []
    for n in nodes:
        out.append(n)
        out.extend(_flat(n["children"]))
    return out


def test_a_layout_table_on_one_line_keeps_the_lines_after_it(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "card.md").write_text(
        "# Cards\n\n## Wolf\n\n<table><tr><td><p>AC</p><p>HP</p></td><td><p>13</p><p>11</p></td>"
        "<td><p>Pack tactics.</p><p>Keen smell.</p></td></tr></table>\n\n## Bear\n\nA big bear.\n",
        encoding="utf-8")
    eng = Engine(lib)
    eng.scan(embed=False)
    toc = {n["title"]: n["line"] for n in _flat(eng.toc("card").entries)}
    assert toc["Bear"] == 7
    assert eng.read("card", "Wolf").text.split() == ["AC:", "13", "HP:", "11", "Pack", "tactics.", "Keen", "smell."]


def _stat_table(name: str, text: str, ac: int, hp: int, speed: str, attack: str) -> str:
    """A creature whose fields are a two-column table under a "Stat | Value" header."""
    return (f"## {name}\n\n{text}\n\n| Stat | Value |\n|---|---|\n| Armor Class | {ac} |\n| Hit Points | {hp} |\n"
            f"| Speed | {speed} |\n| Attack | {attack} |\n\n")


STAT_TABLES = "# Beasts\n\n" + _stat_table(
    "Cave Bear", "A huge bear that lairs in caves.", 13, 42, "40 ft.", "Claw +6 (2d6)") + _stat_table(
    "Dire Wolf", "A wolf the size of a horse.", 14, 37, "50 ft.", "Bite +5 (2d6)") + """## Giant Eagle

A bird big enough to carry a rider.

| AC | HP | Speed | Attack |
|---|---|---|---|
| 13 | 26 | 80 ft. fly | Talons +5 (2d6) |

## Gear

| Item | Cost |
|---|---|
| Rope | 1 gp |
| Torch | 1 cp |
| Lantern | 5 gp |
"""


def test_a_table_of_one_things_fields_is_its_stat_lines_not_entries(tmp_path: Path) -> None:
    """A label column ("| Armor Class | 13 |") or a header of labels over one row of values is a stat
    block's fields: no "Armor Class" entry under every creature, and the creatures type from them.
    A table naming several things (the gear) still lists them."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "beasts.md").write_text(STAT_TABLES, encoding="utf-8")
    eng = Engine(lib)
    eng.scan(embed=False)
    types = {n["title"]: n["content_type"] for n in _flat(eng.toc("beasts").entries)}
    assert not {"Armor Class", "Hit Points", "Speed", "Attack", "Stat"} & set(types), types
    assert all(types[b] == "monster" for b in ("Cave Bear", "Dire Wolf", "Giant Eagle")), types
    assert {"Rope", "Torch", "Lantern"} <= set(types)
    wolf = eng.read("beasts", "Dire Wolf").text
    assert "Armor Class: 14" in wolf and "Attack: Bite +5 (2d6)" in wolf and "|" not in wolf
    assert "AC: 13; HP: 26; Speed: 80 ft. fly; Attack: Talons +5 (2d6)" in eng.read("beasts", "Giant Eagle").text
    gear = STAT_TABLES.splitlines().index("## Gear") + 1  # the rewritten tables keep their lines
    assert {n["title"]: n["line"] for n in _flat(eng.toc("beasts").entries)}["Gear"] == gear


def test_a_two_column_stat_table_with_other_labels_too_is_still_fields(tmp_path: Path) -> None:
    """Two of six labels that a stat block uses is enough (the rest are the game's own: senses,
    languages); a table comparing several creatures, a column each, is not one thing's fields."""
    block = ("| Armor Class | 15 |\n|---|---|\n| Hit Points | 7 |\n| Speed | 30 ft. |\n| Senses | darkvision |\n"
             "| Languages | Common |\n| Challenge | 1/4 |\n")
    compare = ("| | Camel | Mule | Pony |\n|---|---|---|---|\n| Armor Class | 13 | 13 | 13 |\n| Hit Dice | 2 | 2 | 2 |\n"
               "| Movement | 50' | 40' | 40' |\n")
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "m.md").write_text(f"# Monsters\n\n## Goblin\n\n{block}\n## Beasts of Burden\n\n{compare}", encoding="utf-8")
    eng = Engine(lib)
    eng.scan(embed=False)
    titles = {n["title"] for n in _flat(eng.toc("m").entries)}
    assert not {"Armor Class", "Hit Points", "Senses", "Languages"} & titles, titles
    assert "Languages: Common" in eng.read("m", "Goblin").text
    assert "Camel  Mule  Pony" in eng.read("m", "Beasts of Burden").text  # still a table, read as one
