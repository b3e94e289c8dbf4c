#!/usr/bin/env python3
"""Call every MCP tool with every argument through the MCP Inspector CLI, as a user would.

    python bench/mcp_inspector.py LIBRARY     (a scanned library holding the bundled sample books)

Runs `npx -y @modelcontextprotocol/inspector --cli gmtool serve -L LIBRARY --method tools/call ...`
once per call below (the Inspector passes every --tool-arg value as a string, or as JSON it can
parse) and prints each call with its outcome: the first line of the text content, or the error.
Exits 1 when a call that should succeed failed. Needs node and the npm registry (or npx's cache).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

GMTOOL = str(Path(sys.executable).with_name("gmtool"))

# (tool, arguments): together they pass every argument of every tool, under its CLI name and its old one.
CALLS: list[tuple[str, dict[str, str]]] = [
    ("list_library", {"format": "text"}),
    ("get_library_toc", {"source": "grimoire", "depth": "2", "cursor": "0"}),
    ("get_library_toc", {"source": "grimoire", "type": "spell", "where": '["level=2"]'}),
    ("get_library_toc", {"source_id": "grimoire", "content_type": "spell"}),
    ("search_library", {"query": "fog", "type": '["spell"]', "source": '["grimoire"]', "limit": "5",
                        "where": '["level=2"]', "all_copies": "true"}),
    ("search_library", {"query": "fog", "content_types": "spell", "documents": "grimoire"}),
    ("ask_books", {"query": "hide in a cloud of mist", "type": "spell", "source": "grimoire", "limit": "3",
                   "min_score": "0", "where": '{"level": 2}', "all_copies": "false"}),
    ("ask_books", {"query": "hide in a cloud of mist", "content_types": '["spell"]', "documents": '["grimoire"]'}),
    ("read_section", {"source": "grimoire", "title": "Fog Veil", "max_chars": "200"}),
    ("read_section", {"source_id": "grimoire", "page": "1"}),
    ("scan_library", {"force": "false", "embed": "false"}),
    ("index_library", {"files": '["grimoire.pdf"]', "force": "true", "embed": "false"}),
    ("index_library", {"include": '["*.md"]', "exclude": '["*.txt"]', "embed": "false"}),
    ("index_library", {"verify": "true"}),
]


def call(lib: Path, tool: str, args: dict[str, str]) -> tuple[bool, str]:
    cmd = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", GMTOOL, "serve", "-L", str(lib),
           "--method", "tools/call", "--tool-name", tool]
    for k, v in args.items():
        cmd += ["--tool-arg", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        return False, (p.stderr.strip().splitlines() or ["no output"])[-1]
    text = out.get("content", [{}])[0].get("text", "")
    return not out.get("isError"), text.splitlines()[0] if text else ""


def main(argv: list[str]) -> int:
    if len(argv) != 1 or shutil.which("npx") is None:
        print(__doc__)
        return 2
    lib = Path(argv[0]).resolve()
    failed = 0
    for tool, args in CALLS:
        ok, first = call(lib, tool, args)
        failed += not ok
        shown = " ".join(f"{k}={v}" for k, v in args.items())
        print(f"{'ok ' if ok else 'ERR'} {tool} {shown}\n      -> {first[:110]}")
    print(f"{len(CALLS) - failed} of {len(CALLS)} calls succeeded")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
