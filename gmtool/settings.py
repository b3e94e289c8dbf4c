"""Where the library and its index live, and the few settings that come from the environment.

Resolution order for the library: --library/-L, then $GMTOOL_LIBRARY, then the library the
last `scan` used (remembered in the user config dir), then the current directory.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

ENV_LIBRARY = "GMTOOL_LIBRARY"
ENV_INDEX_DIR = "GMTOOL_INDEX_DIR"
ENV_CONFIG_DIR = "GMTOOL_CONFIG_DIR"
ENV_CACHE_DIR = "GMTOOL_CACHE_DIR"
ENV_MODEL = "GMTOOL_MODEL"
ENV_TOKENIZER = "GMTOOL_TOKENIZER"
ENV_VIEWER = "GMTOOL_PDF_VIEWER"

INDEX_DIRNAME = ".gmtool"


@dataclass(frozen=True, slots=True)
class Paths:
    library: Path
    index_dir: Path
    library_from: str  # flag | env | remembered | cwd
    config_file: Path


def _user_dir(override: str, xdg: str, fallback: str) -> Path:
    """$GMTOOL_* override, else the XDG base dir, else its usual place under the home dir."""
    env = os.environ.get(override)
    if env:
        return Path(env)
    base = os.environ.get(xdg)
    return (Path(base) if base else Path.home() / fallback) / "gmtool"


def config_dir() -> Path:
    """The user config dir; $GMTOOL_CONFIG_DIR overrides it (tests isolate themselves this way)."""
    return _user_dir(ENV_CONFIG_DIR, "XDG_CONFIG_HOME", ".config")


def cache_dir() -> Path:
    return _user_dir(ENV_CACHE_DIR, "XDG_CACHE_HOME", ".cache")


def _config_file() -> Path:
    return config_dir() / "config.json"


def remembered_library() -> Path | None:
    try:
        data = json.loads(_config_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get("library") if isinstance(data, dict) else None
    return Path(value) if isinstance(value, str) and value else None


def resolve(library: str | Path | None = None) -> Paths:
    if library:
        lib, how = Path(library), "flag"
    elif os.environ.get(ENV_LIBRARY):
        lib, how = Path(os.environ[ENV_LIBRARY]), "env"
    elif (remembered := remembered_library()) is not None:
        lib, how = remembered, "remembered"
    else:
        lib, how = Path.cwd(), "cwd"
    lib = lib.expanduser().resolve()
    env_index = os.environ.get(ENV_INDEX_DIR)
    index_dir = Path(env_index).expanduser().resolve() if env_index else lib / INDEX_DIRNAME
    return Paths(library=lib, index_dir=index_dir, library_from=how, config_file=_config_file())
