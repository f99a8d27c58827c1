"""``python -m minigrad.viz [--out DIR] [--fmt svg|dot|mermaid|text]``: micrograd's single
neuron, o = tanh(x1·w1 + x2·w2 + b), with the value and gradient of every node.

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

_ = translator("minigrad")

EXTENSIONS = {"svg": "svg", "dot": "dot", "mermaid": "mmd", "text": "txt"}


def neuron(fmt: str = "text", path=None) -> str:
    """micrograd's neuron (its README's numbers: o = 0.7071, dL/dx1 = -1.5, dL/dw1 = 1)."""
    leaves = {k: mg.tensor(v, requires_grad=True) for k, v in
              dict(x1=2.0, x2=0.0, w1=-3.0, w2=1.0, b=6.8813735870195432).items()}
    x1, x2, w1, w2, b = leaves.values()
    with trace() as tr:  # keeps dL/d node for every node, not only the leaves
        x1w1, x2w2 = x1 * w1, x2 * w2
        n = x1w1 + x2w2 + b
        o = mg.tanh(n)
        o.backward()
    names = {**leaves, "x1*w1": x1w1, "x2*w2": x2w2, "n": n, "o": o}
    return draw_graph(o, fmt, path, trace=tr, names=names,
                      title=_("micrograd's neuron: o = tanh(x1·w1 + x2·w2 + b)"))


def main(argv=None) -> int:
    return run_main(_main, argv)  # any encoding; `| head` stops it quietly


def _main(argv=None) -> int:
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
