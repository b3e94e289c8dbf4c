"""Where the library and its index live, and the few settings that come from the environment.

The environment is read once, by `Settings.from_env()` (in the shell, or by the Engine when it is
given none), and the frozen result is passed down; nothing below reads os.environ.

Resolution order for the library: --library/-L, then $GMTOOL_LIBRARY, then the library the
last `scan` used (remembered in the user config dir), then the current directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ENV_LIBRARY = "GMTOOL_LIBRARY"
ENV_INDEX_DIR = "GMTOOL_INDEX_DIR"
ENV_CONFIG_DIR = "GMTOOL_CONFIG_DIR"
ENV_CACHE_DIR = "GMTOOL_CACHE_DIR"
ENV_MODEL = "GMTOOL_MODEL"
ENV_TOKENIZER = "GMTOOL_TOKENIZER"
ENV_VIEWER = "GMTOOL_PDF_VIEWER"
ENV_DEBUG = "GMTOOL_DEBUG"
# Undocumented (so not ENV_*, which the man page lists): tests and benches compare with the shipped graph.
NO_REWRITE_VAR = "GMTOOL_NO_REWRITE"

INDEX_DIRNAME = ".gmtool"


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything gmtool takes from the environment. An unset or empty variable reads as None/False."""

    library: Path | None  # $GMTOOL_LIBRARY, as given
    index_dir: Path | None  # $GMTOOL_INDEX_DIR, as given
    config_dir: Path  # $GMTOOL_CONFIG_DIR, else $XDG_CONFIG_HOME/gmtool, else ~/.config/gmtool
    cache_dir: Path  # $GMTOOL_CACHE_DIR, else $XDG_CACHE_HOME/gmtool, else ~/.cache/gmtool
    model: Path | None  # $GMTOOL_MODEL (~ expanded); None: the packaged model
    tokenizer: Path | None  # $GMTOOL_TOKENIZER (~ expanded); None: the packaged vocabulary
    no_rewrite: bool  # $GMTOOL_NO_REWRITE: run the shipped graph, not the optimised copy
    pdf_viewer: str  # $GMTOOL_PDF_VIEWER, stripped; "" when unset
    debug: bool  # $GMTOOL_DEBUG or --debug: tracebacks instead of one-line errors

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ

        def path(name: str, expand: bool = False) -> Path | None:
            value = env.get(name)
            if not value:
                return None
            return Path(value).expanduser() if expand else Path(value)

        return cls(
            library=path(ENV_LIBRARY),
            index_dir=path(ENV_INDEX_DIR),
            config_dir=path(ENV_CONFIG_DIR) or _xdg_dir(env, "XDG_CONFIG_HOME", ".config"),
            cache_dir=path(ENV_CACHE_DIR) or _xdg_dir(env, "XDG_CACHE_HOME", ".cache"),
            model=path(ENV_MODEL, expand=True),
            tokenizer=path(ENV_TOKENIZER, expand=True),
            no_rewrite=bool(env.get(NO_REWRITE_VAR)),
            pdf_viewer=env.get(ENV_VIEWER, "").strip(),
            debug=bool(env.get(ENV_DEBUG)),
        )

    @property
    def config_file(self) -> Path:
        return self.config_dir / "config.json"


@dataclass(frozen=True, slots=True)
class Paths:
    library: Path
    index_dir: Path
    library_from: str  # flag | env | remembered | cwd
    config_file: Path


def available_cores() -> int:
    """The cores this process may run on (its affinity mask, as `taskset` or a container sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on macOS and Windows
        return max(1, os.cpu_count() or 1)


def _xdg_dir(env: Mapping[str, str], xdg: str, fallback: str) -> Path:
    """The XDG base dir, else its usual place under the home dir."""
    base = env.get(xdg)
    if base:
        return Path(base) / "gmtool"
    home = env.get("HOME")
    return (Path(home) if home else Path.home()) / fallback / "gmtool"


def remembered_library(config_file: Path) -> Path | None:
    import json

    try:
        data = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("library") if isinstance(data, dict) else None
    return Path(value) if isinstance(value, str) and value else None


def resolve(library: str | Path | None, settings: Settings) -> Paths:
    if library:
        lib, how = Path(library), "flag"
    elif settings.library is not None:
        lib, how = settings.library, "env"
    elif (remembered := remembered_library(settings.config_file)) is not None:
        lib, how = remembered, "remembered"
    else:
        lib, how = Path.cwd(), "cwd"
    lib = lib.expanduser().resolve()
    index_dir = settings.index_dir.expanduser().resolve() if settings.index_dir else lib / INDEX_DIRNAME
    return Paths(library=lib, index_dir=index_dir, library_from=how, config_file=settings.config_file)
