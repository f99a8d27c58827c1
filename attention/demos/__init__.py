"""The sources' worked examples, run by ``python -m attention`` (one module per source).

``DEMOS`` maps each command-line name to a ``Demo``: (function, one-line description, whether
it trains a model). A demo function takes ``out_dir`` (None: no SVG) and returns a
``DemoResult``; one that trains a model also takes ``kernels``. ``run`` is the demo runner:
it is the one place that switches the kernels (``attention/kernels.py``) on, for the demos
that train. The graph drawings always show the composed core.
"""
from typing import Callable, NamedTuple

from attention.demos import (explore_004, graph_004, hard, hessian_004, hierarchical,
                             source_000, source_004, temperature, untrained)


class Demo(NamedTuple):
    fn: Callable
    about: str
    trains: bool = False  # trains a model: run() builds it with the kernels


def run(name: str, out_dir=None):
    """Run demo ``name``; a demo that trains a model trains it with the kernels switched on."""
    demo = DEMOS[name]
    return demo.fn(out_dir=out_dir, kernels=True) if demo.trains else demo.fn(out_dir=out_dir)


DEMOS = {
    "004-example": Demo(source_004.example,
        "source 004 §6: scores, weights and contexts for s = -1 and s = 1; the "
        "no-tanh ablation; weight curves over s in [-3, 3]"),
    "004-gradient": Demo(source_004.gradient,
        "source 004 §7: dL/de_j = α_j g·(h_j - c) beside finite differences"),
    "004-graph": Demo(graph_004.graph,
        "source 004 §6-§7 as a computation graph with dL/dnode on every node"),
    "004-explore": Demo(explore_004.explore_004,
        "source 004 §6-§7 as one HTML explorer page: the graph, its backward pass step by step, "
        "α per state and dL/de_j beside the formula"),
    "004-hessian": Demo(hessian_004.hessian,
        "source 004 §7, second order: the Hessian of L = g·c in the scores, derived "
        "and checked against a double backward"),
    "000-scaling": Demo(source_000.scaling,
        "source 000 §2.3/§4.2: std of q·k is √d; what softmax does with raw vs "
        "scaled scores"),
    "000-path-length": Demo(source_000.path_length,
        "source 000 §4.4: gradient norm from the first input to the last output, "
        "tanh RNN vs one attention read"),
    "000-alignment": Demo(untrained.alignment,
        "source 000 §4.3: the 6 × 6 alignment of an untrained model (near uniform) "
        "and a trained one (diagonal)", trains=True),
    "003-temperature": Demo(temperature.temperature,
        "source 003 §6: softmax(e / T) for T = 0.25 … 4 (max α, entropy), on the "
        "004 §6 example and a trained model; √d_k is a temperature", trains=True),
    "003-hierarchical": Demo(hierarchical.hierarchical,
        "source 003 §6: hierarchical attention (word level, then sentence level) trained on "
        "a small task; are the weights on the evidence?"),
    "004-hard": Demo(hard.hard,
        "source 004 §4: hard (argmax) vs soft read; the hard read's gradient wrt the "
        "scores is 0 almost everywhere", trains=True),
}
