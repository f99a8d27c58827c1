"""``python -m minigrad.gradcheck [--order 2]``: every primitive and functional op, at shapes
drawn from a generator, checked once (gradcheck) or twice (gradgradcheck) differentiated.
The table and its command, kept apart from ``gradcheck.py``'s logic."""
from __future__ import annotations

import argparse

import numpy as np

import minigrad as mg
from minigrad import functional as F, i18n, nn_ops
from minigrad.draw.common import columns, pad
from minigrad.i18n import translator

_ = translator("minigrad")


def cases(rng: np.random.Generator) -> list:
    """``(name, fn, inputs)`` for every primitive and functional op, shapes drawn from ``rng``.
    Values keep away from kinks: relu and div away from 0, max without ties, log/sqrt > 0."""

    def shape(lo=0, hi=3):                 # lo..hi axes of length 1..4
        return tuple(int(n) for n in rng.integers(1, 5, size=rng.integers(lo, hi + 1)))

    def pair():                            # two shapes that broadcast together
        s = shape(1)
        t = tuple(1 if rng.random() < 0.3 else n for n in s[rng.integers(0, len(s) + 1):])
        return (s, t) if rng.random() < 0.5 else (t, s)

    def axis(s):                           # None, or a random non-empty subset of the axes
        picks = [a for a in range(len(s)) if rng.random() < 0.5]
        return tuple(picks) if picks else None

    normal = rng.standard_normal
    def positive(s): return rng.uniform(0.5, 2.0, s)
    def nonzero(s): return rng.choice([-1.0, 1.0], s) * rng.uniform(0.3, 2.0, s)
    def distinct(s): return rng.permutation(int(np.prod(s))).reshape(s) / 4 + rng.uniform(0, .1, s)

    (a, b), (c, d), m = pair(), pair(), shape(1)
    s3, n = (2, 3, 4), shape(1)
    ax, ax2 = axis(m), axis(n)
    ids = rng.integers(0, 5, size=(2, 3))
    mask = np.array([[0, 0, 0, 0], [1, 0, 1, 1], [1, 1, 0, 1]], bool)  # row 0: nothing kept
    targets = np.array([0, 3, 1, 2])
    return [
        ("add", mg.add, [normal(a), normal(b)]),
        ("sub", mg.sub, [normal(c), normal(d)]),
        ("mul", mg.mul, [normal(a), normal(b)]),
        ("div", mg.div, [normal(c), nonzero(d)]),
        ("neg", mg.neg, [normal(m)]),
        ("pow 3", lambda x: mg.pow(x, 3), [normal(m)]),
        ("pow -1.5", lambda x: mg.pow(x, -1.5), [positive(m)]),
        ("rpow 2.5 ** x", lambda x: 2.5 ** x, [normal(m)]),
        ("exp", mg.exp, [normal(m)]),
        ("log", mg.log, [positive(m)]),
        ("sqrt", mg.sqrt, [positive(m)]),
        ("tanh", mg.tanh, [normal(m)]),
        ("sigmoid", mg.sigmoid, [3 * normal(m)]),
        ("relu", mg.relu, [nonzero(m)]),
        (f"sum axis={ax}", lambda x: mg.sum(x, ax), [normal(m)]),
        (f"mean axis={ax2} keepdims", lambda x: mg.mean(x, ax2, keepdims=True), [normal(n)]),
        (f"max axis={ax}", lambda x: mg.max(x, ax), [distinct(m)]),
        (f"logsumexp axis={ax2}", lambda x: mg.logsumexp(x, ax2), [normal(n)]),
        ("matmul 1-D @ 1-D", mg.matmul, [normal(4), normal(4)]),
        ("matmul 2-D @ 2-D", mg.matmul, [normal((2, 3)), normal((3, 4))]),
        ("matmul batched", mg.matmul, [normal((2, 1, 3, 4)), normal((3, 4, 2))]),
        ("matmul 1-D @ batched", mg.matmul, [normal(3), normal((2, 3, 4))]),
        ("reshape", lambda x: mg.reshape(x, (4, -1)), [normal(s3)]),
        ("transpose (1, 2, 0)", lambda x: mg.transpose(x, (1, 2, 0)), [normal(s3)]),
        ("swapaxes 0 2", lambda x: mg.swapaxes(x, 0, 2), [normal(s3)]),
        ("expand_dims 1", lambda x: mg.expand_dims(x, 1), [normal(s3)]),
        ("squeeze", lambda x: mg.squeeze(x, 1), [normal((3, 1, 2))]),
        ("broadcast_to", lambda x: mg.broadcast_to(x, (2, 3, 4)), [normal((3, 1))]),
        ("concatenate axis=1", lambda x, y: mg.concatenate([x, y], axis=1),
         [normal((2, 3)), normal((2, 1))]),
        ("stack axis=-1", lambda x, y: mg.stack([x, y], axis=-1), [normal((2, 3)), normal((2, 3))]),
        ("split", lambda x: mg.split(x, [1, 3], axis=1)[1] * mg.split(x, [1, 3], axis=1)[2].sum(),
         [normal((2, 5))]),
        ("getitem slices", lambda x: x[1:, ::2], [normal((3, 4))]),
        ("getitem repeated ints", lambda x: x[np.array([0, 2, 0, 0])], [normal((3, 2))]),
        ("where", lambda x, y: mg.where(mask, x, y), [normal((3, 4)), normal(4)]),
        ("masked_fill", lambda x: mg.masked_fill(x, ~mask, -1e9), [normal((3, 4))]),
        ("softmax", F.softmax, [normal((3, 4))]),
        ("softmax mask", lambda x: F.softmax(x, mask=mask), [normal((3, 4))]),
        ("log_softmax", lambda x: F.log_softmax(x, axis=0), [normal((3, 4))]),
        ("log_softmax mask", lambda x: F.log_softmax(x, mask=mask), [normal((3, 4))]),
        ("sparsemax", lambda x: F.sparsemax(x) ** 2, [normal((3, 4))]),
        ("cross_entropy", lambda x, t: F.cross_entropy(x, t, ignore_index=2), [normal((4, 5)), targets]),
        ("linear", F.linear, [normal((2, 3, 4)), normal((5, 4)), normal(5)]),
        ("embedding", lambda w: F.embedding(ids, w), [normal((5, 3))]),
        ("dropout", lambda x: F.dropout(x, 0.5, rng=np.random.default_rng(1)), [normal((3, 4))]),
        ("abs", mg.abs, [nonzero(m)]),
        ("sign * x", lambda x: mg.sign(x) * x, [nonzero(m)]),
        ("sin", mg.sin, [normal(m)]),
        ("cos", mg.cos, [normal(m)]),
        ("log1p", mg.log1p, [positive(m)]),
        ("expm1", mg.expm1, [normal(m)]),
        ("erf", mg.erf, [normal(m)]),
        ("maximum", mg.maximum, [distinct((3, 4)), distinct(4) + 0.05]),
        ("minimum", mg.minimum, [distinct((3, 4)), distinct(4) + 0.05]),
        ("clip -0.5 0.5", lambda x: mg.clip(x, -0.5, 0.5), [distinct((3, 4)) - 1.55]),
        (f"min axis={ax}", lambda x: mg.min(x, ax), [distinct(m)]),
        (f"prod axis={ax}", lambda x: mg.prod(x, ax), [nonzero(m)]),
        (f"var axis={ax2} ddof=1", lambda x: mg.var(x, ax2, ddof=1), [normal((3, 4))]),
        ("std axis=0", lambda x: mg.std(x, 0), [normal((3, 4))]),
        ("cumsum axis=1", lambda x: mg.cumsum(x, 1), [normal((3, 4))]),
        ("power x ** y", mg.power, [positive((3, 4)), normal(4)]),
        ("outer", mg.outer, [normal(3), normal(4)]),
        ("tensordot axes=1", lambda x, y: mg.tensordot(x, y, 1), [normal((2, 3)), normal((3, 4))]),
        ("einsum bij,bjk->bik", lambda x, y: mg.einsum("bij,bjk->bik", x, y),
         [normal((2, 3, 4)), normal((2, 4, 2))]),
        ("tril", mg.tril, [normal((3, 4))]),
        ("triu 1", lambda x: mg.triu(x, 1), [normal((3, 4))]),
        ("take_along_axis", lambda x: mg.take_along_axis(x, ids[:, :2] % 4, axis=1),
         [normal((2, 4))]),
        ("pad", lambda x: mg.pad(x, ((1, 0), (0, 2))), [normal((2, 3))]),
        ("repeat 2 axis=0", lambda x: mg.repeat(x, 2, axis=0), [normal((2, 3))]),
        ("tile (2, 1)", lambda x: mg.tile(x, (2, 1)), [normal((2, 3))]),
        ("softplus", F.softplus, [normal(m)]),
        ("leaky_relu", F.leaky_relu, [nonzero(m)]),
        ("elu", F.elu, [nonzero(m)]),
        ("silu", F.silu, [normal(m)]),
        ("gelu", F.gelu, [normal(m)]),
        ("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), [normal(m)]),
        ("layer_norm", nn_ops.layer_norm, [normal((2, 4)), normal(4), normal(4)]),
        ("nll_loss", lambda x: F.nll_loss(F.log_softmax(x), targets), [normal((4, 5))]),
        ("binary_cross_entropy", lambda p: F.binary_cross_entropy(p, targets / 3.0),
         [rng.uniform(0.1, 0.9, 4)]),
        ("bce with logits", lambda x: F.binary_cross_entropy_with_logits(x, targets / 3.0),
         [normal(4)]),
        ("cross_entropy smoothing", lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1),
         [normal((4, 5)), targets]),
        ("cross_entropy none", lambda x, t: F.cross_entropy(x, t, reduction="none"),
         [normal((4, 5)), targets]),
    ]


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
