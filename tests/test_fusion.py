"""Ranking logic without a library or a model: fusion, intent, field concepts and copy folding.

A fake embedder (a bag of hashed words, satisfying gmtool.types.Embedder) stands in for the
model, so every test here runs in milliseconds.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import ClassVar

import numpy as np
import pytest

from gmtool.query.fusion import Priors, dense_scale, fuse, per_window_count
from gmtool.query.intent import CONCEPTS, concept_scores, library_kinds, read_intent
from gmtool.query.ranking import RANKING
from gmtool.query.rows import fold_rows
from gmtool.textnorm import tokenize
from gmtool.types import Embedder

DIM = 64


class FakeEmbedder:
    """Hashed bag of stems, L2-normalised: texts sharing words are similar, others are not."""

    fingerprint = "fake-bow-64"
    dim = DIM
    device = "cpu"
    warnings: ClassVar[list[str]] = []

    def embed(self, texts, batch_size=32, progress=None):
        return np.stack([self.embed_query(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        v = np.zeros(DIM, dtype=np.float32)
        for tok in tokenize(text):
            v[zlib.crc32(tok.encode()) % DIM] += 1.0
        n = float(np.linalg.norm(v))
        return v / n if n else v


DOCS = [  # title, type, body
    ("Fireball", "spell", "a bright streak blossoms into an explosion of flame"),
    ("Paladin", "class", "a holy warrior bound to a sacred oath"),
    ("Cleric", "class", "a priestly champion who wields divine magic"),
    ("Wizard", "class", "a scholarly magic user of arcane spells"),
    ("Vampire", "monster", "undead that drinks blood and drains life"),
    ("Zombie", "monster", "undead corpse that shambles"),
    ("Combat", None, "how a fight is run, round by round"),
]


def _priors(query: str, kinds: set[str] | None = None, concept: np.ndarray | None = None) -> Priors:
    intent = read_intent(query, kinds or set())
    types = [d[1] for d in DOCS]
    n = len(DOCS)
    kind = np.array([t == "monster" for t in types], dtype=np.float32) if intent.kinds else np.zeros(n, np.float32)
    return Priors(
        type_match=np.array([t in intent.types for t in types], dtype=np.float32),
        typed=np.array([t is not None for t in types], dtype=np.float32),
        kind_match=kind,
        concept=concept if concept is not None else np.zeros(n, np.float32),
        has_type=bool(intent.types), has_kind=bool(intent.kinds), has_concept=concept is not None,
    )


def _dense(emb: Embedder, query: str) -> np.ndarray:
    docs = np.asarray(emb.embed([f"{t}. {b}" for t, _, b in DOCS]))
    return docs @ np.asarray(emb.embed_query(query))


ALL = np.ones(len(DOCS), dtype=bool)


def test_fused_scores_are_bounded_and_zero_where_not_allowed() -> None:
    emb = FakeEmbedder()
    kw = np.array([3.0, 0, 0, 1.0, 0, 0, 0.5])
    allowed = ALL.copy()
    allowed[0] = False
    out = fuse(kw, _dense(emb, "arcane spells"), _priors("arcane spells"), allowed)
    assert out.shape == (len(DOCS),) and out.dtype == np.float32
    assert out[0] == 0.0 and out.min() >= 0.0 and out.max() <= 1.0
    assert int(np.argmax(out)) == 3  # Wizard: the keyword and the sentence evidence agree


def test_dense_evidence_carries_a_paraphrase_that_keywords_miss() -> None:
    emb = FakeEmbedder()
    kw = np.zeros(len(DOCS))  # no keyword hit at all
    out = fuse(kw, _dense(emb, "undead that drains life"), _priors("undead that drains life"), ALL)
    assert int(np.argmax(out)) == 4  # Vampire
    keyword_only = fuse(kw, None, _priors("undead that drains life"), ALL)
    assert keyword_only[4] <= keyword_only.max()


def test_type_intent_lifts_entries_of_that_type() -> None:
    kw = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    out = fuse(kw, None, _priors("which class is holy"), ALL)
    assert set(np.argsort(-out)[:3]) == {1, 2, 3}


def test_weights_come_from_the_configuration() -> None:
    kw = np.array([0.5, 0, 0, 0, 0, 0, 1.0])  # the untyped section has the better keyword score
    pri = _priors("fireball")
    base = fuse(kw, None, pri, ALL)
    assert base[6] > base[0]
    heavier = fuse(kw, None, pri, ALL, dataclasses.replace(RANKING, w_typed=5.0))
    assert heavier[0] > heavier[6]  # with a heavier typed prior the spell overtakes it


def test_dense_scale_floors_at_the_median() -> None:
    d = np.array([0.9, 0.5, 0.4, 0.3, 0.1], dtype=np.float32)
    s = dense_scale(d, np.ones(5, dtype=bool))
    assert s[0] == pytest.approx(1.0) and s[2] == 0.0 and s[4] == 0.0


def test_kind_word_means_a_monster_unless_another_type_is_named() -> None:
    kinds = {"undead", "dragon", "beast"}
    assert read_intent("undead that drain life", kinds).types == {"monster"}
    assert read_intent("undead that drain life", kinds).kinds == {"undead"}
    race = read_intent("race descended from dragons", kinds)
    assert "race" in race.types and "monster" not in race.types
    assert "spell" in read_intent("spell that turns undead", kinds).types
    assert read_intent("a fiery explosion", kinds).kinds == set()


def test_a_type_named_past_the_leading_phrase_is_a_participant_not_the_answer() -> None:
    kinds = {"undead", "giant"}
    for question, types in (
        ("spell that hurls a ball of fire", {"spell"}),
        ("a tanky spellcaster class", {"class"}),
        ("which spell lets me fly", {"spell"}),
        ("creature disguised as a treasure chest", {"monster"}),
        ("a flying creature that breathes fire", {"monster"}),
        ("the move for attacking an enemy in melee", set()),
        ("musician who casts spells", set()),
        ("slow a creature's fall", set()),
        ("killing a helpless enemy who is already down", set()),
        ("wizard getting spell slots back during a short rest", set()),
        ("can my character pick up abilities from a second class", set()),
        ("belt that grants giant strength", set()),
        ("what happens to a creature that has been turned to stone", {"rule", "condition"}),
        ("what does the stunned condition do", {"condition"}),
        ("A monster has seized my character in its claws. Can I walk away?", set()),  # a situation
        ("which spell is best against a horde", {"spell"}),
    ):
        assert read_intent(question, kinds).types == types, question


def test_library_kinds_come_from_the_stat_blocks() -> None:
    types = ["monster", "monster", "monster", "spell"]
    fields = [{"type": "undead"}, {"type": "Undead"}, {"type": "ooze"}, {"type": "undead"}]
    assert library_kinds(types, fields, min_entries=2) == {"undead"}


def test_toughness_prefers_hit_die_and_heavy_armour() -> None:
    intent = read_intent("a tanky spellcaster class", set())
    assert [c.name for c in intent.concepts] == ["tough"]
    types = ["class"] * 4 + ["monster", "spell"]
    fields = [
        {"hit_die": 6, "armor": []},  # wizard-like
        {"hit_die": 8, "armor": ["light", "medium", "shields"]},  # cleric-like
        {"hit_die": 10, "armor": ["light", "medium", "heavy", "shields"]},  # paladin-like
        None,
        {"hit_points": 40, "armor_class": 12},
        {"level": 3},
    ]
    s = concept_scores(intent.concepts, types, fields)
    assert s[2] > s[1] > s[0] and s[3] == 0.0 and s[5] == 0.0
    frail = concept_scores([c for c in CONCEPTS if c.name == "frail"], types, fields)
    assert frail[0] > frail[2]
    for phrase in ("durable", "can take hits", "sturdy fighter"):
        assert read_intent(phrase, set()).concepts, phrase


def test_fold_rows_keeps_the_best_copy_and_lists_the_others() -> None:
    copy = [0, 0, 0, -1, 1, 1]
    name = [5, 5, 5, 5, -1, -1]  # doc 3 shares the title but not the text: a namesake
    rows = fold_rows([1, 3, 0, 4, 5, 2], [9, 8, 7, 6, 5, 4], copy, name, limit=10)
    assert [r.gid for r in rows] == [1, 3, 4]
    assert rows[0].copies == [0, 2] and rows[1].namesake_of == 1 and rows[2].copies == [5]
    every = fold_rows([1, 3, 0, 4, 5, 2], [9, 8, 7, 6, 5, 4], copy, name, limit=10, all_copies=True)
    assert [r.gid for r in every] == [1, 3, 0, 4, 5, 2]
    assert every[2].duplicate_of == 1 and every[4].duplicate_of == 4
    assert len(fold_rows([1, 3, 0, 4], [4, 3, 2, 1], copy, name, limit=2)) == 2


def test_a_folded_row_shows_the_copy_with_the_most_precise_location() -> None:
    from gmtool.query.rows import location_precision

    # one entry in a one-file Markdown book (best ranked), a PDF, and a folder book's chapter file
    precision = [location_precision(None, False), location_precision(12, False), location_precision(None, True)]
    copy, name = [0, 0, 0], [-1, -1, -1]
    rows = fold_rows([0, 1, 2], [3, 2, 1], copy, name, limit=10, precision=precision)
    assert rows[0].gid == 2 and rows[0].copies == [0, 1]  # the chapter file at its line
    rows = fold_rows([0, 1], [3, 2], [0, 0], [-1, -1], limit=10, precision=precision[:2])
    assert rows[0].gid == 1  # a PDF page before a line of a one-file book
    kept = fold_rows([0, 1, 2], [3, 2, 1], copy, name, limit=10, precision=precision, allowed=lambda g: g != 2)
    assert kept[0].gid == 1  # the filters keep the shown copy


def test_a_question_naming_a_presence_field_prefers_entries_that_have_it() -> None:
    from gmtool.query.intent import presence_fields

    types = ["class", "class", "class", "spell"]
    fields = [
        {"hit_die": 6, "armor": [], "spellcasting": "intelligence"},  # wizard-like
        {"hit_die": 10, "armor": ["light", "medium", "heavy"], "spellcasting": "charisma"},  # paladin-like
        {"hit_die": 10, "armor": ["light", "medium", "heavy"], "spellcasting": "none"},  # fighter-like
        {"level": 1, "school": "evocation", "ritual": False},
    ]
    present = presence_fields(fields)
    assert present == {"spellcasting"}  # every spell has a school; no entry is a ritual here
    intent = read_intent("a tanky spellcaster class", set(), present)
    assert [c.name for c in intent.concepts] == ["tough", "spellcasting"]
    s = concept_scores(intent.concepts, types, fields)
    assert s[1] > s[2] and s[1] > s[0] and s[3] == 0.0
    negated = read_intent("a sturdy class that is not a spellcaster", set(), present)
    n = concept_scores(negated.concepts, types, fields)
    assert n[2] > n[1] > n[0]
    assert read_intent("a fire spell", set(), present).concepts == []


def test_a_quality_counts_only_where_the_question_names_a_type() -> None:
    tank = read_intent("a human fighting something much bigger like a dragon or a tank", {"dragon"})
    assert tank.concepts and not tank.types and not tank.named_types
    dragon = read_intent("a dragon tough enough to tank a siege", {"dragon"})
    assert dragon.concepts and dragon.types == {"monster"} and not dragon.named_types  # a kind asks for no fields
    assert read_intent("a tanky spellcaster class", set()).named_types


def test_a_rules_section_and_the_same_untyped_section_in_another_shape_are_copies() -> None:
    from gmtool.rank.copies import copy_groups

    text = "Drow Poison (Injury). This poison is typically made only by the drow, far from sunlight."
    titles = ["Drow Poison", "Drow Poison", "Drow Poison"]
    copy, _ = copy_groups(titles, ["rule", None, "item"], ["one-file", "folder", "other"], [text] * 3,
                          systems=["srd 5.1"] * 3)
    assert copy[0] == copy[1] >= 0  # one book's map says "rule", the other shape leaves it untyped
    assert copy[2] == -1  # a typed item of that name is another thing


def test_copies_share_the_name_after_a_kind_label() -> None:
    """A folder SRD heads "Barbarian Subclass: Path of the Berserker", a PDF prints "Path of the Berserker": one
    entry. Another edition's text under either title is a namesake, and a long heading with a colon keeps it."""
    from gmtool.rank.copies import copy_groups, copy_title

    text = "Path of the Berserker. For some barbarians, rage is a means to an end, and that end is violence."
    other = "Path of the Berserker. Channel your rage into violent fury, and attack with abandon each turn."
    copy, name = copy_groups(["Barbarian Subclass: Path of the Berserker", "Path of the Berserker",
                              "Barbarian Subclass: Path of the Berserker"], ["subclass"] * 3, ["folder", "pdf", "new"],
                             [text, text, other], systems=["srd 5.1", "srd 5.1", "srd 5.2"])
    assert copy[0] == copy[1] >= 0 and copy[2] == -1 and name[2] >= 0
    assert copy_title("Level 3: Frenzy") == "Frenzy"
    assert copy_title("The Long Road Home in Winter: A Tale") == "The Long Road Home in Winter: A Tale"


def test_a_short_row_word_for_word_the_same_in_one_system_is_one_entry() -> None:
    """Too short to compare, but the same words under one title and type in one system: a copy (the gear row
    in both SRD 5.1 PDFs). In another system, or with other words, it stays apart; an empty text proves nothing."""
    from gmtool.rank.copies import copy_groups

    copy, _ = copy_groups(["Grappling hook"] * 4, ["item"] * 4, ["a", "b", "c", "d"],
                          ["2 gp 4 lb.", "2 gp 4 lb.", "2 gp 4 lb.", "5 gp 4 lb."],
                          systems=["srd 5.1", "srd 5.1", "srd 5.2", "srd 5.1"])
    assert copy[0] == copy[1] >= 0 and copy[2] == -1 and copy[3] == -1
    empty, _ = copy_groups(["Notes"] * 2, [None] * 2, ["a", "b"], ["", ""], systems=["x", "x"])
    assert empty == [-1, -1]


def test_a_long_entry_does_not_win_by_having_more_windows() -> None:
    """Two entries whose best window is as close to the question: the one with one window ranks
    first; an entry with a clearly closer window still wins however many it has (#27)."""
    dense = np.array([0.60, 0.60, 0.70], dtype=np.float32)
    windows = np.array([12, 1, 12])
    ranked = per_window_count(dense, windows)
    assert ranked is not None
    assert ranked[1] > ranked[0] and ranked[2] > ranked[1]
    assert per_window_count(dense, None) is dense and per_window_count(None, windows) is None
    off = per_window_count(dense, windows, dataclasses.replace(RANKING, window_penalty=0.0))
    assert off is dense
