"""The --where grammar: parsing, aliases, typing, ranges, errors and matching."""

from __future__ import annotations

import pytest

from gmtool.errors import EXIT_USAGE, UsageError
from gmtool.index.fields import FIELD_TYPES
from gmtool.query.where import Condition, matches, parse_where, parse_where_dict

FIREBALL = {"level": 3, "school": "evocation", "concentration": False, "ritual": False, "range": "150 feet"}
GOBLIN = {"size": "small", "type": "humanoid", "challenge": 0.25, "armor_class": 15, "hit_points": 7}


@pytest.mark.parametrize(
    ("expr", "cond"),
    [
        ("level=3", Condition("level", "=", 3)),
        ("level==3", Condition("level", "=", 3)),
        ("level<=3", Condition("level", "<=", 3)),
        ("level>=3", Condition("level", ">=", 3)),
        ("level<3", Condition("level", "<", 3)),
        ("level>3", Condition("level", ">", 3)),
        ("school!=evocation", Condition("school", "!=", "evocation")),
        ("level=1..3", Condition("level", "..", (1, 3))),
        (" level = 3 ", Condition("level", "=", 3)),
        ("school=Evocation", Condition("school", "=", "evocation")),
        ("rarity=very rare", Condition("rarity", "=", "very rare")),
        ("rarity='Very  Rare'", Condition("rarity", "=", "very rare")),
    ],
)
def test_grammar(expr: str, cond: Condition) -> None:
    assert parse_where([expr]) == [cond]


def test_aliases() -> None:
    assert parse_where(["cr<=5", "lvl=2", "CR=1", "Level=0"]) == [
        Condition("challenge", "<=", 5),
        Condition("level", "=", 2),
        Condition("challenge", "=", 1),
        Condition("level", "=", 0),
    ]


def test_fractions_and_ranges() -> None:
    (c,) = parse_where(["cr=1/4"])
    assert c.value == 0.25
    (r,) = parse_where(["cr=1/8..1/2"])
    assert r == Condition("challenge", "..", (0.125, 0.5))
    assert matches(GOBLIN, [r])
    assert not matches(GOBLIN, parse_where(["cr=1..5"]))
    assert matches({"challenge": 1.0}, parse_where(["cr=1..5"]))  # inclusive
    assert matches({"challenge": 5.0}, parse_where(["cr=1..5"]))
    assert parse_where(["level=5..1"]) == [Condition("level", "..", (1, 5))]


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("yes", True), ("1", True), ("False", False), ("no", False), ("0", False)],
)
def test_bool_parsing(text: str, value: bool) -> None:
    assert parse_where([f"concentration={text}"]) == [Condition("concentration", "=", value)]


def test_bool_rejects_other_words() -> None:
    with pytest.raises(UsageError) as err:
        parse_where(["ritual=maybe"])
    assert err.value.code == "INVALID_FILTER"


def test_unknown_field_lists_valid_fields() -> None:
    with pytest.raises(UsageError) as err:
        parse_where(["foo=1"])
    e = err.value
    assert e.code == "INVALID_FILTER"
    assert e.message == "unknown field 'foo'"
    assert e.exit_code == EXIT_USAGE
    assert e.hint.startswith("valid fields: ")
    for name in FIELD_TYPES:
        assert name in e.hint
    assert "cr" in e.hint and "lvl" in e.hint


@pytest.mark.parametrize(
    "expr",
    [
        "level",
        "=3",
        "level=",
        "level~3",
        "level=three",
        "cr<=abc",
        "cr=1/0",
        "school<3",
        "school=a..b",
        "level=1..",
        "level=..3",
        "",
        "3=level",
    ],
)
def test_malformed_is_invalid_filter(expr: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_where([expr])
    assert err.value.code == "INVALID_FILTER"
    assert err.value.hint


def test_matching() -> None:
    assert matches(FIREBALL, parse_where(["level=3", "school=EVOCATION"]))
    assert matches(FIREBALL, parse_where(["level>=3", "level<=3", "level>2", "level<4"]))
    assert not matches(FIREBALL, parse_where(["level=3", "school=necromancy"]))
    assert matches(FIREBALL, parse_where(["school!=necromancy"]))
    assert matches(FIREBALL, parse_where(["concentration=no", "ritual=false"]))
    assert not matches(FIREBALL, parse_where(["concentration=yes"]))
    assert matches(FIREBALL, parse_where(["range=150 FEET"]))
    assert matches(GOBLIN, parse_where(["cr<1", "type=humanoid", "ac>=15", "hp=7"]))


def test_null_fields_never_match() -> None:
    for expr in ["level=3", "level!=3", "level<=9", "level=0..9", "school!=evocation", "ritual=false"]:
        conds = parse_where([expr])
        assert not matches({"level": None, "school": None, "ritual": None}, conds), expr
        assert not matches({}, conds), expr
        assert not matches(None, conds), expr
    # a spell's fields never satisfy a monster filter
    assert not matches(FIREBALL, parse_where(["cr<=5"]))


def test_no_conditions_match_everything() -> None:
    assert matches(None, [])
    assert matches(FIREBALL, parse_where([]))


def test_dict_form() -> None:
    conds = parse_where_dict({"level": 3, "school": "evocation", "cr": "<=5", "ritual": False, "lvl": "1..3"})
    assert conds == [
        Condition("level", "=", 3),
        Condition("school", "=", "evocation"),
        Condition("challenge", "<=", 5),
        Condition("ritual", "=", False),
        Condition("level", "..", (1, 3)),
    ]
    assert parse_where_dict({"cr": 0.25}) == [Condition("challenge", "=", 0.25)]
    assert parse_where_dict({"cr": "1/4"}) == [Condition("challenge", "=", 0.25)]
    assert parse_where_dict({"rarity": "!=Common"}) == [Condition("rarity", "!=", "common")]
    assert parse_where_dict(None) == []
    with pytest.raises(UsageError) as err:
        parse_where_dict({"foo": 1})
    assert err.value.code == "INVALID_FILTER"
    with pytest.raises(UsageError):
        parse_where_dict({"level": "high"})
    with pytest.raises(UsageError):
        parse_where_dict({"level": [1, 2]})


def test_import_is_cheap() -> None:
    import subprocess
    import sys

    code = "import sys, gmtool.query.where; bad = {'numpy', 'pdfplumber', 'rich', 'typer', 'onnxruntime'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_list_fields_match_one_of_their_words() -> None:
    from gmtool.query.where import matches

    fields = {"armor": ["light", "medium", "heavy", "shields"], "hit_die": 10}
    assert matches(fields, parse_where(["armor=heavy", "hit_die>=10"]))
    assert not matches(fields, parse_where(["armor!=heavy"]))
    assert matches({"armor": []}, parse_where(["armor!=heavy"]))
    assert not matches({"armor": []}, parse_where(["armor=heavy"]))
    with pytest.raises(UsageError):
        parse_where(["armor>=heavy"])


@pytest.mark.parametrize("expr", ["level>=nan", "level>=inf", "cr<=-inf", "level>=1e400", "cr=nan..3",
                                  "cr=1" + "0" * 400 + "/3", "cr=Infinity"])
def test_non_finite_numbers_are_invalid_filter(expr: str) -> None:
    """nan never compares and inf cannot be an int: both used to end in INTERNAL_ERROR."""
    with pytest.raises(UsageError) as err:
        parse_where([expr])
    assert err.value.code == "INVALID_FILTER" and "finite" in err.value.message
    assert err.value.exit_code == EXIT_USAGE


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), "nan", ">=inf", "1e400"])
def test_non_finite_numbers_are_invalid_filter_in_the_dict_form(value: object) -> None:
    with pytest.raises(UsageError) as err:
        parse_where_dict({"level": value})
    assert err.value.code == "INVALID_FILTER"


def test_where_nan_exits_2_in_the_cli(sample_scanned) -> None:
    from typer.testing import CliRunner

    from gmtool.cli import app

    res = CliRunner().invoke(app, ["search", "--library", str(sample_scanned), "--where", "level>=nan", "fire"])
    assert res.exit_code == EXIT_USAGE, res.output
    assert "INVALID_FILTER" in res.output and "INTERNAL_ERROR" not in res.output


# --- filters that explain themselves (against what the library's entries carry) ----------------------


def _cli(lib: object, *args: str) -> tuple[int, str, str]:
    from typer.testing import CliRunner

    from gmtool.cli import app

    r = CliRunner().invoke(app, [*args, "-L", str(lib)], env={"COLUMNS": "200"})
    return r.exit_code, r.stdout, r.stderr


def test_a_field_the_chosen_types_never_have_is_an_error(sample_scanned: object) -> None:
    code, out, err = _cli(sample_scanned, "search", "--type", "spell", "--where", "cr<=5")
    assert code == EXIT_USAGE and out == ""
    assert "INVALID_FILTER: no spell entry here has the field 'challenge' (monster entries do)" in err
    assert "fields of spell: casting_time, concentration, duration, level" in err
    code, _, err = _cli(sample_scanned, "toc", "grimoire", "--where", "cr<=5")
    assert code == EXIT_USAGE and "no entry here has the field 'challenge'" in err and "level" in err


def test_a_value_outside_the_fields_values_is_an_error(sample_scanned: object) -> None:
    code, out, err = _cli(sample_scanned, "search", "--type", "class", "--where", "spellcasting=true")
    assert code == EXIT_USAGE and out == ""
    assert "no entry has spellcasting=true" in err and "values of spellcasting:" in err


def test_a_field_only_some_chosen_types_have_warns(sample_scanned: object) -> None:
    code, out, err = _cli(sample_scanned, "search", "--type", "spell", "--type", "monster", "--where", "cr<=5",
                          "--json")
    assert code == 0 and "FILTER_NARROWS: spell entries never have 'challenge'" in out
    import json

    results = json.loads(out)["results"]
    assert results and {r["content_type"] for r in results} == {"monster"}
