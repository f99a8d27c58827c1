"""The sources' worked examples, run by ``python -m attention`` (one module per source).

``DEMOS`` maps each command-line name to (function, one-line description); a demo function
takes ``out_dir`` (None: no SVG) and returns a ``DemoResult``.
"""
from attention.demos import (graph_004, hard, hessian_004, source_000, source_004, temperature,
                             untrained)

DEMOS = {
    "004-example": (source_004.example,
                    "source 004 §6: scores, weights and contexts for s = -1 and s = 1; the "
                    "no-tanh ablation; weight curves over s in [-3, 3]"),
    "004-gradient": (source_004.gradient,
                     "source 004 §7: dL/de_j = α_j g·(h_j - c) beside finite differences"),
    "004-graph": (graph_004.graph,
                  "source 004 §6-§7 as a computation graph with dL/dnode on every node"),
    "004-hessian": (hessian_004.hessian,
                    "source 004 §7, second order: the Hessian of L = g·c in the scores, derived "
                    "and checked against a double backward"),
    "000-scaling": (source_000.scaling,
                    "source 000 §2.3/§4.2: std of q·k is √d; what softmax does with raw vs "
                    "scaled scores"),
    "000-path-length": (source_000.path_length,
                        "source 000 §4.4: gradient norm from the first input to the last output, "
                        "tanh RNN vs one attention read"),
    "000-alignment": (untrained.alignment,
                      "source 000 §4.3: the 6 × 6 alignment of an untrained model (near uniform) "
                      "and a trained one (diagonal)"),
    "003-temperature": (temperature.temperature,
                        "source 003 §6: softmax(e / T) for T = 0.25 … 4 (max α, entropy), on the "
                        "004 §6 example and a trained model; √d_k is a temperature"),
    "004-hard": (hard.hard,
                 "source 004 §4: hard (argmax) vs soft read; the hard read's gradient wrt the "
                 "scores is 0 almost everywhere"),
}
