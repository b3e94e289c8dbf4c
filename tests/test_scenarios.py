"""The seed's `ask` scenarios on a real book (the SRD 5.1 PDF, with sentence embeddings), and one
row per thing on the whole corpus.

Embedding the SRD takes minutes, so the scanned library is kept under the test cache, keyed by
the PDF and the code that extracts, types and embeds it; later runs reuse it in seconds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CORPUS, CORPUS_MDS, CORPUS_PDFS, REPO, SESSION_CACHE, needs_corpus

from gmtool.engine import Engine
from gmtool.textnorm import normalize

SRD_PDF = CORPUS / "pdf" / "SRD5.1-CCBY4.0_License_live_links.pdf"


def _code_key() -> str:
    """Changes whenever the extraction, typing or embedding code (or the PDF) does."""
    h = hashlib.sha1(SRD_PDF.read_bytes())
    for path in sorted([*(REPO / "gmtool" / "index").rglob("*.py"), REPO / "gmtool" / "rank" / "units.py",
                        REPO / "gmtool" / "rank" / "embed.py", REPO / "gmtool" / "fieldspec.py"]):
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


@pytest.fixture(scope="module")
def srd(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """The SRD 5.1 PDF scanned with embeddings, cached across runs; read-only.

    It starts as a copy of the session's corpus library (index included) with every other book
    removed, so the scan drops those seven books, keeps the SRD's extraction and adds its vectors:
    the path of a GM who prunes a library and then turns embeddings on."""
    if not SRD_PDF.exists():
        pytest.skip(f"corpus not found at {CORPUS}")
    lib = SESSION_CACHE / f"srd-embedded-{_code_key()}"
    with pytest.MonkeyPatch.context() as mp:  # module fixtures run before the autouse isolation
        mp.setenv("GMTOOL_CONFIG_DIR", str(SESSION_CACHE / "srd-config"))
        mp.setenv("GMTOOL_CACHE_DIR", os.environ.get("GMTOOL_CACHE_DIR", str(SESSION_CACHE)))
        if not (lib / SRD_PDF.name).exists():
            _pruned_copy(request.getfixturevalue("corpus_lib"), lib)
            report = Engine(lib).scan()
            assert not report.failed, report.failed
            assert report.removed == len(CORPUS_PDFS) + len(CORPUS_MDS) - 1, report
            assert report.embeddings_generated > 0 and report.indexed == 0 and report.unchanged == 1, report
        report = Engine(lib).scan()
        assert not report.failed and not report.embeddings_generated, report
        yield Engine(lib)


def _pruned_copy(corpus_lib: Path, lib: Path) -> None:
    """`corpus_lib` with its index, holding the SRD 5.1 PDF alone (older cached copies deleted)."""
    for old in SESSION_CACHE.glob("srd-embedded-*"):
        shutil.rmtree(old, ignore_errors=True)
    shutil.copytree(corpus_lib, lib, ignore=shutil.ignore_patterns(".config"))
    for book in lib.iterdir():
        if book.is_file() and book.name != SRD_PDF.name:
            book.unlink()


def _titles(eng: Engine, query: str, **kw: object) -> list[str]:
    res = eng.ask(query, limit=20, device="cpu", **kw)  # type: ignore[arg-type]
    assert res.mode == "hybrid", res.warnings
    return [h.title for h in res.results]


@pytest.mark.slow
@needs_corpus
def test_divine_warrior_is_paladin_and_cleric(srd: Engine) -> None:
    titles = _titles(srd, "divine warrior", types=["class"])
    assert set(titles[:2]) == {"Paladin", "Cleric"}, titles


@pytest.mark.slow
@needs_corpus
@pytest.mark.xfail(reason="open (#12): Wight, Wraith and Specter make the top 4; Vampire is last of the 19 undead "
                          "by keyword (its SRD 5.1 text never says 'drain') and 16th in all (best window 0.39 "
                          "against Wight's 0.49, though its draining Bite is now a window of its own)", strict=False)
def test_undead_that_drain_life(srd: Engine) -> None:
    titles = _titles(srd, "undead that drain life", types=["monster"], where=["type=undead"])
    assert {"Vampire", "Wraith", "Specter"} <= set(titles[:5]), titles


@pytest.mark.slow
@needs_corpus
def test_tanky_spellcaster_is_not_the_frailest_caster(srd: Engine) -> None:
    titles = _titles(srd, "a tanky spellcaster class")

    def rank(t: str) -> int:
        return titles.index(t) if t in titles else len(titles)

    assert min(rank("Cleric"), rank("Paladin")) < min(rank("Sorcerer"), rank("Wizard")), titles


# --- one row per thing on the 8-book corpus (keyword index; `ask` falls back to keywords) ----------

QUERIES = ["fireball", "owlbear", "bag of holding", "grappled", "cure wounds", "adult red dragon", "mummy",
           "undead that drain life", "create undead", "a tanky spellcaster class", "long rest", "stunned"]


def _same_entry_rows(eng: Engine, hits: list) -> list[tuple[str, str]]:
    """Rows that show one entry twice: the same title and type from two books, with the same own
    text word for word (after normalising) and the same typed fields."""
    lib = eng.library()
    seen: dict[tuple[str, str | None, str, str], str] = {}
    twice = []
    for h in hits:
        e = lib.entry(lib.offsets[h.source_id] + h.entry_index)
        key = (normalize(h.title), h.content_type, " ".join(normalize(e.body).split()), repr(e.fields or None))
        if key in seen and seen[key] != h.source_id and key[2]:
            twice.append((h.title, h.source_id))
        seen.setdefault(key, h.source_id)
    return twice


@needs_corpus
def test_no_entry_twice_unless_all_copies(corpus_lib: Path) -> None:
    eng = Engine(corpus_lib)
    for q in QUERIES:
        for res in (eng.search(q, limit=20), eng.ask(q, limit=20, ranker="bm25")):
            assert not _same_entry_rows(eng, res.results), (q, [(h.title, h.source_id) for h in res.results])
    every = eng.search("fireball", limit=20, all_copies=True)
    assert _same_entry_rows(eng, every.results)  # the check above can fail: copies exist and show on request
