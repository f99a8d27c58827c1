"""The exercises in their order, easy to hard, and finding one by name, file or number."""
from __future__ import annotations

import functools
from dataclasses import replace

from minigrad.exercises import (catalog_attention, catalog_basic, catalog_forward, catalog_second,
                                catalog_transformer)
from minigrad.exercises.catalog import Exercise


@functools.lru_cache(maxsize=None)
def all_exercises() -> tuple:
    """Every exercise, numbered: the backward passes easy to hard (1-16), then the forward
    passes easy to hard (17-20) and two measurements (21-22)."""
    exercises = (catalog_basic.EXERCISES + catalog_attention.EXERCISES
                 + catalog_transformer.EXERCISES + catalog_second.EXERCISES
                 + catalog_forward.EXERCISES)
    return tuple(replace(e, number=i) for i, e in enumerate(exercises, start=1))


def find(name: str) -> Exercise:
    """An exercise by name, by its file name (``05_matmul.py``) or by number (``5``)."""
    key = name.strip().removesuffix(".py")
    for e in all_exercises():
        if key in (e.name, e.file.removesuffix(".py"), str(e.number), f"{e.number:02d}"):
            return e
    names = ", ".join(e.name for e in all_exercises())
    raise KeyError(f"no exercise called {name!r}; the exercises are: {names}")
