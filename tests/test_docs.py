"""The man page and the shell completions are generated from the Typer app and must not go stale."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest
import typer
from typer.testing import CliRunner

from gmtool.cli import app

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "bench" / "gen_docs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def gen_docs() -> ModuleType:
    return _gen_docs()


def _commands() -> dict[str, object]:
    cmd = typer.main.get_command(app)
    return dict(cmd.commands)  # type: ignore[attr-defined]


def _long_options() -> set[str]:
    cmd = typer.main.get_command(app)
    found: set[str] = set()
    for c in [cmd, *_commands().values()]:
        for p in c.params:  # type: ignore[attr-defined]
            if p.param_type_name == "option" and not getattr(p, "hidden", False):
                found.update(o for o in [*p.opts, *p.secondary_opts] if o.startswith("--"))
    return found


def test_generated_docs_are_up_to_date(gen_docs: ModuleType) -> None:
    stale = [str(p.relative_to(REPO)) for p in gen_docs.stale()]
    assert not stale, f"regenerate with `python bench/gen_docs.py`: {stale}"


def test_check_mode_exit_code(gen_docs: ModuleType) -> None:
    assert gen_docs.main(["--check"]) == 0


def test_generator_is_deterministic(gen_docs: ModuleType) -> None:
    assert gen_docs.man_page() == gen_docs.man_page()


def test_man_page_mentions_every_command_and_long_option() -> None:
    man = (REPO / "man" / "gmtool.1").read_text(encoding="utf-8")
    plain = man.replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    for name in _commands():
        assert re.search(rf'^\.SS "gmtool {re.escape(name)}"$', man, re.MULTILINE), f"no COMMANDS entry for {name}"
    for opt in sorted(_long_options()):
        assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", plain), f"man page lacks {opt}"
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "ENVIRONMENT", "EXIT STATUS", "FILES",
                    "EXAMPLES", "SEE ALSO"):
        assert f".SH {section}\n" in man
    for var in ("GMTOOL_LIBRARY", "GMTOOL_INDEX_DIR", "GMTOOL_CONFIG_DIR", "GMTOOL_CACHE_DIR", "GMTOOL_MODEL",
                "GMTOOL_TOKENIZER", "GMTOOL_PDF_VIEWER", "GMTOOL_DEBUG"):
        assert f"\\fB{var}\\fR" in man


def test_man_page_has_no_unescaped_roff_controls() -> None:
    man = (REPO / "man" / "gmtool.1").read_text(encoding="utf-8")
    known = {".TH", ".SH", ".SS", ".TP", ".PP", ".br", ".RS", ".RE", ".nf", ".fi", ".nh", ".ad", '.\\"'}
    for line in man.splitlines():
        if line.startswith((".", "'")):
            assert line.split(" ", 1)[0] in known, f"stray roff request: {line!r}"
        else:
            # every hyphen in text is escaped, so options copy and paste as ASCII
            assert re.search(r"(?<!\\)-", line) is None, f"unescaped hyphen: {line!r}"


def test_help_lists_every_command() -> None:
    res = runner.invoke(app, ["--help"], prog_name="gmtool")
    assert res.exit_code == 0, res.output
    listed = re.findall(r"^  (\w+) ", res.output.split("Commands:", 1)[1], re.MULTILINE)
    assert set(_commands()) <= set(listed)
    assert "--install-completion" in res.output
    assert "--show-completion" in res.output


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completions_match_install_completion(shell: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed script is what `gmtool --install-completion` / `--show-completion SHELL` produce."""
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    res = runner.invoke(app, ["--show-completion", shell], prog_name="gmtool")
    assert res.exit_code == 0, res.output
    committed = (REPO / "completions" / f"gmtool.{shell}").read_text(encoding="utf-8")
    assert committed.startswith(res.output.rstrip("\n") + "\n")
    assert "_GMTOOL_COMPLETE" in committed


def test_readme_examples_are_real_runs(gen_docs: ModuleType, sample_embedded: tuple[Path, object]) -> None:
    """Every example in the README is run again on the sample library and must print what it shows."""
    assert gen_docs.run_examples(sample_embedded[0]) == gen_docs.readme_examples(), (
        "regenerate with `python bench/gen_docs.py --examples LIB` (LIB: the sample library, scanned with embeddings)")


def test_man_page_examples_name_books_that_exist(sample_scanned: Path, gen_docs: ModuleType) -> None:
    """The man page's examples use the sample library's books; each book name they give resolves."""
    from gmtool.engine import Engine

    eng = Engine(sample_scanned)
    for _, commands in gen_docs.EXAMPLES:
        for line in commands.splitlines():
            words = line.split()
            if words[1] in ("toc", "show", "open"):
                assert eng.source_id(words[2]) in {m.source_id for m in eng.sources()}, line
