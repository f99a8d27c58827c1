"""Regenerate the measured figures of README.md and the guides and print them, with ranges over
seeds (`WHERE` says which file holds which figures).

    python -m benchmarks.readme_figures                 # everything, 3 seeds (~10 min quiet)
    python -m benchmarks.readme_figures --only demo     # demo | compare | sort | tests
    python -m benchmarks.readme_figures --seeds 5

Each figure is measured by running the very command its README names beside it, in a fresh
process (``python -m models ...``, ``python -m pytest ...``) with one BLAS thread, into a
temporary folder. Wall-clock times depend on the machine and on what else runs on it: the
report starts with the machine (CPU model, cores, load average before and after) so a
figure can be judged. Accuracies do not depend on the load: for a seed they are the same on
every run of the same code.
"""
from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

PARTS = ("demo", "compare", "sort", "tests")
# Where each part's figures are written, beside "python -m benchmarks.readme_figures --only PART"
# (tests/docs/test_entrance.py checks that each of these files names that command).
WHERE = {"demo": ("README.md", "models/README.md"),   # the entrance's Demos; "The main demo"
         "compare": ("models/app/README.md",),        # compare-length's table
         "sort": ("models/app/README.md",),           # the sort example under "Commands"
         "tests": ("models/README.md",)}              # "In code": the count of tests/models


def machine() -> str:
    """CPU model, cores, Python, NumPy and the 1-minute load average."""
    cpu = platform.processor() or "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"NumPy {np.__version__}; load average {load:.1f}")


def run(args: list, cwd: str) -> tuple:
    """(stdout, wall seconds) of ``python args`` with one BLAS thread; raises on failure."""
    env = dict(os.environ, OMP_NUM_THREADS="1", CI="true")
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    started = time.perf_counter()
    done = subprocess.run([sys.executable] + args, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}):\n{done.stdout[-2000:]}"
                           f"\n{done.stderr[-2000:]}")
    return done.stdout, seconds


def span(values, fmt="{:.1f}") -> str:
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"


def demo(seeds: int, tmp: str) -> list:
    """python -m models (= demo): wall time, held-out and wild exact match per seed."""
    rows = []
    for seed in range(seeds):
        out, sec = run(["-m", "models", "demo", "--seed", str(seed), "--out", f"{tmp}/demo{seed}"], tmp)
        m = re.search(r"exact match: ([\d.]+)% on (\d+) held-out generated dates, ([\d.]+)% on "
                      r"(\d+) hand-written", out)
        epochs = len(re.findall(r"^epoch +\d+/", out, flags=re.M))
        rows.append((sec, float(m[1]), float(m[3]), epochs, int(m[4])))
        print(f"  demo seed {seed}: {sec:.1f} s wall, {epochs} epochs, held-out {m[1]}%, "
              f"wild {m[3]}% of {m[4]}", flush=True)
    secs, val, wild, epochs, n = zip(*rows)
    return [f"python -m models: {span(secs, '{:.0f}')} s wall clock, {span(val)}% held-out "
            f"exact match (1000 generated dates), {span(wild)}% on the {n[0]} wild dates, "
            f"{span(epochs, '{:d}')} epochs (seeds 0–{seeds - 1})"]


def compare(seeds: int, tmp: str) -> list:
    """python -m models compare-length: the table's range per length and model, and the time."""
    tables, secs = [], []
    for seed in range(seeds):
        out, sec = run(["-m", "models", "compare-length", "--seed", str(seed), "--out",
                        f"{tmp}/cmp{seed}"], tmp)
        rows = re.findall(r"^ +(\d+) +([\d.]+)% +([\d.]+)%$", out, flags=re.M)
        tables.append({int(k): (float(a), float(b)) for k, a, b in rows})
        secs.append(sec)
        worst = min(b for _, b in tables[-1].values())
        print(f"  compare-length seed {seed}: {sec:.0f} s, attention worst length {worst}%",
              flush=True)
    lines = [f"python -m models compare-length: {span(secs, '{:.0f}')} s wall clock "
             f"(seeds 0–{seeds - 1}); exact match by source length, range over the seeds:",
             "length  no attention   attention"]
    for k in sorted(tables[0]):
        lines.append(f"{k:>6}  {span([t[k][0] for t in tables]) + '%':>12}  "
                     f"{span([t[k][1] for t in tables]) + '%':>10}")
    return lines


def sort(seeds: int, tmp: str) -> list:
    """The README's sort example: time and final held-out exact match."""
    rows = []
    for seed in range(seeds):
        out, sec = run(["-m", "models", "train", "--task", "sort", "--decoder", "luong", "--score",
                        "dot", "--input-feeding", "--seed", str(seed), "--out", f"{tmp}/sort{seed}"],
                       tmp)
        accs = re.findall(r"exact\(val\) +([\d.]+)%", out)
        best = re.search(r"keeping the weights of epoch \d+ \(([\d.]+)%", out)
        rows.append((sec, float(best[1]) if best else float(accs[-1]), len(accs)))
        print(f"  sort seed {seed}: {sec:.0f} s, {rows[-1][1]}% after {len(accs)} epochs", flush=True)
    secs, acc, epochs = zip(*rows)
    return [f"python -m models train --task sort --decoder luong --score dot --input-feeding: "
            f"{span(secs, '{:.0f}')} s "
            f"wall clock, {span(acc)}% held-out exact match, {span(epochs, '{:d}')} epochs "
            f"(seeds 0–{seeds - 1})"]


def tests(seeds: int, tmp: str) -> list:
    """Test counts and times: tests/models, and the whole suite (CI=true, one run each)."""
    lines = []
    for what in (["tests/models"], []):
        out, sec = run(["-m", "pytest", "-q", "-p", "no:cacheprovider"] + what, os.getcwd())
        passed = re.search(r"(\d+) passed", out)
        lines.append(f"CI=true python -m pytest -q {' '.join(what)}: {passed[1]} passed in {sec:.0f} s")
        print("  " + lines[-1], flush=True)
    out, _ = run(["-m", "pytest", "-q", "--collect-only", "-m", "slow", "tests/models"], os.getcwd())
    slow = re.search(r"(\d+)(/\d+)? tests? (collected|selected)", out)[1]
    lines.append(f"  of tests/models, marked slow: {slow}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.readme_figures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=3, help="seeds per figure (default 3)")
    p.add_argument("--only", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    a = p.parse_args(argv)
    parts = [x for x in a.only.split(",") if x]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown or a.seeds < 1:
        p.error(f"--only takes {PARTS}, got {unknown}" if unknown else "--seeds must be >= 1")
    print(f"machine: {machine()}", flush=True)
    report = []
    with tempfile.TemporaryDirectory(prefix="readme-figures-") as tmp:
        for part in parts:
            report += [f"[{part}: {', '.join(WHERE[part])} and their README.zh-CN.md]"]
            report += globals()[part](a.seeds, tmp)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}\n\nREADME figures\n" + "\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
