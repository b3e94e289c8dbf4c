"""A book's own abbreviations, read from where it defines them, so a question's words meet its short forms.

Rulebooks define a short form once ("Control (CTRL)", "Hit Protection (HP)", "Armor Class (AC)") and
print only the short form after: "Stress that reduces a target's HP below zero decreases a target's
CTRL". A question says "Control", which neither the keyword index nor the sentence model matches to
"CTRL". So what is indexed (BM25's text and the embedded windows, never the text shown) reads each
short form with its long form after it. The pairs come from the book itself, never from a list: a
short form of two to five capitals in parentheses right after a capitalised phrase whose letters it
spells in order, starting with its first ("Integrity (INT)" in one book, "Intelligence (INT)" in
another). A short form defined two ways in one book is left alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_PAIR = re.compile(r"\b((?:[A-Z][a-z]+[ -]){0,2}[A-Z][a-z]+)\s*\(([A-Z]{2,5})\)")


def _spells(short: str, phrase: str) -> bool:
    """The short form's letters appear in the phrase in order, the first one first."""
    a, p = short.lower(), phrase.lower()
    if not p.startswith(a[0]) or p == a:
        return False
    k = 0
    for ch in p:
        if k < len(a) and ch == a[k]:
            k += 1
    return k == len(a)


def book_abbreviations(texts: Iterable[str]) -> dict[str, str]:
    """{short form: long form (lower case)} of the pairs a book's texts define, unambiguous ones only."""
    found: dict[str, set[str]] = {}
    for text in texts:
        if "(" not in text:
            continue
        for m in _PAIR.finditer(text):
            words, short = m.group(1).split(), m.group(2)
            for k in range(len(words)):  # the shortest tail of the phrase that the short form spells
                phrase = " ".join(words[k:])
                if _spells(short, phrase):
                    found.setdefault(short, set()).add(phrase.lower())
                    break
    return {s: next(iter(longs)) for s, longs in found.items() if len(longs) == 1}


class Expander:
    """Inserts each defined short form's long form after it ("CTRL" -> "CTRL (control)")."""

    def __init__(self, abbreviations: dict[str, str]) -> None:
        self.abbreviations = abbreviations
        # not where it is defined ("Control (CTRL)") or already spelled out ("CTRL (Control)")
        self._rx = (re.compile(r"(?<!\()\b(" + "|".join(sorted(map(re.escape, abbreviations), key=len, reverse=True))
                               + r")\b(?!\s*\()") if abbreviations else None)

    def __call__(self, text: str) -> str:
        if self._rx is None:
            return text
        return self._rx.sub(lambda m: f"{m.group(1)} ({self.abbreviations[m.group(1)]})", text)


def expander(texts: Iterable[str]) -> Expander:
    return Expander(book_abbreviations(texts))
