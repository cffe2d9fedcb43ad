"""Open an HTML report in headless Chromium, save a screenshot, and check the page is clean.

Checks: the page loads in Chromium with **no console messages at all**
(the report has no scripts, so any console line is an error, a blocked load or a CSP violation),
and the loaded DOM holds no ``<script>`` element even though the report was fed hostile names.

    python benchmarks/report_screenshot.py            # the committed reports/index.html (+ re-render time)
    python benchmarks/report_screenshot.py --quick    # a small synthetic report with hostile strings
    python benchmarks/report_screenshot.py --html F --out shot.png

Writes the PNG (default ``benchmarks/results/report_screenshot.png``) and
``benchmarks/results/report_screenshot.json`` (machine, load, date, Chromium version, timings,
console lines). Exit status: 0 clean, 1 console messages or scripts found, 2 Chromium missing
(install the Debian ``chromium`` package).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import finish, machine

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell")
HOSTILE = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-extensions", "--no-first-run", "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]
CONSOLE = re.compile(r":CONSOLE[:(]")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


def synthetic_report(folder: Path) -> Path:
    """A small report with every verdict, plots, a formal proof and hostile strings."""
    import numpy as np

    from dpaudit.claims import Neighbours, PureDP
    from dpaudit.report import make_run, write_reports
    from dpaudit.results import AuditResult, Counterexample, Interval, Verdict

    rng = np.random.Generator(np.random.PCG64(7))
    a, b = rng.laplace(size=2000), rng.laplace(size=2000) + 1.2
    cx = Counterexample((1.0,), (), {"kind": "threshold", "text": "output > 0.6", "threshold": 0.6, "side": ">"},
                        0.41, 0.12, Interval(0.37, 0.45), Interval(0.10, 0.14))
    details = {"samples": {"d": a.tolist(), "d_prime": b.tolist()},
               "bound_curve": {"threshold": np.linspace(-1, 3, 25).tolist(),
                               "epsilon_lower_bound": (1.3 - 0.3 * (np.linspace(-1, 3, 25) - 0.6) ** 2).tolist(),
                               "chosen": 0.6}}
    recs = [
        AuditResult(HOSTILE, PureDP(1.0), Neighbours.ADD_REMOVE, Verdict.REFUTED, 1.25, None, 0.95, 400_000,
                    cx, f"dpaudit check 'evil.py:{HOSTILE}'", 2.1, details=details).to_record(),
        AuditResult("laplace", PureDP(1.0), Neighbours.ADD_REMOVE, Verdict.NOT_REFUTED, 0.97, None, 0.95,
                    400_000, None, "dpaudit audit --id laplace-sampled", 3.2).to_record(),
        {"kind": "formal", "target": "l1-helly-2d", "verdict": "proved", "expected": "proved", "id": "formal",
         "smt2": "(declare-const x Real)\n(assert (< x (- x 1)))\n(check-sat)\n", "elapsed_s": 0.2},
        {"kind": "formal", "target": "slow", "verdict": "inconclusive", "elapsed_s": 5.0},
        {"kind": "audit", "target": "crashy", "verdict": "error", "error": f"mechanism raised {HOSTILE}"},
    ]
    run = make_run(recs, seed=7, started=0, finished=1, command="synthetic", git=False)
    path = folder / "synthetic.html"
    write_reports(run, html=path)
    return path


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (recorded results stay portable)."""
    full = Path(path).resolve()
    return str(full.relative_to(ROOT)) if ROOT in full.parents else str(full)


def chromium(browser: str, args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([browser, *FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--html", type=Path, help="report to open (default reports/index.html)")
    p.add_argument("--out", type=Path, default=RESULTS / "report_screenshot.png", help="PNG to write")
    p.add_argument("--record", type=Path, help="JSON record to write (default next to --out)")
    p.add_argument("--quick", action="store_true", help="screenshot a small synthetic report instead")
    p.add_argument("--height", type=int, default=2400)
    args = p.parse_args(argv)

    browser = find_browser()
    if browser is None:
        print("report_screenshot: no Chromium found (install the Debian 'chromium' package)", file=sys.stderr)
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="dpaudit-shot-"))
    t0 = time.perf_counter()
    committed = args.html is None and not args.quick and (ROOT / "reports" / "index.html").exists()
    if committed and (ROOT / "reports" / "results.json").exists():
        # time a full re-render of the committed run (JSON -> HTML), as `dpaudit report` does it
        from dpaudit.report import read_json, render_html

        t0 = time.perf_counter()
        render_html(read_json(ROOT / "reports" / "results.json"))
    html = (ROOT / "reports" / "index.html") if committed else (
        args.html if args.html is not None and not args.quick else synthetic_report(tmp))
    render_s = time.perf_counter() - t0
    url = html.resolve().as_uri()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    t1 = time.perf_counter()
    shot = chromium(browser, [f"--window-size=1280,{args.height}", f"--screenshot={args.out.resolve()}", url])
    shot_s = time.perf_counter() - t1
    dom = chromium(browser, ["--dump-dom", url])
    console = [line for out in (shot.stderr, dom.stderr) for line in out.splitlines() if CONSOLE.search(line)]
    scripts = len(re.findall(r"<script\b", dom.stdout, flags=re.I))
    ok = shot.returncode == 0 and args.out.exists() and not console and scripts == 0 and "<main>" in dom.stdout
    version = subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip()
    record = {
        "machine": finish(machine()),
        "chromium": version, "html": "synthetic (--quick)" if html.parent == tmp else _shown(html),
        "html_bytes": html.stat().st_size,
        "screenshot": _shown(args.out), "render_s": round(render_s, 3), "screenshot_s": round(shot_s, 3),
        "console_lines": console, "script_elements": scripts, "ok": ok,
    }
    rec_path = args.record or args.out.with_suffix(".json")
    rec_path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"report_screenshot: {html} -> {args.out} ({shot_s:.1f} s); console messages: {len(console)}; "
          f"<script> elements: {scripts}; {'OK' if ok else 'FAILED'}")
    for line in console:
        print(f"  console: {line}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
