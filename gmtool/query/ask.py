"""`ask`: keyword expansion + BM25, fused with sentence-embedding similarity, then type-aware.

Results name entities, not their boilerplate: an untyped subsection ("Actions", "Tiefling
Traits") inside a typed entry folds into that entry, whose document then carries all of it.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.query.search import Filters, make_hits, prepare
from gmtool.rank.units import fold_targets, units
from gmtool.storage.vectors import load_unit_index
from gmtool.types import SearchResult

if TYPE_CHECKING:
    import numpy as np

    from gmtool.query.library import Library
    from gmtool.storage.vectors import VectorStore
    from gmtool.types import Embedder

# Fusion weights, tuned on the dev set as a whole (a flat optimum: 0.3-0.35 / 0.3-0.4 / 0-0.2).
W_BM25 = 0.3
W_DENSE = 0.7
W_TYPE = 0.3
W_TYPED = 0.1  # a mild prior for entities (a spell, a monster) over plain sections
W_EXPANSION = 0.35
W_PRF = 0.25
ASK_FUZZY = 0.2  # typo-tolerant title matching suits names more than sentences
PRF_DOCS = 5
PRF_TERMS = 6

TYPE_WORDS: dict[str, tuple[str, ...]] = {
    "class": ("class", "classes"),
    "subclass": ("subclass", "archetype", "path", "college", "circle", "oath", "domain", "tradition"),
    "race": ("race", "races", "folk", "people", "species", "ancestry", "lineage"),
    "spell": ("spell", "spells", "cantrip", "magic", "cast", "casts"),
    "monster": ("monster", "monsters", "creature", "creatures", "beast", "foe", "enemy"),
    "item": ("item", "items", "magic item", "wondrous", "weapon", "armor", "potion", "ring", "goggles", "belt",
             "rope", "hammer", "cloak", "boots", "wand", "staff", "amulet", "sword"),
    "condition": ("condition", "conditions", "status"),
    "rule": ("rule", "rules", "how do", "how does", "what happens", "work", "works"),
    "feat": ("feat", "feats"),
    "background": ("background", "backgrounds"),
}


# --- query side ---------------------------------------------------------------------------


@lru_cache(maxsize=1)
def thesaurus() -> dict[str, list[str]]:
    import orjson

    path = Path(__file__).resolve().parents[1] / "data" / "thesaurus.json"
    data = orjson.loads(path.read_bytes())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def expand(query: str) -> dict[str, float]:
    """Curated expansion: phrases and words of the query -> rulebook vocabulary, at lower weight."""
    from gmtool.textnorm import normalize, tokenize

    q = " " + normalize(query) + " "
    own = set(tokenize(query))
    out: dict[str, float] = {}
    for key, terms in thesaurus().items():
        if f" {normalize(key)} " in q or (" " not in key and key in own) or (
            " " not in key and tokenize(key) and tokenize(key)[0] in own
        ):
            for term in terms:
                for tok in tokenize(term):
                    if tok not in own:
                        out[tok] = max(out.get(tok, 0.0), W_EXPANSION)
    return out


def prf_terms(lib: Library, scores: np.ndarray, own: set[str], mask: np.ndarray | None) -> dict[str, float]:
    """Pseudo-relevance feedback: TF-IDF-weighted terms of the top BM25 sections."""
    import math

    from gmtool.rank.bm25 import top_k
    from gmtool.textnorm import STOPWORDS, tokenize

    bm25, _ = lib.keyword()
    top = top_k(scores, PRF_DOCS, mask)
    if len(top) == 0:
        return {}
    df = bm25.df
    n = max(bm25.n_docs, 1)
    tf: dict[str, float] = {}
    for i in top:
        e = lib.entries[int(i)]
        for t in tokenize(e.title + " " + e.body[:1500]):
            if t in own or t in STOPWORDS or len(t) < 3 or t.isdigit():
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
    return {t: W_PRF * w / best for w, t in weighted[:PRF_TERMS]}


def type_intent(query: str) -> set[str]:
    from gmtool.textnorm import normalize

    q = " " + normalize(query) + " "
    found = {t for t, words in TYPE_WORDS.items() if any(f" {w} " in q for w in words)}
    if "rule" in found:
        found.add("condition")  # "what happens when…" is answered by rules and conditions alike
    return found


class _Dense:
    """The library's unit vectors as one float32 matrix plus unit -> global entry ids."""

    def __init__(self, lib: Library, fingerprint: str) -> None:
        import numpy as np

        from gmtool.storage.vectors import VectorStore

        vs = VectorStore(lib.index_dir)
        mats = []
        gids: list[int] = []
        self.missing: list[str] = []
        for sid in sorted(lib.metas):
            vec = vs.load(sid, fingerprint)
            if vec is None:
                vec = self._compatible(vs, sid, fingerprint)
            idx = load_unit_index(lib.index_dir, sid, len(vec)) if vec is not None else None
            if idx is None:
                rec = lib.record(sid)
                idx = units(rec.entries)[0] if rec is not None else []
            if vec is None or len(vec) != len(idx):
                self.missing.append(sid)
                continue
            mats.append(np.asarray(vec, dtype=np.float32))
            off = lib.offsets[sid]
            gids.extend(off + i for i in idx)
        self.matrix = np.vstack(mats) if mats else np.zeros((0, 384), dtype=np.float32)
        self.gids = np.asarray(gids, dtype=np.int64)

    @staticmethod
    def _compatible(vs: VectorStore, sid: str, fingerprint: str) -> np.ndarray | None:
        """Vectors from the same weights run another way (the CPU-optimised graph vs the plain one on
        CUDA agree to about 0.99 cosine) still serve, rather than dropping to keyword mode."""
        meta = vs.read_keys(sid)
        stored = str(meta.get("fingerprint")) if meta else ""
        if stored and stored.split("-", 1)[0].split("+")[0] == fingerprint.split("-", 1)[0].split("+")[0]:
            return vs.load(sid, stored)
        return None


def _dense_cache(lib: Library, fingerprint: str) -> _Dense:
    """One dense matrix per snapshot and model: the server keeps it warm between calls."""
    key = f"dense:{fingerprint}"
    dense = lib.cache.get(key)
    if not isinstance(dense, _Dense):
        dense = _Dense(lib, fingerprint)
        lib.cache[key] = dense
    return dense


def _embed_query(
    get_embedder: Callable[[str], Embedder], query: str, device: str, timeout: float
) -> tuple[Any, Any, str | None]:
    """(embedder, vector, warning): the model load and the query embedding share one deadline."""
    from gmtool.errors import GmtoolError

    def work() -> tuple[Any, Any]:
        emb = get_embedder(device)
        return emb, emb.embed_query(query)

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    fut = pool.submit(work)
    try:
        emb, vec = fut.result(timeout=timeout)
        return emb, vec, None
    except concurrent.futures.TimeoutError:
        return None, None, f"EMBED_TIMEOUT: embedding took longer than {timeout:g} s; showing keyword results"
    except GmtoolError as exc:
        return None, None, f"{exc.code}: {exc.message}; showing keyword results ({exc.hint})"
    finally:
        pool.shutdown(wait=False)


def _norm01(x: np.ndarray) -> np.ndarray:
    import numpy as np

    top = float(x.max()) if x.size else 0.0
    return x / top if top > 0 else np.zeros_like(x)


def ask(
    get_embedder: Callable[[str], Embedder],
    lib: Library,
    query: str,
    flt: Filters,
    limit: int = 10,
    min_score: float = 0.0,
    device: str = "auto",
    timeout: float = 10.0,
    ranker: str = "hybrid",
    explain: bool = False,
) -> SearchResult:
    import numpy as np

    from gmtool.errors import UsageError
    from gmtool.query.search import keyword_scores
    from gmtool.rank.bm25 import top_k
    from gmtool.textnorm import content_tokens, tokenize

    if ranker not in ("hybrid", "bm25"):
        raise UsageError("INVALID_RANKER", f"unknown ranker '{ranker}'", "use --ranker hybrid or --ranker bm25")
    if device not in ("auto", "cpu", "cuda"):
        raise UsageError("INVALID_DEVICE", f"unknown device '{device}'", "use --device auto, cpu or cuda")
    q, warnings, mask, empty = prepare(lib, query, flt)
    if empty:
        return SearchResult(query=q, mode="keyword", results=[], warnings=warnings)
    own = set(content_tokens(q) or tokenize(q))
    expansion = expand(q)
    first = keyword_scores(lib, q, expansion, fuzzy_weight=ASK_FUZZY)
    prf = prf_terms(lib, first, own, mask)
    extra = dict(expansion)
    for t, w in prf.items():
        extra[t] = max(extra.get(t, 0.0), w)
    kw = keyword_scores(lib, q, extra, fuzzy_weight=ASK_FUZZY)

    targets = _global_targets(lib)
    kw_ent = _fold_max(kw, targets, lib.n_docs)

    mode = "keyword"
    dense_ent = None
    if ranker == "hybrid":
        emb, qvec, warn = _embed_query(get_embedder, q, device, timeout)
        if warn:
            warnings.append(warn)
        if emb is not None:
            for w in emb.warnings:
                if w not in warnings:
                    warnings.append(w)
            dense = _dense_cache(lib, emb.fingerprint)
            if dense.matrix.shape[0] == 0:
                warnings.append(
                    "NO_EMBEDDINGS: this library has no sentence embeddings yet; run `gmtool scan` "
                    "(without --no-embed) to add them. Showing keyword results."
                )
            else:
                if dense.missing:
                    warnings.append(f"EMBEDDINGS_INCOMPLETE: no vectors for {', '.join(dense.missing)}; run `gmtool scan`")
                sims = dense.matrix @ np.asarray(qvec, dtype=np.float32)
                dense_ent = np.full(lib.n_docs, -1.0, dtype=np.float32)
                np.maximum.at(dense_ent, dense.gids, sims)
                mode = "hybrid"

    intents = type_intent(q)
    type_boost = np.zeros(lib.n_docs, dtype=np.float32)
    if intents:
        types = lib.titles_and_types()[1]
        type_boost = np.fromiter((t in intents for t in types), dtype=np.float32, count=lib.n_docs)
    is_target = np.zeros(lib.n_docs, dtype=bool)
    is_target[np.unique(targets)] = True
    allowed = is_target if mask is None else (is_target & mask)

    kw_n = _norm01(np.where(allowed, kw_ent, 0.0))
    typed = _typed(lib)
    prior = W_TYPE * type_boost + W_TYPED * typed
    norm_prior = (W_TYPE if intents else 0.0) + W_TYPED
    if dense_ent is not None:
        d = np.where(allowed, dense_ent, -1.0)
        top = float(d.max())
        floor = float(np.percentile(d[allowed], 50)) if allowed.any() else 0.0
        dn = np.clip((d - floor) / max(top - floor, 1e-6), 0.0, 1.0)
        fused = W_BM25 * kw_n + W_DENSE * dn + prior
        norm = W_BM25 + W_DENSE + norm_prior
    else:
        fused = kw_n + prior
        norm = 1.0 + norm_prior
    fused = np.where(allowed, fused / norm, 0.0)
    order = [int(i) for i in top_k(fused, limit, allowed) if fused[int(i)] >= max(min_score, 1e-9)]
    terms = own | set(extra)
    hits = make_hits(lib, order, [float(fused[i]) for i in order], own)
    bm_rank = _ranks(kw_n, allowed)
    dn_rank = _ranks(dense_ent, allowed) if dense_ent is not None else None
    for h in hits:
        gid = lib.offsets[h.source_id] + h.entry_index
        e = lib.entries[gid]
        words = set(tokenize(e.title + " " + e.body[:3000]))
        h.matched_terms = sorted(terms & words)
        if dense_ent is not None:
            h.similarity_score = round(float(max(0.0, min(1.0, dense_ent[gid]))), 4)
        if explain:
            h.explain = {
                "bm25_rank": bm_rank.get(gid),
                "dense_rank": dn_rank.get(gid) if dn_rank is not None else None,
                "fused": round(float(fused[gid]), 4),
                "expansion_matched": sorted(set(extra) & words),
                "type_boost": bool(type_boost[gid]),
            }
    return SearchResult(query=q, mode=mode, results=hits, warnings=warnings + [w for w in lib.warnings if w not in warnings])


def _typed(lib: Library) -> np.ndarray:
    import numpy as np

    cached = lib.cache.get("typed")
    if cached is None:
        types = lib.titles_and_types()[1]
        cached = np.fromiter((t is not None for t in types), dtype=np.float32, count=lib.n_docs)
        lib.cache["typed"] = cached
    return cached  # type: ignore[return-value]


def _global_targets(lib: Library) -> np.ndarray:
    import numpy as np

    cached = lib.cache.get("targets")
    if cached is None:
        out = np.empty(lib.n_docs, dtype=np.int64)
        for sid, meta in lib.metas.items():
            off = lib.offsets[sid]
            rec = lib.record(sid)
            t = fold_targets(rec.entries) if rec is not None else list(range(meta.entry_count))
            out[off : off + len(t)] = np.asarray(t, dtype=np.int64) + off
        lib.cache["targets"] = out
        cached = out
    return cached  # type: ignore[return-value]


def _fold_max(scores: np.ndarray, targets: np.ndarray, n: int) -> np.ndarray:
    """An entity's keyword score: its own, or half its best folded subsection's if that is higher."""
    import numpy as np

    folded = np.zeros(n, dtype=np.float32)
    np.maximum.at(folded, targets, scores.astype(np.float32) * 0.5)
    return np.maximum(scores.astype(np.float32), folded)


def _ranks(x: np.ndarray | None, allowed: np.ndarray, k: int = 200) -> dict[int, int]:
    """1-based rank of each of the k best allowed documents under score x (for --explain)."""
    import numpy as np

    if x is None:
        return {}
    idx = np.flatnonzero(allowed)
    best = idx[np.argsort(-x[idx], kind="stable")][:k]
    return {int(g): r for r, g in enumerate(best, 1)}
