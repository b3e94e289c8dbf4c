"""scan / ls / index behaviour on small libraries: skipping, removal, changes, bad files, bad index."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pdfgen
import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.storage import store

runner = CliRunner()


def _run(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _md(path: Path, body: str) -> Path:
    path.write_text(body, encoding="utf-8")
    return path


BOOK = "# Chapter One\n\nIntro text.\n\n## Lamp Oil\n\nLamp oil burns for six hours.\n\n## Rope\n\nFifty feet of hempen rope.\n"


@pytest.fixture
def small_lib(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    _md(lib / "gear.md", BOOK)
    pdfgen.make_outline_pdf(lib / "outlined.pdf")
    pdfgen.make_plain_pdf(lib / "plain.pdf")
    (lib / "notes").mkdir()
    _md(lib / "notes" / "houserules.txt", "HOUSE RULES\n\nCritical hits explode on a natural 20.\n")
    return lib


def test_scan_json_report_and_ls(small_lib: Path) -> None:
    code, out, _ = _run("scan", str(small_lib), "--json", "--no-embed")
    assert code == 0, out
    rep = json.loads(out)
    for key in ("files_found", "indexed", "unchanged", "removed", "failed", "duration_ms"):
        assert key in rep
    assert rep["files_found"] == 4 and rep["indexed"] == 4 and rep["failed"] == []
    code, out, _ = _run("ls", "--library", str(small_lib), "--json")
    assert code == 0
    sources = {s["source_id"]: s for s in json.loads(out)["sources"]}
    assert set(sources) == {"gear", "outlined", "plain", "houserules"}
    assert sources["outlined"]["has_outline"] is True
    assert sources["plain"]["has_outline"] is False
    assert sources["outlined"]["pages"] >= 2
    assert sources["gear"]["entries"] == 3


def test_scan_remembers_library_and_ls_verbose(small_lib: Path) -> None:
    assert _run("scan", str(small_lib), "--no-embed", "--json")[0] == 0
    code, out, _ = _run("ls", "--verbose", "--json")  # no --library: the remembered one
    assert code == 0
    data = json.loads(out)
    assert data["paths"]["library"] == str(small_lib.resolve())
    assert data["paths"]["library_from"] == "remembered"
    assert len(data["sources"]) == 4


def test_unchanged_rescan_skips_everything(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    before = (small_lib / ".gmtool" / "index" / "gear.index.json").stat().st_mtime_ns
    rep = eng.scan(embed=False)
    assert (rep.indexed, rep.unchanged, rep.removed) == (0, 4, 0)
    assert (small_lib / ".gmtool" / "index" / "gear.index.json").stat().st_mtime_ns == before


def test_touched_but_identical_file_is_not_reindexed(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    os.utime(small_lib / "gear.md", (time.time() + 5, time.time() + 5))
    rep = eng.scan(embed=False)
    assert rep.indexed == 0 and rep.unchanged == 4


def test_deleted_file_is_dropped(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    (small_lib / "gear.md").unlink()
    rep = eng.scan(embed=False)
    assert rep.removed == 1
    assert "gear" not in {m.source_id for m in eng.sources()}
    assert not store.source_file(small_lib / ".gmtool", "gear").exists()
    assert all(h.source_id != "gear" for h in eng.search("rope").results)


def test_changed_file_is_reindexed(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    _md(small_lib / "gear.md", BOOK + "\n## Grappling Hook\n\nA hook on a chain.\n")
    rep = eng.scan(embed=False)
    assert rep.indexed == 1 and rep.unchanged == 3
    top = eng.search("grappling hook").results[0]
    assert (top.title, top.source_id) == ("Grappling Hook", "gear")


def test_force_reindexes_everything(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    assert eng.scan(embed=False, force=True).indexed == 4


@pytest.mark.parametrize("kind", ["zero", "garbage", "truncated", "not_pdf"])
def test_bad_pdf_fails_alone_and_scan_goes_on(small_lib: Path, kind: str) -> None:
    pdfgen.make_corrupt_pdf(small_lib / "broken.pdf", kind)
    code, out, _ = _run("scan", str(small_lib), "--json", "--no-embed")
    assert code == 3  # partial failure
    rep = json.loads(out)
    assert rep["indexed"] == 4
    assert [f["file"] for f in rep["failed"]] == ["broken.pdf"]
    assert rep["failed"][0]["code"] in ("PDF_CORRUPT", "EXTRACT_FAILED")


def test_encrypted_and_image_only_pdfs_get_their_codes(small_lib: Path) -> None:
    pdfgen.make_encrypted_pdf(small_lib / "locked.pdf")
    pdfgen.make_image_only_pdf(small_lib / "scanned.pdf")
    rep = Engine(small_lib).scan(embed=False)
    codes = {f.file: f.code for f in rep.failed}
    assert codes == {"locked.pdf": "PDF_ENCRYPTED", "scanned.pdf": "NO_TEXT_LAYER"}
    assert rep.indexed == 4


def test_failed_file_keeps_its_previous_index(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    (small_lib / "plain.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    rep = eng.scan(embed=False)
    assert [f.file for f in rep.failed] == ["plain.pdf"]
    assert "plain" in {m.source_id for m in eng.sources()}  # nothing already indexed is lost


def test_corrupt_index_file_is_detected_and_rebuilt(small_lib: Path) -> None:
    eng = Engine(small_lib)
    eng.scan(embed=False)
    store.source_file(small_lib / ".gmtool", "gear").write_bytes(b"{not json")
    res = Engine(small_lib).search("rope")
    assert any("INDEX_CORRUPT" in w for w in res.warnings)
    v = Engine(small_lib).verify()
    assert not v.healthy and any(p.code == "CORRUPT" for p in v.problems)
    rep = Engine(small_lib).scan(embed=False)
    assert rep.indexed == 1
    assert Engine(small_lib).verify().healthy
    assert Engine(small_lib).search("rope").results[0].title == "Rope"


def test_corrupt_manifest_is_rebuilt(small_lib: Path) -> None:
    Engine(small_lib).scan(embed=False)
    store.manifest_path(small_lib / ".gmtool").write_bytes(b"\x00garbage")
    code, _, err = _run("search", "rope", "--library", str(small_lib))
    assert code == 1 and "INDEX_CORRUPT" in err
    rep = Engine(small_lib).scan(embed=False)
    assert any("INDEX_CORRUPT" in w for w in rep.warnings)
    assert Engine(small_lib).verify().healthy


def test_index_format_version_mismatch_is_rebuilt(small_lib: Path) -> None:
    Engine(small_lib).scan(embed=False)
    path = store.source_file(small_lib / ".gmtool", "gear")
    data = json.loads(path.read_text())
    data["format_version"] = 999
    path.write_text(json.dumps(data))
    assert any(p.code == "CORRUPT" for p in Engine(small_lib).verify().problems)
    assert Engine(small_lib).scan(embed=False).indexed == 1


def test_no_index_is_a_clear_error(tmp_path: Path) -> None:
    code, out, err = _run("search", "fireball", "--library", str(tmp_path))
    assert code == 1 and out == ""
    assert "INDEX_NOT_FOUND" in err and "gmtool scan" in err


def test_scan_of_missing_dir_is_invalid_path(tmp_path: Path) -> None:
    code, _, err = _run("scan", str(tmp_path / "nope"))
    assert code == 2 and "INVALID_PATH" in err


def test_scan_of_a_folder_without_books_keeps_the_library(tmp_path: Path) -> None:
    """Scanning the wrong folder warns and exits 1; the remembered library stays the default."""
    books, empty = tmp_path / "books", tmp_path / "empty"
    books.mkdir()
    empty.mkdir()
    (books / "notes.md").write_text("# Torches\n\nA torch burns for an hour.\n", encoding="utf-8")
    assert _run("scan", str(books), "--json", "--no-embed")[0] == 0
    code, out, err = _run("scan", str(empty), "--no-embed")
    assert code == 1 and "NO_BOOKS" in err and "not changed" in err
    code, out, _ = _run("ls", "--json")
    assert [s["source_id"] for s in json.loads(out)["sources"]] == ["notes"]


def test_source_ids_are_unique_and_stable(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    (lib / "a").mkdir(parents=True)
    (lib / "b").mkdir()
    _md(lib / "a" / "Monster Manual.md", "# Goblin\n\nSmall and mean.\n")
    _md(lib / "b" / "monster-manual.md", "# Orc\n\nBig and mean.\n")
    eng = Engine(lib)
    eng.scan(embed=False)
    ids = {m.file: m.source_id for m in eng.sources()}
    assert ids == {"a/Monster Manual.md": "monster-manual", "b/monster-manual.md": "monster-manual-md"}
    eng.scan(embed=False, force=True)
    assert {m.file: m.source_id for m in eng.sources()} == ids


def test_index_dir_env_override(small_lib: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(tmp_path / "elsewhere"))
    Engine(small_lib).scan(embed=False)
    assert (tmp_path / "elsewhere" / "manifest.json").exists()
    assert not (small_lib / ".gmtool").exists()


@pytest.mark.parametrize("how", ["in_place", "renamed_over"])
def test_replaced_file_with_same_size_and_mtime_is_noticed(small_lib: Path, how: str) -> None:
    """Issue 14 G: size and mtime alone miss it; the inode or ctime does not."""
    Engine(small_lib).scan(embed=False, workers=1)
    gear = small_lib / "gear.md"
    st = gear.stat()
    new = BOOK.replace("hempen rope", "silken cord")
    assert len(new.encode()) == st.st_size
    if how == "in_place":
        gear.write_text(new, encoding="utf-8")
    else:
        tmp = small_lib / "gear.md.new"
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, gear)
    os.utime(gear, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (gear.stat().st_size, gear.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    problems = Engine(small_lib).verify().problems
    assert [(p.code, p.file) for p in problems] == [("STALE", "gear.md")]
    rep = Engine(small_lib).scan(embed=False, workers=1)
    assert rep.indexed_files == ["gear.md"] and rep.unchanged == 3
    assert Engine(small_lib).search("silken cord").results[0].source_id == "gear"
    assert Engine(small_lib).verify().healthy


def test_books_with_no_entries_are_counted_and_named(small_lib: Path) -> None:
    _md(small_lib / "blank.md", "\n\n   \n")
    rep = Engine(small_lib).scan(embed=False, workers=1)
    empty = sorted(m.file for m in Engine(small_lib).sources() if m.entry_count == 0)
    named = [w for w in rep.warnings if w.startswith("NO_ENTRIES")]
    if not empty:
        assert named == []
        pytest.skip("every book here gives entries (nothing to name)")
    assert len(named) == 1 and f"NO_ENTRIES: {len(empty)} book(s)" in named[0]
    assert all(f in named[0] for f in empty)


def test_no_entries_warning_counts_and_names_every_empty_book(tmp_path: Path) -> None:
    from dataclasses import replace

    from gmtool.index.indexer import Indexer, IndexOptions
    from gmtool.settings import Settings, resolve
    from gmtool.types import SourceMeta

    base = SourceMeta("a", "A", "a.md", "/a.md", "markdown", 1, 1.0, "x", 1, False, [], "", "0", 1, entry_count=3)
    ix = Indexer(resolve(tmp_path, Settings.from_env()), IndexOptions())
    ix.manifest.sources = {"a": base, "b": replace(base, source_id="b", file="sub/b.txt", entry_count=0),
                           "c": replace(base, source_id="c", file="c.pdf", entry_count=0)}
    ix._warn_empty()
    assert ix.report.warnings == ["NO_ENTRIES: 2 book(s) gave no entries, so nothing in them can be found: c.pdf, sub/b.txt"]


def test_a_small_job_runs_in_process_unless_workers_are_asked_for(small_lib: Path, tmp_path: Path) -> None:
    """Starting worker processes costs more than a few pages take to read; `--workers N` still gets them."""
    auto = Engine(small_lib).scan(embed=False)
    assert auto.workers == 0 and auto.indexed == 4 and not auto.failed
    asked = Engine(small_lib).scan(embed=False, workers=2, force=True)
    assert asked.workers == 2 and asked.indexed == auto.indexed and not asked.failed
    big = tmp_path / "big"
    big.mkdir()
    pdfgen.make_plain_pdf(big / "long.pdf", [(f"Chapter {i}", 0, ["Some words of the chapter. " * 20]) for i in range(45)])
    cpus = os.cpu_count() or 1
    report = Engine(big).scan(embed=False)
    assert report.workers == (cpus if cpus > 1 else 0) and report.indexed == 1 and not report.failed


def test_a_threaded_process_scans_with_workers_started_by_a_fork_server(small_lib: Path) -> None:
    """A worker forked while another thread holds a lock can wait on it forever; with a second
    thread alive the pool's workers come from a fork server, and the scan gives the same index."""
    import threading

    from gmtool.index.pool import process_pool

    with process_pool(1) as pool:
        assert pool.submit(os.getpid).result() != os.getpid()
    single = Engine(small_lib).scan(embed=False, workers=2)
    titles = {e["title"] for e in json.loads(_run("toc", "plain.pdf", "--json", "--library", str(small_lib))[1])["entries"]}
    stop = threading.Event()
    holder = threading.Thread(target=stop.wait, daemon=True)
    holder.start()
    try:
        with process_pool(2) as pool:
            assert pool._mp_context.get_start_method() == "forkserver"  # type: ignore[attr-defined]
        report = Engine(small_lib).scan(embed=False, workers=2, force=True)
    finally:
        stop.set()
    assert not report.failed and report.indexed == single.indexed
    again = {e["title"] for e in json.loads(_run("toc", "plain.pdf", "--json", "--library", str(small_lib))[1])["entries"]}
    assert again == titles and titles
