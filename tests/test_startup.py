"""Start-up stays light: the CLI module imports none of the heavy libraries (they load lazily)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ["onnxruntime", "pdfplumber", "pypdfium2", "sklearn", "scipy", "fastmcp", "numpy"]

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
