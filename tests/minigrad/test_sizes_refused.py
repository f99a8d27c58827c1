"""Every library constructor that takes a size refuses 0, negative, fractional and bool sizes
with one line naming a layer and the size, never NumPy's "negative dimensions" or a 1/√0.

All of them build with good sizes; the refusals are a table of representative cases: each kind
of bad size (0, -1, 2.5, True) in each layer family (minigrad.nn, attention, the recurrent
cells, the seq2seq models, the Transformer), in both forms of the message, and where a model
leaves the check to a sub-layer, which then names itself."""
import re

import numpy as np
import pytest

from attention.local import LocalAttention
from attention.multihead import MultiHeadAttention
from attention.positional import LearnedPositions, SinusoidalPositions
from attention.scores import AdditiveScore, ConcatScore, GeneralScore
from minigrad.nn import Embedding, LayerNorm, Linear
from models.decoders import BahdanauDecoder, PlainDecoder
from models.recurrent import BiGRUEncoder
from models.luong import LuongDecoder
from models.recurrent import GRUCell, LSTMCell
from models.transformer import TransformerDecoder, TransformerEncoder
from models.transformer_layers import DecoderLayer, EncoderLayer, FeedForward

rng = np.random.default_rng
LOCAL = dict(score=GeneralScore(3, 3), window=2, predictive=True)
# constructor: (good keyword sizes, other keywords)
GOOD = {
    Linear: (dict(in_features=3, out_features=4), {}),
    Embedding: (dict(num_embeddings=3, embedding_dim=4), {}),
    LayerNorm: (dict(normalized_shape=4), {}),
    SinusoidalPositions: (dict(dim=4), {}),
    LearnedPositions: (dict(max_len=5, dim=4), dict(rng=rng(0))),
    AdditiveScore: (dict(query_dim=3, key_dim=4, attn_dim=5), {}),
    ConcatScore: (dict(query_dim=3, key_dim=4, attn_dim=5), {}),
    GeneralScore: (dict(query_dim=3, key_dim=4), {}),
    LocalAttention: (dict(query_dim=3), LOCAL),
    MultiHeadAttention: (dict(embed_dim=4, num_heads=2), {}),
    GRUCell: (dict(input_size=3, hidden_size=4), {}),
    LSTMCell: (dict(input_size=3, hidden_size=4), {}),
    BiGRUEncoder: (dict(vocab_size=5, embed_dim=3, hidden_size=4), {}),
    PlainDecoder: (dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=6), {}),
    BahdanauDecoder: (dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=6, attn_dim=5), {}),
    LuongDecoder: (dict(vocab_size=5, embed_dim=3, hidden_size=4, key_dim=4, attn_dim=5), {}),
    TransformerEncoder: (dict(vocab_size=5, dim=4, heads=2, ff=6, layers=1, max_len=8), {}),
    TransformerDecoder: (dict(vocab_size=5, dim=4, heads=2, ff=6, layers=1, max_len=8), {}),
    FeedForward: (dict(dim=4, hidden=6), {}),
    EncoderLayer: (dict(dim=4, heads=2, ff=6), {}),
    DecoderLayer: (dict(dim=4, heads=2, ff=6), {}),
}
# (constructor, the size made bad, the bad value, the layer the message names: the constructor
# itself, or the sub-layer it leaves the check to, which names its own argument)
REFUSED = [
    (Linear, "out_features", 0, "Linear"),
    (Embedding, "embedding_dim", -1, "Embedding"),
    (LayerNorm, "normalized_shape", 2.5, "LayerNorm"),
    (SinusoidalPositions, "dim", True, "SinusoidalPositions"),
    (AdditiveScore, "attn_dim", -1, "AdditiveScore"),
    (LocalAttention, "query_dim", 0, "LocalAttention"),
    (MultiHeadAttention, "num_heads", 2.5, "MultiHeadAttention"),
    (MultiHeadAttention, "embed_dim", True, "MultiHeadAttention"),
    (GRUCell, "hidden_size", True, "GRUCell"),
    (LSTMCell, "input_size", -1, "LSTMCell"),
    (LuongDecoder, "key_dim", 0, "LuongDecoder"),
    (TransformerEncoder, "layers", -1, "TransformerEncoder"),
    (BiGRUEncoder, "hidden_size", 0, "GRUCell"),                   # left to a sub-layer
    (BahdanauDecoder, "attn_dim", 2.5, "AdditiveScore"),
    (EncoderLayer, "ff", 0, "FeedForward"),
    (DecoderLayer, "heads", True, "MultiHeadAttention"),
]


def test_every_constructor_builds_with_good_sizes():
    for cls, (sizes, other) in GOOD.items():
        cls(**sizes, **other)


@pytest.mark.parametrize("cls, name, bad, who", REFUSED,
                         ids=[f"{c.__name__}.{n}={b!r}" for c, n, b, _ in REFUSED])
def test_a_bad_size_is_refused_naming_the_layer_and_size(cls, name, bad, who):
    sizes, other = GOOD[cls]
    with pytest.raises(ValueError) as info:
        cls(**{**sizes, name: bad}, **other)
    message = str(info.value)
    assert "\n" not in message
    sized = re.fullmatch(r"(\w+): ([\w ]+) must be positive integers, got (.*)", message)
    one = re.fullmatch(r"(\w+): (\w+) must be a positive int, got (.*)", message)  # MultiHeadAttention
    assert sized or one, message
    named, names, values = (sized or one).groups()
    assert named == who, message
    if who == cls.__name__:  # the constructor checks this size itself: its name and its value
        assert name in names.split(" and "), message
        assert (f"{name}={bad!r}" in values) if sized else values == repr(bad), message
    else:                    # a sub-layer's own argument, with the same bad value
        assert repr(bad) in values, message
