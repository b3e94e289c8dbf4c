"""Settings and places that gmtool cannot use (issue 25, items 6, 14, 15, 18 and 21): each gives a
code and a hint, never INTERNAL_ERROR, and never touches files that are not gmtool's."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.storage import store

runner = CliRunner()
REPO = Path(__file__).resolve().parents[1]


def _md(path: Path, title: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def _lib(root: Path) -> Path:
    lib = root / "lib"
    _md(lib / "frost.md", "Café Frost", "Frost élan bites the hand.")
    _md(lib / "ember.md", "Ember", "Embers glow.")
    _md(lib / "stone.md", "Stone", "Stones sit.")
    return lib


def _gmtool(*args: str, env: dict[str, str] | None = None,
            limit_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    """A real process: its environment and resource limits are what is under test."""
    def limit() -> None:
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    full = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    return subprocess.run([sys.executable, "-m", "gmtool", *args], capture_output=True, text=True, env=full,
                          timeout=120, preexec_fn=limit)


def _code(stderr: str) -> str:
    line = next((ln for ln in stderr.splitlines() if ln.startswith("error ")), "")
    return line.split(":", 1)[0].removeprefix("error ")


# --- 14: another tool's manifest.json -----------------------------------------------------------


def test_a_folder_with_a_foreign_manifest_is_not_adopted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: GMTOOL_INDEX_DIR pointing at a folder holding a web app's manifest.json was adopted
    and the manifest overwritten."""
    lib = _lib(tmp_path)
    foreign = tmp_path / "webapp"
    foreign.mkdir()
    theirs = b'{"name": "my web app", "start_url": "/"}'
    (foreign / "manifest.json").write_bytes(theirs)
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(foreign))
    r = runner.invoke(app, ["scan", str(lib), "--no-embed"])
    assert r.exit_code == 2 and "INDEX_DIR_NOT_OURS" in r.stderr, r.stderr
    assert (foreign / "manifest.json").read_bytes() == theirs
    assert sorted(p.name for p in foreign.iterdir()) == ["manifest.json"]


# --- 15: an index dir that is no folder; an output encoding that cannot show the text ------------


@pytest.mark.parametrize("where", ["devnull", "file", "below-a-file"])
def test_an_index_dir_that_is_a_file_or_a_device_is_a_usage_error(tmp_path: Path, where: str) -> None:
    """Before: GMTOOL_INDEX_DIR=/dev/null (or a regular file) gave INTERNAL_ERROR NotADirectoryError."""
    lib = _lib(tmp_path)
    (tmp_path / "plain-file").write_text("not a folder")
    target = {"devnull": "/dev/null", "file": str(tmp_path / "plain-file"),
              "below-a-file": str(tmp_path / "plain-file" / "index")}[where]
    for args in (["scan", str(lib), "--no-embed"], ["search", "frost", "-L", str(lib)]):
        r = runner.invoke(app, args, env={"GMTOOL_INDEX_DIR": target})
        assert r.exit_code == 2 and _code(r.stderr) == "INDEX_DIR_NOT_A_FOLDER", (args, r.stderr)
    r = runner.invoke(app, ["index", "--verify", "-L", str(lib), "--json"], env={"GMTOOL_INDEX_DIR": target})
    assert [p["code"] for p in json.loads(r.stdout)["problems"]] == ["INDEX_DIR_NOT_A_FOLDER"]
    r = runner.invoke(app, ["doctor", "-L", str(lib), "--json"], env={"GMTOOL_INDEX_DIR": target})
    assert json.loads(r.stdout)["index"]["status"] == "INDEX_DIR_NOT_A_FOLDER"
    assert (tmp_path / "plain-file").read_text() == "not a folder"


def test_an_ascii_output_encoding_replaces_what_it_cannot_show(tmp_path: Path) -> None:
    """Before: PYTHONIOENCODING=ascii with a title like "Café" ended every command in INTERNAL_ERROR."""
    lib = _lib(tmp_path)
    Engine(lib).index(embed=False, workers=1)
    env = {"PYTHONIOENCODING": "ascii", "GMTOOL_CONFIG_DIR": str(tmp_path / "cfg")}
    for args in (["search", "frost"], ["search", "frost", "--json"], ["toc", "frost"], ["ls"],
                 ["show", "frost", "--page", "1"]):
        p = _gmtool(*args, "-L", str(lib), env=env)
        assert p.returncode == 0, (args, p.stderr)
        assert "Caf? Frost" in p.stdout, (args, p.stdout)


# --- 6: a read-only library ---------------------------------------------------------------------


@pytest.fixture
def read_only_lib(tmp_path: Path) -> Iterator[Path]:
    """A library (with an index of it) that cannot be written: by permissions for a normal user; as
    root (who writes whatever the mode), on a read-only tmpfs mount, where that is allowed."""
    lib = _lib(tmp_path)
    Engine(lib).index(embed=False, workers=1)
    shutil.copytree(lib, tmp_path / "unindexed", ignore=shutil.ignore_patterns(".gmtool"))
    if os.geteuid() != 0:
        for folder in (lib, lib / ".gmtool", tmp_path / "unindexed"):
            folder.chmod(0o555)
        yield tmp_path
        for folder in (lib, lib / ".gmtool", tmp_path / "unindexed"):
            folder.chmod(0o755)
        return
    mnt = tmp_path / "ro"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("running as root, and no read-only mount can be made here")
    try:
        shutil.copytree(lib, mnt / "lib")
        shutil.copytree(tmp_path / "unindexed", mnt / "unindexed")
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        yield mnt
    finally:
        # lazily: this process may still map a file there (a hits file a search read)
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_read_only_library_says_so_and_still_answers(read_only_lib: Path) -> None:
    """Before: scan on a read-only library (or one without write permission) gave INTERNAL_ERROR."""
    for lib in (read_only_lib / "unindexed", read_only_lib / "lib"):
        r = runner.invoke(app, ["scan", str(lib), "--no-embed"])
        assert r.exit_code == 1 and _code(r.stderr) == "INDEX_READ_ONLY", r.stderr
        assert "GMTOOL_INDEX_DIR" in r.stderr
    lib = read_only_lib / "lib"
    for args in (["search", "frost"], ["ask", "what bites the hand"], ["index", "--verify"]):
        r = runner.invoke(app, [*args, "-L", str(lib)])
        assert r.exit_code == 0, (args, r.stderr)


# --- 18: --workers beyond the cores ---------------------------------------------------------------


def test_workers_are_clamped_to_the_cores_with_a_note(tmp_path: Path) -> None:
    """Before: --workers 100 on a 2-core machine started 101 processes."""
    from gmtool.settings import available_cores

    lib = _lib(tmp_path)
    r = runner.invoke(app, ["scan", str(lib), "--no-embed", "--json", "--workers", "100"])
    rep = json.loads(r.stdout)
    note = [w for w in rep["warnings"] if w.startswith("WORKERS_CLAMPED")]
    assert note and f"using {available_cores()}" in note[0], rep["warnings"]
    assert rep["workers"] <= available_cores()


# --- 21: a full disk (or a file size limit) while the vectors are written ------------------------


def _model_present() -> bool:
    from gmtool.rank.model_files import resolve_model_path
    from gmtool.settings import Settings

    path = resolve_model_path(Settings.from_env())
    return path is not None and path.is_file()


@pytest.mark.skipif(not _model_present(), reason="no embedding model installed")
def test_a_file_size_limit_while_writing_vectors_is_disk_full(tmp_path: Path) -> None:
    """Before: the vectors' writer (numpy) reported a short write with no errno, and the scan ended in
    INTERNAL_ERROR. `ulimit -f` makes every write past the limit fail with EFBIG, as a full disk fails
    with ENOSPC."""
    lib = tmp_path / "lib"
    lib.mkdir()
    body = "\n".join(f"# Part {j}\n\nText of part {j} about goblins and torches.\n" for j in range(120))
    (lib / "book.md").write_text(body, encoding="utf-8")
    env = {"GMTOOL_CONFIG_DIR": str(tmp_path / "cfg")}
    assert _gmtool("scan", str(lib), "--no-embed", env=env).returncode == 0
    p = _gmtool("scan", str(lib), env=env, limit_bytes=60_000)  # the vectors: 120 x 384 x 2 bytes
    assert p.returncode == 1 and _code(p.stderr) == "DISK_FULL", p.stderr
    assert [q for q in (lib / ".gmtool").rglob("*") if store.is_temp_name(q.name)] == []
    assert Engine(lib).search("goblins").results  # the keyword index is intact
    assert _gmtool("scan", str(lib), env=env).returncode == 0


# --- 16: a second scan while one is writing ------------------------------------------------------


def test_a_second_scan_says_at_once_whom_it_waits_for_and_doctor_names_the_writer(tmp_path: Path) -> None:
    """Before: a second scan waited silently (up to 600 s), and doctor did not mention the writer."""
    import time

    lib = _lib(tmp_path)
    Engine(lib).index(embed=False, workers=1)
    env = {**os.environ, "PYTHONPATH": str(REPO), "GMTOOL_CONFIG_DIR": str(tmp_path / "cfg")}
    with store.writer_lock(lib / ".gmtool"):  # this process is the writer now
        p = subprocess.Popen([sys.executable, "-m", "gmtool", "scan", str(lib), "--no-embed", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        time.sleep(2.0)
        assert p.poll() is None  # still waiting
        doctor = runner.invoke(app, ["doctor", "-L", str(lib), "--json"])
        assert f"pid {os.getpid()} is writing the index since" in json.loads(doctor.stdout)["index"]["writer"]
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    waiting = [ln for ln in err.splitlines() if ln.startswith("WAITING")]
    assert waiting and f"pid {os.getpid()}, since" in waiting[0], err
    assert json.loads(out)["unchanged"] == 3
