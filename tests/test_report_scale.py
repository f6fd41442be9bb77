"""The run report at scale (64 flows): a page size bounded by reasoning, images sized for the
screen, legends beside the data rather than over it, tables that scroll, a window axis that
NewReno's inflated window does not flatten. The page in a browser: test_report_browser.py."""

from __future__ import annotations

import base64
import re
import struct

import numpy as np
import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from conftest import MANY_FLOWS_TOML
from tcplab.report.html import MAX_IMAGE_PX, png
from tcplab.report.interactive import BINS, FEW, bokeh_js, delay_at
from tcplab.report.overview import plot_delay_cdf, plot_flow_throughput, plot_throughput_delay
from tcplab.report.page import FLOWS_PER_FIGURE, MAX_DETAIL_FLOWS, detail_flows
from tcplab.report.plots import MAX_LINES, figure, plot_queues, plot_time_sequence, plot_windows, robust_top

IMG = re.compile(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"')
SCRIPT = re.compile(r"<script[^>]*>(.*?)</script>", re.S)


def png_size(b64: str) -> tuple[int, int]:
    """(width, height) from the PNG's IHDR chunk."""
    head = base64.b64decode(b64[:64])
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def test_page_size_is_bounded_by_its_images_and_rows(many_flows_run):
    result, out = many_flows_run
    html = (out / "report.html").read_text()
    images = IMG.findall(html)
    # A bounded number of images whatever the number of flows: 4 in the overview, the
    # timeout bars, the queues, and 3 per detail block of FLOWS_PER_FIGURE flows.
    blocks = -(-MAX_DETAIL_FLOWS // FLOWS_PER_FIGURE)
    assert len(images) <= 4 + 1 + 1 + 3 * blocks
    # Each image is an 8-bit palette PNG (html.png): one byte per pixel plus one filter byte
    # per row, which deflate stores with at most 5 bytes per 64 KiB block and 12 per IDAT
    # chunk; signature, header, palette (768 B) and end take under 2 KiB. Base64 adds 4/3.
    def image_bound(w: int, h: int) -> float:
        raw = h * (w + 1)
        return (raw * (1 + 17 / 65535) + 2048) * 4 / 3 + 4

    sizes = [png_size(b) for b in images]
    image_bytes = sum(image_bound(w, h) for w, h in sizes)
    # The text: per flow a row in the summary, delay, ETH loss-event, SACK and scenario
    # tables (about 64 cells of under 40 bytes) and its classification table (under 1.5 KB):
    # 4 KB; per link direction a row in the links and scenario tables: 1 KB; captions,
    # headings, explanations and the style sheet: 32 KB.
    links = result.links.height
    text_bytes = 32_000 + 4_000 * result.flows.height + 1_000 * links
    # The interactive plot over time: Bokeh's JavaScript once (a constant of the dependency),
    # and a document of 4 plots (under 8 KB of models each, 8 KB for the layout) whose
    # renderers (the total; for throughput and RTT a line per flow up to MAX_LINES flows, else
    # a band and a median; for the one-way delay a line per TCP and UDP flow, else the median,
    # the 95th percentile and FEW flows) take under 2 KB of models and 2 columns of at most
    # BINS + 1 float64 each, in base64.
    n = result.flows.height
    delay_flows = result.delay.height
    renderers = 1 + 2 * (n if n <= MAX_LINES else 2) + (delay_flows if delay_flows <= MAX_LINES else 2 + FEW)
    data = renderers * 2 * ((BINS + 1) * 8 * 4 / 3 + 4)
    script_bytes = len(bokeh_js()) + 4 * 8_000 + 8_000 + renderers * 2_000 + data
    size = len(html.encode())
    assert size <= image_bytes + text_bytes + script_bytes, (size, image_bytes, text_bytes, script_bytes)
    # Each part within its own bound.
    scripts = sum(len(x.encode()) for x in SCRIPT.findall(html))
    assert scripts <= script_bytes, scripts
    text = len(SCRIPT.sub("", IMG.sub('src=""', html)).encode())
    assert text <= text_bytes, text
    # Self-contained: nothing is fetched (the page works offline).
    assert not re.search(r"<script[^>]*\bsrc=|<link\b", html)


def test_no_image_is_taller_than_the_screen_allows(many_flows_run):
    _, out = many_flows_run
    for b in IMG.findall((out / "report.html").read_text()):
        w, h = png_size(b)
        assert w <= MAX_IMAGE_PX and h <= MAX_IMAGE_PX, (w, h)
    # A figure that would exceed it is refused, not embedded.
    fig, _ = figure(12, height=2.0)
    with pytest.raises(ValueError, match="larger than 2000 px"):
        png(fig)


def test_every_table_scrolls_in_its_container(many_flows_run):
    _, out = many_flows_run
    html = (out / "report.html").read_text()
    assert html.count("<table>") > 5
    assert html.count("<table>") == html.count("<div class='scroll'><table>")


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_legends_are_beside_the_plots_not_over_them(many_flows_run):
    result, _ = many_flows_run
    flows = detail_flows(result)[:FLOWS_PER_FIGURE]
    figures = [
        plot_flow_throughput(result),
        plot_throughput_delay(result),
        plot_delay_cdf(result),
        plot_queues(result)[0],
        plot_windows(result, flows),
        plot_time_sequence(result, flows=flows),
    ]
    legends = 0
    for fig in figures:
        canvas = FigureCanvasAgg(fig)
        renderer = canvas.get_renderer()
        plots = [ax.get_window_extent(renderer) for ax in fig.axes]
        for ax in fig.axes:
            leg = ax.get_legend()
            if leg is None:
                continue
            legends += 1
            box = leg.get_window_extent(renderer)
            assert not any(_overlaps(box, p) for p in plots), fig.axes[0].get_title()
            assert box.x1 <= fig.bbox.x1 + 1, "inside the figure"
            # A legend of per-flow entries is never 64 entries long.
            assert len(leg.get_texts()) <= 8
    assert legends >= 6


def test_detail_covers_the_range_of_throughputs(many_flows_run):
    result, _ = many_flows_run
    flows = detail_flows(result)
    tp = np.array(result.flows["throughput_bps"].to_list())
    assert len(flows) == MAX_DETAIL_FLOWS == len(set(flows))
    assert tp[flows].min() == tp.min() and tp[flows].max() == tp.max()


#: Two of those flows for 15 s: slow start overshoots and NewReno inflates the window by a
#: window's worth of duplicate ACKs.
INFLATING_TOML = (
    MANY_FLOWS_TOML.replace("pairs = 64", "pairs = 2")
    .replace("count = 64", "count = 2")
    .replace('duration = "3s"', 'duration = "15s"')
)


def test_the_inflated_window_does_not_flatten_the_plot():
    import tcplab

    result = tcplab.run(tcplab.Scenario.from_toml(INFLATING_TOML))
    # A NewReno flow whose window was inflated well above its usual size during recovery
    # (slow start's overshoot: a window's worth of duplicate ACKs).
    mss = 1460
    s = result.series
    peaks = []
    for f in range(result.flows.height):
        cwnd = s.filter(s["flow"] == f)["cwnd"].to_numpy() / mss
        peaks.append((cwnd.max() / np.percentile(cwnd, 95), f))
    ratio, f = max(peaks)
    assert ratio > 1.5, "the run has an inflated window to show"
    fig = plot_windows(result, [f])
    ax = fig.axes[0]
    cwnd = s.filter(s["flow"] == f)["cwnd"].to_numpy() / mss
    top = ax.get_ylim()[1]
    assert np.percentile(cwnd, 95) < top < cwnd.max(), "the bulk in view, the excursion clipped"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lbl.startswith("clipped") and f"up to {cwnd.max():.0f}" in lbl for lbl in labels), labels


def test_robust_top():
    # Without outliers: the maximum (with a margin); with a brief spike: the bulk.
    flat = np.linspace(0, 100, 1000)
    assert robust_top(flat) == pytest.approx(105)
    spiky = np.concatenate([np.full(990, 50.0), np.full(10, 500.0)])
    assert robust_top(spiky) == pytest.approx(62.5)
    assert robust_top(spiky, floor=80) == 80
    assert robust_top(np.array([np.nan])) == 1.0


def test_the_report_shows_one_way_delay_and_rtt_over_time_for_many_flows(many_flows_run):
    """The aggregate view has the one-way delay over time (median and 95th
    percentile across flows and a few flows, in the linked interactive plot) and the RTT's
    percentiles; the delay binned for the plot is the delay_series table's, weighted."""
    result, out = many_flows_run
    html = (out / "report.html").read_text()
    assert result.delay_series.height > 0
    assert "One-way delay per flow (mean of the packets arriving in each" in html
    assert "95th percentile across 64 flows" in html and "median across flows" in html
    assert "TCP smoothed RTT over flows (series samples): median of p50 / median of p95" in html
    assert f"the {FEW} flows of highest median delay" in html
    # Bins of 4 intervals: each bin's mean is the packet-weighted mean of its intervals.
    step = int(result.canonical["trace"]["interval"])
    edges = np.arange(0, int(result.canonical["duration"]) + 4 * step, 4 * step, dtype=np.int64)
    binned = delay_at(result, edges)
    assert binned is not None
    per_flow, names = binned
    assert per_flow.shape == (result.delay.height, edges.size - 1) and names[0] == "flow0"
    d = result.delay_series.filter((pl.col("flow_kind") == "tcp") & (pl.col("flow") == 5))
    for b in range(edges.size - 1):
        rows = d.filter((pl.col("time_ns") >= edges[b]) & (pl.col("time_ns") < edges[b + 1]))
        if rows.height == 0:
            assert np.isnan(per_flow[5, b])
        else:
            mean = (rows["delay_mean_ns"] * rows["packets"]).sum() / rows["packets"].sum() / 1e6
            assert per_flow[5, b] == pytest.approx(mean, rel=1e-12)


def test_queues_busiest_first_and_the_controller_legend_on_the_bars():
    """The bottleneck's queue plot comes before idle access links' (busiest first,
    as the caption says); the colours of the throughput bars are explained on the bars, not
    beside the CDF's single line."""
    import tcplab
    from conftest import SCENARIOS

    r = tcplab.run(SCENARIOS / "demo-dumbbell.toml", seed=1)
    fig, names = plot_queues(r)
    assert names[0].startswith("left-right forward"), names
    f = plot_flow_throughput(r)
    bars, cdf = f.axes[:2]
    assert bars.get_legend() is not None and cdf.get_legend() is None
