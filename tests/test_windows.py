"""What a window of text says about its entry (#20, #27): its parent heading, a lead window for a
long entry, and a smaller weight for a window that is little more than a name.

Through rank.units on hand-made entries, and through a real scan and `ask` of a small Markdown
book with the sentence model (the similarity a result shows).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gmtool.engine import Engine
from gmtool.rank.units import CHUNK_CHARS, LEAD_CHARS, SHORT_CHARS, SHORT_SHRINK, units
from gmtool.types import Entry

LONG = " ".join(["A sphere of stone rolls down the corridor when the plate is pressed."] * 14)


def _book() -> list[Entry]:
    return [
        Entry(title="Traps", level=1, page=None, body="Hazards a party meets in a dungeon.", line=1),
        Entry(title="Rolling Sphere", level=2, page=None, parent=0, body=LONG, line=3),
        Entry(title="Pit", level=2, page=None, parent=0, body="A covered hole. Falling in deals damage.", line=5),
        Entry(title="Rope", level=2, page=None, content_type="item", parent=0, body="", line=7),
    ]


def test_a_window_is_headed_by_its_parent_heading() -> None:
    idx, texts, _ = units(_book())
    assert texts[idx.index(2)].startswith("Traps > Pit. A covered hole.")
    assert texts[idx.index(0)].startswith("Traps. Hazards")  # a top heading has no parent to name
    assert texts[idx.index(3)] == "Traps > Rope (item)"


def test_a_long_entry_gets_a_short_lead_window_and_a_short_one_none() -> None:
    assert len(LONG) > CHUNK_CHARS
    idx, texts, _ = units(_book())
    sphere = [t for i, t in zip(idx, texts, strict=True) if i == 1]
    head = "Traps > Rolling Sphere. "
    leads = [t for t in sphere if len(t) <= len(head) + LEAD_CHARS]
    assert len(leads) == 1 and leads[0].startswith(head + "A sphere of stone rolls")
    assert len(sphere) == len(leads) + 2  # its 1,000 characters fill two full windows, then the lead
    assert [i for i in idx if i == 2] == [2]  # a short entry: one window, no lead


def test_a_window_with_little_text_after_its_heading_counts_less() -> None:
    idx, texts, weights = units(_book())
    w = dict(zip(texts, weights, strict=True))
    assert w["Traps > Rope (item)"] == round(1 - SHORT_SHRINK, 4)  # a name and nothing else
    assert 1 - SHORT_SHRINK < w[texts[idx.index(2)]] < 1  # 41 characters of text
    assert all(w[t] == 1.0 for i, t in zip(idx, texts, strict=True) if i == 1)


def test_the_similarity_of_a_name_only_window_is_scaled_by_its_weight(tmp_path: Path) -> None:
    """Scanned and asked with the real model: the similarity that ranks (and shows) is the
    window's cosine times its weight; a window with a full sentence keeps its cosine."""
    import numpy as np

    lib = tmp_path / "lib"
    lib.mkdir()
    lantern = ("A hooded lantern casts bright light in a 30-foot radius and burns for six hours on a pint of oil. "
               "It can be shuttered.")
    (lib / "gear.md").write_text(f"# Rope\n\nHemp.\n\n# Lantern\n\n{lantern}\n", encoding="utf-8")
    report = Engine(lib).scan()
    assert not report.failed and report.embeddings_generated > 0, report
    eng = Engine(lib)
    emb = eng.question_embedder("cpu", eng.library())  # the graph that made the vectors

    def cosine(window: str, question: str) -> float:
        return float(np.asarray(emb.embed([window]))[0] @ np.asarray(emb.embed_query(question)))

    entries = eng.library().require("gear").entries
    windows = units(entries)
    for question, title in (("rope", "Rope"), ("a lantern that burns oil", "Lantern")):
        k = windows.idx.index(next(i for i, e in enumerate(entries) if e.title == title))
        res = eng.ask(question, limit=5, min_score=0.0, device="cpu")
        assert res.mode == "hybrid", res.warnings
        hit = next(h for h in res.results if h.title == title)
        assert hit.similarity_score == pytest.approx(windows.weights[k] * cosine(windows.texts[k], question), abs=2e-3)
    # "Hemp." is 5 characters after the heading; the lantern's text is longer than SHORT_CHARS
    assert windows.weights == [round(1 - SHORT_SHRINK * (1 - 5 / SHORT_CHARS), 4), 1.0]
