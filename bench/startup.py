"""Start-up time of the CLI, measured as whole processes (what a user waits for).

    python bench/startup.py [--runs 15] [--strict]

Times `gmtool --help`, `gmtool --version` and `gmtool ls` (on a freshly scanned copy of the
bundled sample library) and prints the median and the fastest run of each, and the median CPU
time (user + sys; steadier than wall time on a shared machine). The target is --help <= 0.1 s;
--strict exits 1 when it is missed. When it is, look at what dominates with

    python -X importtime -m gmtool --help 2>&1 | sort -t'|' -k2 -n | tail -20
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TARGET_HELP_S = 0.1
HEAVY = ("onnxruntime", "pdfplumber", "pypdfium2", "sklearn", "scipy", "fastmcp", "numpy", "pydantic")


def _gmtool() -> list[str]:
    """The installed entry point beside this interpreter, else `python -m gmtool`."""
    exe = Path(sys.executable).with_name("gmtool")
    return [str(exe)] if exe.is_file() else [sys.executable, "-m", "gmtool"]


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _time(cmd: list[str], env: dict[str, str], runs: int) -> tuple[list[float], list[float]]:
    """Wall times and CPU times (user + sys) of `runs` whole processes."""
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # warm caches
    times, cpus = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), _cpu()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t0)
        cpus.append(_cpu() - c0)
    return times, cpus


def _heavy_modules(args: list[str], env: dict[str, str]) -> list[str]:
    code = (
        f"import sys\nfrom gmtool.cli import app\ntry:\n    app({args!r}, prog_name='gmtool')\nexcept SystemExit:\n"
        f"    pass\nprint(','.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False)
    last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
    return [m for m in last.split(",") if m]


def main() -> int:
    ap = argparse.ArgumentParser(description="CLI start-up time, whole processes.")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--strict", action="store_true", help=f"exit 1 when --help takes over {TARGET_HELP_S} s")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="gmtool-startup-") as tmp:
        lib = Path(tmp) / "lib"
        shutil.copytree(REPO / "gmtool" / "sample", lib, ignore=shutil.ignore_patterns(".gmtool"))
        env = {**os.environ, "GMTOOL_CONFIG_DIR": str(Path(tmp) / "config"), "GMTOOL_LIBRARY": str(lib),
               "PYTHONPATH": str(REPO)}
        env.pop("GMTOOL_INDEX_DIR", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # else every run compiles gmtool from source (~100 ms)
        exe = _gmtool()
        subprocess.run([*exe, "scan", "--no-embed", str(lib)], env=env, stdout=subprocess.DEVNULL, check=True)

        cases = {"--help": ["--help"], "--version": ["--version"], "ls": ["ls"]}
        print(f"{' '.join(exe)}  ({args.runs} runs each, python {sys.version.split()[0]})")
        print(f"{'command':<12}{'median':>10}{'min':>10}{'cpu':>10}  heavy modules imported")
        medians = {}
        base, base_cpu = _time([sys.executable, "-c", "pass"], env, args.runs)
        print(f"{'(python)':<12}{statistics.median(base):>9.3f}s{min(base):>9.3f}s"
              f"{statistics.median(base_cpu):>9.3f}s  bare interpreter, for scale")
        for name, argv in cases.items():
            times, cpus = _time([*exe, *argv], env, args.runs)
            medians[name] = statistics.median(times)
            heavy = _heavy_modules(argv, env)
            print(f"{name:<12}{medians[name]:>9.3f}s{min(times):>9.3f}s{statistics.median(cpus):>9.3f}s"
                  f"  {', '.join(heavy) or '-'}")
        ok = medians["--help"] <= TARGET_HELP_S
        print(f"target --help <= {TARGET_HELP_S:.2f} s: {'met' if ok else 'MISSED'}")
        return 0 if ok or not args.strict else 1


if __name__ == "__main__":
    raise SystemExit(main())
