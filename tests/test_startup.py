"""Start-up stays light: the CLI module imports none of the heavy libraries (they load lazily), and
a search reads only what it needs: the mapped keyword matrices, the doc table without the typed
fields, the copy groups as saved. The read side's shortcuts must answer exactly as the full reads do."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gmtool.engine import Engine
from gmtool.query.rows import fold_rows
from gmtool.rank.bm25 import BM25Index, load_arrays
from gmtool.rank.fuzzy import TitleMatcher

REPO = Path(__file__).resolve().parents[1]
HEAVY = ["onnxruntime", "pdfplumber", "pypdfium2", "sklearn", "scipy", "fastmcp", "numpy", "pydantic"]
# What a keyword search may import: numpy for the term matrices, nothing else from HEAVY.
SEARCH_MAY_IMPORT = ["numpy"]

PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in heavy)))
"""


def _run(body: str, tmp_path: Path) -> list[str]:
    env = {**os.environ, "GMTOOL_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_cli_pulls_in_nothing_heavy(tmp_path: Path) -> None:
    assert _run("import gmtool.cli", tmp_path) == []


def test_help_in_process_pulls_in_nothing_heavy(tmp_path: Path) -> None:
    body = (
        "import contextlib, io\n"
        "from gmtool.cli import app\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        app(['--help'], prog_name='gmtool')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
    )
    assert _run(body, tmp_path) == []


def test_python_m_gmtool_help(tmp_path: Path) -> None:
    env = {**os.environ, "GMTOOL_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "gmtool", "--help"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert "Usage:" in out.stdout and "search" in out.stdout


# typer 0.29 converts option values through pydantic (~120 ms) unless the CLI does it itself;
# every command, with its options parsed, must stay clear of it.
COMMANDS = [
    ["search", "fireball", "--limit", "5", "--type", "spell", "--json"],
    ["ask", "fire", "--limit", "3", "--min-score", "0.1", "--timeout", "1", "--json", "--ranker", "bm25"],
    ["toc", "x", "--depth", "2", "--json"],
    ["show", "x", "Fireball", "--max-chars", "100"],
    ["ls", "--json"],
    ["index", "--verify", "--max-files", "3", "--json"],
    ["search", "--limit", "0"],
]


def test_commands_parse_options_without_pydantic(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    body = (
        "import contextlib, io\n"
        "from gmtool.cli import app\n"
        f"for argv in {COMMANDS!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "        try:\n"
        f"            app([*argv, '--library', {str(lib)!r}], prog_name='gmtool')\n"
        "        except SystemExit:\n"
        "            pass\n"
    )
    assert [m for m in _run(body, tmp_path) if m.split(".")[0] not in SEARCH_MAY_IMPORT] == []


# Modules a plain `search --json` does without: the writer lock, the JSON TypedDicts (they pull in
# typing_extensions), the index-time grouping of copies and the entity folding of `ask`.
SEARCH_SKIPS = ["gmtool.storage.lock", "gmtool.present.shapes", "typing_extensions", "gmtool.rank.copies",
                "gmtool.rank.units"]


def test_search_json_imports_only_what_it_uses(sample_scanned: Path, tmp_path: Path) -> None:
    body = (
        "import contextlib, io, sys\n"
        "from gmtool.cli import app\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        app(['search', 'fireball', '--json', '--library', {str(sample_scanned)!r}], prog_name='gmtool')\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code in (0, None), exc.code\n"
        "assert json.loads(out.getvalue())['results'], out.getvalue()\n"
        f"print(json.dumps(sorted(m for m in {SEARCH_SKIPS!r} if m in sys.modules)), file=sys.stderr)\n"
    )
    env = {**os.environ, "GMTOOL_CONFIG_DIR": str(tmp_path / "config"), "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", PROBE.format(body=body, heavy=HEAVY)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert [m for m in heavy if m.split(".")[0] not in SEARCH_MAY_IMPORT] == []
    assert json.loads(out.stderr.strip().splitlines()[-1]) == []


def _keyword_files(lib: Path) -> tuple[Path, Path]:
    kdir = lib / ".gmtool" / "keyword"
    return next(kdir.glob("*.bm25")), next(kdir.glob("*.fuzzy"))


def test_mapped_matrices_equal_the_checked_read(sample_scanned: Path) -> None:
    from gmtool.rank import bm25, fuzzy

    for path, mod in zip(_keyword_files(sample_scanned), (bm25, fuzzy), strict=True):
        full, meta = load_arrays(path, mod.FORMAT, mod.FORMAT_VERSION)
        mapped, mapped_meta = load_arrays(path, mod.FORMAT, mod.FORMAT_VERSION, mapped=True)
        assert mapped_meta == meta and mapped.keys() == full.keys()
        for k, arr in full.items():
            assert mapped[k].dtype == arr.dtype and np.array_equal(mapped[k], arr), k
    bm25 = BM25Index.load(_keyword_files(sample_scanned)[0], mapped=True)
    assert bm25.scores("fire").max() > 0
    assert TitleMatcher.load(_keyword_files(sample_scanned)[1], mapped=True).scores("bulwark mage").max() > 0.9


def _copy(src: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "lib"
    shutil.copytree(src, dest)
    return dest


def _hits(eng: Engine, query: str, **kw: object) -> list[tuple[str, str, int | None, float]]:
    res = eng.search(query, **kw)  # type: ignore[arg-type]
    return [(h.source_id, h.title, h.page, h.score) for h in res.results]


def test_a_mapped_matrix_truncated_in_place_is_read_again_not_touched(sample_scanned: Path, tmp_path: Path) -> None:
    lib = _copy(sample_scanned, tmp_path)
    eng = Engine(lib)
    before = _hits(eng, "bulwark mage")
    assert before and not eng.search("bulwark mage").warnings
    bm25 = _keyword_files(lib)[0]
    with open(bm25, "r+b") as fh:  # in place: same inode, as a careless tool would
        fh.truncate(bm25.stat().st_size // 2)
    res = eng.search("bulwark mage")  # must not die of SIGBUS on the mapped pages past the end
    assert [(h.source_id, h.title, h.page, h.score) for h in res.results] == before
    assert any(w.startswith("KEYWORD_STALE") for w in res.warnings), res.warnings


@pytest.mark.parametrize("damage", ["missing", "garbage"])
def test_without_the_fields_file_filters_read_the_entries(sample_scanned: Path, tmp_path: Path, damage: str) -> None:
    expected = _hits(Engine(sample_scanned), "", types=["spell"], where=["level=3"])
    assert expected
    lib = _copy(sample_scanned, tmp_path)
    fields = next((lib / ".gmtool" / "keyword").glob("*.fields.json"))
    if damage == "missing":
        fields.unlink()
    else:
        fields.write_bytes(b"[{")
    assert _hits(Engine(lib), "", types=["spell"], where=["level=3"]) == expected
    assert _hits(Engine(lib), "bulwark mage") == _hits(Engine(sample_scanned), "bulwark mage")


def test_saved_copy_groups_fold_as_the_walk_over_every_document_does(sample_scanned: Path) -> None:
    lib = Engine(sample_scanned).library()
    docs = lib.doc_table()
    copy, name = docs["copy"], docs["name"]
    order = list(range(lib.n_docs))
    scores = [float(lib.n_docs - i) for i in order]
    for all_copies in (False, True):
        walked = fold_rows(order, scores, copy, name, 50, all_copies)
        assert fold_rows(order, scores, copy, name, 50, all_copies, lib.copy_members()) == walked


def test_snippet_term_search_on_the_start_agrees_with_the_whole_text() -> None:
    """`_first_term` tries the normalised start of a long body first; it must find exactly what
    normalising the whole body finds, whatever characters sit around the cut."""
    import random

    from gmtool.query.search import SNIPPET_SCAN_CHARS, _first_term
    from gmtool.textnorm import normalize

    rnd = random.Random(13)
    alphabet = ["a", "b", "fire", "ball", "`", "é", "\u2014", "-", "--", "\u00ad", "Σ", "ﬁ", "’", "e\u0301", "X"]
    checked = 0
    for _ in range(400):
        head = alphabet[:5] if rnd.random() < 0.5 else alphabet  # an ASCII start before non-ASCII text, or not
        words = ["".join(rnd.choice(head) for _ in range(rnd.randint(1, 4))) for _ in range(rnd.randint(20, 300))]
        words += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 4))) for _ in range(rnd.randint(0, 200))]
        text = " ".join(" ".join(words).split())
        low = normalize(text)
        pieces = low.split()
        terms = [p[: rnd.randint(3, 6)] for p in rnd.sample(pieces, min(3, len(pieces))) if len(p) > 2] or ["zzz"]
        hits = [h for h in (low.find(t) for t in terms) if h >= 0]
        assert _first_term(text, terms) == (min(hits) if hits else -1), (terms, text[:80])
        checked += len(text) > SNIPPET_SCAN_CHARS
    assert checked > 100  # most texts were long enough to try the start first
