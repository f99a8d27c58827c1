"""Modules: containers of parameters, in PyTorch's shape.

A ``Module`` finds its parameters by looking at its attributes: a ``Parameter``, another
``Module``, or a list, tuple or dict of them (one level deep: a list of lists is not searched).
No registration calls, no metaclass -- assigning an attribute is enough, in the order the
attributes were assigned. Names are dotted paths: ``fc.weight``, ``blocks.0.fc.bias`` (item 0
of the list ``blocks``), ``heads.a.weight`` (key ``"a"`` of the dict ``heads``).
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

    def named_parameters(self, prefix: str = ""):
        """Yield ``(dotted name, Parameter)`` for this module and all submodules, once each."""
        seen = set()
        for name, p in self._walk(prefix):
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def _walk(self, prefix):
        for name, value in _attributes(self):
            if isinstance(value, Parameter):
                yield prefix + name, value
            elif isinstance(value, Module):
                yield from value._walk(f"{prefix}{name}.")

    def parameters(self) -> list:
        return [p for _, p in self.named_parameters()]

    def modules(self, _seen=None):
        """This module and every submodule, depth first, once each (as named_parameters)."""
        _seen = set() if _seen is None else _seen
        if id(self) in _seen:
            return
        _seen.add(id(self))
        yield self
        for _, value in _attributes(self):
            if isinstance(value, Module):
                yield from value.modules(_seen)

    def __repr__(self) -> str:
        """PyTorch's tree: ``Name(setting=value, …)``, then each submodule indented as
        ``(attribute): …``; a module without submodules shows its parameters' shapes too."""
        children = [(n, v) for n, v in _attributes(self) if isinstance(v, Module)]
        settings = [f"{n}={v!r}" for n, v in vars(self).items()
                    if isinstance(v, (bool, int, float, str)) and not n.startswith("_")]
        if not children:
            settings += [f"{n}={tuple(v.shape)}" for n, v in _attributes(self)
                         if isinstance(v, Parameter)]
        if not children:
            return f"{type(self).__name__}({', '.join(settings)})"
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
        """Copy arrays into the parameters; every name must be present and of the right shape.

        Raises ``ValueError`` listing all missing, unexpected and mis-shaped entries; nothing is
        changed unless everything fits.
        """
        params = dict(self.named_parameters())
        missing = sorted(set(params) - set(state))
        unexpected = sorted(set(state) - set(params))
        misshaped = [f"{k}: checkpoint {np.shape(state[k])} vs model {params[k].shape}"
                     for k in params if k in state and np.shape(state[k]) != params[k].shape]
        problems = []
        if missing:
            problems.append(f"missing: {', '.join(missing)}")
        if unexpected:
            problems.append(f"unexpected: {', '.join(unexpected)}")
        if misshaped:
            problems.append(f"wrong shape: {'; '.join(misshaped)}")
        if problems:
            raise ValueError(f"load_state_dict into {type(self).__name__}: " + " | ".join(problems))
        for k, p in params.items():
            p.data = np.array(state[k], dtype=p.data.dtype)


def _attributes(module):
    """``(name, value)`` for each attribute, with lists and tuples opened into ``name.i`` and
    dicts into ``name.key``: the one place that decides where parameters are looked for."""
    for name, value in vars(module).items():
        if isinstance(value, (list, tuple)):
            yield from ((f"{name}.{i}", item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            yield from ((f"{name}.{key}", item) for key, item in value.items())
        else:
            yield name, value


def check_sizes(who: str, **sizes) -> None:
    """Layer sizes must be positive ints, not bools (a size 0 would give an empty layer, or
    1/√0): the one check of the library's constructors that take sizes; the error names the
    layer and every size with its value."""
    if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n > 0
               for n in sizes.values()):
        raise ValueError(f"{who}: {' and '.join(sizes)} must be positive integers, got "
                         + ", ".join(f"{k}={v!r}" for k, v in sizes.items()))


class Linear(Module):
    """y = x Wᵀ + b with ``weight (out, in)`` and ``bias (out,)``, initialised as PyTorch does:
    U(−1/√in, 1/√in) for both."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("Linear", in_features=in_features, out_features=out_features)
        rng = init.generator("Linear", rng)
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(init.uniform(rng, in_features, (out_features, in_features), dtype))
        self.bias = (Parameter(init.uniform(rng, in_features, (out_features,), dtype))
                     if bias else None)

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): input of shape "
                             f"{tuple(x.shape)} has last dim {x.shape[-1]}, expected {self.in_features}")
        return F.linear(x, self.weight, self.bias)


class Embedding(Module):
    """A lookup table ``weight (num_embeddings, embedding_dim)``, initialised N(0, 1) as PyTorch."""

    def __init__(self, num_embeddings: int, embedding_dim: int,
                 rng: np.random.Generator | None = None, dtype=np.float64):
        check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        rng = init.generator("Embedding", rng)
        self.weight = Parameter(init.normal(rng, (num_embeddings, embedding_dim), dtype))

    def forward(self, ids):
        return F.embedding(ids, self.weight)


class LayerNorm(Module):
    """y = γ ⊙ (x − μ) / √(σ² + ε) + β over the last axis (``minigrad.nn_ops.layer_norm``, composed);
    ``weight`` γ starts at ones and ``bias`` β at zeros, as in PyTorch."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5, dtype=np.float64):
        check_sizes("LayerNorm", normalized_shape=normalized_shape)
        self.eps = eps
        self.weight = Parameter(np.ones(normalized_shape, dtype=dtype))
        self.bias = Parameter(np.zeros(normalized_shape, dtype=dtype))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.eps)
