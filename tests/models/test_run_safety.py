"""No run is lost or overwritten, at the level of processes: two ``train`` commands at the same
moment, on one folder and on the default folder; ``kill -9`` in the middle of a checkpoint
save, then ``--resume``; a folder with the user's own files; an unwritable resume folder."""
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from minigrad.files import TMP_PREFIX
from models.app import runs
from models.app.checkpoint import load_checkpoint
from models.app.cli import main

REPO = Path(__file__).parent.parent.parent
TINY = ["--task", "copy", "--n-train", "200", "--n-val", "10", "--epochs", "3", "--embed", "8",
        "--hidden", "8", "--dec-hidden", "8", "--attn", "8", "--target", "2"]


def start(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, "-m", "models", "train", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs):
    return [(p.wait(timeout=300), *p.communicate()) for p in procs]


@pytest.mark.slow
def test_two_runs_into_one_folder_never_mix(tmp_path):
    out = tmp_path / "run"
    results = finish([start([*TINY, "--out", str(out)], tmp_path) for _ in range(2)])
    codes = sorted(r[0] for r in results)
    assert codes == [0, 2], results
    err = next(r[2] for r in results if r[0] == 2)
    assert len(err.strip().splitlines()) == 1, err
    # the holder is named once it has written its line (pid …); in the instant between its lock
    # and that write the refusal says "another process"
    assert "is in use by another run (" in err or "already holds a checkpoint" in err
    load_checkpoint(out)
    assert sorted(os.listdir(out))[0] == "checkpoint.json" and not (out / ".lock").exists()


@pytest.mark.slow
def test_two_runs_without_out_get_two_folders(tmp_path):
    (tmp_path / "runs" / "copy").mkdir(parents=True)   # an empty folder someone made: not reused
    results = finish([start(TINY, tmp_path) for _ in range(2)])
    assert [r[0] for r in results] == [0, 0], results
    assert sorted(os.listdir(tmp_path / "runs")) == ["copy", "copy-2", "copy-3"]
    assert os.listdir(tmp_path / "runs" / "copy") == []
    for name in ("copy-2", "copy-3"):
        load_checkpoint(tmp_path / "runs" / name)


KILL_IN_SAVE = textwrap.dedent("""
    import os, signal, sys
    from minigrad import serialization
    from models.app import checkpoint
    real, real_savez = checkpoint.save_checkpoint, serialization.np.savez
    calls, arrays_files = [], []
    def half_then_kill(f, **arrays):   # the n-th array file of the save: half written, then kill -9
        arrays_files.append(1)
        if len(arrays_files) < int(os.environ["KILL_AT"]):
            return real_savez(f, **arrays)
        f.write(b"PK half an archive")
        os.kill(os.getpid(), signal.SIGKILL)
    def save_checkpoint(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:            # the third checkpoint (end of epoch 3)
            serialization.np.savez = half_then_kill
        return real(*args, **kwargs)
    checkpoint.save_checkpoint = save_checkpoint
    from models.app.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.slow
@pytest.mark.parametrize("kill_at", [1, 2], ids=["in the weights", "in the optimizer"])
def test_kill_9_during_a_checkpoint_save_then_resume(tmp_path, kill_at):
    """Killed while writing the weights (a temporary file is left) or the optimizer state (the
    new weights file is left, named only in the journal): resume removes both kinds."""
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", KILL_AT=str(kill_at))
    killed = subprocess.run([sys.executable, "-c", KILL_IN_SAVE, "train", *TINY, "--out", str(out)],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert any(n.startswith(TMP_PREFIX) for n in os.listdir(out))  # what kill -9 leaves behind
    _, _, _, index = load_checkpoint(out)                        # the last committed one: intact
    assert index["state"]["epoch"] == 2
    weights = sorted(n for n in os.listdir(out) if n.startswith("weights-"))
    assert len(weights) == kill_at and index["weights"] in weights  # kill_at 2: one stray
    resumed = subprocess.run([sys.executable, "-m", "models", "train", "--resume", str(out)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    index = load_checkpoint(out)[3]
    assert "resuming" in resumed.stdout and index["state"]["done"]
    assert sorted(os.listdir(out)) == sorted(["checkpoint.json", "training.svg", index["weights"],
                                              index["optimizer"]])


def test_a_folder_with_the_users_files_is_refused(tmp_path, capsys):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "training.svg").write_text("my own plot")
    (out / "notes.txt").write_text("mine")
    assert main(["train", *TINY, "--epochs", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert ("holds no checkpoint.json this program wrote, so it is not a run folder (notes.txt, "
            "training.svg)") in err
    assert sorted(os.listdir(out)) == ["notes.txt", "training.svg"]
    assert (out / "training.svg").read_text() == "my own plot"


def test_a_held_folder_is_refused_naming_the_holder(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    with runs.run_lock(out):
        assert main(["train", *TINY, "--epochs", "1", "--out", str(out)]) == 2
        assert main(["train", "--resume", str(out)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(f"is in use by another run (pid {os.getpid()}" in e for e in err)
    assert os.listdir(out) == []


def test_resume_checks_writability_before_any_work(tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert main(["train", *TINY, "--epochs", "1", "--out", str(out), "--time-limit", "0"]) == 0

    def unwritable(*args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(runs.tempfile, "TemporaryFile", unwritable)
    monkeypatch.setattr("models.app.cli.Trainer.resume", lambda *a: pytest.fail("loaded first"))
    assert main(["train", "--resume", str(out)]) == 2
    assert f"cannot write into {out} (Permission denied)" in capsys.readouterr().err


def test_translate_svg_into_a_file_is_refused_before_decoding(tmp_path, capsys, monkeypatch):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setattr("models.app.translate.load_checkpoint", lambda *a: pytest.fail("decoded first"))
    assert main(["translate", str(tmp_path), "abc", "--svg", str(tmp_path / "afile")]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("presses", [1, 3])
def test_any_number_of_ctrl_c_exits_130_without_a_traceback(tmp_path, presses):
    out = tmp_path / "run"
    proc = start([*TINY, "--epochs", "10000", "--out", str(out)], tmp_path)
    deadline = time.monotonic() + 120
    while not (out / "checkpoint.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)   # the first epoch's checkpoint
    for _ in range(presses):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    code, stdout, stderr = finish([proc])[0]
    assert code == 130 and "Traceback" not in stderr, stderr
    assert load_checkpoint(out)[3]["state"]["epoch"] >= 1            # intact, and resumable
    assert "--resume" in stdout + stderr


def test_the_time_limit_holds_even_when_batches_are_slow(monkeypatch):
    """A batch that would end past --time-limit is not started (here each takes ≥ 0.4 s:
    the third would end at 1.2 s, so training stops at about 0.8 s)."""
    from models.app.train import Trainer, TrainConfig
    trainer = Trainer.create(TrainConfig(task="copy", n_train=64, n_val=8, batch_size=16, epochs=5,
                                         min_len=3, max_len=5), dict(embed=4, hidden=4,
                                                                     dec_hidden=4, attn=4))
    real = Trainer.train_step

    def slow(self, idx):
        time.sleep(0.4)
        return real(self, idx)
    monkeypatch.setattr(Trainer, "train_step", slow)
    started = time.perf_counter()
    state = trainer.run(log=lambda line: None, time_limit=1.0)
    assert time.perf_counter() - started < 1.0 and 1 <= state.step <= 2
