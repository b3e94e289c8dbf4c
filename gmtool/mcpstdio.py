"""The stdio wire of `gmtool serve`: lines in, framing errors answered, Ctrl-C obeyed.

The MCP SDK's stdio transport drops a line that is no JSON-RPC message without a word, so a
client waits forever for the answer. Here each line is checked before the SDK sees it:
unparsable input gets -32700 (parse error) and a malformed message -32600 (invalid request),
with the message's id when it has one, as JSON-RPC 2.0 asks; good lines go on unchanged.

The lines are read by a daemon thread, so nothing waits on a blocked read: not Ctrl-C, which
cancels the server, gives the calls in flight GRACE_S to finish and ends the process with
exit code 130, and not the exit after stdin closes.

When stdin closes, the SDK cancels the calls in flight and answers them "Connection closed". A
script that pipes its requests in (`printf '…' | gmtool serve`) closes stdin at once and still
reads stdout, so the end of input is passed on only once every request read has its answer
(or DRAIN_S has passed, or the client cancelled it).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import anyio.from_thread
import anyio.lowlevel
from mcp.shared.message import SessionMessage
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

from gmtool.present.mcpout import error_line

if TYPE_CHECKING:
    from anyio.abc import ObjectSendStream
    from fastmcp import FastMCP

log = logging.getLogger("gmtool.mcp")

MAX_LINE = 16 << 20  # bytes in one message: tool arguments are small, a longer line is hostile or broken
GRACE_S = 2.0  # after Ctrl-C, what calls in flight (a scan) get to finish before the process ends anyway
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C
DRAIN_S = 600.0  # after stdin closes, how long the requests read before it get to be answered (a scan)


_TITLES = {PARSE_ERROR: ("PARSE_ERROR", "Parse error"), INVALID_REQUEST: ("INVALID_REQUEST", "Invalid request")}


def check_line(line: str) -> JSONRPCError | None:
    """None for a JSON-RPC message the SDK can take; else the error answer it is owed."""
    try:
        msg = jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:
        why = exc.errors()[0]["msg"] if exc.errors() else str(exc)
    else:
        if not isinstance(msg, JSONRPCNotification) or '"id"' not in line or "id" not in json.loads(line):
            return None
        # an id the SDK could not read (true, 1.5, null) made a request a notification: never answered
        return _error(None, INVALID_REQUEST, "the id must be a string or an integer")
    try:
        data = json.loads(line)
    except ValueError:  # JSONDecodeError, or a number too deep to parse
        return _error(None, PARSE_ERROR, f"the line is not JSON ({why})")
    rid = data.get("id") if isinstance(data, dict) else None
    if isinstance(rid, bool) or not isinstance(rid, (int, str)):
        rid = None  # JSON-RPC: the id is null when it cannot be read
    what = "a batch (an array)" if isinstance(data, list) else "not a JSON-RPC 2.0 request, notification or response"
    return _error(rid, INVALID_REQUEST, what)


def _error(rid: int | str | None, code: int, reason: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=rid, error=ErrorData(code=code, message=f"{_TITLES[code][1]}: {reason}"))


def _raw_lines(wire: BinaryIO) -> Iterator[bytes | None]:
    """The wire's lines; None for one longer than MAX_LINE, whose bytes are read and dropped."""
    while line := wire.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):
                line = wire.readline(MAX_LINE + 1)
            yield None
        else:
            yield line


def _key(rid: object) -> str:
    return json.dumps(rid)


class CheckedStdin:
    """stdin as the SDK's transport reads it (`async for line in stdin`), each line checked first."""

    def __init__(self, wire: BinaryIO) -> None:
        self._wire = wire
        self._send, self._receive = anyio.create_memory_object_stream[bytes | None](0)
        self._reply: ObjectSendStream[SessionMessage] | None = None
        self._pending: set[str] = set()  # ids of the requests passed on and not yet answered
        self._answered = anyio.Event()

    def answered(self, rid: object) -> None:
        """The server answered request `rid` (see Answers)."""
        self._pending.discard(_key(rid))
        self._answered.set()

    def _note(self, line: str) -> None:
        """A request passed on waits for its answer; a client's cancellation ends the wait."""
        with contextlib.suppress(ValueError):
            msg = json.loads(line)
            if isinstance(msg, dict) and "method" in msg:
                if "id" in msg:
                    self._pending.add(_key(msg["id"]))
                elif msg["method"] == "notifications/cancelled" and isinstance(msg.get("params"), dict):
                    self._pending.discard(_key(msg["params"].get("requestId")))

    async def _drain(self) -> None:
        """Wait until every request read has its answer, at most DRAIN_S."""
        with anyio.move_on_after(DRAIN_S):
            while self._pending:
                self._answered = anyio.Event()
                await self._answered.wait()

    def start(self, reply: ObjectSendStream[SessionMessage]) -> None:
        """Start reading; error answers go to `reply` (the transport's outgoing stream)."""
        self._reply = reply
        token = anyio.lowlevel.current_token()
        threading.Thread(target=self._pump, args=(token,), name="gmtool-stdin", daemon=True).start()

    def _pump(self, token: Any) -> None:
        try:
            for raw in _raw_lines(self._wire):
                anyio.from_thread.run(self._send.send, raw, token=token)
            anyio.from_thread.run_sync(self._send.close, token=token)
        except Exception as exc:  # noqa: BLE001 - the server stopped listening (or stdin broke): stop reading
            log.debug("stdin reader stopped: %r", exc)

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        async with self._receive:
            async for raw in self._receive:
                if raw is None:
                    await self._answer(_error(None, INVALID_REQUEST, f"the line is longer than {MAX_LINE} bytes"))
                    continue
                line = raw.decode("utf-8", errors="replace")
                if not line.strip():
                    continue  # a blank line is no message
                error = check_line(line)
                if error is None:
                    self._note(line)
                    yield line
                else:
                    await self._answer(error)
        await self._drain()

    async def _answer(self, error: JSONRPCError) -> None:
        name, title = _TITLES[error.error.code]
        reason = error.error.message.removeprefix(f"{title}: ")
        log.warning("%s", error_line(name, f"{reason}; answered {error.error.code} to id {json.dumps(error.id)}"))
        if self._reply is not None:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._reply.send(SessionMessage(error))


class Answers:
    """The server's outgoing stream as the SDK writes to it, telling CheckedStdin each answer."""

    def __init__(self, inner: ObjectSendStream[SessionMessage], stdin: CheckedStdin) -> None:
        self._inner = inner
        self._stdin = stdin

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        msg = getattr(item.message, "root", item.message)
        if isinstance(msg, (JSONRPCResponse, JSONRPCError)) and msg.id is not None:
            self._stdin.answered(msg.id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def __aenter__(self) -> Answers:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self._inner.__aexit__(*exc)


def _claim_stdin() -> tuple[BinaryIO, int | None]:
    """(a private handle on the wire, fd 0's saved copy). fd 0 then reads the null device, so
    nothing else in the process, nor a child it starts, can take a message off the wire."""
    try:
        wire = os.dup(0)
    except OSError:
        return sys.stdin.buffer, None
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    except OSError:
        pass
    return os.fdopen(os.dup(wire), "rb"), wire


def _exit_now(*_: Any) -> None:
    """End the process now, taking its extraction workers along (a scan still running in a
    thread cannot be cancelled); the index survives this as it survives a kill."""
    import multiprocessing

    for child in multiprocessing.active_children():
        with contextlib.suppress(Exception):
            child.kill()
    with contextlib.suppress(Exception):
        sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


async def _watch_interrupt(stop: anyio.CancelScope, interrupted: list[bool]) -> None:
    """The first Ctrl-C cancels the server; a second one, or GRACE_S later, ends the process."""
    try:
        with anyio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                interrupted.append(True)
                break
    except NotImplementedError:  # no signal handling on this event loop (Windows): Ctrl-C raises
        return
    # Past the receiver, Ctrl-C raises KeyboardInterrupt again: make the next one final.
    signal.signal(signal.SIGINT, _exit_now)
    timer = threading.Timer(GRACE_S, _exit_now)
    timer.daemon = True
    timer.start()
    stop.cancel()


async def _serve(mcp: FastMCP, interrupted: list[bool]) -> None:
    from fastmcp.server.context import reset_transport, set_transport
    from mcp.server.stdio import stdio_server

    wire, saved = _claim_stdin()
    stdin = CheckedStdin(wire)
    token = set_transport("stdio")
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_interrupt, tg.cancel_scope, interrupted)
            async with mcp._lifespan_manager(), stdio_server(stdin=stdin) as (read, write):  # type: ignore[arg-type]
                stdin.start(write)
                server = mcp._mcp_server
                await server.run(read, Answers(write, stdin), server.create_initialization_options())  # type: ignore[arg-type]
            tg.cancel_scope.cancel()  # stdin closed: stop watching for Ctrl-C
    finally:
        reset_transport(token)
        if saved is not None:
            with contextlib.suppress(OSError):
                os.dup2(saved, 0)


def _only_interrupts(exc: BaseException) -> bool:
    """A KeyboardInterrupt or cancellation, alone or grouped by a task group (an ExceptionGroup
    of them once reached the CLI as INTERNAL_ERROR)."""
    if isinstance(exc, (KeyboardInterrupt, anyio.get_cancelled_exc_class())):
        return True
    inner = getattr(exc, "exceptions", None)
    return isinstance(inner, tuple) and bool(inner) and all(_only_interrupts(e) for e in inner)


def serve_stdio(mcp: FastMCP) -> bool:
    """Serve over stdio until stdin closes (False) or Ctrl-C (True)."""
    interrupted: list[bool] = []
    try:
        anyio.run(_serve, mcp, interrupted)
    except BaseException as exc:
        if not _only_interrupts(exc):
            raise
        return True
    return bool(interrupted)
