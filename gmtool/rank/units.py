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
# A long rules section of many run-in entries is a list of like things (a glossary of 115
# abilities): its members answer questions, the list does not. "Long" is longer than the model
# reads of one entry (MAX_CHUNKS windows); shorter lists ("Wound Level Effects", six run-ins) are
# one answer. Checked on the development sets (make eval; rescanned in place): with no length
# bar, more2/ask fell 0.696 -> 0.640 (the short lists' members outranked them); with this one,
# every set within 0.003 of before (more2 0.699: odd 0.631, even 0.767; md-more 0.483). Kept for
# what the sets do not measure: a glossary's member is found by itself, and the 42,000-character
# list no longer tops keyword results for any question its members touch.
LIST_MIN_MEMBERS = 5
LIST_MIN_CHARS = MAX_CHUNKS * CHUNK_CHARS


def list_containers(entries: list[Entry]) -> set[int]:
    """Long rules sections (or untyped ones outside any typed entry) with at least
    LIST_MIN_MEMBERS run-in entries directly under them. A typed entry's run-in parts (a spell's
    options, a monster's actions) stay part of it."""
    count: dict[int, int] = {}
    for e in entries:
        if e.parent is not None and e.origin == "runin":
            count[e.parent] = count.get(e.parent, 0) + 1
    out = set()
    for p, c in count.items():
        if c < LIST_MIN_MEMBERS or len(entries[p].body) <= LIST_MIN_CHARS:
            continue
        q: int | None = p
        while q is not None and entries[q].content_type is None:
            q = entries[q].parent
        if q is None or entries[q].content_type == "rule":
            out.add(p)
    return out


def own_bodies(entries: list[Entry]) -> list[str]:
    """Each entry's own text: a list's lead, without its members' text (theirs, and it would
    make the list hold every word its members do); any other entry's whole body."""
    out = [e.body for e in entries]
    firsts: dict[int, int] = {}
    for i, e in enumerate(entries):
        if e.parent is not None and e.origin == "runin" and e.parent not in firsts:
            firsts[e.parent] = i
    for p in list_containers(entries):
        head = entries[firsts[p]].body[:60]
        cut = out[p].find(head) if head else -1
        if cut >= 0:
            out[p] = out[p][:cut].rstrip()
    return out


def fold_targets(entries: list[Entry]) -> list[int]:
    """For each entry, the entry a result should name: itself, or its nearest typed ancestor
    when it is an untyped subsection of a typed entry (a stat block's "Actions"). A member of a
    long list under a rules section stands alone (see LIST_MIN_CHARS)."""
    lists = list_containers(entries)
    out: list[int] = []
    for i, e in enumerate(entries):
        target = i
        if e.content_type is None and not (e.origin == "runin" and e.parent in lists):
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
    own = own_bodies(entries)
    for i, e in enumerate(entries):
        if targets[i] != i:
            continue
        body = " ".join([_clean_for_embedding(own[i]), *extra.get(i, [])]).strip()
        if not body and not e.content_type and len(e.title) < 3:
            continue
        head = e.title if not e.content_type else f"{e.title} ({e.content_type})"
        for chunk in _chunks(body):
            idx.append(i)
            texts.append(f"{head}. {chunk}" if chunk else head)
    return idx, texts
