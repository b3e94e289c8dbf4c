"""The terminal way in: parse, call the Engine, hand the result to a presenter.

Nothing heavy is imported at module level, so `gmtool --help` and `gmtool ls` start fast;
errors are rendered in exactly one place (`_handle`).

No `from __future__ import annotations` here: typer reads every command's signature at start-up,
and real annotation objects spare it evaluating each string again (~4 ms a run).
"""

import contextlib
import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional, TypeVar

# numpy's OpenBLAS starts one thread per core at import (~50 ms here); gmtool's matrix work is a
# single small product per query, so one BLAS thread is faster overall. A user's setting wins.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import typer
from typer.core import TyperGroup

from gmtool import __version__
from gmtool.errors import EXIT_ERROR, EXIT_PARTIAL, GmtoolError

# --- option values without pydantic -----------------------------------------------------------
# typer 0.29 converts every option value through a pydantic TypeAdapter, and importing pydantic
# costs ~120 ms: more than a whole search. gmtool's options are plain str, int, float and Path
# values, flags (or lists of them), which `_PlainValue` converts and range-checks itself; any other
# declaration keeps typer's own conversion. tests/test_startup.py fails if pydantic comes back.

_PLAIN_KINDS = (str, bool, int, float, Path)
_BOOLS = {"1": True, "true": True, "yes": True, "on": True, "0": False, "false": False, "no": False, "off": False}


def _convert(kind: type, value: Any, lo: float | None, hi: float | None) -> Any:
    """One command-line value as `kind`; ValueError with click's wording when it does not fit."""
    if kind is str:
        return os.fsdecode(value) if isinstance(value, bytes) else str(value)
    if kind is Path:
        return value if isinstance(value, Path) else Path(os.fsdecode(value))
    if kind is bool:
        if isinstance(value, bool):
            return value
        if str(value).strip().lower() not in _BOOLS:
            raise ValueError(f"{value!r} is not a valid boolean.")
        return _BOOLS[str(value).strip().lower()]
    try:
        num = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{value!r} is not a valid {'integer' if kind is int else 'number'}.") from None
    if kind is float and not math.isfinite(num):
        raise ValueError(f"{value!r} is not a finite number.")
    if (lo is not None and num < lo) or (hi is not None and num > hi):
        bounds = f"{lo}<=x<={hi}" if lo is not None and hi is not None else f"x>={lo}" if lo is not None else f"x<={hi}"
        raise ValueError(f"{value} is not in the range {bounds}.")
    return num


class _PlainValue:
    """Stands in for typer's pydantic-backed converter of one parameter (same `coerce` contract)."""

    def __init__(self, kind: type, many: bool, lo: float | None, hi: float | None) -> None:
        self.kind, self.many, self.lo, self.hi = kind, many, lo, hi

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:
            return () if multi else None
        try:
            if self.many:
                if isinstance(value, str):
                    raise ValueError("Value must be an iterable.")
                items = value if isinstance(value, (list, tuple)) else [value]
                return [_convert(self.kind, v, self.lo, self.hi) for v in items]
            return _convert(self.kind, value, self.lo, self.hi)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), ctx=ctx, param=param) from None


def _plain_value(param: Any) -> _PlainValue | None:
    """A converter for a plain parameter, or None to leave it to typer."""
    desc = getattr(param, "type_descriptor", None)
    info = getattr(desc, "parameter_info", None)
    if desc is None or info is None or not hasattr(param, "_runtime_param"):
        return None  # another typer: nothing to replace
    kind, many = desc.annotation, False
    if getattr(kind, "__origin__", None) is list and len(kind.__args__) == 1:
        kind, many = kind.__args__[0], True
    if kind not in _PLAIN_KINDS or info.parser is not None or getattr(info, "clamp", False):
        return None
    if kind is Path and (info.exists or info.resolve_path or info.allow_dash or info.path_type or info.writable
                         or not (info.file_okay and info.dir_okay)):
        return None
    return _PlainValue(kind, many, info.min, info.max)


def _lighten(params: list[Any]) -> list[Any]:
    for param in params:
        if getattr(param, "_runtime_param", True) is None and (plain := _plain_value(param)) is not None:
            param._runtime_param = plain
    return params


# --- usage errors in gmtool's own shape ----------------------------------------------------------

_USAGE_CODES: tuple[tuple[type, str], ...] = (
    (typer._click.exceptions.MissingParameter, "MISSING_ARGUMENT"),
    (typer._click.exceptions.NoSuchOption, "UNKNOWN_OPTION"),
    (typer.BadParameter, "INVALID_ARGUMENT"),
)


def _show_usage_error(exc: Any) -> None:
    """A bad option or argument as one `error CODE:` line and a hint, like every other error."""
    if isinstance(exc, typer._click.exceptions.NoArgsIsHelpError):
        exc.show()
        return
    code = next((c for t, c in _USAGE_CODES if isinstance(exc, t)), "USAGE_ERROR")
    if code == "USAGE_ERROR" and exc.message.startswith("No such command"):
        code = "UNKNOWN_COMMAND"
    cmd = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "gmtool"
    _error_line(code, exc.format_message(), f"see `{cmd} --help`")


class _Group(TyperGroup):
    """The gmtool command group: plain option conversion, and click's usage errors rendered as
    gmtool errors (exit 2, a stable code and a hint) instead of click's usage block."""

    def get_params(self, ctx: Any) -> list[Any]:
        return _lighten(super().get_params(ctx))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _lighten(cmd.get_params(ctx))
        return cmd

    def main(self, args: Any = None, prog_name: Any = None, complete_var: Any = None,  # type: ignore[override]
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except typer._click.exceptions.UsageError as exc:
            _show_usage_error(exc)
            sys.exit(exc.exit_code)
        except typer._click.exceptions.ClickException as exc:
            exc.show()
            sys.exit(exc.exit_code)
        except typer.Abort:
            typer.echo("Aborted!", err=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


EXIT_CODES = """Exit codes: 0 ok, 1 error, 2 bad usage or bad query, 3 partial failure (some files failed in a scan)."""

ENV_HELP = (
    "Environment: GMTOOL_LIBRARY (default library), GMTOOL_INDEX_DIR (index location, default LIBRARY/.gmtool), "
    "GMTOOL_CONFIG_DIR, GMTOOL_CACHE_DIR, GMTOOL_MODEL / GMTOOL_TOKENIZER (another ONNX embedding model), "
    "GMTOOL_PDF_VIEWER (viewer command template with {path} and {page}), GMTOOL_DEBUG=1 (tracebacks)."
)

app = typer.Typer(
    name="gmtool",
    help=(
        "Find anything in your tabletop RPG rulebooks (PDF, Markdown, text) by title, by type or by a "
        "plain-language question, and get the book and the page.\n\n"
        "Quick start: gmtool scan ~/rpg, then gmtool search fireball, or gmtool ask \"what happens when I fall\".\n\n"
        f"{EXIT_CODES}\n\n{ENV_HELP}"
    ),
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
)

F = TypeVar("F", bound=Callable[..., Any])

MAX_LIMIT = 1000  # a result list longer than this is a dump, not an answer

_state: dict[str, Any] = {"debug": False, "settings": None}  # set per invocation by _main

# --- shell completion: book ids, types and fixed values ------------------------------------------------


def _complete_sources(ctx: typer.Context, incomplete: str) -> list[str]:
    """The ids of the library's books (the --library given so far, else the default library)."""
    try:
        from gmtool.engine import Engine
        from gmtool.settings import Settings

        eng = Engine(ctx.params.get("library"), settings=Settings.from_env())
        ids = [m.source_id for m in eng.sources()] if eng.has_index() else []
    except Exception:  # noqa: BLE001 - completion must never print an error into the shell
        return []
    return [i for i in ids if i.startswith(incomplete)]


def _complete_types(incomplete: str) -> list[str]:
    from gmtool.types import CONTENT_TYPES

    return [t for t in CONTENT_TYPES if t.startswith(incomplete)]


def _complete_fields(incomplete: str) -> list[str]:
    from gmtool.fieldspec import FIELD_TYPES

    return [f"{f}=" for f in FIELD_TYPES if f.startswith(incomplete)]


def _choices(*values: str) -> Callable[[str], list[str]]:
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


DEVICES = _choices("auto", "cpu", "cuda")

LibraryOpt = typer.Option(
    None, "--library", "-L", metavar="DIR", help="Library folder (default: $GMTOOL_LIBRARY, the last scanned library, or the cwd)."
)
JsonOpt = typer.Option(False, "--json", help="Print one JSON document on stdout (nothing else).")
AllCopiesOpt = typer.Option(
    False, "--all-copies", help="Show every book's copy of an entry as its own row (default: one row, with 'also in')."
)
TypeOpt = typer.Option(
    None, "--type", "-t", metavar="TYPE", autocompletion=_complete_types,
    help="Only this content type (repeatable): class, subclass, race, background, feat, spell, monster, item, "
    "condition, rule.",
)
SourceOpt = typer.Option(None, "--source", "-s", metavar="SOURCE", autocompletion=_complete_sources, help="Only this book: id, a unique start of it, file name or title (repeatable; see `gmtool ls`).")
GroupOpt = typer.Option(False, "--group", "-g", help="One table per book, in order of its best result (default: one ranked list).")
WhereOpt = typer.Option(
    None, "--where", "-w", metavar="EXPR", autocompletion=_complete_fields,
    help="Filter on typed fields (repeatable): level=3, school=evocation, cr<=5, rarity=rare, level=1..3.",
)


def _err_console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def _out_console() -> Any:
    from rich.console import Console

    return Console(highlight=False)


def _warn(messages: list[str]) -> None:
    if not messages:
        return
    from rich.markup import escape

    from gmtool.present.terminal import line

    con = _err_console()
    for m in messages:
        con.print(f"[yellow]warning:[/] {escape(line(m))}")


def _error_line(code: str, message: str, hint: str = "") -> None:
    """Every error the user sees: `error CODE: message` and a hint, file text made printable."""
    from rich.markup import escape

    from gmtool.present.terminal import line

    con = _err_console()
    con.print(f"[bold red]error {escape(line(code))}:[/] {escape(line(message))}")
    if hint:
        con.print(f"[dim]hint: {escape(line(hint))}[/]")


def _handle(fn: F) -> F:
    """The single place where GmtoolError becomes one red line, a hint and an exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except GmtoolError as exc:
            if _state["debug"]:
                raise
            _error_line(exc.code, exc.message, exc.hint)
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err_console().print("[yellow]interrupted[/]")
            raise typer.Exit(130) from None
        except (typer.Exit, typer.Abort, SystemExit):
            raise
        except Exception as exc:  # a bug: say so in one line unless --debug asks for the traceback
            if _state["debug"]:
                raise
            _error_line("INTERNAL_ERROR", f"{type(exc).__name__}: {exc}",
                        "rerun with `gmtool --debug …` for the traceback, and please report it")
            raise typer.Exit(EXIT_ERROR) from None

    return wrapper  # type: ignore[return-value]


def _engine(library: Optional[Path]) -> Any:
    from gmtool.engine import Engine

    return Engine(library, settings=_state["settings"])


def _print_json(obj: Any) -> None:
    from gmtool.present.jsonout import dumps

    sys.stdout.write(dumps(obj) + "\n")
    sys.stdout.flush()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gmtool {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True, help="Show the version."),
    debug: bool = typer.Option(False, "--debug", help="Show full tracebacks on errors."),
) -> None:
    import dataclasses

    from gmtool.settings import Settings

    settings = Settings.from_env()  # the one read of the environment; passed down via the Engine
    _state["settings"] = dataclasses.replace(settings, debug=True) if debug else settings
    _state["debug"] = _state["settings"].debug


def _progress_cb(enabled: bool) -> tuple[Any, Callable[[int, int, str], None] | None]:
    """A rich progress bar on stderr, only when stderr is a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None, None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("[dim]{task.fields[detail]}"), console=_err_console(), transient=True)
    tasks: dict[str, Any] = {}

    def cb(done: int, total: int, message: str) -> None:
        phase = "embedding" if message.startswith("embedding") else "indexing"
        if phase not in tasks:
            tasks[phase] = prog.add_task(phase.capitalize(), total=total or None, detail="")
        prog.update(tasks[phase], completed=done, total=total or None, detail=message[:40])

    return prog, cb


def _notice(message: str) -> None:
    """News while a command runs (it waits for another writer): one line on stderr, at once."""
    from rich.markup import escape

    _err_console().print(f"[yellow]{escape(message)}[/]")


def _report_exit(report: Any, as_json: bool) -> None:
    if as_json:
        _print_json(report)
    else:
        from gmtool.present.table import render_scan

        _warn(report.warnings)
        render_scan(_out_console(), report)
    if report.failed:
        raise typer.Exit(EXIT_PARTIAL)
    if report.files_found == 0:  # NO_BOOKS: a scan of the wrong folder is a failure a script must see
        raise typer.Exit(EXIT_ERROR)


@app.command()
@_handle
def scan(
    directory: Optional[Path] = typer.Argument(None, help="Folder of rulebooks (default: the current library)."),
    force: bool = typer.Option(False, "--force", "-f", help="Re-index every file, changed or not."),
    no_embed: bool = typer.Option(False, "--no-embed", help="Skip the sentence embeddings (keyword search only)."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", metavar="N", min=1, help="Extraction processes (default: CPU count, or 1 for a small job; at most the cores available)."),
    device: str = typer.Option("auto", "--device", metavar="auto|cpu|cuda", autocompletion=DEVICES, help="Embedding device: auto (a usable GPU, else the CPU), cpu or cuda."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Discover, extract and index every .pdf/.md/.markdown/.txt below DIR (recursively).

    Unchanged files are skipped; deleted files are dropped; one bad file never stops the scan.
    Search works as soon as the text is indexed; sentence embeddings follow, book by book.
    Exit code 3 when some files failed.

    A folder of Markdown chapter files is one book (numbered chapter files or folders, an index page
    with sections, a contents page, a site's pages or a vault's notes from one template, or a
    `.gmtool-book` file in the folder): one row in `ls`, one id, one table of contents; results still
    name the chapter file and line. A changed chapter is re-read alone.
    """
    from gmtool.errors import UsageError

    target = directory or library
    if directory is not None and not directory.is_dir():
        raise UsageError("INVALID_PATH", f"{directory} is not a directory", "pass the folder holding your rulebooks")
    eng = _engine(target)
    prog, cb = _progress_cb(not as_json)
    if prog:
        with prog:
            report = eng.scan(force=force, embed=not no_embed, workers=workers, device=device, progress=cb,
                              notice=_notice)
    else:
        report = eng.scan(force=force, embed=not no_embed, workers=workers, device=device, notice=_notice)
    _report_exit(report, as_json)


@app.command("index")
@_handle
def index_cmd(
    files: Optional[list[Path]] = typer.Argument(None, help="Index exactly these files (default: the library)."),
    include: Optional[list[str]] = typer.Option(None, "--include", help="Glob of files to index (repeatable)."),
    exclude: Optional[list[str]] = typer.Option(None, "--exclude", help="Glob of files to skip (repeatable)."),
    types: Optional[str] = typer.Option(None, "--types", help="File types to index, e.g. .pdf,.md"),
    max_files: int = typer.Option(250_000, "--max-files", metavar="N", min=1, help="Cap on files in one run."),
    force: bool = typer.Option(False, "--force", "-f", help="Re-index even unchanged files."),
    force_clean: bool = typer.Option(False, "--force-clean", help="Wipe the index directory and rebuild it."),
    verify: bool = typer.Option(False, "--verify", help="Report missing, stale, orphaned and corrupt entries; change nothing."),
    workers: Optional[int] = typer.Option(None, "--workers", "-j", metavar="N", min=1, help="Extraction processes (default: CPU count, or 1 for a small job; at most the cores available)."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Fail with INDEX_LOCKED instead of waiting for another writer."),
    no_embed: bool = typer.Option(False, "--no-embed", help="Skip the sentence embeddings."),
    device: str = typer.Option("auto", "--device", metavar="auto|cpu|cuda", autocompletion=DEVICES, help="Embedding device: auto (a usable GPU, else the CPU), cpu or cuda."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Targeted, resumable indexing: chosen files, globs, verification and clean rebuilds.

    `--verify` exits 0 only when the index is healthy (1 otherwise).
    """
    eng = _engine(library)
    if verify:
        rep = eng.verify()
        if as_json:
            _print_json(rep)
        else:
            from gmtool.present.table import render_verify

            render_verify(_out_console(), rep)
        raise typer.Exit(0 if rep.healthy else EXIT_ERROR)
    prog, cb = _progress_cb(not as_json)
    kw: dict[str, Any] = {
        "include": include, "exclude": exclude, "types": [types] if types else None, "max_files": max_files, "force": force,
        "workers": workers, "wait": not no_wait, "embed": not no_embed, "device": device, "progress": cb,
        "notice": _notice,
    }
    if prog:
        with prog:
            report = eng.index(files=files or None, force_clean=force_clean, **kw)
    else:
        report = eng.index(files=files or None, force_clean=force_clean, **kw)
    _report_exit(report, as_json)


@app.command("ls")
@_handle
def ls_cmd(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also print the resolved library and index paths."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """List the indexed books: id, title, pages, entries per type, outline, indexed time."""
    eng = _engine(library)
    sources = eng.sources() if eng.has_index() else []
    problems = eng.book_problems()
    if as_json:
        from dataclasses import asdict

        from gmtool.present.jsonout import source_dict

        data: dict[str, Any] = {"sources": [source_dict(m) for m in sources]}
        if sources:
            data["embeddings"] = eng.embedding_status()
        if problems:
            data["problems"] = [asdict(p) for p in problems]
        if verbose:
            data["paths"] = {"library": str(eng.paths.library), "index_dir": str(eng.paths.index_dir),
                             "library_from": eng.paths.library_from, "config_file": str(eng.paths.config_file)}
        _print_json(data)
        return
    from gmtool.present.table import render_sources

    con = _out_console()
    if verbose:
        from rich.markup import escape

        from gmtool.present.terminal import line

        p = eng.paths
        lib, idx, cfg = (escape(line(x)) for x in (p.library, p.index_dir, p.config_file))
        con.print(f"library:   {lib}  [dim](from {p.library_from})[/]\nindex dir: {idx}\nconfig:    {cfg}\n")
    render_sources(con, sources, verbose, problems)
    if sources:
        con.print(_embedding_line(eng.embedding_status()))


def _embedding_line(st: dict[str, Any]) -> str:
    """One line under `ls`: are the sentence vectors (used by `ask`) complete?"""
    done, books, wait = st["books_embedded"], st["books"], st["sections_waiting"]
    if st["space"] is None:
        return "[dim]Embeddings: none (ask ranks by keywords only; `gmtool scan` without --no-embed adds them)[/]"
    if not wait:
        return f"[dim]Embeddings: all {books} books ({st['device']})[/]"
    return (f"[yellow]Embeddings: {done}/{books} books; {wait:,} sections wait[/] "
            "(ask uses keywords for those; `gmtool scan` embeds them)")


@app.command()
@_handle
def toc(
    source: str = typer.Argument(..., autocompletion=_complete_sources,
                                 help="The book: its id, a unique start of it, file name or title (see `gmtool ls`)."),
    depth: Optional[int] = typer.Option(None, "--depth", "-d", metavar="N", min=1, help="Show at most this many levels."),
    type_: Optional[list[str]] = TypeOpt,
    where: Optional[list[str]] = WhereOpt,
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """A book's table of contents as a tree, with pages and content types."""
    res = _engine(library).toc(source, depth=depth, types=type_, where=where)
    if as_json:
        _print_json(res)
        return
    from gmtool.present.table import render_toc

    render_toc(_out_console(), res)


def _source_paths(eng: Any) -> dict[str, str]:
    lib = eng.library()
    return {sid: m.path for sid, m in lib.metas.items()}


@app.command()
@_handle
def search(
    query: Optional[list[str]] = typer.Argument(
        None, metavar="QUERY", help="Words to look for (a name, a term). May be left out when --type or --where is given."
    ),
    type_: Optional[list[str]] = TypeOpt,
    source: Optional[list[str]] = SourceOpt,
    where: Optional[list[str]] = WhereOpt,
    limit: int = typer.Option(20, "--limit", "-n", metavar="N", min=1, max=MAX_LIMIT, help="How many results."),
    all_copies: bool = AllCopiesOpt,
    group: bool = GroupOpt,
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Fast keyword lookup of named things (spells, monsters, items, rules), typo-tolerant.

    Without words, --type/--where list every matching entry in book order.
    """
    eng = _engine(library)
    res = eng.search(" ".join(query or []), types=type_, sources=source, limit=limit, where=where,
                     all_copies=all_copies)
    if as_json:
        _print_json(res)
        return
    from gmtool.present.table import render_search

    _warn(res.warnings)
    render_search(_out_console(), res, _source_paths(eng), group=group)


@app.command()
@_handle
def ask(
    query: list[str] = typer.Argument(..., metavar="QUESTION", help="A plain-language question or description."),
    type_: Optional[list[str]] = TypeOpt,
    source: Optional[list[str]] = SourceOpt,
    where: Optional[list[str]] = WhereOpt,
    limit: int = typer.Option(10, "--limit", "-n", metavar="N", min=1, max=MAX_LIMIT, help="How many results."),
    min_score: Optional[float] = typer.Option(
        None, "--min-score", metavar="SCORE", min=0.0, max=1.0,
        help="Drop results whose 0–1 relevance is below this (default: the calibrated floor of a good answer; 0 keeps all)."),
    explain: bool = typer.Option(False, "--explain", help="Show BM25 rank, dense rank, fused score and matched terms."),
    device: str = typer.Option("auto", "--device", metavar="auto|cpu|cuda", autocompletion=DEVICES, help="Embedding device for the question: auto (the CPU: faster for one question), cpu or cuda."),
    timeout: float = typer.Option(10.0, "--timeout", metavar="SECONDS", min=0.0, help="Seconds to wait for the embedding before keyword-only."),
    ranker: str = typer.Option("hybrid", "--ranker", metavar="hybrid|bm25", autocompletion=_choices("hybrid", "bm25"), help="hybrid (default) or bm25 (keyword only)."),
    all_copies: bool = AllCopiesOpt,
    group: bool = GroupOpt,
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Ask in plain language ("a tanky spellcaster class"); hybrid keyword + embedding ranking."""
    eng = _engine(library)
    res = eng.ask(" ".join(query), types=type_, sources=source, limit=limit, min_score=min_score, where=where,
                  device=device, timeout=timeout, ranker=ranker, explain=explain, all_copies=all_copies)
    if as_json:
        _print_json(res)
        return
    from gmtool.present.table import render_search

    _warn(res.warnings)
    render_search(_out_console(), res, _source_paths(eng), explain=explain, group=group)


@app.command()
@_handle
def show(
    source: str = typer.Argument(..., autocompletion=_complete_sources,
                                 help="The book: its id, a unique start of it, file name or title (see `gmtool ls`)."),
    title: Optional[str] = typer.Argument(None, help="Section title, e.g. \"Fireball\"."),
    page: Optional[int] = typer.Option(None, "--page", "-p", metavar="N", min=1, help="Show this physical page instead."),
    max_chars: int = typer.Option(8000, "--max-chars", metavar="N", min=0, help="Cut the text after this many characters (0: no cut)."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Print a section's text (or a page's), with book, page and neighbouring sections."""
    res = _engine(library).read(source, title=title, page=page, max_chars=max_chars)
    if as_json:
        _print_json(res)
        return
    from gmtool.present.table import render_read

    render_read(_out_console(), res)


@app.command("open")
@_handle
def open_cmd(
    source: str = typer.Argument(..., autocompletion=_complete_sources,
                                 help="The book: its id, a unique start of it, file name or title (see `gmtool ls`)."),
    title: Optional[str] = typer.Argument(None, help="Section title to open at."),
    page: Optional[int] = typer.Option(None, "--page", "-p", metavar="N", min=1, help="Physical page to open at."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the viewer command instead of running it."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Open a book in your PDF viewer at a section or page ($GMTOOL_PDF_VIEWER: "zathura -P {page} {path}")."""
    from gmtool.viewer import open_at

    eng = _engine(library)
    res = open_at(eng, source, title=title, page=page, dry_run=dry_run)
    if as_json:
        _print_json(res)
    else:
        from gmtool.present.pages import page_ref
        from gmtool.present.terminal import line

        at = page_ref(res["page"], res.get("page_label"))
        if not dry_run:
            typer.echo(line(f"opened {res['path']} at {at}"))
        elif res["command_line"]:
            typer.echo(line(res["command_line"]))
        else:  # no viewer installed: still say where it would open
            typer.echo(line(f"{res['path']} {at}"))
            _warn(["VIEWER_NOT_FOUND: no PDF viewer found; set GMTOOL_PDF_VIEWER, e.g. 'zathura -P {page} {path}'"])


@app.command()
@_handle
def doctor(
    device: str = typer.Option("auto", "--device", metavar="auto|cpu|cuda", autocompletion=DEVICES, help="Device to test: auto, cpu or cuda."),
    library: Optional[Path] = LibraryOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Check the embedding runtime, the model, the device each command uses and the index health."""
    data = _engine(library).doctor(device)
    if as_json:
        _print_json(data)
        return
    from gmtool.present.table import render_kv

    con = _out_console()
    for section, values in data.items():
        render_kv(con, section, values if isinstance(values, dict) else {"value": values})
        con.print()


@app.command()
@_handle
def serve(library: Optional[Path] = LibraryOpt) -> None:
    """Run the MCP server over stdio for AI assistants (stdout carries only protocol messages)."""
    from gmtool.mcp import run_server

    run_server(library, debug=_state["debug"])


def _replace_unprintable() -> None:
    """An output encoding that cannot show a book's text (PYTHONIOENCODING=ascii, a C locale) gets
    `?` for what it cannot encode instead of a crash in the middle of a result list."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") == "strict":
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="replace")


def main() -> None:
    """The console entry point. Everything alive when a run starts (the imported modules) and
    when it ends (its results) stays alive until the process exits, so both are frozen out of
    the cyclic garbage collector: it would otherwise walk them again at every full collection
    and once more at exit (~20 ms of a search's ~150). A long `serve` freezes only the former."""
    import gc

    _replace_unprintable()
    gc.freeze()
    try:
        app(prog_name="gmtool")
    finally:
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()
