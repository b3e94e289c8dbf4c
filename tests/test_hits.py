"""The per-source hits file: the same entries as the full index file, read one at a time by
searches; when it is missing, damaged or stale, the full index file answers instead."""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pytest

from gmtool.engine import Engine
from gmtool.query.library import Library
from gmtool.storage import layout, store
from gmtool.storage.hits import HITS_MIN_ENTRIES

QUERIES = ["fireball", "crab", "lantern", "spell"]


def _same_as_record(idx: Path) -> int:
    """Every source's hits file holds exactly the entries, parents and page labels of its record."""
    manifest = store.load_manifest(idx)
    assert manifest.sources
    checked = 0
    for sid, meta in manifest.sources.items():
        rec = store.load_source(idx, sid, meta.sha256)
        hits = store.load_hits(idx, sid, meta.sha256, meta.entry_count)
        if meta.entry_count < HITS_MIN_ENTRIES:  # small enough to be read whole: no hits file
            assert hits is None, sid
            continue
        assert hits is not None, sid
        assert [hits.entry(i) for i in range(hits.count)] == rec.entries
        assert hits.parents == [e.parent for e in rec.entries]
        assert hits.page_labels == rec.page_labels
        checked += len(rec.entries)
    return checked


def _results(lib: Path) -> list[dict]:
    eng = Engine(lib)
    return [asdict(eng.search(q, limit=20)) for q in QUERIES] + [asdict(eng.search("", types=["spell"]))]


@pytest.fixture
def scanned(sample_scanned: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "lib"
    shutil.copytree(sample_scanned, dest)  # copy2 keeps the mtimes the hits files record
    return dest


def test_hits_file_holds_the_records_entries(sample_scanned: Path) -> None:
    assert _same_as_record(sample_scanned / ".gmtool") > 0


def test_hits_file_matches_the_corpus_records(corpus_lib: Path) -> None:
    assert _same_as_record(corpus_lib / ".gmtool") > 1000


def test_search_reads_only_hits_files(scanned: Path) -> None:
    lib = Library(scanned / ".gmtool")
    from gmtool.query.search import Filters, search

    res = search(lib, "tidewarden", Filters(), limit=1)  # in the one sample book large enough for a hits file
    assert res.results
    assert lib._loaded == {}  # no full index file was parsed


def test_missing_hits_file_falls_back_and_scan_restores_it(scanned: Path) -> None:
    idx = scanned / ".gmtool"
    want = _results(scanned)
    removed = list((idx / layout.SOURCES_DIR).glob("*.hits.jsonl"))
    assert removed
    for path in removed:
        path.unlink()
    assert _results(scanned) == want
    lib = Library(idx)
    from gmtool.query.search import Filters, search

    assert search(lib, "crab", Filters()).results and lib._loaded  # read from the full record
    rep = Engine(scanned).scan(embed=False)
    assert rep.indexed == 0  # nothing re-extracted: the hits files are written from the records
    assert all(p.exists() for p in removed)
    assert _results(scanned) == want


@pytest.mark.parametrize("damage", ["truncate", "garbage", "stale"])
def test_damaged_or_stale_hits_file_is_ignored(scanned: Path, damage: str) -> None:
    idx = scanned / ".gmtool"
    want = _results(scanned)
    for path in (idx / layout.SOURCES_DIR).glob("*.hits.jsonl"):
        data = path.read_bytes()
        if damage == "truncate":
            path.write_bytes(data[: len(data) // 2])
        elif damage == "garbage":
            nl = data.index(b"\n")
            path.write_bytes(data[: nl + 1] + b"x" * (len(data) - nl - 1))  # header intact, entries not
        else:  # the full index file changed after the hits file was written
            sid = path.name.split(".")[0]
            full = layout.source_file(idx, sid)
            st = full.stat()
            os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert _results(scanned) == want


def test_corrupt_full_index_file_is_still_noticed(scanned: Path) -> None:
    idx = scanned / ".gmtool"
    sid = Engine(scanned).search("crab").results[0].source_id
    layout.source_file(idx, sid).write_bytes(b"{not json")
    res = Engine(scanned).search("crab")
    assert any(w.startswith("INDEX_CORRUPT") for w in res.warnings), res.warnings


def test_hits_files_are_ours_and_removed_with_their_source(scanned: Path) -> None:
    idx = scanned / ".gmtool"
    sources = store.load_manifest(idx).sources
    sid = max(sources, key=lambda s: sources[s].entry_count)  # one with a hits file (HITS_MIN_ENTRIES)
    path = layout.hits_file(idx, sid)
    assert path in layout.owned_files(idx)
    store.remove_source(idx, sid)
    assert not path.exists()


def test_hits_file_truncated_in_place_while_mapped_falls_back(scanned: Path) -> None:
    """A reader that mapped the file never reads past a shortened end (that would be SIGBUS)."""
    idx = scanned / ".gmtool"
    lib = Library(idx)
    sid = max(lib.metas, key=lambda s: lib.metas[s].entry_count)  # one with a hits file (HITS_MIN_ENTRIES)
    first, last = lib.offsets[sid], lib.offsets[sid] + lib.metas[sid].entry_count - 1
    assert lib.entry(first) is not None and not lib._loaded  # read through the mapping
    with open(layout.hits_file(idx, sid), "r+b") as f:
        f.truncate(64)
    rec = store.load_source(idx, sid, lib.metas[sid].sha256)
    assert lib.entry(last) == rec.entries[-1]
    assert sid in lib._loaded  # the full record answered
