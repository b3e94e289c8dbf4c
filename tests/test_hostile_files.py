"""Files that are not what they seem (issue 14 C, E, H, 1, 2, 5): FIFOs and devices, symlink
loops, dangling and outside links, heading-less notes, encodings and oversized sections."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.index.discover import discover
from gmtool.index.extract.markdown import extract_markdown
from gmtool.index.extract.plaintext import extract_text
from gmtool.index.extract.sections import MAX_ENTRY_CHARS, body_chunks
from gmtool.index.files import decode_text, resolve_target

runner = CliRunner()


def _scan(lib: Path) -> tuple[int, dict]:
    r = runner.invoke(app, ["scan", str(lib), "--no-embed", "--json", "--workers", "1"])
    assert r.stdout, r.stderr
    return r.exit_code, json.loads(r.stdout)


def _codes(rep: dict) -> dict[str, str]:
    return {f["file"]: f["code"] for f in rep["failed"]}


def _md(path: Path, title: str = "Torch", body: str = "A torch burns for an hour.") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    return path


# --- C: only regular files are read --------------------------------------------------------


def test_fifo_and_dev_zero_are_skipped_within_seconds(tmp_path: Path) -> None:
    """Before: hashing blocked forever on the FIFO (no writer) and on /dev/zero (no end)."""
    lib = tmp_path / "lib"
    _md(lib / "ok.md")
    os.mkfifo(lib / "pipe.md")
    (lib / "zero.pdf").symlink_to("/dev/zero")
    (lib / "random.md").symlink_to("/dev/urandom")
    env = dict(os.environ, GMTOOL_CONFIG_DIR=str(tmp_path / "cfg"))
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "gmtool", "scan", str(lib), "--no-embed", "--json", "--workers", "1"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert time.monotonic() - t0 < 30
    rep = json.loads(p.stdout)
    assert p.returncode == 3
    assert _codes(rep) == {"pipe.md": "NOT_A_FILE", "zero.pdf": "NOT_A_FILE", "random.md": "NOT_A_FILE"}
    assert rep["indexed_files"] == ["ok.md"]


def test_index_file_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    _md(lib / "ok.md")
    os.mkfifo(lib / "pipe.md")
    r = runner.invoke(app, ["index", "-L", str(lib), str(lib / "pipe.md"), "--no-embed", "--json", "--workers", "1"])
    assert _codes(json.loads(r.stdout)) == {str(lib / "pipe.md"): "NOT_A_FILE"}


def test_a_file_swapped_for_a_fifo_after_discovery_is_refused(tmp_path: Path) -> None:
    from gmtool.errors import ExtractError
    from gmtool.index.files import hash_file

    os.mkfifo(tmp_path / "late.md")
    with pytest.raises(ExtractError) as exc:
        hash_file(tmp_path / "late.md")
    assert exc.value.code == "NOT_A_FILE"


# --- E + H: one symlink policy ------------------------------------------------------------


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    _md(lib / "core.md", "Lamp Oil", "Lamp oil burns.")
    _md(tmp_path / "elsewhere" / "outside.md", "Outside Book", "Kept outside the library.")
    _md(tmp_path / "shelf" / "shelved.md", "Shelved Book", "Kept on another shelf.")
    (lib / "outside.md").symlink_to(tmp_path / "elsewhere" / "outside.md")
    (lib / "shelf").symlink_to(tmp_path / "shelf", target_is_directory=True)
    (lib / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    (lib / "loop-a.md").symlink_to(lib / "loop-b.md")
    (lib / "loop-b.md").symlink_to(lib / "loop-a.md")
    (lib / "sub").mkdir()
    (lib / "sub" / "up").symlink_to(lib, target_is_directory=True)
    return lib


def test_scan_follows_links_placed_in_the_library_and_reports_broken_ones(linked: Path) -> None:
    """Before: a loop was UNREADABLE "check permissions", a dangling link VANISHED."""
    code, rep = _scan(linked)
    assert code == 3
    assert sorted(rep["indexed_files"]) == ["core.md", "outside.md", "shelf/shelved.md"]
    assert _codes(rep) == {"dangling.md": "DANGLING_LINK", "loop-a.md": "SYMLINK_LOOP",
                           "loop-b.md": "SYMLINK_LOOP", "sub/up": "SYMLINK_LOOP"}


def test_index_file_agrees_with_scan(linked: Path, tmp_path: Path) -> None:
    """Before: scan served outside.md while `index FILE` rejected it as OUTSIDE_LIBRARY."""
    files = ["outside.md", "shelf/shelved.md", "dangling.md", "loop-a.md"]
    r = runner.invoke(app, ["index", "-L", str(linked), "--no-embed", "--json", "--workers", "1",
                            *[str(linked / f) for f in files]])
    rep = json.loads(r.stdout)
    assert sorted(rep["indexed_files"]) == ["outside.md", "shelf/shelved.md"]
    assert _codes(rep) == {str(linked / "dangling.md"): "DANGLING_LINK", str(linked / "loop-a.md"): "SYMLINK_LOOP"}
    _, scanned = _scan(linked)
    assert scanned["indexed"] == 1 and scanned["unchanged"] == 2  # same files, same library paths


def test_dot_dot_never_leaves_the_library(linked: Path, tmp_path: Path) -> None:
    escaped = resolve_target(linked / ".." / "elsewhere" / "outside.md", linked)
    assert not isinstance(escaped, Path) and escaped.code == "OUTSIDE_LIBRARY"
    inside = resolve_target(linked / "sub" / ".." / "core.md", linked)
    assert inside == linked / "core.md"
    assert resolve_target(Path("outside.md"), linked, cwd=tmp_path) == linked / "outside.md"


def test_a_folder_behind_two_links_is_read_once(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    _md(tmp_path / "shelf" / "book.md")
    (lib).mkdir()
    (lib / "a").symlink_to(tmp_path / "shelf", target_is_directory=True)
    (lib / "b").symlink_to(tmp_path / "shelf", target_is_directory=True)
    assert [p.relative_to(lib).as_posix() for p in discover(lib)] == ["a/book.md"]


# --- 1: every readable file is searchable --------------------------------------------------


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "notes.txt").write_text("just some notes about goblins\n", encoding="utf-8")
    (lib / "scribbles.md").write_text("Hobgoblin war drums echo in the *valley*.\n", encoding="utf-8")
    (lib / "intro.md").write_text("The lich sleeps below.\n\n# Crypt\n\nBones.\n", encoding="utf-8")
    code, rep = _scan(lib)
    assert code == 0 and rep["failed"] == []
    return lib


def test_heading_less_files_are_found_by_search_and_ask(notes: Path) -> None:
    """Before: notes.txt and a heading-less .md had 0 entries, invisible to search and ask."""
    eng = Engine(notes)
    hits = eng.search("goblins").results
    assert hits and hits[0].file == "notes.txt" and hits[0].title == "notes"
    assert "goblins" in hits[0].snippet
    assert any(h.file == "scribbles.md" for h in eng.search("hobgoblin drums").results)
    asked = eng.ask("where are the goblins?", ranker="bm25").results
    assert asked and asked[0].file == "notes.txt"


def test_text_before_the_first_heading_is_an_entry(notes: Path) -> None:
    hits = Engine(notes).search("lich").results
    assert hits and hits[0].file == "intro.md" and hits[0].line == 1
    titles = [n["title"] for n in Engine(notes).toc("intro").entries]
    assert titles == ["intro", "Crypt"]


# --- 2: honest locations --------------------------------------------------------------------


def test_markdown_and_text_results_have_a_line_and_no_page(notes: Path) -> None:
    """Before: `page: 1` beside the real line, and `ls` said "Pages 1"."""
    r = runner.invoke(app, ["search", "crypt", "-L", str(notes), "--json"])
    hit = json.loads(r.stdout)["results"][0]
    assert hit["page"] is None and hit["line"] == 3
    node = Engine(notes).toc("intro").entries[0]
    assert node["page"] is None and node["end_page"] is None and node["line"] == 1
    ls = json.loads(runner.invoke(app, ["ls", "-L", str(notes), "--json"]).stdout)
    by_file = {s["file"]: s for s in ls["sources"]}
    assert by_file["intro.md"]["pages"] is None and by_file["intro.md"]["lines"] == 6
    table = runner.invoke(app, ["ls", "-L", str(notes)]).stdout
    assert "6 lines" in table
    shown = runner.invoke(app, ["show", "intro", "Crypt", "-L", str(notes)]).stdout
    assert "l.3" in shown and "p." not in shown
    text = runner.invoke(app, ["search", "crypt", "-L", str(notes)]).stdout
    assert "l.3" in text


# --- 5: encodings ---------------------------------------------------------------------------


def test_utf16_with_bom_markdown_is_indexed(tmp_path: Path) -> None:
    """Before: rejected as "a binary file"."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "windows.md").write_bytes("\ufeff# Basilisk Gaze\r\n\r\nThe gaze turns flesh to stone.\r\n".encode("utf-16-le"))
    (lib / "bom8.md").write_bytes("\ufeff# Owlbear\n\nA hug of claws.\n".encode())
    code, rep = _scan(lib)
    assert code == 0, rep["failed"]
    hits = Engine(lib).search("basilisk").results
    assert hits and hits[0].title == "Basilisk Gaze" and hits[0].line == 1
    assert Engine(lib).search("owlbear").results[0].title == "Owlbear"


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("caf\u00e9 cr\u00e8me br\u00fbl\u00e9e ".encode("latin-1") * 50, "not valid UTF-8"),
        ("\ufeffutf-32".encode("utf-32"), "UTF-32"),
        (b"%PDF-1.4\x00\x01binary", "binary"),
    ],
)
def test_other_encodings_are_refused_clearly(raw: bytes, why: str) -> None:
    from gmtool.errors import ExtractError

    with pytest.raises(ExtractError) as exc:
        decode_text(raw, Path("x.md"))
    assert exc.value.code == "UNSUPPORTED_FORMAT" and why in exc.value.message


def test_decode_keeps_utf8_and_utf16_be() -> None:
    assert decode_text("\ufeffé\r\nx".encode("utf-16-be"), Path("a.md")) == "é\nx"
    assert decode_text("é".encode(), Path("a.md")) == "é"


# --- 3: one entry holds a bounded amount of text ----------------------------------------------


def test_long_sections_continue_in_child_entries(tmp_path: Path) -> None:
    words = " ".join(f"w{i}" for i in range(MAX_ENTRY_CHARS // 2))  # ~2.9 limits, one line
    path = tmp_path / "long.md"
    path.write_text(f"# Long\n\n{words} needle\n", encoding="utf-8")
    doc = extract_markdown(path)
    assert [e.title for e in doc.entries] == ["Long", "Long (part 2)", "Long (part 3)", "Long (part 4)"]
    assert all(len(e.body) <= MAX_ENTRY_CHARS for e in doc.entries)
    assert [e.parent for e in doc.entries] == [None, 0, 0, 0]
    assert " ".join(e.body for e in doc.entries).split() == [*words.split(), "needle"]


def test_body_chunks_cut_at_line_ends() -> None:
    body = "\n".join("x" * 99 for _ in range(30))  # 30 lines of 100 characters with the newline
    pieces = body_chunks(body, limit=1000)
    assert all(len(p) <= 1000 for _, p in pieces)
    assert all(set(p) <= {"x", "\n"} and not p.startswith("\n") for _, p in pieces)
    assert "\n".join(p for _, p in pieces) == body


def test_text_file_without_headings_is_one_entry(tmp_path: Path) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("just some notes about goblins\nand their caves\n", encoding="utf-8")
    doc = extract_text(p)
    assert [(e.title, e.line, e.page) for e in doc.entries] == [("notes", 1, None)]
    assert doc.entries[0].body == "just some notes about goblins\nand their caves"


def test_reads_have_a_size_and_a_time_limit(tmp_path: Path) -> None:
    from gmtool.errors import ExtractError
    from gmtool.index.files import read_blocks, read_bytes

    big = tmp_path / "big.md"
    big.write_bytes(b"x" * (3 << 20))
    with pytest.raises(ExtractError) as exc:
        read_bytes(big, limit=1 << 20)
    assert exc.value.code == "FILE_TOO_LARGE"
    with pytest.raises(ExtractError) as exc:
        list(read_blocks(big, timeout_s=-1.0))  # a read past its deadline stops at the next block
    assert exc.value.code == "READ_TIMEOUT"
    assert len(read_bytes(big)) == 3 << 20
