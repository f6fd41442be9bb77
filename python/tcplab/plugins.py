"""Python controllers from outside the process that names them: plugin files and installed
packages.

- A **plugin file** (``tcplab run --plugin mine.py``, also ``sweep``, ``compare``,
  ``validate``) is Python source that registers controllers (``tcplab.register_controller``)
  when it runs. :func:`load_plugin` runs it once per process; a sweep ships every loaded
  file's source to its workers (:func:`plugin_sources`, :func:`load_sources`): the local
  pool's processes run them as they start, a Dask cluster's workers through a worker plugin,
  so a worker on another machine needs only tcplab, not the file.
- An **installed package** declares its controllers as entry points of the group
  ``tcplab.controllers`` (``name = "package.module:Class"``); :func:`load_entry_points`
  registers every one not registered yet, and runs wherever a controller name is not known
  (so in every worker too) and for ``tcplab list``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["PluginError", "load_plugin", "load_sources", "plugin_sources", "load_entry_points", "ENTRY_POINT_GROUP"]

#: The entry-point group of installed controllers.
ENTRY_POINT_GROUP = "tcplab.controllers"

#: The plugin files this process ran: resolved path -> source (shipped to workers).
_loaded: dict[str, str] = {}
_entry_points_loaded = False


class PluginError(ValueError):
    """A plugin that cannot be loaded; the message is one line naming it."""


def _run_source(name: str, source: str) -> None:
    code = compile(source, name, "exec")
    exec(code, {"__name__": f"tcplab_plugin_{Path(name).stem}", "__file__": name})


def load_plugin(path: str | Path) -> None:
    """Runs plugin file `path` (once per process). Raises PluginError (one line) when it is
    missing or raises."""
    p = Path(path).expanduser().resolve()
    key = str(p)
    if key in _loaded:
        return
    try:
        source = p.read_text(encoding="utf-8")
    except OSError as e:
        raise PluginError(f"--plugin {path}: {e.strerror or e}") from None
    try:
        _run_source(key, source)
    except Exception as e:  # a plugin's own error, in one line
        raise PluginError(f"--plugin {path}: {type(e).__name__}: {e}") from None
    _loaded[key] = source


def plugin_sources() -> list[tuple[str, str]]:
    """(path, source) of every plugin file this process ran, in load order."""
    return list(_loaded.items())


def load_sources(sources: list[tuple[str, str]]) -> None:
    """Runs plugin sources shipped from another process (each once per process)."""
    for name, source in sources:
        if name not in _loaded:
            _run_source(name, source)
            _loaded[name] = source


def load_entry_points() -> list[str]:
    """Registers every controller of the ``tcplab.controllers`` entry points not registered
    yet (once per process); returns the names it registered. A broken entry point raises
    PluginError naming it."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return []
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    from tcplab import _native
    from tcplab.controller_registry import register_controller

    known = set(_native.controllers())
    added = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in known:
            continue
        try:
            cls: Any = ep.load()
        except Exception as e:
            raise PluginError(f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value}): {type(e).__name__}: {e}") \
                from None
        register_controller(ep.name, cls)
        added.append(ep.name)
    return added
