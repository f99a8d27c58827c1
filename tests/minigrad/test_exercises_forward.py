"""Exercises 17-22: forward passes by hand and two measurements (``catalog_forward``).

The checker's truth for them is the exercise's forward; these tests hold that forward to the
library's own modules, check that hand-written NumPy forwards pass and each classic mistake is
named, and that the grader's guarantees (the child never sees the answer; exits, hangs and
in-place changes fail) hold for the forward kind too.
"""
import functools
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from attention import AdditiveScore
from attention.read import read
from minigrad.exercises import check_file, check_function, checker, find, report
from minigrad.exercises.catalog_forward import EXERCISES
from models.decoders import BahdanauDecoder, attention_context
from models.recurrent import Encoded
from models.recurrent import GRUCell

SOLUTIONS = Path(__file__).parent / "exercise_solutions"
spec = importlib.util.spec_from_file_location("numpy_forwards", SOLUTIONS / "numpy_forwards.py")
numpy_forwards = importlib.util.module_from_spec(spec)
spec.loader.exec_module(numpy_forwards)
NAMES = [e.name for e in EXERCISES]


def _cases(name):
    e = find(name)
    return [(inputs, constants) for inputs, constants, _ in checker._cases(e)]


def _expected(name, inputs, constants):
    return checker._forward(find(name), inputs, constants)


def _set(param, value):
    param.data[...] = value


# ---- the exercises' forwards are the library's -----------------------------------------------

def test_forward_read_is_the_librarys_read():
    for x, _ in _cases("forward_read"):
        c, alpha = read(mg.tensor(x["e"]), mg.tensor(x["h"]))
        np.testing.assert_allclose(_expected("forward_read", x, {})[0], c.data, rtol=1e-13)


def test_forward_additive_is_additive_score():
    for x, _ in _cases("forward_additive"):
        A, Dq = x["W_q"].shape
        score = AdditiveScore(Dq, x["W_k"].shape[1], A, bias=True, rng=np.random.default_rng(0))
        for name in ("W_q", "W_k", "b", "v"):
            _set(getattr(score, name), x[name])
        e = score(mg.tensor(x["q"]), mg.tensor(x["h"]))
        np.testing.assert_allclose(_expected("forward_additive", x, {})[0], e.data, rtol=1e-12)


def _cell(x, s_name="h"):
    H = x["W_hh"].shape[1]
    cell = GRUCell(x["W_ih"].shape[1], H, rng=np.random.default_rng(0))
    for mine, theirs in (("weight_ih", "W_ih"), ("weight_hh", "W_hh"), ("bias_ih", "b_ih"),
                         ("bias_hh", "b_hh")):
        _set(getattr(cell, mine), x[theirs])
    return cell


def test_forward_gru_is_gru_cell():
    for x, _ in _cases("forward_gru"):
        h_new = _cell(x)(mg.tensor(x["x"]), mg.tensor(x["h"]))
        np.testing.assert_allclose(_expected("forward_gru", x, {})[0], h_new.data, rtol=1e-12)


def test_forward_bahdanau_is_the_decoders_step():
    """The decoder embeds token ids: an embedding whose row b is x[b] makes E y = x."""
    for x, _ in _cases("forward_bahdanau"):
        (B, E), (A, H), K = x["x"].shape, x["W_q"].shape, x["h"].shape[-1]
        dec = BahdanauDecoder(B, E, H, K, attn_dim=A, rng=np.random.default_rng(0))
        _set(dec.embedding.weight, x["x"])
        for name in ("W_q", "W_k", "b", "v"):
            _set(getattr(dec.attention.score, name), x[name])
        dec.cell = _cell(x)
        encoded = Encoded(mg.tensor(x["h"]), np.ones(x["h"].shape[:2], bool), None)
        ctx = attention_context(dec.attention, encoded, None)
        (s,), (_, c), alpha = dec.step(np.arange(B), (mg.tensor(x["s"]),), ctx, 0)
        for mine, theirs in zip(_expected("forward_bahdanau", x, {}), (s, c, alpha)):
            np.testing.assert_allclose(mine, theirs.data, rtol=1e-12, atol=1e-15)


def test_measurements_are_numpys():
    for x, c in _cases("sqrt_d_scaling"):
        raw = np.einsum("nd,nd->n", x["q"], x["k"])
        np.testing.assert_allclose(_expected("sqrt_d_scaling", x, c),
                                   [raw.var(), (raw / np.sqrt(x["q"].shape[1])).var()], rtol=1e-12)
    gaps = []
    for x, c in _cases("correlated_keys"):
        alpha, gap = _expected("correlated_keys", x, c)
        k2 = c["rho"] * x["k"] + np.sqrt(1 - c["rho"] ** 2) * x["z"]
        assert np.corrcoef(x["k"].ravel(), k2.ravel())[0, 1] == pytest.approx(c["rho"], abs=0.05)
        np.testing.assert_allclose(alpha.sum(-1), 1, rtol=1e-14)
        gaps.append(float(gap))
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < 0.1 < 0.3 < gaps[0]


# ---- hand-written forwards pass, classic mistakes are named ----------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_handwritten_numpy_forward_passes(name):
    rep = check_function(find(name), numpy_forwards.FORWARDS[name])
    assert rep.status == "done", report.full(rep)


@pytest.mark.parametrize("name, mistake, text", numpy_forwards.MISTAKES,
                         ids=[f"{n}-{m}" for n, m, _ in numpy_forwards.MISTAKES])
def test_wrong_forward_fails_with_its_diagnosis(name, mistake, text):
    rep = check_function(find(name), functools.partial(numpy_forwards.FORWARDS[name],
                                                       mistake=mistake))
    assert rep.status == "failing"
    said = [r.diagnosis or "" for case in rep.cases for r in case.results]
    assert any(text in d for d in said), report.full(rep)


def test_every_catalogued_mistake_is_exercised():
    named = {(n, m.text) for n in NAMES for m in find(n).mistakes}
    hit = set()
    for name, mistake, _ in numpy_forwards.MISTAKES:
        rep = check_function(find(name), functools.partial(numpy_forwards.FORWARDS[name],
                                                           mistake=mistake))
        hit |= {(name, r.diagnosis) for case in rep.cases for r in case.results}
    for name, learner in LEARNERS:  # the mistakes written as a learner would, below
        rep = check_function(find(name), learner)
        hit |= {(name, r.diagnosis) for case in rep.cases for r in case.results}
    assert named <= hit


# ---- exercise 21, as a learner gets it wrong: all pairs, and d instead of √d -------------------
# (not "a constant factor ≈ 0.993" or "≈ 0.248 ×": the all-pairs variance is near d too)

def all_pairs(q, k):
    s = q @ k.T                                              # (N, N): every q with every k
    return np.var(s), np.var(s / np.sqrt(q.shape[-1]))


def divided_by_d(q, k):
    d = q.shape[-1]
    s = (q * k).sum(axis=-1)
    return np.var(s), np.var(s / d)


def all_pairs_divided_by_d(q, k):
    s = q @ k.T
    return s.var(), (s / q.shape[1]).var()


def _verdicts(text, output) -> list:
    return [line.split("→ ")[1] for block in text.split("\n  " + output + " ")[1:]
            for line in block.split("\n")[1:2]]


def test_the_all_pairs_mistake_is_named_not_called_a_constant_factor():
    text = report.full(check_function(find("sqrt_d_scaling"), all_pairs))
    assert "constant factor" not in text and "0 of 3 inputs pass" in text
    verdicts = [line.split("→ ")[1] for line in text.splitlines() if "→ " in line]
    assert len(verdicts) == 6 and verdicts[0].startswith("these are all N² pairs q_n·k_m (q @ k.T)")
    assert set(verdicts[1:]) == {"as for var_raw in input 1"}  # both outputs, every d


def test_s_over_d_is_named_d_not_sqrt_d_row_wise_or_over_all_pairs():
    text = report.full(check_function(find("sqrt_d_scaling"), divided_by_d))
    assert _verdicts(text, "var_scaled")[0].startswith("divided by d, not √d")
    assert "var_raw    pass" in text
    text = report.full(check_function(find("sqrt_d_scaling"), all_pairs_divided_by_d))
    assert "×" not in text and "constant factor" not in text
    assert _verdicts(text, "var_scaled")[0].startswith("divided by d, not √d (the scaled")
    assert "over all N²" in text.split("var_scaled FAIL")[1].split("\n\n")[0]
    assert _verdicts(text, "var_raw")[0].startswith("these are all N² pairs")


LEARNERS = [("sqrt_d_scaling", all_pairs), ("sqrt_d_scaling", all_pairs_divided_by_d)]


def test_report_speaks_of_outputs_not_gradients():
    wrong = functools.partial(numpy_forwards.forward_gru, mistake="z roles")
    text = report.full(check_function(find("forward_gru"), wrong))
    assert "against the library's forward" in text and "yours" in text and "expected" in text
    assert "numeric" not in text and "central differences" not in text and "dh_new" not in text
    assert "z's roles are swapped" in text and "0 of 3 inputs pass" in text


def test_a_measurement_says_what_it_shows_only_when_it_passes():
    e = find("sqrt_d_scaling")
    done = report.full(check_function(e, numpy_forwards.sqrt_d_scaling))
    assert done.count("measured: d = ") == 3 and "What it shows:" in done
    wrong = report.full(check_function(e, functools.partial(numpy_forwards.sqrt_d_scaling,
                                                            mistake="by d")))
    assert "measured:" not in wrong and "What it shows:" not in wrong


def test_wrong_shapes_and_counts_are_named():
    e = find("forward_bahdanau")
    two = report.full(check_function(e, lambda *xs: numpy_forwards.forward_bahdanau(*xs)[:2]))
    assert "returned 2 output(s), expected 3: in this order: s_new, c, alpha" in two
    e = find("forward_read")
    transposed = check_function(e, lambda e_, h: numpy_forwards.forward_read(e_, h).T)
    assert "transposed" in report.full(transposed)


# ---- the grader's guarantees hold for forward exercises ---------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_the_child_is_sent_nothing_of_the_answer(name):
    e = find(name)
    for inputs, constants, g in checker._cases(e):
        assert g.size == 0
        sent = list(inputs.values()) + [v for v in constants.values() if isinstance(v, np.ndarray)]
        for out in checker._forward(e, inputs, constants):
            assert not any(a.shape == out.shape and np.allclose(a, out) for a in sent)


def test_reference_files_pass_in_the_sandbox():
    for name in NAMES:
        rep = check_file(find(name), SOLUTIONS)
        assert rep.status == "done", report.full(rep)


def test_exits_hangs_and_in_place_changes_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(checker, "TIMEOUT", 0.5)
    (tmp_path / "17_forward_read.py").write_text(
        "import os\ndef forward_read(e, h):\n    os._exit(0)\n")
    (tmp_path / "18_forward_additive.py").write_text(
        "def forward_additive(q, h, W_q, W_k, b, v):\n    while True:\n        pass\n")
    (tmp_path / "19_forward_gru.py").write_text(
        "import numpy as np\ndef forward_gru(x, h, W_ih, W_hh, b_ih, b_hh):\n"
        "    h *= 0\n    return h\n")
    (tmp_path / "21_sqrt_d_scaling.py").write_text(
        "import sys\nsys.exit(0)\n")
    read_, additive, gru, scaling = (check_file(find(n), tmp_path) for n in
                                     ("forward_read", "forward_additive", "forward_gru",
                                      "sqrt_d_scaling"))
    assert read_.status == "failing" and "ended the process" in report.full(read_)
    assert additive.status == "failing" and "an infinite loop?" in report.full(additive)
    assert gru.status == "failing" and "changed h in place" in report.full(gru)
    assert scaling.status == "broken" and "SystemExit" in scaling.message
    missing = check_file(find("forward_bahdanau"), tmp_path)
    assert missing.status == "no file"


def test_a_file_without_the_function_is_told_the_signature(tmp_path):
    (tmp_path / "17_forward_read.py").write_text("def read(e, h):\n    return e\n")
    rep = check_file(find("forward_read"), tmp_path)
    assert rep.status == "broken" and "has no function forward_read(...)" in rep.message
