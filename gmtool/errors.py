"""One exception hierarchy for the whole engine.

The CLI and the MCP server each render a GmtoolError in exactly one place, so every
failure a user can meet carries a stable code, a one-line message and a suggested fix.
"""

from __future__ import annotations

# Exit codes are part of the public interface (documented in --help and the man page).
EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3


class GmtoolError(Exception):
    """A failure the user can act on: a stable code, what went wrong, and what to do."""

    code: str = "ERROR"
    exit_code: int = EXIT_ERROR

    def __init__(self, code: str, message: str, hint: str = "", exit_code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        if exit_code is not None:
            self.exit_code = exit_code

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class UsageError(GmtoolError):
    """Bad input from the caller (a query, a filter, a path): exit code 2."""

    exit_code = EXIT_USAGE


class ExtractError(GmtoolError):
    """One file could not be read; a scan records it and carries on with the rest."""


class IndexError_(GmtoolError):
    """The on-disk index is missing, locked, corrupt or of another format version."""
