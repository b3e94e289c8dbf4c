"""What gets embedded for a source: result-worthy entries, their folded subsections, and the
windows their text is cut into. Index time embeds these; query time maps vectors back through them."""

from __future__ import annotations

from gmtool.types import Entry

CHUNK_CHARS = 700  # about 150 tokens: well inside the model's 256-token window
# An entity scores its best window. Fitted on dev_ask (evaluation library, embedded once, later
# windows masked): MRR@10 0.858 with 4 windows, 0.858 with 3, 0.855 with 2; held-out more/ask
# 0.609 / 0.609 / 0.609 and more2/ask 0.583 / 0.590 / 0.577. A 4th window costs 4 % of the tokens.
MAX_CHUNKS = 3
NUMERIC_LINE_SHARE = 0.3


def fold_targets(entries: list[Entry]) -> list[int]:
    """For each entry, the entry a result should name: itself, or its nearest typed ancestor
    when it is an untyped subsection of a typed entry (a stat block's "Actions")."""
    out: list[int] = []
    for i, e in enumerate(entries):
        target = i
        if e.content_type is None:
            p = e.parent
            while p is not None:
                if entries[p].content_type is not None:
                    target = out[p]
                    break
                p = entries[p].parent
        out.append(target)
    return out


def _clean_for_embedding(text: str) -> str:
    """Drop number-heavy lines (stat-block rows, tables): they drown a small model's signal."""
    out = []
    for line in text.splitlines():
        toks = line.split()
        if not toks:
            continue
        numeric = sum(1 for t in toks if any(c.isdigit() for c in t))
        if numeric / len(toks) > NUMERIC_LINE_SHARE:
            continue
        out.append(line)
    return " ".join(" ".join(out).split())


def _chunks(body: str) -> list[str]:
    """Windows of about CHUNK_CHARS, cut at word boundaries, at most MAX_CHUNKS of them."""
    if not body:
        return [""]
    out: list[str] = []
    start = 0
    while start < len(body) and len(out) < MAX_CHUNKS:
        end = min(len(body), start + CHUNK_CHARS)
        if end < len(body):
            space = body.rfind(" ", start + CHUNK_CHARS // 2, end)
            end = space if space > start else end
        out.append(body[start:end].strip())
        start = end + 1
    return out


def units(entries: list[Entry]) -> tuple[list[int], list[str]]:
    """What gets embedded: for each result-worthy entry (folded subsections are not), its text
    (title, type, body and folded subsections, number-heavy lines dropped) in a few windows.
    Returns parallel lists (entry index per window, window text); an entry scores its best window."""
    targets = fold_targets(entries)
    extra: dict[int, list[str]] = {}
    for i, t in enumerate(targets):
        if t != i:
            extra.setdefault(t, []).append(f"{entries[i].title}: {_clean_for_embedding(entries[i].body)}")
    idx: list[int] = []
    texts: list[str] = []
    for i, e in enumerate(entries):
        if targets[i] != i:
            continue
        body = " ".join([_clean_for_embedding(e.body), *extra.get(i, [])]).strip()
        if not body and not e.content_type and len(e.title) < 3:
            continue
        head = e.title if not e.content_type else f"{e.title} ({e.content_type})"
        for chunk in _chunks(body):
            idx.append(i)
            texts.append(f"{head}. {chunk}" if chunk else head)
    return idx, texts
