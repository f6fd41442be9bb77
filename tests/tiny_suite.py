"""A tiny version of the Veno Fig. 5 experiment (0.3 MB transfers, 2 seeds, 3 loss rates)
with the real analysis, plots, table and claims; built once per test process."""

from __future__ import annotations

import dataclasses
import functools
import tempfile

from tcplab.reproduce import veno
from tcplab.reproduce.common import bulk_flows, points
from tcplab.reproduce.experiment import run_suite

LOSSES = [1e-5, 1e-4, 1e-2]


def tiny_points(mode):
    pts = []
    trace = {"series": "interval", "interval": "160ms", "segments": False, "drops": False, "events": False}
    for label, cc in veno.FIG5_VARIANTS.items():
        base = veno._fig3a(1, "1.6Mbps", 12, 0.0, bulk_flows([cc], "reno", bytes="300KB"), "tiny-fig5", trace)
        pts += points(base, 2, {"topology.bottleneck.forward.loss.p": LOSSES}, params={"variant": label})
    return pts


TINY_FIG5 = dataclasses.replace(veno.FIG5, points=tiny_points)
TINY_FIG4 = dataclasses.replace(veno.FIG4, points=tiny_points)


@functools.cache
def tiny_suite():
    out = tempfile.mkdtemp(prefix="tcplab-tiny-suite-")
    return run_suite([TINY_FIG4, TINY_FIG5], mode="quick", out=out, jobs=1, progress=False)
