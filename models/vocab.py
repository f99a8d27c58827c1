"""Special token ids, the character ``Vocab``, and padding a batch of ids.

Ids: PAD=0, BOS=1, EOS=2, UNK=3, then one id per alphabet character, in order. A source is
``x_1 .. x_{S-1}, EOS``, a target ``y_1 .. y_{T-1}, EOS``; the model prepends BOS itself.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")  # indexed by the ids above


@dataclass(unsafe_hash=True)  # equal, and hashed, by the alphabet
class Vocab:
    """Character vocabulary: ids 0-3 are the special tokens, then the alphabet in order."""

    alphabet: str
    PAD, BOS, EOS, UNK = PAD, BOS, EOS, UNK

    def __post_init__(self) -> None:
        alphabet = self.alphabet
        repeated = "".join(sorted({c for c in alphabet or "" if alphabet.count(c) > 1}))
        if not alphabet or repeated:
            raise ValueError(f"Vocab: the alphabet must be non-empty, each character once; got "
                             f"{alphabet!r}" + (f" (repeats {repeated!r})" if repeated else ""))
        self._itos = list(SPECIALS) + list(alphabet)
        self._stoi = {c: i + len(SPECIALS) for i, c in enumerate(alphabet)}

    def __len__(self) -> int:
        return len(self._itos)

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        """Characters to ids, then EOS. An unknown character becomes UNK with ONE warning naming
        them all (a typo in user input: flag it, survive it); empty text is refused."""
        if not text:
            raise ValueError("Vocab.encode: empty text; a sequence needs at least one character")
        unknown = sorted({c for c in text if c not in self._stoi})
        if unknown:
            warnings.warn(f"Vocab.encode: unknown character(s) {''.join(unknown)!r} in {text!r} "
                          "mapped to <unk>", stacklevel=2)
        ids = [self._stoi.get(c, UNK) for c in text]
        return ids + [EOS] if add_eos else ids

    def tokens(self, ids: Sequence[int]) -> list[str]:
        """One label per id, special tokens by name ("<eos>")."""
        bad = [int(i) for i in ids if not 0 <= int(i) < len(self._itos)]
        if bad:
            raise ValueError(f"Vocab.tokens: id {bad[0]} outside 0..{len(self._itos) - 1}")
        return [self._itos[int(i)] for i in ids]

    def decode(self, ids: Sequence[int], strip_special: bool = True) -> str:
        """Ids to text; with ``strip_special`` up to the first EOS and without special tokens."""
        toks = self.tokens(ids)
        end = toks.index(SPECIALS[EOS]) if strip_special and SPECIALS[EOS] in toks else len(toks)
        return "".join(t for t in toks[:end] if not strip_special or t not in SPECIALS)

    def to_dict(self) -> dict:
        return {"alphabet": self.alphabet, "specials": list(SPECIALS)}

    @classmethod
    def from_dict(cls, d: dict) -> Vocab:
        """Inverse of ``to_dict``; refuses anything else, e.g. other special tokens."""
        if not isinstance(d, dict) or not isinstance(d.get("alphabet"), str) or \
                d.get("specials", list(SPECIALS)) != list(SPECIALS):
            raise ValueError(f"Vocab.from_dict: expected {{'alphabet': str, 'specials': "
                             f"{list(SPECIALS)}}}, got {d!r:.80}")
        return cls(d["alphabet"])


def pad_batch(seqs: Sequence[Sequence[int]], pad: int = PAD) -> tuple[np.ndarray, np.ndarray]:
    """Right-pad to the longest: ids int64 (B, L) and mask bool (B, L), True = real token."""
    if len(seqs) == 0:
        raise ValueError("pad_batch: no sequences")
    ids = np.full((len(seqs), max(len(s) for s in seqs)), pad, dtype=np.int64)  # (B, L)
    mask = np.zeros(ids.shape, dtype=bool)                                      # (B, L)
    for b, s in enumerate(seqs):
        ids[b, : len(s)] = s
        mask[b, : len(s)] = True
    return ids, mask
