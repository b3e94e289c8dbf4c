"""Many small files (issue 25, item 5): the manifest is written once per batch of books, not once
per book, so a scan's cost grows with the library, not with its square. Times are in
bench/many_files.py; here, the number of manifest writes (its `generation`) is what is checked."""

from __future__ import annotations

import json
from pathlib import Path

from gmtool.engine import Engine
from gmtool.storage import store


def _notes(lib: Path, n: int) -> None:
    for i in range(n):
        folder = lib / f"part-{i // 100}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:04d}.md").write_text(f"# Note {i}: the lantern\n", encoding="utf-8")


def _generation(lib: Path) -> int:
    return int(json.loads(store.manifest_path(lib / ".gmtool").read_bytes())["generation"])


def test_a_scan_of_many_files_writes_the_manifest_a_few_times(tmp_path: Path) -> None:
    """Before: one manifest write (and fsync) per book, so 300 notes made 300 writes of a growing file."""
    lib = tmp_path / "lib"
    _notes(lib, 300)
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.indexed == 300 and not rep.failed
    assert _generation(lib) <= 5
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.unchanged == 300 and _generation(lib) <= 5  # a no-change rescan writes nothing
    assert Engine(lib).verify().healthy
    for p in sorted((lib / "part-1").iterdir())[:50]:
        p.unlink()
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.removed == 50 and _generation(lib) <= 7
    assert Engine(lib).verify().healthy
    assert len(Engine(lib).sources()) == 250
