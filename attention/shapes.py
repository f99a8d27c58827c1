"""How an error message names a shape: ``(B=4, S=7, 8)`` rather than ``(4, 7, 8)``.

Shape letters: B batch, T queries (target length), S keys (source length), h heads.
"""
from __future__ import annotations


def shape_str(shape, letters: str = "") -> str:
    """``(4, 7, 8)`` with letters "BS" -> ``"(B=4, S=7, 8)"``: names the leading dimensions."""
    parts = [f"{l}={n}" if i < len(letters) else str(n)
             for i, (l, n) in enumerate(zip(letters.ljust(len(shape)), shape))]
    return "(" + ", ".join(parts) + ")"


def scores_letters(ndim: int) -> str:
    """Letters of a scores array: "BS", "BTS", "BhTS"."""
    return {2: "BS", 3: "BTS", 4: "BhTS"}.get(ndim, "")
