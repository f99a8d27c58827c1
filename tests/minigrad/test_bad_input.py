"""Bad input fails early and says what is wrong: shape mismatches name the op and both
shapes, non-numeric data is refused at creation, integer tensors cannot require grad."""
from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
from minigrad import functional as F
from minigrad import nn


def t(*shape):
    return mg.tensor(np.ones(shape))


MISMATCHES = [
    ("add", lambda: t(2, 3) + t(4), ["(2, 3)", "(4,)"]),
    ("sub", lambda: t(3) - t(2), ["(3,)", "(2,)"]),
    ("mul", lambda: t(2, 1, 5) * t(3, 4), ["(2, 1, 5)", "(3, 4)"]),
    ("div", lambda: 1.0 / t(2) / t(3), ["(2,)", "(3,)"]),
    ("matmul", lambda: t(2, 3) @ t(4, 5), ["(2, 3)", "(4, 5)"]),
    ("matmul", lambda: t(3) @ t(4), ["(3,)", "(4,)"]),
    ("matmul", lambda: t(2, 3, 4) @ t(5, 4, 2), ["(2, 3, 4)", "(5, 4, 2)"]),
    ("reshape", lambda: mg.reshape(t(2, 3), (4, 2)), ["(2, 3)", "(4, 2)"]),
    ("broadcast_to", lambda: mg.broadcast_to(t(3), (2, 4)), ["(3,)", "(2, 4)"]),
    ("concatenate", lambda: mg.concatenate([t(2, 3), t(2, 4)], axis=0), ["(2, 3)", "(2, 4)"]),
    ("stack", lambda: mg.stack([t(2), t(3)]), ["(2,)", "(3,)"]),
    ("where", lambda: mg.where(np.ones(3, bool), t(2), t(3)), ["(2,)", "(3,)"]),
    ("masked_fill", lambda: mg.masked_fill(t(3), np.ones(4, bool), 0.0), ["(4,)", "(3,)"]),
    ("softmax", lambda: F.softmax(t(2, 3), mask=np.ones((2, 4), bool)), ["(2, 4)", "(2, 3)"]),
    ("cross_entropy", lambda: F.cross_entropy(t(4, 3), np.zeros(5, int)), ["(5,)", "(4, 3)"]),
    ("linear", lambda: F.linear(t(2, 3), t(4, 5)), ["(2, 3)", "(4, 5)"]),
    ("Linear", lambda: nn.Linear(5, 2)(t(2, 3)), ["(2, 3)", "5"]),
]


@pytest.mark.parametrize("op, call, shapes", MISMATCHES, ids=[m[0] for m in MISMATCHES])
def test_shape_mismatch_names_the_op_and_both_shapes(op, call, shapes):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(op)
    for shape in shapes:
        assert shape in message


@pytest.mark.parametrize("data", [
    np.array(["a", "b"]), ["a", "b"], np.array([object(), 1.0], dtype=object), b"bytes",
    np.array(["2020-01-01"], dtype="datetime64[D]"),
], ids=["str array", "str list", "object array", "bytes", "datetime"])
def test_non_numeric_data_is_refused_at_creation(data):
    with pytest.raises(TypeError, match="cannot make a tensor"):
        mg.tensor(data)


def test_integer_tensors_are_allowed_but_cannot_require_grad():
    ids = mg.tensor(np.array([1, 2, 3]))
    assert ids.dtype == np.int64 and not ids.requires_grad
    assert (ids * 0.5).dtype == np.float64              # mixing with floats gives floats
    for data in (np.array([1, 2]), [1, 2], np.array([True])):
        with pytest.raises(TypeError, match="requires_grad=True needs a floating dtype"):
            mg.tensor(data, requires_grad=True)
    with pytest.raises(TypeError, match="floating dtype"):
        nn.Parameter(np.arange(3))


def test_other_misuse_is_explained():
    with pytest.raises(TypeError, match="exponent must be a Python or NumPy scalar"):
        t(2) ** t(2)
    with pytest.raises(IndexError, match=r"getitem: .* shape \(2, 3\)"):
        t(2, 3)[5]
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        mg.sum(t(2, 3), axis=2)
    with pytest.raises(ValueError, match="permutation"):
        mg.transpose(t(2, 3), (0, 0))
    with pytest.raises(ValueError, match="boolean"):
        F.softmax(t(2, 3), mask=np.ones((2, 3)))
