"""The run report's modules load lazily and can be imported while a run goes on
(tcplab.report.preload): importing the package does not import matplotlib, and prepare()
imports the report in a thread."""

from __future__ import annotations

import subprocess
import sys


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_importing_the_report_package_or_preload_does_not_import_matplotlib():
    code = "import sys, tcplab.report, tcplab.report.preload; print('matplotlib' in sys.modules)"
    assert _python(code) == "False"


def test_prepare_imports_the_report_in_a_thread_and_render_report_is_the_same_function():
    code = (
        "import sys, threading, tcplab.report as r\n"
        "from tcplab.report.preload import prepare\n"
        "prepare()\n"
        "[t.join() for t in threading.enumerate() if t.name == 'tcplab-report-import']\n"
        "import tcplab.report.page as p\n"
        "print('matplotlib' in sys.modules, r.render_report is p.render_report)"
    )
    assert _python(code) == "True True"
