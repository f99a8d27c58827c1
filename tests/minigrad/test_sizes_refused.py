"""Every library constructor that takes a size refuses 0, negative, fractional and bool sizes
with one line naming a layer and the size, never NumPy's "negative dimensions" or a 1/√0."""
import re

import numpy as np
import pytest

from attention.local import LocalAttention
from attention.multihead import MultiHeadAttention
from attention.positional import LearnedPositions, SinusoidalPositions
from attention.scores import AdditiveScore, ConcatScore, GeneralScore
from minigrad.nn import Embedding, LayerNorm, Linear
from models.decoders import BahdanauDecoder, PlainDecoder
from models.encoder import BiGRUEncoder
from models.luong import LuongDecoder
from models.recurrent import GRUCell, LSTMCell
from models.transformer import TransformerDecoder, TransformerEncoder
from models.transformer_layers import DecoderLayer, EncoderLayer, FeedForward

rng = np.random.default_rng
# (constructor, good keyword sizes, other keywords, the sizes a sub-layer checks for it)
CASES = [
    (Linear, dict(in_features=3, out_features=4), {}, ()),
    (Embedding, dict(num_embeddings=3, embedding_dim=4), {}, ()),
    (LayerNorm, dict(normalized_shape=4), {}, ()),
    (SinusoidalPositions, dict(dim=4), {}, ()),
    (LearnedPositions, dict(max_len=5, dim=4), dict(rng=rng(0)), ()),
    (AdditiveScore, dict(query_dim=3, key_dim=4, attn_dim=5), {}, ()),
    (ConcatScore, dict(query_dim=3, key_dim=4, attn_dim=5), {}, ()),
    (GeneralScore, dict(query_dim=3, key_dim=4), {}, ()),
    (LocalAttention, dict(query_dim=3), dict(score=GeneralScore(3, 3), window=2, predictive=True), ()),
    (MultiHeadAttention, dict(embed_dim=4, num_heads=2), {}, ()),
    (GRUCell, dict(input_size=3, hidden_size=4), {}, ()),
    (LSTMCell, dict(input_size=3, hidden_size=4), {}, ()),
    (BiGRUEncoder, dict(vocab_size=5, embed_dim=3, hidden_size=4), {},
     ("vocab_size", "embed_dim", "hidden_size")),
    (PlainDecoder, dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=6), {}, ()),
    (BahdanauDecoder, dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=6, attn_dim=5), {},
     ("vocab_size", "embed_dim", "hidden_size", "key_dim", "attn_dim")),
    (LuongDecoder, dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=4, attn_dim=5), {}, ()),
    (TransformerEncoder, dict(vocab_size=5, dim=4, heads=2, ff=6, layers=1, max_len=8), {}, ()),
    (TransformerDecoder, dict(vocab_size=5, dim=4, heads=2, ff=6, layers=1, max_len=8), {}, ()),
    (FeedForward, dict(dim=4, hidden=6), {}, ()),
    (EncoderLayer, dict(dim=4, heads=2, ff=6), {}, ("dim", "heads", "ff")),
    (DecoderLayer, dict(dim=4, heads=2, ff=6), {}, ("dim", "heads", "ff")),
]
ROWS = [(cls, sizes, other, name, name in delegated)
        for cls, sizes, other, delegated in CASES for name in sizes]


@pytest.mark.parametrize("cls, sizes, other", [c[:3] for c in CASES], ids=lambda v: getattr(v, "__name__", ""))
def test_good_sizes_build(cls, sizes, other):
    cls(**sizes, **other)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
@pytest.mark.parametrize("cls, sizes, other, name, delegated", ROWS,
                         ids=[f"{r[0].__name__}.{r[3]}" for r in ROWS])
def test_a_bad_size_is_refused_naming_the_layer_and_size(cls, sizes, other, name, delegated, bad):
    with pytest.raises(ValueError) as info:
        cls(**{**sizes, name: bad}, **other)
    message = str(info.value)
    assert "\n" not in message
    sized = re.fullmatch(r"(\w+): ([\w ]+) must be positive integers, got (.*)", message)
    one = re.fullmatch(r"(\w+): (\w+) must be a positive int, got (.*)", message)  # MultiHeadAttention
    assert sized or one, message
    who, names, values = (sized or one).groups()
    if not delegated:  # the constructor checks this size itself, and names it with its value
        assert who == cls.__name__ and name in names.split(" and "), message
        assert (f"{name}={bad!r}" in values) if sized else values == repr(bad), message
