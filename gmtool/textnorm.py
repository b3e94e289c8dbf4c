"""Text normalisation, tokenisation and slugs shared by indexing and querying.

Standard library plus PyStemmer (a small C extension): this module is imported at CLI start-up.

The same `tokenize` must run on documents and on queries, so every rule here is about
making the two sides agree, not about linguistic correctness:

* `normalize` folds case, diacritics, the PDF hyphen soup (SRD 5.1 stores "half-elf" as
  "half-\\u00ad\\u2010\\u2011elf") and odd whitespace (tab + newline + space + NBSP).
* `tokenize` splits on non-alphanumerics and applies the Snowball English stemmer, so
  "drains" meets "Drain" and "regenerates" meets "Regeneration" on both sides.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import asdict, is_dataclass

__all__ = ["STOPWORDS", "content_tokens", "folded_has", "normalize", "shown_name", "slugify", "stem", "tokenize",
           "walk_strings"]

# --- normalize -------------------------------------------------------------------------

# Invisible characters that must vanish (soft hyphen, zero-width space/joiners, word
# joiner, BOM, Mongolian vowel separator).
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"
# Every Unicode hyphen/dash/minus variant, folded to "-".
_DASHES = (
    "\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212"
    "\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d"
)
_QUOTES = "\u2018\u2019\u201b\u02bc\u2032\uff07`\u00b4"
_TRANSLATE: dict[int, str | None] = {ord(c): None for c in _INVISIBLE}
_TRANSLATE.update({ord(c): "-" for c in _DASHES})
_TRANSLATE.update({ord(c): "'" for c in _QUOTES})
_TRANSLATE.update({ord(c): '"' for c in "\u201c\u201d\u201e\u201f\u00ab\u00bb\uff02"})

# The same mapping as one regex: on long non-ASCII text (a PDF section with a few curly quotes)
# replacing the few matches is several times faster than `str.translate`, which looks up every
# character in the dict; the result is the same.
_SPECIAL = re.compile("[" + "".join(re.escape(chr(c)) for c in _TRANSLATE) + "]")


def _special(m: re.Match[str]) -> str:
    return _TRANSLATE[ord(m[0])] or ""


# Combining marks left behind by NFKD (the common blocks; Python's re has no \p{Mn}).
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]+")
_DASH_RUN = re.compile(r"-{2,}")


def normalize(s: str) -> str:
    """Lowercase, strip diacritics, fold hyphen variants and whitespace runs.

    >>> normalize("Half-\\u00ad\\u2010\\u2011Elf\\t\\n \\u00a0Ranséur")
    'half-elf ranseur'
    """
    if not s.isascii():
        s = unicodedata.normalize("NFKD", s)
        s = _COMBINING.sub("", s)
        s = _SPECIAL.sub(_special, s)
    s = s.casefold()
    if "--" in s:
        s = _DASH_RUN.sub("-", s)
    return " ".join(s.split())  # str.split() splits on every Unicode space, NBSP included


def folded_has(text: str, *words: str) -> bool:
    """Whether `text` holds one of `words` (lower-case ASCII letters and spaces) whatever its case, as
    re.IGNORECASE compares: an exact and cheap pre-test before an IGNORECASE search whose every match
    holds one of the words (folding a text costs a fraction of searching it). str.casefold folds every
    character re.IGNORECASE matches an ASCII letter with to that letter, save the Turkish dotted and
    dotless i, folded to "i" here."""
    folded = text.casefold()
    if not folded.isascii():
        folded = folded.replace("\u0131", "i").replace("\u0307", "")
    return any(w in folded for w in words)


# --- stemming --------------------------------------------------------------------------

# English plurals Snowball leaves unlike their singular (wolves -> "wolv", wolf -> "wolf"):
# general English morphology, mapped to the singular before stemming.
_IRREGULAR = {
    "wolves": "wolf",
    "werewolves": "werewolf",
    "elves": "elf",
    "dwarves": "dwarf",
    "halves": "half",
    "selves": "self",
    "shelves": "shelf",
    "thieves": "thief",
    "knives": "knife",
    "lives": "life",
    "leaves": "leaf",
    "staves": "staff",
    "hooves": "hoof",
    "scarves": "scarf",
    "wives": "wife",
    "loaves": "loaf",
    "calves": "calf",
    "mice": "mouse",
    "geese": "goose",
    "feet": "foot",
    "teeth": "tooth",
    "men": "man",
    "women": "woman",
    "children": "child",
    "dice": "die",
    "oxen": "ox",
    "lice": "louse",
    "fungi": "fungus",
    "cacti": "cactus",
    "larvae": "larva",
    "people": "person",
}


_SNOWBALL: list = []  # the PyStemmer stemmer, made on first use (start-up stays light)


def stem(w: str) -> str:
    """Snowball English stem of one normalised word ("regenerates" and "Regeneration" -> "regener");
    irregular plurals are mapped to their singular first. Tokens with digits are kept."""
    return _STEM_CACHE[w]


def _stem(w: str) -> str:
    if not w.isalpha():
        return w
    if not _SNOWBALL:
        import Stemmer  # PyStemmer: the maintained Snowball English stemmer, in C

        _SNOWBALL.append(Stemmer.Stemmer("english"))
    return str(_SNOWBALL[0].stemWord(_IRREGULAR.get(w, w)))


class _StemCache(dict):
    """word -> stem; lookups run at C speed through map(cache.__getitem__, words)."""

    def __missing__(self, w: str) -> str:
        r = _stem(w)
        if len(self) < 500_000:
            self[w] = r
        return r


_STEM_CACHE = _StemCache()

# --- tokenize --------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")
# ASCII fast path: bytes.translate maps every non-alphanumeric byte to a space (C speed).
_ASCII_SPLIT = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(256))
# The same, lower-casing the letters too: on ASCII text, all `normalize` does that changes a token.
_ASCII_LOWER_SPLIT = bytes(ord(chr(c).lower()) if chr(c).isalnum() and c < 128 else 32 for c in range(256))

STOPWORDS = frozenset(
    """a an and are as at be but by can could do does did for from had has have how i if in
    into is it its me my no not of on or our so than that the their them then there these
    they this those to up was we were what when where which while who whom why will with
    would you your im""".split()  # noqa: SIM905
)


def _split(s: str) -> list[str]:
    """normalize and split on non-alphanumerics (apostrophes are deleted: dragon's -> dragons)."""
    if s.isascii():  # normalize would lower-case it, fold dash runs and spaces: the split sees only the first
        return s.encode("ascii").translate(_ASCII_LOWER_SPLIT, b"'").decode("ascii").split()
    s = normalize(s)
    if s.isascii():
        return s.encode("ascii").translate(_ASCII_SPLIT, b"'").decode("ascii").split()
    return _WORD.findall(s.replace("'", ""))


def tokenize(s: str) -> list[str]:
    """normalize, split on non-alphanumerics, stem. "Half-Elves' 1st d20" -> half, elf, 1st, d20."""
    return list(map(_STEM_CACHE.__getitem__, _split(s)))


def content_tokens(s: str) -> list[str]:
    """Query-side tokens: `tokenize` minus STOPWORDS (falls back to all tokens if none left).
    Stop words are dropped before stemming ("does" would stem to "doe")."""
    words = _split(s)
    kept = [w for w in words if w not in STOPWORDS] or words
    return list(map(_STEM_CACHE.__getitem__, kept))


# --- slugify ---------------------------------------------------------------------------

_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(s: str) -> str:
    """Stable ascii id: "Bag of Holding (Wondrous)" -> "bag-of-holding-wondrous"."""
    s = normalize(s)
    if not s.isascii():
        s = s.encode("ascii", "ignore").decode("ascii")
    return _NON_ALNUM.sub("-", s.replace("'", "")).strip("-")


# --- file names that are not UTF-8 -----------------------------------------------------

# Python hands a file name's bytes that are not UTF-8 over as lone surrogates U+DC80..U+DCFF
# (surrogateescape), which round-trip through every os call but cannot be printed or written as
# JSON. Shown, each such byte reads as `\xNN`.
_SURROGATE_ESCAPES = {0xDC00 + b: f"\\x{b:02x}" for b in range(0x80, 0x100)}


def shown_name(s: str) -> str:
    """`s` (a file name or a text made from one) printable and JSON-safe; the identity for any
    name that is valid UTF-8, so only odd names pay for the translation."""
    if s.isascii():
        return s
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return s.translate(_SURROGATE_ESCAPES).encode("utf-8", "backslashreplace").decode("utf-8")
    return s


def walk_strings(obj: object, fn: Callable[[str], str]) -> object:
    """`obj` (JSON-shaped: dicts, lists, tuples, strings, numbers) with `fn` applied to every string,
    dict keys included."""
    if isinstance(obj, str):
        return fn(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        obj = asdict(obj)
    if isinstance(obj, dict):
        return {walk_strings(k, fn): walk_strings(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [walk_strings(v, fn) for v in obj]
    return obj
