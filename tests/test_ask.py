"""`ask`: keyword expansion fused with sentence embeddings, and every way it falls back to keywords.

The sample library (gmtool/sample: 1 Markdown + 2 PDFs) is scanned with embeddings for real;
nothing under test is mocked. Tests that change a library scan their own copy.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.engine import Engine
from gmtool.query.ask import prf_terms
from gmtool.storage import store
from gmtool.storage.vectors import VectorStore

TANK = "a tanky spellcaster class"
FALL = "what happens when I fall"
runner = CliRunner()


def _gpu_present() -> bool:
    return any(os.path.exists(p) for p in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg"))


@pytest.fixture(scope="module")
def lib(sample_embedded: tuple[Path, dict[str, Any]]) -> Path:
    """The sample library scanned once per run WITH embeddings; read-only for the tests that use it."""
    return sample_embedded[0]


@pytest.fixture(scope="module")
def eng(lib: Path) -> Engine:
    """One warm engine over `lib` (the model stays loaded between tests)."""
    return Engine(lib)


def _ask_json(*args: str) -> dict:
    res = runner.invoke(app, ["ask", *args, "--json"])
    assert res.exit_code == 0, (res.stdout, res.stderr)
    return json.loads(res.stdout)


def _windows(path: Path) -> int:
    vs = VectorStore(path / ".gmtool")
    total = 0
    for sid in ("bestiary", "grimoire", "lantern-coast"):
        meta = vs.read_keys(sid)
        assert meta is not None, sid
        total += len(meta["keys"])
    return total


# --- 1. keyword expansion -------------------------------------------------------------------


def test_feedback_adds_the_top_sections_words_below_the_users_own(eng: Engine) -> None:
    """Expansion is pseudo-relevance feedback from the library itself (no curated word list)."""
    from gmtool.query.search import keyword_scores
    from gmtool.textnorm import content_tokens

    lib = eng.library()
    own = set(content_tokens(TANK))
    exp = prf_terms(lib, keyword_scores(lib, TANK), own, None)
    assert exp, "the sample library's top sections share words with one another"
    assert all(0 < w < 1 for w in exp.values())
    assert not own & set(exp)  # the user's own words keep full weight elsewhere


def test_feedback_is_read_from_the_sections_nearest_in_meaning(eng: Engine) -> None:
    """With sentence similarities, the feedback terms are words of the sections they rank first, whatever
    BM25 ranks first; without them (keyword-only ask), of BM25's best sections."""
    import numpy as np

    from gmtool.query.ask import _global_targets, _KeywordPass
    from gmtool.textnorm import tokenize

    lib = eng.library()
    targets, rollups = _global_targets(lib), _global_targets(lib, "rollup")
    words = _KeywordPass(lib, FALL, rollups)
    by_keywords = words.scores(None, None, targets, rollups)[2]
    far = int(np.argmin(words.first))  # a section BM25 puts last for the question
    nearest = np.full(lib.n_docs, -1.0, dtype=np.float32)
    nearest[far] = 1.0
    by_meaning = words.scores(None, nearest, targets, rollups)[2]
    entry = lib.entry(far)
    assert entry is not None and by_meaning and by_meaning != by_keywords
    assert set(by_meaning) <= set(tokenize(entry.title + " " + entry.body))


# --- 2. fusion ------------------------------------------------------------------------------


def test_hybrid_finds_the_tanky_caster(eng: Engine) -> None:
    res = eng.ask(TANK)
    assert res.mode == "hybrid" and not res.warnings
    top = res.results[0]
    assert (top.title, top.content_type, top.source_id) == ("Bulwark Mage", "class", "lantern-coast")


def test_hybrid_finds_falling(eng: Engine) -> None:
    res = eng.ask(FALL)
    assert res.mode == "hybrid"
    assert "Falling" in [h.title for h in res.results[:3]]


def test_hybrid_result_shape(eng: Engine) -> None:
    res = eng.ask(TANK, limit=8, min_score=0.0)
    assert len(res.results) == 8
    scores = [h.score for h in res.results]
    assert scores == sorted(scores, reverse=True)
    assert [h.rank for h in res.results] == list(range(1, 9))
    for h in res.results:
        assert 0.0 <= h.score <= 1.0
        assert h.similarity_score is not None and 0.0 <= h.similarity_score <= 1.0
        assert isinstance(h.matched_terms, list)
    assert {"class", "spellcast"} <= set(res.results[0].matched_terms or [])  # the question's own words it holds


def test_bm25_ranker_is_keyword_only(eng: Engine) -> None:
    res = eng.ask(TANK, ranker="bm25")
    assert res.mode == "keyword" and res.results
    assert all(h.similarity_score is None for h in res.results)
    assert all(0.0 <= h.score <= 1.0 for h in res.results)


def test_cli_explain_json(lib: Path) -> None:
    out = _ask_json(TANK, "--explain", "-L", str(lib))
    assert out["mode"] == "hybrid" and out["query"] == TANK
    top = out["results"][0]
    assert top["title"] == "Bulwark Mage"
    ex = top["explain"]
    assert {"bm25_rank", "dense_rank", "fused", "expansion_matched"} <= set(ex)
    assert isinstance(ex["bm25_rank"], int) and isinstance(ex["dense_rank"], int)
    assert ex["fused"] * out["confidence"] == pytest.approx(top["score"], abs=1e-3)  # see query.confidence
    assert isinstance(ex["expansion_matched"], list) and "tanki" not in ex["expansion_matched"]


def test_cli_without_explain_has_no_explain(lib: Path) -> None:
    out = _ask_json(TANK, "-L", str(lib))
    assert all("explain" not in h for h in out["results"])
    assert all("similarity_score" in h for h in out["results"])


def test_min_score_drops_weak_hits(lib: Path) -> None:
    everything = _ask_json(TANK, "--min-score", "0", "-L", str(lib))["results"]
    bar = round(everything[0]["score"] - 0.02, 2)
    strong = _ask_json(TANK, "--min-score", str(bar), "-L", str(lib))["results"]
    assert strong and len(strong) < len(everything)
    assert all(h["score"] >= bar for h in strong)
    assert strong[0]["title"] == "Bulwark Mage"


def test_type_filter(lib: Path, eng: Engine) -> None:
    out = _ask_json(TANK, "--type", "spell", "--min-score", "0", "-L", str(lib))
    assert out["results"] and all(h["content_type"] == "spell" for h in out["results"])
    res = eng.ask(FALL, types=["rule"])
    assert res.results and all(h.content_type == "rule" for h in res.results)
    assert res.results[0].title == "Falling"


def test_source_filter(lib: Path) -> None:
    out = _ask_json(TANK, "--source", "grimoire", "--min-score", "0", "-L", str(lib))
    assert out["mode"] == "hybrid"
    assert out["results"] and all(h["source_id"] == "grimoire" for h in out["results"])
    unknown = runner.invoke(app, ["ask", TANK, "--source", "no-such-book", "-L", str(lib), "--json"])
    assert unknown.exit_code == 2 and unknown.stdout == "" and "SOURCE_NOT_FOUND" in unknown.stderr


# --- 3. embedding cache ---------------------------------------------------------------------


def test_unchanged_rescan_embeds_nothing_and_an_edit_embeds_little(
        embedded_copy: Path, sample_embedded: tuple[Path, dict[str, Any]]) -> None:
    sample_lib = embedded_copy  # the first scan, with embeddings, is the shared one
    first = sample_embedded[1]["embeddings_generated"]
    total = _windows(sample_lib)
    assert 0 < first <= total

    again = Engine(sample_lib).scan()
    assert again.unchanged == 3 and again.indexed == 0
    assert again.embeddings_generated == 0

    md = sample_lib / "lantern-coast.md"
    text = md.read_text(encoding="utf-8")
    old = "and you land prone unless you take no damage."
    assert old in text
    md.write_text(text.replace(old, "and you land prone, dazed and winded, unless you take no damage."),
                  encoding="utf-8")
    edited = Engine(sample_lib).scan()
    assert edited.indexed == 1 and edited.unchanged == 2
    assert 0 < edited.embeddings_generated <= 4
    assert edited.embeddings_generated * 10 < total
    res = Engine(sample_lib).ask(FALL)
    assert res.mode == "hybrid" and res.results[0].title == "Falling"


def test_removed_file_drops_its_vectors(embedded_copy: Path) -> None:
    sample_lib = embedded_copy
    vdir = sample_lib / ".gmtool" / "vectors"
    assert (vdir / "bestiary.npy").is_file()
    (sample_lib / "bestiary.pdf").unlink()
    report = Engine(sample_lib).scan()
    assert report.removed == 1 and report.embeddings_generated == 0
    assert not (vdir / "bestiary.npy").exists()
    assert not (vdir / "bestiary.keys.json").exists()
    res = Engine(sample_lib).ask("a swarm of rats")
    assert res.mode == "hybrid" and not res.warnings
    assert all(h.source_id != "bestiary" for h in res.results)


# --- 4. model fingerprint -------------------------------------------------------------------


def test_changed_model_reembeds_everything(embedded_copy: Path, sample_embedded: tuple[Path, dict[str, Any]],
                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gmtool.rank.model_files import file_sha256, resolve_model_path

    sample_lib = embedded_copy  # embedded with the shipped model
    first_generated = sample_embedded[1]["embeddings_generated"]
    src = resolve_model_path()
    assert src is not None and src.is_file()
    # The same network with another doc_string: ModelProto field 6 (a string), appended last, wins.
    # The bytes (hence the sha and the fingerprint) differ, but it is still a valid model.
    note = b"gmtool test copy"
    copy = tmp_path / "model-copy.onnx"
    copy.write_bytes(src.read_bytes() + bytes([6 << 3 | 2, len(note)]) + note)
    assert file_sha256(copy) != file_sha256(src)
    monkeypatch.setenv("GMTOOL_MODEL", str(copy))
    monkeypatch.setenv("GMTOOL_CACHE_DIR", str(tmp_path / "cache"))  # its optimised copy stays private

    again = Engine(sample_lib).scan()
    assert not again.warnings, again.warnings
    assert again.unchanged == 3
    assert again.embeddings_generated == first_generated
    eng = Engine(sample_lib)
    res = eng.ask(TANK)
    assert res.mode == "hybrid" and not res.warnings
    assert res.results[0].title == "Bulwark Mage"
    fp = eng.embedder("auto").fingerprint
    assert file_sha256(copy)[:16] in fp
    assert all(VectorStore(sample_lib / ".gmtool").has(sid, fp) for sid in ("bestiary", "grimoire", "lantern-coast"))


def test_no_rewrite_switch_reembeds(cpu_embedded_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One book shows the switch (the shipped graph embeds about 4x slower than the optimised
    one); that a new fingerprint re-embeds every book is test_changed_model_reembeds_everything."""
    sample_lib = cpu_embedded_copy  # embedded with the optimised graph
    for other in ("bestiary.pdf", "grimoire.pdf"):
        (sample_lib / other).unlink()
    store_dir = sample_lib / ".gmtool"
    optimised = VectorStore(store_dir).read_keys("lantern-coast")
    assert optimised is not None
    monkeypatch.setenv("GMTOOL_NO_REWRITE", "1")  # the shipped graph instead of the optimised one
    again = Engine(sample_lib).scan()
    assert again.removed == 2 and again.unchanged == 1
    assert again.embeddings_generated == len(optimised["keys"])
    eng = Engine(sample_lib)
    res = eng.ask(TANK)
    assert res.mode == "hybrid", res.warnings
    assert res.results[0].title == "Bulwark Mage"
    plain = eng.embedder("auto").fingerprint
    assert plain != optimised["fingerprint"] and VectorStore(store_dir).has("lantern-coast", plain)


def test_index_of_an_older_rewrite_is_reembedded(cpu_embedded_copy: Path) -> None:
    """An index whose vectors an older version of the CPU rewrite made (another vector space,
    recorded in its keys files and embedding stamp) is embedded again by the next scan, though
    no book changed; otherwise `ask` would stay keyword-only after an upgrade."""
    from gmtool.rank.model_files import REWRITE_VERSION

    sample_lib = cpu_embedded_copy
    for other in ("bestiary.pdf", "grimoire.pdf"):
        (sample_lib / other).unlink()
    Engine(sample_lib).scan(device="cpu")
    store_dir = sample_lib / ".gmtool"
    keys_file = next((store_dir / "vectors").glob("lantern-coast*.keys.json"))
    current = json.loads(keys_file.read_text())
    older = "+r0"
    assert f"+{REWRITE_VERSION}" in current["fingerprint"]
    keys_file.write_text(json.dumps({**current, "fingerprint": current["fingerprint"].replace(f"+{REWRITE_VERSION}", older)}))
    manifest = store_dir / "manifest.json"
    raw = json.loads(manifest.read_text())
    assert f"|{REWRITE_VERSION}|" in raw["state"]["embed_stamp"]
    raw["state"]["embed_stamp"] = raw["state"]["embed_stamp"].replace(f"|{REWRITE_VERSION}|", "|r0|")
    manifest.write_text(json.dumps(raw))
    again = Engine(sample_lib).scan(device="cpu")  # the CPU's graph (a GPU host's default scan uses the GPU)
    assert again.unchanged == 1 and again.embeddings_generated > 0
    res = Engine(sample_lib).ask(TANK)
    assert res.mode == "hybrid" and not res.warnings, res.warnings
    assert VectorStore(store_dir).has("lantern-coast", current["fingerprint"])


# --- 5. timeout -----------------------------------------------------------------------------


def test_timeout_falls_back_to_keywords(lib: Path) -> None:
    fresh = Engine(lib)  # the model is not loaded yet: loading alone takes far longer than the deadline
    res = fresh.ask(TANK, timeout=0.0001)
    assert res.mode == "keyword"
    assert any(w.startswith("EMBED_TIMEOUT") for w in res.warnings), res.warnings
    assert res.results and res.results[0].title == "Bulwark Mage"
    assert all(h.similarity_score is None for h in res.results)


# --- 6. devices -----------------------------------------------------------------------------


@pytest.mark.skipif(_gpu_present(), reason="an NVIDIA GPU is present: --device cuda would really use it")
def test_cuda_without_gpu_warns_and_runs_on_cpu(lib: Path) -> None:
    out = _ask_json(TANK, "--device", "cuda", "-L", str(lib))
    assert any(w.startswith("GPU_NOT_AVAILABLE") for w in out["warnings"]), out["warnings"]
    assert out["mode"] == "hybrid"
    assert out["results"] and out["results"][0]["title"] == "Bulwark Mage"


def test_unknown_device_is_a_usage_error(lib: Path) -> None:
    res = runner.invoke(app, ["ask", TANK, "--device", "banana", "--json", "-L", str(lib)])
    assert res.exit_code == 2
    assert "INVALID_DEVICE" in res.stderr and res.stdout == ""


@pytest.mark.cuda
def test_cuda_device_matches_cpu(tmp_path: Path) -> None:
    """A library scanned on the GPU (its vectors from the shipped graph) answers alike on the GPU
    and on the CPU (which then runs the shipped graph too)."""
    import shutil

    import onnxruntime as ort

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        pytest.skip("onnxruntime has no CUDAExecutionProvider (install onnxruntime-gpu)")
    if not os.path.exists("/dev/nvidiactl"):
        pytest.skip("no NVIDIA GPU (/dev/nvidiactl is missing)")
    lib = tmp_path / "sample"
    shutil.copytree(Path(__file__).resolve().parents[1] / "gmtool" / "sample", lib,
                    ignore=shutil.ignore_patterns(".gmtool"))
    report = Engine(lib).scan(device="cuda")
    assert not report.failed and not report.warnings and report.embeddings_generated > 0, report
    cpu = [h.title for h in Engine(lib).ask(TANK, device="cpu").results[:3]]
    gpu_eng = Engine(lib)
    res = gpu_eng.ask(TANK, device="cuda")
    assert gpu_eng.embedder("cuda").device == "cuda"
    assert res.mode == "hybrid" and not res.warnings, res.warnings
    assert [h.title for h in res.results[:3]] == cpu
    out = _ask_json(TANK, "--device", "cuda", "-L", str(lib))
    assert [h["title"] for h in out["results"][:3]] == cpu


# --- 7. query checks ------------------------------------------------------------------------


def test_long_query_is_truncated(eng: Engine) -> None:
    q = ("tanky spellcaster class in heavy armor " * 20)[:600]
    assert len(q) == 600
    res = eng.ask(q)
    assert any(w.startswith("QUERY_TRUNCATED") for w in res.warnings)
    assert len(res.query) == 512
    assert res.results and res.mode == "hybrid"


@pytest.mark.parametrize("query", ["", "   \t  "])
def test_empty_query_is_a_usage_error(lib: Path, query: str) -> None:
    res = runner.invoke(app, ["ask", query, "--json", "-L", str(lib)])
    assert res.exit_code == 2
    assert "INVALID_QUERY" in res.stderr
    assert res.stdout == ""


# --- 8/9. no vectors, no model --------------------------------------------------------------


def test_no_embed_library_answers_in_keyword_mode(sample_lib: Path) -> None:
    report = Engine(sample_lib).scan(embed=False)
    assert report.embeddings_generated == 0
    assert not (sample_lib / ".gmtool" / "vectors").exists() or not any((sample_lib / ".gmtool" / "vectors").iterdir())
    out = _ask_json(TANK, "-L", str(sample_lib))
    assert out["mode"] == "keyword" and out["results"]
    warn = [w for w in out["warnings"] if w.startswith("NO_EMBEDDINGS")]
    assert warn and "gmtool scan" in warn[0]
    assert all("similarity_score" not in h for h in out["results"])


def test_missing_model_scan_and_ask_fall_back(sample_lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_MODEL", "/nonexistent.onnx")
    report = Engine(sample_lib).scan()
    assert not report.failed and report.indexed == 3
    assert report.embeddings_generated == 0
    assert any(w.startswith("MODEL_NOT_FOUND") for w in report.warnings), report.warnings
    res = Engine(sample_lib).ask(TANK, timeout=30)
    assert res.mode == "keyword" and res.results
    assert any(w.startswith("MODEL_NOT_FOUND") for w in res.warnings), res.warnings
    cli = runner.invoke(app, ["ask", TANK, "--json", "-L", str(sample_lib)])
    assert cli.exit_code == 0, cli.stderr
    assert json.loads(cli.stdout)["mode"] == "keyword"


@pytest.mark.parametrize("var", ["GMTOOL_MODEL", "GMTOOL_TOKENIZER"])
def test_a_model_that_is_not_onnx_falls_back_to_keywords(embedded_copy: Path, tmp_path: Path, var: str,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A text file as the model (or its tokenizer) once ended ask, scan and doctor in INTERNAL_ERROR."""
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
    monkeypatch.setenv(var, str(text))
    monkeypatch.setenv("GMTOOL_CACHE_DIR", str(tmp_path / "cache"))
    lib = ["-L", str(embedded_copy)]
    asked = runner.invoke(app, ["ask", TANK, "--json", *lib])
    assert asked.exit_code == 0, asked.output
    out = json.loads(asked.stdout)
    assert out["mode"] == "keyword" and out["results"][0]["title"] == "Bulwark Mage"
    assert [w for w in out["warnings"] if w.startswith("MODEL_UNSUPPORTED: ")], out["warnings"]
    scanned = runner.invoke(app, ["scan", str(embedded_copy), "--force", "--json"])
    assert scanned.exit_code == 0, scanned.output
    report = json.loads(scanned.stdout)
    assert report["indexed"] == 3 and report["embeddings_generated"] == 0
    assert [w for w in report["warnings"] if w.startswith("MODEL_UNSUPPORTED: ")], report["warnings"]
    doc = runner.invoke(app, ["doctor", "--json", *lib])
    assert doc.exit_code == 0, doc.output
    assert json.loads(doc.stdout)["model"]["error"].startswith("MODEL_UNSUPPORTED: ")
    assert "INTERNAL_ERROR" not in asked.output + scanned.output + doc.output


def test_damaged_source_gives_a_warning_not_a_crash(sample_lib: Path) -> None:
    Engine(sample_lib).scan(embed=False)
    store.source_file(sample_lib / ".gmtool", "bestiary").write_bytes(b"{broken")
    res = Engine(sample_lib).ask("a monster that turns people to stone", ranker="bm25")
    assert any(w.startswith("INDEX_CORRUPT") for w in res.warnings), res.warnings
    assert res.results and all(h.source_id != "bestiary" for h in res.results)
    hits = Engine(sample_lib).search("saltglass").results
    assert all(h.source_id != "bestiary" for h in hits)


# --- an honest "nothing found" (query.confidence) ---------------------------------------------------


def test_an_off_topic_question_has_no_good_answer(lib: Path, eng: Engine) -> None:
    res = runner.invoke(app, ["ask", "blockchain cryptocurrency tax law", "-L", str(lib)], env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.stderr
    assert "no good answer to 'blockchain cryptocurrency tax law'" in res.stdout
    assert "nearest entries (weak):" in res.stdout
    out = _ask_json("blockchain cryptocurrency tax law", "-L", str(lib))
    assert out["results"] == [] and out["weak"] and out["confidence"] == 0.0
    # a real question keeps its answer at the default floor, and an explicit 0 keeps every result
    assert eng.ask(FALL).results[0].title == "Falling"
    assert len(eng.ask("blockchain cryptocurrency tax law", min_score=0.0).results) == 10


@pytest.mark.parametrize("question", ["how do I file my quarterly VAT return", "symptoms of seasonal allergies in cats",
                                      "kubernetes pod autoscaling configuration"])
def test_keyword_mode_has_no_good_answer_to_an_off_topic_question(corpus_lib: Path, question: str) -> None:
    """Without vectors, the share of the question's words one entry holds is the evidence: a question
    whose words the books only scatter ("return", "ratio") gets weak rows, not ten confident answers."""
    res = Engine(corpus_lib).ask(question, ranker="bm25")
    assert res.mode == "keyword" and res.results == [] and res.weak and res.confidence == 0.0


@pytest.mark.parametrize(("question", "title"), [("how do long rests work", "Long Rest"), (FALL, "Falling")])
def test_keyword_mode_keeps_the_answer_to_a_rules_question(corpus_lib: Path, question: str, title: str) -> None:
    res = Engine(corpus_lib).ask(question, ranker="bm25")
    assert res.confidence == 1.0 and title in [h.title for h in res.results[:3]]


# --- 10. search first, then embeddings, book by book ----------------------------------------


class _Stop(Exception):
    """Raised from the progress callback: the scan dies as a killed one would, mid-embedding."""


def test_search_works_while_embedding_and_a_killed_scan_keeps_finished_books(sample_lib: Path) -> None:
    seen: dict[str, Any] = {}
    server = Engine(sample_lib)  # a long-lived reader, as `serve` holds one

    def progress(done: int, total: int, message: str) -> None:
        if message.startswith("embedding") and "search" not in seen:  # the first book is being embedded
            seen["search"] = Engine(sample_lib).search("saltglass").results
            seen["ask"] = server.ask(TANK)
            seen["status"] = Engine(sample_lib).embedding_status()
        if message.endswith("(bestiary done)"):
            seen["server"] = server.ask(TANK)  # sees the finished book before the scan ends
            raise _Stop

    with pytest.raises(_Stop):
        Engine(sample_lib).scan(progress=progress)
    assert seen["search"], "search must work as soon as extraction is done"
    assert seen["ask"].mode == "keyword" and seen["ask"].results
    assert any(w.startswith("NO_EMBEDDINGS") and "sections in 3 books wait" in w for w in seen["ask"].warnings)
    assert seen["status"]["books_embedded"] == 0 and seen["status"]["sections_waiting"] > 0
    assert seen["server"].mode == "hybrid"
    assert any(w.startswith("EMBEDDINGS_INCOMPLETE") for w in seen["server"].warnings), seen["server"].warnings

    vdir = sample_lib / ".gmtool" / "vectors"
    kept = (vdir / "bestiary.npy").stat().st_mtime_ns
    status = Engine(sample_lib).embedding_status()
    assert status["books_embedded"] == 1 and status["books_waiting"] == ["grimoire", "lantern-coast"]
    ls = json.loads(runner.invoke(app, ["ls", "--json", "-L", str(sample_lib)]).stdout)
    assert ls["embeddings"]["books_waiting"] == ["grimoire", "lantern-coast"]
    waiting = status["sections_waiting"]
    assert waiting == sum(s["entries"] for s in ls["sources"] if s["source_id"] != "bestiary") > 0
    # `ls` and `doctor` tell a GM how much is still to embed (issue #23)
    assert f"Embeddings: 1/3 books; {waiting:,} sections wait" in runner.invoke(app, ["ls", "-L", str(sample_lib)]).stdout
    doc = json.loads(runner.invoke(app, ["doctor", "--json", "-L", str(sample_lib)]).stdout)["index"]
    assert doc["sections_waiting"] == waiting and doc["books_waiting"] == ["grimoire", "lantern-coast"]
    partial = Engine(sample_lib).ask(TANK)
    assert partial.mode == "hybrid"
    assert any(w.startswith("EMBEDDINGS_INCOMPLETE") and "grimoire" in w for w in partial.warnings)

    again = Engine(sample_lib).scan()
    assert again.unchanged == 3 and not again.warnings
    rest = sum(len(VectorStore(sample_lib / ".gmtool").read_keys(s)["keys"]) for s in ("grimoire", "lantern-coast"))
    assert again.embeddings_generated <= rest  # only the unfinished books (less where they share a text)
    assert again.embeddings_generated > 0
    assert (vdir / "bestiary.npy").stat().st_mtime_ns == kept
    assert Engine(sample_lib).embedding_status()["sections_waiting"] == 0
    res = Engine(sample_lib).ask(TANK)
    assert res.mode == "hybrid" and not res.warnings and res.results[0].title == "Bulwark Mage"


def test_a_second_copy_of_a_book_reuses_the_first_ones_vectors(embedded_copy: Path) -> None:
    """The copy differs in one sentence (a reprint), so its windows are not the same texts; the
    keyword index finds its entries to be copies, and they take the first book's windows."""
    text = (embedded_copy / "lantern-coast.md").read_text(encoding="utf-8")
    old = "and you land prone unless you take no damage."
    (embedded_copy / "lantern-coast-reprint.md").write_text(
        text.replace(old, "and you land prone, dazed and winded, unless you take no damage."), encoding="utf-8")
    report = Engine(embedded_copy).scan()
    assert report.indexed == 1 and not report.warnings, report
    vs = VectorStore(embedded_copy / ".gmtool")
    reprint, first = vs.read_keys("lantern-coast-reprint"), vs.read_keys("lantern-coast")
    assert reprint is not None and first is not None and reprint["keys"] == first["keys"]
    assert report.embeddings_generated == 0
    res = Engine(embedded_copy).ask(FALL, all_copies=True)
    assert res.mode == "hybrid" and not res.warnings
    assert {h.source_id for h in res.results if h.title == "Falling"} == {"lantern-coast", "lantern-coast-reprint"}
