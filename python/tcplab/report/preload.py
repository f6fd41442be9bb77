"""Getting the run report ready while the run goes on: :func:`prepare` imports the report's
modules (matplotlib and its fonts, about 0.4 s) in a thread while the simulation or the
writing of the tables holds the process (both leave the interpreter lock free), so that the
report does not wait for them afterwards."""

from __future__ import annotations

import importlib
import sys
import threading

__all__ = ["prepare"]


#: Set once a thread has been started: `tcplab run` prepares before the simulation and
#: `write_results` again before the tables, and one import is enough.
_started = threading.Event()


def prepare() -> None:
    """Starts importing the report's modules in a background thread, once per process, and
    returns at once (the report then imports them as usual: at once if the thread is done,
    else after it; an error is raised there, not here)."""
    if not _started.is_set() and "tcplab.report.page" not in sys.modules:
        _started.set()
        threading.Thread(target=_import_report, name="tcplab-report-import", daemon=True).start()


def _import_report() -> None:
    try:
        importlib.import_module("tcplab.report.page")
    except Exception:  # the report imports it again, and raises there
        pass
