"""A long list of run-in entries (a glossary of abilities) is not one answer: its members are.

Through `gmtool ask --ranker bm25` on a generated Markdown book, and through rank.units (what a
result names and what gets embedded) on hand-made entries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import scan_isolated
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.rank.units import LIST_MIN_CHARS, fold_targets, own_bodies, rollup_targets, units
from gmtool.types import Entry

runner = CliRunner()
FILLER = "shadow ember tide glass thorn echo hollow iron silver lantern ridge mist " * 4
NAMES = ["Arc Step", "Bright Ward", "Cinder Lash", "Deep Breath", "Echo Sense", "Fleet Foot", "Glass Mind", "Iron Skin"]
FALL = "You reduce the damage from a plunge from a height by 5 points, landing lightly on your feet."


def _glossary() -> str:
    lines = ["# Playing the Game", "", "## Abilities", "", "Abilities are listed in alphabetical order.", ""]
    for name in NAMES:
        lines += [f"**{name} (2 Intellect points):** {FILLER}Action.", ""]
    lines += [f"**Safe Fall:** {FALL} Enabler.", "", "## Rolling Dice", "", "Roll a die against the difficulty.", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def lib(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("glossary")
    (root / "book.md").write_text(_glossary(), encoding="utf-8")
    scan_isolated(root, root / "config")
    return root


def test_a_question_about_one_member_names_the_member_not_the_list(lib: Path) -> None:
    res = runner.invoke(app, ["ask", "damage when falling from a height", "--library", str(lib), "--ranker",
                              "bm25", "--json"])
    assert res.exit_code == 0, res.output
    titles = [r["title"] for r in json.loads(res.stdout)["results"]]
    assert titles[0] == "Safe Fall"
    assert "Abilities" not in titles  # the list's own text is its one-line lead


def _entries(parent_type: str | None, member_chars: int) -> list[Entry]:
    members = [Entry(title=f"Member {k}", level=3, page=None, parent=1, origin="runin",
                     body=f"Member {k}: " + "word " * (member_chars // 5)) for k in range(6)]
    body = "The lead.\n" + "\n".join(m.body for m in members)
    return [Entry(title="Chapter", level=1, page=None, content_type="rule", body=""),
            Entry(title="Abilities", level=2, page=None, content_type=parent_type, parent=0, body=body), *members]


def test_members_of_a_long_rules_list_stand_alone_and_the_list_keeps_its_lead() -> None:
    entries = _entries("rule", LIST_MIN_CHARS // 4)
    assert fold_targets(entries) == list(range(len(entries)))
    assert own_bodies(entries)[1] == "The lead."
    idx, texts, _ = units(entries)
    assert set(range(2, len(entries))) <= set(idx)  # each member has windows of its own
    assert all("Member" not in t for i, t in zip(idx, texts, strict=True) if i == 1)


@pytest.mark.parametrize(("parent_type", "member_chars"), [("rule", 20), ("monster", 2000)])
def test_short_lists_and_typed_entries_keep_their_parts(parent_type: str, member_chars: int) -> None:
    """Six short run-ins are one answer ("Wound Level Effects"); a monster's actions are the monster."""
    entries = _entries(parent_type, member_chars)
    assert fold_targets(entries)[2:] == [1] * 6
    assert own_bodies(entries)[1] == entries[1].body


def test_an_untyped_heading_under_a_rules_section_is_its_own_answer_a_monsters_is_not() -> None:
    """A sample faction under "Example factions" (left untyped) is named by itself, not by the rules
    chapter above it; a monster's untyped "Actions" heading, and a rule's run-in, still fold up."""
    entries = [Entry(title="Hexcrawl Toolbox", level=1, page=None, content_type="rule", body="Hexes."),
               Entry(title="Example Factions", level=2, page=None, parent=0, body=""),
               Entry(title="5. Faerie Queen", level=3, page=None, parent=1, body="Resources: hidden roads."),
               Entry(title="Safe Fall", level=2, page=None, parent=0, origin="runin", body="Safe Fall: land."),
               Entry(title="Owlbear", level=1, page=None, content_type="monster", body="A beast."),
               Entry(title="Actions", level=2, page=None, parent=4, body="Claw. It claws."),
               Entry(title="Chapter 6: Gear", level=2, page=None, parent=0, body="Heroic gear."),
               Entry(title="Rope", level=3, page=None, parent=6, content_type="item", body="50 feet.")]
    assert fold_targets(entries) == [0, 1, 2, 0, 4, 4, 0, 7]  # a chapter over items is a container: it folds
    assert rollup_targets(entries) == [0, 0, 0, 0, 4, 4, 0, 7]  # the sample's words still count for its chapter


def test_a_class_feature_is_its_own_answer_a_subclass_feature_folds() -> None:
    """"Arcane Recovery" under the Wizard is named by itself and its words still count for the class; a
    subclass's "Frenzy" folds into the subclass."""
    entries = [Entry(title="Wizard", level=1, page=None, content_type="class", body="A scholarly magic-user."),
               Entry(title="Arcane Recovery", level=2, page=None, parent=0, body="Regain spell slots on a short rest."),
               Entry(title="Path of the Berserker", level=1, page=None, content_type="subclass", body="Rage."),
               Entry(title="Frenzy", level=2, page=None, parent=2, body="An extra attack while raging.")]
    assert fold_targets(entries) == [0, 1, 2, 2]
    assert rollup_targets(entries) == [0, 0, 2, 2]


def test_ask_names_a_sample_under_an_examples_heading_and_its_section_keeps_its_words(tmp_path: Path) -> None:
    book = ("# Hexcrawl Toolbox\n\n## Factions\n\nFactions are groups with resources and goals that advance "
            "while the players are away. Roll for each faction's goals at the end of every week.\n\n"
            "## Example Factions\n\n### 1. Cat Lord\n\nResources: a terrifying presence and hired bandits.\n\n"
            "### 5. Faerie Queen\n\nResources: hidden roads, shapeshifting agents and endless illusory silver.\n")
    (tmp_path / "book.md").write_text(book, encoding="utf-8")
    scan_isolated(tmp_path, tmp_path / "config")
    res = runner.invoke(app, ["ask", "shapeshifting agents on hidden roads", "--library", str(tmp_path),
                              "--ranker", "bm25", "--json"])
    assert res.exit_code == 0, res.output
    titles = [r["title"] for r in json.loads(res.stdout)["results"]]
    assert titles[0] == "5. Faerie Queen"
