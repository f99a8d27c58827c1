"""``python -m benchmarks.memory``: its arguments are checked, with usage, not a traceback; the
traced peak it reports for minigrad is the same in two processes."""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parent.parent.parent


def run(*args):
    return subprocess.run([sys.executable, "-m", "benchmarks.memory", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_help_and_bad_arguments_give_usage_not_a_traceback():
    out = run("--help")
    assert out.returncode == 0 and "library" in out.stdout and "float64" in out.stdout
    for args in ((), ("minigrad",), ("numpy", "float64"), ("minigrad", "float16")):
        out = run(*args)
        assert out.returncode == 2 and "Traceback" not in out.stderr, args
        assert "usage: python -m benchmarks.memory" in out.stderr, args


def test_the_traced_peak_is_the_same_in_two_processes_and_the_core_holds_more():
    """The malloc-independent number: equal in two fresh processes, and the core's graph of
    every primitive holds more than the kernels' one node per sequence."""
    first, second = (json.loads(run("minigrad", "float32").stdout.splitlines()[-1])["traced_mb"]
                     for _ in range(2))
    assert first == second
    assert 0 < first["kernels"] < first["core"]
