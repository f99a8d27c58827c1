"""GRUCell and LSTMCell: PyTorch's equations, layout and calls (``h = gru(x, h)``,
``h, c = lstm(x, (h, c))``), checked against NumPy written from the formulas, gradchecked in
float64, and differentiable twice."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.gradcheck import gradcheck
from models.recurrent import GRUCell, LSTMCell


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def gru_reference(x, h, cell, reset_after=True):
    """torch.nn.GRUCell (reset_after) or Cho et al. 2014, written out in NumPy."""
    W_ir, W_iz, W_in = np.split(cell.weight_ih.data, 3)
    W_hr, W_hz, W_hn = np.split(cell.weight_hh.data, 3)
    b_ir, b_iz, b_in = np.split(cell.bias_ih.data, 3)
    b_hr, b_hz, b_hn = np.split(cell.bias_hh.data, 3)
    r = sigmoid(x @ W_ir.T + b_ir + h @ W_hr.T + b_hr)
    z = sigmoid(x @ W_iz.T + b_iz + h @ W_hz.T + b_hz)
    if reset_after:
        n = np.tanh(x @ W_in.T + b_in + r * (h @ W_hn.T + b_hn))
    else:
        n = np.tanh(x @ W_in.T + b_in + (r * h) @ W_hn.T + b_hn)
    return (1 - z) * n + z * h


def lstm_reference(x, h, c, cell):
    """torch.nn.LSTMCell, written out in NumPy."""
    gates = x @ cell.weight_ih.data.T + cell.bias_ih.data + h @ cell.weight_hh.data.T + cell.bias_hh.data
    i, f, g, o = np.split(gates, 4, axis=1)
    c2 = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
    return sigmoid(o) * np.tanh(c2), c2


def test_gru_layout_and_names():
    cell = GRUCell(5, 4, rng=np.random.default_rng(0))
    shapes = {n: p.shape for n, p in cell.named_parameters()}
    assert shapes == {"weight_ih": (12, 5), "weight_hh": (12, 4), "bias_ih": (12,), "bias_hh": (12,)}
    bound = 1 / np.sqrt(4)  # U(-1/sqrt(H), 1/sqrt(H)) as PyTorch
    assert all(np.abs(p.data).max() <= bound for p in cell.parameters())


def test_lstm_layout_and_names():
    cell = LSTMCell(5, 4, rng=np.random.default_rng(0))
    shapes = {n: p.shape for n, p in cell.named_parameters()}
    assert shapes == {"weight_ih": (16, 5), "weight_hh": (16, 4), "bias_ih": (16,), "bias_hh": (16,)}


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_matches_equations(reset_after):
    rng = np.random.default_rng(1)
    cell = GRUCell(5, 4, reset_after=reset_after, rng=rng)
    x, h = rng.standard_normal((3, 5)), rng.standard_normal((3, 4))
    out = cell(mg.tensor(x), mg.tensor(h))
    assert isinstance(out, mg.Tensor)
    np.testing.assert_allclose(out.data, gru_reference(x, h, cell, reset_after), rtol=1e-12, atol=1e-14)


def test_reset_before_and_after_differ():
    """The two GRU forms share parameters but place r differently: outputs differ."""
    rng = np.random.default_rng(2)
    a = GRUCell(3, 4, reset_after=True, rng=np.random.default_rng(0))
    b = GRUCell(3, 4, reset_after=False, rng=np.random.default_rng(0))
    x, h = mg.tensor(rng.standard_normal((2, 3))), mg.tensor(rng.standard_normal((2, 4)))
    assert not np.allclose(a(x, h).data, b(x, h).data)


def test_lstm_matches_equations():
    rng = np.random.default_rng(3)
    cell = LSTMCell(5, 4, rng=rng)
    x, h, c = (rng.standard_normal(s) for s in ((3, 5), (3, 4), (3, 4)))
    h2, c2 = cell(mg.tensor(x), (mg.tensor(h), mg.tensor(c)))
    rh, rc = lstm_reference(x, h, c, cell)
    np.testing.assert_allclose(h2.data, rh, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(c2.data, rc, rtol=1e-12, atol=1e-14)


def test_a_state_left_out_is_zeros():
    x = mg.tensor(np.ones((2, 2)))
    gru = GRUCell(2, 3, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(gru(x).data, gru(x, mg.tensor(np.zeros((2, 3)))).data)
    lstm = LSTMCell(2, 3, rng=np.random.default_rng(0))
    zeros = (mg.tensor(np.zeros((2, 3))), mg.tensor(np.zeros((2, 3))))
    for a, b in zip(lstm(x), lstm(x, zeros)):
        np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("Cell", [GRUCell, LSTMCell])
def test_a_call_is_the_step_on_the_projected_input(Cell):
    """cell(x, state) = cell.step(W_ih x + b_ih, state): what a kernel that knows the projection
    already (models/kernels.py) calls."""
    cell = Cell(2, 3, rng=np.random.default_rng(0))
    rng = np.random.default_rng(1)
    x = mg.tensor(rng.standard_normal((4, 2)))
    h = mg.tensor(rng.standard_normal((4, 3)))
    state = h if Cell is GRUCell else (h, mg.tensor(rng.standard_normal((4, 3))))
    gi = x.data @ cell.weight_ih.data.T + cell.bias_ih.data                  # (B, G)
    a, b = cell(x, state), cell.step(mg.tensor(gi), state)
    for p, q in zip(*((a, b) if Cell is LSTMCell else ((a,), (b,)))):
        np.testing.assert_allclose(p.data, q.data, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("Cell, state, message", [
    (GRUCell, lambda h: (h,), r"^GRUCell: the state must be h, one tensor \(B, H\), as in "
                              r"torch.nn.GRUCell; got a tuple of 1"),
    (LSTMCell, lambda h: h, r"^LSTMCell: the state must be the tuple \(h, c\), as in "
                            r"torch.nn.LSTMCell; got Tensor"),
    (LSTMCell, lambda h: (h,), r"^LSTMCell: the state must be the tuple \(h, c\).*a tuple of 1"),
])
def test_a_state_of_the_wrong_form_is_refused(Cell, state, message):
    cell = Cell(2, 3, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match=message):
        cell(mg.tensor(np.ones((1, 2))), state(mg.tensor(np.ones((1, 3)))))


@pytest.mark.parametrize("reset_after", [True, False])
def test_gru_gradcheck(reset_after):
    rng = np.random.default_rng(4)
    cell = GRUCell(3, 2, reset_after=reset_after, rng=rng)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 2))

    def f(x, h, w_ih, w_hh, b_ih, b_hh):
        cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh = w_ih, w_hh, b_ih, b_hh
        return cell(x, h)  # h' (B, H): gradcheck projects it onto random directions: gradcheck projects it onto random directions

    params = [p.data.copy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    assert gradcheck(f, [x, h] + params)


def test_lstm_gradcheck():
    rng = np.random.default_rng(5)
    cell = LSTMCell(3, 2, rng=rng)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 2)), rng.standard_normal((2, 2))

    def f(x, h, c, w_ih, w_hh, b_ih, b_hh):
        cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh = w_ih, w_hh, b_ih, b_hh
        h2, c2 = cell(x, (h, c))
        return mg.concatenate([h2, c2], axis=1)

    params = [p.data.copy() for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
    assert gradcheck(f, [x, h, c] + params)


def test_float32_stays_float32():
    cell = GRUCell(3, 2, rng=np.random.default_rng(0), dtype=np.float32)
    out = cell(mg.tensor(np.ones((2, 3), np.float32)))
    assert out.dtype == np.float32
    out.sum().backward()
    assert all(p.grad.dtype == np.float32 for p in cell.parameters())


def test_shape_errors_name_the_role():
    cell = GRUCell(3, 2, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="input_size=3"):
        cell(mg.tensor(np.ones((2, 4))))
    with pytest.raises(ValueError, match="hidden_size=2"):
        cell(mg.tensor(np.ones((2, 3))), mg.tensor(np.ones((2, 5))))
    with pytest.raises(ValueError, match=r"^LSTMCell: x \(2, 3\), h \(2, 2\), c \(2, 4\) do not "
                                         r"fit input_size=3, hidden_size=2$"):
        LSTMCell(3, 2)(mg.tensor(np.ones((2, 3))), (mg.tensor(np.ones((2, 2))),
                                                    mg.tensor(np.ones((2, 4)))))


@pytest.mark.parametrize("Cell", [GRUCell, LSTMCell])
def test_a_seed_for_rng_is_refused_with_the_cells_name(Cell):
    with pytest.raises(TypeError, match=rf"^{Cell.__name__}: rng must be an np\.random\.Generator"):
        Cell(3, 2, rng=0)


@pytest.mark.parametrize("Cell", [GRUCell, LSTMCell])
def test_the_cells_can_be_differentiated_twice(Cell):
    """The default cells are composed from primitives: grad(create_graph=True) gives a
    differentiable gradient, and differentiating (∂L/∂W_hh)·u again matches finite differences
    of the first gradient."""
    rng = np.random.default_rng(6)
    cell = Cell(3, 2, rng=rng)
    x, h = mg.tensor(rng.standard_normal((2, 3))), mg.tensor(rng.standard_normal((2, 2)))
    state = h if Cell is GRUCell else (h, mg.tensor(rng.standard_normal((2, 2))))
    W = cell.weight_hh
    u, v = rng.standard_normal(W.shape), rng.standard_normal(W.shape)

    def loss():  # L = Σ h'²
        out = cell(x, state)
        h_new = out if Cell is GRUCell else out[0]
        return (h_new * h_new).sum()

    g = mg.grad(loss(), W, create_graph=True)                            # a Tensor
    hvp = mg.grad((g * u).sum(), W)                                      # ∂/∂W [(∂L/∂W)·u]
    eps, W0 = 1e-6, W.data.copy()
    W.data = W0 + eps * v
    plus = np.sum(mg.grad(loss(), W) * u)
    W.data = W0 - eps * v
    minus = np.sum(mg.grad(loss(), W) * u)
    W.data = W0
    np.testing.assert_allclose(np.sum(hvp * v), (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-9)
