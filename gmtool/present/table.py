"""Rich rendering for people at a terminal. Imported only when a command prints a table."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from gmtool.present import terminal
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
    if h.line is not None:  # Markdown and text have no pages: point at the heading's line
        return f"l.{h.line}"
    if h.page_label and h.page_label != str(h.page):
        return f"{h.page} (p. {h.page_label})"
    return str(h.page)


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


def render_search(console: Console, r: SearchResult, paths: dict[str, str], explain: bool = False) -> None:
    if not r.results:
        console.print(f"[yellow]No results for[/] '{_s(r.query)}'.")
        return
    scored = explain or any(h.similarity_score is not None or h.matched_terms is not None for h in r.results)
    books: dict[str, list[Hit]] = {}
    for h in r.results:
        books.setdefault(h.source_id, []).append(h)
    for sid, hits in books.items():
        t = Table(title=f"[bold]{_s(hits[0].source_name)}[/] [dim]({_s(sid)})[/]", title_justify="left",
                  show_edge=False, expand=True, pad_edge=False)
        t.add_column("#", justify="right", style="dim", no_wrap=True)
        t.add_column("Title", style="bold cyan", overflow="fold", min_width=14, ratio=2)
        t.add_column("Type", style="magenta", no_wrap=True, min_width=7)
        t.add_column("Page", justify="right", no_wrap=True, min_width=4)
        if scored:
            t.add_column("Score", justify="right", no_wrap=True, style="green")
        t.add_column("Section", style="dim", overflow="ellipsis", no_wrap=True, min_width=10, ratio=2)
        if explain:
            t.add_column("Why", overflow="fold", min_width=16, ratio=3)
        else:
            t.add_column("Snippet", overflow="ellipsis", no_wrap=True, min_width=10, ratio=3)
        for h in hits:
            title = _link(h.title, paths.get(sid), h.page)
            if h.also_in:
                copies = [c["source_id"] + (f" p.{c['page']}" if c.get("page") is not None else "") for c in h.also_in]
                others = copies if len(copies) <= 2 else [*copies[:1], f"+{len(copies) - 1} more"]
                title += f"\n[dim]also in: {_s(', '.join(others))}[/]"
            if h.namesake_of:
                title += f"\n[dim]namesake: another text than in {_s(h.namesake_of)}[/]"
            kind = h.content_type or ""
            extra = _fields(h.fields, h.content_type)
            if extra:
                kind += f"\n[dim]{_s(extra)}[/]"
            row = [str(h.rank), title, kind, _page(h)]
            if scored:
                row.append(f"{h.score:.2f}")
            last = _s(_why(h.explain)) if explain and h.explain else _s(h.snippet)
            t.add_row(*row, _s(" › ".join(h.section_path[-2:])), last)
        console.print(t)
        console.print()


def render_sources(
    console: Console, sources: list[SourceMeta], verbose: bool = False, problems: list[Failure] | None = None
) -> None:
    if not sources:
        console.print("[yellow]No sources indexed yet.[/] Run [bold]gmtool scan DIR[/] on your rulebook folder.")
        _render_problems(console, problems or [])
        return
    t = Table(show_edge=False)
    t.add_column("Source id", style="bold cyan", overflow="fold", min_width=10)
    t.add_column("Title", overflow="fold", min_width=12)
    t.add_column("Pages", justify="right", no_wrap=True)
    t.add_column("Entries", justify="right", no_wrap=True)
    t.add_column("Typed", justify="right", no_wrap=True)
    t.add_column("Top types", overflow="fold", min_width=14)
    t.add_column("Outline", no_wrap=True)
    if verbose:
        t.add_column("File", overflow="fold")
        t.add_column("No text", justify="right", no_wrap=True)
        t.add_column("Indexed", no_wrap=True)
    for m in sources:
        top = sorted(m.type_counts.items(), key=lambda kv: -kv[1])
        types = " ".join(f"{k}:{v}" for k, v in top[: (None if verbose else 3)])
        typed = f"{m.typed_share:.0%}"
        length = f"{m.lines} lines" if m.lines is not None else str(m.pages)  # Markdown/text have no pages
        row = [_s(m.source_id), _s(m.title), length, str(m.entry_count), typed, types,
               "yes" if m.has_outline else "no"]
        if verbose:
            row += [_s(m.file), str(len(m.pages_without_text)), m.indexed_at[:16].replace("T", " ")]
        t.add_row(*row)
    console.print(t)
    _render_problems(console, problems or [])


def _render_problems(console: Console, problems: list[Failure]) -> None:
    """Books the table cannot show (not indexed) or shows hollow (no text layer), with the fix."""
    for p in problems:
        console.print(f"[yellow]{_s(p.code)}[/] {_s(p.file)}: {_s(p.message)}" + (f" [dim]({_s(p.hint)})[/]" if p.hint else ""))


def render_toc(console: Console, toc: TocResult) -> None:
    tree = Tree(f"[bold]{_s(toc.source_name)}[/] [dim]({_s(toc.source_id)}, {_s(toc.file)})[/]")

    def add(parent: Tree, nodes: list[TocNode], file: str | None = None) -> None:
        for n in nodes:
            where = f"l.{n['line']}" if n.get("line") is not None else f"p.{n['page']}"
            chapter = n.get("file")
            if chapter and chapter != file:  # a folder book: where a chapter file starts
                where = f"{chapter.rsplit('/', 1)[-1]} {where}"
            label = f"{_s(n['title'])} [dim]{where}"
            if n.get("page_label") and n["page_label"] != str(n["page"]):
                label += f" ({_s(str(n['page_label']))})"
            label += "[/]"
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
    where = f"p. {r.page}" + (f" (printed {r.page_label})" if r.page_label and r.page_label != str(r.page) else "")
    if r.page is None:  # a Markdown/text section: its line
        where = f"l. {r.line}" if r.line is not None else ""
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
