"""`gmtool index`: targeted files, globs, types, caps, clean rebuilds, verify, the JSON report,
logs and the writer lock. (Plain scan behaviour lives in test_scan.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pdfgen
import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.storage import store

runner = CliRunner()

REPORT_KEYS = {"files_indexed", "unchanged", "removed", "failed", "sections", "embeddings_generated",
               "duration_ms", "storage", "log_file", "warnings"}


def _run(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _index(lib: Path, *args: str) -> tuple[int, dict]:
    code, out, err = _run("index", "--library", str(lib), "--no-embed", "--json", "--workers", "1", *args)
    assert out, err
    return code, json.loads(out)


def _md(path: Path, title: str, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    _md(lib / "core.md", "Lamp Oil", "Lamp oil burns for six hours.")
    _md(lib / "adventures" / "crypt.md", "Crypt of Bones", "Skeletons guard the crypt.")
    _md(lib / "adventures" / "maps" / "crypt-map.md", "Crypt Map", "Room one is a vestibule.")
    _md(lib / "adventures" / "deep" / "tower.txt", "Tower", "A wizard tower of glass.")
    pdfgen.make_outline_pdf(lib / "book.pdf")
    return lib


def _ids(lib: Path) -> set[str]:
    return {m.source_id for m in Engine(lib).sources()}


def _mtimes(lib: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in (lib / ".gmtool" / "index").glob("*.index.json")}


def _healthy(lib: Path) -> None:
    v = Engine(lib).verify()
    assert v.healthy, v.problems


def test_report_has_every_key_and_a_log(lib: Path) -> None:
    code, rep = _index(lib)
    assert code == 0
    assert set(rep) >= REPORT_KEYS
    assert rep["files_indexed"] == 5 and rep["failed"] == [] and rep["sections"] >= 5
    assert rep["storage"]["index_dir"] == str(lib / ".gmtool") and rep["storage"]["size_bytes"] > 0
    log = Path(rep["log_file"])
    assert log.is_file() and log.parent == lib / ".gmtool" / "logs"
    assert re.fullmatch(r"ok-\d{8}T\d{6}\d+Z\.log", log.name)
    assert "indexed core.md" in log.read_text()
    _healthy(lib)


def test_failed_run_writes_a_failed_log(lib: Path) -> None:
    pdfgen.make_corrupt_pdf(lib / "bad.pdf", "garbage")
    code, rep = _index(lib)
    assert code == 3
    assert [f["file"] for f in rep["failed"]] == ["bad.pdf"]
    assert set(rep["failed"][0]) == {"file", "code", "message", "hint"}
    assert Path(rep["log_file"]).name.startswith("failed-")
    assert "bad.pdf" in Path(rep["log_file"]).read_text()


def test_targeted_files_change_only_those(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _index(lib)
    before = _mtimes(lib)
    _md(lib / "core.md", "Lamp Oil", "Lamp oil now burns for eight hours.")
    _md(lib / "adventures" / "crypt.md", "Crypt of Bones", "Changed too, but not asked for.")
    _md(lib / "new.md", "Grappling Hook", "A hook on a chain.")
    monkeypatch.chdir(lib)
    code, rep = _index(lib, "core.md", "new.md")  # relative to the cwd
    assert code == 0 and sorted(rep["indexed_files"]) == ["core.md", "new.md"]
    after = _mtimes(lib)
    assert after["crypt.index.json"] == before["crypt.index.json"]
    assert after["book.index.json"] == before["book.index.json"]
    assert after["core.index.json"] != before["core.index.json"]
    assert _ids(lib) == {"core", "crypt", "crypt-map", "tower", "book", "new"}
    assert Engine(lib).search("grappling hook").results[0].source_id == "new"
    # the unasked-for change is still pending: verify sees it, a full run repairs it
    assert {p.code for p in Engine(lib).verify().problems} == {"STALE"}
    assert _index(lib)[1]["files_indexed"] == 1
    _healthy(lib)


def test_targeted_path_relative_to_the_library(lib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, rep = _index(lib, "adventures/crypt.md")
    assert code == 0 and rep["indexed_files"] == ["adventures/crypt.md"]
    assert _ids(lib) == {"crypt"}


def test_targeted_missing_outside_and_unsupported_files_fail_alone(lib: Path, tmp_path: Path) -> None:
    outside = _md(tmp_path / "elsewhere.md", "Elsewhere", "Not in the library.")
    (lib / "notes.docx").write_bytes(b"PK")
    code, rep = _index(lib, str(lib / "core.md"), str(outside), str(lib / "nope.md"), str(lib / "notes.docx"))
    assert code == 3
    assert {f["code"] for f in rep["failed"]} == {"OUTSIDE_LIBRARY", "INVALID_PATH", "UNSUPPORTED_FORMAT"}
    assert all(f["hint"] for f in rep["failed"])
    assert rep["indexed_files"] == ["core.md"] and _ids(lib) == {"core"}


def test_targeted_run_never_drops_other_sources(lib: Path) -> None:
    _index(lib)
    (lib / "core.md").unlink()
    _, rep = _index(lib, str(lib / "book.pdf"))
    assert rep["removed"] == 0 and "core" in _ids(lib)
    assert _index(lib)[1]["removed"] == 1  # a whole-library run drops it
    _healthy(lib)


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        (["adventures/**"], [], {"crypt", "crypt-map", "tower"}),
        (["adventures/**"], ["**/maps/*"], {"crypt", "tower"}),
        (["**/*.md"], [], {"core", "crypt", "crypt-map"}),  # `**/` also matches no folder at all
        (["*.md"], [], {"core", "crypt", "crypt-map"}),  # no `/`: the file name, in any folder
        (["./*.pdf", "*.txt"], [], {"book", "tower"}),
        ([], ["adventures/**"], {"core", "book"}),
        (["adventures/*"], [], {"crypt"}),  # one `*` never crosses a `/`
        (["adventures/*/*"], ["*.txt"], {"crypt-map"}),
    ],
)
def test_include_exclude_globs(lib: Path, include: list[str], exclude: list[str], expected: set[str]) -> None:
    args = [a for pat in include for a in ("--include", pat)] + [a for pat in exclude for a in ("--exclude", pat)]
    code, _ = _index(lib, *args)
    assert code == 0
    assert _ids(lib) == expected


def test_globbed_run_keeps_sources_outside_its_scope(lib: Path) -> None:
    _index(lib)
    _md(lib / "core.md", "Lamp Oil", "Changed.")
    _, rep = _index(lib, "--include", "adventures/**")
    assert rep["files_indexed"] == 0 and rep["removed"] == 0 and rep["unchanged"] == 3
    assert len(_ids(lib)) == 5


def test_types_limit_file_types(lib: Path) -> None:
    code, rep = _index(lib, "--types", ".pdf,md")
    assert code == 0 and _ids(lib) == {"book", "core", "crypt", "crypt-map"}
    code, rep = _index(lib, "--types", "txt")
    assert rep["files_indexed"] == 1 and rep["removed"] == 0 and "tower" in _ids(lib)


def test_max_files_warns_and_names_what_was_left_out(lib: Path) -> None:
    code, rep = _index(lib, "--max-files", "2")
    assert code == 0 and rep["files_indexed"] == 2
    (warning,) = [w for w in rep["warnings"] if w.startswith("MAX_FILES")]
    assert "3 file(s) left out" in warning
    assert len(_ids(lib)) == 2
    # the cap never removes what an earlier run indexed
    _index(lib)
    code, rep = _index(lib, "--max-files", "1")
    assert rep["removed"] == 0 and len(_ids(lib)) == 5


def test_force_clean_wipes_and_rebuilds(lib: Path) -> None:
    _index(lib)
    idx = lib / ".gmtool"
    (idx / "index" / "stray.index.json").write_bytes(b"junk")
    store.manifest_path(idx).write_bytes(b"\x00garbage")
    code, rep = _index(lib, "--force-clean")
    assert code == 0 and rep["files_indexed"] == 5 and [w for w in rep["warnings"] if not w.startswith("NO_ENTRIES")] == []
    assert not (idx / "index" / "stray.index.json").exists()
    assert len(list((idx / "logs").glob("ok-*.log"))) == 1  # the old logs went with the rest
    _healthy(lib)


def test_verify_exit_codes_json_and_log(lib: Path) -> None:
    code, out, _ = _run("index", "--verify", "--json", "--library", str(lib))
    assert code == 1
    rep = json.loads(out)
    assert rep["healthy"] is False and rep["problems"][0]["code"] == "INDEX_NOT_FOUND"
    assert rep["log_file"] is None and not (lib / ".gmtool").exists()  # verify creates nothing
    _index(lib)
    code, out, _ = _run("index", "--verify", "--json", "--library", str(lib))
    rep = json.loads(out)
    assert code == 0 and rep["healthy"] is True and rep["problems"] == [] and rep["sources"] == 5
    assert re.fullmatch(r"verify-\d{8}T\d{6}\d+Z\.log", Path(rep["log_file"]).name)
    assert Path(rep["log_file"]).is_file()
    code, out, _ = _run("index", "--verify", "--library", str(lib))
    assert code == 0


def test_verify_lists_every_problem_with_code_and_hint(lib: Path) -> None:
    _index(lib)
    idx = lib / ".gmtool"
    (lib / "core.md").unlink()                                       # MISSING
    _md(lib / "adventures" / "crypt.md", "Crypt", "Rewritten.")       # STALE
    _md(lib / "fresh.md", "Fresh", "Never indexed.")                  # NOT_INDEXED
    store.source_file(idx, "tower").write_bytes(b"{trunc")            # CORRUPT
    (idx / "index" / "ghost.index.json").write_bytes(b"{}")           # ORPHANED
    (idx / "index" / ".book.index.json.999999.tmp").write_bytes(b"")  # ORPHANED (temp)
    files_before = sorted(p.name for p in idx.rglob("*") if "logs" not in p.parts)
    code, out, _ = _run("index", "--verify", "--json", "--library", str(lib))
    assert code == 1
    rep = json.loads(out)
    by_code: dict[str, list[str]] = {}
    for p in rep["problems"]:
        assert set(p) == {"code", "file", "message", "hint"} and p["message"] and p["hint"]
        by_code.setdefault(p["code"], []).append(p["file"])
    assert by_code["MISSING"] == ["core.md"]
    assert by_code["STALE"] == ["adventures/crypt.md"]
    assert by_code["NOT_INDEXED"] == ["fresh.md"]
    assert by_code["CORRUPT"] == [str(store.source_file(idx, "tower"))]
    assert len(by_code["ORPHANED"]) == 2
    assert sorted(p.name for p in idx.rglob("*") if "logs" not in p.parts) == files_before  # changed nothing
    code, rep2 = _index(lib)
    assert code == 0 and rep2["removed"] == 1
    _healthy(lib)
    assert not (idx / "index" / "ghost.index.json").exists()


def test_no_wait_fails_with_index_locked(lib: Path) -> None:
    _index(lib)
    with store.writer_lock(lib / ".gmtool"):
        code, _, err = _run("index", "--library", str(lib), "--no-embed", "--no-wait")
        assert code == 1 and "INDEX_LOCKED" in err
        # readers never lock
        assert Engine(lib).search("lamp oil").results[0].source_id == "core"
    assert _index(lib, "--no-wait")[0] == 0
    _healthy(lib)


def test_no_change_rerun_rewrites_nothing(lib: Path) -> None:
    _index(lib)
    idx = lib / ".gmtool"
    before = {p: p.stat().st_mtime_ns for p in idx.rglob("*") if p.is_file() and "logs" not in p.parts and p.name != "lock"}
    _, rep = _index(lib)
    assert rep["files_indexed"] == 0 and rep["unchanged"] == 5 and rep["storage"]["size_bytes"] > 0
    after = {p: p.stat().st_mtime_ns for p in idx.rglob("*") if p.is_file() and "logs" not in p.parts and p.name != "lock"}
    assert after == before


def test_logs_are_pruned(lib: Path) -> None:
    logs = lib / ".gmtool" / "logs"
    logs.mkdir(parents=True)
    for i in range(60):
        (logs / f"ok-20200101T0000{i:02d}000000Z.log").write_text("old\n")
    _, rep = _index(lib)
    names = sorted(p.name for p in logs.iterdir())
    assert len(names) == 50 and Path(rep["log_file"]).name in names
    assert "ok-20200101T000000000000Z.log" not in names


def test_rescan_reindexes_what_another_extraction_read(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A source indexed by another version of extraction is indexed again, though its file is unchanged:
    an upgrade's better reading reaches books indexed before it. The next scan finds it current."""
    import gmtool.index.indexer as indexer

    _, first = _index(lib)
    assert first["files_indexed"] == 5
    monkeypatch.setattr(indexer, "EXTRACT_VERSION", "x-next")
    _, again = _index(lib)
    assert again["files_indexed"] == 5 and again["unchanged"] == 0
    _, then = _index(lib)
    assert then["files_indexed"] == 0 and then["unchanged"] == 5
