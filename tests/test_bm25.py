"""gmtool.rank: BM25 parity with rank_bm25 (given Lucene's idf), top_k, persistence, fuzzy title matching."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from gmtool.errors import GmtoolError
from gmtool.rank.bm25 import BM25Index, top_k
from gmtool.rank.fuzzy import TitleMatcher, correct_tokens
from gmtool.textnorm import tokenize

SRD_MD = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "md" / "cc-srd5.md"
QUERIES = [
    "fireball",
    "half-elf ability score increase",
    "saving throw against poison",
    "the the the",  # a term in most documents: Okapi's idf would be negative
    "grappling a creature",
    "magic missile magic",  # repeated token counts twice
    "zzzz unknownword",
]


class LuceneOkapi(BM25Okapi):
    """The reference: rank_bm25's BM25 (term frequencies, length norm) with Lucene's idf,
    ln(1 + (N - n + .5) / (n + .5)), which no word present can make zero or negative."""

    def _calc_idf(self, nd: dict[str, int]) -> None:
        for word, freq in nd.items():
            self.idf[word] = math.log(1 + (self.corpus_size - freq + 0.5) / (freq + 0.5))


_WORDS = (
    "the a of to and fire ball spell damage creature saving throw dexterity wisdom poison elf half "
    "dwarf wolf owlbear dragon breath weapon attack roll armor class hit points level slot range"
)


def _synthetic(n: int = 200, seed: int = 7) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    words = _WORDS.split()
    titles = [" ".join(rng.choice(words) for _ in range(3)).title() for _ in range(n)]
    bodies = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 60))) for _ in range(n)]
    bodies[0] = ""  # an empty document
    return titles, bodies


def _srd_sections(limit: int = 300) -> tuple[list[str], list[str]]:
    text = SRD_MD.read_text(encoding="utf-8")
    parts = re.split(r"(?m)^#+\s+", text)[1 : limit + 1]
    titles = [p.split("\n", 1)[0] for p in parts]
    bodies = [p.split("\n", 1)[1] if "\n" in p else "" for p in parts]
    return titles, bodies


@pytest.fixture(params=["synthetic", "srd"])
def corpus(request):
    if request.param == "srd":
        if not SRD_MD.exists():
            pytest.skip("../shared/corpus is absent")
        return _srd_sections()
    return _synthetic()


@pytest.mark.parametrize("query", QUERIES)
def test_body_scores_match_rank_bm25(corpus, query):
    _titles, bodies = corpus
    reference = LuceneOkapi([tokenize(b) for b in bodies])
    expected = reference.get_scores(tokenize(query))
    exact = BM25Index.build({"body": bodies}, dtype=np.float64)
    np.testing.assert_allclose(exact.scores(query), expected, rtol=0, atol=1e-6)
    compact = BM25Index.build({"body": bodies})  # float32 storage
    np.testing.assert_allclose(compact.scores(query), expected, rtol=1e-5, atol=1e-5)


def test_weighted_fields_are_a_weighted_sum_of_single_field_bm25(corpus):
    titles, bodies = corpus
    both = BM25Index.build(
        {"title": titles, "body": bodies}, weights={"title": 3.0, "body": 1.0}, dtype=np.float64
    )
    for query in QUERIES:
        q = tokenize(query)
        expected = 3.0 * LuceneOkapi([tokenize(t) for t in titles]).get_scores(q) + LuceneOkapi(
            [tokenize(b) for b in bodies]
        ).get_scores(q)
        np.testing.assert_allclose(both.scores(query), expected, rtol=0, atol=1e-6)


@pytest.mark.parametrize("holding", [1, 2, 3, 4])
def test_a_word_present_always_scores_above_zero(holding: int) -> None:
    """Okapi's idf is 0 for a word in 2 of 4 documents and negative above that: such a word
    could not be found in a small library (issue 25: `search frostbrand`)."""
    bodies = ["a frostbrand rune" if i < holding else f"plain text number {i}" for i in range(4)]
    idx = BM25Index.build({"body": bodies})
    scores = idx.scores("frostbrand")
    assert (scores[:holding] > 0).all() and not scores[holding:].any()
    assert top_k(scores, 10).tolist() == list(range(holding))


def test_a_commoner_word_weighs_less() -> None:
    bodies = [" ".join(["alpha"] * (i < 1) + ["beta"] * (i < 2) + ["gamma"] * (i < 3) + ["delta"]) for i in range(4)]
    idx = BM25Index.build({"body": bodies}, dtype=np.float64)
    first = [idx.scores(w)[0] for w in ("alpha", "beta", "gamma", "delta")]
    assert first == sorted(first, reverse=True) and first[-1] > 0


def test_dict_query_weights_each_token():
    _titles_unused, bodies = _synthetic()
    idx = BM25Index.build({"body": bodies}, dtype=np.float64)
    fire, poison = idx.scores("fire"), idx.scores("poison")
    np.testing.assert_allclose(idx.scores({"fire": 1.0, "poison": 0.5}), fire + 0.5 * poison, atol=1e-12)
    np.testing.assert_allclose(idx.scores("fire fire"), 2 * fire, atol=1e-12)
    assert not idx.scores({"notaword": 1.0}).any()
    assert not idx.scores({}).any() and not idx.scores("").any()
    assert idx.has_token("fire") and not idx.has_token("notaword")
    assert idx.n_docs == len(bodies) == idx.scores("fire").shape[0]


def test_top_k_order_ties_and_mask():
    s = np.array([0.0, 3.0, 1.0, 3.0, -1.0, 2.0, 0.5])
    assert top_k(s, 3).tolist() == [1, 3, 5]  # ties broken by index
    assert top_k(s, 10).tolist() == [1, 3, 5, 2, 6]  # zero and negative scores are dropped
    mask = np.array([True, False, True, True, True, True, False])
    assert top_k(s, 2, mask).tolist() == [3, 5]
    assert top_k(s, 0).tolist() == []
    assert top_k(np.zeros(5), 3).tolist() == []


def test_top_k_matches_full_sort_on_random_scores():
    rng = np.random.default_rng(1)
    s = rng.random(10_000)
    s[rng.random(10_000) < 0.5] = 0
    mask = rng.random(10_000) < 0.7
    allowed = np.flatnonzero((s > 0) & mask)
    expected = allowed[np.argsort(-s[allowed], kind="stable")][:25]
    assert top_k(s, 25, mask).tolist() == expected.tolist()


def test_save_load_roundtrip(tmp_path):
    titles, bodies = _synthetic()
    idx = BM25Index.build({"title": titles, "body": bodies}, weights={"title": 2.0})
    path = tmp_path / "sub" / "bm25.npz"
    idx.save(path)
    assert path.exists() and not list(path.parent.glob("*.tmp"))
    again = BM25Index.load(path)
    assert again.n_docs == idx.n_docs and again.vocab == idx.vocab
    assert again.meta["weights"] == {"title": 2.0, "body": 1.0}
    for q in QUERIES:
        np.testing.assert_array_equal(again.scores(q), idx.scores(q))
    idx.save(path)  # overwrite in place
    assert BM25Index.load(path).n_docs == idx.n_docs


def test_empty_index_roundtrip(tmp_path):
    idx = BM25Index.build({"body": []})
    assert idx.n_docs == 0 and idx.scores("fire").shape == (0,)
    idx.save(tmp_path / "e.npz")
    assert BM25Index.load(tmp_path / "e.npz").n_docs == 0


def test_corrupt_or_foreign_files_raise_index_corrupt(tmp_path):
    titles, bodies = _synthetic(20)
    good = tmp_path / "good.npz"
    BM25Index.build({"body": bodies}).save(good)

    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[:200])
    fuzzy = tmp_path / "fuzzy.npz"
    TitleMatcher.build(titles).save(fuzzy)  # another format
    plain = tmp_path / "plain.npz"
    np.savez(plain, data=np.zeros(3))

    for path in (garbage, truncated, fuzzy, plain):
        with pytest.raises(GmtoolError) as info:
            BM25Index.load(path)
        assert info.value.code == "INDEX_CORRUPT", path
    with pytest.raises(GmtoolError) as info:
        TitleMatcher.load(good)
    assert info.value.code == "INDEX_CORRUPT"
    with pytest.raises(GmtoolError) as info:
        BM25Index.load(tmp_path / "missing.npz")
    assert info.value.code == "INDEX_MISSING"


def test_other_format_version_is_rejected(tmp_path, monkeypatch):
    from gmtool.rank import bm25

    path = tmp_path / "v.npz"
    BM25Index.build({"body": ["a b c"]}).save(path)
    monkeypatch.setattr(bm25, "FORMAT_VERSION", bm25.FORMAT_VERSION + 1)
    with pytest.raises(GmtoolError) as info:
        BM25Index.load(path)
    assert info.value.code == "INDEX_CORRUPT" and "version" in info.value.message


# --- fuzzy -----------------------------------------------------------------------------

SPECIAL = [
    "Fireball",
    "Owlbear",
    "Magic Missile",
    "Bag of Holding",
    "Delayed Blast Fireball",
    "Fire Bolt",
    "Owl",
    "Magic Mouth",
    "Bag of Tricks",
    "Fire Shield",
    "Holding Person",
    "Missile Launcher",
]


def _titles(n: int = 400) -> list[str]:
    rng = random.Random(3)
    syll = "ka lo mi ra ven dor el an fen bul bear owl ho ding ma gic sil tor ix um ber wal".split()  # noqa: SIM905
    made = {
        " ".join(
            "".join(rng.choice(syll) for _ in range(rng.randint(1, 3))).title()
            for _ in range(rng.randint(1, 3))
        )
        for _ in range(n)
    }
    titles = sorted(made - set(SPECIAL)) + SPECIAL
    rng.shuffle(titles)
    return titles


@pytest.mark.parametrize(
    "query, title",
    [
        ("firball", "Fireball"),
        ("fireball", "Fireball"),
        ("FIREBALL", "Fireball"),
        ("owl bear", "Owlbear"),
        ("owlbear", "Owlbear"),
        ("magic misile", "Magic Missile"),
        ("bag of holdin", "Bag of Holding"),
        ("delayed blast firebal", "Delayed Blast Fireball"),
    ],
)
def test_fuzzy_title_top_match(query, title):
    titles = _titles()
    m = TitleMatcher.build(titles)
    s = m.scores(query)
    assert titles[int(np.argmax(s))] == title
    assert s.min() >= 0.0 and s.max() <= 1.0


def test_fuzzy_scores_are_cosines(tmp_path):
    titles = _titles()
    m = TitleMatcher.build(titles)
    assert m.scores("Fireball")[titles.index("Fireball")] == pytest.approx(1.0, abs=1e-5)
    assert not m.scores("").any() and not m.scores("§§").any()
    assert m.scores("qqqqxxxx").max() < 0.2
    m.save(tmp_path / "f.npz")
    again = TitleMatcher.load(tmp_path / "f.npz")
    for q in ("firball", "owl bear", "bag of holdin"):
        np.testing.assert_array_equal(again.scores(q), m.scores(q))


def test_correct_tokens_maps_typos_to_vocabulary():
    idx = BM25Index.build(
        {"body": SPECIAL + ["Mage Armor", "holding the line", "fire", "fires", "misty step"]}
    )
    got = correct_tokens(tokenize("firball misile holdin mage"), idx.vocab, idx.df)
    assert set(got) == set(tokenize("fireball missile hold"))  # "mage" is known: not a correction
    assert all(0 < w < 1 for w in got.values())
    joined = correct_tokens(tokenize("owl bear fire ball"), idx.vocab)
    assert set(tokenize("owlbear fireball")) <= set(joined)
    long_typo = correct_tokens(["fireballz"], {"fireball": 0, "launcher": 1})
    assert long_typo == {"fireball": pytest.approx(0.6)}
    assert correct_tokens(["laucnhrr"], {"fireball": 0, "launcher": 1}) == {"launcher": pytest.approx(0.35)}
    assert correct_tokens(["xyz", "d20", "zzzzzzzz"], {"fireball": 0}) == {}


def test_correct_tokens_prefers_the_commoner_word():
    """Among equally close corrections, the one in more documents wins (df is used)."""
    vocab = {"rage": 0, "range": 1, "ranger": 2}
    df = np.array([1, 50, 3])
    assert list(correct_tokens(["rnage"], vocab, df, max_candidates=1)) == ["range"]
    df = np.array([50, 1, 3])
    assert list(correct_tokens(["rnage"], vocab, df, max_candidates=1)) == ["rage"]


@pytest.mark.corpus
def test_fuzzy_on_real_srd_headings():
    if not SRD_MD.exists():
        pytest.skip("../shared/corpus is absent")
    titles = [m.group(1).strip() for m in re.finditer(r"(?m)^#+\s+(.*)$", SRD_MD.read_text(encoding="utf-8"))]
    m = TitleMatcher.build(titles)
    for query, title in [
        ("firball", "Fireball"),
        ("owl bear", "Owlbear"),
        ("magic misile", "Magic Missile"),
        ("bag of holdin", "Bag of Holding"),
        ("prestidigitaton", "Prestidigitation"),
    ]:
        assert titles[int(np.argmax(m.scores(query)))] == title, query


def test_load_and_query_need_no_scipy(tmp_path):
    import subprocess
    import sys

    titles, bodies = _synthetic(50)
    BM25Index.build({"title": titles, "body": bodies}).save(tmp_path / "b.npz")
    TitleMatcher.build(titles).save(tmp_path / "f.npz")
    code = (
        "import sys; from pathlib import Path; from gmtool.rank.bm25 import BM25Index, top_k; "
        "from gmtool.rank.fuzzy import TitleMatcher, correct_tokens; "
        f"b = BM25Index.load(Path({str(tmp_path / 'b.npz')!r})); f = TitleMatcher.load(Path({str(tmp_path / 'f.npz')!r})); "
        "s = b.scores({'fire': 1.0, **correct_tokens(['firre'], b.vocab, b.df)}) + f.scores('firball'); "
        "print(len(top_k(s, 5)), sorted(m for m in ('scipy', 'sklearn') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split(" ", 1)[1].strip() == "[]"


def _scipy_layout(fields: dict[str, list[str]], weights: dict[str, float], dtype: type) -> tuple[np.ndarray, ...]:
    """The matrix as gmtool built it with scipy.sparse before it built it with numpy alone: the reference."""
    sp = pytest.importorskip("scipy.sparse")
    n_docs = len(next(iter(fields.values())))
    vocab: dict[str, int] = {}
    total = None
    mats = []
    for name, texts in fields.items():
        toks = [tokenize(t) for t in texts]
        pairs: dict[tuple[int, int], float] = {}
        for d, ts in enumerate(toks):
            for t in ts:
                key = (d, vocab.setdefault(t, len(vocab)))
                pairs[key] = pairs.get(key, 0.0) + 1.0
        mats.append((weights.get(name, 1.0), pairs, np.array([len(ts) for ts in toks], dtype=np.float64)))
    for w, pairs, doc_len in mats:
        rows = np.array([k[0] for k in pairs], dtype=np.int64)
        cols = np.array([k[1] for k in pairs], dtype=np.int64)
        tf = sp.csr_matrix((np.array(list(pairs.values())), (rows, cols)), shape=(n_docs, len(vocab)))
        tf.sum_duplicates()
        df = np.bincount(tf.indices, minlength=len(vocab))
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        norm = BM25Index.k1 * (1 - BM25Index.b + BM25Index.b * doc_len[np.repeat(np.arange(n_docs), np.diff(tf.indptr))]
                               / (doc_len.sum() / n_docs))
        tf.data = idf[tf.indices] * (tf.data * (BM25Index.k1 + 1) / (tf.data + norm))
        part = w * tf.tocsc()
        total = part if total is None else total + part
    total = sp.csc_matrix(total, dtype=dtype)
    total.eliminate_zeros()
    total.sort_indices()
    return total.data, total.indices, total.indptr


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matrix_is_laid_out_as_scipy_built_it(corpus, dtype):
    """Built without scipy, the saved arrays stay the very ones scipy.sparse gave (bit for bit)."""
    titles, bodies = corpus
    fields = {"title": titles, "body": bodies, "lead": [b[:80] for b in bodies]}
    weights = {"title": 3.0, "lead": 0.7}
    m = BM25Index.build(fields, weights, dtype=dtype).matrix
    for ours, ref in zip((m.data, m.indices, m.indptr), _scipy_layout(fields, weights, dtype), strict=True):
        assert ours.dtype == ref.dtype and ours.tobytes() == ref.tobytes()


def test_title_matrix_is_laid_out_as_scipy_built_it(corpus):
    sp = pytest.importorskip("scipy.sparse")
    titles, _ = corpus
    m = TitleMatcher.build(titles).matrix
    ref = sp.csc_matrix((m.data, m.indices, m.indptr), shape=m.shape).tocoo()
    rebuilt = sp.csc_matrix((ref.data, (ref.row, ref.col)), shape=m.shape)  # from its entries, as it was built
    rebuilt.sort_indices()
    for ours, theirs in zip((m.data, m.indices, m.indptr), (rebuilt.data, rebuilt.indices, rebuilt.indptr), strict=True):
        assert ours.dtype == theirs.dtype and ours.tobytes() == theirs.tobytes()
