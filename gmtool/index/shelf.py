"""Which Markdown files are chapters of one book: a folder of chapter files is one book.

SRDs are published as repositories of chapter files, wikis and static sites export a folder
per book. A folder below the library root is one book when

- it holds a marker file `.gmtool-book` (the user says so; see below), or
- its Markdown is laid out as chapters: two or more of the files and sub-folders directly in
  it carry a numeric prefix (`01_Abilities.md`, `07-combat/`) and they are at least half of
  them, or it has an index page (`_index.md`, `index.md`, `README.md`) and sub-folders of
  Markdown (a static site's sections), or two or more of its files, and at least half, are a
  site's pages placed in its navigation by their front matter (`weight`, `sidebar_position`,
  `nav_order`, or Just the Docs' `parent`), or five or more of its files, and most, are notes made from one
  template (a vault's compendium: front matter that opens with the same three or more keys), or
- it has a contents page that links to its chapters: a `SUMMARY.md` (mdBook, GitBook) or an
  index page whose links reach at least two, and at least half, of the Markdown files below it.
  The contents page's link order is then the reading order, and a `SUMMARY.md` is read for
  that order only, not indexed. An MkDocs `mkdocs.yml` beside the folder (its `docs_dir`) whose
  `nav` lists the files serves the same way.

The topmost such folder wins: everything below it is its chapters. Loose files at the library
root, and Markdown in folders that are not books, stay books of their own; PDFs and text files
are never chapters.

The marker file `.gmtool-book` (hidden, so it is never indexed itself) may be empty, or hold
`key: value` lines:

    title: The Book's Title      # the title `ls` shows (else the index page's, else the folder's name)
    book: no                     # the folder is NOT one book: each file stays its own

Reading order, in every folder: the index page first, then files and sub-folders in natural
order of their numeric prefixes (`2-…` before `10-…`) or of the place their front matter gives
them (`weight`, `sidebar_position`, `nav_order`; a folder's is its index page's), then the rest by
name; in a book with a contents page or an MkDocs `nav`, the files it lists come first, in its order.

A book's title is the marker's, else an mdBook `book.toml` title, an MkDocs `mkdocs.yml`
`site_name` or a Jekyll `_config.yml` `title` in its folder or the one above (a site's sources often sit in `src/` or `docs/`),
else what its own pages say (see index.extract.mdbook). A folder with such a generic name is
named (its id, and its title as a last resort) by the folder above it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from gmtool.index.extract.mdnotes import front_keys

MARKER = ".gmtool-book"
CHAPTER_SUFFIXES = (".md", ".markdown")
INDEX_STEMS = ("_index", "index", "readme")
_NUMBERED = re.compile(r"^(\d+(?:\.\d+)*)(?=[-_. ]|[A-Za-z]|$)")
_NO = ("no", "false", "off", "0")
CONTENTS_STEM = "summary"  # mdBook's and GitBook's contents page: read for the order, not indexed
CONTENTS_MAX_BYTES = 256 * 1024  # a contents page is short; a huge index page is read this far
# a Markdown link to a Markdown file: [text](path/to/file.md#anchor "title")
_MD_LINK = re.compile(r"\]\(\s*<?([^)\s>#?]+\.(?:md|markdown))(?:#[^)\s>]*)?>?(?:\s+\"[^\"]*\")?\s*\)", re.I)
# folders that hold a site's or a book's sources: the book is named by the folder above
GENERIC_FOLDERS = frozenset({"src", "source", "docs", "doc", "content", "contents", "book", "pages", "markdown", "md"})
# where a site generator keeps a page's place in its folder, in the page's front matter (Hugo,
# Docusaurus, Just the Docs): orders the files that carry no numeric prefix
_FRONT_ORDER = re.compile(r"^(?:weight|sidebar_position|nav_order)\s*:\s*[\"']?(-?\d+(?:\.\d+)?)[\"']?\s*$", re.M)
# a page that a site's navigation places under a parent page (Just the Docs): a chapter of a site
_FRONT_PARENT = re.compile(r"^parent\s*:\s*\S", re.M)
# A vault's compendium: notes made from one template (a Dataview note per monster, move or item) open
# with front matter of the same keys. TEMPLATE_MIN notes, TEMPLATE_SHARE of the folder's files, each
# holding the TEMPLATE_KEYS or more keys that that share of them hold.
TEMPLATE_MIN = 5
TEMPLATE_SHARE = 0.8
TEMPLATE_KEYS = 3
FRONT_SAMPLE = 16  # pages of a folder looked at before all of them are read for front matter
FRONT_MATTER_MAX_BYTES = 4096
# an MkDocs nav entry: "- rules/combat.md" or "- Combat: rules/combat.md"
_NAV_ITEM = re.compile(r"^\s*-\s*(?:[^:\n]+:\s*)?['\"]?([^\s'\":#]+\.(?:md|markdown))['\"]?\s*$", re.M | re.I)
_TOML_TITLE = re.compile(r"^\s*title\s*=\s*([\"'])(.+?)\1\s*$", re.M)
_MKDOCS_NAME = re.compile(r"^site_name\s*:\s*([\"']?)(.+?)\1\s*$", re.M)
_JEKYLL_TITLE = re.compile(r"^title\s*:\s*([\"']?)(.+?)\1\s*$", re.M)


@dataclass
class FolderBook:
    """A folder read as one book: its chapter files in reading order."""

    folder: Path
    rel: str  # library-relative, POSIX
    chapters: list[Path] = field(default_factory=list)
    title: str | None = None  # from the marker file, or a site generator's settings


def book_name(folder: Path) -> str:
    """The name a folder book goes by: its folder's, or the folder above's when the folder's is
    a generic one (`src`, `docs`)."""
    if folder.name.lower() in GENERIC_FOLDERS and folder.parent.name:
        return folder.parent.name
    return folder.name


def site_title(folder: Path) -> str | None:
    """The title a site generator's settings give the book, in its folder or the one above."""
    for where in (folder, folder.parent):
        for name, pattern in (("book.toml", _TOML_TITLE), ("mkdocs.yml", _MKDOCS_NAME), ("_config.yml", _JEKYLL_TITLE)):
            try:
                text = (where / name).read_text(encoding="utf-8", errors="replace")[:CONTENTS_MAX_BYTES]
            except OSError:
                continue
            m = pattern.search(text)
            if m and m.group(2).strip():
                return m.group(2).strip()
    return None


def _covers(links: list[str], below: list[str]) -> bool:
    return len(links) >= 2 and 2 * len(links) >= len(below) - 1


def mkdocs_nav(folder: Path, below: list[str]) -> list[str] | None:
    """The chapter files an MkDocs `mkdocs.yml` beside `folder` lists in its `nav`, when `folder`
    is its `docs_dir` (`docs` unless it says otherwise)."""
    try:
        text = (folder.parent / "mkdocs.yml").read_text(encoding="utf-8", errors="replace")[:CONTENTS_MAX_BYTES]
    except OSError:
        return None
    m = re.search(r"^docs_dir\s*:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", text, re.M)
    if (m.group(1).strip().strip("/") if m else "docs") != folder.name:
        return None
    nav = re.search(r"^nav\s*:\s*\n((?:[ \t-].*\n?|\n)*)", text, re.M)
    if nav is None:
        return None
    known = set(below)
    links = list(dict.fromkeys(posixpath.normpath(x) for x in _NAV_ITEM.findall(nav.group(1))))
    links = [x for x in links if x in known]
    return links if _covers(links, below) else None


def front_matter(path: Path) -> str | None:
    """The front matter block a page opens with (its first FRONT_MATTER_MAX_BYTES), or None."""
    try:
        with path.open("rb") as fh:
            head = fh.read(FRONT_MATTER_MAX_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return None
    if not head.startswith("---"):
        return None
    end = head.find("\n---", 3)
    return head[: end if end > 0 else len(head)]


def front_order(path: Path) -> float | None:
    """A page's place in its folder as its front matter gives it (`weight`, `sidebar_position`,
    `nav_order`); for a folder, its index page's."""
    if path.is_dir():
        pages = [path / f"{stem}{suffix}" for stem in INDEX_STEMS for suffix in CHAPTER_SUFFIXES]
        return next((w for w in (front_order(p) for p in pages if p.is_file()) if w is not None), None)
    head = front_matter(path)
    m = _FRONT_ORDER.search(head) if head else None
    return float(m.group(1)) if m else None


def contents_links(folder: Path, below: list[str]) -> tuple[str, list[str]] | None:
    """(contents page, the chapter files it links in its order), folder-relative POSIX paths,
    when a `SUMMARY.md` or index page directly in `folder` links at least two, and at least half,
    of the Markdown files below it, or an MkDocs nav lists them (page ""); else None."""
    nav = mkdocs_nav(folder, below)
    if nav is not None:
        return "", nav
    pages = sorted((b for b in below if "/" not in b and b.rsplit(".", 1)[0].lower() in (CONTENTS_STEM, *INDEX_STEMS)),
                   key=lambda b: b.rsplit(".", 1)[0].lower() != CONTENTS_STEM)
    known = set(below)
    for page in pages:
        try:
            with (folder / page).open("rb") as fh:
                text = fh.read(CONTENTS_MAX_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        links: list[str] = []
        for m in _MD_LINK.finditer(text):
            rel = posixpath.normpath(unquote(m.group(1)))
            if rel in known and rel != page and rel not in links:
                links.append(rel)
        if _covers(links, below):
            return page, links
    return None


def read_marker(folder: Path) -> dict[str, str] | None:
    """The marker's settings ({} for an empty one), or None when the folder has no marker."""
    path = folder / MARKER
    try:
        text = path.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return None
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not line.lstrip().startswith("#"):
            out[key.strip().lower()] = value.strip()
    return out


def order_key(name: str) -> tuple[int, tuple[int, ...], str]:
    """Index page first, then numbered names in natural order, then the rest by name."""
    stem = name.rsplit(".", 1)[0] if "." in name else name
    if stem.lower() in INDEX_STEMS:
        return (0, (), name.lower())
    m = _NUMBERED.match(name)
    if m:
        return (1, tuple(int(x) for x in m.group(1).split(".")), name.lower())
    return (2, (), name.lower())


def is_index(path: Path) -> bool:
    return path.stem.lower() in INDEX_STEMS


def _chaptered(folder: Path, children: set[str], files: list[str], has_index: bool, has_subfolders: bool) -> bool:
    """`files`: the children that are Markdown files (not folders)."""
    numbered = sum(1 for c in children if _NUMBERED.match(c))
    if (numbered >= 2 and numbered * 2 >= len(children)) or (has_index and has_subfolders):
        return True
    if len(files) < 2:
        return False
    # both rules below need most pages to open with front matter: a folder none of whose sampled pages
    # does is not a site (a rescan of a 100,000-note export would otherwise open every note)
    sample = files[:: max(1, len(files) // FRONT_SAMPLE)][:FRONT_SAMPLE]
    if all(front_matter(folder / f) is None for f in sample):
        return False
    heads = [front_matter(folder / f) for f in files]
    placed = sum(1 for h in heads if h is not None and (_FRONT_ORDER.search(h) or _FRONT_PARENT.search(h)))
    return (placed >= 2 and placed * 2 >= len(files)) or _templated(heads)


def _templated(heads: list[str | None]) -> bool:
    """Most of the pages whose front matter `heads` holds are notes made from one template (see
    TEMPLATE_MIN)."""
    if len(heads) < TEMPLATE_MIN:
        return False
    keys = [front_keys(h) if h else frozenset() for h in heads]
    need = TEMPLATE_SHARE * len(heads)
    counts: dict[str, int] = {}
    for ks in keys:
        for k in ks:
            counts[k] = counts.get(k, 0) + 1
    core = {k for k, n in counts.items() if n >= need}
    return len(core) >= TEMPLATE_KEYS and sum(1 for ks in keys if core <= ks) >= need


def shelve(library: Path, files: list[Path]) -> tuple[list[Path], list[FolderBook]]:
    """(files that are books of their own, folder books), from the files a scan found."""
    tree: dict[tuple[str, ...], set[str]] = {}  # folder parts -> names of Markdown children
    for f in files:
        if f.suffix.lower() not in CHAPTER_SUFFIXES:
            continue
        parts = f.relative_to(library).parts
        for depth in range(1, len(parts)):
            tree.setdefault(parts[:depth], set()).add(parts[depth])
    decided: dict[tuple[str, ...], bool] = {}
    contents: dict[tuple[str, ...], tuple[str, list[str]]] = {}

    def is_book(folder: tuple[str, ...]) -> bool:
        if folder not in decided:
            marker = read_marker(library.joinpath(*folder))
            if marker is not None:
                decided[folder] = marker.get("book", "yes").lower() not in _NO
            else:
                kids = tree.get(folder, set())
                files = sorted(k for k in kids if (*folder, k) not in tree)
                subs = len(files) < len(kids)
                index = any(k.rsplit(".", 1)[0].lower() in INDEX_STEMS for k in files)
                decided[folder] = len(_files_below(tree, folder)) >= 2 and _chaptered(
                    library.joinpath(*folder), kids, files, index, subs)
            if decided[folder] or marker is None:
                found = contents_links(library.joinpath(*folder), _paths_below(tree, folder))
                if found is not None:
                    contents[folder] = found
                    decided[folder] = decided[folder] or marker is None
        return decided[folder]

    books: dict[tuple[str, ...], FolderBook] = {}
    loose: list[Path] = []
    for f in files:
        parts = f.relative_to(library).parts
        owner = None
        if f.suffix.lower() in CHAPTER_SUFFIXES:
            owner = next((parts[:d] for d in range(1, len(parts)) if is_book(parts[:d])), None)
        if owner is None:
            loose.append(f)
            continue
        if owner not in books:
            folder = library.joinpath(*owner)
            marker = read_marker(folder) or {}
            books[owner] = FolderBook(folder, "/".join(owner), title=marker.get("title") or site_title(folder))
        books[owner].chapters.append(f)
    for owner, book in books.items():
        _order(book, contents.get(owner))
    return loose, sorted(books.values(), key=lambda b: b.rel)


def _order(book: FolderBook, contents: tuple[str, list[str]] | None) -> None:
    """Reading order (see the module's docstring); a `SUMMARY.md` contents page leaves the chapters."""
    def key(p: Path) -> tuple:
        rel = p.relative_to(book.folder).as_posix()
        parts = p.relative_to(book.folder).parts
        natural = [_place(book.folder.joinpath(*parts[: i + 1]), x) for i, x in enumerate(parts)]
        if contents is None:
            return (0, 0, natural)
        page, links = contents
        if rel == page:
            return (0, 0, natural)
        return (1, links.index(rel), natural) if rel in links else (2, 0, natural)

    if contents is not None and contents[0].rsplit(".", 1)[0].lower() == CONTENTS_STEM:
        book.chapters = [c for c in book.chapters if c.relative_to(book.folder).as_posix() != contents[0]]
    book.chapters.sort(key=key)


def _place(path: Path, name: str) -> tuple[int, tuple[float, ...], str]:
    """order_key, with a front matter's place for a name without a numeric prefix."""
    key = order_key(name)
    if key[0] == 2:
        weight = front_order(path)
        if weight is not None:
            return (1, (weight,), name.lower())
    return key


def _paths_below(tree: dict[tuple[str, ...], set[str]], folder: tuple[str, ...], prefix: str = "") -> list[str]:
    """The Markdown files below `folder`, as POSIX paths relative to it."""
    out: list[str] = []
    for k in sorted(tree.get(folder, set())):
        if (*folder, k) in tree:
            out.extend(_paths_below(tree, (*folder, k), f"{prefix}{k}/"))
        else:
            out.append(f"{prefix}{k}")
    return out


def _files_below(tree: dict[tuple[str, ...], set[str]], folder: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for k in tree.get(folder, set()):
        out.extend(_files_below(tree, (*folder, k)) if (*folder, k) in tree else [k])
    return out
