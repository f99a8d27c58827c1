"""Regenerate the measured figures of README.md and the guides and print them, with ranges over
seeds and BLAS kernels (`WHERE` says which file holds which figures).

    python -m benchmarks.readme_figures                 # everything, 3 seeds (~35 min, 2 quiet cores)
    python -m benchmarks.readme_figures --only demo     # one or more of PARTS, comma-separated
    python -m benchmarks.readme_figures --seeds 5
    python -m benchmarks.readme_figures --only demo --kernels Haswell,SkylakeX,Sandybridge

A guide states each figure as its range over the seeds and kernels measured here, and a test
checks a run against it (tests/docs/test_readme_runs.py for a transcript,
tests/benchmarks/test_readme_figures.py for a table). Each figure is measured by running the
very command its README names beside it, in a fresh process (``python -m models ...``) with one
BLAS thread, into a temporary folder, once per seed and per kernel. `--kernels` sets OPENBLAS_CORETYPE for each
run (without it, or for "", the variable stays as the environment has it; unset, OpenBLAS
picks the kernel for this CPU; a kernel the CPU cannot run dies with an illegal instruction,
e.g. SkylakeX without AVX-512). The kernel decides the last digits of every product and a
training run amplifies them, so a figure of a training run is a range over seeds and kernels.
For the parts that print a transcript (demo, scores, models, inspect, sort), the report also gives
the output merged over the runs: each number that differed between runs is shown as its range
"lo–hi" (the form tests/docs/test_readme_runs.py checks a transcript against), and a line that
was not the same in every run apart from its numbers (a heatmap row, a wild date that failed)
is marked "~". Wall-clock times depend on the machine and on what else runs on it: the report
starts with the machine (CPU model, cores, load average before and after).
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

PARTS = ("demo", "compare", "scores", "models", "inspect", "sort")
# Where each part's figures are written, beside "python -m benchmarks.readme_figures --only PART"
# (tests/docs/test_entrance.py checks that each of these files names that command).
WHERE = {"demo": ("README.md", "models/README.md"),   # the entrance's Demos; "The main demo"
         "compare": ("models/app/README.md",),        # compare-length's table
         "scores": ("models/app/README.md",),         # compare-scores' table
         "models": ("models/README.md",),             # compare-models' table (the Transformer)
         "inspect": ("models/app/README.md",),        # inspect, untrained and trained
         "sort": ("models/app/README.md",)}           # the sort example under "Commands"


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


KERNELS = [""]  # OPENBLAS_CORETYPE per run, set by --kernels; "" = as the environment has it


def run(args: list, cwd: str, kernel: str = "") -> tuple:
    """(stdout, wall seconds) of ``python args`` with one BLAS thread and OPENBLAS_CORETYPE
    `kernel` ("" = as this process has it); raises on failure."""
    env = dict(os.environ, OMP_NUM_THREADS="1", CI="true")
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
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


HEATMAP_ROW = re.compile(r"^ *\S+ │[ ░▒▓█]*│$")  # "    2 │  ░░██  │": one row of a heatmap
TOKEN = re.compile(r"\d+:\d\d(?::\d\d)?|\d+(?= ex/s)|(?<![A-Za-z0-9_.])-?\d+(?:\.\d+)?")


def merged(outputs: list) -> list:
    """The outputs (lists of lines) of several runs as one: a line is paired with the line of
    each other run that reads the same apart from its numbers (the k-th such line with the
    k-th); each number that differs becomes "lo–hi". Durations and rates stay as the first run
    printed them (the transcript test ignores them). A line not in every run is marked "~ ";
    lines that only later runs printed are left out."""
    keyed = []
    for out in outputs:
        seen, lines = {}, {}
        for line in out:
            skeleton = line if HEATMAP_ROW.match(line) else re.sub(" +", " ", TOKEN.sub("#", line))
            lines[(skeleton, seen.get(skeleton, 0))] = line
            seen[skeleton] = seen.get(skeleton, 0) + 1
        keyed.append(lines)
    result = []
    for key, line in keyed[0].items():
        if not all(key in other for other in keyed[1:]):
            result.append("~ " + line)
            continue
        if HEATMAP_ROW.match(line):  # its label is a character, not a number
            result.append(line)
            continue
        values = [TOKEN.findall(other[key]) for other in keyed]
        pieces = TOKEN.split(line)
        text = pieces[0]
        for i, piece in enumerate(pieces[1:]):
            column = [v[i] for v in values]
            if ":" in column[0] or piece.startswith(" ex/s") or len(set(column)) == 1:
                text += column[0] + piece
            else:
                lo, hi = min(column, key=float), max(column, key=float)
                text += f"{lo}–{hi}" + piece
        result.append(text)
    return result


def runs(seeds: int):
    """(seed, kernel) for every run of a part."""
    return [(seed, kernel) for kernel in KERNELS for seed in range(seeds)]


def label(seed: int, kernel: str) -> str:
    return f"seed {seed}, kernel {kernel or 'default'}"


def kernels_text(seeds: int) -> str:
    names = ", ".join(k or os.environ.get("OPENBLAS_CORETYPE", "OpenBLAS's choice") for k in KERNELS)
    return f"seeds 0–{seeds - 1}, kernels {names}"


def demo(seeds: int, tmp: str) -> list:
    """python -m models (= demo): wall time, held-out and wild exact match per run, then the
    translate commands of models/README.md on the run's checkpoint; the transcripts merged."""
    rows, outs, translations = [], [], []
    examples = [[" 03/04/2020", "Thursday, August 29, 2018", "Sept. 31st, 2021", "--no-heatmap"],
                ["03/04/2020", "--month-first", "--no-heatmap"]]
    for seed, kernel in runs(seeds):
        folder = f"{tmp}/demo-{kernel}-{seed}"
        out, sec = run(["-m", "models", "demo", "--seed", str(seed), "--out", folder], tmp, kernel)
        m = re.search(r"exact match: ([\d.]+)% on (\d+) held-out generated dates, ([\d.]+)% on "
                      r"(\d+) hand-written", out)
        epochs = len(re.findall(r"^epoch +\d+/", out, flags=re.M))
        rows.append((sec, float(m[1]), float(m[3]), epochs, int(m[4])))
        outs.append([l for l in out.split("\n") if not re.match(r"^  epoch +\d+ batch", l)])
        translations.append(sum((run(["-m", "models", "translate", folder] + e, tmp, kernel)[0]
                                 .split("\n") for e in examples), []))
        print(f"  demo {label(seed, kernel)}: {sec:.1f} s wall, {epochs} epochs, held-out "
              f"{m[1]}%, wild {m[3]}% of {m[4]}", flush=True)
    secs, val, wild, epochs, n = zip(*rows)
    return [f"python -m models: {span(secs, '{:.0f}')} s wall clock, {span(val)}% held-out "
            f"exact match (1000 generated dates), {span(wild)}% on the {n[0]} wild dates, "
            f"{span(epochs, '{:d}')} epochs ({kernels_text(seeds)})",
            "the demo's output, merged over the runs:"] + merged(outs) + [
            "models/README.md's translate examples on each run's checkpoint, merged:"] + merged(translations)


def compare(seeds: int, tmp: str) -> list:
    """python -m models compare-length: the table's range per length and model, and the time."""
    tables, secs = [], []
    for seed, kernel in runs(seeds):
        out, sec = run(["-m", "models", "compare-length", "--seed", str(seed), "--out",
                        f"{tmp}/cmp-{kernel}-{seed}"], tmp, kernel)
        rows = re.findall(r"^ +(\d+) +([\d.]+)% +([\d.]+)%$", out, flags=re.M)
        tables.append({int(k): (float(a), float(b)) for k, a, b in rows})
        secs.append(sec)
        worst = min(b for _, b in tables[-1].values())
        print(f"  compare-length {label(seed, kernel)}: {sec:.0f} s, attention worst length {worst}%",
              flush=True)
    lines = [f"python -m models compare-length: {span(secs, '{:.0f}')} s wall clock "
             f"({kernels_text(seeds)}); exact match by source length, range over the runs:",
             "length  no attention   attention"]
    for k in sorted(tables[0]):
        lines.append(f"{k:>6}  {span([t[k][0] for t in tables]) + '%':>12}  "
                     f"{span([t[k][1] for t in tables]) + '%':>10}")
    return lines


def sort(seeds: int, tmp: str) -> list:
    """The README's sort example: training to the 99% target, then translating 9a0b1."""
    return transcripts("python -m models train --task sort ... && python -m models translate ...",
                       lambda seed, folder: [
        ["-m", "models", "train", "--task", "sort", "--decoder", "luong", "--score", "dot",
         "--input-feeding", "--seed", str(seed), "--out", folder],
        ["-m", "models", "translate", folder, "9a0b1", "--beam", "3"]], seeds, tmp)


def transcripts(name: str, commands, seeds: int, tmp: str) -> list:
    """Run `commands(seed, folder)` (a list of argument lists, run in order) for every seed and
    kernel; the time of the whole and the printed output, merged over the runs."""
    outs, secs, slug = [], [], re.sub(r"[^a-z]+", "-", name.split(" ", 3)[-1])[:30]
    for seed, kernel in runs(seeds):
        folder, out, total = f"{tmp}/{slug}-{kernel}-{seed}", [], 0.0
        for args in commands(seed, folder):
            text, sec = run(args, tmp, kernel)
            out += text.split("\n")
            total += sec
        outs.append([l for l in out if not re.match(r"^  epoch +\d+ batch", l)])
        secs.append(total)
        print(f"  {name} {label(seed, kernel)}: {total:.0f} s", flush=True)
    return [f"{name}: {span(secs, '{:.0f}')} s wall clock ({kernels_text(seeds)}); the output "
            f"merged over the runs:"] + merged(outs)


def scores(seeds: int, tmp: str) -> list:
    """python -m models compare-scores --seed S: the table (exact match, time per score)."""
    return transcripts("python -m models compare-scores", lambda seed, folder: [
        ["-m", "models", "compare-scores", "--seed", str(seed)]], seeds, tmp)


def models(seeds: int, tmp: str) -> list:
    """python -m models compare-models --task reverse --seed S: Bahdanau, Luong, Transformer."""
    return transcripts("python -m models compare-models --task reverse", lambda seed, folder: [
        ["-m", "models", "compare-models", "--task", "reverse", "--seed", str(seed), "--out",
         folder]], seeds, tmp)


INSPECT = ("--task copy --n-train 1500 --n-val 100 --max-len 6 --target 0.95 --embed 16 "
           "--hidden 32 --dec-hidden 32 --attn 32 --batch-size 32").split()


def inspect(seeds: int, tmp: str) -> list:
    """models/app/README.md's inspect example: the untrained copy model (--time-limit 0) and the
    same model trained to 95%, each inspected on 100 held-out pairs."""
    return transcripts("python -m models train $A ... && python -m models inspect ...",
                       lambda seed, folder: [
        ["-m", "models", "train"] + INSPECT + ["--seed", str(seed), "--time-limit", "0", "--out",
                                               f"{folder}/untrained"],
        ["-m", "models", "inspect", f"{folder}/untrained", "--n", "100"],
        ["-m", "models", "train"] + INSPECT + ["--seed", str(seed), "--out", f"{folder}/copy"],
        ["-m", "models", "inspect", f"{folder}/copy", "--n", "100"]], seeds, tmp)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.readme_figures", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=3, help="seeds per figure (default 3)")
    p.add_argument("--only", default=",".join(PARTS), help=f"comma-separated subset of {PARTS}")
    p.add_argument("--kernels", default="", help="comma-separated OPENBLAS_CORETYPE values, one "
                   "set of runs each (default: OPENBLAS_CORETYPE as the environment has it)")
    a = p.parse_args(argv)
    KERNELS[:] = a.kernels.split(",") if a.kernels else [""]
    parts = [x for x in a.only.split(",") if x]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown or a.seeds < 1:
        p.error(f"--only takes {PARTS}, got {unknown}" if unknown else "--seeds must be >= 1")
    print(f"machine: {machine()}; OPENBLAS_CORETYPE per run: "
          f"{', '.join(k or os.environ.get('OPENBLAS_CORETYPE', '(unset)') for k in KERNELS)}",
          flush=True)
    report = []
    with tempfile.TemporaryDirectory(prefix="readme-figures-") as tmp:
        for part in parts:
            report += [f"[{part}: {', '.join(WHERE[part])} and their README.zh-CN.md]"]
            report += globals()[part](a.seeds, tmp)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}\n\nREADME figures\n" + "\n".join(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
