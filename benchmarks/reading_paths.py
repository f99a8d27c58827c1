"""The five reading paths of the core and what each costs a reader, in lines.

    python -m benchmarks.reading_paths          # the README's "Reading order" table
    python -m benchmarks.reading_paths --write  # ... written into README.md and README.zh-CN.md

A path is what a learner reads to follow one idea from its top to the engine: whole files, or
named definitions in a file (a class, a method or a function, with its docstring and
decorators). ``tests/test_reading_budget.py`` fails when a path outgrows its budget, so the next
feature keeps the shape; README.md shows the counts this prints.
"""
from __future__ import annotations

import ast
import pathlib
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Path:
    concept: str
    parts: tuple       # (file, definition or None for the whole file), in reading order
    budget: int        # lines, at most
    max_files: int


PATHS = (
    Path("backward: record the graph, order it, call the VJPs, accumulate, free",
         (("minigrad/engine.py", None),), 120, 2),
    Path("one op and its VJP",
         (("minigrad/ops.py", "tanh"),), 12, 1),
    Path("… followed to the engine",
         (("minigrad/coerce.py", "as_tensor"), ("minigrad/engine.py", "Tensor._from_op")), 40, 2),
    Path("the attention read and ∂L/∂e_j = α_j g·(h_j − c)",
         (("attention/read.py", None),), 60, 2),
    Path("the GRU cell", (("models/recurrent.py", "GRUCell"),), 40, 1),
    Path("the LSTM cell", (("models/recurrent.py", "LSTMCell"),), 40, 1),
    Path("one Bahdanau training step: encoder, decoder step, attention, loss, backward, Adam",
         (("models/seq2seq.py", "Seq2Seq.loss"), ("models/seq2seq.py", "Seq2Seq.forward"),
          ("models/seq2seq.py", "decoder_inputs"), ("models/seq2seq.py", "masked_cross_entropy"),
          ("models/encoder.py", "BiGRUEncoder"), ("models/encoder.py", "annotate"),
          ("models/recurrent.py", "GRUCell"), ("models/decoders.py", "masked_mean"),
          ("models/decoders.py", "attention_context"),
          ("models/decoders.py", "Decoder.forward"), ("models/decoders.py", "BahdanauDecoder"),
          ("attention/scores.py", "AdditiveScore"), ("attention/scores.py", "additive"),
          ("attention/scores.py", "Attention.forward"), ("attention/read.py", None),
          ("minigrad/engine.py", None), ("minigrad/optim.py", "Adam.step")), 500, 8),
)


def definition_lines(file: str, name: str | None) -> int:
    """Lines of ``name`` (``Class``, ``Class.method`` or ``function``) in ``file``, or of the
    whole file for None."""
    text = (ROOT / file).read_text(encoding="utf-8")
    if name is None:
        return len(text.splitlines())
    body = ast.parse(text).body
    for part in name.split("."):
        node = next((n for n in body if isinstance(n, (ast.FunctionDef, ast.ClassDef))
                     and n.name == part), None)
        if node is None:
            raise LookupError(f"{file} has no definition {name!r} (part {part!r})")
        body = node.body
    start = min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.end_lineno - start + 1


def count(path: Path) -> tuple:
    """(lines, files) of ``path``; a definition named twice is counted once."""
    parts = dict.fromkeys(path.parts)
    return sum(definition_lines(f, n) for f, n in parts), len({f for f, _ in parts})


def table() -> str:
    """The README's table: concept | files | lines (budget)."""
    rows = ["| concept | files | lines |", "|---|---|---|"]
    for path in PATHS:
        lines, _ = count(path)
        where = ", ".join(f"`{f}`" + (f" (`{n}`)" if n else "") for f, n in dict.fromkeys(path.parts))
        rows.append(f"| {path.concept} | {where} | {lines} (budget {path.budget}) |")
    return "\n".join(rows)


def write(files=("README.md", "README.zh-CN.md")) -> None:
    """Put today's files and counts into each README's table, row by row (the first column,
    the concept, is each README's own words)."""
    rows = table().splitlines()[2:]
    for name in files:
        lines = (ROOT / name).read_text(encoding="utf-8").split("\n")
        start = next(i for i, line in enumerate(lines) if line.startswith("|") and "`minigrad/engine.py`" in line)
        for i, row in enumerate(rows):
            concept = lines[start + i].split(" | ", 1)[0]
            lines[start + i] = concept + " | " + row.split(" | ", 1)[1]
        (ROOT / name).write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    import sys
    write() if sys.argv[1:] == ["--write"] else print(table())
