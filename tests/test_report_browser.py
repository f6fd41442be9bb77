"""Report quality: the single-run report and the reproduction report open in headless
Chromium: the page renders, every image loads, no console errors."""

from __future__ import annotations

import pytest

import tcplab
from browser import check_page, find_chromium
from conftest import SMALL_TOML
from tiny_suite import tiny_suite
from tcplab.reproduce import write_report
from tcplab.results import write_results

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed and could not be (bash .ci/run installs the Debian package "
    "'chromium' when run as root: apt-get install -y chromium)",
)


def assert_page_ok(path, min_images, width=1400):
    seen = check_page(path, CHROMIUM, width=width)
    assert seen.errors == [], seen.errors
    # Nothing wider than the window: tables scroll in their containers, images shrink.
    assert seen.viewport_width == width
    assert seen.scroll_width <= width, seen.scroll_width
    assert seen.title and seen.text_length > 500
    assert len(seen.images) >= min_images
    broken = [i for i in seen.images if not i["complete"] or i["naturalWidth"] <= 0]
    assert broken == [], broken
    assert all(i["src"].startswith("data:image/png;base64,") for i in seen.images)  # self-contained
    return seen


def test_single_run_report_renders_in_chromium(tmp_path):
    result = tcplab.run(tcplab.Scenario.from_toml(SMALL_TOML))
    out = write_results(result, tmp_path / "run")
    assert_page_ok(out / "report.html", min_images=3)


def test_a_64_flow_report_fits_a_1400_px_window(many_flows_run):
    _, out = many_flows_run
    seen = assert_page_ok(out / "report.html", min_images=8)
    assert all(i["naturalHeight"] <= 2000 for i in seen.images)
    assert all(i["width"] <= 1400 for i in seen.images)
    # At a narrower window too.
    assert_page_ok(out / "report.html", min_images=8, width=1000)


def test_reproduce_report_renders_in_chromium(tmp_path):
    path = write_report(tiny_suite(), tmp_path / "report.html")
    seen = assert_page_ok(path, min_images=2)
    assert any("Throughput vs loss" in i["alt"] for i in seen.images)


def test_a_broken_image_and_a_script_error_are_caught(tmp_path):
    # The check itself can fail: a page with a broken image and a console error.
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><title>bad</title></head><body>'
        '<img src="data:image/png;base64,AAAA" alt="broken"><script>console.error("boom")</script>'
        "</body></html>"
    )
    seen = check_page(bad, CHROMIUM)
    assert any("boom" in e for e in seen.errors)
    assert seen.images and seen.images[0]["naturalWidth"] == 0
