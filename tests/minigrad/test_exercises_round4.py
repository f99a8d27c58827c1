"""The checker's words for two mistakes NumPy itself reports badly, and ``start``/``list`` after
the first session (issue 35, items 8 and 9).

* ``.T`` where the last two axes were meant (or a transpose forgotten): NumPy's matmul raises a
  gufunc error ("mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)...");
  the checker names the transpose and ``np.swapaxes(X, -1, -2)`` instead.
(Exercise 21's all-pairs and ``s / d`` mistakes are in ``test_exercises_forward.py``.)

Each mistake is written as a learner would write it; one runs through the sandbox (slow).
"""
import shutil
from pathlib import Path

import numpy as np
import pytest

import minigrad.exercises.__main__ as cli
from minigrad.exercises import all_exercises, check_file, check_function, diagnose, find, report
from minigrad.exercises.__main__ import main
from minigrad.exercises.checker import Report

SOLUTIONS = Path(__file__).parent / "exercise_solutions"  # the reference files, one a file

GUFUNC = "gufunc signature"


def _text(name, function) -> str:
    return report.full(check_function(find(name), function))


# ---- .T on a batch, a transpose forgotten ----------------------------------------------------

def batched_matmul_with_dot_T(g, A, B):
    return g @ B.T, A.T @ g  # right for matrices; on a batch .T reverses every axis


def test_dot_T_on_a_batched_matmul_names_swapaxes_not_the_gufunc_error():
    text = _text("matmul", batched_matmul_with_dot_T)
    assert GUFUNC not in text and "mismatch in its core dimension" not in text
    assert text.count("input 1: ") == 1 and "2 of 4 inputs pass" in text  # 2-D: right
    for case in ("input 3: A (2, 3, 4), B (2, 4, 5)", "input 4: A (2, 3, 4), B (4, 2)"):
        block = text.split(case)[1].split("\n\n")[0]
        assert "matmul_vjp raised ValueError: the sides of an @ do not fit" in block
        assert ".T on a batched array?" in block and "`np.swapaxes(X, -1, -2)`" in block


def forward_gru_without_W_ih_T(x, h, W_ih, W_hh, b_ih, b_hh):
    H = h.shape[-1]
    gi = x @ W_ih + b_ih                                     # W_ih.T forgotten
    gh = h @ W_hh.T + b_hh
    r = 1 / (1 + np.exp(-(gi[:, :H] + gh[:, :H])))
    z = 1 / (1 + np.exp(-(gi[:, H:2 * H] + gh[:, H:2 * H])))
    n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
    return (1 - z) * n + z * h


def test_a_forgotten_W_ih_T_in_exercise_19_names_the_transpose():
    text = _text("forward_gru", forward_gru_without_W_ih_T)
    assert GUFUNC not in text and "0 of 3 inputs pass" in text
    assert "forward_gru raised ValueError: the sides of an @ do not fit (inner sizes 3 and 6)" \
        in text
    assert "a transpose missing?" in text and "`x @ W.T`" in text
    assert "`np.swapaxes(W, -1, -2)`" in text  # a report wraps lines, not inside a code span


def test_other_errors_are_left_as_numpy_wrote_them():
    for error in ("f raised ValueError: operands could not be broadcast together with shapes "
                  "(2,3) (4,)", "f raised ZeroDivisionError: division by zero",
                  "f raised ValueError: operands could not be broadcast together with remapped "
                  "shapes [original->remapped]: (4,3)->(4,newaxis,newaxis)"):
        assert diagnose.error_diagnosis(error, 2) == error
    batched = ("f raised ValueError: operands could not be broadcast together with remapped "
               "shapes [original->remapped]: (4,3,2)->(4,newaxis,newaxis) (2,2,5)->(2,newaxis,"
               "newaxis)  and requested shape (3,5)\n  at f.py line 2: return A.T @ g")
    said = diagnose.error_diagnosis(batched, 3)
    assert said.startswith("f raised ValueError: the batch axes of an @ do not line up: .T on a")
    assert said.endswith("\n  at f.py line 2: return A.T @ g")  # the learner's line is kept


@pytest.mark.slow
def test_dot_T_on_a_batch_through_the_sandbox_keeps_the_learners_line(tmp_path):
    (tmp_path / "05_matmul.py").write_text(
        "import numpy as np\n\n\ndef matmul_vjp(g, A, B):\n"
        "    return g @ B.T, A.T @ g\n", encoding="utf-8")
    text = report.full(check_file(find("matmul"), tmp_path))
    assert GUFUNC not in text and "`np.swapaxes(X, -1, -2)`" in text
    assert "at 05_matmul.py line 5: return g @ B.T, A.T @ g" in text


# ---- start after progress; list of a folder that is not there --------------------------------

def test_list_of_a_missing_folder_says_so_in_one_line(tmp_path, capsys):
    missing = tmp_path / "course"
    assert main(["list", "--dir", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"error: there is no folder {missing}: make it with `")
    assert f"start {missing}`" in err and not missing.exists()


def test_start_after_progress_points_at_the_first_exercise_not_done(tmp_path, capsys,
                                                                    monkeypatch):
    """Checked in order, up to the first that does not pass (the checker faked here; the
    sandboxed run is the slow test below)."""
    done = {e.file for e in all_exercises()[:4]}
    monkeypatch.setattr(cli, "check_file", lambda e, folder: Report(
        e, folder / e.file, "done" if e.file in done else "failing"))
    for e in all_exercises()[:6]:
        shutil.copy(SOLUTIONS / e.file, tmp_path / e.file)
    assert main(["start", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "4 exercise(s) already pass. Next: open " in out
    assert f"{tmp_path / all_exercises()[4].file}, write matmul_vjp" in out
    done = {e.file for e in all_exercises()}
    for e in all_exercises():
        shutil.copy(SOLUTIONS / e.file, tmp_path / e.file)
    assert main(["start", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"All {len(done)} exercises pass: nothing left to do" in out and "Next" not in out


def test_start_in_a_new_folder_still_points_at_the_first_exercise(tmp_path, capsys):
    assert main(["start", str(tmp_path / "course")]) == 0
    out = capsys.readouterr().out
    assert "already pass" not in out
    assert f"Next: open {tmp_path / 'course' / all_exercises()[0].file}, write mul_vjp" in out


@pytest.mark.slow
def test_start_after_progress_through_the_sandbox(tmp_path, capsys):
    for e in all_exercises()[:3]:
        shutil.copy(SOLUTIONS / e.file, tmp_path / e.file)
    (tmp_path / all_exercises()[3].file).write_text("def sum_axis_vjp(g, x, axis):\n"
                                                   "    return g\n", encoding="utf-8")
    assert main(["start", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "kept 4 file(s)" in out and "3 exercise(s) already pass. Next: open " in out
    assert f"{tmp_path / all_exercises()[3].file}, write sum_axis_vjp" in out
