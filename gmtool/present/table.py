"""Rich rendering for people at a terminal. Imported only when a command prints a table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from gmtool.present import terminal
from gmtool.present.pages import page_ref
from gmtool.types import Failure, Hit, ScanReport, SearchResult, SourceMeta, TocNode

if TYPE_CHECKING:
    from gmtool.types import ReadResult, TocResult, VerifyReport


def _s(value: object) -> str:
    """Text from a book or a file name, as one printable line of rich markup."""
    return escape(terminal.line(value))


def _link(title: str, path: str | None, page: int | None) -> str:
    """Titles become OSC 8 links to the page in terminals that support them (rich decides)."""
    if not path or page is None or not path.lower().endswith(".pdf"):
        return _s(title)
    uri = Path(path).resolve().as_uri() + f"#page={page}"
    return f"[link={uri}]{_s(title)}[/link]"


def _page(h: Hit) -> str:
    return page_ref(h.page, h.page_label, h.line)


def _fields(fields: dict[str, Any] | None, ctype: str | None) -> str:
    if not fields or not ctype:
        return ""
    from gmtool.fieldspec import KEY_FIELDS

    out = []
    for k in KEY_FIELDS.get(ctype, []):
        v = fields.get(k)
        if v is None:
            continue
        if k == "level":
            out.append("cantrip" if v == 0 else f"level {v}")
        elif k == "challenge":
            out.append(f"CR {_cr(v)}")
        elif k == "hit_die":
            out.append(f"d{v}")
        elif isinstance(v, list):
            out.append("/".join(map(str, v)) or "none")
        else:
            out.append(str(v))
    return ", ".join(out)


def _cr(v: Any) -> str:
    fractions = {0.125: "1/8", 0.25: "1/4", 0.5: "1/2"}
    if isinstance(v, float) and v in fractions:
        return fractions[v]
    return str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)


def _why(ex: dict[str, Any]) -> str:
    """--explain in one cell: both ranks, the fused score and the expansion terms that matched."""
    parts = [f"bm25 #{ex.get('bm25_rank') or '-'}", f"dense #{ex.get('dense_rank') or '-'}",
             f"fused {ex.get('fused', 0):.2f}"]
    if ex.get("type_boost"):
        parts.append("type match")
    if ex.get("expansion_matched"):
        parts.append("+" + ", ".join(ex["expansion_matched"][:6]))
    return " · ".join(parts)


NAMESAKE = "≠"  # after a title: another edition or game has an entry of this name (another text)
BOOK_CHARS = 14  # the book column: a source id, shortened (`gmtool ls` has them whole)
WIDE = 120  # from this many columns on, a table also shows each result's section path


def _book(h: Hit) -> str:
    """The short book column: the source id (cut with an ellipsis) and "+N" for N more copies."""
    more = f" +{len(h.also_in)}" if h.also_in else ""
    room = BOOK_CHARS - len(more)
    sid = h.source_id if len(h.source_id) <= room else h.source_id[: room - 1] + "…"
    return _s(sid) + (f"[dim]{more}[/]" if more else "")


def _result_table(console: Console, hits: list[Hit], paths: dict[str, str], scored: bool, explain: bool,
                  with_book: bool, title: str | None = None) -> Table:
    wide = console.width >= WIDE
    t = Table(title=title, title_justify="left", show_edge=False, expand=True, pad_edge=False, box=None,
              header_style="bold")
    t.add_column("#", justify="right", style="dim", no_wrap=True)
    t.add_column("Title", style="bold cyan", no_wrap=True, overflow="ellipsis", min_width=12, max_width=32)
    t.add_column("Type", style="magenta", no_wrap=True, max_width=9)
    if with_book:
        t.add_column("Book", no_wrap=True, overflow="ellipsis", max_width=BOOK_CHARS)
    t.add_column("Page", no_wrap=True)
    if scored:
        t.add_column("Score", justify="right", no_wrap=True, style="green")
    if wide:
        t.add_column("Section", style="dim", overflow="ellipsis", no_wrap=True, max_width=30, ratio=1)
    t.add_column("Why" if explain else "Snippet", overflow="fold" if explain else "ellipsis", no_wrap=not explain,
                 min_width=10, ratio=3)
    for h in hits:
        title_cell = _link(h.title, paths.get(h.source_id), h.page)
        if h.namesake_of:
            title_cell += f" [yellow]{NAMESAKE}[/]"
        if h.also_in and not with_book:
            title_cell += f" [dim]+{len(h.also_in)}[/]"
        row = [str(h.rank), title_cell, h.content_type or ""]
        if with_book:
            row.append(_book(h))
        row.append(_page(h))
        if scored:
            row.append(f"{h.score:.2f}")
        if wide:
            row.append(_s(" › ".join(h.section_path[-2:])))
        extra = _fields(h.fields, h.content_type)
        last = _why(h.explain) if explain and h.explain else (f"{extra} · {h.snippet}" if extra else h.snippet)
        row.append(_s(last))
        t.add_row(*row)
    return t


def _legend(console: Console, hits: list[Hit]) -> None:
    """One dim line explaining the row markers that appear."""
    notes = []
    if any(h.also_in for h in hits):
        notes.append("+N: also in N more books")
    if any(h.namesake_of for h in hits):
        notes.append(f"{NAMESAKE}: namesake (another edition or game)")
    if notes:
        console.print("[dim]" + _s(" · ".join(notes)) + "[/]")


def render_search(console: Console, r: SearchResult, paths: dict[str, str], explain: bool = False,
                  group: bool = False) -> None:
    """One ranked list (the book a short column), or with `group` one table per book in order of
    its best hit. Every row is one line, so 20 results fit a terminal of 80 columns."""
    if not r.results:
        _render_nothing(console, r, paths)
        return
    if r.message:  # results, but not what was asked for by name
        console.print(f"[yellow]{_s(r.message)}[/]")
    scored = explain or any(h.similarity_score is not None or h.matched_terms is not None for h in r.results)
    if not group:
        console.print(_result_table(console, r.results, paths, scored, explain, with_book=True))
    else:
        books: dict[str, list[Hit]] = {}
        for h in r.results:
            books.setdefault(h.source_id, []).append(h)
        for sid, hits in books.items():
            head = f"[bold]{_s(hits[0].source_name)}[/] [dim]({_s(sid)})[/]"
            console.print(_result_table(console, hits, paths, scored, explain, with_book=False, title=head))
            console.print()
    _legend(console, r.results)


def _render_nothing(console: Console, r: SearchResult, paths: dict[str, str]) -> None:
    """An honest "nothing found": what was not found, and near misses only as suggestions."""
    console.print(f"[yellow]{_s(r.message or f'No results for {r.query!r}.')}[/]")
    if r.suggestions:
        console.print(f"[dim]near misses: {_s(', '.join(r.suggestions))}[/]")
    if r.weak:
        console.print("[dim]nearest entries (weak):[/]")
        console.print(_result_table(console, r.weak, paths, True, False, with_book=True))


def render_sources(
    console: Console, sources: list[SourceMeta], verbose: bool = False, problems: list[Failure] | None = None
) -> None:
    if not sources:
        console.print("[yellow]No sources indexed yet.[/] Run [bold]gmtool scan DIR[/] on your rulebook folder.")
        _render_problems(console, problems or [])
        return
    # One line a book. Below WIDE columns the title gives way (the id names the book, and a unique
    # start of it is enough to type), and the type counts get the width that is left.
    rows = [_source_row(m, verbose) for m in sources]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(_SOURCE_HEADS)]
    titled = verbose or console.width >= WIDE or sum(w + 2 for w in widths) <= console.width
    if not titled:
        widths[0] = min(widths[0], 26)
        widths[5] = max(8, console.width - sum(w + 2 for i, w in enumerate(widths) if i not in (1, 5)) - 2)
    t = Table(show_edge=False, box=None, header_style="bold", pad_edge=False)
    for i, head in enumerate(_SOURCE_HEADS):
        if i == 1 and not titled:
            continue
        right = head in ("Pages", "Entries", "Typed")
        t.add_column(head, style="bold cyan" if i == 0 else None, justify="right" if right else "left",
                     no_wrap=True, overflow="ellipsis", max_width=None if titled else widths[i])
    if verbose:
        t.add_column("File", overflow="fold")
        t.add_column("No text", justify="right", no_wrap=True)
        t.add_column("Indexed", no_wrap=True)
    for m, row in zip(sources, rows, strict=True):
        cells = [_s(c) for i, c in enumerate(row) if titled or i != 1]
        if verbose:
            cells += [_s(m.file), str(len(m.pages_without_text)), m.indexed_at[:16].replace("T", " ")]
        t.add_row(*cells)
    console.print(t)
    _render_problems(console, problems or [])


_SOURCE_HEADS = ("Source id", "Title", "Pages", "Entries", "Typed", "Top types", "TOC")


def _source_row(m: SourceMeta, verbose: bool) -> list[str]:
    """One book's cells, plain text, in _SOURCE_HEADS order."""
    top = sorted(m.type_counts.items(), key=lambda kv: -kv[1])
    types = " ".join(f"{k}:{v}" for k, v in top[: (None if verbose else 3)])
    length = f"{m.lines} lines" if m.lines is not None else str(m.pages)  # Markdown/text have no pages
    return [m.source_id, m.title, length, str(m.entry_count), f"{m.typed_share:.0%}", types,
            "yes" if m.has_outline else "no"]


def _render_problems(console: Console, problems: list[Failure]) -> None:
    """Books the table cannot show (not indexed) or shows hollow (no text layer), with the fix."""
    for p in problems:
        console.print(f"[yellow]{_s(p.code)}[/] {_s(p.file)}: {_s(p.message)}" + (f" [dim]({_s(p.hint)})[/]" if p.hint else ""))


def render_toc(console: Console, toc: TocResult) -> None:
    folder = any(n.get("file") for n in toc.entries)  # a folder book: its nodes name their chapter files
    where = f"{toc.file.rstrip('/')}/" if folder else toc.file
    tree = Tree(f"[bold]{_s(toc.source_name)}[/] [dim]({_s(toc.source_id)}, {_s(where)})[/]")

    def add(parent: Tree, nodes: list[TocNode], file: str | None = None) -> None:
        for n in nodes:
            where = page_ref(n['page'], n.get('page_label'), n.get('line'))
            chapter = n.get("file")
            if chapter and chapter != file:  # a folder book: where a chapter file starts
                where = f"{chapter.rsplit('/', 1)[-1]} {where}"
            label = f"{_s(n['title'])} [dim]{_s(where)}[/]"
            if n.get("content_type"):
                label += f" [magenta]{_s(n['content_type'])}[/]"
            extra = _fields(n.get("fields"), n.get("content_type"))
            if extra:
                label += f" [dim]{_s(extra)}[/]"
            add(parent.add(label), n["children"], n.get("file") or file)

    add(tree, toc.entries)
    if not toc.entries:
        tree.add("[yellow]no entries match[/]")
    console.print(tree)


def render_scan(console: Console, r: ScanReport) -> None:
    t = Table(title="Scan summary", title_justify="left", show_header=False, show_edge=False)
    t.add_column(style="bold")
    t.add_column()
    for k, v in (("Library", r.library), ("Files found", r.files_found), ("Indexed", r.indexed),
                 ("Unchanged", r.unchanged), ("Removed", r.removed), ("Failed", len(r.failed)),
                 ("Sections", r.sections), ("Embeddings", r.embeddings_generated),
                 ("Time", f"{r.duration_ms / 1000:.2f} s")):
        t.add_row(_s(k), _s(str(v)))
    console.print(t)
    for f in r.failed:
        console.print(f"[red]✗ {_s(f.file)}[/] [bold]{_s(f.code)}[/]: {_s(f.message)}"
                      + (f" [dim]({_s(f.hint)})[/]" if f.hint else ""))


def render_read(console: Console, r: ReadResult) -> None:
    where = page_ref(r.page, r.page_label, r.line)
    head = f"[bold cyan]{_s(r.title or f'Page {r.page}')}[/] — {_s(r.source_name)} [dim]({_s(r.source_id)}), {where}[/]"
    console.print(head)
    if r.section_path:
        console.print(f"[dim]{_s(' › '.join(r.section_path))}[/]")
    console.print()
    console.print(escape(terminal.text(r.text)), soft_wrap=False)
    if r.truncated:
        console.print("[dim]… truncated; use --max-chars to read more[/]")
    nav = []
    if r.previous_title:
        nav.append(f"← {_s(r.previous_title)}")
    if r.next_title:
        nav.append(f"→ {_s(r.next_title)}")
    if nav:
        console.print("\n[dim]" + "   ".join(nav) + "[/]")


def render_verify(console: Console, r: VerifyReport) -> None:
    if r.healthy:
        console.print(f"[green]✓ index healthy[/] ({r.sources} sources)")
        return
    t = Table(show_edge=False)
    t.add_column("Code", style="bold red")
    t.add_column("File", overflow="fold")
    t.add_column("Problem", overflow="fold")
    t.add_column("Fix", style="dim", overflow="fold")
    for p in r.problems:
        t.add_row(_s(p.code), _s(p.file), _s(p.message), _s(p.hint))
    console.print(t)


def render_kv(console: Console, title: str, data: dict[str, Any]) -> None:
    t = Table(title=title, title_justify="left", show_header=False, show_edge=False)
    t.add_column(style="bold")
    t.add_column(overflow="fold")
    for k, v in data.items():
        if isinstance(v, dict):
            v = ", ".join(f"{kk}={vv}" for kk, vv in v.items())
        elif isinstance(v, list):
            v = ", ".join(map(str, v))
        t.add_row(_s(k), _s(str(v)))
    console.print(t)
