"""Keyword search over TOC entries: BM25 (title boosted) plus typo-tolerant title matching.

The filters, snippets, section paths and duplicate marking here are shared with `ask`, so
both commands return the one result shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gmtool.errors import UsageError
from gmtool.query.ranking import RANKING
from gmtool.query.rows import Row, fold_rows, location_precision
from gmtool.types import CONTENT_TYPES, Hit, SearchResult

if TYPE_CHECKING:
    import numpy as np

    from gmtool.query.library import Library

MAX_QUERY_CHARS = 512
SNIPPET_CHARS = 160


@dataclass
class Filters:
    types: list[str] | None = None
    sources: list[str] | None = None
    where: list[Any] = field(default_factory=list)  # parsed gmtool.query.where conditions


def check_query(query: str, warnings: list[str]) -> str:
    q = " ".join((query or "").split())
    if not q:
        raise UsageError("INVALID_QUERY", "the query is empty", 'give some words to look for, e.g. gmtool search "fireball"')
    if len(q) > MAX_QUERY_CHARS:
        warnings.append(f"QUERY_TRUNCATED: the query was cut to {MAX_QUERY_CHARS} characters")
        q = q[:MAX_QUERY_CHARS]
    return q


def check_types(types: list[str] | None) -> list[str] | None:
    if types is None:
        return None
    out = []
    for t in types:
        for part in str(t).split(","):
            p = part.strip().lower()
            if not p:
                continue
            if p not in CONTENT_TYPES:
                raise UsageError(
                    "INVALID_TYPE", f"unknown content type '{p}'", f"valid types: {', '.join(CONTENT_TYPES)}"
                )
            out.append(p)
    return out


def resolve_sources(lib: Library, names: list[str] | None) -> list[str] | None:
    """None keeps every source. Each name must mean a book (see query.resolve): an unknown one is
    SOURCE_NOT_FOUND (exit 2) with the nearest ids, never an empty result a script would trust."""
    if names is None:
        return None
    from gmtool.query.resolve import find_sources, nearest_ids

    out: list[str] = []
    for name in names:
        match = find_sources(lib.metas, name)
        if not match:
            raise UsageError("SOURCE_NOT_FOUND", f"no source '{name}'",
                             f"did you mean: {', '.join(nearest_ids(lib.metas, name))}? (`gmtool ls` lists them)")
        out.extend(m for m in match if m not in out)
    return out


def build_mask(lib: Library, flt: Filters) -> np.ndarray | None:
    import numpy as np

    if flt.types is None and flt.sources is None and not flt.where:
        return None
    mask = np.ones(lib.n_docs, dtype=bool)
    if flt.sources is not None:
        order = sorted(lib.metas)
        keep = np.zeros(len(order), dtype=bool)
        for sid in flt.sources:
            keep[order.index(sid)] = True
        mask &= keep[lib.source_index()]
    if flt.types is not None:
        wanted = set(flt.types)
        types = lib.titles_and_types()[1]
        mask &= np.fromiter((t in wanted for t in types), dtype=bool, count=lib.n_docs)
    if flt.where:
        from gmtool.query.where import matches

        idx = np.flatnonzero(mask)
        fields = lib.doc_fields()
        for i in idx:
            if not matches(fields[i], flt.where):
                mask[i] = False
    return mask


_WORD = re.compile(r"\w+")


def snippet(body: str, terms: set[str], width: int = SNIPPET_CHARS) -> str:
    """One line of the body, starting near the first query term when there is one."""
    text = " ".join(body.split())
    if len(text) <= width:
        return text
    start = 0
    first = _first_term(text, [t for t in terms if len(t) > 2])
    if first >= 0:
        start = max(0, first - 40)
        while start > 0 and text[start - 1].isalnum():
            start -= 1
    cut = text[start : start + width]
    if start + width < len(text):
        cut = cut.rsplit(" ", 1)[0] + " …"
    return ("… " if start else "") + cut


SNIPPET_SCAN_CHARS = 4 * SNIPPET_CHARS  # the body's start, where a section's own term nearly always is


def _first_term(text: str, terms: list[str]) -> int:
    """Where the first of `terms` starts in normalize(text), or -1; `text` has single spaces.

    A long stat block costs most of a search to normalise whole, so its start is tried first:
    cut at a space, the normalised start is the start of the normalised whole (normalize folds
    characters one by one and spaces into one, and a space ends any run it folds). That holds
    when both take the same branch of normalize (ASCII or not); a term found there well before
    the cut is then the first one, as no later or straddling occurrence can start earlier."""
    if not terms:
        return -1
    from gmtool.textnorm import normalize

    cut = text.find(" ", SNIPPET_SCAN_CHARS)
    if cut > 0 and (text.isascii() or not text[:cut].isascii()):
        low = normalize(text[:cut])
        hits = [h for h in (low.find(t) for t in terms) if h >= 0]
        if hits and min(hits) + max(map(len, terms)) <= len(low):
            return min(hits)
    low = normalize(text)
    hits = [h for h in (low.find(t) for t in terms) if h >= 0]
    return min(hits) if hits else -1


def make_hits(lib: Library, rows: list[Row], terms: set[str]) -> list[Hit]:
    """Results for the chosen rows; only their own sources are read (a damaged one is skipped).
    A row's copies in other books are listed by source and page in `also_in`."""
    hits: list[Hit] = []
    pages = lib.doc_table()["pages"] if any(r.copies for r in rows) else []
    for row in rows:
        gid = row.gid
        e = lib.entry(gid)
        if e is None:
            continue
        sid = lib.source_of(gid)
        meta = lib.metas[sid]
        hits.append(
            Hit(
                rank=len(hits) + 1,
                title=e.title,
                content_type=e.content_type,
                source_id=sid,
                source_name=meta.title,
                file=e.file or meta.file,  # a folder book's chapter file
                page=e.page,
                page_label=e.page_label if e.page_label is not None else lib.page_label(sid, e.page),
                section_path=lib.section_path(gid),
                score=round(float(row.score), 4),
                snippet=snippet(e.body or ", ".join(e.tags or ()), terms),  # a gear line's tags are its text
                entry_index=gid - lib.offsets[sid],
                line=e.line,
                also_in=[{"source_id": lib.source_of(g), "page": pages[g]} for g in row.copies] or None,
                duplicate_of=lib.source_of(row.duplicate_of) if row.duplicate_of is not None else None,
                namesake_of=lib.source_of(row.namesake_of) if row.namesake_of is not None else None,
                fields=e.fields or None,
            )
        )
    return hits


def rows_for(
    lib: Library, order: list[int], scores: list[float], limit: int, all_copies: bool, allowed: np.ndarray | None = None
) -> list[Row]:
    """Fold copies (see query.rows) over the ranked documents; a folded row shows a copy that
    `allowed` (the filters' mask) keeps, a PDF one where there is one."""
    docs = lib.doc_table()
    keep = None if allowed is None else (lambda g: bool(allowed[g]))
    return fold_rows(order, scores, docs["copy"], docs["name"], limit, all_copies, lib.copy_members(),
                     _precision(lib), keep)


def _precision(lib: Library) -> list[int]:
    """Per document, how precisely its location points at it (query.rows.location_precision)."""
    cached = lib.cache.get("precision")
    if not isinstance(cached, list):
        folder = [bool(m.files) for m in lib.metas.values()]  # the order of source_index
        src = lib.source_index()
        cached = [location_precision(p, folder[int(s)]) for p, s in zip(lib.doc_table()["pages"], src, strict=True)]
        lib.cache["precision"] = cached
    return cached


def keyword_scores(
    lib: Library, query: str, extra: dict[str, float] | None = None, fuzzy_weight: float = RANKING.fuzzy_weight,
    title_sims: np.ndarray | None = None,
) -> np.ndarray:
    """BM25 over title and body, typo-corrected tokens, and fuzzy title similarity, on one scale.
    `title_sims`: the query's title similarities when the caller has them already (left unchanged)."""
    import numpy as np

    from gmtool.rank.fuzzy import correct_tokens
    from gmtool.textnorm import content_tokens, normalize, tokenize

    bm25, fuzzy = lib.keyword()
    tokens = content_tokens(query) or tokenize(query)
    weights: dict[str, float] = {}
    for t in tokens:
        weights[t] = weights.get(t, 0.0) + 1.0
    for t, w in correct_tokens(tokens, bm25.vocab, bm25.df).items():
        if t not in weights:
            weights[t] = w * RANKING.correction_share
    for t, w in (extra or {}).items():
        weights[t] = max(weights.get(t, 0.0), w)
    # In place: on a large library every fresh array of n_docs floats costs page faults.
    score = bm25.scores(weights) if weights else np.zeros(lib.n_docs, dtype=np.float64)
    top = float(score.max()) if score.size else 0.0
    if top > 0:
        np.divide(score, top, out=score)
    fz = fuzzy.scores(query) if title_sims is None else title_sims.copy()
    cand = np.flatnonzero(fz > RANKING.exact_min_similarity)
    score += np.multiply(fz, fuzzy_weight, out=fz)
    nq = normalize(query)
    titles = lib.titles_and_types()[0] if len(cand) else []
    exact: dict[str, bool] = {}  # per distinct title: the copies of an entry in many books share theirs
    named: list[int] = []
    for i in cand.tolist():  # exact (normalised) title matches first: what a GM typing a name expects
        same = exact.get(titles[i])
        if same is None:
            title = normalize(titles[i])
            same = exact[titles[i]] = title == nq or _plural_equal(title, nq)
        if same:
            named.append(i)
    score[named] += RANKING.exact_bonus
    return score


_JOINERS = re.compile(r"[\s\-]+")


def _plural_equal(a: str, b: str) -> bool:
    """Equal up to spacing, hyphens and a plural s: "owl bear" names Owlbear, "half elf" Half-Elf."""
    return _JOINERS.sub("", a).rstrip("s") == _JOINERS.sub("", b).rstrip("s")


def _with_new(warnings: list[str], lib: Library) -> list[str]:
    """Add the warnings the library raised while results were read (a damaged source)."""
    return warnings + [w for w in lib.warnings if w not in warnings]


def type_filter_warning(lib: Library, flt: Filters) -> str | None:
    """TYPE_FILTER_EMPTY when no book searched has an entry of the wanted types, so the type
    filter alone empties the result: say which books, rather than answer with silence."""
    if not flt.types or not lib.metas:
        return None
    scope = flt.sources if flt.sources is not None else sorted(lib.metas)
    wanted = set(flt.types)
    lacking = [sid for sid in scope if sid in lib.metas and not any(lib.metas[sid].type_counts.get(t) for t in wanted)]
    if not lacking or len(lacking) < len(scope):
        return None
    return (
        f"TYPE_FILTER_EMPTY: no entries of type {', '.join(sorted(wanted))} in {', '.join(lacking)}; "
        "drop the type filter (--type / content_types) to search every entry"
    )


def _fields_seen(lib: Library) -> dict[str, dict[str, set[str]]]:
    """The typed fields and values the library's entries carry, once per snapshot (see query.where)."""
    seen = lib.cache.get("fields_seen")
    if not isinstance(seen, dict):
        from gmtool.query.where import fields_seen

        seen = fields_seen(lib.titles_and_types()[1], lib.doc_fields())
        lib.cache["fields_seen"] = seen
    return seen


def prepare(
    lib: Library, query: str, flt: Filters, allow_empty: bool = False
) -> tuple[str, list[str], np.ndarray | None, bool]:
    """Shared by search and ask: the checked query, warnings, the filter mask, and whether the
    filters leave nothing to search (an empty `--source`/type list, or an empty library)."""
    warnings = list(lib.warnings)
    q = "" if allow_empty and not (query or "").strip() else check_query(query, warnings)
    flt.types = check_types(flt.types)
    flt.sources = resolve_sources(lib, flt.sources)
    if flt.where:
        from gmtool.query.where import check_filters

        warnings.extend(check_filters(flt.where, flt.types, _fields_seen(lib)))
    type_warning = type_filter_warning(lib, flt)
    if type_warning:
        warnings.append(type_warning)
    if flt.sources == [] or flt.types == [] or lib.n_docs == 0:
        return q, warnings, None, True
    return q, warnings, build_mask(lib, flt), False


def search(lib: Library, query: str, flt: Filters, limit: int = 20, all_copies: bool = False) -> SearchResult:
    import numpy as np

    from gmtool.rank.bm25 import top_k
    from gmtool.textnorm import content_tokens

    limit = max(1, limit)
    browse = not (query or "").strip() and bool(flt.types or flt.where)
    q, warnings, mask, empty = prepare(lib, query, flt, allow_empty=browse)
    if empty:
        return SearchResult(query=q, mode="keyword", results=[], warnings=warnings)
    if browse:  # filters without words: every matching entry, in book order
        allowed = np.flatnonzero(mask) if mask is not None else np.arange(lib.n_docs)
        order = [int(i) for i in allowed[: limit * RANKING.overfetch]]
        rows = rows_for(lib, order, [0.0] * len(order), limit, all_copies, mask)
        hits = make_hits(lib, rows, set())
        return SearchResult(query=q, mode="keyword", results=hits, warnings=_with_new(warnings, lib))
    sims = lib.keyword()[1].scores(q)  # title similarity, once for the scores and the near misses
    scores = keyword_scores(lib, q, title_sims=sims)
    order = [int(i) for i in top_k(scores, limit * RANKING.overfetch, mask)]
    if mask is not None:
        sims = np.where(mask, sims, 0.0)
    title_best = float(sims.max()) if sims.size else 0.0
    if title_best < TITLE_MATCH and not _title_word(lib, q, order) and _word_coverage(lib, q, mask) < WORDS_MATCH \
            and _word_coverage(lib, q, mask, corrected=False, joint=False) < WORDS_MATCH:
        return SearchResult(query=q, mode="keyword", results=[], warnings=_with_new(warnings, lib),
                            message=f"no entry matches '{q}'", suggestions=_near_titles(lib, sims))
    rows = rows_for(lib, order, [float(scores[i]) for i in order], limit, all_copies, mask)
    hits = make_hits(lib, rows, set(content_tokens(q)))
    out = SearchResult(query=q, mode="keyword", results=hits, warnings=_with_new(warnings, lib))
    if title_best < TITLE_MATCH and hits and not _named(hits, q) and \
            _word_coverage(lib, q, mask, corrected=False) >= WORDS_MATCH:
        out.message = f"no entry is titled '{q}'; these entries mention it"
    return out


# When a search has found nothing: set on the dev_search names and typed-with-a-typo names ("firbal",
# "hold persn", "bag of holdin", "gelatinous cub") against nonsense ("xyzzy plugh", "lorem ipsum", "asdf").
TITLE_MATCH = 0.55  # trigram similarity of the closest title from which a search found a name
WORDS_MATCH = 0.6  # or: the share of the query's words (typos corrected, by rarity) that one entry holds,
# or that the library holds at all as typed (two names in one query: "owl fireball")
SUGGEST_MIN = 0.3  # titles at least this similar are offered as near misses when nothing matches
SUGGESTIONS = 5


def _near_titles(lib: Library, sims: np.ndarray) -> list[str]:
    """The closest distinct titles (near misses) by title similarity to the query (`sims`, per
    document, 0 where filtered out); only a search that found nothing needs them (a full sort)."""
    import numpy as np

    titles = lib.titles_and_types()[0]
    near: list[str] = []
    for i in np.argsort(-sims)[: SUGGESTIONS * 8].tolist():
        if sims[i] < SUGGEST_MIN or len(near) >= SUGGESTIONS:
            break
        if titles[i] and titles[i] not in near:
            near.append(titles[i])
    return near


def _title_word(lib: Library, q: str, order: list[int]) -> bool:
    """A word of the query, as typed, is a word of a top-ranked title ("owl" in "fireball owl")."""
    from gmtool.textnorm import content_tokens, tokenize

    words = set(content_tokens(q) or tokenize(q))
    titles = lib.titles_and_types()[0]
    return any(words & set(tokenize(titles[i])) for i in order[:SUGGESTIONS * 4])


def _named(hits: list[Hit], q: str) -> bool:
    """Some result's title holds every word of the query ("fog" names Fog Veil)."""
    from gmtool.textnorm import content_tokens, tokenize

    words = set(content_tokens(q) or tokenize(q))
    return any(words <= set(tokenize(h.title)) for h in hits)


def _word_coverage(lib: Library, q: str, mask: np.ndarray | None, corrected: bool = True, joint: bool = True) -> float:
    """query.confidence.coverage over the query's words, each unknown word replaced by its likeliest
    spelling correction (unless not `corrected`): "firbal" is held by Fireball's entry, "xyzzy" by none."""
    from gmtool.query.confidence import coverage
    from gmtool.rank.fuzzy import correct_tokens
    from gmtool.textnorm import content_tokens, tokenize

    bm25, _ = lib.keyword()
    fixed = []
    for t in content_tokens(q) or tokenize(q):
        if corrected and t not in bm25.vocab:
            fixes = correct_tokens([t], bm25.vocab, bm25.df)
            t = max(fixes, key=lambda k: fixes[k]) if fixes else t
        fixed.append(t)
    return coverage(lib, fixed, joint, mask)
