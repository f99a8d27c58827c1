"""nn (Module, Linear, Embedding), optim (SGD, Adam, clip_grad_norm_) and save/load."""
from __future__ import annotations

import math
import os
import zipfile

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad import serialization


class Block(nn.Module):
    def __init__(self, rng):
        self.fc = nn.Linear(3, 3, rng=rng)

    def forward(self, x):
        return mg.tanh(self.fc(x))


class Net(nn.Module):
    def __init__(self, rng):
        self.embed = nn.Embedding(5, 3, rng=rng)
        self.blocks = [Block(rng), Block(rng)]
        self.scale = nn.Parameter(np.ones(3))
        self.head = nn.Linear(3, 2, bias=False, rng=rng)
        self.tied = self.head                          # the same module twice: counted once
        self.constant = mg.tensor(np.ones(3))          # a plain tensor is not a parameter
        self.note = "not a module"

    def forward(self, ids):
        h = self.embed(ids)
        for block in self.blocks:
            h = block(h)
        return self.head(h * self.scale)


NAMES = ["embed.weight", "blocks.0.fc.weight", "blocks.0.fc.bias", "blocks.1.fc.weight",
         "blocks.1.fc.bias", "scale", "head.weight"]


# ---- Module ------------------------------------------------------------------------------------------

def test_module_registers_parameters_submodules_and_lists_in_order():
    net = Net(np.random.default_rng(0))
    assert [name for name, _ in net.named_parameters()] == NAMES
    assert [p.shape for p in net.parameters()] == [(5, 3), (3, 3), (3,), (3, 3), (3,), (3,), (2, 3)]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())


def test_zero_grad_and_train_eval_reach_every_submodule():
    net = Net(np.random.default_rng(0))
    net(np.array([[0, 4, 2]])).sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.eval()
    modules = list(net.modules())                      # net, embed, 2 blocks, their fc, head
    assert len(modules) == 7 and len({id(m) for m in modules}) == 7
    assert not any(m.training for m in modules)
    assert net.train() is net and all(m.training for m in net.modules())


def test_state_dict_round_trip_copies():
    a, b = Net(np.random.default_rng(0)), Net(np.random.default_rng(1))
    ids = np.array([1, 2, 3])
    state = a.state_dict()
    assert list(state) == NAMES
    state["scale"][0] = 99.0                           # a copy: the model is unchanged
    assert a.scale.data[0] == 1.0
    state["scale"][0] = 1.0
    b.load_state_dict(state)
    np.testing.assert_array_equal(a(ids).data, b(ids).data)
    state["scale"][0] = 5.0                            # and loading copied too
    assert b.scale.data[0] == 1.0


def test_load_state_dict_lists_every_problem_and_changes_nothing():
    net = Net(np.random.default_rng(0))
    before = net.state_dict()
    state = net.state_dict()
    del state["scale"], state["blocks.1.fc.bias"]
    state["extra.weight"] = np.zeros(2)
    state["head.weight"] = np.zeros((3, 2))
    with pytest.raises(ValueError) as info:
        net.load_state_dict(state)
    message = str(info.value)
    for part in ("missing: blocks.1.fc.bias, scale", "unexpected: extra.weight",
                 "head.weight: checkpoint (3, 2) vs model (2, 3)"):
        assert part in message
    for name, value in net.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


def test_linear_layout_and_init():
    layer = nn.Linear(16, 200, rng=np.random.default_rng(0))
    assert layer.weight.shape == (200, 16) and layer.bias.shape == (200,)
    bound = 1 / np.sqrt(16)                            # PyTorch: U(−1/√in, 1/√in)
    for p in (layer.weight.data, layer.bias.data):
        assert np.abs(p).max() <= bound and np.abs(p).max() > 0.95 * bound
    assert abs(layer.weight.data.mean()) < 0.02
    x = np.random.default_rng(1).standard_normal((4, 16))
    np.testing.assert_allclose(layer(mg.tensor(x)).data, x @ layer.weight.data.T + layer.bias.data)
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=np.float32)(mg.tensor(np.ones(2, np.float32))).dtype == np.float32
    with pytest.raises(ValueError, match=r"Linear\(16, 200\): input of shape \(4, 3\)"):
        layer(mg.tensor(np.ones((4, 3))))


def test_embedding_picks_rows():
    emb = nn.Embedding(4, 2, rng=np.random.default_rng(0))
    ids = np.array([[3, 0], [0, 0]])
    np.testing.assert_array_equal(emb(ids).data, emb.weight.data[ids])


# ---- optimizers -------------------------------------------------------------------------------------

def test_sgd_with_momentum_and_weight_decay_by_hand():
    p = nn.Parameter(np.array([1.0, -2.0]))
    untouched = nn.Parameter(np.array([7.0]))          # no gradient: skipped
    opt = optim.SGD([p, untouched], lr=0.1, momentum=0.9, weight_decay=0.01)
    p.grad = np.array([0.5, 0.5])
    opt.step()   # d = g + 0.01 p = [0.51, 0.48];  v = d;  p = p − 0.1 v
    np.testing.assert_allclose(p.data, [0.949, -2.048], rtol=1e-14)
    p.grad = np.array([0.5, 0.5])
    opt.step()   # d = [0.50949, 0.47952];  v = 0.9 [0.51, 0.48] + d = [0.96849, 0.91152]
    np.testing.assert_allclose(p.data, [0.852151, -2.139152], rtol=1e-14)
    assert untouched.data[0] == 7.0
    plain = nn.Parameter(np.array([1.0]))
    plain.grad = np.array([2.0])
    optim.SGD([plain], lr=0.5).step()
    np.testing.assert_array_equal(plain.data, [0.0])


def adam_reference(p, grads, lr, betas, eps, weight_decay):
    """PyTorch's Adam, written out in NumPy: bias-corrected moments."""
    b1, b2 = betas
    m, v = np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
    return p


@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
def test_adam_matches_pytorchs_update(weight_decay):
    rng = np.random.default_rng(0)
    start = rng.standard_normal((3, 2))
    grads = [rng.standard_normal((3, 2)) for _ in range(5)]
    p = nn.Parameter(start)
    opt = optim.Adam([p], lr=0.01, betas=(0.8, 0.95), eps=1e-6, weight_decay=weight_decay)
    for g in grads:
        p.grad = g.copy()
        opt.step()
    expected = adam_reference(start, grads, 0.01, (0.8, 0.95), 1e-6, weight_decay)
    np.testing.assert_allclose(p.data, expected, rtol=1e-12)


def test_adam_first_step_moves_each_weight_by_lr():
    """With bias correction, m̂ = g and v̂ = g² after one step, so Δp = −lr·g/(|g| + ε)."""
    p = nn.Parameter(np.array([0.0, 0.0, 0.0], np.float32))
    p.grad = np.array([1e-3, -5.0, 20.0], np.float32)
    optim.Adam([p], lr=0.1).step()
    np.testing.assert_allclose(p.data, [-0.1, 0.1, -0.1], rtol=1e-4)
    assert p.data.dtype == np.float32


def test_adam_resumes_exactly_from_its_state():
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(4) for _ in range(5)]
    a = nn.Parameter(np.ones(4))
    opt = optim.Adam([a], lr=0.1)
    for g in grads[:3]:
        a.grad = g
        opt.step()
    b = nn.Parameter(a.data.copy())
    resumed = optim.Adam([b], lr=0.1)
    resumed.load_state_dict(opt.state_dict())
    for g in grads[3:]:
        a.grad, b.grad = g, g
        opt.step()
        resumed.step()
    np.testing.assert_array_equal(a.data, b.data)


def test_clip_grad_norm_():
    a, b = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(1))
    a.grad, b.grad = np.array([3.0, 4.0]), np.array([12.0])     # global norm 13
    total = optim.clip_grad_norm_([a, b], 6.5)
    assert isinstance(total, mg.Tensor) and total.shape == () and not total.requires_grad
    assert float(total) == pytest.approx(13.0)
    np.testing.assert_allclose(np.concatenate([a.grad, b.grad]), [1.5, 2.0, 6.0], rtol=1e-6)
    assert float(optim.clip_grad_norm_([a, b], 100.0)) == pytest.approx(6.5, rel=1e-6)
    np.testing.assert_allclose(a.grad, [1.5, 2.0], rtol=1e-6)  # under the limit: unchanged


def test_clip_grad_norm_takes_one_tensor_and_a_norm_type_as_torch():
    a = nn.Parameter(np.zeros(3))
    a.grad = np.array([3.0, -4.0, 1.0])
    assert float(optim.clip_grad_norm_(a, 100.0, norm_type=math.inf)) == 4.0
    assert float(optim.clip_grad_norm_(a, 100.0, norm_type=1)) == pytest.approx(8.0)
    assert float(optim.clip_grad_norm_(a, 2.0, norm_type=1)) == pytest.approx(8.0)
    np.testing.assert_allclose(a.grad, [0.75, -1.0, 0.25], rtol=1e-6)  # scaled by 2 / 8
    with pytest.raises(ValueError, match="norm_type"):
        optim.clip_grad_norm_(a, 1.0, norm_type=0)


# ---- save and load ------------------------------------------------------------------------------------

def test_save_load_round_trip(tmp_path):
    net = Net(np.random.default_rng(0))
    state = {**net.state_dict(), "f32": np.ones(2, np.float32), "step": 7,
             "tensor": mg.tensor([1.0, 2.0])}
    path = tmp_path / "model.npz"
    mg.save(state, path)
    loaded = mg.load(path)
    assert list(loaded) == list(state)
    assert loaded["f32"].dtype == np.float32 and int(loaded["step"]) == 7
    np.testing.assert_array_equal(loaded["tensor"], [1.0, 2.0])
    other = Net(np.random.default_rng(1))
    other.load_state_dict({k: loaded[k] for k in NAMES})
    for name, value in other.state_dict().items():
        np.testing.assert_array_equal(value, state[name])
    assert os.listdir(tmp_path) == ["model.npz"]       # no temporary file left behind


def test_a_failed_save_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.npz"
    mg.save({"w": np.zeros(3)}, path)

    def broken_savez(file, **arrays):
        file.write(b"PK half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(serialization.np, "savez", broken_savez)
    with pytest.raises(OSError, match="disk full"):
        mg.save({"w": np.ones(3)}, path)
    monkeypatch.undo()
    np.testing.assert_array_equal(mg.load(path)["w"], np.zeros(3))
    assert os.listdir(tmp_path) == ["model.npz"]


def test_load_refuses_what_is_not_a_minigrad_archive(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("not an archive")
    single = tmp_path / "single.npy"
    np.save(single, np.ones(2))
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, obj=np.array([{"a": 1}], dtype=object))   # only NumPy pickles this
    for path in (text, single, pickled):
        with pytest.raises(ValueError, match="not an .npz archive written by minigrad.save"):
            mg.load(path)
    with pytest.raises(FileNotFoundError):
        mg.load(tmp_path / "missing.npz")
    zipped = tmp_path / "zipped.npz"   # a zip whose members are not .npy files: not their bytes
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("a.npy", b"not an array")
        z.writestr("notes.txt", b"hello")
    with pytest.raises(ValueError, match=r"holds entries that are not arrays: \['a', 'notes.txt'\]"):
        mg.load(zipped)


def test_save_refuses_object_arrays(tmp_path):
    with pytest.raises(TypeError, match="'bad' is not numeric"):
        mg.save({"ok": np.ones(2), "bad": np.array([None, 1], dtype=object)}, tmp_path / "x.npz")
    assert os.listdir(tmp_path) == []


# ---- parameters in lists, tuples and dicts ------------------------------------------------------------

class Containers(nn.Module):
    def __init__(self, rng):
        self.gains = [nn.Parameter(np.ones(2)), nn.Parameter(np.ones(3))]
        self.pair = (nn.Linear(2, 2, rng=rng), nn.Parameter(np.zeros(1)))
        self.heads = {"a": nn.Linear(2, 1, bias=False, rng=rng), "b": nn.Parameter(np.ones(4))}
        self.shared = [self.gains[0]]                  # the same parameter again: counted once


def test_parameters_in_lists_tuples_and_dicts_are_registered():
    net = Containers(np.random.default_rng(0))
    assert [name for name, _ in net.named_parameters()] == [
        "gains.0", "gains.1", "pair.0.weight", "pair.0.bias", "pair.1", "heads.a.weight", "heads.b"]
    assert len(list(net.modules())) == 3               # net, pair.0, heads.a
    state = net.state_dict()
    state["heads.b"] = np.full(4, 2.0)
    net.load_state_dict(state)
    np.testing.assert_array_equal(net.heads["b"].data, 2.0)
    assert len(optim.SGD(net.parameters(), lr=0.1).params) == 7   # all of them get trained


# ---- optimizers: state, dtypes, clipping -----------------------------------------------------------------

def test_sgd_load_state_dict_checks_names_and_shapes():
    p, q = nn.Parameter(np.zeros(2, np.float32)), nn.Parameter(np.zeros(3, np.float32))
    opt = optim.SGD([p, q], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match=r"SGD.load_state_dict: unexpected entries \['velocity.2', 'w'\]"):
        opt.load_state_dict({"velocity.2": np.zeros(2), "w": np.zeros(1)})
    with pytest.raises(ValueError, match=r"SGD.load_state_dict: velocity.1 has shape \(2,\), "
                                         r"parameter 1 has \(3,\)"):
        opt.load_state_dict({"velocity.1": np.zeros(2)})
    opt.load_state_dict({"velocity.0": np.ones(2)})    # a parameter never stepped has no entry
    assert opt.velocity[0].dtype == np.float32 and opt.velocity[1] is None


def test_optimizers_keep_float32_with_numpy_hyperparameters():
    f64 = np.float64
    for make in (lambda ps: optim.SGD(ps, lr=f64(0.1), momentum=f64(0.9), weight_decay=f64(0.01)),
                 lambda ps: optim.Adam(ps, lr=f64(0.1), betas=(f64(0.9), f64(0.99)), eps=f64(1e-8),
                                       weight_decay=f64(0.01))):
        p = nn.Parameter(np.ones(3, np.float32))
        opt = make([p])
        for _ in range(2):
            p.grad = np.ones(3, np.float32)
            opt.step()
        assert p.data.dtype == np.float32
        for array in opt.state_dict().values():
            assert array.dtype in (np.float32, np.int64)


def test_clip_grad_norm_clips_a_0d_parameter():
    p = nn.Parameter(np.array(2.0))
    (p * p * 10).backward()                            # grad 40
    assert float(optim.clip_grad_norm_([p], 1.0)) == pytest.approx(40.0)
    assert type(p.grad) is np.ndarray and p.grad == pytest.approx(1.0, rel=1e-6)


def test_clip_grad_norm_refuses_a_non_finite_norm_and_leaves_the_gradients():
    a, b = nn.Parameter(np.zeros(2)), nn.Parameter(np.zeros(1))
    a.grad, b.grad = np.array([np.inf, 1.0]), np.array([2.0])
    with pytest.raises(FloatingPointError, match="clip_grad_norm_: the total gradient norm is inf"):
        optim.clip_grad_norm_([a, b], 1.0)
    np.testing.assert_array_equal(b.grad, [2.0])
    a.grad = np.array([np.nan, 1.0])
    with pytest.raises(FloatingPointError, match="is nan"):
        optim.clip_grad_norm_([a, b], 1.0)


# ---- save: arguments, folders, permissions ---------------------------------------------------------------

def test_save_wants_a_dict(tmp_path):
    with pytest.raises(TypeError, match=r"save: state must be a dict .*got list"):
        mg.save([np.ones(2)], tmp_path / "x.npz")


def test_save_into_a_missing_folder_names_the_users_path(tmp_path):
    path = tmp_path / "no" / "such" / "model.npz"
    with pytest.raises(FileNotFoundError) as info:
        mg.save({"w": np.ones(2)}, path)
    assert str(path) in str(info.value) and ".tmp-" not in str(info.value)


def test_saved_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        mg.save({"w": np.ones(2)}, tmp_path / "a.npz")
        os.umask(0o002)
        mg.save({"w": np.ones(2)}, tmp_path / "b.npz")
    finally:
        os.umask(old)
    assert os.stat(tmp_path / "a.npz").st_mode & 0o777 == 0o644
    assert os.stat(tmp_path / "b.npz").st_mode & 0o777 == 0o664


def test_a_module_prints_as_a_pytorch_style_tree():
    from minigrad.nn import Embedding, Linear, Module

    class Net(Module):
        def __init__(self):
            rng = np.random.default_rng(0)
            self.depth = 2
            self.emb = Embedding(5, 3, rng=rng)
            self.layers = [Linear(3, 4, rng=rng), Linear(4, 2, bias=False, rng=rng)]

        def forward(self, x):
            return x

    assert repr(Linear(3, 4, rng=np.random.default_rng(0))) == (
        "Linear(in_features=3, out_features=4, weight=(4, 3), bias=(4,))")
    assert repr(Net()) == ("Net(\n  depth=2\n  (emb): Embedding(weight=(5, 3))\n"
                           "  (layers.0): Linear(in_features=3, out_features=4, weight=(4, 3), bias=(4,))\n"
                           "  (layers.1): Linear(in_features=4, out_features=2, weight=(2, 4))\n)")
    assert "object at 0x" not in repr(Net())


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1),
                                  lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps)], ids=["SGD", "SGD-momentum", "Adam"])
def test_an_optimizer_refuses_a_parameter_listed_twice(make):
    """[p, q, p] would step p twice per step (as PyTorch, refused), naming both indices."""
    p, q = nn.Parameter(np.zeros((2, 3))), nn.Parameter(np.zeros(4))
    with pytest.raises(ValueError) as info:
        make([p, q, p])
    who = type(make([p])).__name__
    assert str(info.value) == (f"{who}: parameter 2 (shape (2, 3)) is parameter 0 again; "
                               f"list each parameter once")
    make([p, q, nn.Parameter(np.zeros((2, 3)))])       # equal values, distinct tensors: fine
    lin = nn.Linear(3, 2)
    with pytest.raises(ValueError, match=r"parameter 2 \(shape \(2, 3\)\) is parameter 0"):
        make(lin.parameters() + lin.parameters())


def test_every_optimizer_class_checks_for_duplicates():
    """A new optimizer in optim.py inherits the check from Optimizer."""
    classes = [c for c in vars(optim).values()
               if isinstance(c, type) and issubclass(c, optim.Optimizer) and c is not optim.Optimizer]
    assert {c.__name__ for c in classes} >= {"SGD", "Adam"}
    p = nn.Parameter(np.zeros(3))
    for cls in classes:
        with pytest.raises(ValueError, match=rf"^{cls.__name__}: parameter 1 \(shape \(3,\)\) is parameter 0 again"):
            cls([p, p], lr=0.1)
