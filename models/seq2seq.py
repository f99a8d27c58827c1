"""``Seq2Seq``: the bidirectional encoder and one decoder, the loss, and decoding.

Shape letters: B batch, S source length, T target length, V target vocabulary.

Sources and targets are token ids as ``models.app.data`` makes them: ``x_1 .. x_{S−1}, EOS`` and
``y_1 .. y_{T−1}, EOS``, right-padded with PAD and described by boolean masks (True = real).
A mask left out (``src_mask=None``, ``tgt_mask=None``) is derived from the ids as ``ids != PAD``.
The model prepends BOS to form the decoder input ``BOS, y_1 .. y_{T−1}``.

The loss is the mean cross-entropy over real target tokens (padding is not counted):

    L = −(1 / Σ_b T_b) Σ_b Σ_{t ≤ T_b} log p(y_bt | y_b,<t, x_b)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

import minigrad as mg
from minigrad import functional as F, init
from minigrad.nn import Module

from attention.masking import check_temperature

from models.vocab import BOS, PAD
from models.decoding import beam_search, greedy
from models.decoders import SCORES, BahdanauDecoder, PlainDecoder
from models.encoder import BiGRUEncoder, check_source
from models.luong import COMBINES, LUONG_SCORES, LuongDecoder
from models.transformer import POSITIONS, TransformerDecoder, TransformerEncoder
from models.transformer_layers import ACTIVATIONS

DECODERS = ("bahdanau", "luong", "plain", "transformer")
DTYPES = {"float32": np.float32, "float64": np.float64}
CELLS = ("gru", "lstm")
MAX_VOCAB = 10_000  # ids: a character vocabulary is far smaller
MAX_WIDTH = 1024    # embed, hidden, dec_hidden, attn, window: at 1024 a model is ~40 M parameters
MAX_LAYERS = 48     # transformer layers
MAX_POSITIONS = 100_000


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


def decoder_inputs(tgt: np.ndarray) -> np.ndarray:
    """BOS, y_1 .. y_{T−1}: the targets shifted right by one, (B, T)."""
    return np.concatenate([np.full((tgt.shape[0], 1), BOS, dtype=tgt.dtype), tgt[:, :-1]], axis=1)  # (B, T)


class Seq2Seq(Module):
    """Encoder–decoder with attention (or without: ``decoder="plain"``), built from a config."""

    def __init__(self, config: ModelConfig, rng: np.random.Generator | None = None):
        rng = init.generator("Seq2Seq", rng)
        self.config, c = config, config
        dtype = DTYPES[c.dtype]
        if c.decoder == "transformer":
            sizes = dict(dim=c.d_model, heads=c.heads, ff=c.ff, layers=c.layers, dropout=c.dropout,
                         activation=c.activation, position=c.positions, max_len=c.max_positions,
                         rng=rng, dtype=dtype)
            self.encoder = TransformerEncoder(c.src_vocab, **sizes)
            self.decoder = TransformerDecoder(c.tgt_vocab, **sizes)
            return
        self.encoder = BiGRUEncoder(c.src_vocab, c.embed, c.hidden, c.reset_after, rng=rng, dtype=dtype)
        K = 2 * c.hidden
        if c.decoder == "bahdanau":
            self.decoder = BahdanauDecoder(c.tgt_vocab, c.embed, c.dec_hidden, K, c.attn, c.score,
                                           c.reset_after, rng=rng, dtype=dtype,
                                           attention=c.attention_options())
        elif c.decoder == "luong":
            self.decoder = LuongDecoder(c.tgt_vocab, c.embed, c.dec_hidden, K, c.score, c.attn,
                                        c.input_feeding, c.cell, c.window, c.reset_after,
                                        rng=rng, dtype=dtype, combine=c.combine,
                                        attention=c.attention_options())
        else:
            self.decoder = PlainDecoder(c.tgt_vocab, c.embed, c.dec_hidden, K, c.reset_after,
                                        rng=rng, dtype=dtype)

    def forward(self, src, tgt, src_mask=None, teacher_forcing: float = 1.0,
                rng: np.random.Generator | None = None) -> tuple:
        """Logits (B, T, V) for targets ``tgt (B, T)`` and the alignment (B, T, S) or None."""
        src, src_mask = check_source(src, src_mask)
        tgt = np.asarray(tgt)                                            # (B, T)
        if tgt.ndim != 2 or tgt.dtype.kind not in "iu":
            raise ValueError(f"targets: expected integer ids of shape (B, T), got {tgt.dtype} {tgt.shape}")
        if tgt.shape[0] != src.shape[0] or tgt.shape[1] == 0:
            raise ValueError(f"Seq2Seq: targets of shape {tgt.shape} do not fit sources {src.shape}")
        if not 0 <= teacher_forcing <= 1:  # written so that NaN fails too
            raise ValueError(f"Seq2Seq: teacher_forcing must be in [0, 1], got {teacher_forcing}")
        encoded = self.encoder(src, src_mask, rng=rng)  # rng: the Transformer's attention dropout
        return self.decoder(encoded, decoder_inputs(tgt), teacher_forcing, rng)

    def loss(self, src, tgt, src_mask=None, tgt_mask=None, teacher_forcing: float = 1.0,
             rng: np.random.Generator | None = None) -> mg.Tensor:
        """Mean cross-entropy over the real target tokens; ``teacher_forcing`` is the
        probability of feeding y_{t−1} rather than the model's own guess (< 1 needs ``rng``)."""
        logits, _ = self.forward(src, tgt, src_mask, teacher_forcing, rng)  # (B, T, V)
        return masked_cross_entropy(logits, tgt, tgt_mask)

    def greedy(self, src, max_len: int = 32, src_mask=None) -> list:
        """Pick the most likely token at every step; a ``Translation`` per example."""
        return greedy(self, src, max_len, src_mask)

    def beam(self, src, beam_size: int = 4, length_penalty: float = 0.6, max_len: int = 32,
             src_mask=None, accept=None) -> list:
        """Beam search of width ``beam_size``; hypotheses ranked by log p / lp(length), those
        that ``accept(ids)`` approves (if given) first."""
        return beam_search(self, src, beam_size, length_penalty, max_len, src_mask, accept)


def masked_cross_entropy(logits, tgt, tgt_mask) -> mg.Tensor:
    """Mean of −log softmax(logits)[y] over positions where ``tgt_mask`` is True."""
    tgt_mask = np.asarray(tgt) != PAD if tgt_mask is None else np.asarray(tgt_mask, dtype=bool)  # (B, T)
    if tgt_mask.shape != np.shape(tgt):
        raise ValueError(f"targets {np.shape(tgt)} vs target mask {tgt_mask.shape}")
    return F.cross_entropy(logits, np.where(tgt_mask, tgt, PAD), ignore_index=PAD)  # () scalar
