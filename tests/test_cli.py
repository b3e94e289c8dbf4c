"""The CLI shell: one source resolver, validated options (exit 2 with a code), printable
terminal output, and result tables grouped by book. In-process (CliRunner) on small libraries."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scan_isolated
from typer.testing import CliRunner

from gmtool.cli import app

runner = CliRunner()

EVIL = "Evil \x1b]0;PWNED\x07\x1b[2J"
CONTROL = ("\x1b", "\x07", "\x9b")


def _run(lib: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    r = runner.invoke(app, [*args, "--library", str(lib)], env={"COLUMNS": "200", **(env or {})})
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def sample(sample_scanned: Path) -> Path:
    """The bundled sample library, scanned once per session (read-only)."""
    return sample_scanned


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A Markdown book whose heading, body and file name carry terminal escape sequences."""
    lib = tmp_path_factory.mktemp("evil") / "lib"
    lib.mkdir()
    body = f"# {EVIL}\n\nGoblins \x1b[31mred\x1b[0m lurk \x9b2J here.\n\n" + "".join(
        f"# Other {n}\n\nPlain text about {word}.\n\n" for n, word in enumerate(["owls", "bears", "wolves", "bats"]))
    (lib / "evil\x1b[2J.md").write_text(body, encoding="utf-8")
    scan_isolated(lib, lib.parent / "config")
    yield lib


# --- one source resolver ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bestiary.pdf", "bestiary", "BESTIARY.PDF", "Bestiary of the Lantern Coast"])
def test_toc_and_search_resolve_the_same_book(sample: Path, name: str) -> None:
    code, out, err = _run(sample, "toc", name, "--json")
    assert code == 0, err
    assert json.loads(out)["source_id"] == "bestiary"
    code, out, err = _run(sample, "search", "drowned", "--source", name, "--json")
    assert code == 0 and "SOURCE_NOT_FOUND" not in err, err
    results = json.loads(out)["results"]
    assert results and {r["source_id"] for r in results} == {"bestiary"}


def test_show_and_open_resolve_a_file_name(sample: Path) -> None:
    code, out, err = _run(sample, "show", "bestiary.pdf", "--page", "2", "--json")
    assert code == 0, err
    assert json.loads(out)["source_id"] == "bestiary"
    code, out, err = _run(sample, "open", "grimoire.pdf", "--page", "1", "--dry-run", "--json",
                          env={"GMTOOL_PDF_VIEWER": "viewer -p {page} {path}"})
    assert code == 0, err
    assert json.loads(out)["source_id"] == "grimoire"


@pytest.mark.parametrize("name", ["bestiaryy.pdf", "best", "Bestiary of the Lantern Cost"])
def test_a_book_by_any_unambiguous_name(sample: Path, name: str) -> None:
    """A typo, a unique start of the id, the title typed loosely: one book clearly wins."""
    code, out, err = _run(sample, "toc", name, "--json")
    assert code == 0, err
    assert json.loads(out)["source_id"] == "bestiary"


@pytest.mark.parametrize("command", [["toc"], ["show", "--page", "1"], ["open", "--dry-run"],
                                     ["search", "lantern", "--source"], ["ask", "lantern", "--source"]])
def test_unknown_source_is_one_error_line_in_every_command(sample: Path, command: list[str]) -> None:
    """Exit 2 with the nearest ids, never an empty result a script would trust."""
    code, out, err = _run(sample, *command, "nosuchbook", "--ranker", "bm25") if command[0] == "ask" else \
        _run(sample, *command, "nosuchbook")
    assert code == 2 and out == "", err
    assert err.startswith("error SOURCE_NOT_FOUND:") and "did you mean:" in err
    assert err.count("\n") == 2  # the error line and its hint


# --- validated options: exit 2, a stable code and a hint ----------------------------------------

BAD_OPTIONS = [
    (["search", "fireball", "--limit", "0"], "INVALID_ARGUMENT", "--limit"),
    (["search", "fireball", "--limit", "-1"], "INVALID_ARGUMENT", "--limit"),
    (["search", "fireball", "--limit", "many"], "INVALID_ARGUMENT", "--limit"),
    (["ask", "fire", "--limit", "0"], "INVALID_ARGUMENT", "--limit"),
    (["ask", "fire", "--min-score", "2"], "INVALID_ARGUMENT", "--min-score"),
    (["ask", "fire", "--min-score", "nan"], "INVALID_ARGUMENT", "--min-score"),
    (["ask", "fire", "--min-score", "inf"], "INVALID_ARGUMENT", "--min-score"),
    (["ask", "fire", "--min-score", "-0.1"], "INVALID_ARGUMENT", "--min-score"),
    (["ask", "fire", "--timeout", "-5"], "INVALID_ARGUMENT", "--timeout"),
    (["ask", "fire", "--timeout", "0"], "INVALID_ARGUMENT", "timeout"),
    (["toc", "bestiary", "--depth", "-1"], "INVALID_ARGUMENT", "--depth"),
    (["toc", "bestiary", "--depth", "0"], "INVALID_ARGUMENT", "--depth"),
    (["index", "--max-files", "-1"], "INVALID_ARGUMENT", "--max-files"),
    (["index", "--max-files", "0"], "INVALID_ARGUMENT", "--max-files"),
    (["scan", "--workers", "0"], "INVALID_ARGUMENT", "--workers"),
    (["show", "bestiary", ""], "INVALID_QUERY", "title is empty"),
    (["show", "bestiary", "   "], "INVALID_QUERY", "title is empty"),
    (["show", "bestiary", "--page", "0"], "INVALID_ARGUMENT", "--page"),
    (["show", "bestiary", "--page", "2", "--max-chars", "-1"], "INVALID_ARGUMENT", "--max-chars"),
    (["open", "bestiary", "--page", "-3", "--dry-run"], "INVALID_ARGUMENT", "--page"),
    (["search", "fireball", "--no-such-option"], "UNKNOWN_OPTION", "--no-such-option"),
    (["toc"], "MISSING_ARGUMENT", "source"),
    (["serch", "fireball"], "UNKNOWN_COMMAND", "serch"),
]


@pytest.mark.parametrize(("args", "code", "detail"), BAD_OPTIONS, ids=[" ".join(a) for a, _, _ in BAD_OPTIONS])
def test_bad_values_exit_2_with_a_code_and_hint(sample: Path, args: list[str], code: str, detail: str) -> None:
    rc, out, err = _run(sample, *args, "--json")
    assert rc == 2, (rc, out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"error {code}:") and detail in lines[0], err
    assert len(lines) == 2 and lines[1].startswith("hint: "), err
    assert "Traceback" not in err


def test_library_that_is_a_file_or_missing(sample: Path, tmp_path: Path) -> None:
    for cmd in (["ls"], ["search", "fireball"], ["toc", "bestiary"]):
        r = runner.invoke(app, [*cmd, "-L", str(sample / "bestiary.pdf")])
        assert r.exit_code == 2 and r.stderr.startswith("error INVALID_LIBRARY:"), r.stderr
        r = runner.invoke(app, [*cmd, "-L", str(tmp_path / "nonexistent")])
        assert r.exit_code == 2 and r.stderr.startswith("error LIBRARY_NOT_FOUND:"), r.stderr
    r = runner.invoke(app, ["ls"], env={"GMTOOL_LIBRARY": str(tmp_path / "nonexistent")})
    assert r.exit_code == 2 and "LIBRARY_NOT_FOUND" in r.stderr and "GMTOOL_LIBRARY" in r.stderr


def test_values_in_range_still_work(sample: Path) -> None:
    code, out, err = _run(sample, "search", "drowned", "--limit", "1", "--json")
    assert code == 0, err
    assert len(json.loads(out)["results"]) == 1
    code, out, err = _run(sample, "toc", "bestiary", "--depth", "1", "--json")
    assert code == 0, err
    assert all(not n["children"] for n in json.loads(out)["entries"])


# --- printable terminal output --------------------------------------------------------------------


def _printable(text: str) -> bool:
    return not any(c in text for c in CONTROL)


@pytest.mark.parametrize("args", [["ask", "goblins lurk", "--ranker", "bm25"], ["search", "evil"], ["ls"], ["ls", "-v"],
                                  ["toc", "evil-2j"], ["show", "evil-2j", EVIL], ["show", "evil-2j", "Evil"],
                                  ["show", "evil-2j", "no such\x1b[2J"], ["toc", "x\x1b]0;PWNED\x07"]])
def test_escape_sequences_are_printed_harmlessly(evil: Path, args: list[str]) -> None:
    code, out, err = _run(evil, *args)
    assert _printable(out) and _printable(err), (out, err)
    assert code in (0, 1), err
    if code == 0:
        assert "\\x1b" in out  # shown, escaped, rather than dropped silently
    else:
        assert "\\x1b" in err


def test_json_keeps_the_exact_text(evil: Path) -> None:
    code, out, err = _run(evil, "search", "evil", "--json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["title"] == EVIL
    code, out, err = _run(evil, "show", "evil-2j", "Evil", "--json")
    assert code == 0, err
    assert "\x1b[31mred" in json.loads(out)["text"]


def test_show_keeps_line_breaks_of_the_body() -> None:
    from gmtool.present import terminal

    assert terminal.text("a\tb\r\nc\x1b[2J\x0cd") == "a\tb\nc\\x1b[2J\nd"
    assert terminal.line("a\nb\tc\u202ed") == "a b c\\u202ed"


# --- result tables grouped by book ------------------------------------------------------------------


def _hit(rank: int, sid: str) -> object:
    from gmtool.types import Hit

    return Hit(rank=rank, title=f"Entry {rank}", content_type="spell", source_id=sid, source_name=f"Book {sid}",
               file=f"{sid}.md", page=1, page_label=None, section_path=[], score=1.0 / rank, snippet="", line=rank)


def test_group_gives_one_table_per_book_in_order_of_best_hit() -> None:
    from rich.console import Console

    from gmtool.present.table import render_search
    from gmtool.types import SearchResult

    hits = [_hit(1, "b"), _hit(2, "a"), _hit(3, "b"), _hit(4, "c"), _hit(5, "a")]
    buf = io.StringIO()
    render_search(Console(file=buf, width=160, color_system=None), SearchResult("q", "keyword", hits), {},  # type: ignore[arg-type]
                  group=True)
    out = buf.getvalue()
    heads = [out.index(f"Book {s} ({s})") for s in ("b", "a", "c")]
    assert heads == sorted(heads) and all(out.count(f"Book {s} ({s})") == 1 for s in "abc")
    # every hit under its own book, keeping its global rank in the first column
    for rank, sid in [(1, "b"), (3, "b"), (2, "a"), (5, "a"), (4, "c")]:
        pos = out.index(f"Entry {rank}")
        owner = max((h, s) for h, s in zip(heads, "bac", strict=True) if h < pos)[1]
        assert owner == sid, (rank, sid)
        line = next(ln for ln in out.splitlines() if f"Entry {rank}" in ln)
        assert line.split()[0] == str(rank)


# --- shell completion ----------------------------------------------------------------------------


def _complete(words: str) -> list[str]:
    """What bash completion offers for the last word of `words` (typer's own completion protocol)."""
    import shlex

    cword = len(shlex.split(words)) - (0 if words.endswith(" ") else 1)
    env = {"_GMTOOL_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    res = CliRunner().invoke(app, [], env=env, prog_name="gmtool")
    assert res.exit_code == 0, res.output
    return res.output.split()


def test_completion_offers_book_ids_types_and_fixed_values(sample_scanned: Path) -> None:
    import shlex

    sample = shlex.quote(str(sample_scanned))  # the folder's name needs quoting
    assert _complete(f"gmtool toc -L {sample} ") == ["bestiary", "grimoire", "lantern-coast"]
    assert _complete(f"gmtool show -L {sample} gr") == ["grimoire"]
    assert _complete(f"gmtool search fog -L {sample} --source b") == ["bestiary"]
    assert _complete("gmtool search --type mon") == ["monster"]
    assert _complete("gmtool ask fog --device c") == ["cpu", "cuda"]
    assert _complete("gmtool ask fog --ranker ") == ["hybrid", "bm25"]
    assert "level=" in _complete("gmtool search --where le")
