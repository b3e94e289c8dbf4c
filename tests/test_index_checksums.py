"""Checksums of the index files (issue 25, item 8): garbage written over part of the vectors, the
keyword tables, a hits file or a token cache is reported by `index --verify` and `doctor` with a
code, ranked around by `ask` with a warning, and written again by the next `scan`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.storage import store

runner = CliRunner()


def _garble(path: Path) -> None:
    """Overwrite a stretch in the middle with other bytes: same size, so only the content tells."""
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    for i in range(mid, min(len(data), mid + 64)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def _verify_codes(lib: Path) -> dict[str, str]:
    r = runner.invoke(app, ["index", "--verify", "-L", str(lib), "--json"])
    return {Path(p["file"]).name: p["code"] for p in json.loads(r.stdout)["problems"]}


def _checksummed(lib: Path, folder: str) -> list[Path]:
    sums = store.load_manifest(lib / ".gmtool").state.checksums
    return [lib / ".gmtool" / rel for rel in sorted(sums) if rel.startswith(folder + "/")]


@pytest.mark.parametrize("folder", ["keyword", "index", "tokens"])
def test_damaged_keyword_files_are_reported_and_rewritten(sample_scanned: Path, tmp_path: Path, folder: str) -> None:
    """Before: `verify` said healthy, and the next scan kept the damage."""
    lib = tmp_path / "lib"
    shutil.copytree(sample_scanned, lib)
    files = _checksummed(lib, folder)
    assert files, folder
    # the docs table, not the matrices: a damaged matrix fails to load, and was reported already
    victim = max((p for p in files if not p.name.endswith((".bm25", ".fuzzy"))), key=lambda p: p.stat().st_size)
    good = victim.read_bytes()
    _garble(victim)
    assert _verify_codes(lib) == {victim.name: "CHECKSUM_MISMATCH"}
    assert Engine(lib).search("crab").results  # readers go around the damaged file
    rep = Engine(lib).scan(embed=False, workers=1)
    assert any(w.startswith("CHECKSUM_MISMATCH") and victim.name in w for w in rep.warnings), rep.warnings
    assert victim.read_bytes() == good  # written again, the same as before the damage
    assert Engine(lib).verify().healthy


def _model_present() -> bool:
    from gmtool.rank.model_files import resolve_model_path
    from gmtool.settings import Settings

    path = resolve_model_path(Settings.from_env())
    return path is not None and path.is_file()


@pytest.mark.skipif(not _model_present(), reason="no embedding model installed")
def test_damaged_vectors_are_reported_ranked_around_and_repaired(embedded_copy: Path) -> None:
    """Before: `index --verify` and `doctor` said healthy, `ask` ranked with garbage, and the next
    `scan` kept the damage."""
    lib = embedded_copy
    npy = max(_checksummed(lib, "vectors"), key=lambda p: p.stat().st_size)
    assert npy.suffix == ".npy"
    sid = npy.name.split(".")[0]
    _garble(npy)
    assert _verify_codes(lib) == {npy.name: "CHECKSUM_MISMATCH"}
    doctor = json.loads(runner.invoke(app, ["doctor", "-L", str(lib), "--json"]).stdout)["index"]
    assert doctor["status"] == "problems" and f"CHECKSUM_MISMATCH {npy}" in doctor["problems"]
    res = Engine(lib).ask("a tanky spellcaster class")
    assert res.results
    assert any(w.startswith("CHECKSUM_MISMATCH") and sid in w for w in res.warnings), res.warnings
    rep = Engine(lib).scan(workers=1)
    assert rep.embeddings_generated > 0
    assert Engine(lib).verify().healthy
    res = Engine(lib).ask("a tanky spellcaster class")
    assert not [w for w in res.warnings if w.startswith(("CHECKSUM", "EMBEDDINGS"))], res.warnings
