"""What a question asks for, beyond its words: content types, monster kinds, field concepts.

Everything here is general TTRPG vocabulary or read from the library itself (the monster kinds
are the `type` values its stat blocks carry), never words fitted to particular questions.
Words are matched on stems, so "rules", "casting" and "durability" need no separate entries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# The names rulebooks give their content types, and the question forms that ask for them.
TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "class": ("class",),
    "subclass": ("subclass", "archetype", "college", "circle", "oath", "domain", "tradition"),
    "race": ("race", "species", "ancestry", "lineage"),
    "spell": ("spell", "cantrip", "cast"),
    "monster": ("monster", "creature", "foe", "enemy"),
    "item": ("item", "magic item", "wondrous", "weapon", "armor", "potion", "ring", "cloak", "boots", "wand",
             "staff", "rod", "amulet", "scroll"),
    "condition": ("condition", "status"),
    "rule": ("rule", "how do", "how does", "how to", "what happens"),
    "feat": ("feat",),
    "background": ("background",),
}


# A question asks for a thing of a type when it names the type in its leading noun phrase: "spell
# that hurls a ball of fire", "a tanky spellcaster class", "creature disguised as a treasure chest".
# Named further on, the type is a participant, not the answer: "the move for attacking an enemy",
# "musician who casts spells", "slow a creature's fall", "can my character take a second class". The
# phrase runs from the start (past a determiner or "which"/"what") to the first word below, a
# determiner (a verb came before it), or an -ing/-ed word after the first (a participle: "wizard
# getting spell slots back"). Rules and conditions ("how do…", "what happens…", "the stunned
# condition") are asked for wherever the question names them. Measured on the make-eval libraries
# (bench/ask_sets.py; nothing fitted): questions whose intent contradicts their answer's type 20 -> 2
# of 133; more/ask 0.690 -> 0.696 (odd 0.577 -> 0.588), more2/ask 0.747 -> 0.772 (even 0.792 ->
# 0.842); dev_ask and md-more/ask on every library, and bench/gold/concepts.jsonl, unchanged. Not kept:
# the phrase's last word alone as its head ("enemies flee when…" -> "flee"): it changed one intent and
# no set's MRR, and lost "a dragon tough enough to…".
ANYWHERE_TYPES = frozenset({"rule", "condition"})
_PHRASE_ENDS = frozenset(
    """that which who whom whose where when while whenever if unless with without for of to in into on onto
    at from by during after before because so and or but than like as under over through against between
    across around about near is are was were be been can could will would should shall may might must do
    does did has have had me you i we they it us them he she him""".split())  # noqa: SIM905
# A verb right after the leading phrase makes it the subject of a statement ("A monster has seized my
# character", "My wizard is out of spell slots"): the question is about the situation, not a request
# for the phrase's type; after "which"/"what" it is still a request ("which spell is best…"). Written
# for one question a helper wrote from 13th Age's SRD (its answer, "Grabbed", is a rule); no question of
# the make-eval sets has this form (their MRR@10 is unchanged), nor of the other unseen books but that one.
_FINITE = frozenset("is are was were has have had can could will would should shall may might must do does did".split())  # noqa: SIM905
_DETERMINERS = frozenset("a an the my your our their his her its this these those some any each every".split())  # noqa: SIM905
_QUESTION_OPENERS = frozenset(
    "how can could do does did is are was were should will would may might why when where who whom whose if i we".split())  # noqa: SIM905


def head_phrase(query: str) -> str:
    """The question's leading noun phrase, as `_stems` gives it ("" when it opens as a question
    that is not "which…"/"what…")."""
    words = [w.strip(".,;:!?\"()[]").lower() for w in query.split()]
    out: list[str] = []
    asks = bool(words) and words[0] in ("which", "what")
    for k, w in enumerate(words):
        if not w:
            continue
        if not out:
            if k == 0 and w in _QUESTION_OPENERS:
                return ""
            if w not in _DETERMINERS and w not in ("which", "what"):
                out.append(w)
            continue
        if w in _FINITE and not asks:
            return ""  # "A monster has seized my character…": the phrase is a clause's subject, a situation
        participle = len(w) > 5 and (w.endswith("ing") or w.endswith("ed")) and not w.endswith("ling")
        if w in _PHRASE_ENDS or w in _DETERMINERS or participle:
            break
        out.append(w)
    return _stems(" ".join(out))


@dataclass(frozen=True)
class FieldPref:
    """Prefer entries whose `field` is high (sign +1) or low (sign -1) among entries that have it."""

    field: str
    sign: int = 1


@dataclass(frozen=True)
class Concept:
    """A plain-language quality a GM asks for, and the typed fields that measure it."""

    name: str
    words: tuple[str, ...]
    prefs: tuple[FieldPref, ...]


_TOUGH = (FieldPref("hit_die"), FieldPref("armor"), FieldPref("hit_points"), FieldPref("armor_class"))
CONCEPTS: tuple[Concept, ...] = (
    Concept("tough", ("tanky", "tank", "durable", "tough", "sturdy", "hardy", "resilient", "take hits",
                      "take a hit", "front line", "frontline"), _TOUGH),
    Concept("frail", ("frail", "fragile", "squishy", "glass cannon"), tuple(FieldPref(p.field, -1) for p in _TOUGH)),
    Concept("deadly", ("deadly", "dangerous", "powerful", "strongest"), (FieldPref("challenge"),)),
    Concept("weak", ("weak", "weakest", "easy", "low level"), (FieldPref("challenge", -1),)),
)
ARMOR_ORDER = ("light", "medium", "heavy")  # the heaviest armour a class wears measures how much it can take


@dataclass
class Intent:
    types: set[str] = field(default_factory=set)  # content types the question names
    kinds: set[str] = field(default_factory=set)  # monster kinds (the `type` field) it names
    concepts: list[Concept] = field(default_factory=list)  # qualities measured by typed fields
    named_types: bool = False  # the question names a type in words ("class", "spell"), not only a monster kind


def _stems(text: str) -> str:
    from gmtool.textnorm import tokenize

    return " " + " ".join(tokenize(text)) + " "


def _has(q: str, word: str) -> bool:
    return _stems(word) in q


NONE_VALUES = frozenset({"none", "no", "false", "", "-", "n/a"})  # a field value that says "has none"
_NEGATIONS = frozenset({"no", "not", "without", "non", "never", "cannot", "cant"})


def presence_fields(fields: list[dict[str, Any] | None]) -> set[str]:
    """Fields that tell "has it" from "has none" in this library: yes/no fields, and text fields
    some entries fill with a value and others with "none" (a class's spellcasting ability)."""
    from gmtool.fieldspec import FIELD_TYPES

    seen: dict[str, set[bool]] = {}
    for f in fields:
        for name, v in (f or {}).items():
            kind = FIELD_TYPES.get(name)
            if kind == "bool" and isinstance(v, bool):
                seen.setdefault(name, set()).add(v)
            elif kind == "str" and isinstance(v, str):
                seen.setdefault(name, set()).add(v.strip().lower() not in NONE_VALUES)
    return {name for name, values in seen.items() if values == {True, False}}


def named_fields(query: str) -> set[str]:
    """The yes/no and text fields whose names the question holds: only for those can presence
    (see presence_fields) matter, so a question naming none skips the pass over every document."""
    from gmtool.fieldspec import FIELD_TYPES

    q = _stems(query)
    names = {name: _stems(name.replace("_", " ")) for name, kind in FIELD_TYPES.items() if kind in ("bool", "str")}
    return {name for name, stems in names.items() if stems.strip() and stems in q}


def _field_concepts(q: str, fields: set[str]) -> list[Concept]:
    """A question that names a presence field ("spellcaster" for `spellcasting`, "ritual") prefers
    entries that have it, or, after a negation ("without concentration"), entries that don't.
    The words come from the library's own field names, not from a list."""
    out = []
    for name in sorted(fields):
        stems = _stems(name.replace("_", " "))
        at = q.find(stems)
        if not stems.strip() or at < 0:
            continue
        before = q[:at].split()[-2:]  # "not a spellcaster", "without concentration"
        sign = -1 if _NEGATIONS.intersection(before) else 1
        out.append(Concept(name, (), (FieldPref(name, sign),)))
    return out


def read_intent(query: str, kinds: set[str], fields: set[str] | None = None) -> Intent:
    """The types, kinds and concepts of a question. `kinds` are the library's monster kinds,
    `fields` its presence fields (see presence_fields).

    A kind word ("undead", "dragon") means a monster is wanted only when the question names no
    other type: "race descended from dragons" wants a race, "spell that turns undead" a spell."""
    q = _stems(query)
    head = head_phrase(query)
    out = Intent()
    out.types = {t for t, words in TYPE_WORDS.items() if any(_has(q if t in ANYWHERE_TYPES else head, w) for w in words)}
    out.named_types = bool(out.types)
    if "rule" in out.types:
        out.types.add("condition")  # "what happens when…" is answered by rules and conditions alike
    out.kinds = {k for k in kinds if _has(head, k)}
    if out.kinds and not (out.types - {"monster"}):
        out.types.add("monster")
    out.concepts = [c for c in CONCEPTS if any(_has(q, w) for w in c.words)]
    out.concepts += _field_concepts(q, fields or set())
    return out


def library_kinds(types: list[str | None], fields: list[dict[str, Any] | None], min_entries: int) -> set[str]:
    """Monster kinds that type at least `min_entries` stat blocks of this library."""
    counts: dict[str, int] = {}
    for t, f in zip(types, fields, strict=False):
        if t == "monster" and f and isinstance(f.get("type"), str):
            kind = f["type"].strip().lower()
            counts[kind] = counts.get(kind, 0) + 1
    return {k for k, n in counts.items() if n >= min_entries and k}


def _value(name: str, v: Any) -> float | None:
    if name == "armor" and isinstance(v, (list, tuple)):
        ranks = [ARMOR_ORDER.index(a) + 1 for a in v if a in ARMOR_ORDER]
        return float(max(ranks, default=0))
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        return float(v.strip().lower() not in NONE_VALUES)
    if not isinstance(v, (int, float)):
        return None
    return float(v)


def concept_scores(concepts: list[Concept], types: list[str | None], fields: list[dict[str, Any] | None]) -> list[float]:
    """Per document, 0..1: how well its typed fields fit the concepts, each field scaled min-max
    within the documents of the same content type; documents without such fields score 0."""
    n = len(fields)
    if not concepts:
        return [0.0] * n
    total = [0.0] * n
    count = [0] * n
    for concept in concepts:
        for pref in concept.prefs:
            vals: dict[int, float] = {}
            for i, f in enumerate(fields):
                if f and pref.field in f:
                    v = _value(pref.field, f[pref.field])
                    if v is not None:
                        vals[i] = v
            span: dict[str | None, tuple[float, float]] = {}
            for i, v in vals.items():
                lo, hi = span.get(types[i], (v, v))
                span[types[i]] = (min(lo, v), max(hi, v))
            for i, v in vals.items():
                lo, hi = span[types[i]]
                x = (v - lo) / (hi - lo) if hi > lo else 0.5
                total[i] += x if pref.sign > 0 else 1.0 - x
                count[i] += 1
    return [t / c if c else 0.0 for t, c in zip(total, count, strict=True)]
