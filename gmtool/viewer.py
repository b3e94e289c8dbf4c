"""Open a book in the user's viewer at a section or a page.

The command comes from $GMTOOL_PDF_VIEWER (a template with {path} and {page}; read once into
the engine's Settings; run with no shell, each field one argument, or shell-quoted inside a
`sh -c` script), else the first
viewer found on PATH that can jump to a page (zathura, evince, okular), else the desktop's
generic opener (xdg-open / open), which cannot. Markdown and text files always go to the
generic opener. Nothing here prints: the CLI decides what to show.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gmtool.errors import GmtoolError, UsageError
from gmtool.settings import ENV_VIEWER

if TYPE_CHECKING:
    from gmtool.engine import Engine
    from gmtool.types import SourceMeta

# Viewers that can open a PDF at a physical (1-based) page, in order of preference.
# evince's -p means a page *label*; -i is the physical page index, which is what gmtool stores.
PAGE_VIEWERS: list[tuple[str, list[str]]] = [
    ("zathura", ["zathura", "-P", "{page}", "{path}"]),
    ("evince", ["evince", "-i", "{page}", "{path}"]),
    ("okular", ["okular", "-p", "{page}", "{path}"]),
]

VIEWER_HINT = "set GMTOOL_PDF_VIEWER, e.g. 'zathura -P {page} {path}'"


def _fallback_opener() -> list[str] | None:
    """The desktop's generic opener; it has no way to pick a page."""
    names = ["open"] if sys.platform == "darwin" else ["xdg-open"]
    for name in names:
        if shutil.which(name):
            return [name, "{path}"]
    return None


# Programs whose `-c` argument is a shell script: a field substituted there is shell-quoted, so a
# book named `$(touch pwned).pdf` stays one word. Anywhere else a field is one argv element already
# (the viewer runs with no shell), and quoting it would put quote characters in the file name.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_FIELD = re.compile(r"""(['"]?)\{(path|page)\}\1""")  # a field, with the quotes a template may put around it


def _script_args(template: list[str]) -> set[int]:
    """The positions of shell scripts in the template: the argument after a shell's -c (or -ec, -lc ...)."""
    out: set[int] = set()
    shell = False
    for i, arg in enumerate(template):
        if Path(arg).name in SHELLS:
            shell = True
        elif shell and arg.startswith("-") and not arg.startswith("--") and "c" in arg and i + 1 < len(template):
            out.add(i + 1)
            shell = False
    return out


def _fill(template: list[str], path: str, page: int) -> list[str]:
    """The template with its fields filled in, each one word: as it is in an argv element, shell-quoted
    (replacing any quotes the template put around the field) in a shell script."""
    values = {"path": path, "page": str(page)}
    scripts = _script_args(template)
    out = []
    for i, arg in enumerate(template):
        if i in scripts:
            out.append(_FIELD.sub(lambda m: shlex.quote(values[m.group(2)]), arg))
        else:
            out.append(arg.replace("{path}", path).replace("{page}", values["page"]))
    return out


def _user_template(viewer: str) -> list[str]:
    """The $GMTOOL_PDF_VIEWER template as argv, with {path} appended when it has none."""
    try:
        template = shlex.split(viewer)
    except ValueError as exc:
        raise UsageError("INVALID_VIEWER", f"cannot parse ${ENV_VIEWER} ({exc}): {viewer}", VIEWER_HINT) from None
    if not template:
        raise UsageError("INVALID_VIEWER", f"${ENV_VIEWER} is empty", VIEWER_HINT)
    if not any("{path}" in a for a in template):
        template.append("{path}")
    return template


def build_command(path: str, page: int, is_pdf: bool = True, viewer: str = "") -> tuple[str, list[str], bool]:
    """(viewer name, argv, whether the page reaches the viewer) for one file.

    `viewer` is the user's template (Settings.pdf_viewer; "" for none). Raises VIEWER_NOT_FOUND when
    no viewer at all can be found.
    """
    if is_pdf:
        if viewer:
            template = _user_template(viewer)
            return template[0], _fill(template, path, page), any("{page}" in a for a in template)
        for name, template in PAGE_VIEWERS:
            if shutil.which(name):
                return name, _fill(template, path, page), True
    opener = _fallback_opener()
    if opener is None:
        what = "PDF viewer" if is_pdf else "program to open the file with"
        raise GmtoolError(
            "VIEWER_NOT_FOUND",
            f"no {what} found (looked for {ENV_VIEWER}, zathura, evince, okular, xdg-open/open)",
            VIEWER_HINT,
        )
    return opener[0], _fill(opener, path, page), False


def _file_path(engine: Engine, meta: SourceMeta) -> Path:
    """The indexed absolute path, or the same file under the current library root if it moved."""
    candidates = [Path(meta.path), Path(engine.paths.library) / meta.file]
    for p in candidates:
        if p.is_file():
            return p
    raise GmtoolError(
        "FILE_NOT_FOUND",
        f"{meta.path} no longer exists",
        "the file was moved or deleted since it was indexed; run `gmtool scan` to refresh the index",
    )


def open_at(
    engine: Engine, source: str, title: str | None = None, page: int | None = None, dry_run: bool = False
) -> dict[str, Any]:
    """Resolve SOURCE (and TITLE's page), build the viewer command and, unless dry_run, launch it detached."""
    sid = engine.source_id(source)
    meta = engine.library().metas[sid]
    chapter = meta.files[0] if meta.files else None  # a folder book opens at a chapter file
    if title is not None:
        found = engine.read(sid, title=title, max_chars=1)
        page = found.page or 1  # Markdown/text: no page
        chapter = found.file if meta.files else None
    elif page is None:
        page = 1
    elif page < 1 or (meta.pages and page > meta.pages):
        raise UsageError(
            "INVALID_PAGE", f"{sid} has pages 1–{meta.pages}, not {page}", f"pick a page between 1 and {meta.pages}"
        )
    path = str(Path(engine.paths.library) / chapter if chapter else _file_path(engine, meta))
    try:
        viewer, argv, page_supported = build_command(path, page, meta.format == "pdf", engine.settings.pdf_viewer)
    except GmtoolError as exc:
        if not dry_run or exc.code != "VIEWER_NOT_FOUND":
            raise
        viewer, argv, page_supported = "", [], False  # a dry run still tells where it would open
    if not dry_run:
        try:
            subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise GmtoolError("VIEWER_FAILED", f"could not run {argv[0]}: {exc}", VIEWER_HINT) from None
    return {
        "source_id": sid,
        "path": path,
        "page": page,
        "viewer": viewer,
        "command": argv,
        "command_line": shlex.join(argv) if argv else None,
        "page_supported": page_supported,
    }
