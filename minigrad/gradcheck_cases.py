"""The op table, shipped once, and ``python -m minigrad.gradcheck [--order 2]``, which checks
every row once (gradcheck) or twice (gradgradcheck) differentiated, kept apart from
``gradcheck.py``'s logic.

A row is ``Case(name, fn, ref, domain, example)``: ``fn(*tensors, **params)`` is the minigrad op
(or a small composite of them), ``ref(*arrays, **params)`` NumPy's answer (None: ``fn`` itself
on arrays), ``domain`` the values of each tensor input (one name for all, or one per input, a
key of ``DOMAINS``), and ``example`` one instance, ``(input shapes, params)``: the command
checks it with values drawn from a generator. The tests read the same rows: ``test_ops.py``
adds a Hypothesis draw of shapes and params per row, ``test_torch_parity.py`` PyTorch's op.

Domains keep values away from kinks: ``nonzero`` (relu, a divisor) stays ≥ 0.25 from 0,
``positive`` (log, sqrt, fractional powers) ≥ 0.5, ``distinct`` (max) has no ties and gaps of
≥ 0.25, and ``eighths`` sits between the quarters of ``distinct``, so two inputs of
maximum/minimum never tie.
"""
from __future__ import annotations

import argparse
import math
from typing import Callable, NamedTuple

import numpy as np

import minigrad as mg
from minigrad import functional as F, i18n, nn_ops
from minigrad.draw.common import columns, pad
from minigrad.i18n import translator

_ = translator("minigrad")


class Case(NamedTuple):
    name: str
    fn: Callable
    ref: Callable | None
    domain: str | tuple  # one per tensor input, or one for all
    example: tuple       # (list of input shapes, dict of params)


DOMAINS = {  # name -> (rng, shape) -> float64 values
    "real": lambda rng, s: rng.uniform(-3, 3, s),
    "positive": lambda rng, s: rng.uniform(0.5, 3, s),
    "nonzero": lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.25, 3, s),
    "distinct": lambda rng, s: rng.permutation(81)[:int(np.prod(s))].reshape(s) / 4 - 10,
    "probability": lambda rng, s: rng.uniform(0.05, 0.95, s),
    "eighths": lambda rng, s: rng.integers(-40, 41, s) / 4 + 1 / 8,
    "above -1": lambda rng, s: rng.uniform(-0.75, 3, s),  # log1p
}


# ---- NumPy references ---------------------------------------------------------------------------

def logsumexp_ref(x, axis, keepdims):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))  # |x| ≤ 3: no overflow


def softmax_ref(x, axis, mask):
    keep = np.ones(x.shape, bool) if mask is None else np.broadcast_to(mask, x.shape)
    e = np.where(keep, np.exp(x), 0.0)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def log_softmax_ref(x, axis, mask):
    keep = np.ones(x.shape, bool) if mask is None else np.broadcast_to(mask, x.shape)
    s = np.where(keep, np.exp(x), 0.0).sum(axis=axis, keepdims=True)
    return np.where(keep, x - np.log(np.where(s > 0, s, 1.0)), 0.0)


def cross_entropy_ref(x, targets, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    logp = x - np.log(np.exp(x).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(axis=-1)
    keep = np.ones(targets.shape, bool) if ignore_index is None else targets != ignore_index
    loss = np.where(keep, loss, 0.0)
    return {"none": loss, "sum": loss.sum(), "mean": loss.sum() / max(keep.sum(), 1)}[reduction]


def nll_ref(x, targets, ignore_index=-100, reduction="mean"):
    return cross_entropy_ref(x - np.log(np.exp(x).sum(axis=-1, keepdims=True)), targets,
                             ignore_index, reduction)


def bce_ref(p, targets, reduction):
    loss = -(targets * np.log(p) + (1 - targets) * np.log(1 - p))
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def scatter_ref(values, index, shape):
    out = np.zeros(shape)
    np.add.at(out, index, values)
    return out


def pieces(x, sections, axis, split, cat):
    """The split pieces weighted 1, 2, 3, ... and joined again, so a misrouted gradient shows."""
    return cat([p * (i + 1) for i, p in enumerate(split(x, sections, axis=axis))], axis=axis)


erf_ref = np.vectorize(math.erf)
MASK = np.array([[0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 0, 1]], bool)  # row 0: nothing kept
TARGETS = np.array([0, 3, 1, 2])
IDS = np.array([[0, 4, 2], [2, 2, 1]])
INDEX = {"slices": (slice(1, None), slice(None, None, 2)), "ints": np.array([0, 2, 0, 0]),
         "mixed": (1, [0, 2, 2]), "bool": np.array([True, False, True])}
X = [(3, 4)]  # the default example: one input of shape (3, 4)

CASES = [
    Case("add", mg.add, np.add, "real", ([(3, 4), (4,)], {})),
    Case("sub", mg.sub, np.subtract, "real", ([(2, 1, 3), (4, 1)], {})),
    Case("mul", mg.mul, np.multiply, "real", ([(3, 1), (1, 4)], {})),
    Case("div", mg.div, np.divide, ("real", "nonzero"), ([(3, 4), (3, 4)], {})),
    Case("neg", mg.neg, np.negative, "real", (X, {})),
    Case("operators", lambda a, b: (a + b) * a - a / b - (-b) ** 2, None, ("real", "nonzero"),
         ([(3, 4), (4,)], {})),
    Case("scalars on either side",
         lambda a: (2.0 + a) - 1.5 * (3.0 - a) + 2.0 / a + 2.0 ** a + np.float64(0.5) * a / 4.0
         - a * np.float64(2) + a ** 2.0 - 1, None, "nonzero", (X, {})),
    Case("pow int", lambda x, p: mg.pow(x, p), lambda x, p: x ** p, "real", (X, {"p": 3})),
    Case("pow real", lambda x, p: x ** p, lambda x, p: x ** p, "positive", (X, {"p": -1.5})),
    Case("rpow", lambda x: 2.5 ** x, lambda x: 2.5 ** x, "real", (X, {})),
    Case("power", mg.power, np.power, ("positive", "real"), ([(3, 4), (4,)], {})),
    Case("array ** tensor", lambda y: np.array([0.5, 2.0]) ** y,
         lambda y: np.array([0.5, 2.0]) ** y, "real", ([(3, 2)], {})),
    Case("exp", mg.exp, np.exp, "real", (X, {})),
    Case("log", mg.log, np.log, "positive", (X, {})),
    Case("sqrt", mg.sqrt, np.sqrt, "positive", (X, {})),
    Case("tanh", mg.tanh, np.tanh, "real", (X, {})),
    Case("sigmoid", mg.sigmoid, lambda x: 1 / (1 + np.exp(-x)), "real", (X, {})),
    Case("relu", mg.relu, lambda x: np.maximum(x, 0), "nonzero", (X, {})),
    Case("abs", mg.abs, np.abs, "nonzero", (X, {})),
    Case("abs(), +, flatten", lambda x: abs(+x).flatten() + x.ravel(),
         lambda x: np.abs(x).ravel() + x.ravel(), "nonzero", (X, {})),
    Case("sum", mg.sum, lambda x, axis, keepdims: np.sum(x, axis=axis, keepdims=keepdims), "real",
         ([(2, 3, 4)], {"axis": (0, 2), "keepdims": False})),
    Case("mean", mg.mean, lambda x, axis, keepdims: np.mean(x, axis=axis, keepdims=keepdims),
         "real", ([(2, 3, 4)], {"axis": 1, "keepdims": True})),
    Case("logsumexp", mg.logsumexp, logsumexp_ref, "real",
         ([(2, 3, 4)], {"axis": -1, "keepdims": False})),
    Case("matmul", mg.matmul, np.matmul, "real", ([(2, 1, 3, 4), (3, 4, 2)], {})),
    Case("matmul 1-D @ batched", mg.matmul, np.matmul, "real", ([(3,), (2, 3, 4)], {})),
    Case("@", lambda a, b: a @ b, np.matmul, "real", ([(2, 3), (3,)], {})),
    Case("reshape", mg.reshape, np.reshape, "real", ([(2, 3, 4)], {"shape": (4, -1)})),
    Case("transpose", mg.transpose, np.transpose, "real", ([(2, 3, 4)], {"axes": (1, 2, 0)})),
    Case(".T", lambda x: x.T, lambda x: x.T, "real", ([(2, 3, 4)], {})),
    Case("swapaxes", mg.swapaxes, np.swapaxes, "real", ([(2, 3, 4)], {"axis1": 0, "axis2": 2})),
    Case("expand_dims", mg.expand_dims, np.expand_dims, "real", ([(2, 3)], {"axis": 1})),
    Case("squeeze", mg.squeeze, np.squeeze, "real", ([(3, 1, 2)], {"axis": 1})),
    Case("broadcast_to", mg.broadcast_to, np.broadcast_to, "real",
         ([(3, 1)], {"shape": (2, 3, 4)})),
    Case("concatenate", lambda *xs, axis: mg.concatenate(xs, axis),
         lambda *xs, axis: np.concatenate(xs, axis), "real", ([(2, 3), (2, 1)], {"axis": 1})),
    Case("stack", lambda *xs, axis: mg.stack(xs, axis), lambda *xs, axis: np.stack(xs, axis),
         "real", ([(2, 3), (2, 3)], {"axis": -1})),
    Case("split", lambda x, sections, axis: pieces(x, sections, axis, mg.split, mg.concatenate),
         lambda x, sections, axis: pieces(x, sections, axis, np.split, np.concatenate),
         "real", ([(2, 5)], {"sections": [1, 3], "axis": 1})),
    *[Case(f"getitem {kind}", lambda x, index: x[index], lambda x, index: x[index], "real",
           ([(3, 4)], {"index": index})) for kind, index in INDEX.items()],
    *[Case(f"scatter {kind}", mg.scatter, scatter_ref, "real",
           ([np.zeros((3, 4))[index].shape], {"index": index, "shape": (3, 4)}))
      for kind, index in INDEX.items()],
    Case("where", lambda a, b, condition: mg.where(condition, a, b),
         lambda a, b, condition: np.where(condition, a, b), "real",
         ([(3, 4), (4,)], {"condition": MASK})),
    Case("masked_fill", mg.masked_fill, lambda x, mask, value: np.where(mask, value, x), "real",
         (X, {"mask": ~MASK, "value": -1e9})),
    Case("softmax", F.softmax, softmax_ref, "real", (X, {"axis": -1, "mask": None})),
    Case("softmax mask", F.softmax, softmax_ref, "real", (X, {"axis": -1, "mask": MASK})),
    Case("log_softmax", F.log_softmax, log_softmax_ref, "real", (X, {"axis": 0, "mask": None})),
    Case("log_softmax mask", F.log_softmax, log_softmax_ref, "real",
         (X, {"axis": -1, "mask": MASK})),
    Case("sparsemax", lambda x: F.sparsemax(x) ** 2, None, "real", (X, {})),
    Case("cross_entropy", F.cross_entropy, cross_entropy_ref, "real",
         ([(4, 5)], {"targets": TARGETS, "ignore_index": 2, "reduction": "mean"})),
    Case("cross_entropy none, smoothed", F.cross_entropy, cross_entropy_ref, "real",
         ([(4, 5)], {"targets": TARGETS, "reduction": "none", "label_smoothing": 0.1})),
    Case("linear", F.linear, lambda x, w, b: x @ w.T + b, "real", ([(2, 3, 4), (5, 4), (5,)], {})),
    Case("linear no bias", F.linear, lambda x, w: x @ w.T, "real", ([(2, 4), (5, 4)], {})),
    Case("embedding", lambda w, ids: F.embedding(ids, w), lambda w, ids: w[ids], "real",
         ([(5, 3)], {"ids": IDS})),
    Case("dropout", lambda x: F.dropout(x, 0.5, rng=np.random.default_rng(1)), None, "real",
         (X, {})),
    Case("elu", F.elu, lambda x, alpha: np.where(x > 0, x, alpha * (np.exp(x) - 1)), "nonzero",
         (X, {"alpha": 0.5})),
    Case("layer_norm", nn_ops.layer_norm, None, "real", ([(2, 4), (4,), (4,)], {})),
    Case("gelu tanh", nn_ops.gelu,
         lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3))), "real",
         (X, {})),
    Case("gelu", F.gelu, lambda x: x * 0.5 * (1 + erf_ref(x / np.sqrt(2))), "real", (X, {})),
    # ---- the catalogue ----
    Case("sign", lambda x: mg.sign(x) * x, lambda x: np.sign(x) * x, "nonzero", (X, {})),
    Case("sin", mg.sin, np.sin, "real", (X, {})),
    Case("cos", mg.cos, np.cos, "real", (X, {})),
    Case("log1p", mg.log1p, np.log1p, "above -1", (X, {})),
    Case("expm1", mg.expm1, np.expm1, "real", (X, {})),
    Case("erf", mg.erf, erf_ref, "real", (X, {})),
    Case("maximum", mg.maximum, np.maximum, ("distinct", "eighths"), ([(3, 4), (4,)], {})),
    Case("minimum", mg.minimum, np.minimum, ("distinct", "eighths"), ([(3, 4), (4,)], {})),
    Case("clip", mg.clip, lambda x, lo, hi: np.clip(x, lo, hi), "distinct",
         (X, {"lo": -1.1, "hi": 1.3})),
    Case(".sign .sin .cos and others",
         lambda x: x.sign() + x.sin() * x.cos() + (x * x).log1p() + x.expm1() + x.clip(-1.1, 1.3),
         lambda x: np.sign(x) + np.sin(x) * np.cos(x) + np.log1p(x * x) + np.expm1(x)
         + np.clip(x, -1.1, 1.3), "eighths", (X, {})),
    Case("max", mg.max, lambda x, axis, keepdims: np.max(x, axis=axis, keepdims=keepdims),
         "distinct", ([(2, 3, 4)], {"axis": (0, 2), "keepdims": False})),
    Case("min", mg.min, lambda x, axis, keepdims: np.min(x, axis=axis, keepdims=keepdims),
         "distinct", ([(2, 3, 4)], {"axis": 1, "keepdims": True})),
    Case("prod", mg.prod, lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims),
         "real", ([(2, 3, 4)], {"axis": 1, "keepdims": False})),
    Case("prod with zeros", lambda x, axis, keepdims: mg.prod(mg.relu(x), axis, keepdims),
         lambda x, axis, keepdims: np.prod(np.maximum(x, 0), axis=axis, keepdims=keepdims),
         "nonzero", (X, {"axis": None, "keepdims": False})),
    Case("var", mg.var, lambda x, axis, keepdims, ddof: np.var(x, axis=axis, keepdims=keepdims,
                                                               ddof=ddof), "real",
         (X, {"axis": 1, "keepdims": False, "ddof": 1})),
    Case("std", mg.std, lambda x, axis, keepdims, ddof: np.std(x, axis=axis, keepdims=keepdims,
                                                               ddof=ddof), "distinct",
         (X, {"axis": 0, "keepdims": False, "ddof": 0})),
    Case("cumsum", mg.cumsum, np.cumsum, "real", (X, {"axis": 1})),
    Case(".min .prod .var .std .cumsum", lambda x: x.min() + x.prod() + x.var() + x.std(ddof=0)
         + x.cumsum().sum(), lambda x: x.min() + x.prod() + x.var() + x.std() + x.cumsum().sum(),
         "distinct", ([(2, 3)], {})),
    Case("outer", mg.outer, np.outer, "real", ([(3,), (2, 2)], {})),
    Case("tensordot", mg.tensordot, np.tensordot, "real", ([(2, 3), (3, 4)], {"axes": 1})),
    Case("einsum", lambda *xs, spec: mg.einsum(spec, *xs), lambda *xs, spec: np.einsum(spec, *xs),
         "real", ([(2, 3, 4), (2, 4, 2)], {"spec": "bij,bjk->bik"})),
    Case("tril", mg.tril, np.tril, "real", (X, {"k": 0})),
    Case("triu", mg.triu, np.triu, "real", ([(2, 3, 4)], {"k": 1})),
    Case("take_along_axis", mg.take_along_axis, np.take_along_axis, "real",
         ([(2, 4)], {"indices": IDS[:, :2] % 4, "axis": 1})),
    Case("pad", mg.pad, np.pad, "real",
         ([(2, 3)], {"pad_width": ((1, 0), (0, 2)), "constant_values": 0.0})),
    Case("repeat", mg.repeat, np.repeat, "real", ([(2, 3)], {"repeats": 2, "axis": 0})),
    Case("tile", mg.tile, np.tile, "real", ([(2, 3)], {"reps": (2, 1)})),
    Case("softplus", F.softplus, lambda x: np.log(1 + np.exp(x)), "real", (X, {})),
    Case("leaky_relu", F.leaky_relu,
         lambda x, negative_slope: np.where(x > 0, x, negative_slope * x), "nonzero",
         (X, {"negative_slope": 0.2})),
    Case("silu", F.silu, lambda x: x / (1 + np.exp(-x)), "real", (X, {})),
    Case("nll_loss of log_softmax", lambda x, **kw: F.nll_loss(F.log_softmax(x), **kw), nll_ref,
         "real", ([(4, 5)], {"targets": TARGETS, "ignore_index": 1, "reduction": "sum"})),
    Case("binary_cross_entropy", F.binary_cross_entropy, bce_ref, "probability",
         ([(4,)], {"targets": TARGETS / 3.0, "reduction": "mean"})),
    Case("bce with logits", F.binary_cross_entropy_with_logits,
         lambda z, targets, reduction: bce_ref(1 / (1 + np.exp(-z)), targets, reduction), "real",
         ([(4,)], {"targets": TARGETS / 3.0, "reduction": "none"})),
]


def inputs(case: Case, rng: np.random.Generator) -> list:
    """Values for ``case``'s example shapes, each drawn from its domain."""
    shapes = case.example[0]
    domains = [case.domain] * len(shapes) if isinstance(case.domain, str) else case.domain
    return [DOMAINS[d](rng, s) for s, d in zip(shapes, domains)]


def cases(rng: np.random.Generator) -> list:
    """``(name, fn, inputs)`` for every row, its example's values drawn from ``rng``."""
    return [(c.name, lambda *xs, c=c: c.fn(*xs, **c.example[1]), inputs(c, rng)) for c in CASES]


def main(argv=None) -> int:
    """Check every op (seed 0) and print a table; the exit status is 1 if any fails."""
    from minigrad.draw.console import run_main
    return run_main(_print_table, argv)  # any encoding; `| head` stops it quietly


def _print_table(argv=None) -> int:
    from minigrad.gradcheck import _check, first_derivative
    parser = argparse.ArgumentParser(prog="python -m minigrad.gradcheck", description=main.__doc__)
    parser.add_argument("--order", type=int, choices=(1, 2), default=1,
                        help="1: gradients (gradcheck); 2: second derivatives (gradgradcheck)")
    i18n.add_argument(parser)
    args = parser.parse_args(argv)
    i18n.apply(args)
    order = args.order
    rng = np.random.default_rng(0)
    err_abs, err_rel = _("max abs err"), _("max rel err")
    wa, wr = max(11, columns(err_abs)), max(11, columns(err_rel))  # a translation may be wider
    header = (f"{pad(_('op'), 28)} {pad(_('shapes'), 26)} {pad(err_abs, wa, True)} "
              f"{pad(err_rel, wr, True)}  {_('ok')}")
    print(header, "-" * columns(header), sep="\n")
    table, failed = cases(rng), 0
    for name, fn, inputs in table:
        shapes = " ".join(str(np.shape(x)).replace(" ", "") for x in inputs)
        try:
            f = fn if order == 1 else first_derivative(fn, inputs, rng)
            results = _check(f, inputs, 1e-6, 1e-5, 1e-3, False, rng,
                             "gradcheck" if order == 1 else "gradgradcheck")
            max_abs = max(r[1] for r in results)
            max_rel = max(r[2] for r in results)
            ok = all(r[3] is None for r in results)
            row = f"{max_abs:>{wa}.1e} {max_rel:>{wr}.1e}  {_('ok') if ok else _('FAIL')}"
        except Exception as e:  # an op that raises is a failure too: show why
            ok, row = False, (f"{pad(_('error'), wa, True)} {'':>{wr}}  {_('FAIL')}  "
                              f"{type(e).__name__}: {e}")
        failed += not ok
        print(f"{name:<28} {shapes:<26} {row}")
    if order == 1:
        done = _("{failed} of {total} ops failed") if failed else _("all {total} ops ok")
    else:
        done = (_("{failed} of {total} ops failed (second derivatives)") if failed else
                _("all {total} ops ok (second derivatives)"))
    print("\n" + done.format(failed=failed, total=len(table)))
    return 1 if failed else 0
