"""`forge report` renders one offline page; headless Chromium shows it, and the screenshot is not blank."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from click.testing import CliRunner

from forge.cli import main
from forge.report import roofline_chart, speedup_chart

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_is_self_contained_html(finished_run, tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert page.startswith("<!doctype html>") and "scale_add" in page and "<svg" in page
    assert "http://" not in page and "https://" not in page and "<script" not in page  # offline, no scripts


def test_charts_draw_the_roofline_and_the_rounds():
    chart = speedup_chart({"run1": [(1, 0.5), (2, 1.2), (3, 2.0)]})
    assert chart.count("<circle") == 3 and "1x" in chart
    roof = roofline_chart(flops=2e9, nbytes=3e8, ms=0.2, peak_flops=6.7e13, peak_bw=3.35e12)
    assert "polyline" in roof and "% of the device's 3350 GB/s" in roof
    assert "device peaks unknown" in roofline_chart(2e9, 3e8, 0.2, None, None)


@pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (CI installs it)")
def test_report_renders_in_headless_chromium(finished_run, tmp_path):
    from PIL import Image

    out = tmp_path / "report.html"
    CliRunner().invoke(main, ["report", "-o", str(out)])
    shot = tmp_path / "shot.png"
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", "--window-size=1200,1400",
        "--hide-scrollbars",
    ]  # fmt: skip
    subprocess.run([CHROMIUM, *flags, out.as_uri()], capture_output=True, timeout=120)
    image = Image.open(shot).convert("RGB")
    assert image.size == (1200, 1400)
    colors = image.getcolors(maxcolors=1 << 20) or []
    non_white = sum(count for count, rgb in colors if sum(rgb) < 720)
    assert len(colors) > 20, "the page rendered as a flat image"
    assert non_white / (1200 * 1400) > 0.01, "the screenshot is nearly blank"
    # the orange point of the speedup chart and the table's header fill are both there
    assert any(rgb == (0xEE, 0xF2, 0xF8) for _, rgb in colors)
