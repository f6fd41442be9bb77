"""tcplab: a TCP congestion-control laboratory.

    import tcplab
    result = tcplab.run("scenarios/demo-dumbbell.toml", progress=True)
    result.flows            # polars DataFrame, one row per TCP flow
    result.write("results/demo")   # Parquet tables, summary.json, report.html

See docs/python-api.md.
"""

from tcplab import _native
from tcplab.controller_registry import (
    AckSample,
    CongestionEvent,
    Controller,
    ControllerContext,
    CrossLayerReport,
    register_controller,
    unregister_controller,
)
from tcplab.run import TABLES, RunResult, run
from tcplab.scenario import Scenario, ScenarioError, load_scenario

__version__ = _native.version()


def controllers() -> list[str]:
    """Names of the congestion controllers the simulator knows (built-in, then registered)."""
    return list(_native.controllers())


def recoveries() -> list[str]:
    """Names of the loss-recovery strategies the simulator knows."""
    return list(_native.recoveries())


def version() -> str:
    return __version__


__all__ = [
    "AckSample",
    "CongestionEvent",
    "Controller",
    "ControllerContext",
    "CrossLayerReport",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "TABLES",
    "controllers",
    "load_scenario",
    "recoveries",
    "register_controller",
    "run",
    "unregister_controller",
    "version",
    "__version__",
]
