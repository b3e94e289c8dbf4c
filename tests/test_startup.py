"""Start-up stays light: the CLI module imports none of the heavy libraries (they load lazily)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ["onnxruntime", "pdfplumber", "pypdfium2", "sklearn", "scipy", "fastmcp", "numpy", "pydantic"]
# What a keyword search may import: numpy for the term matrices, nothing else from HEAVY.
SEARCH_MAY_IMPORT = ["numpy"]

PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""


def _run(body: str, tmp_path: Path) -> list[str]:
    env = {**os.environ, "GMTOOL_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_cli_pulls_in_nothing_heavy(tmp_path: Path) -> None:
    assert _run("import gmtool.cli", tmp_path) == []


def test_help_in_process_pulls_in_nothing_heavy(tmp_path: Path) -> None:
    body = (
        "import contextlib, io\n"
        "from gmtool.cli import app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        app(['--help'], prog_name='gmtool')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
    )
    assert _run(body, tmp_path) == []


def test_python_m_gmtool_help(tmp_path: Path) -> None:
    env = {**os.environ, "GMTOOL_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "gmtool", "--help"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout and "search" in out.stdout


# typer 0.29 converts option values through pydantic (~120 ms) unless the CLI does it itself;
# every command, with its options parsed, must stay clear of it.
COMMANDS = [
    ["search", "fireball", "--limit", "5", "--type", "spell", "--json"],
    ["ask", "fire", "--limit", "3", "--min-score", "0.1", "--timeout", "1", "--json", "--ranker", "bm25"],
    ["toc", "x", "--depth", "2", "--json"],
    ["show", "x", "Fireball", "--max-chars", "100"],
    ["ls", "--json"],
    ["index", "--verify", "--max-files", "3", "--json"],
    ["search", "--limit", "0"],
]


def test_commands_parse_options_without_pydantic(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    body = (
        "import contextlib, io\n"
        "from gmtool.cli import app\n"
        f"for argv in {COMMANDS!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "        try:\n"
        f"            app([*argv, '--library', {str(lib)!r}], prog_name='gmtool')\n"
        "        except SystemExit:\n"
        "            pass\n"
    )
    assert [m for m in _run(body, tmp_path) if m.split(".")[0] not in SEARCH_MAY_IMPORT] == []
