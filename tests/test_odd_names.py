"""File and folder names that are legal but odd (issue 25, items 1, 2 and 20): bytes that are not
UTF-8, names near the 255-byte limit, and paths that run around a symlink loop."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.storage import store

runner = CliRunner()


def _cli(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, list(args))
    return r.exit_code, r.stdout, r.stderr


def _md(path: Path, title: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {title}\n\n{body}\n", encoding="utf-8")


def _bytes_path(folder: Path, name: bytes) -> Path:
    return Path(os.fsdecode(os.path.join(os.fsencode(folder), name)))


@pytest.fixture
def latin1_lib(tmp_path: Path) -> Path:
    """A book and a folder named with a Latin-1 byte (as copied from an old Windows share)."""
    lib = tmp_path / "lib"
    _md(_bytes_path(lib, b"caf\xe9.md"), "Cafe Rules", "Coffee costs one zircon piece.")
    _md(_bytes_path(lib, b"r\xe8gles") / "notes.md", "Notes", "Notes on the quartzite road.")
    _md(lib / "plain.md", "Plain", "Nothing odd about basalt.")
    return lib


def test_a_name_that_is_not_utf8_is_scanned_verified_and_searched(latin1_lib: Path) -> None:
    """Before: every scan, verify and doctor ended in INTERNAL_ERROR (a surrogate reached orjson)."""
    code, out, err = _cli("scan", str(latin1_lib), "--no-embed", "--json", "--workers", "1")
    assert code == 0, err
    rep = json.loads(out)
    assert sorted(rep["indexed_files"]) == ["caf\\xe9.md", "plain.md", "r\\xe8gles/notes.md"]  # printable form
    code, out, err = _cli("index", "--verify", "-L", str(latin1_lib), "--json")
    assert code == 0 and json.loads(out)["healthy"], out + err
    for word, shown in (("zircon", "caf\\xe9.md"), ("quartzite", "r\\xe8gles/notes.md")):
        code, out, err = _cli("search", word, "-L", str(latin1_lib), "--json")
        assert code == 0, err
        assert [h["file"] for h in json.loads(out)["results"]][:1] == [shown]
    code, out, err = _cli("search", "zircon", "-L", str(latin1_lib))  # the table: printable, no crash
    assert code == 0 and "caf" in out, err
    # lossless: the manifest names the real file, so a rescan finds nothing changed or gone
    metas = {m.file: m for m in Engine(latin1_lib).sources()}
    assert os.fsencode(latin1_lib / next(f for f in metas if f.startswith("caf"))).endswith(b"caf\xe9.md")
    code, out, err = _cli("scan", str(latin1_lib), "--no-embed", "--json", "--workers", "1")
    rep = json.loads(out)
    assert (rep["unchanged"], rep["indexed"], rep["removed"]) == (3, 0, 0), rep
    code, out, err = _cli("doctor", "-L", str(latin1_lib), "--json")
    assert code == 0 and json.loads(out)["index"]["status"] == "healthy", out + err
    assert [p for p in (latin1_lib / ".gmtool").rglob("*") if store.is_temp_name(p.name)] == []


def test_a_name_of_250_bytes_is_indexed(tmp_path: Path) -> None:
    """Before: a name of 209 characters or more made the temp name too long, and the scan of
    every book failed."""
    lib = tmp_path / "lib"
    long_name = "b" * 246 + ".md"  # 249 bytes, under the 255-byte limit
    _md(lib / long_name, "Long Named", "The long name hides a jasper.")
    _md(lib / "short.md", "Short", "A short name hides an opal.")
    _md(lib / "third.md", "Third", "A third book, so that a word in one book is rare.")
    code, out, err = _cli("scan", str(lib), "--no-embed", "--json", "--workers", "1")
    assert code == 0, err
    assert sorted(json.loads(out)["indexed_files"]) == sorted([long_name, "short.md", "third.md"])
    assert Engine(lib).verify().healthy
    assert Engine(lib).search("jasper").results[0].file == long_name
    assert all(len(p.name) <= 255 for p in (lib / ".gmtool").rglob("*"))


def test_a_path_around_a_symlink_loop_names_the_book_once(tmp_path: Path) -> None:
    """Before: `index sub/loop/sub/loop/sub/book.md` (with `sub/loop -> ..`) indexed the book a second
    time under that path."""
    lib = tmp_path / "lib"
    _md(lib / "sub" / "book.md", "Looped Book", "The loop hides a garnet.")
    _md(lib / "other.md", "Other", "Another book, so that a word in one book is rare.")
    _md(lib / "third.md", "Third", "A third book.")
    (lib / "sub" / "loop").symlink_to("..", target_is_directory=True)
    code, out, _ = _cli("scan", str(lib), "--no-embed", "--json", "--workers", "1")
    assert sorted(json.loads(out)["indexed_files"]) == ["other.md", "sub/book.md", "third.md"]
    looped = lib / "sub" / "loop" / "sub" / "loop" / "sub" / "book.md"
    code, out, err = _cli("index", "-L", str(lib), str(looped), "--no-embed", "--json", "--workers", "1")
    assert code == 0, err
    assert json.loads(out)["unchanged"] == 1
    assert sorted(m.file for m in Engine(lib).sources()) == ["other.md", "sub/book.md", "third.md"]
    assert len(Engine(lib).search("garnet").results) == 1


def test_a_folder_books_chapter_named_in_latin1_is_read_with_its_book(tmp_path: Path) -> None:
    """Before: hashing the folder book's chapter list raised INTERNAL_ERROR (a surrogate in a str.encode)."""
    lib = tmp_path / "lib"
    book = lib / "coast-srd"
    _md(book / "01-basics.md", "Basics", "Roll two dice.")
    _md(_bytes_path(book, b"02-r\xe8gles.md"), "Regles", "The quartzite road has rules.")
    code, out, err = _cli("scan", str(lib), "--no-embed", "--json", "--workers", "1")
    assert code == 0, err
    assert json.loads(out)["indexed"] == 1
    code, out, err = _cli("search", "quartzite", "-L", str(lib), "--json")
    assert code == 0 and [h["file"] for h in json.loads(out)["results"]][:1] == ["coast-srd/02-r\\xe8gles.md"], out
    code, out, err = _cli("scan", str(lib), "--no-embed", "--json", "--workers", "1")
    assert (json.loads(out)["unchanged"], json.loads(out)["indexed"]) == (1, 0), out
