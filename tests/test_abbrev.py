"""A book's own abbreviations: read where it defines them, indexed beside its short forms."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import scan_isolated
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.rank.abbrev import book_abbreviations, expander

runner = CliRunner()


def test_pairs_come_from_the_books_own_definitions() -> None:
    texts = ["Your Control (CTRL) is your grip on reality. Hit Protection (HP) is luck and skill.",
             "A ship has Integrity (INT) and Engines (ENG).", "Roll under it (DEX) to dodge.",
             "Armor Class (AC) and Armor Check (AC) are both printed.", "Mind (MIND) is a score."]
    got = book_abbreviations(texts)
    assert got == {"CTRL": "control", "HP": "hit protection", "INT": "integrity", "ENG": "engines"}
    # "(DEX)" follows no phrase that spells it; "AC" is defined two ways; "MIND" is the word itself


def test_short_forms_read_with_their_long_forms_but_not_where_defined() -> None:
    expand = expander(["Control (CTRL): used for saves."])
    assert expand("Stress past zero lowers CTRL.") == "Stress past zero lowers CTRL (control)."
    assert expand("Control (CTRL): used") == "Control (CTRL): used"
    assert expand("CTRLS and ACTRL") == "CTRLS and ACTRL"


def test_a_question_in_long_words_finds_the_section_that_prints_the_short_form(tmp_path: Path) -> None:
    book = ("# Rules\n\n## Abilities\n\nControl (CTRL) is your grip on reality; Hit Protection (HP) is luck.\n\n"
            "## Critical Stress\n\nStress that takes HP below zero lowers CTRL by the rest. Then save.\n\n"
            "## Travel\n\nA day of travel through the city costs a ration and an hour of rest.\n")
    (tmp_path / "book.md").write_text(book, encoding="utf-8")
    scan_isolated(tmp_path, tmp_path / "config")
    res = runner.invoke(app, ["ask", "what happens when stress eats into my control score", "--library",
                              str(tmp_path), "--ranker", "bm25", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["results"][0]["title"] == "Critical Stress"
    show = runner.invoke(app, ["show", "book", "Critical Stress", "--library", str(tmp_path), "--json"])
    assert "(control)" not in json.loads(show.stdout)["text"]  # indexed, never shown
