"""``ModelConfig``: everything needed to rebuild a ``Seq2Seq``, stored as JSON next to its
weights and checked when made, each error naming the field. How large a model a program agrees
to build is its own limit (the application caps the sizes of a config it reads from a file).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from attention.masking import check_temperature

from models.decoders import SCORES
from models.luong import CELLS, COMBINES, LUONG_SCORES
from models.transformer import POSITIONS
from models.transformer_layers import ACTIVATIONS

DECODERS = ("bahdanau", "luong", "plain", "transformer")
DTYPES = {"float32": np.float32, "float64": np.float64}
SIZES = ("src_vocab", "tgt_vocab", "embed", "hidden", "dec_hidden", "attn", "local_window",
         "layers", "heads", "d_model", "ff", "max_positions")
BOOL = ("true or false", lambda v: isinstance(v, bool))
KINDS = {"input_feeding": BOOL, "reset_after": BOOL,  # field -> (what it must be, test)
         **dict.fromkeys(SIZES, ("a positive int", lambda v: type(v) is int and v >= 1)),  # no bool
         "truncate": ("None or an int >= 0", lambda v: v is None or type(v) is int and v >= 0),
         "dropout": ("a number in [0, 1)", lambda v: isinstance(v, (int, float)) and 0 <= v < 1)}
RENAMED = {"window": "local_window"}  # old name -> name, so that saved configs load
ATTENTION = {"temperature": ("temperature", 1.0), "dropout": ("dropout", 0.0),
             "truncate": ("window", None)}  # field -> (``attention.Attention``'s option, default)


@dataclass
class ModelConfig:
    """``hidden``: the encoder's size per direction (annotations are 2·hidden wide);
    ``dec_hidden`` the decoder's; ``attn`` the width A of the additive and concat scores.

    Luong's decoder: ``input_feeding`` (off: source 003 §3.1's plain form), ``cell``, ``combine``
    ("concat" or "gate"), and ``local_window``, local attention's half-width D: it reads
    [p_t − D, p_t + D]. Global attention of the bahdanau and luong decoders (source 003 §6):
    ``temperature`` T, ``dropout`` p, and ``truncate`` W: weight 0 where |j − t| > W (None: the
    whole source). The Transformer (``decoder="transformer"``, with its own encoder) reads
    ``layers`` (per stack), ``heads``, ``d_model``, ``ff``, ``dropout``, ``activation``,
    ``positions`` and ``max_positions`` (the learned positions' table).
    """
    src_vocab: int
    tgt_vocab: int
    embed: int = 32
    hidden: int = 64
    dec_hidden: int = 64
    attn: int = 64
    decoder: str = "bahdanau"
    score: str = "additive"
    input_feeding: bool = False
    cell: str = "gru"
    local_window: int = 2
    reset_after: bool = True
    dtype: str = "float64"
    layers: int = 2
    heads: int = 4
    d_model: int = 64
    ff: int = 128
    dropout: float = 0.0
    activation: str = "relu"
    positions: str = "sinusoidal"
    max_positions: int = 128
    combine: str = "concat"
    temperature: float = 1.0
    truncate: int | None = None
    def __post_init__(self):
        scores = {"bahdanau": SCORES, "luong": LUONG_SCORES}.get(self.decoder,
                                                                 SCORES + LUONG_SCORES)
        choices = {"decoder": DECODERS, "score": scores, "cell": CELLS, "dtype": tuple(DTYPES),
                   "activation": tuple(ACTIVATIONS), "positions": POSITIONS,
                   "combine": COMBINES if self.decoder == "luong" else ("concat",)}  # Luong's gate
        rules = {**KINDS, **{name: (f"one of {c}", c.__contains__) for name, c in choices.items()}}
        for name, (kind, valid) in rules.items():
            if not valid(getattr(self, name)):
                raise ValueError(f"ModelConfig: {name} must be {kind}, got {getattr(self, name)!r}")
        check_temperature("ModelConfig", self.temperature)
        if self.d_model % self.heads:
            raise ValueError(f"ModelConfig: d_model {self.d_model} must be a multiple of heads "
                             f"{self.heads}")
        given = [name for name, (_, default) in ATTENTION.items() if getattr(self, name) != default
                 and not (name == "dropout" and self.decoder == "transformer")]  # its own dropout
        if given and (self.decoder in ("plain", "transformer") or self.score.startswith("local")):
            raise ValueError(f"ModelConfig: {', '.join(given)} apply to the global attention of "
                             f"bahdanau/luong, not {self.decoder!r} with {self.score!r}")

    def attention_options(self) -> dict:
        """The options of ``attention.Attention`` that differ from its defaults."""
        return {option: getattr(self, name) for name, (option, default) in ATTENTION.items()
                if getattr(self, name) != default}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        """A saved config; one saved before input feeding was off by default loads with it on."""
        if not isinstance(d, dict):
            raise ValueError(f"ModelConfig: expected a dict of fields, got {type(d).__name__}")
        d = {RENAMED.get(k, k): v for k, v in d.items()}
        unknown = sorted(set(d) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"ModelConfig: unknown field(s) {unknown}")
        return cls(**{"input_feeding": True, **d})
