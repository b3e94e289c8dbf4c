"""`gmtool serve` on its real stdio wire: malformed JSON-RPC is answered, Ctrl-C ends it with 130.

Each test starts the server as a process (what an MCP client does): framing and signals exist
only there, not behind fastmcp's in-memory client.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, SAMPLE, SESSION_CACHE

from gmtool.mcpstdio import GRACE_S, check_line

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

# Runs `gmtool serve`, first making Engine.scan take (argv[2]) seconds: a call still running at Ctrl-C.
SERVE = """
import sys, time
import gmtool.engine as engine
delay = float(sys.argv[2])
real = engine.Engine.scan
def slow(self, *a, **kw):
    time.sleep(delay)
    return real(self, *a, **kw)
engine.Engine.scan = slow
from gmtool.cli import main
sys.argv = ["gmtool", "serve", "--library", sys.argv[1]]
main()
"""


def _serve(lib: Path, tmp_path: Path, scan_delay: float = 0.0) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GMTOOL_LIBRARY", "GMTOOL_INDEX_DIR", "GMTOOL_DEBUG")}
    env.update(GMTOOL_CONFIG_DIR=str(tmp_path / "config"), PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1",
               GMTOOL_CACHE_DIR=os.environ.get("GMTOOL_CACHE_DIR", str(SESSION_CACHE)))
    return subprocess.Popen([sys.executable, "-c", SERVE, str(lib), str(scan_delay)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO, text=True)


def _send(proc: subprocess.Popen[str], line: str | dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    proc.stdin.flush()


def _until(proc: subprocess.Popen[str], rid: int) -> list[dict[str, Any]]:
    """Every message up to and including the reply to request `rid`."""
    assert proc.stdout is not None
    out = []
    while True:
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        out.append(json.loads(line))
        if out[-1].get("id") == rid:
            return out


@pytest.fixture
def lib(tmp_path: Path) -> Path:
    dest = tmp_path / "lib"
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".gmtool"))
    return dest


def _started(lib: Path, tmp_path: Path, scan_delay: float = 0.0) -> subprocess.Popen[str]:
    proc = _serve(lib, tmp_path, scan_delay)
    _send(proc, INIT)
    assert _until(proc, 1)[-1]["result"]["serverInfo"]["name"] == "gmtool"
    _send(proc, INITIALIZED)
    return proc


BAD_LINES: list[tuple[str, int, Any]] = [
    ("this is not json", -32700, None),
    ('{"jsonrpc": "2.0", "id": 7, "method": ', -32700, None),
    ('{"jsonrpc": "2.0", "id": 8, "method": 42}', -32600, 8),
    ('{"jsonrpc": "2.0", "id": "eight"}', -32600, "eight"),
    ('{"id": 9, "method": "tools/list"}', -32600, 9),
    ('{"jsonrpc": "2.0", "id": 10, "method": "tools/list", "params": 5}', -32600, 10),
    ('{"jsonrpc": "2.0", "id": true, "method": "ping"}', -32600, None),
    ('[{"jsonrpc": "2.0", "id": 11, "method": "ping"}]', -32600, None),
    ('"just a string"', -32600, None),
]


@pytest.mark.parametrize(("line", "code", "rid"), BAD_LINES)
def test_check_line(line: str, code: int, rid: Any) -> None:
    err = check_line(line)
    assert err is not None and (err.error.code, err.id) == (code, rid)


def test_check_line_passes_good_messages() -> None:
    assert check_line(json.dumps(INIT)) is None
    assert check_line(json.dumps(INITIALIZED)) is None
    assert check_line('{"jsonrpc": "2.0", "id": 3, "result": {}}') is None


def test_malformed_lines_are_answered_over_stdio(lib: Path, tmp_path: Path) -> None:
    """They used to get no answer at all, so a client waited forever."""
    proc = _started(lib, tmp_path)
    for n, (line, _code, _rid) in enumerate(BAD_LINES):
        _send(proc, line)
        _send(proc, "")  # a blank line is no message: no answer
        _send(proc, {"jsonrpc": "2.0", "id": 100 + n, "method": "ping"})
    replies = _until(proc, 100 + len(BAD_LINES) - 1)
    errors = [r for r in replies if "error" in r]
    assert [(r["error"]["code"], r["id"]) for r in errors] == [(c, i) for _, c, i in BAD_LINES]
    assert all(r["error"]["message"].startswith(("Parse error: ", "Invalid request: ")) for r in errors)
    assert [r["id"] for r in replies if "result" in r] == [100 + n for n in range(len(BAD_LINES))]
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.close()
    assert proc.wait(30) == 0
    stderr = proc.stderr.read()
    assert "Traceback" not in stderr
    logged = [x for x in stderr.splitlines() if x.strip()]
    assert len(logged) == len(BAD_LINES), stderr
    assert all(x.startswith(("gmtool serve: WARNING: PARSE_ERROR: ", "gmtool serve: WARNING: INVALID_REQUEST: "))
               for x in logged), stderr


def _interrupted(proc: subprocess.Popen[str], within: float) -> str:
    assert proc.stderr is not None
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        code = proc.wait(within + 10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("gmtool serve ignored Ctrl-C")
    took = time.monotonic() - start
    stderr = proc.stderr.read()
    assert code == 130, stderr
    assert took < within, took
    assert "Traceback" not in stderr and "INTERNAL_ERROR" not in stderr, stderr
    return stderr


def test_ctrl_c_stops_an_idle_server_with_130(lib: Path, tmp_path: Path) -> None:
    """It used to wait for a line on stdin that never came (9 of 13 tries in issue 25)."""
    proc = _started(lib, tmp_path)
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
    _until(proc, 2)
    assert "interrupted" in _interrupted(proc, within=5)


def test_ctrl_c_during_a_long_call_still_exits_130(lib: Path, tmp_path: Path) -> None:
    """A scan runs in a thread that cannot be cancelled: the server gives it GRACE_S, then goes."""
    proc = _started(lib, tmp_path, scan_delay=60)
    _send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "scan_library", "arguments": {"embed": False}}})
    time.sleep(0.5)
    _interrupted(proc, within=GRACE_S + 5)


def test_a_piped_script_gets_every_answer_though_stdin_closes_at_once(lib: Path, tmp_path: Path) -> None:
    """`printf '…' | gmtool serve` closes stdin before the server has answered: the SDK used to
    cancel the calls in flight then ("Connection closed", or no answer at all)."""
    proc = _serve(lib, tmp_path, scan_delay=1.0)  # a call still running when the input ends
    calls = [INIT, INITIALIZED, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
             {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
              "params": {"name": "scan_library", "arguments": {}}},
             {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
              "params": {"name": "search_library", "arguments": {"query": "fog veil"}}}]
    out, err = proc.communicate("".join(json.dumps(c) + "\n" for c in calls), timeout=120)
    assert proc.returncode == 0, err
    replies = {r["id"]: r for r in map(json.loads, out.splitlines())}
    assert sorted(replies) == [1, 2, 3, 4], out
    assert all("result" in r for r in replies.values()), out
    assert "scan_library" in {t["name"] for t in replies[2]["result"]["tools"]}
    assert not replies[3]["result"].get("isError"), replies[3]
