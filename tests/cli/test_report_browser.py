"""The HTML report opens in headless Chromium with no console messages and no live script.

Runs ``benchmarks/report_screenshot.py`` (the recorded screenshot script) on a synthetic report fed
hostile names, and on a page with a console error to show the check can fail. Skipped, with a
message, only where Chromium is not installed (the Debian ``chromium`` package).
"""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "report_screenshot.py"

pytestmark = pytest.mark.skipif(
    not any(shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome", "headless_shell")),
    reason="headless Chromium not installed (apt-get install -y chromium); browser check skipped")


def shoot(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


@pytest.mark.slow
def test_report_loads_clean_and_hostile_names_are_inert(tmp_path):
    """The synthetic report (every verdict, plots, a formal proof, a record with two findings whose
    float64 one decides it, hostile names) loads in Chromium at 1400 px without a console line."""
    out = shoot("--quick", "--out", tmp_path / "shot.png")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "console messages: 0; <script> elements: 0; OK" in out.stdout
    png = (tmp_path / "shot.png").read_bytes()
    assert png_size(png)[0] == 1400 and len(png) > 10_000


@pytest.mark.slow
def test_the_check_catches_console_errors(tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><main><script>console.error("boom")</script></main></body></html>')
    out = shoot("--html", page, "--out", tmp_path / "bad.png")
    assert out.returncode == 1 and "FAILED" in out.stdout and "boom" in out.stdout


def test_the_committed_screenshots_are_1400_px_wide():
    shots = sorted((ROOT / "docs" / "screenshots").glob("*.png"))
    assert [p.stem for p in shots] == ["porosity", "replay", "scalar_threshold", "sensitivity_search",
                                        "vector_output"]
    for p in shots:
        assert png_size(p.read_bytes())[0] == 1400, p.name
