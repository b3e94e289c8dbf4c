"""Shared fixtures: an isolated user config per test, and the corpus scanned once per session."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


def build_once(tmp_path_factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], dict[str, Any]]) -> tuple[Path, dict[str, Any]]:
    """`build(dest)` run once per test run, even under pytest-xdist, where every worker has its own
    session: the first worker builds under a file lock, the others wait and reuse `dest` read-only.
    The build sees a private user config dir and no library or index-dir overrides.
    Returns `dest` and the JSON-able facts `build` returned (e.g. the scan report's counts)."""
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # shared by this run's workers only
    dest, done = root / name, root / f"{name}.done.json"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            if dest.is_dir():
                shutil.rmtree(dest)  # left by a build that failed in another worker
            dest.unlink(missing_ok=True)
            with pytest.MonkeyPatch.context() as mp:  # session fixtures run before the per-test isolation
                mp.setenv("GMTOOL_CONFIG_DIR", str(root / f"{name}.config"))
                for var in ("GMTOOL_LIBRARY", "GMTOOL_INDEX_DIR", "GMTOOL_DEBUG"):
                    mp.delenv(var, raising=False)
                facts = build(dest)
            done.write_text(json.dumps(facts), encoding="utf-8")
    return dest, json.loads(done.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def sample_scanned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The bundled sample library scanned once per run, keyword-only, in a folder whose name
    needs shell quoting. Read-only: copy it (or use `sample_lib`) to change it."""

    def build(root: Path) -> dict[str, Any]:
        dest = root / "my books"
        shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".gmtool"))
        scan_isolated(dest, root / "config", workers=1)
        return {}

    root, _ = build_once(tmp_path_factory, "sample-scanned", build)
    yield root / "my books"


@pytest.fixture(scope="session")
def sample_embedded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The sample library scanned once per run WITH embeddings (the default model), and the scan's
    counts. Read-only: tests that rescan or edit it take a copy (`embedded_copy`)."""

    def build(root: Path) -> dict[str, Any]:
        from gmtool.engine import Engine

        with pytest.MonkeyPatch.context() as mp:  # session fixtures run before the autouse isolation
            mp.setenv("GMTOOL_CONFIG_DIR", str(root / "config"))
            mp.delenv("GMTOOL_MODEL", raising=False)
            mp.delenv("GMTOOL_NO_REWRITE", raising=False)
            if "GMTOOL_CACHE_DIR" not in os.environ:
                mp.setenv("GMTOOL_CACHE_DIR", str(SESSION_CACHE))
            lib = root / "sample"
            shutil.copytree(SAMPLE, lib, ignore=shutil.ignore_patterns(".gmtool"))
            report = Engine(lib).scan()
        assert not report.failed and not report.warnings, report
        assert report.embeddings_generated > 0
        return {"embeddings_generated": report.embeddings_generated}

    root, facts = build_once(tmp_path_factory, "sample-embedded", build)
    return root / "sample", facts


@pytest.fixture(scope="session")
def sample_cpu_embedded(sample_embedded: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample library with vectors from the CPU's optimised graph, on any host: `sample_embedded`
    itself where its scan ran on the CPU, else (a GPU host's default scan uses the GPU and the
    shipped graph) a copy scanned once with --device cpu. Read-only."""
    from gmtool.engine import Engine
    from gmtool.index.embedding import graph_of

    if graph_of(Engine(sample_embedded[0]).library().manifest.state.vector_space) == "rewrite":
        return sample_embedded[0]

    def build(root: Path) -> dict[str, Any]:
        shutil.copytree(SAMPLE, root / "sample", ignore=shutil.ignore_patterns(".gmtool"))
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv("GMTOOL_MODEL", raising=False)
            mp.delenv("GMTOOL_NO_REWRITE", raising=False)
            report = Engine(root / "sample").scan(device="cpu")
        assert not report.failed and report.embeddings_generated > 0, report
        return {}

    return build_once(tmp_path_factory, "sample-cpu-embedded", build)[0] / "sample"


@pytest.fixture
def cpu_embedded_copy(sample_cpu_embedded: Path, tmp_path: Path) -> Path:
    """A private copy of `sample_cpu_embedded` (vectors of the CPU graph), to rescan or edit."""
    dest = tmp_path / "sample"
    shutil.copytree(sample_cpu_embedded, dest)
    return dest


@pytest.fixture
def embedded_copy(sample_embedded: tuple[Path, dict[str, Any]], tmp_path: Path) -> Path:
    """A private copy of `sample_embedded`, index and vectors included (mtimes kept), to rescan or edit."""
    dest = tmp_path / "sample"
    shutil.copytree(sample_embedded[0], dest)
    return dest


@pytest.fixture(scope="session")
def corpus_lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The corpus (4 PDFs + 4 Markdown files) scanned once per run, keyword-only.

    Tests must treat it as read-only; copy it when a test needs to change it.
    """
    if not CORPUS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")

    def build(lib: Path) -> dict[str, Any]:
        lib.mkdir(parents=True)
        for name in CORPUS_PDFS:
            shutil.copy2(CORPUS / "pdf" / name, lib / name)
        for name in CORPUS_MDS:
            shutil.copy2(CORPUS / "md" / name, lib / name)
        scan_isolated(lib, lib / ".config")
        return {}

    lib, _ = build_once(tmp_path_factory, "corpus", build)
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
def corpus_pdf_doc(corpus_lib: Path) -> Callable[[str], object]:
    """`get(name)`: a corpus PDF as the session's corpus library indexed it (extracted, classified
    and stored), read back from the index as a fresh Document. The 400-page SRD PDFs are thus read
    once per run, by the scan every corpus test shares, and the extraction tests check what the
    index really holds."""
    from gmtool.engine import Engine
    from gmtool.storage.sources import load_pages, load_source
    from gmtool.types import Document

    def get(name: str) -> object:
        eng = Engine(corpus_lib)
        meta = next((m for m in eng.sources() if m.file == name), None)
        if meta is None:
            pytest.skip(f"{name} is not in the corpus library")
        index_dir = eng.paths.index_dir
        rec = load_source(index_dir, meta.source_id, meta.sha256)
        pages = load_pages(index_dir, meta.source_id, meta.sha256)
        assert len(pages) == meta.pages, name
        return Document(format=meta.format, title=meta.title, pages=meta.pages, entries=rec.entries,
                        page_texts=pages, page_labels=rec.page_labels, has_outline=meta.has_outline,
                        pages_without_text=meta.pages_without_text)

    return get


# The files that take longest go first (with `--no-loadscope-reorder`, as `make test` runs it), so
# that under pytest-xdist the slowest file starts at once instead of ending the run alone on one
# worker: longest-processing-time-first scheduling. Measured with `pytest --durations=0`.
_LONGEST_FIRST = ["test_scenarios.py", "test_trust.py", "test_faults.py", "test_ask.py", "test_fields.py",
                  "test_classify.py", "test_mcp.py", "test_scan.py", "test_embed.py"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return _LONGEST_FIRST.index(name) if name in _LONGEST_FIRST else len(_LONGEST_FIRST)

    items.sort(key=rank)  # stable: the order within and among the other files is kept


def toc_nodes(nodes: list[dict]) -> list[dict]:
    """Every node of a `toc --json` tree, parents before their children."""
    out = []
    for n in nodes:
        out.append(n)
        out.extend(toc_nodes(n["children"]))
    return out
