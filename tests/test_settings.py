"""Settings: the environment is read once, into a frozen object that the Engine holds and passes down."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from gmtool.engine import Engine
from gmtool.settings import Settings


def test_from_env_reads_each_variable(tmp_path: Path) -> None:
    s = Settings.from_env({
        "GMTOOL_LIBRARY": "/lib", "GMTOOL_INDEX_DIR": "/idx", "GMTOOL_CONFIG_DIR": "/cfg",
        "GMTOOL_CACHE_DIR": "/cache", "GMTOOL_MODEL": "~/m.onnx", "GMTOOL_TOKENIZER": "/t.json",
        "GMTOOL_NO_REWRITE": "1", "GMTOOL_PDF_VIEWER": "  zathura -P {page} {path} ", "GMTOOL_DEBUG": "1",
    })
    assert (s.library, s.index_dir, s.config_dir, s.cache_dir) == (Path("/lib"), Path("/idx"), Path("/cfg"),
                                                                     Path("/cache"))
    assert s.model == Path("~/m.onnx").expanduser() and s.tokenizer == Path("/t.json")
    assert s.no_rewrite and s.debug and s.pdf_viewer == "zathura -P {page} {path}"
    assert s.config_file == Path("/cfg/config.json")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.debug = False  # type: ignore[misc]


def test_unset_and_empty_mean_defaults() -> None:
    s = Settings.from_env({"GMTOOL_MODEL": "", "GMTOOL_DEBUG": "", "XDG_CACHE_HOME": "/xdg-cache", "HOME": "/h"})
    assert s.model is None and s.tokenizer is None and s.library is None and s.index_dir is None
    assert not s.debug and not s.no_rewrite and s.pdf_viewer == ""
    assert s.cache_dir == Path("/xdg-cache/gmtool")
    assert s.config_dir == Path("/h/.config/gmtool")


def test_engine_uses_the_settings_it_is_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(tmp_path / "from-env"))
    given = dataclasses.replace(Settings.from_env(), index_dir=tmp_path / "given")
    eng = Engine(tmp_path, settings=given)
    assert eng.settings is given and eng.paths.index_dir == (tmp_path / "given").resolve()
    # without settings the Engine reads the environment itself, once, when it is made
    eng = Engine(tmp_path)
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(tmp_path / "later"))
    assert eng.paths.index_dir == (tmp_path / "from-env").resolve()
    assert eng.settings.index_dir == tmp_path / "from-env"


def test_debug_flag_is_per_invocation_and_leaves_the_environment_alone(tmp_path: Path) -> None:
    import os

    from typer.testing import CliRunner

    from gmtool.cli import app
    from gmtool.errors import GmtoolError

    runner = CliRunner()
    missing = str(tmp_path / "no-such-library")
    res = runner.invoke(app, ["--debug", "toc", "x", "-L", missing])
    assert isinstance(res.exception, GmtoolError)  # --debug: the error propagates (traceback)
    assert "GMTOOL_DEBUG" not in os.environ
    res = runner.invoke(app, ["toc", "x", "-L", missing])
    assert res.exit_code != 0 and not isinstance(res.exception, GmtoolError) and "error " in res.stderr
