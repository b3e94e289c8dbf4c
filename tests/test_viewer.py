"""`gmtool open`: the viewer command for each kind of viewer, the page it opens at, and its errors.

Viewers are detected on PATH, so each test points PATH at a folder of fake executables.
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import scan_isolated
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.viewer import build_command

SAMPLE = Path(__file__).resolve().parents[1] / "gmtool" / "sample"
OPENER = "open" if sys.platform == "darwin" else "xdg-open"
runner = CliRunner()


def _scan(lib: Path, config: Path) -> None:
    scan_isolated(lib, config, workers=1)


@pytest.fixture(scope="module")
def lib(sample_scanned: Path) -> Iterator[Path]:
    """The sample library, scanned once per session, in a folder whose name needs shell quoting."""
    assert " " in sample_scanned.name
    yield sample_scanned


@pytest.fixture
def bindir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty PATH folder; `fake(name)` puts an executable there. No viewer template either."""
    d = tmp_path / "bin"
    d.mkdir()
    monkeypatch.setenv("PATH", str(d))
    monkeypatch.delenv("GMTOOL_PDF_VIEWER", raising=False)
    return d


def fake(bindir: Path, name: str, body: str = "exit 0") -> Path:
    exe = bindir / name
    exe.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    exe.chmod(0o755)
    return exe


def open_json(lib: Path, *args: str) -> dict:
    res = runner.invoke(app, ["open", "-L", str(lib), *args, "--dry-run", "--json"], prog_name="gmtool")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize(
    ("viewer", "flag"), [("zathura", "-P"), ("evince", "-i"), ("okular", "-p")]
)
def test_page_viewers(lib: Path, bindir: Path, viewer: str, flag: str) -> None:
    fake(bindir, viewer)
    fake(bindir, OPENER)
    data = open_json(lib, "grimoire", "--page", "3")
    pdf = str(lib / "grimoire.pdf")
    assert data["command"] == [viewer, flag, "3", pdf]
    assert data["viewer"] == viewer
    assert data["page"] == 3 and data["page_supported"] is True
    assert data["path"] == pdf and data["source_id"] == "grimoire"


def test_viewer_preference_order(lib: Path, bindir: Path) -> None:
    for name in ("okular", "evince", "zathura", OPENER):
        fake(bindir, name)
    assert open_json(lib, "grimoire")["viewer"] == "zathura"


def test_env_template_wins_and_is_quoted(lib: Path, bindir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake(bindir, "zathura")
    monkeypatch.setenv("GMTOOL_PDF_VIEWER", "my-viewer --goto={page} --file '{path}'")
    data = open_json(lib, "bestiary", "-p", "4")
    pdf = str(lib / "bestiary.pdf")
    assert data["command"] == ["my-viewer", "--goto=4", "--file", pdf]
    assert data["page_supported"] is True
    # the printed command line survives a shell round trip, spaces in the path included
    res = runner.invoke(app, ["open", "-L", str(lib), "bestiary", "-p", "4", "--dry-run"], prog_name="gmtool")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"my-viewer --goto=4 --file '{pdf}'"


def test_env_template_without_path_gets_it_appended() -> None:
    name, argv, page_ok = build_command("/x/a b.pdf", 7, viewer="viewer --page {page}")
    assert (name, argv, page_ok) == ("viewer", ["viewer", "--page", "7", "/x/a b.pdf"], True)


def test_generic_opener_has_no_page(lib: Path, bindir: Path) -> None:
    fake(bindir, OPENER)
    data = open_json(lib, "grimoire", "--page", "2")
    assert data["command"] == [OPENER, str(lib / "grimoire.pdf")]
    assert data["page"] == 2 and data["page_supported"] is False


def test_no_viewer_at_all(lib: Path, bindir: Path) -> None:
    res = runner.invoke(app, ["open", "-L", str(lib), "grimoire"], prog_name="gmtool")
    assert res.exit_code == 1
    assert "VIEWER_NOT_FOUND" in res.stderr
    assert "GMTOOL_PDF_VIEWER" in res.stderr
    # a dry run still says which file and page it would open
    res = runner.invoke(app, ["open", "-L", str(lib), "grimoire", "--page", "2", "--dry-run"], prog_name="gmtool")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == f"{lib / 'grimoire.pdf'} p.2"
    assert "VIEWER_NOT_FOUND" in res.stderr


def test_title_resolves_its_page(lib: Path, bindir: Path) -> None:
    fake(bindir, "zathura")
    data = open_json(lib, "grimoire", "Gull's Leap")
    assert data["page"] == 2
    assert data["command"][:3] == ["zathura", "-P", "2"]
    assert open_json(lib, "bestiary", "Fogmaw Serpent")["page"] == 4


def test_default_page_is_one(lib: Path, bindir: Path) -> None:
    fake(bindir, "okular")
    assert open_json(lib, "bestiary")["command"] == ["okular", "-p", "1", str(lib / "bestiary.pdf")]


def test_markdown_goes_to_the_generic_opener(lib: Path, bindir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake(bindir, "zathura")
    fake(bindir, OPENER)
    monkeypatch.setenv("GMTOOL_PDF_VIEWER", "zathura -P {page} {path}")
    data = open_json(lib, "lantern-coast")
    assert data["command"] == [OPENER, str(lib / "lantern-coast.md")]
    assert data["page_supported"] is False


def test_bad_page_and_unknown_names(lib: Path, bindir: Path) -> None:
    fake(bindir, "zathura")
    res = runner.invoke(app, ["open", "-L", str(lib), "grimoire", "-p", "99", "--dry-run"], prog_name="gmtool")
    assert res.exit_code == 2 and "INVALID_PAGE" in res.stderr
    res = runner.invoke(app, ["open", "-L", str(lib), "nosuchbook", "--dry-run"], prog_name="gmtool")
    assert res.exit_code == 2 and "SOURCE_NOT_FOUND" in res.stderr
    res = runner.invoke(app, ["open", "-L", str(lib), "grimoire", "No Such Spell Anywhere", "--dry-run"],
                        prog_name="gmtool")
    assert res.exit_code == 1 and "SECTION_NOT_FOUND" in res.stderr


def test_missing_file_asks_for_a_rescan(tmp_path: Path, bindir: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    shutil.copy2(SAMPLE / "lantern-coast.md", small / "lantern-coast.md")
    _scan(small, tmp_path / "config")
    (small / "lantern-coast.md").unlink()
    fake(bindir, OPENER)
    res = runner.invoke(app, ["open", "-L", str(small), "lantern-coast", "--dry-run"], prog_name="gmtool")
    assert res.exit_code == 1
    assert "FILE_NOT_FOUND" in res.stderr and "gmtool scan" in res.stderr


def test_open_launches_the_viewer_detached(lib: Path, bindir: Path, tmp_path: Path) -> None:
    log = tmp_path / "argv.txt"
    fake(bindir, "zathura", f"PATH=/usr/bin:/bin\nprintf '%s\\n' \"$@\" > '{log}.tmp' && mv '{log}.tmp' '{log}'")
    res = runner.invoke(app, ["open", "-L", str(lib), "grimoire", "Gull's Leap"], prog_name="gmtool")
    assert res.exit_code == 0, res.output
    assert res.stdout.strip() == f"opened {lib / 'grimoire.pdf'} at p.2"
    deadline = time.monotonic() + 10
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert log.read_text(encoding="utf-8").splitlines() == ["-P", "2", str(lib / "grimoire.pdf")]


HOSTILE = "$(touch pwned) `touch pwned2`; touch pwned3 'q\".pdf"


@pytest.mark.parametrize("template", [
    "sh -c 'printf \"%s\\n\" {path} > seen.txt'",
    "sh -c 'printf \"%s\\n\" \"{path}\" > seen.txt'",
    "bash -ec \"printf '%s\\n' '{path}' > seen.txt\"",
    "env sh -c 'printf \"%s\\n\" {path} > seen.txt' viewer",
])
def test_a_shell_template_gets_the_file_name_as_one_word(tmp_path: Path, template: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A `sh -c` template once ran commands from a book's name: the fields are shell-quoted there."""
    import subprocess

    path = str(tmp_path / HOSTILE)
    _name, argv, _page = build_command(path, 3, viewer=template)
    monkeypatch.chdir(tmp_path)
    subprocess.run(argv, check=True, timeout=10, cwd=tmp_path)
    assert (tmp_path / "seen.txt").read_text(encoding="utf-8") == path + "\n"
    assert not [p.name for p in tmp_path.glob("pwned*")]


def test_open_with_a_shell_viewer_runs_nothing_from_the_file_name(tmp_path: Path) -> None:
    """The whole way: a book named `$(touch pwned).pdf` indexed and opened through `sh -c`."""
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy2(SAMPLE / "grimoire.pdf", lib / "$(touch pwned).pdf")
    _scan(lib, tmp_path / "config")
    [sid] = [s["source_id"] for s in json.loads(runner.invoke(app, ["ls", "-L", str(lib), "--json"]).stdout)["sources"]]
    seen = tmp_path / "seen.txt"
    template = f"sh -c 'cd {shlex.quote(str(tmp_path))} && printf \"%s %s\\n\" {{page}} {{path}} > seen.tmp && mv seen.tmp seen.txt'"
    env = {"GMTOOL_PDF_VIEWER": template}
    res = runner.invoke(app, ["open", "-L", str(lib), sid, "-p", "2"], prog_name="gmtool", env=env)
    assert res.exit_code == 0, res.output
    deadline = time.monotonic() + 10
    while not seen.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen.read_text(encoding="utf-8") == f"2 {lib / '$(touch pwned).pdf'}\n"
    assert not (tmp_path / "pwned").exists() and not (lib / "pwned").exists()


def test_fields_outside_a_shell_script_are_not_quoted() -> None:
    _name, argv, _page = build_command("/x/a b.pdf", 7, viewer="viewer --file={path} -c {page}")
    assert argv == ["viewer", "--file=/x/a b.pdf", "-c", "7"]
