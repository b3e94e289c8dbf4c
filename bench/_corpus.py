"""Shared set-up for the benchmarks: the corpus library, scanned once and reused."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
BENCH_DIR = Path(os.environ.get("GMTOOL_BENCH_DIR", "/tmp/gmtool-bench"))
PDFS = ["cc-srd5.pdf", "SRD5.1-CCBY4.0_License_live_links.pdf", "Songs-of-Maya_rules.pdf", "lasers_and_feelings_rpg.pdf"]
MDS = ["cc-srd5.md", "DND-SRD-5.2-CC.md", "Fate-Condensed-SRD-CC-BY.md", "Basic-Fantasy-RPG-Rules-r142.md"]
GMTOOL = str(Path(sys.executable).with_name("gmtool"))


def corpus_library(embed: bool = False, name: str = "corpus") -> Path:
    """Copy the corpus (4 PDFs + 4 Markdown files) into a bench folder and scan it (cached)."""
    if not CORPUS.is_dir():
        sys.exit(f"corpus not found at {CORPUS}")
    lib = BENCH_DIR / name
    lib.mkdir(parents=True, exist_ok=True)
    for n in PDFS:
        if not (lib / n).exists():
            shutil.copy2(CORPUS / "pdf" / n, lib / n)
    for n in MDS:
        if not (lib / n).exists():
            shutil.copy2(CORPUS / "md" / n, lib / n)
    cmd = [GMTOOL, "scan", str(lib), "--json"] + ([] if embed else ["--no-embed"])
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, env=bench_env())
    return lib


def eval_library(embed: bool = True) -> Path:
    """The evaluation library of ../shared/eval/mklib.sh, scanned."""
    lib = BENCH_DIR / "evallib"
    if not lib.exists():
        subprocess.run(["sh", str(SHARED / "eval" / "mklib.sh"), str(lib)], check=True, stdout=subprocess.DEVNULL)
    cmd = [GMTOOL, "scan", str(lib), "--json"] + ([] if embed else ["--no-embed"])
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, env=bench_env())
    return lib


def bench_env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("GMTOOL_CONFIG_DIR", str(BENCH_DIR / "config"))
    return env


def median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def pct(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(p / 100 * (len(s) - 1))))]
