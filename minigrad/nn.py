"""Modules: containers of parameters, in PyTorch's shape.

A ``Module``'s parameters are its attributes that are a ``Parameter``, a ``Module``, or a list,
tuple or dict of them (one level deep), in the order assigned: no registration. Names are
dotted paths: ``fc.weight``, ``blocks.0.fc.bias``, ``heads.a.weight``.
"""
from __future__ import annotations

import numpy as np

from minigrad import functional as F, init
from minigrad.nn_ops import layer_norm
from minigrad.engine import Tensor


class Parameter(Tensor):
    """A leaf tensor that a Module owns and an optimizer updates (``requires_grad=True``)."""

    __slots__ = ()

    def __init__(self, data, dtype=None):
        super().__init__(data, requires_grad=True, dtype=dtype)


class Module:
    """Base class. Subclasses set parameters and submodules as attributes and define ``forward``."""

    training = True

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} does not define forward()")

    def _walk(self, prefix: str = "", seen=None):
        """``(dotted name, Parameter or Module)`` here and in the submodules, each once."""
        seen = {id(self)} if seen is None else seen
        for name, value in _attributes(self):
            if isinstance(value, (Parameter, Module)) and id(value) not in seen:
                seen.add(id(value))
                yield prefix + name, value
                if isinstance(value, Module):
                    yield from value._walk(f"{prefix}{name}.", seen)

    def named_parameters(self, prefix: str = "") -> list:
        """``(dotted name, Parameter)`` for this module and all submodules, once each (a shared
        weight under its first name)."""
        return [(name, p) for name, p in self._walk(prefix) if isinstance(p, Parameter)]

    def parameters(self) -> list:
        return [p for _, p in self.named_parameters()]

    def modules(self) -> list:
        """This module and every submodule, depth first, once each."""
        return [self] + [m for _, m in self._walk() if isinstance(m, Module)]

    def __repr__(self) -> str:
        """PyTorch's tree: settings, then submodules indented; a leaf: its parameters' shapes."""
        children = [(n, v) for n, v in _attributes(self) if isinstance(v, Module)]
        settings = [f"{n}={v!r}" for n, v in vars(self).items()
                    if isinstance(v, (bool, int, float, str)) and not n.startswith("_")]
        if not children:
            shapes = [f"{n}={tuple(v.shape)}" for n, v in _attributes(self)
                      if isinstance(v, Parameter)]
            return f"{type(self).__name__}({', '.join(settings + shapes)})"
        lines = [", ".join(settings)] if settings else []
        lines += [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in children]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"

    def zero_grad(self) -> None:
        for p in self.parameters():
            p.grad = None

    def train(self, mode: bool = True) -> "Module":
        for m in self.modules():
            m.training = mode
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def state_dict(self) -> dict:
        """``{name: array copy}`` for every parameter."""
        return {name: p.data.copy() for name, p in self.named_parameters()}

    def load_state_dict(self, state: dict) -> None:
        """Copy arrays into the parameters; nothing changes unless every name is there with its
        shape."""
        params = dict(self.named_parameters())
        problems = {"missing": sorted(set(params) - set(state)),
                    "unexpected": sorted(set(state) - set(params)),
                    "wrong shape": [f"{k}: checkpoint {np.shape(state[k])} vs model {p.shape}"
                                    for k, p in params.items()
                                    if k in state and np.shape(state[k]) != p.shape]}
        if any(problems.values()):
            raise ValueError(f"load_state_dict into {type(self).__name__}: " + " | ".join(
                f"{kind}: {', '.join(names)}" for kind, names in problems.items() if names))
        for k, p in params.items():
            p.data = np.array(state[k], dtype=p.data.dtype)


def _attributes(module):
    """``(name, value)`` of each attribute, lists and tuples opened as ``name.i``, dicts as
    ``name.key``."""
    for name, value in vars(module).items():
        if isinstance(value, (list, tuple)):
            yield from ((f"{name}.{i}", item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            yield from ((f"{name}.{key}", item) for key, item in value.items())
        else:
            yield name, value


def check_sizes(who: str, **sizes) -> None:
    """Refuse layer sizes that are not positive ints (0 would give an empty layer, or 1/√0)."""
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0
               for n in sizes.values()):
        raise ValueError(f"{who}: {' and '.join(sizes)} must be positive integers, got "
                         + ", ".join(f"{k}={v!r}" for k, v in sizes.items()))


class Linear(Module):
    """y = x Wᵀ + b, ``weight (out, in)`` and ``bias (out,)`` drawn from U(−1/√in, 1/√in)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        rng = init.generator("Linear", rng)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(init.uniform(rng, in_features, (out_features, in_features), dtype))
        self.bias = (Parameter(init.uniform(rng, in_features, (out_features,), dtype))
                     if bias else None)

    def forward(self, x):
        """The parameters were checked when made: only the input is, here."""
        x = F.linear_input(f"Linear({self.in_features}, {self.out_features})", x, self.weight)
        return F.linear_op(x, self.weight, self.bias)


class Embedding(Module):
    """A lookup table ``weight (num_embeddings, embedding_dim)``, initialised N(0, 1) as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        rng = init.generator("Embedding", rng)
        self.weight = Parameter(init.normal(rng, (num_embeddings, embedding_dim), dtype))

    def forward(self, ids):
        return F.embedding_op(F.check_embedding_ids(ids, self.weight), self.weight)


class LayerNorm(Module):
    """``nn_ops.layer_norm`` over the last axis; ``weight`` γ starts at ones, ``bias`` β at 0."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5, dtype=np.float64):
        check_sizes("LayerNorm", normalized_shape=normalized_shape)
        self.eps = eps
        self.weight = Parameter(np.ones(normalized_shape, dtype=dtype))
        self.bias = Parameter(np.zeros(normalized_shape, dtype=dtype))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
