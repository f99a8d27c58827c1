"""``ModelConfig``: everything needed to rebuild a ``Seq2Seq`` (stored as JSON next to its
weights), checked field by field when it is made: a config may come from a file anyone wrote.
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
MAX_VOCAB = 10_000  # ids: a character vocabulary is far smaller
MAX_WIDTH = 1024    # embed, hidden, dec_hidden, attn, window: at 1024 a model is ~40 M parameters
MAX_LAYERS = 48     # transformer layers
MAX_POSITIONS = 100_000
MAX_PARAMETERS = 50_000_000  # ~0.4 GB of float64 weights, ~2 GB with gradients and Adam's moments


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
        """Types and ranges first (a config may come from a JSON file anyone wrote): sizes are
        capped, so a tampered ``"hidden": 200000`` is refused before anything is allocated."""
        for name in ("decoder", "score", "cell", "dtype", "activation", "positions", "combine"):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"ModelConfig: {name} must be a string, got {getattr(self, name)!r}")
        for name in ("input_feeding", "reset_after"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ModelConfig: {name} must be true or false, got {getattr(self, name)!r}")
        for name, cap in (("src_vocab", MAX_VOCAB), ("tgt_vocab", MAX_VOCAB), ("embed", MAX_WIDTH),
                          ("hidden", MAX_WIDTH), ("dec_hidden", MAX_WIDTH), ("attn", MAX_WIDTH),
                          ("window", MAX_WIDTH), ("layers", MAX_LAYERS), ("heads", MAX_WIDTH),
                          ("d_model", MAX_WIDTH), ("ff", 4 * MAX_WIDTH),
                          ("max_positions", MAX_POSITIONS)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= cap:
                raise ValueError(f"ModelConfig: {name} must be a positive int (at most {cap}), got {v!r}")
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
        if self.estimated_parameters() > MAX_PARAMETERS:
            fields = ("layers, d_model, ff, src_vocab, tgt_vocab, max_positions"
                      if self.decoder == "transformer" else "embed, hidden, dec_hidden, attn, vocabularies")
            raise ValueError(f"ModelConfig: about {self.estimated_parameters():,} parameters, more "
                             f"than the {MAX_PARAMETERS:,} this program trains; make {fields} smaller")

    def estimated_parameters(self) -> int:
        """An upper bound on the number of weights (checked before anything is allocated)."""
        if self.decoder == "transformer":
            d, f = self.d_model, self.ff  # per layer: encoder 4d² + 2df, decoder 8d² + 2df (+ biases)
            tables = (self.src_vocab + 2 * self.tgt_vocab + self.max_positions) * d
            return self.layers * (12 * d * d + 4 * d * f + 16 * d + 2 * f) + tables
        e, h, s, a = self.embed, self.hidden, self.dec_hidden, self.attn
        encoder = 2 * 4 * (e + h + 2) * h  # two directions, at most four gates (LSTM)
        decoder = 4 * (e + 2 * h + 2 * s + 2) * s + (2 * h + s + 1) * (a + 2 * s + 1)
        return (self.src_vocab + self.tgt_vocab) * e + encoder + decoder + (s + 1) * self.tgt_vocab

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
