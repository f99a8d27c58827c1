"""The README figures script: its helpers and its argument checks (the runs themselves are
the figures, measured by hand: python -m benchmarks.readme_figures)."""
import pytest

from benchmarks import readme_figures as rf


def test_span_gives_a_range_or_one_value():
    assert rf.span([99.94, 100.0, 99.96]) == "99.9–100.0"
    assert rf.span([12.0, 12.04]) == "12.0"
    assert rf.span([3, 4], "{:d}") == "3–4"


def test_machine_names_the_cores_and_the_load():
    text = rf.machine()
    assert "cores" in text and "load average" in text and "NumPy" in text


def test_bad_arguments_are_refused(capsys):
    for argv in (["--only", "nope"], ["--seeds", "0"]):
        with pytest.raises(SystemExit):
            rf.main(argv)
    assert "--only takes" in capsys.readouterr().err


def test_a_failing_command_raises_with_its_output(tmp_path):
    with pytest.raises(RuntimeError, match="failed"):
        rf.run(["-c", "import sys; print('oops'); sys.exit(3)"], str(tmp_path))


def test_merged_shows_each_number_that_differs_as_its_range():
    runs = [["epoch   1/10  loss 0.5960  exact(val)  99.8%    1367 ex/s  0:15 elapsed", "done"],
            ["epoch   1/10  loss 0.6012  exact(val) 100.0%    1300 ex/s  0:17 elapsed", "done"]]
    assert rf.merged(runs) == [
        "epoch   1/10  loss 0.5960–0.6012  exact(val)  99.8–100.0%    1367 ex/s  0:15 elapsed",
        "done"]


def test_merged_marks_a_line_not_in_every_run():
    runs = [["    2 │  ░░██│", "    0 │█ │", "same 1"], ["    2 │██░░  │", "    8 │█ │", "same 1"]]
    assert rf.merged(runs) == ["~     2 │  ░░██│", "~     0 │█ │", "same 1"]


def test_a_run_gets_the_kernel_it_asks_for(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    show = ["-c", "import os; print(os.environ.get('OPENBLAS_CORETYPE', 'unset'))"]
    assert rf.run(show, str(tmp_path), "Haswell")[0].strip() == "Haswell"
    assert rf.run(show, str(tmp_path))[0].strip() == "unset"
