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
from tcplab.report.interactive import BINS, FEW, delay_at, plotter_js
from tcplab.report.overview import plot_delay_cdf, plot_flow_throughput, plot_throughput_delay
from tcplab.report.page import FLOWS_PER_FIGURE, MAX_DETAIL_FLOWS, detail_flows, render_report
from tcplab.report.selection import MAX_TABLE_ROWS, table_flows, table_links
from tcplab.report.plots import (
    MAX_LINES,
    PLOT_BINS,
    envelope,
    figure,
    pixel_cells,
    plot_pixels,
    plot_queues,
    plot_time_sequence,
    plot_windows,
    robust_top,
)

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
    links = min(result.links.height, MAX_TABLE_ROWS)  # the tables show at most that many rows
    text_bytes = 32_000 + 4_000 * min(result.flows.height, MAX_TABLE_ROWS) + 1_000 * links
    # The interactive plot over time: the plotter's JavaScript once (a constant of the page),
    # and a spec of 4 plots (under 8 KB each, 8 KB for the rest) whose series (the total; for
    # throughput and RTT a line per flow up to MAX_LINES flows, else a band and a median; for
    # the one-way delay a line per TCP and UDP flow, else the median, the 95th percentile and
    # FEW flows) take under 2 KB of description and 2 columns of at most BINS + 1 float64
    # each, in base64 (a line's values and its share of the time axes; a band's two edges).
    n = result.flows.height
    delay_flows = result.delay.height
    renderers = 1 + 2 * (n if n <= MAX_LINES else 2) + (delay_flows if delay_flows <= MAX_LINES else 2 + FEW)
    data = renderers * 2 * ((BINS + 1) * 8 * 4 / 3 + 4)
    script_bytes = len(plotter_js()) + 4 * 8_000 + 8_000 + renderers * 2_000 + data
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


# ---- bounded drawing (issue 27 §4): long series downsampled for plotting, the page's size
# independent of the number of flows; the data files keep every row --------------------------


def test_envelope_keeps_each_columns_extremes_in_a_bounded_number_of_points():
    rng = np.random.default_rng(3)
    n, bins = 200_000, 250
    x = np.sort(rng.uniform(0, 60, n))
    y = rng.integers(0, 30, n).astype(float)
    y[rng.choice(n, 20, replace=False)] = 1000.0  # spikes, one sample each
    y[5000:5100] = np.nan  # a gap (ssthresh before the first loss)
    keep = envelope(x, y, bins)
    assert keep.size <= 4 * bins and np.all(np.diff(keep) > 0)
    assert keep[0] == 0 and keep[-1] == n - 1
    col = np.minimum(((x - x[0]) * (bins / (x[-1] - x[0]))).astype(int), bins - 1)
    for c in range(bins):
        allv, kept = y[col == c], y[keep][col[keep] == c]
        assert kept.size >= 1
        if np.isfinite(allv).any():
            assert np.nanmin(kept) == np.nanmin(allv) and np.nanmax(kept) == np.nanmax(allv), c
    assert set(col[keep][y[keep] == 1000.0]) == set(col[y == 1000.0]), "every spike is drawn"
    # A short series is drawn whole.
    assert np.array_equal(envelope(x[:100], y[:100], bins), np.arange(100))


def test_pixel_cells_draws_each_occupied_cell_once_and_keeps_the_axis_limits():
    rng = np.random.default_rng(4)
    x, y = rng.uniform(0, 10, 100_000), rng.uniform(-5, 5, 100_000)
    keep = pixel_cells(x, y, 60, 40)
    assert keep.size <= 60 * 40 + 4
    for v, k in ((x, keep), (y, keep)):
        assert v[k].min() == v.min() and v[k].max() == v.max()
    cell = lambda v, k: np.minimum(((v - v.min()) * (k / (v.max() - v.min()))).astype(int), k - 1)  # noqa: E731
    occupied = set(zip(cell(x, 60), cell(y, 40)))
    assert set(zip(cell(x, 60)[keep], cell(y, 40)[keep])) == occupied


@pytest.fixture(scope="module")
def demo_run():
    import tcplab
    from conftest import SCENARIOS

    return tcplab.run(SCENARIOS / "demo-dumbbell.toml", seed=1)


def _cells(v: np.ndarray, k: int) -> np.ndarray:
    span = v.max() - v.min()
    return np.zeros(v.size, dtype=int) if span == 0 else np.minimum(((v - v.min()) * (k / span)).astype(int), k - 1)


def test_every_figure_draws_a_bounded_number_of_points_and_keeps_the_extremes(demo_run):
    """The demo's queue and window series are hundreds of thousands of rows: each line is
    drawn with at most 4 points per column of PLOT_BINS (more than the plot's pixels), each
    scatter with at most a point per half-pixel cell (and the extremes), whatever the run's
    length; the peaks stay in the picture."""
    r = demo_run
    assert r.queues.height > 20 * PLOT_BINS, "a long series to bound"
    flows = detail_flows(r)[:FLOWS_PER_FIGURE]
    qfig, names = plot_queues(r)
    figures = [
        qfig,
        plot_windows(r, flows),
        plot_time_sequence(r, flows=flows),
        plot_time_sequence(r, zoom=True, flows=flows),
        plot_flow_throughput(r),
        plot_throughput_delay(r),
        plot_delay_cdf(r),
    ]
    for fig in figures:
        for ax in fig.axes:
            cols, rows = plot_pixels(ax)
            for line in ax.get_lines():
                assert len(line.get_xdata()) <= 4 * PLOT_BINS, ax.get_title(loc="left")
            for coll in ax.collections:
                xy = np.asarray(coll.get_offsets())
                assert len(xy) <= 4 * cols * rows + 4, ax.get_title(loc="left")
                if len(xy) > 2 * cols:  # deduplicated: no two points in a half-pixel cell but the extremes
                    keys = {
                        (a, b)
                        for a, b in zip(_cells(xy[:, 0], 2 * cols), _cells(xy[:, 1], 2 * rows))
                    }
                    assert len(keys) >= len(xy) - 4, ax.get_title(loc="left")
    # The bottleneck's queue: its highest and lowest values are drawn.
    links = r.links
    bottleneck = next(i for i in range(links.height) if links["link"][i] == "left-right" and links["direction"][i] == "forward")
    q = r.queues.filter(pl.col("link") == bottleneck)["packets"].to_numpy()
    drawn = qfig.axes[0].get_lines()[0].get_ydata()
    assert len(drawn) < q.size and drawn.max() == q.max() and drawn.min() == q.min()
    # The windows: every flow's largest window is drawn.
    wfig = figures[1]
    mss = 1448
    for f, ax in zip(flows, wfig.axes):
        cwnd = r.series.filter(pl.col("flow") == f)["cwnd"].to_numpy() / mss
        assert ax.get_lines()[0].get_ydata().max() == cwnd.max()


def _without_tables(html: str) -> str:
    return re.sub(r"<div class='scroll'><table>.*?</table></div>", "", html, flags=re.S)


#: The page less its tables (which hold a row per flow: every number stays) is under this
#: whatever the number of flows: at most 4 + 1 + 1 + 3 * 2 images of a few tens of KB (line
#: plots compress well), the plotter and a spec of bounded size (BINS points per series).
PAGE_WITHOUT_TABLES = 800_000


def test_the_page_is_the_same_size_for_2_or_many_flows(tmp_path, many_flows_run, demo_run):
    from tcplab.report import render_report

    small = _without_tables(render_report(demo_run))
    _, out = many_flows_run
    many = _without_tables((out / "report.html").read_text())
    for html in (small, many):
        assert len(html.encode()) <= PAGE_WITHOUT_TABLES, len(html.encode())
        # one plotter, no library inline
        assert html.count("window.tcplabPlot = function") == 1 and "Bokeh" not in html
    # 64 flows draw no more than twice the 2 flows' page (one more detail block of figures).
    assert len(many) <= 2 * len(small), (len(many), len(small))


def test_the_interactive_spec_holds_a_bounded_number_of_points(many_flows_run):
    import base64
    import json

    result, out = many_flows_run
    html = (out / "report.html").read_text()
    calls = re.findall(r"tcplabPlot\(document\.getElementById\('([^']+)'\), (\{.*?\})\);</script>", html)
    assert len(calls) == 1
    div, doc = calls[0]
    assert f"<div id='{div}'" in html
    spec = json.loads(doc)

    def n(b64: str) -> int:
        return len(base64.b64decode(b64)) // 8

    assert all(n(a) <= BINS + 1 for a in spec["x"].values())
    titles = [p["title"] for p in spec["panels"]]
    assert len(titles) == 4 and titles[0].startswith("Total throughput") and titles[3].startswith("One-way delay")
    for p in spec["panels"]:
        assert len(p["series"]) <= 2 + FEW
        for s in p["series"]:
            for key in ("y", "lo", "hi"):
                if key in s:
                    assert n(s[key]) == n(spec["x"][s["x"]]), (p["title"], s["label"])


def test_a_title_placed_by_hand_clears_the_axis_offset_text_as_matplotlib_would():
    """The report's plots give their titles' position (y=1.0: matplotlib need not place them
    at every draw); png() lifts such a title over an overlapping offset text ("1e6" above the
    y axis) as matplotlib's automatic placement does: the same pixels."""

    def drawn(**kw):
        fig, (ax,) = figure(1, height=2.2)
        ax.plot(np.arange(10), 1e6 + np.arange(10) * 1e-1)  # an offset over the y axis
        ax.set_title("a long title at the left of the plot", fontsize=10, loc="left", **kw)
        return png(fig)

    fig, (ax,) = figure(1, height=2.2)
    ax.plot(np.arange(10), 1e6 + np.arange(10) * 1e-1)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    assert ax.yaxis.offsetText.get_text(), "the case this covers"
    assert drawn(y=1.0) == drawn()


def test_series_at_is_each_flows_latest_sample(many_flows_run):
    from tcplab.report.plots import run_end_ns, series_at

    result, _ = many_flows_run
    edges = np.arange(0, run_end_ns(result) + 7_000_000, 7_000_000, dtype=np.int64)
    for column, before in (("delivered", 0.0), ("srtt_ns", np.nan)):
        got = series_at(result, column, edges, before=before)
        for (f,), rows in result.series.group_by(["flow"]):
            t = rows["time_ns"].to_numpy().astype(np.int64)
            v = rows[column].to_numpy().astype(np.float64)
            idx = np.searchsorted(t, edges, side="right") - 1
            want = np.where(idx >= 0, v[np.clip(idx, 0, None)], before)
            np.testing.assert_array_equal(got[int(f)], want)


#: More flows than a table shows (report/selection.py), a few seconds of simulation.
WIDE_TOML = f"""
name = "wide"
seed = 3
duration = "1s"

[topology]
pairs = {MAX_TABLE_ROWS + 50}
bottleneck = {{ rate = "50Mbps", delay = "10ms", buffer = 200 }}
sender_access = {{ rate = "1Gbps", delay = "1ms", buffer = 1000 }}
receiver_access = {{ rate = "1Gbps", delay = "1ms", buffer = 1000 }}

[trace]
series = "off"
segments = false

[[flows]]
count = {MAX_TABLE_ROWS + 50}
controller = "reno"
recovery = "sack"
start_step = "3ms"
"""


def _tables(html: str, first_header: str) -> list[list[str]]:
    """The body rows of every table whose first header cell is ``first_header``."""
    out = []
    for m in re.finditer(f'<thead><tr><th class="l">{re.escape(first_header)}</th>', html):
        body = html[html.index("<tbody>", m.start()) + 7 : html.index("</tbody>", m.start())]
        out.append(re.findall(r"<tr>(.*?)</tr>", body))
    return out


def test_tables_show_a_bounded_spread_of_the_flows_and_the_busiest_links():
    import tcplab

    result = tcplab.run(tcplab.Scenario.from_toml(WIDE_TOML))
    n = result.flows.height
    assert n > MAX_TABLE_ROWS and result.links.height > MAX_TABLE_ROWS
    html = render_report(result)
    shown = table_flows(result)
    assert len(shown) == MAX_TABLE_ROWS and shown == sorted(shown)
    tp = result.flows["throughput_bps"].to_list()
    slowest, fastest = min(range(n), key=tp.__getitem__), max(range(n), key=tp.__getitem__)
    assert {slowest, fastest} <= set(shown)  # both ends of the ranking
    names = result.flows["name"].to_list()
    # Every per-flow table (delay, summary, ETH loss events and SACK blocks, the scenario's
    # flows): of those flows, in flow order (the SACK table only those that carried a block),
    # the summary all of them, and a line under each saying which.
    expected = [names[i] for i in shown]
    tables = [[re.search(r'<td class="l">(.*?)</td>', r).group(1) for r in rows] for rows in _tables(html, "flow")]
    assert len(tables) >= 5 and expected in tables
    for got in tables:
        assert got == [x for x in expected if x in set(got)]
    assert html.count(f"{MAX_TABLE_ROWS} of the {n} flows") == len(tables)
    links = table_links(result)
    assert [len(rows) for rows in _tables(html, "link")] == [len(links)] == [MAX_TABLE_ROWS]
    util = result.links["utilization"].to_list()
    assert min(util[i] for i in links) >= max(u for i, u in enumerate(util) if i not in set(links))
    assert f"{MAX_TABLE_ROWS} of the {result.links.height} link directions" in html
