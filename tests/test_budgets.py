"""Budgets for hostile sizes (issue 25, items 3, 4 and 11, and the minor ones): a book past a cap
is indexed up to it with a warning code, or the bad part skipped with a code; never all the
memory, never a hang. The inputs are small here and the caps lowered to fit them; the full-size
inputs and their peak memory are in bench/memory.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.index.extract import markdown, sections

runner = CliRunner()


def _scan(lib: Path) -> dict:
    r = runner.invoke(app, ["scan", str(lib), "--no-embed", "--json", "--workers", "1"])
    assert r.stdout, r.stderr
    return json.loads(r.stdout)


# --- 3: heading-dense Markdown ----------------------------------------------------------------


def test_a_heading_dense_markdown_file_is_indexed_up_to_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: every `# H` line became an entry (a million of them took 5.3 GB and a 509 MB index)."""
    monkeypatch.setattr(sections, "MAX_ENTRIES", 100)
    monkeypatch.setattr(markdown, "MAX_ENTRIES", 100)
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "dense.md").write_text("".join(f"# H{i}\n" for i in range(1000)), encoding="utf-8")
    (lib / "plain.md").write_text("# Plain\n\nA plain book about a beryl.\n", encoding="utf-8")
    rep = _scan(lib)
    assert rep["indexed"] == 2 and not rep["failed"]
    capped = [w for w in rep["warnings"] if w.startswith("ENTRIES_CAPPED")]
    assert len(capped) == 1 and "dense.md" in capped[0] and "1,000 headings" in capped[0], rep["warnings"]
    counts = {m.file: m.entry_count for m in Engine(lib).sources()}
    assert counts["dense.md"] == 100
    toc = Engine(lib).toc("dense")
    assert len(toc.entries) == 100 and toc.entries[-1]["title"] == "H99"
    assert Engine(lib).verify().healthy


def test_any_book_past_the_cap_is_cut_keeping_its_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    from gmtool.types import Entry

    monkeypatch.setattr(sections, "MAX_ENTRIES", 3)
    entries = [Entry(title=f"E{i}", level=1 + (i % 2), page=1, parent=(i - 1 if i % 2 else None)) for i in range(6)]
    warnings: list[str] = []
    kept = sections.cap_entries(entries, warnings)
    assert [e.title for e in kept] == ["E0", "E1", "E2"]
    assert all(e.parent is None or e.parent < len(kept) for e in kept)
    assert warnings == ["ENTRIES_CAPPED: 6 entries, more than one book may hold; the first 3 are indexed"]
