"""What an exercise is, and the registry of all of them (easy to hard).

An exercise is a forward function built from minigrad ops, a few input cases drawn from a
fixed seed, the learner-facing text (formula, two graded hints) and the classic mistakes it
can name. In a *backward* exercise the learner writes the matching VJP in plain NumPy in a
stub file (``stubs/NN_name.py``) with the signature ``name_vjp(g, *inputs, **constants)``;
in a *forward* exercise (source 003 §5: "write the forward pass by hand") they write the
forward itself, ``name(*inputs, **constants)``, and it is compared with the library's.

A *mistake* gives the gradient (for a forward exercise: the output) a classic error would
produce. Many are written as a
*surrogate forward*: the same values as the real forward, but one gradient path cut or
changed with ``detach()`` -- e.g. ``st(tanh(u), u)`` has the value of tanh(u) and the
derivative of u, which is exactly "forgot the factor 1 − tanh²".
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import minigrad as mg
from minigrad.engine import unbroadcast
from minigrad.tensor import Tensor

Case = tuple  # (inputs: dict name -> float64 array, constants: dict name -> value)


@dataclass(frozen=True)
class Mistake:
    """A classic error: its explanation and the gradients it produces.

    ``grads(g, inputs, constants)`` returns ``{input name: wrong gradient}`` for the inputs
    the mistake changes.
    """

    text: str
    grads: Callable   # a forward exercise's: (None, inputs, constants) -> {output: wrong value}


@dataclass(frozen=True)
class Exercise:
    name: str                   # also the stub's function: f"{name}_vjp" (forward: name)
    stars: int                  # difficulty, 1 (easy) to 5 (hard)
    title: str
    formula: str                # one line, shown by `list`
    args: tuple                 # differentiable inputs, in the order the VJP returns gradients
    forward: Callable           # (*tensors, **constants) -> Tensor, from minigrad ops
    cases: Callable             # rng -> list of Case
    hints: tuple                # (level 1: shape bookkeeping, level 2: the formula)
    mistakes: tuple = ()
    zero_sum: dict = field(default_factory=dict)  # input -> axis along which its gradient sums to 0
    nan_hint: str = ""          # where a NaN in this exercise usually comes from
    kind: str = "backward"      # or "forward": the learner writes ``forward`` itself
    outputs: tuple = ()         # a forward exercise's outputs, in the order it returns them
    lesson: Callable | None = None  # (inputs, constants, outputs) -> a passing case's numbers
    moral: str = ""             # what the numbers show, said once all cases pass
    number: int = 0             # set by the registry

    @property
    def function(self) -> str:
        return self.name if self.kind == "forward" else f"{self.name}_vjp"

    @property
    def file(self) -> str:
        return f"{self.number:02d}_{self.name}.py"

    @property
    def seed(self) -> int:
        """Fixed per exercise (not per position in the list), so cases never change."""
        return zlib.crc32(self.name.encode())


# ---- helpers for writing exercises -----------------------------------------------------------

def normal(rng: np.random.Generator, scale: float = 1.0, constants: dict | None = None,
           **shapes) -> Case:
    """A case whose inputs are N(0, scale²) arrays of the given shapes (in keyword order)."""
    return ({k: scale * rng.standard_normal(s) for k, s in shapes.items()}, constants or {})


def st(value: Tensor, through: Tensor) -> Tensor:
    """The value of ``value`` with the gradient of ``through`` ("straight through")."""
    return through + (value - through).detach()


def sum_to(x: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a broadcast-shaped gradient back to ``shape`` (the engine's ``unbroadcast``)."""
    return unbroadcast(x, shape, x.dtype)


def autodiff(surrogate: Callable) -> Callable:
    """Mistake gradients from a surrogate forward, by the engine's own reverse mode."""
    def grads(g, inputs, constants):
        ts = [Tensor(x, requires_grad=True) for x in inputs.values()]
        out = surrogate(*ts, **constants)
        return dict(zip(inputs, mg.grad(out, ts, grad_outputs=g)))
    return grads
