"""gmtool.textnorm: normalisation of PDF oddities, tokenisation, stemming, slugs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gmtool.textnorm import STOPWORDS, content_tokens, folded_has, normalize, slugify, stem, tokenize

# SRD 5.1 stores each in-word hyphen as "-" + soft hyphen + hyphen + non-breaking hyphen.
SRD_HYPHEN = "-\u00ad\u2010\u2011"
# ...and each gap between words as tab + newline + space + no-break space.
SRD_SPACE = "\t\n \u00a0"


@pytest.mark.parametrize(
    "raw",
    [
        "half" + SRD_HYPHEN + "elf",
        "half\u2010elf",  # hyphen
        "half\u2011elf",  # non-breaking hyphen
        "half\u2012elf",  # figure dash
        "half\u2013elf",  # en dash
        "half\u2212elf",  # minus sign
        "half\ufe63elf",  # small hyphen-minus
        "half\uff0delf",  # fullwidth hyphen-minus
        "half-\u200belf",  # zero-width space after the hyphen
        "HALF-ELF",
    ],
)
def test_hyphen_variants_fold_to_one_hyphen(raw):
    assert normalize(raw) == "half-elf"
    assert tokenize(raw) == ["half", "elf"]


def test_srd_phrase_with_hyphens_and_spaces():
    raw = "a 20" + SRD_HYPHEN + "foot" + SRD_HYPHEN + "radius" + SRD_SPACE + "sphere"
    assert normalize(raw) == "a 20-foot-radius sphere"
    assert tokenize(raw) == ["a", "20", "foot", "radius", "sphere"]


def test_soft_hyphen_and_zero_width_inside_a_word_vanish():
    assert normalize("fire\u00adball") == "fireball"
    assert normalize("fire\u200bball\ufeff") == "fireball"


def test_diacritics_and_case():
    assert normalize("Ranséur") == normalize("Ranseur") == "ranseur"
    assert normalize("CAFÉ Über naïve") == "cafe uber naive"
    assert tokenize("Ranséur") == tokenize("ranseur")
    assert normalize("ﬁre") == "fire"  # ligature (NFKD)


@pytest.mark.parametrize("space", ["\t", "\n", "\r\n", "\u00a0", "\u2009", "\u202f", "\u3000", SRD_SPACE])
def test_odd_whitespace_folds_to_single_space(space):
    assert normalize(f"  Delayed{space}Blast{space}{space}Fireball ") == "delayed blast fireball"


def test_tokenize_keeps_digits_and_splits_on_punctuation():
    assert tokenize("1st-level d20, +2 Longsword (20 ft.)") == [
        "1st",
        "level",
        "d20",
        "2",
        "longsword",
        "20",
        "ft",
    ]
    assert tokenize("snake_case/slash") == ["snake", "case", "slash"]
    assert tokenize("") == []
    assert tokenize("  --  ") == []


def test_apostrophes_join_rather_than_split():
    assert tokenize("dragon's breath") == ["dragon", "breath"]
    assert tokenize("Dragon\u2019s breath") == ["dragon", "breath"]
    assert tokenize("thieves' tools") == ["thief", "tool"]


@pytest.mark.parametrize(
    "plural, singular",
    [
        ("spells", "spell"),
        ("wolves", "wolf"),
        ("elves", "elf"),
        ("dwarves", "dwarf"),
        ("abilities", "ability"),
        ("boxes", "box"),
        ("torches", "torch"),
        ("classes", "class"),
        ("greataxes", "greataxe"),
        ("curves", "curve"),
        ("dies", "die"),
        ("foes", "foe"),
        ("heroes", "hero"),
    ],
)
def test_plurals_stem_like_their_singular(plural, singular):
    assert stem(plural) == stem(singular)
    assert tokenize(plural) == tokenize(singular)


@pytest.mark.parametrize("word", ["bonus", "status", "radius", "class", "this", "gas"])
def test_words_that_end_in_s_but_are_not_plurals(word):
    assert stem(word) == word


@pytest.mark.parametrize(
    "a, b",
    [
        ("regenerates", "Regeneration"),
        ("drains", "Drain"),
        ("casting", "cast"),
        ("attacked", "attack"),
        ("running", "run"),
        ("falling", "fall"),
        ("healing", "heal"),
        ("grappled", "grappling"),
        ("charging", "charge"),
        ("poisoned", "poison"),
    ],
)
def test_inflections_meet_on_both_sides(a, b):
    """Snowball stems a document word and a query word alike, whatever their inflection."""
    assert tokenize(a) == tokenize(b)


def test_unrelated_words_stay_apart():
    for a, b in (("lightning", "light"), ("ring", "rang"), ("red", "read"), ("bleed", "blood")):
        assert tokenize(a) != tokenize(b)


def test_content_tokens_drop_stopwords_on_the_query_side():
    assert "the" in STOPWORDS and "of" in STOPWORDS
    assert content_tokens("What does the Bag of Holding do?") == ["bag", "hold"]
    assert content_tokens("the of") == ["the", "of"]  # never empty when the query is not
    assert "the" in tokenize("the bag")  # tokenize keeps stop words


def test_slugify():
    assert slugify("Bag of Holding") == "bag-of-holding"
    assert slugify("  Ranséur (Polearm) — Half" + SRD_HYPHEN + "Elf  ") == "ranseur-polearm-half-elf"
    assert slugify("Tasha's Hideous Laughter") == "tashas-hideous-laughter"
    assert slugify("--Fire__Ball!!") == "fire-ball"
    assert slugify("漢字") == ""
    assert slugify("Chapter 5: Equipment") == "chapter-5-equipment"


def test_folded_has_finds_every_character_ignorecase_matches():
    """folded_has is a pre-test before IGNORECASE searches: it must never say no where the search would match."""
    import re
    import string

    any_letter = re.compile("[a-z]", re.IGNORECASE)
    twins = [chr(c) for c in range(sys.maxunicode + 1) if any_letter.fullmatch(chr(c))]  # "K" (Kelvin), "ſ", "İ", "ı"
    for ch in twins:
        letter = next(x for x in string.ascii_lowercase if re.fullmatch(x, ch, re.IGNORECASE))
        assert folded_has(f"x{ch}x", letter), (letter, hex(ord(ch)))
    assert folded_has("ARMOR CLASS 15", "armo")
    assert folded_has("HİT POINTS", "hit") and folded_has("hıt points", "hit")
    assert not folded_has("a plain sentence", "armo", "hit")


ASCII_SAMPLES = ["Half-Elves' 1st d20", "HIT  POINTS\t12 (3d8)", "a--b---c", "snake_case_name and CamelCase", "",
                 "  spaced\x1c\x1fout  ", "Dragon's breath: 60-foot cone; DC 15!", "x" * 3 + "'" * 3 + "_"]


@pytest.mark.parametrize("text", ASCII_SAMPLES)
def test_ascii_fast_paths_give_what_normalize_then_split_gives(text):
    """tokenize and copies.words_of skip `normalize` on ASCII text: their words must not change."""
    import re

    from gmtool.rank.copies import words_of
    from gmtool.textnorm import _ASCII_SPLIT, _split

    slow = normalize(text).encode("ascii").translate(_ASCII_SPLIT, b"'").decode("ascii").split()
    assert _split(text) == slow
    assert words_of(text) == re.findall(r"\w+", normalize(text))


def test_import_is_cheap():
    code = (
        "import sys, gmtool.textnorm; print(sorted(m for m in ('numpy', 'scipy', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
