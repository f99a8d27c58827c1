"""benchmarks/instructions.py: callgrind's count of one step, from two runs that differ by the
steps counted; wrong input answered in one line, before anything runs under valgrind."""
import shutil

import pytest

from benchmarks import instructions


def test_a_step_is_counted_in_the_working_tree_and_in_a_commit(capsys):
    if shutil.which("valgrind") is None:
        pytest.fail("valgrind is not installed (Debian: apt-get install valgrind)")
    instructions.main(["HEAD", ".", "--path", "floor", "--dtypes", "float32", "--steps", "1",
                       "--warmup", "1"])
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "| dtype | HEAD | . | . ÷ HEAD |"
    dtype, head, tree, ratio = out[3].strip("| ").split(" | ")
    assert dtype == "float32" and 10 < float(head) < 1000       # millions: the floor's step
    assert float(ratio) == pytest.approx(1, abs=0.01)             # the floor is this tree's


@pytest.mark.parametrize("argv, says", [
    (["no-such-revision"], "'no-such-revision' is neither a folder nor a commit"),
    ([".", "--steps", "0"], "--steps and --warmup must be at least 1"),
    ([".", "--dtypes", "float16"], "--dtypes float32 and/or float64"),
])
def test_wrong_input_is_refused_in_one_line(argv, says, capsys):
    with pytest.raises(SystemExit) as e:
        instructions.main(argv)
    message = str(e.value) if e.value.code != 2 else capsys.readouterr().err.splitlines()[-1]
    assert says in message


def test_without_valgrind_it_says_what_to_install(monkeypatch):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="valgrind is not installed .* benchmarks.ab"):
        instructions.main(["."])
