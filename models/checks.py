"""A setting chosen by name, checked where a layer or the config takes it."""
from __future__ import annotations


def check_choice(who: str, name: str, value, choices) -> None:
    """A setting chosen by name: ``value`` one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{who}: {name} must be one of {choices}, got {value!r}")
