"""Results a GM can trust at a glance (#22), on a library of fifteen books: the corpus's four PDFs and
four Markdown files (the D&D SRD 5.1 three times, as two PDFs and a Markdown file, beside SRD 5.2) and
the seven PDFs of other games in pdf-more. One row per thing, never folded across games, a PDF page
before a Markdown line, and result tables that read in 80 columns."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS, build_once, scan_isolated

from gmtool.engine import Engine
from gmtool.textnorm import normalize

MORE = CORPUS / "pdf-more"
SRD51 = {"cc-srd5", "cc-srd5-md", "srd5-1-ccby4-0-license-live-links"}  # one game and edition, three files

# Written for this test: what a D&D GM asks at the table (none of them is an evaluation question).
DND_QUESTIONS = [
    "a spell that heals a wounded ally", "armor that gives the best protection", "a monster that breathes fire",
    "how does grappling work", "what does the poisoned condition do", "a class that fights with rage",
    "spell to make someone invisible", "undead creature that drains life", "how to hide from enemies",
    "a magic sword that glows", "what happens when you drop to zero hit points", "a spell that lets you fly",
    "a race with darkvision that lives underground", "how much does a longsword cost",
    "a spell that summons an animal companion", "cover and how it protects you",
    "a trap that triggers when stepped on", "a giant that throws rocks", "how does concentration on a spell work",
    "a ring that makes you invisible", "what does the frightened condition do",
    "a class that uses divine magic to heal", "how do saving throws work", "a spell that teleports you",
    "a dragon made of ice", "a potion that makes you stronger", "how does difficult terrain affect movement",
    "a spellcaster who learns spells from a book", "a creature that can change its shape",
    "a spell that counters another spell",
]


@pytest.fixture(scope="session")
def library15(corpus_lib: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's corpus library (its index reused) plus pdf-more, scanned keyword-only once."""
    if not MORE.is_dir():
        pytest.skip(f"corpus not found at {MORE}")

    def build(lib: Path) -> dict[str, Any]:
        shutil.copytree(corpus_lib, lib, ignore=shutil.ignore_patterns(".config"))
        for pdf in sorted(MORE.glob("*.pdf")):
            shutil.copy2(pdf, lib / pdf.name)
        scan_isolated(lib, lib.parent / "library15.config")
        return {}

    lib, _ = build_once(tmp_path_factory, "library15", build)
    yield lib


@pytest.fixture(scope="module")
def eng(library15: Path) -> Engine:
    return Engine(library15)


def _key(h: Any) -> tuple[str, str | None, str]:
    """One entry of a book: its title and type under its section (the SRD has two "Difficult Terrain")."""
    return normalize(h.title), h.content_type, normalize(h.section_path[-1]) if h.section_path else ""


def test_one_row_per_srd51_entry_never_a_copy_in_another_game(eng: Engine) -> None:
    repeated, crossed, markdown_first = [], [], []
    for q in DND_QUESTIONS:
        res = eng.ask(q, ranker="bm25", limit=10, min_score=0.0)
        assert len(res.results) == 10, q
        seen: set[tuple[str, str | None, str]] = set()
        for h in res.results:
            copies = {c["source_id"] for c in h.also_in or []}
            if h.source_id in SRD51:
                if _key(h) in seen:
                    repeated.append((q, h.title, h.source_id))
                seen.add(_key(h))
                crossed += [(q, h.title, c) for c in copies - SRD51]
            else:  # every other book is its own game: its entries have no copies anywhere
                crossed += [(q, h.title, c) for c in copies]
            if h.page is None and any(c["page"] is not None for c in h.also_in or []):
                markdown_first.append((q, h.title, h.source_id))
    assert not repeated, repeated
    assert not crossed, crossed
    assert not markdown_first, markdown_first


def test_srd_copies_fold_and_other_games_stay_apart(eng: Engine) -> None:
    classes = eng.search("", types=["class"], limit=200).results
    srd = [h for h in classes if h.source_id in SRD51]
    assert len(srd) == 12 and len({_key(h) for h in srd}) == 12  # the twelve classes, once each
    assert all(h.page is not None and {c["source_id"] for c in h.also_in or []} == SRD51 - {h.source_id}
               for h in srd)
    goblins = [h for h in eng.search("goblin", limit=50).results if normalize(h.title) == "goblin"]
    assert {h.source_id for h in goblins} >= {"basic-fantasy-rpg-rules-r142", "the-black-hack-english-v1-2"}
    assert all(not h.also_in or {c["source_id"] for c in h.also_in} <= SRD51 for h in goblins)


def _render(eng: Engine, width: int, what: str, *args: Any, **kw: Any) -> list[str]:
    from rich.console import Console

    from gmtool.present import table

    buf = io.StringIO()
    con = Console(file=buf, width=width, color_system=None, highlight=False)
    if what == "search":
        table.render_search(con, eng.search(*args, **kw), {})
    elif what == "ask":
        table.render_search(con, eng.ask(*args, ranker="bm25", min_score=0.0, **kw), {})
    elif what == "ls":
        table.render_sources(con, eng.sources())
    else:
        table.render_toc(con, eng.toc(*args, **kw))
    return buf.getvalue().splitlines()


@pytest.mark.parametrize("width", [80, 160])
def test_every_row_reads_in_80_and_160_columns(eng: Engine, width: int) -> None:
    fire = _render(eng, width, "search", "fireball")
    assert len(fire) <= (30 if width == 80 else 24)
    hits = eng.search("fireball").results
    for what, args, shown in (("search", ("fireball",), hits),
                              ("ask", ("a tanky spellcaster class",), eng.ask("a tanky spellcaster class",
                                                                               ranker="bm25", min_score=0.0).results)):
        lines = _render(eng, width, what, *args)
        assert all(len(line) <= width for line in lines)
        rows = [line for line in lines if line.lstrip()[:1].isdigit()]
        assert len(rows) == len(shown)  # one line a result, in rank order
        for h, line in zip(shown, rows, strict=True):
            assert line.split()[0] == str(h.rank)
            assert h.title[:10] in line and h.source_id[:10] in line
    ls = _render(eng, width, "ls")
    assert len(ls) == 1 + len(eng.sources()) and all(len(line) <= width for line in ls)
    for m, line in zip(eng.sources(), ls[1:], strict=True):
        assert line.startswith(m.source_id[:20]) and f" {m.entry_count} " in line and f"{m.typed_share:.0%}" in line
    toc = _render(eng, width, "toc", "cc-srd5", depth=2)
    assert all(len(line) <= width for line in toc)
    assert any("Fireball" in line for line in _render(eng, width, "toc", "cc-srd5", types=["spell"]))
