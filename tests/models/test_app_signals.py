"""Signals and pipes end a training run as Ctrl-C does (issue 23, item 5): SIGTERM and SIGHUP
checkpoint after the current batch, say so in one line and exit with 128 + the signal; a
reader that stops early (``train | head -1``) loses no epoch and sees no traceback. Each is
a real ``python -m models train`` process; every run can be resumed afterwards."""
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from models.app.checkpoint import load_checkpoint

REPO = Path(__file__).parent.parent.parent
TINY = ["--task", "copy", "--n-train", "200", "--n-val", "10", "--epochs", "10000", "--embed", "8",
        "--hidden", "8", "--dec-hidden", "8", "--attn", "8", "--target", "2"]
ENV = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")


def wait_for(path: Path, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def resumes(out: Path, cwd: Path) -> None:
    """``--resume`` takes the run up where it stopped (a time limit of 0 ends it at once)."""
    before = load_checkpoint(out)[3]["state"]
    done = subprocess.run([sys.executable, "-m", "models", "train", "--resume", str(out),
                           "--time-limit", "0"], cwd=cwd, env=ENV, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"resuming {out} at epoch {before['epoch'] + 1}, step {before['step']}" in done.stdout
    assert not before["done"]


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_checkpoint_and_stop_like_ctrl_c(signum, tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "models", "train", *TINY, "--out", str(out)],
                            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_for(out / "checkpoint.json")                  # the first epoch's checkpoint
    proc.send_signal(signum)
    stdout, stderr = proc.communicate(timeout=120)
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines() == [f"{'terminated' if name == 'SIGTERM' else 'hung up'} "
                                           f"({name}): checkpointing after this batch ({name} "
                                           "again to abort)"], stderr
    stopped = [line for line in stdout.splitlines() if line.startswith("stopped at epoch")]
    assert len(stopped) == 1 and f"resume with --resume {out}" in stopped[0], stdout
    state = load_checkpoint(out)[3]["state"]           # written at the stop, not only per epoch
    assert f"(step {state['step']})" in stopped[0] and state["epoch"] >= 1
    assert not (out / ".lock").exists()
    resumes(out, tmp_path)


@pytest.mark.slow
def test_a_reader_that_stops_after_one_line_loses_no_epoch(tmp_path):
    out = tmp_path / "run"
    command = " ".join([sys.executable, "-m", "models", "train", *TINY, "--out", str(out)])
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command} | head -1"], cwd=tmp_path,
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr           # the reader took what it wanted
    assert "Traceback" not in proc.stderr and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith("copy: 200 training") and proc.stdout.count("\n") == 1
    index = load_checkpoint(out)[3]
    state = index["state"]
    # every epoch finished was saved, and the stop itself was checkpointed
    assert state["epoch"] >= 1 and len(state["history"]) == state["epoch"]
    assert not (out / ".lock").exists()
    resumes(out, tmp_path)


class ClosesAfter(io.StringIO):
    """A stdout whose reader goes away after ``lines`` lines: later writes raise EPIPE."""

    def __init__(self, lines: int):
        super().__init__()
        self.left, self.attempted = lines, []

    def write(self, text):
        if text.strip():
            self.attempted.append(text.strip())
        if self.left <= 0 and text.strip():
            raise BrokenPipeError(32, "Broken pipe")
        self.left -= text.count("\n")
        return super().write(text)


@pytest.mark.parametrize("lines", [1, 2, 3])
def test_the_epoch_whose_line_meets_a_closed_pipe_is_still_saved(lines, tmp_path, monkeypatch,
                                                                  capsys):
    """In this process, so that the line that failed is known: the epoch it reports is in the
    checkpoint, and the run stops there (it does not train on with nobody reading)."""
    from models.app.cli import main
    stdout = ClosesAfter(lines)
    monkeypatch.setattr(sys, "stdout", stdout)
    out = tmp_path / "run"
    argv = ["train", *TINY[:2], "--n-train", "64", "--n-val", "8", "--epochs", "6",
            *TINY[8:], "--out", str(out)]
    assert main(argv) == 0
    epochs_written = [line for line in stdout.attempted if line.startswith("epoch ")]
    state = load_checkpoint(out)[3]["state"]
    assert epochs_written and state["epoch"] == int(epochs_written[-1].split()[1].split("/")[0])
    assert state["epoch"] < 6 and not state["done"]
    assert "Traceback" not in capsys.readouterr().err
