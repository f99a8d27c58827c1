"""``python -m minigrad.viz [--out DIR] [--fmt svg|dot|mermaid|text]``: micrograd's single
neuron, o = tanh(x1·w1 + x2·w2 + b), with the value and gradient of every node.
``python -m minigrad.viz explore [--example neuron|reused] [--out FILE.html]``: the same
neuron, or micrograd #64's ``a = 1; b = a + a; c = b + b``, as one HTML page to open from disk.

The other graph demos draw code from the layers above minigrad (which minigrad may not
import): ``python -m attention 004-graph`` (source 004's additive attention example) and
``python -m models graph`` (one GRU step, and the reference seq2seq loss collapsed).
"""
from __future__ import annotations

import argparse
import os
import sys

import minigrad as mg
from minigrad import i18n
from minigrad.draw.console import run_main
from minigrad.i18n import translator
from minigrad.viz import FORMATS, draw_graph, trace
from minigrad.viz.explore import explore

_ = translator("minigrad")

EXTENSIONS = {"svg": "svg", "dot": "dot", "mermaid": "mmd", "text": "txt"}


def neuron_graph() -> tuple:
    """micrograd's neuron (its README's numbers: o = 0.7071, dL/dx1 = -1.5, dL/dw1 = 1):
    root, trace, names, title; not yet backward."""
    leaves = {k: mg.tensor(v, requires_grad=True) for k, v in
              dict(x1=2.0, x2=0.0, w1=-3.0, w2=1.0, b=6.8813735870195432).items()}
    x1, x2, w1, w2, b = leaves.values()
    with trace() as tr:  # keeps dL/d node for every node, not only the leaves
        x1w1, x2w2 = x1 * w1, x2 * w2
        n = x1w1 + x2w2 + b
        o = mg.tanh(n)
    names = {**leaves, "x1*w1": x1w1, "x2*w2": x2w2, "n": n, "o": o}
    return o, tr, names, _("micrograd's neuron: o = tanh(x1·w1 + x2·w2 + b)")


def reused_graph() -> tuple:
    """micrograd #64: a = 1; b = a + a; c = b + b, so dc/da = 4 (the naive recursion gives 8)."""
    a = mg.tensor(1.0, requires_grad=True)
    with trace() as tr:
        b = a + a
        c = b + b
    return c, tr, {"a": a, "b": b, "c": c}, "a = 1; b = a + a; c = b + b"


def neuron(fmt: str = "text", path=None) -> str:
    o, tr, names, title = neuron_graph()
    o.backward()
    return draw_graph(o, fmt, path, trace=tr, names=names, title=title)


def _explore(argv) -> int:
    p = argparse.ArgumentParser(prog="python -m minigrad.viz explore",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--example", choices=("neuron", "reused"), default="neuron")
    p.add_argument("--out", default="explore.html", help="the page to write (default: %(default)s)")
    i18n.add_argument(p)
    args = p.parse_args(argv)
    i18n.apply(args)
    root, tr, names, title = (neuron_graph if args.example == "neuron" else reused_graph)()
    try:
        explore(root, tr, names, title).save(args.out)
    except OSError as e:  # save()'s own refusal names its command; the system's errors do not
        print(f"python -m minigrad.viz {e}" if e.strerror is None else
              f"python -m minigrad.viz explore: cannot write {args.out}: {e.strerror}",
              file=sys.stderr)
        return 1
    print(_("wrote {path}").format(path=args.out))
    return 0


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["explore"]:
        return _explore(argv[1:])
    p = argparse.ArgumentParser(prog="python -m minigrad.viz",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--fmt", choices=sorted(FORMATS), default="text")
    p.add_argument("--out", help="folder to write neuron.<ext> into (default: print only)")
    i18n.add_argument(p)
    args = p.parse_args(argv)
    i18n.apply(args)
    path = None
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, f"neuron.{EXTENSIONS[args.fmt]}")
    text = neuron(args.fmt, path)
    print(text if args.fmt == "text" or path is None else _("wrote {path}").format(path=path))
    print(_("more graphs: python -m attention 004-graph, python -m models graph"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
