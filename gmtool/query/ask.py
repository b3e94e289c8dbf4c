"""`ask`: BM25 with pseudo-relevance feedback, fused with sentence-embedding similarity, then type-aware.

Results name entities, not their boilerplate: an untyped subsection ("Actions", "Tiefling
Traits") inside a typed entry folds into that entry, whose document then carries all of it.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gmtool.query.confidence import WordShares, best_similarity, confidence, word_shares
from gmtool.query.fusion import Priors, fuse, per_window_count
from gmtool.query.intent import Intent, concept_scores, library_kinds, named_fields, presence_fields, read_intent
from gmtool.query.ranking import RANKING
from gmtool.query.search import Filters, make_hits, prepare, rows_for
from gmtool.rank.units import units
from gmtool.storage.checksums import intact
from gmtool.storage.layout import unit_index_file, vector_files
from gmtool.storage.vectors import load_unit_index
from gmtool.types import Hit, SearchResult

if TYPE_CHECKING:
    import numpy as np

    from gmtool.query.library import Library
    from gmtool.types import Embedder

WEAK_ROWS = 3  # when nothing scores well enough, this many nearest entries are shown as weak

# --- query side ---------------------------------------------------------------------------


def prf_terms(lib: Library, scores: np.ndarray, own: set[str], mask: np.ndarray | None,
              terms: int | None = None) -> dict[str, float]:
    """Pseudo-relevance feedback: TF-IDF-weighted terms of the sections `scores` ranks first (the
    sentence model's nearest, or BM25's without vectors), at most `terms` (RANKING.prf_terms) of them."""
    import math

    from gmtool.rank.bm25 import top_k
    from gmtool.textnorm import STOPWORDS, tokenize

    stop = set(tokenize(" ".join(STOPWORDS)))
    bm25, _ = lib.keyword()
    top = top_k(scores, RANKING.prf_docs, mask)
    if len(top) == 0:
        return {}
    df = bm25.df
    n = max(bm25.n_docs, 1)
    tf: dict[str, float] = {}
    for i in top:
        e = lib.entry(int(i))  # only these sections are read (a damaged source gives none)
        if e is None:
            continue
        for t in tokenize(e.title + " " + e.body[:1500]):
            if t in own or t in stop or len(t) < 3 or t.isdigit():
                continue
            tf[t] = tf.get(t, 0.0) + 1.0
    weighted = []
    for t, f in tf.items():
        j = bm25.vocab.get(t)
        if j is None:
            continue
        d = float(df[j])
        if d < 2:
            continue
        weighted.append((math.log1p(f) * math.log(n / d), t))
    weighted.sort(reverse=True)
    best = weighted[0][0] if weighted else 1.0
    return {t: RANKING.prf_weight * w / best for w, t in weighted[:terms or RANKING.prf_terms]}


def type_intent(query: str, lib: Library | None = None) -> Intent:
    """The question's intent, with the monster kinds of `lib` (none without a library)."""
    if lib is None:
        return read_intent(query, set())
    return read_intent(query, _kinds(lib), _presence(lib) if named_fields(query) else set())


def _kinds(lib: Library) -> set[str]:
    cached = lib.cache.get("kinds")
    if not isinstance(cached, set):
        cached = library_kinds(lib.titles_and_types()[1], lib.doc_fields(), RANKING.min_kind_entries)
        lib.cache["kinds"] = cached
    return cached


def _presence(lib: Library) -> set[str]:
    cached = lib.cache.get("presence")
    if not isinstance(cached, set):
        cached = presence_fields(lib.doc_fields())
        lib.cache["presence"] = cached
    return cached


def priors(lib: Library, intent: Intent, flt_types: list[str] | None) -> Priors:
    """Per-document prior evidence for the fusion, from the doc table alone (no source is opened)."""
    import numpy as np

    types = lib.titles_and_types()[1]
    n = lib.n_docs
    type_match = np.fromiter((t in intent.types for t in types), dtype=np.float32, count=n)
    kind_match = np.zeros(n, dtype=np.float32)
    wants_monster = "monster" in intent.types or (flt_types is not None and "monster" in flt_types)
    has_kind = bool(intent.kinds) and wants_monster
    if has_kind:
        fields = lib.doc_fields()
        kind_match = np.fromiter(
            (t == "monster" and str((f or {}).get("type") or "").lower() in intent.kinds
             for t, f in zip(types, fields, strict=True)), dtype=np.float32, count=n)
    concept = np.zeros(n, dtype=np.float32)
    # A quality measures entries of a type the question asks for ("a tanky class"); in a question that
    # names no type, "tank" is as likely a vehicle (more2 h39), so the fields stay out of it.
    has_concept = bool(intent.concepts) and (intent.named_types or bool(flt_types))
    if has_concept:
        concept = np.asarray(concept_scores(intent.concepts, types, lib.doc_fields()), dtype=np.float32)
        if intent.named_types:  # "a tanky class": the quality of a class, not of a monster's hit points
            concept = concept * type_match
    return Priors(type_match=type_match, typed=_typed(lib), kind_match=kind_match, concept=concept,
                  has_type=bool(intent.types), has_kind=has_kind, has_concept=has_concept)


class _Dense:
    """The library's unit vectors as one float32 matrix plus unit -> global entry ids. Only
    vectors of the question's vector space, made from the book's current version, are used:
    vectors of another graph do not agree closely enough to rank against (a book without usable
    vectors is `missing`, and `other_space` when it has vectors of another space)."""

    def __init__(self, lib: Library, fingerprint: str) -> None:
        import numpy as np

        from gmtool.storage.vectors import VectorStore

        vs = VectorStore(lib.index_dir)
        mats = []
        gids: list[int] = []
        self.missing: list[str] = []
        self.damaged: list[str] = []  # vectors that do not match their checksums: ranked by keywords
        self.other_space: list[str] = []
        sums = lib.manifest.state.checksums
        for sid in sorted(lib.metas):
            files = vector_files(lib.index_dir, sid)
            if not all(intact(sums, lib.index_dir, p) for p in (*files, unit_index_file(lib.index_dir, sid))):
                self.damaged.append(sid)
                continue
            recorded = all(p.relative_to(lib.index_dir).as_posix() in sums for p in files)
            vec = vs.load(sid, fingerprint, source=lib.metas[sid].sha256, verified=recorded)
            if vec is None:  # no vectors: no need to work out (at length) what they would have been
                self.missing.append(sid)
                meta = vs.read_keys(sid)
                if meta is not None and meta.get("fingerprint") != fingerprint:
                    self.other_space.append(sid)
                continue
            loaded = load_unit_index(lib.index_dir, sid, len(vec))
            if loaded is None:
                rec = lib.record(sid)
                u = units(rec.entries) if rec is not None else None
                loaded = (u.idx, u.weights) if u is not None else ([], None)
            idx, weights = loaded
            if len(vec) != len(idx):
                self.missing.append(sid)
                continue
            mats.append((vec, weights))
            off = lib.offsets[sid]
            gids.extend(off + i for i in idx)
        # one float32 matrix, each book's float16 rows cast into their place (no per-book copy, no
        # vstack), then scaled by their windows' weights (rank.units.SHORT_SHRINK)
        dim = mats[0][0].shape[1] if mats else 384
        self.matrix = np.empty((sum(len(m) for m, _ in mats), dim), dtype=np.float32)
        at = 0
        for m, weights in mats:
            self.matrix[at:at + len(m)] = m
            if weights is not None:
                self.matrix[at:at + len(m)] *= np.asarray(weights, dtype=np.float32)[:, None]
            at += len(m)
        self.gids = np.asarray(gids, dtype=np.int64)
        self._windows: np.ndarray | None = None

    def windows(self, n_docs: int) -> np.ndarray:
        """Units per document (0 for one without vectors), counted once per snapshot."""
        import numpy as np

        if self._windows is None or len(self._windows) != n_docs:
            self._windows = np.bincount(self.gids, minlength=n_docs)[:n_docs]
        return self._windows


def _dense_cache(lib: Library, fingerprint: str) -> _Dense:
    """One dense matrix per snapshot, model and state of the vectors folder: the server keeps it
    warm between calls, and sees each book a running scan finishes embedding (every vectors file
    is renamed into the folder, which changes its mtime) without waiting for the scan's end."""
    from gmtool.storage.layout import vectors_dir

    try:
        stamp = vectors_dir(lib.index_dir).stat().st_mtime_ns
    except OSError:
        stamp = 0
    key = f"dense:{fingerprint}"
    cached = lib.cache.get(key)
    if isinstance(cached, tuple) and cached[0] == stamp and isinstance(cached[1], _Dense):
        return cached[1]
    dense = _Dense(lib, fingerprint)
    lib.cache[key] = (stamp, dense)
    return dense


class _QueryEmbedding:
    """The model load and the question's embedding, started before the keyword side runs so the
    two overlap (loading the model is most of a one-question `ask`); both share one deadline."""

    def __init__(self, get_embedder: Callable[[str], Embedder], query: str, device: str, timeout: float) -> None:
        import time

        def work() -> tuple[Any, Any]:
            emb = get_embedder(device)
            return emb, emb.embed_query(query)

        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        self._fut = self._pool.submit(work)

    def result(self) -> tuple[Any, Any, str | None]:
        """(embedder, vector, warning)."""
        import time

        from gmtool.errors import GmtoolError

        try:
            emb, vec = self._fut.result(timeout=max(0.0, self.deadline - time.monotonic()))
            return emb, vec, None
        except concurrent.futures.TimeoutError:
            return None, None, f"EMBED_TIMEOUT: embedding took longer than {self.timeout:g} s; showing keyword results"
        except GmtoolError as exc:
            return None, None, f"{exc.code}: {exc.message}; showing keyword results ({exc.hint})"
        finally:
            self._pool.shutdown(wait=False)


def ask(
    get_embedder: Callable[[str], Embedder],
    lib: Library,
    query: str,
    flt: Filters,
    limit: int = 10,
    min_score: float | None = None,
    device: str = "auto",
    timeout: float = 10.0,
    ranker: str = "hybrid",
    explain: bool = False,
    all_copies: bool = False,
) -> SearchResult:
    """Keyword and sentence evidence fused with the question's intent (see query.fusion);
    copies of one entry in several books fold into one row unless `all_copies`."""
    import numpy as np

    from gmtool.errors import UsageError
    from gmtool.rank.bm25 import top_k

    if ranker not in ("hybrid", "bm25"):
        raise UsageError("INVALID_RANKER", f"unknown ranker '{ranker}'", "use --ranker hybrid or --ranker bm25")
    if device not in ("auto", "cpu", "cuda"):
        raise UsageError("INVALID_DEVICE", f"unknown device '{device}'", "use --device auto, cpu or cuda")
    q, warnings, mask, empty = prepare(lib, query, flt)
    if empty:
        return SearchResult(query=q, mode="keyword", results=[], warnings=warnings)
    pending = _QueryEmbedding(get_embedder, q, device, timeout) if ranker == "hybrid" else None
    targets = _global_targets(lib)
    rollups = _global_targets(lib, "rollup")
    words = _KeywordPass(lib, q, rollups)  # while the model loads
    dense_ent, windows = _dense_side(pending, lib, warnings) if pending is not None else (None, None)
    similar = per_window_count(dense_ent, windows)
    kw_ent, own, extra, shares = words.scores(mask, similar, targets, rollups)
    is_target = np.zeros(lib.n_docs, dtype=bool)
    is_target[np.unique(targets)] = True
    allowed = is_target if mask is None else (is_target & mask)
    pri = priors(lib, type_intent(q, lib), flt.types)
    fused = fuse(kw_ent, similar, pri, allowed)
    # whether the library covers the question at all, whatever the filters keep (a type filter
    # narrows the answers, not the question)
    conf = confidence(best_similarity(dense_ent, is_target), shares.joint)
    floor = RANKING.ask_min_score if min_score is None else min_score
    ranked = [int(i) for i in top_k(fused, max(1, limit) * RANKING.overfetch, allowed) if fused[int(i)] > 1e-9]
    order = [i for i in ranked if fused[i] * conf >= floor]
    weak = not order and bool(ranked)
    if weak:  # nothing good: the nearest entries, marked weak
        order = ranked
    rows = rows_for(lib, order, [float(fused[i]) * conf for i in order], WEAK_ROWS if weak else max(1, limit),
                    all_copies, allowed)
    hits = make_hits(lib, rows, own)
    _annotate(lib, hits, own | set(extra), extra, kw_ent, dense_ent, fused, allowed, pri, explain)
    mode = "hybrid" if dense_ent is not None else "keyword"
    out = SearchResult(query=q, mode=mode, results=[] if weak else hits,
                       warnings=warnings + [w for w in lib.warnings if w not in warnings], confidence=round(conf, 4))
    if weak:
        out.weak = hits
        out.message = f"no good answer to '{q}': every result scores below --min-score {floor:g}"
    return out


class _KeywordPass:
    """The keyword side of `ask`: a first BM25 pass, then one with pseudo-relevance feedback terms.

    A question is a sentence, not a name: an entry that holds one of its words in a short title
    ("Bow" for "shooting a bow while an enemy stands next to you") outscores, by BM25 alone, the
    section holding most of them. So each entity's keyword score is scaled by its share of the
    question's words (rarity-weighted, counting the words of its folded subsections) to the power
    RANKING.coverage_power."""

    def __init__(self, lib: Library, q: str, rollups: np.ndarray) -> None:
        from gmtool.query.search import keyword_scores
        from gmtool.textnorm import content_tokens, tokenize

        self.lib, self.q = lib, q
        self.own = set(content_tokens(q) or tokenize(q))
        self.shares = word_shares(lib, sorted(self.own), targets=rollups)
        self.sims = lib.keyword()[1].scores(q)  # the title similarity both passes use
        self.first = keyword_scores(lib, q, fuzzy_weight=RANKING.ask_fuzzy_weight, title_sims=self.sims)

    def scores(self, mask: np.ndarray | None, nearest: np.ndarray | None, targets: np.ndarray,
               rollups: np.ndarray) -> tuple[np.ndarray, set[str], dict[str, float], WordShares]:
        """Entity keyword scores, the question's own tokens, the feedback terms, and each entry's share
        of the question's words. The feedback is read from the sections nearest the question in meaning
        (`nearest`, the sentence similarities) where there are vectors (FEEDBACK_NOTE in query.ranking),
        else from the first pass's best."""
        import numpy as np

        from gmtool.query.search import keyword_scores

        lib, shares = self.lib, self.shares
        if nearest is not None:
            extra = prf_terms(lib, nearest, self.own, mask, RANKING.prf_terms_nearest)
        else:
            extra = prf_terms(lib, self.first, self.own, mask)
        kw = keyword_scores(lib, self.q, extra, fuzzy_weight=RANKING.ask_fuzzy_weight, title_sims=self.sims)
        held = shares.held if shares.folded is None else shares.folded
        scaled = _fold_max(kw, targets, rollups) * np.power(np.minimum(held, 1.0), RANKING.coverage_power)
        return scaled, self.own, extra, shares


def _dense_side(pending: _QueryEmbedding, lib: Library,
                warnings: list[str]) -> tuple[np.ndarray, np.ndarray] | tuple[None, None]:
    """Per entity, the best cosine similarity of its units to the question, and its number of
    units; (None, None) (with a warning) when there is no model or no vectors."""
    import numpy as np

    emb, qvec, warn = pending.result()
    if warn:
        warnings.append(warn)
    if emb is None:
        return None, None
    for w in emb.warnings:
        if w not in warnings:
            warnings.append(w)
    dense = _dense_cache(lib, emb.fingerprint)
    waiting = _waiting(lib, dense.missing)
    if dense.other_space:
        warnings.append(
            f"VECTORS_MISMATCH: the vectors of {_names(dense.other_space)} were made by another model graph "
            f"than the question's ({emb.fingerprint.split('-', 1)[0]} on {emb.device}); run `gmtool scan` "
            "to rebuild them in one space")
    if dense.matrix.shape[0] == 0:
        warnings.append(
            f"NO_EMBEDDINGS: no book has sentence embeddings yet ({waiting}); run `gmtool scan` "
            "(without --no-embed) to add them, or wait for the running scan. Showing keyword results."
        )
        return None, None
    if dense.missing:
        warnings.append(f"EMBEDDINGS_INCOMPLETE: no vectors yet for {_names(dense.missing)} ({waiting}); "
                        "run `gmtool scan`")
    if dense.damaged:
        warnings.append(f"CHECKSUM_MISMATCH: the vectors of {', '.join(dense.damaged)} are damaged; their entries "
                        "are ranked by keywords until `gmtool scan` writes them again")
    sims = dense.matrix @ np.asarray(qvec, dtype=np.float32)
    dense_ent = np.full(lib.n_docs, -1.0, dtype=np.float32)
    np.maximum.at(dense_ent, dense.gids, sims)
    return dense_ent, dense.windows(lib.n_docs)


def _names(sids: list[str], shown: int = 5) -> str:
    return ", ".join(sids[:shown]) + (f" and {len(sids) - shown} more" if len(sids) > shown else "")


def _waiting(lib: Library, sids: list[str]) -> str:
    n = sum(lib.metas[s].entry_count for s in sids)
    return f"{n:,} sections in {len(sids)} book{'s' if len(sids) != 1 else ''} wait"


def _annotate(
    lib: Library, hits: list[Hit], terms: set[str], extra: dict[str, float], kw: np.ndarray,
    dense: np.ndarray | None, fused: np.ndarray, allowed: np.ndarray, pri: Priors, explain: bool,
) -> None:
    """Matched terms, similarity, and with `explain` the ranks that led to each hit."""
    from gmtool.textnorm import tokenize

    bm_rank = _ranks(kw, allowed) if explain else {}
    dn_rank = _ranks(dense, allowed) if explain and dense is not None else None
    for h in hits:
        gid = lib.offsets[h.source_id] + h.entry_index
        e = lib.entry(gid)
        words = set(tokenize(e.title + " " + e.body[:3000])) if e is not None else set()
        h.matched_terms = sorted(terms & words)
        if dense is not None:
            h.similarity_score = round(float(max(0.0, min(1.0, dense[gid]))), 4)
        if explain:
            h.explain = {
                "bm25_rank": bm_rank.get(gid),
                "dense_rank": dn_rank.get(gid) if dn_rank is not None else None,
                "fused": round(float(fused[gid]), 4),
                "expansion_matched": sorted(set(extra) & words),
                "type_boost": bool(pri.type_match[gid]) if pri.has_type else False,
                "kind_boost": bool(pri.kind_match[gid]) if pri.has_kind else False,
                "concept_fit": round(float(pri.concept[gid]), 3) if pri.has_concept else None,
            }


def _typed(lib: Library) -> np.ndarray:
    import numpy as np

    cached = lib.cache.get("typed")
    if cached is None:
        types = lib.titles_and_types()[1]
        cached = np.fromiter((t is not None for t in types), dtype=np.float32, count=lib.n_docs)
        lib.cache["typed"] = cached
    return cached  # type: ignore[return-value]


def _global_targets(lib: Library, column: str = "target") -> np.ndarray:
    """Per document, the global id of the entity a result names ("target") or that its evidence adds
    to ("rollup", rank.units.rollup_targets), from the doc table: no source is read."""
    import numpy as np

    cached = lib.cache.get(column)
    if cached is None:
        cached = np.asarray(lib.doc_table()[column], dtype=np.int64)
        lib.cache[column] = cached
    return cached  # type: ignore[return-value]


def _fold_max(scores: np.ndarray, targets: np.ndarray, rollups: np.ndarray) -> np.ndarray:
    """An entity's keyword score: its own, or its best folded subsection's (times RANKING.fold_share),
    or its best subsection that stands alone's (times RANKING.rollup_share) if that is higher."""
    import numpy as np

    folded = np.zeros(len(scores), dtype=np.float32)
    np.maximum.at(folded, targets, scores.astype(np.float32) * RANKING.fold_share)
    alone = rollups != targets
    if alone.any():
        np.maximum.at(folded, rollups[alone], scores[alone].astype(np.float32) * RANKING.rollup_share)
    return np.maximum(scores.astype(np.float32), folded)


def _ranks(x: np.ndarray | None, allowed: np.ndarray, k: int = 200) -> dict[int, int]:
    """1-based rank of each of the k best allowed documents under score x (for --explain)."""
    import numpy as np

    if x is None:
        return {}
    idx = np.flatnonzero(allowed)
    best = idx[np.argsort(-x[idx], kind="stable")][:k]
    return {int(g): r for r, g in enumerate(best, 1)}
