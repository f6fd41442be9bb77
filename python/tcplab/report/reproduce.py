"""The reproduction report (``tcplab reproduce``): one self-contained HTML file (plots embedded
as data URIs) and ``summary.json``; built with :mod:`tcplab.report.html`."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from tcplab import _native
from tcplab.report.drawing import drawn_page
from tcplab.report.html import page, png_data_uri
from tcplab.reproduce.experiment import Outcome, Suite
from tcplab.reproduce.verdict import FAILS, HOLDS, INCONCLUSIVE, VERDICTS

CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 1.5em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; padding-bottom: .2em; margin-top: 2em; }
table { border-collapse: collapse; margin: .6em 0; font-size: .9em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.holds { color: #0a6b0a; font-weight: bold; } .fails { color: #b00020; font-weight: bold; }
.inconclusive { color: #8a6d00; font-weight: bold; } .quote { font-style: italic; color: #333; }
.weak { color: #8a6d00; font-size: .85em; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .85em; color: #444; } code, pre { background: #f6f6f6; padding: .1em .3em; }
.meta { color: #555; font-size: .9em; }
"""


def md_inline(text: str) -> str:
    """Minimal Markdown for the explanation texts: escapes, then **bold**, `code`, paragraphs."""
    out = []
    for para in text.split("\n\n"):
        h = html.escape(para)
        h = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", h)
        h = re.sub(r"`(.+?)`", r"<code>\1</code>", h)
        h = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"<i>\1</i>", h)
        out.append(f"<p>{h}</p>")
    return "\n".join(out)


_VERDICT_CLASS = {HOLDS: "holds", FAILS: "fails", INCONCLUSIVE: "inconclusive"}


def _verdict_cell(verdict: str, note: str = "") -> str:
    small = f"<br><small>{html.escape(note)}</small>" if note else ""
    return f'<td class="{_VERDICT_CLASS.get(verdict, "fails")}">{html.escape(verdict)}{small}</td>'


def _quote(c) -> str:
    return f'<span class="quote">“{html.escape(c.quote)}”</span> ({html.escape(c.section)})'


def _weak(c) -> str:
    return f'<br><span class="weak">weakened: {html.escape(c.weakened)}</span>' if c.weakened else ""


def _rows_table(first: tuple[str, str], rows: list) -> list[str]:
    """A table of Rows: ``first`` names the quantity and published columns."""
    out = [
        f"<table><tr><th>{first[0]}</th><th>{first[1]}</th><th>tcplab (mean ± 95% CI)</th><th>unit</th></tr>"
    ]
    for r in rows:
        out.append(
            f"<tr><td>{html.escape(r.quantity)}</td><td>{html.escape(r.published)}</td>"
            f'<td class="num">{html.escape(r.measured())}</td><td>{html.escape(r.unit)}</td></tr>'
        )
    out.append("</table>")
    return out


def _outcome_html(o: Outcome) -> str:
    e = o.experiment
    parts = [
        f'<h2 id="{html.escape(e.id)}">{html.escape(e.paper)}, {html.escape(e.reference)}: {html.escape(e.title)}</h2>',
        f'<p class="meta">id <code>{html.escape(e.id)}</code>; {o.runs} runs'
        + ("; <b>live</b> (real packets; root)" if e.live is not None else "")
        + f"; rerun: <code>{html.escape(e.command(o.mode))}</code></p>",
    ]
    if o.error:
        parts.append(f'<p class="fails">{html.escape(o.error)}</p>')
    parts += ["<h3>Setting</h3>", md_inline(e.setting)]
    for p in o.plots:
        parts.append(
            f'<figure><img src="{png_data_uri(p.figure, dpi=90, compress_level=6)}" alt="{html.escape(p.alt)}">'
            f"<figcaption>{html.escape(p.caption)}</figcaption></figure>"
        )
    if o.rows:
        parts.append("<h3>Published vs measured</h3>")
        parts += _rows_table(("quantity", "published"), o.rows)
    if o.claims:
        parts.append(
            "<h3>Claims</h3><table><tr><th>claim (as tested)</th><th>the paper's words</th><th>threshold</th>"
            "<th>published</th><th>tcplab (95% CI)</th><th>verdict</th></tr>"
        )
        for c in o.claims:
            parts.append(
                f"<tr><td>{html.escape(c.text)}{_weak(c)}</td><td>{_quote(c)}</td><td>{html.escape(c.threshold)}</td>"
                f"<td>{html.escape(c.published)}</td><td>{html.escape(c.numbers)}</td>{_verdict_cell(c.verdict)}</tr>"
            )
        parts.append("</table>")
    if o.readings:
        parts += _readings_html(o)
    if o.sensitivity:
        parts.append("<h3>Sensitivity</h3>")
        if e.sensitivity is not None:
            parts.append(md_inline(e.sensitivity.note))
        parts += _rows_table(("setting", "headline?"), o.sensitivity)
    if text := e.explain(o.frame):
        parts.append("<h3>Differences from the paper</h3>")
        parts.append(md_inline(text))
    return "\n".join(parts)


def _readings_html(o: Outcome) -> list[str]:
    """The claims under every reading: which setting each row is, where it comes from, and
    each claim's verdict and measured value under it."""
    e = o.experiment
    head = "".join(f"<th>{html.escape(c.text)}</th>" for c in o.claims)
    def cells(claims: list) -> str:
        return "".join(_verdict_cell(c.verdict, c.measured()) for c in claims)

    out = ["<h3>Readings</h3>",
           "<p>What the paper leaves open, set otherwise: a setting runs the same points and seeds again, a "
           "counting choice reads the main runs its own way.</p>",
           f"<table><tr><th>setting</th><th>where it comes from</th>{head}</tr>",
           f"<tr><td>main runs</td><td>{md_inline(e.reading)}</td>{cells(o.claims)}</tr>"]
    for r in o.readings:
        row = cells(r.claims) if r.error is None else f'<td colspan="{len(o.claims)}">{html.escape(r.error)}</td>'
        out.append(f"<tr><td>{html.escape(r.reading.label)}</td><td>{md_inline(r.reading.source)}</td>{row}</tr>")
    out.append("</table>")
    return out


def _reading_counts_html(suite: Suite) -> list[str]:
    """The verdicts per experiment and setting (:meth:`Suite.reading_counts`), one table."""
    rows = suite.reading_counts()
    if not rows:
        return []
    out = ["<h2>Verdicts per reading</h2><table><tr><th>experiment</th><th>setting</th><th>holds</th>"
           "<th>does not hold</th><th>inconclusive</th></tr>"]
    out += [f"<tr><td>{html.escape(e)}</td><td>{html.escape(s)}</td>"
            + "".join(f'<td class="num">{n[v]}</td>' for v in VERDICTS) + "</tr>" for e, s, n in rows]
    return [*out, "</table>"]


def render_report(suite: Suite) -> str:
    """The reproduction report as one HTML string."""
    return drawn_page(lambda: _reproduce_page(suite))


def _reproduce_page(suite: Suite) -> str:
    rows = []
    for o in suite.outcomes:
        for c, h in zip(o.claims, o.headlines(), strict=True):
            rows.append(
                f'<tr><td><a href="#{html.escape(o.experiment.id)}">{html.escape(o.experiment.id)}</a></td>'
                f"<td>{html.escape(c.text)}{_weak(c)}</td><td>{_quote(c)}</td><td>{html.escape(c.published)}</td>"
                f'<td class="num">{html.escape(c.measured())}</td>{_verdict_cell(h["verdict"], h["qualifier"])}</tr>'
            )
    body = [
        "<h1>tcplab: reproductions of the papers</h1>",
        f'<p class="meta">tcplab {html.escape(_native.version())}; {suite.mode} mode; '
        f"{suite.started_at:%Y-%m-%d %H:%M} UTC; {suite.wall_time_s:.0f} s wall; "
        f"{suite.computed} runs computed, {suite.cached} reused from <code>{html.escape(str(suite.out))}</code>"
        + (f"; live: {suite.live_computed} runs made, {suite.live_cached} reused" if suite.live_computed or suite.live_cached else "")
        + ". "
        f"{html.escape(suite.tally())} (decided from 95% confidence intervals over seeds; see each experiment for "
        "every test and, where the paper leaves a setting open, every reading of it).</p>",
        *_reading_counts_html(suite),
        "<h2>Claims</h2><table><tr><th>experiment</th><th>claim (as tested)</th><th>the paper's words</th>"
        "<th>published</th><th>measured (95% CI)</th><th>verdict</th></tr>",
        *rows,
        "</table>",
        *[_outcome_html(o) for o in suite.outcomes],
    ]
    return page("tcplab reproductions", body, css=CSS)


def summary(suite: Suite) -> dict:
    """The claims, machine-readable: per experiment, each claim's verdict, published and
    measured values, CI, quote, section, threshold and weakened reason."""
    return {
        "tcplab": _native.version(),
        "mode": suite.mode,
        "started_at": suite.started_at.isoformat(),
        "wall_time_s": suite.wall_time_s,
        "runs_computed": suite.computed,
        "runs_cached": suite.cached,
        "live_runs_computed": suite.live_computed,
        "live_runs_cached": suite.live_cached,
        "confidence": 0.95,
        "experiments": [
            {
                "id": o.experiment.id,
                "paper": o.experiment.paper,
                "reference": o.experiment.reference,
                "runs": o.runs,
                "live": o.experiment.live is not None,
                "error": o.error,
                "reading": o.experiment.reading or None,
                "readings": [{"parameter": r.reading.parameter, "value": r.reading.value, "source": r.reading.source,
                              "diagnostic": r.reading.diagnostic, "error": r.error} for r in o.readings],
                "claims": [{**c.summary(), "headline": h} for c, h in zip(o.claims, o.headlines(), strict=True)],
            }
            for o in suite.outcomes
        ],
    }


def write_report(suite: Suite, path: str | Path) -> Path:
    """Writes the HTML report and, beside it, ``summary.json`` (:func:`summary`)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(render_report(suite), encoding="utf-8")
    tmp.replace(p)
    js = p.with_name("summary.json")
    tmp = js.with_name(f".{js.name}.tmp")
    tmp.write_text(json.dumps(summary(suite), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(js)
    return p
