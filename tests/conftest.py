"""Shared fixtures: an isolated user config per test, and the corpus scanned once per session."""

from __future__ import annotations

import copy
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
SAMPLE = REPO / "gmtool" / "sample"
CORPUS_PDFS = ["cc-srd5.pdf", "SRD5.1-CCBY4.0_License_live_links.pdf", "Songs-of-Maya_rules.pdf",
               "lasers_and_feelings_rpg.pdf"]
CORPUS_MDS = ["cc-srd5.md", "DND-SRD-5.2-CC.md", "Fate-Condensed-SRD-CC-BY.md", "Basic-Fantasy-RPG-Rules-r142.md"]

needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not found at {CORPUS} (CI puts ../shared beside the checkout)")


@pytest.fixture(autouse=True)
def _isolate_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read or write the real user's config, cache or default library."""
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("GMTOOL_CONFIG_DIR", str(base / "config"))
    monkeypatch.delenv("GMTOOL_LIBRARY", raising=False)
    monkeypatch.delenv("GMTOOL_INDEX_DIR", raising=False)
    monkeypatch.delenv("GMTOOL_DEBUG", raising=False)
    if "GMTOOL_CACHE_DIR" not in os.environ:
        monkeypatch.setenv("GMTOOL_CACHE_DIR", str(SESSION_CACHE))


SESSION_CACHE = Path(os.environ.get("GMTOOL_TEST_CACHE", "/tmp/gmtool-test-cache"))


@pytest.fixture(scope="session", autouse=True)
def _session_cache() -> Iterator[None]:
    """An Engine reads its settings when it is made, and module-scoped ones are made before the
    per-test isolation above: they too must never write the real user's cache."""
    with pytest.MonkeyPatch.context() as mp:
        if "GMTOOL_CACHE_DIR" not in os.environ:
            mp.setenv("GMTOOL_CACHE_DIR", str(SESSION_CACHE))
        yield


@pytest.fixture
def sample_lib(tmp_path: Path) -> Path:
    """A private copy of the bundled sample library (tests may modify it)."""
    dest = tmp_path / "sample"
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".gmtool"))
    return dest


@pytest.fixture(scope="session")
def sample_scanned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bundled sample library scanned once per session, keyword-only, in a folder whose name
    needs shell quoting. Read-only: copy it (or use `sample_lib`) to change it."""
    dest = tmp_path_factory.mktemp("sample") / "my books"
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".gmtool"))
    scan_isolated(dest, dest.parent / "config", workers=1)
    yield dest


@pytest.fixture(scope="session")
def corpus_lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The corpus (4 PDFs + 4 Markdown files) scanned once, keyword-only, for the whole session.

    Tests must treat it as read-only; copy it when a test needs to change it.
    """
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    lib = tmp_path_factory.mktemp("corpus")
    for name in CORPUS_PDFS:
        shutil.copy2(CORPUS / "pdf" / name, lib / name)
    for name in CORPUS_MDS:
        shutil.copy2(CORPUS / "md" / name, lib / name)
    scan_isolated(lib, lib / ".config")
    yield lib


def scan_isolated(lib: Path, config: Path, workers: int | None = None) -> None:
    """A keyword-only scan for module- or session-scoped fixtures, which cannot use monkeypatch:
    the user config dir points at `config` for the scan only."""
    from gmtool.engine import Engine

    old = os.environ.get("GMTOOL_CONFIG_DIR")
    os.environ["GMTOOL_CONFIG_DIR"] = str(config)
    try:
        report = Engine(lib).scan(embed=False, workers=workers)
    finally:
        if old is None:
            os.environ.pop("GMTOOL_CONFIG_DIR", None)
        else:
            os.environ["GMTOOL_CONFIG_DIR"] = old
    assert not report.failed, report.failed


@pytest.fixture(scope="session")
def corpus_pdf_doc() -> Callable[[str], object]:
    """`get(name)`: a corpus PDF extracted once per session (the 818-page SRD takes seconds), as a
    private deep copy, so the extraction and classification tests share one read of each book."""
    from gmtool.index.extract.pdf import extract_pdf

    cache: dict[str, object] = {}

    def get(name: str) -> object:
        path = CORPUS / "pdf" / name
        if not path.exists():
            pytest.skip(f"corpus not found at {CORPUS}")
        if name not in cache:
            cache[name] = extract_pdf(path, workers=2)
        return copy.deepcopy(cache[name])

    return get
