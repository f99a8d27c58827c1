"""``ModelConfig``: everything needed to rebuild a ``Seq2Seq`` (stored as JSON next to its
weights), checked field by field when it is made: each field's type and name, in one line
naming the field. How large a model a program agrees to build is that program's own limit
(the application caps the sizes of a config it reads from a file).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from attention.masking import check_temperature

from models.decoders import SCORES
from models.luong import COMBINES, LUONG_SCORES
from models.transformer import POSITIONS
from models.transformer_layers import ACTIVATIONS

DECODERS = ("bahdanau", "luong", "plain", "transformer")
DTYPES = {"float32": np.float32, "float64": np.float64}
CELLS = ("gru", "lstm")
SIZES = ("src_vocab", "tgt_vocab", "embed", "hidden", "dec_hidden", "attn", "window", "layers",
         "heads", "d_model", "ff", "max_positions")


@dataclass
class ModelConfig:
    """Everything needed to rebuild a model (stored as JSON next to its weights).

    ``hidden`` is the encoder's size per direction (annotations are 2·hidden wide);
    ``dec_hidden`` the decoder's; ``attn`` the width A of the additive and concat scores.
    ``input_feeding`` (off: source 003 §3.1's plain form) and ``combine`` ("concat" or "gate")
    are Luong's; ``window`` is local attention's half-width D. Source 003 §6's options for the
    global attention of Bahdanau's and Luong's decoders: ``temperature`` T (α = softmax(e / T)),
    ``dropout`` p (on α, in training only) and ``truncate`` W (weight 0 where |j − t| > W;
    None: the whole source). The Transformer (``decoder="transformer"``, which brings its own
    encoder) reads ``layers`` (per stack), ``heads``, ``d_model``, ``ff`` (feed-forward width),
    ``dropout`` (attention dropout, the same field), ``activation``, ``positions`` and
    ``max_positions`` (learned positions' table).
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
    window: int = 2
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
        """Types first (a config may come from a JSON file), then the names and the options."""
        for name in ("decoder", "score", "cell", "dtype", "activation", "positions", "combine"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"ModelConfig: {name} must be a string, got {getattr(self, name)!r}")
        for name in ("input_feeding", "reset_after"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ModelConfig: {name} must be true or false, got {getattr(self, name)!r}")
        for name in SIZES:
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"ModelConfig: {name} must be a positive int, got {v!r}")
        if self.decoder not in DECODERS:
            raise ValueError(f"ModelConfig: decoder must be one of {DECODERS}, got {self.decoder!r}")
        if self.decoder == "bahdanau" and self.score not in SCORES:
            raise ValueError(f"ModelConfig: Bahdanau's score must be one of {SCORES}, got {self.score!r}")
        if self.decoder == "luong" and self.score not in LUONG_SCORES:
            raise ValueError(f"ModelConfig: Luong's score must be one of {LUONG_SCORES}, "
                             f"got {self.score!r}")
        if self.cell not in CELLS:
            raise ValueError(f"ModelConfig: cell must be one of {CELLS}, got {self.cell!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"ModelConfig: dtype must be one of {sorted(DTYPES)}, got {self.dtype!r}")
        self._check_transformer()
        self._check_attention_options()

    def _check_attention_options(self) -> None:
        """combine, temperature, dropout and truncate: valid, and for a decoder that has them."""
        if self.combine not in COMBINES or (self.combine != "concat" and self.decoder != "luong"):
            raise ValueError(f"ModelConfig: combine must be one of {COMBINES} (Luong's decoder "
                             f"only), got {self.combine!r} for {self.decoder!r}")
        check_temperature("ModelConfig", self.temperature)
        if self.truncate is not None and (isinstance(self.truncate, bool)
                                          or not isinstance(self.truncate, int) or self.truncate < 0):
            raise ValueError(f"ModelConfig: truncate must be None or an int >= 0, got {self.truncate!r}")
        field = {"temperature": "temperature", "dropout": "dropout", "window": "truncate"}
        given = [field[k] for k in self.attention_options()
                 if not (k == "dropout" and self.decoder == "transformer")]  # its own dropout
        if given and (self.decoder in ("plain", "transformer") or self.score.startswith("local")):
            raise ValueError(f"ModelConfig: {', '.join(given)} apply to the global attention of "
                             f"the bahdanau and luong decoders, not {self.decoder!r} with "
                             f"{self.score!r}")

    def attention_options(self) -> dict:
        """The options of ``attention.Attention`` that differ from its defaults."""
        opts = {"temperature": self.temperature, "dropout": self.dropout, "window": self.truncate}
        defaults = {"temperature": 1.0, "dropout": 0.0, "window": None}
        return {k: v for k, v in opts.items() if v != defaults[k]}

    def _check_transformer(self) -> None:
        if self.d_model % self.heads:
            raise ValueError(f"ModelConfig: d_model {self.d_model} must be a multiple of heads "
                             f"{self.heads}")
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ValueError(f"ModelConfig: dropout must be a number in [0, 1), got {self.dropout!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"ModelConfig: activation must be one of {sorted(ACTIVATIONS)}, "
                             f"got {self.activation!r}")
        if self.positions not in POSITIONS:
            raise ValueError(f"ModelConfig: positions must be one of {POSITIONS}, "
                             f"got {self.positions!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "ModelConfig":
        if not isinstance(d, dict):
            raise ValueError(f"ModelConfig: expected a dict of fields, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"ModelConfig: unknown field(s) {unknown}")
        # input feeding was on by default before the plain form (003 §3.1) became the default:
        # a saved config without the field was trained with it, and loads that way
        return cls(**{"input_feeding": True, **d})
