"""Open an HTML report in headless Chromium, save a screenshot, and check the page is clean.

Checks: the page loads in Chromium with **no console messages at all**
(the report has no scripts, so any console line is an error, a blocked load or a CSP violation),
and the loaded DOM holds no ``<script>`` element even though the report was fed hostile names.

    python benchmarks/report_screenshot.py            # the committed reports/index.html (+ re-render time)
    python benchmarks/report_screenshot.py --quick    # a small synthetic report with hostile strings
    python benchmarks/report_screenshot.py --html F --out shot.png [--width 1400 --height 2400]
    python benchmarks/report_screenshot.py --docs     # audit four small mechanisms, shoot docs/screenshots/

``--docs`` runs ``dpaudit check`` on a scalar threshold refutation (examples/buggy_mean.py), a
vector output with too little noise, a porous ``data.sum() + rng.laplace(1/ε)`` and a sensitivity
search (``--sensitivity``), and saves each report's screenshot at 1400 px under docs/screenshots/.

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
        _findings_record(),
    ]
    run = make_run(recs, seed=7, started=0, finished=1, command="synthetic", git=False)
    path = folder / "synthetic.html"
    write_reports(run, html=path)
    return path


def _findings_record() -> dict:
    """A hand-built record with two findings: porous float64 (REFUTED, deciding under
    --float error) and logic NOT REFUTED, with a 20-record counterexample and hostile text."""
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(11))
    d = (rng.laplace(size=1500)).tolist()
    dp = (1.0 + rng.laplace(size=1500)).tolist()
    data = [round(float(x), 2) for x in rng.random(19)]
    event = {"kind": "float-structure", "reason": "porosity", "family": "trailing", "side": "above",
             "text": f"outputs in [0.015625, 0.03125) whose last mantissa bit is 1; and 1 more cell "
                     f"(12% of outputs on D, never on D′) {HOSTILE}",
             "cell_codes": [130176.0, 130240.0]}
    flt = {"question": "float", "verdict": "refuted", "reason": None, "epsilon_lower_bound": 4.6,
           "delta_lower_bound": None, "counterexample": {"dataset": data, "neighbour": data[:5] + [1.0] + data[5:],
                                                         "event": event, "p": 0.12, "p_interval": [0.1, 0.14],
                                                         "q": 0.0, "q_interval": [0.0, 0.002]},
           "p_value": 1e-40, "margin": 4.6, "marginal": False, "power": None, "alpha": 0.0005,
           "confidence": 0.9995, "samples": 3000, "error": None,
           "details": {"bound_method": "ratio", "samples": {"d": d, "d_prime": dp}}}
    logic = {"question": "logic", "verdict": "not_refuted", "reason": None, "epsilon_lower_bound": 0.95,
             "delta_lower_bound": None, "counterexample": None, "p_value": 1.0, "margin": 0.95, "marginal": False,
             "power": None, "alpha": 0.0495, "confidence": 0.9505, "samples": 2000000, "error": None, "details": {}}
    return {"kind": "audit", "target": f"porous.py:{HOSTILE}", "claim": {"epsilon": 1.0, "delta": 0.0,
                                                                          "neighbours": "add-remove"},
            "verdict": "refuted", "method": "sampled", "epsilon_lower_bound": 4.6, "delta_lower_bound": None,
            "confidence": 0.95, "samples": 2003000, "counterexample": flt["counterexample"],
            "reproduce": "dpaudit check porous.py", "elapsed_s": 3.0, "error": None,
            "float_policy": "error", "decided_by": "float", "findings": {"logic": logic, "float": flt},
            "details": flt["details"]}


_VECTOR = '''"""A 4-bin histogram whose Laplace noise (scale 0.25) is too small for add-remove neighbours."""
import numpy as np

import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def histogram(data, rng, size=None):
    counts = np.histogram(data, bins=4, range=(0.0, 1.0))[0].astype(float)
    n = 1 if size is None else size
    out = counts + rng.laplace(scale=0.25, size=(n, 4))
    return out[0] if size is None else out
'''
_POROUS = '''"""A noisy sum, ε-DP over the reals, with plain float64 Laplace noise."""
import dpaudit


@dpaudit.mechanism(epsilon=1.0, neighbours="add-remove", domain=(0.0, 1.0), size=10)
def noisy_sum(data, rng, size=None):
    return data.sum() + rng.laplace(scale=1.0, size=size)
'''
_MEAN = '''def mean(data):
    """The mean of records in [0, 1]; its author declared sensitivity 1/10."""
    return data.sum() / len(data) if len(data) else 0.0
'''

#: the four reports of docs/screenshots/: name -> (mechanism file or None, its source, check
#: arguments, window height)
_DOCS = {
    "scalar_threshold": (None, "", ["examples/buggy_mean.py"], 1400),
    "vector_output": ("histogram.py", _VECTOR, ["histogram.py"], 1400),
    "sensitivity_search": ("stats.py", _MEAN, ["stats.py:mean", "--sensitivity", "0.1", "--size", "10"], 1150),
    "porosity": ("noisy_sum.py", _POROUS, ["noisy_sum.py"], 2450),
    "replay": (None, "", ["benchmarks/real_bugs/opacus_571_dataset_size.py", "--replay"], 1850),
}


def docs_screenshots(browser: str, out_dir: Path, names: list[str] | None = None) -> int:
    """Audit each mechanism of :data:`_DOCS` and save its report's screenshot under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, (file, source, flags, height) in _DOCS.items():
        if names and name not in names:
            continue
        work = Path(tempfile.mkdtemp(prefix=f"dpaudit-{name}-"))
        cwd = ROOT if file is None else work
        if file is not None:
            (work / file).write_text(source, encoding="utf-8")
        html = work / f"{name}.html"
        done = subprocess.run([sys.executable, "-m", "dpaudit", "check", *flags, "--html", str(html),
                               "--json", str(work / f"{name}.json")], cwd=cwd, capture_output=True, text=True,
                              timeout=900)
        print(done.stdout.strip())
        if not html.exists():
            print(f"report_screenshot: {name}: no report ({done.stderr.strip()})", file=sys.stderr)
            failed += 1
            continue
        png = out_dir / f"{name}.png"
        shot = chromium(browser, [f"--window-size=1400,{height}", f"--screenshot={png.resolve()}", html.as_uri()])
        ok = shot.returncode == 0 and png.exists()
        failed += not ok
        print(f"report_screenshot: {name} -> {_shown(png)} {'OK' if ok else 'FAILED'}")
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


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
    p.add_argument("--docs", nargs="*", metavar="NAME", default=None,
                   help=f"audit and shoot the reports of docs/screenshots/ (all, or NAME among {', '.join(_DOCS)})")
    p.add_argument("--width", type=int, default=1400, help="window width in pixels (default 1400)")
    p.add_argument("--height", type=int, default=2400)
    args = p.parse_args(argv)

    browser = find_browser()
    if browser is None:
        print("report_screenshot: no Chromium found (install the Debian 'chromium' package)", file=sys.stderr)
        return 2
    if args.docs is not None:
        return docs_screenshots(browser, ROOT / "docs" / "screenshots", args.docs)
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
    shot = chromium(browser, [f"--window-size={args.width},{args.height}", f"--screenshot={args.out.resolve()}", url])
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
