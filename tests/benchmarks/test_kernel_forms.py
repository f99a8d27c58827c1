"""The kernels' tanh and σ (``minigrad/kernels.py``) come in several forms, one picked per dtype
by timing it on the running NumPy: every form offered must be right, whichever wins here."""
import numpy as np
import pytest

from minigrad import kernels
from minigrad.ops import sigmoid_array
from models.kernels import use_kernels
from models.seq2seq import ModelConfig, Seq2Seq

X = np.concatenate([np.linspace(-30, 30, 2001), [0.0, -0.0, 1e-300, -1e-12, 19.9, 20.1, 400, -800],
                    np.linspace(-760, 760, 301), [36.0, -745.0, -3e38, 3e38, np.inf, -np.inf]])
CASES = [(name, form, dtype) for name in kernels.FORMS for form in kernels.FORMS[name]
         for dtype in (np.float64, np.float32) if kernels.ONLY.get(form, dtype) == dtype]


@pytest.mark.parametrize("name, form, dtype", CASES, ids=lambda c: getattr(c, "__name__", c))
def test_every_form_offered_equals_numpy_without_warnings(name, form, dtype):
    x = X.astype(dtype)
    want = np.tanh(x) if name == "tanh" else sigmoid_array(x)
    with np.errstate(all="raise"):
        got = form(x.copy())
        assert np.isnan(form(np.array([np.nan, 1.0], dtype))).tolist() == [True, False]
    np.testing.assert_allclose(got, want, rtol=0, atol=2 ** -51 if dtype == np.float64 else 2 ** -23)
    if name == "tanh":
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_pick_measures_once_and_offers_only_the_accurate_forms(monkeypatch):
    monkeypatch.setattr(kernels, "PICKED", {})
    for name in kernels.FORMS:
        for dtype in (np.float64, np.float32):
            form = kernels.pick(name, dtype)
            assert form in kernels.FORMS[name] and kernels.ONLY.get(form, dtype) == dtype
            assert kernels.PICKED[name, np.dtype(dtype)] is form
    assert kernels.sigmoid_tanh not in [kernels.pick("sigmoid", np.float64) for _ in range(3)]


@pytest.mark.parametrize("tanh", kernels.FORMS["tanh"], ids=lambda f: f.__name__)
def test_the_kernels_equal_the_core_with_either_tanh(monkeypatch, tanh):
    """Loss and every gradient of the sequence kernels, 1e-12 in float64, each tanh forced."""
    monkeypatch.setattr(kernels, "PICKED", {("tanh", np.dtype(np.float64)): tanh})
    config = ModelConfig(11, 10, embed=4, hidden=5, dec_hidden=6, attn=7, dtype="float64")
    rng = np.random.default_rng(3)
    src, tgt = rng.integers(1, 11, (4, 6)), rng.integers(1, 10, (4, 5))
    src[2:, 4:] = 0                                                   # padding
    results = []
    for fast in (False, True):
        model = Seq2Seq(config, np.random.default_rng(0))
        model = use_kernels(model) if fast else model
        loss = model.loss(src, tgt, src != 0)
        loss.backward()
        results.append([loss.data] + [p.grad for p in model.parameters()])
    for i, (a, b) in enumerate(zip(*results)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"loss/gradient {i}")
