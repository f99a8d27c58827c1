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
