"""minigrad: a reverse-mode autograd engine in pure NumPy, small enough to read in one sitting.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()          # x.grad == [2., 4.]
"""
__version__ = "0.1.0"

from minigrad.modes import detect_anomaly, no_grad
from minigrad.autograd import grad
from minigrad.tensor import Tensor, tensor
from minigrad.ops import (add, sub, mul, div, neg, pow, power, astype, exp, log, sqrt, tanh,
                          sigmoid, relu, sum, mean, matmul)
from minigrad.shape_ops import (reshape, transpose, swapaxes, expand_dims, broadcast_to,
                                concatenate, stack, getitem, scatter, where, masked_fill)
from minigrad.catalogue import (abs, rpow, logsumexp, sign, sin, cos, log1p, expm1, erf, maximum,
                                minimum, clip, max, min, prod, var, std, argmax, argmin, cumsum,
                                outer, tensordot, einsum,
                                tril, triu, take_along_axis, pad, repeat, tile, ravel, squeeze,
                                split)
from minigrad.serialization import save, load
from minigrad import catalogue, functional, init, nn, optim
from minigrad.numpy_functions import module_getattr as __getattr__  # mg.cat: "concatenate"
from minigrad.tensor import numpy_keywords

for _op in (sum, mean, max, min, prod, var, std, argmax, argmin, cumsum, logsumexp, squeeze,
            expand_dims, concatenate, stack):  # mg.sum(x, dim=1): one line naming axis=
    globals()[_op.__name__] = numpy_keywords(_op)

__all__ = [
    "Tensor", "tensor", "no_grad", "grad", "detect_anomaly", "save", "load",
    "add", "sub", "mul", "div", "neg", "pow", "rpow", "astype", "exp", "log", "sqrt", "tanh",
    "sigmoid", "abs", "relu", "sum", "mean", "max", "logsumexp", "matmul",
    "sign", "sin", "cos", "log1p", "expm1", "maximum", "minimum", "clip", "min", "prod", "var",
    "std", "argmax", "argmin", "cumsum", "erf", "outer", "tensordot", "einsum", "power",
    "reshape", "transpose", "swapaxes", "expand_dims", "squeeze", "broadcast_to",
    "concatenate", "stack", "split", "getitem", "scatter", "where", "masked_fill",
    "tril", "triu", "take_along_axis", "pad", "repeat", "tile",
    "catalogue", "functional", "init", "nn", "optim",
]
