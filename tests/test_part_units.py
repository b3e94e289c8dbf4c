"""A stat block's named parts are embedding units of their own that roll up to the monster (#20).

Through rank.units on hand-made entries shaped as the SRD's and Daggerheart's stat blocks print
them, and through a real scan of the sample library (what the vectors file holds).
"""

from __future__ import annotations

import json
from pathlib import Path

from gmtool.rank.units import PART_CHARS, fold_targets, named_parts, runin_parts, units
from gmtool.storage.layout import unit_index_file
from gmtool.types import Entry

GAZE = ("Petrifying Gaze. If a creature starts its turn within 30 feet of the basilisk and the two of them can "
        "see each other, the basilisk can force the creature to make a saving throw. On a failure, the creature "
        "magically begins to turn to stone and is restrained.")
BITE = "Bite. Melee Weapon Attack: +5 to hit, reach 5 ft., one target. Hit: 10 (2d6 + 3) piercing damage."


def _monster(name: str, *parts: str) -> Entry:
    body = "\n".join(["Medium monstrosity, unaligned", "Armor Class 15 (natural armor)", "Hit Points 52 (8d8 + 16)",
                      *parts])
    return Entry(title=name, level=2, page=3, content_type="monster", parent=0, body=body)


def _bestiary(n_biters: int) -> list[Entry]:
    """A chapter of monsters that all print a Bite, one with a gaze and a short trait."""
    out = [Entry(title="Monsters", level=1, page=1, content_type="rule", body="")]
    out.append(_monster("Basilisk", GAZE, "Keen Sight. Sharp eyes.", BITE))
    out += [_monster(f"Beast {k}", BITE.replace("piercing", "slashing") + " It bites hard and holds on to its prey.")
            for k in range(n_biters)]
    return out


def test_run_in_parts_run_to_the_next_part() -> None:
    body = f"{GAZE}\nA creature that isn't surprised can avert its eyes.\nRegeneration (1/Day): It regains 10 hit points."
    parts = runin_parts(body)
    assert [name for name, _ in parts] == ["Petrifying Gaze", "Regeneration"]
    assert parts[0][1].endswith("avert its eyes.")  # a part's following line is still its text


def test_a_monsters_trait_is_a_unit_of_its_own_that_names_the_monster() -> None:
    entries = _bestiary(n_biters=4)
    idx, texts, _ = units(entries)
    basilisk = [t for i, t in zip(idx, texts, strict=True) if i == 1]
    gaze = [t for t in basilisk if t.startswith("Monsters > Basilisk (monster): Petrifying Gaze.")]
    assert len(gaze) == 1
    assert len(gaze[0]) <= len("Monsters > Basilisk (monster): ") + PART_CHARS
    assert not any(": Keen Sight." in t for t in basilisk)  # too short to say anything alone


def test_a_part_every_monster_prints_is_a_template_slot_not_a_unit() -> None:
    entries = _bestiary(n_biters=4)
    parts = named_parts(entries, fold_targets(entries))
    assert "bite" not in {name.lower() for found in parts.values() for name, _ in found}
    # in a book where few monsters print it, the same part is a unit
    few = _bestiary(n_biters=1)
    assert "Bite" in {name for found in named_parts(few, fold_targets(few)).values() for name, _ in found}


def test_a_template_part_with_much_to_say_is_still_a_unit() -> None:
    """A vampire's Bite says what no other Bite does (it drains the victim): a template slot whose
    own text is long stays a unit; the short Bites around it do not."""
    drain = (BITE + " The target's hit point maximum is reduced by an amount equal to the necrotic damage taken, "
             "and the vampire regains hit points equal to that amount. The target dies if this reduces its "
             "hit point maximum to 0.")
    entries = [*_bestiary(n_biters=4), _monster("Vampire", drain)]
    parts = named_parts(entries, fold_targets(entries))
    assert [name for name, _ in parts[len(entries) - 1]] == ["Bite"]
    assert not any(name == "Bite" for i, found in parts.items() if i != len(entries) - 1 for name, _ in found)


def test_parts_of_other_types_and_folded_subsections() -> None:
    """A class's features are not part units (measured: they pulled classes into spell questions);
    a monster's folded subsection (an untyped child heading) is one."""
    cls = Entry(title="Warden", level=2, page=4, content_type="class", parent=0,
                body="Stone Skin. Your skin hardens like rock and turns aside blows from any weapon you can see.")
    child = Entry(title="Life Drain", level=3, page=5, parent=3,
                  body="The wraith's touch withers the living; the target's hit point maximum is reduced by the damage.")
    entries = [Entry(title="Book", level=1, page=1, body=""), cls,
               Entry(title="Foes", level=1, page=5, content_type="rule", body=""),
               _monster("Wraith"), child]
    entries[3].parent = 2
    idx, texts, _ = units(entries)
    assert not any(t.startswith("Book > Warden (class): ") for t in texts)
    assert any(t.startswith("Book > Warden (class). Stone Skin.") for t in texts)
    drain = [t for i, t in zip(idx, texts, strict=True) if t.startswith("Foes > Wraith (monster): Life Drain.")]
    assert len(drain) == 1
    assert idx[texts.index(drain[0])] == 3  # rolls up to the monster


def test_a_scan_embeds_the_parts_and_maps_them_to_their_monster(sample_embedded: tuple[Path, dict]) -> None:
    from gmtool.query.library import Library

    lib = Library(sample_embedded[0] / ".gmtool")
    entries = lib.require("bestiary").entries
    idx = json.loads(unit_index_file(lib.index_dir, "bestiary").read_text())["idx"]
    gazer = next(i for i, e in enumerate(entries) if e.title == "Saltglass Gazer")
    parts = named_parts(entries, fold_targets(entries))
    assert "Petrifying Gaze" in [name for name, _ in parts[gazer]]
    assert idx == units(entries)[0]
