"""A tiny version of the Veno Fig. 5 experiment (0.3 MB transfers, 2 seeds, 3 loss rates)
with the real analysis, plots, table and claims; built once per test process."""

from __future__ import annotations

import dataclasses
import functools
import tempfile

import polars as pl

from tcplab.reproduce import veno
from tcplab.reproduce.common import points
from tcplab.reproduce.experiment import run_suite
from tcplab.reproduce.readings import Reading, set_tcp
from tcplab.sweep import expand

LOSSES = [1e-5, 1e-4, 1e-2]


def tiny_points(mode):
    pts = []
    for label, cc in veno.FIG5_VARIANTS.items():
        base = {**veno.fig5_doc(cc), "name": "tiny-fig5"}
        base["flows"][0]["bytes"] = "300KB"
        pts += points(base, 2, {"topology.bottleneck.forward.loss.p": LOSSES}, params={"variant": label})
    return pts


def tiny_sensitivity_points(mode):
    """The first two stacks of the Fig. 5 sensitivity grid, 0.3 MB transfers, 2 seeds."""
    pts = []
    for p in veno.fig5_sensitivity_points(mode):
        if p.params["seed"] <= 2 and p.params["stack"] in {veno.stack_label(*s) for s in veno.FIG5_STACKS[:2]}:
            doc = {**p.document, "name": "tiny-fig5", "flows": [{**p.document["flows"][0], "bytes": "300KB"}]}
            pts += expand(doc, params={k: v for k, v in p.params.items() if k not in ("seed", "topology.bottleneck.forward.loss.p")})
    return pts


#: A reading of the tiny experiment (the suite runs its points again with it).
TINY_READING = Reading("initial window", "1 segment", "a test's reading", set_tcp(initial_cwnd=1))


def _veno_counted_double(res, mode):
    """A counting reading's analysis: the main runs, Veno's throughput counted twice over."""
    f = veno.fig5_analyze(res, mode)
    return f.with_columns(pl.when(pl.col("variant") == "veno").then(pl.col("kBps") * 2).otherwise(pl.col("kBps")))


#: A reading that changes no run: it counts the main runs another way.
TINY_COUNTING = Reading("Veno's bytes", "counted twice", "a test's counting reading", analyze=_veno_counted_double)

TINY_FIG5 = dataclasses.replace(
    veno.FIG5, points=tiny_points, sensitivity=dataclasses.replace(veno.FIG5.sensitivity, points=tiny_sensitivity_points),
    reading="the initial window of 2 segments", readings=(TINY_READING, TINY_COUNTING),
)
TINY_FIG4 = dataclasses.replace(veno.FIG4, points=tiny_points)


@functools.cache
def tiny_suite():
    out = tempfile.mkdtemp(prefix="tcplab-tiny-suite-")
    return run_suite([TINY_FIG4, TINY_FIG5], mode="quick", out=out, jobs=1, progress=False, readings=True)
