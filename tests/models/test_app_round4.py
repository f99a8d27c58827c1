"""Round four of the application's hardening (issues 33 and 35): nanotrain's settings and
progress, the walkthroughs' figure folder, a run's bounded index, ``translate`` of a run being
written, output to a closed or full stdout, and the smaller things a newcomer met."""
import importlib.util
import json
import os
import runpy
import subprocess
import sys

import pytest

from minigrad import i18n
from models.app import checkpoint as ckpt, dates, datetext, nanotrain, progress, train
from models.app.__main__ import PROGRAMS, main as app_main
from models.app.cli import main as models_main
from models.app.tours import book, path as tour_path, zh
from models.app.tours.__main__ import main as tours_main
from models.app.train import Trainer, TrainConfig
from models.decoding import Translation
from models.vocab import Vocab

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = ["--epochs=1", "--train_size=64", "--val_size=8", "--batch_size=32", "--embed=4",
        "--hidden=4", "--dec_hidden=4", "--attn=4"]


# ---- nanotrain: the main CLI's limits, one line each; a line every few seconds

@pytest.mark.parametrize("arg, words", [
    ("--train_size=1000000000", "--train-size must be 1..1000000, got 1000000000"),
    ("--train_size=0", "--train-size must be 1..1000000, got 0"),
    ("--val_size=-3", "--val-size must be 1..100000, got -3"),
    ("--lr=1e999", "--lr must be a finite number, got inf"),  # 1e999 is Python's literal inf
    ("--lr_floor=2.0", "--lr-floor must be 0..1, got 2.0"),
    ("--lr=0", "--lr must be at least 1e-09, got 0.0"),           # no step: nothing would train
    ("--clip=0.0", "--clip must be at least 1e-09, got 0.0"),
    ("--epochs=0", "--epochs must be 1..100000, got 0"),       # the main CLI's LIMITS
    ("--batch-size=100000", "--batch-size must be 1..4096, got 100000"),
    ("--hidden=100000", "--hidden must be 1..1024, got 100000"),
    ("--seed=-1", "--seed must be at least 0, got -1")])
def test_nanotrain_refuses_a_setting_out_of_range_in_one_line(arg, words):
    with pytest.raises(ValueError) as refused:
        nanotrain.configure([arg])
    assert str(refused.value) == "nanotrain: " + words


def test_nanotrain_takes_an_option_spelled_as_the_main_cli_spells_it():
    assert nanotrain.configure(["--train-size=300"])["train_size"] == 300


def test_nanotrain_says_where_a_long_epoch_is_every_few_seconds(monkeypatch, capsys):
    clock = iter(range(0, 10**6, 6))  # each reading of the clock 6 s after the one before
    monkeypatch.setattr(nanotrain.time, "perf_counter", lambda: next(clock))
    nanotrain.main(TINY + ["--train_size=256"])  # 8 steps, each "6 s" or more
    lines = capsys.readouterr().out.splitlines()
    steps = [line for line in lines if line.startswith("  step ")]
    assert [s.split()[1] for s in steps] == [f"{k}/8" for k in range(1, 9)], lines


@pytest.mark.slow
@pytest.mark.parametrize("arg, line", [
    ("--train_size=1000000000", "nanotrain: --train-size must be 1..1000000, got 1000000000"),
    ("--lr=1e308", "nanotrain: training diverged at step 2; try a smaller --lr"),
    ("--dtype=float16", "nanotrain: ModelConfig: dtype must be one of ('float32', 'float64'), "
                        "got 'float16'")])
def test_nanotrain_as_a_program_answers_in_one_line_and_fails(arg, line):
    run = subprocess.run([sys.executable, "-m", "models.app.nanotrain", *TINY, arg], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and run.stderr == line + "\n", run.stderr


# ---- the walkthroughs' figure folder: checked before the first section; a user's file kept


def _folders(tmp_path):
    (tmp_path / "a_file").write_text("mine")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    return {"under a file": (str(tmp_path / "a_file" / "figs"), "Not a directory"),
            "a file": (str(tmp_path / "a_file"), "is a file, not a folder"),
            "a dangling link": (str(tmp_path / "dangling"), "File exists"),
            "an empty name": ("", "cannot write into '' (No such file or directory)"),
            "an over-long name": (str(tmp_path / ("x" * 300)), "File name too long")}


@pytest.mark.parametrize("case", ["under a file", "a file", "a dangling link", "an empty name",
                                  "an over-long name", "read-only"])
def test_a_tour_refuses_a_folder_it_cannot_write_before_its_first_section(
        case, tmp_path, capsys, monkeypatch):
    if case == "read-only":  # as root, chmod does not stop a write: the kernel's answer, faked
        def refuse(*a, **k):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr("models.app.runs.tempfile.TemporaryFile", refuse)
        out, words = str(tmp_path / "ro"), "Permission denied"
    else:
        out, words = _folders(tmp_path)[case]
    assert tours_main(["004", "--out", out]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1, captured
    assert captured.err.startswith("error: ") and words in captured.err, captured.err
    if case != "read-only":
        assert (tmp_path / "a_file").read_text() == "mine"


def _drawing():
    from minigrad.draw import line_plot_svg
    return line_plot_svg({"y": ([0, 1], [0, 1])})


def test_a_figure_never_replaces_a_users_file_and_replaces_its_own(tmp_path, capsys):
    (tmp_path / "fig.svg").write_text("the user's own picture")
    book.begin(str(tmp_path))
    book.show(_drawing(), "fig.svg")
    book.show(_drawing(), "fig.svg")  # a rerun: the walkthrough's own fig-2.svg is replaced
    assert (tmp_path / "fig.svg").read_text() == "the user's own picture"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig-2.svg", "fig.svg"]
    text = (tmp_path / "fig-2.svg").read_text(encoding="utf-8")
    assert text.startswith("<svg") and "</svg>" in text and text.rstrip().endswith(book.MARK)
    assert "fig.svg there is not a walkthrough's figure: kept" in capsys.readouterr().out
    book.show(_drawing(), "other.svg")
    book.show(_drawing(), "other.svg")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig-2.svg", "fig.svg", "other.svg"]


def test_a_figure_that_cannot_be_written_mid_walkthrough_is_one_line(tmp_path, capsys,
                                                                      monkeypatch):
    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(book, "write_text_atomic", full)
    book.begin(str(tmp_path))
    book.show(_drawing(), "fig.svg")  # a full disk: the walkthrough goes on
    assert capsys.readouterr().out == \
        "  [figure fig.svg: not written (No space left on device)]\n"
    assert book.BOOK.files == []


# ---- a run's index stays bounded, and no save writes one the loader refuses


RUN = dict(task="copy", n_train=16, n_val=4, batch_size=16, min_len=3, max_len=4, target=2.0)
SIZES = dict(embed=4, hidden=4, dec_hidden=4, attn=4)


def test_thin_keeps_the_newest_and_every_other_one_before_it(monkeypatch):
    monkeypatch.setattr(train, "MAX_POINTS", 4)
    points = list(range(1, 6))  # one past the bound
    train.thin(points)
    assert points == [1, 3, 5]
    points = list(range(1, 20))  # an old run's long history: halved until it fits
    train.thin(points)
    assert points == [3, 11, 19]


def test_the_index_of_a_long_run_stops_growing(monkeypatch, tmp_path):
    """With the bound at 4, the index after 20 epochs (a step each, a curve point every
    CURVE = 25 steps: patched to 1) is as large as after 8, and the last epoch is recorded."""
    monkeypatch.setattr(train, "MAX_POINTS", 4)
    monkeypatch.setattr(train, "CURVE", 1)
    sizes = {}
    for epochs in (8, 20):
        trainer = Trainer.create(TrainConfig(**RUN, epochs=epochs), SIZES)
        trainer.run(log=lambda line: None, folder=tmp_path / str(epochs))
        st = trainer.state
        assert len(st.history) <= 4 and st.history[-1]["epoch"] == epochs
        assert len(st.curve) <= 4 and st.curve[-1][0] == st.step == epochs
        sizes[epochs] = (tmp_path / str(epochs) / ckpt.INDEX).stat().st_size
    assert abs(sizes[20] - sizes[8]) < 200, sizes
    Trainer.resume(tmp_path / "20")  # it loads


def test_a_save_the_loader_would_refuse_is_not_written(monkeypatch, tmp_path):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=1), SIZES)
    trainer.run(log=lambda line: None, folder=tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    index = (tmp_path / ckpt.INDEX).read_bytes()
    trainer.state.history *= 10_000  # an index far past the 16 MiB the loader reads ...
    monkeypatch.setattr(ckpt, "MAX_INDEX_BYTES", 1 << 20)  # ... or past 1 MiB, quicker
    with pytest.raises(ckpt.CheckpointError, match="more than the 1,048,576 a load reads"):
        trainer.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written, or removed
    assert (tmp_path / ckpt.INDEX).read_bytes() == index


def test_an_old_run_folder_with_a_long_history_still_loads_and_resumes(tmp_path):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=3), SIZES)
    trainer.run(log=lambda line: None, folder=tmp_path, max_steps=1)  # stopped in epoch 2
    path = tmp_path / ckpt.INDEX
    index = json.loads(path.read_text())
    index["state"]["history"] = index["state"]["history"] * 3000  # as an old save wrote it
    path.write_text(json.dumps(index, indent=1))
    resumed = Trainer.resume(tmp_path)
    assert len(resumed.state.history) == 3000
    resumed.run(log=lambda line: None, folder=tmp_path)
    assert len(resumed.state.history) <= train.MAX_POINTS
    assert len(Trainer.resume(tmp_path).state.history) <= train.MAX_POINTS


# ---- translate of a run being trained: a newer commit between the two reads is read again


def _committing(monkeypatch, trainer, folder, times):
    """``_load_arrays`` that first lets training commit a newer checkpoint (removing the
    weights the index just read names), ``times`` times: the swap, made deterministic."""
    real, calls = ckpt._load_arrays, []

    def swapped(index, *args):
        calls.append(index["weights"])
        if len(calls) <= times:
            trainer.state.step += 1
            trainer.save(folder)
        return real(index, *args)
    monkeypatch.setattr(ckpt, "_load_arrays", swapped)
    return calls


def test_translate_reads_the_newer_checkpoint_committed_while_it_read(monkeypatch, tmp_path,
                                                                      capsys):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=1), SIZES)
    trainer.run(log=lambda line: None, folder=tmp_path)
    calls = _committing(monkeypatch, trainer, tmp_path, times=1)
    assert models_main(["translate", str(tmp_path), "abc", "--no-heatmap"]) == 0, \
        capsys.readouterr().err
    assert len(calls) == 2 and calls[0] != calls[1]  # read again, from the newer index
    assert "'abc' -> " in capsys.readouterr().out


def test_a_run_committed_at_every_read_is_said_to_be_written_not_broken(monkeypatch, tmp_path,
                                                                         capsys):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=1), SIZES)
    trainer.run(log=lambda line: None, folder=tmp_path)
    _committing(monkeypatch, trainer, tmp_path, times=100)
    assert models_main(["translate", str(tmp_path), "abc"]) == 2
    err = capsys.readouterr().err
    assert "is being written" in err and "missing" not in err and len(err.splitlines()) == 1


def test_weights_missing_from_an_unchanged_index_are_still_an_error(tmp_path, capsys):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=1), SIZES)
    trainer.run(log=lambda line: None, folder=tmp_path)
    index = json.loads((tmp_path / ckpt.INDEX).read_text())
    (tmp_path / index["weights"]).unlink()
    assert models_main(["translate", str(tmp_path), "abc"]) == 2
    assert "weights file" in capsys.readouterr().err


# ---- a closed or full stdout: an exit status and at most one line, never a traceback

def _trained_run(folder):
    trainer = Trainer.create(TrainConfig(**RUN, epochs=1), SIZES)
    trainer.run(log=lambda line: None, folder=folder)
    return str(folder)


COMMANDS = {"tours --list": ["models.app.tours", "--list"],
            "attention --list": ["attention", "--list"],
            "translate": ["models", "translate", "RUN", "abc"],
            "nanotrain": ["models.app.nanotrain", *TINY]}


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("stdout", ["closed", "full"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_or_full_stdout_gets_a_status_and_one_line(command, stdout, tmp_path):
    argv = [a.replace("RUN", _trained_run(tmp_path / "run")) for a in COMMANDS[command]]
    call = " ".join(f"'{a}'" for a in [sys.executable, "-m", *argv])
    redirect = ">&-" if stdout == "closed" else ">/dev/full"
    run = subprocess.run(["sh", "-c", f"exec {call} {redirect}"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) <= 1, run.stderr
    if stdout == "closed":  # nothing can be written, nothing is lost: the work is done
        assert run.returncode == 0 and run.stderr == "", run.stderr
    else:
        assert run.returncode in (1, 2) and "No space left on device" in run.stderr, run.stderr


def test_an_unprintable_weights_name_in_an_index_is_shown_escaped(tmp_path, capsys):
    folder = _trained_run(tmp_path)
    index = json.loads((tmp_path / ckpt.INDEX).read_text())
    index["weights"] = "weights\x00\x1b[31m.npz"
    (tmp_path / ckpt.INDEX).write_text(json.dumps(index))
    assert models_main(["translate", folder, "abc"]) == 2
    err = capsys.readouterr().err
    assert "\x00" not in err and "\x1b" not in err and "'weights\\x00\\x1b[31m.npz'" in err, err


# ---- the Chinese walkthrough speaks Chinese wherever it runs (35.5)


SAYING = "  keep the information; let the current state decide how to read it (built in §3-§6)"


def _in_chinese(message: str) -> str:
    try:
        i18n.set_language("zh")
        return str(book._(message))
    finally:
        i18n.set_language(None)


def test_the_chinese_walkthrough_in_a_kernel_under_an_english_locale_speaks_chinese(
        tmp_path, monkeypatch, capsys):
    """A notebook kernel runs the cells as this does: no --lang, LANGUAGE=en (conftest)."""
    script = tmp_path / "source_004_zh.py"
    script.write_text(zh.chinese("004"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert i18n.current() == "en"
    try:
        book.begin(None)
        runpy.run_path(str(script), run_name="__main__")
    finally:
        i18n.set_language(None)
    out = capsys.readouterr().out
    assert _in_chinese(SAYING) in out and SAYING not in out
    assert _in_chinese(SAYING) != SAYING


@pytest.mark.slow
def test_the_chinese_walkthrough_as_a_plain_script_speaks_chinese(tmp_path):
    assert zh.main(["004", "--out", str(tmp_path / "source_004_zh.py")]) == 0
    env = {**os.environ, "LANGUAGE": "en", "LC_ALL": "C.UTF-8", "PYTHONIOENCODING": "utf-8"}
    run = subprocess.run([sys.executable, str(tmp_path / "source_004_zh.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert _in_chinese(SAYING) in run.stdout and SAYING not in run.stdout


# ---- long steps print as they go (35.6)


class _Stopped(Exception):
    pass


def test_walkthrough_003_prints_its_trainings_progress(monkeypatch, capsys):
    """Its §1 trains three models (minutes on a busy machine): the log it hands to
    ``compare_models`` prints each line (at once), not nothing."""
    given = {}

    def fake(config, log, models):
        given["log"] = log
        raise _Stopped
    monkeypatch.setattr("models.app.compare_models.compare_models", fake)
    book.begin(None)
    with pytest.raises(_Stopped):
        runpy.run_path(str(tour_path("003")), run_name="__main__")
    capsys.readouterr()
    given["log"]("  epoch   1/6  loss 1.0000")
    assert capsys.readouterr().out == "  epoch   1/6  loss 1.0000\n"


def test_a_long_steps_lines_are_flushed_at_once_into_a_pipe(monkeypatch):
    import io

    class Pipe(io.StringIO):
        flushed = ""

        def flush(self):
            Pipe.flushed = self.getvalue()
    monkeypatch.setattr(sys, "stdout", Pipe())
    progress.say("epoch 1/3")
    assert Pipe.flushed == "epoch 1/3\n"
    import inspect
    from models.app import compare, compare_models
    for fn in (compare.compare_length, compare.compare_scores, compare_models.compare_models,
               Trainer.run):
        assert inspect.signature(fn).parameters["log"].default is progress.say, fn


# ---- the smaller things a newcomer met (35.9)


def test_python_dash_m_models_app_names_what_there_is_to_run(capsys):
    assert app_main([]) == 0
    out = capsys.readouterr().out
    for command, _what in PROGRAMS:
        assert command in out
        module = command.split()[2]  # python -m MODULE ...
        spec = importlib.util.find_spec(module)
        runnable = spec.submodule_search_locations is None or \
            importlib.util.find_spec(module + ".__main__") is not None
        assert runnable, command


def test_the_models_package_says_what_it_is():
    import models
    assert models.__doc__ and "Seq2Seq" in models.__doc__ and "models.app" in models.__doc__


@pytest.mark.parametrize("text, output, year", [
    ("3 May '95", "1995-05-03", "95"), ("1/2/3", "2003-02-01", "3"),
    ("May 3, 20", "2020-05-03", "20"), ("4.3.07", "2007-03-04", "07")])
def test_a_short_year_is_said_to_be_read_as_a_century_year(text, output, year):
    note = datetext.century(text, output)
    assert note == (f"the year {year} is read as {output[:4]} (a year of one or two digits: "
                    f"00-49 -> 20yy, 50-99 -> 19yy)")


@pytest.mark.parametrize("text, output", [("2020-03-04", "2020-03-04"), ("20200304", "2020-03-04"),
                                          ("3/4/1995", "1995-04-03"), ("May 3 2005", "2005-05-03")])
def test_a_year_written_in_full_gets_no_note(text, output):
    assert datetext.century(text, output) is None


class _Writes:
    """A stand-in model that writes ``output`` for every text."""

    def __init__(self, output):
        self.ids = Vocab(dates.TGT_ALPHABET).encode(output)

    def greedy(self, src, max_len, mask):
        return [Translation(self.ids, None, -0.1) for _ in src]


def test_1_2_3_is_read_as_ambiguous_with_a_century_year():
    src, tgt = Vocab(dates.SRC_ALPHABET), Vocab(dates.TGT_ALPHABET)
    [r] = datetext.read_dates(_Writes("2003-02-01"), src, tgt, ["1/2/3"])
    assert r.notes == [
        "ambiguous: read day first as 2003-02-01 (the default); --month-first reads it as "
        "2003-01-02",
        "the year 3 is read as 2003 (a year of one or two digits: 00-49 -> 20yy, 50-99 -> 19yy)"]


def test_a_transformer_run_says_layer_and_head_counts_without_1_layers(tmp_path, capsys):
    argv = ["train", "--task", "copy", "--n-train", "16", "--n-val", "4", "--epochs", "1",
            "--decoder", "transformer", "--layers", "1", "--heads", "1", "--d-model", "8",
            "--time-limit", "0", "--out", str(tmp_path / "t")]
    assert models_main(argv) == 0
    out = capsys.readouterr().out
    assert "transformer, layers L = 1, heads h = 1, d_model 8" in out and "1 layers" not in out


def test_graph_prints_the_graph_its_svg_draws_collapsed_alike(tmp_path, capsys):
    argv = ["graph", "--out", str(tmp_path), "--length", "4", "--batch", "2", "--vocab", "5"]
    assert models_main(argv) == 0
    out = capsys.readouterr().out
    groups = [line.split("▸ ")[1].split("  ")[0] for line in out.splitlines() if "▸ " in line]
    assert "step 0" in groups and "decoder" not in groups, groups  # the decoder opened
    svg = (tmp_path / "seq2seq_loss.svg").read_text(encoding="utf-8")
    assert all(name in svg for name in groups), groups
    assert svg.count("step ") >= 4  # the SVG's decoder is opened into its steps too
