"""Experiments of DIGEST.md that need features other parts of tcplab are still building.
``--list`` shows them as pending; each becomes one module when its feature lands. None is
pending now: the WLAN, RED, parking-lot and ETH experiments have their modules (wlan.py,
areno_fig8.py, eth.py)."""

from __future__ import annotations

from tcplab.reproduce.experiment import Experiment

EXPERIMENTS: list[Experiment] = []
