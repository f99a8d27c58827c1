"""Tests for models/app/data.py: vocabularies, toy tasks and batching (dates: test_dates.py)."""
import json
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.app.data import SYMBOLS, TASKS, batches, make_task
from models.vocab import BOS, EOS, PAD, UNK, Vocab, pad_batch

# ---------------------------------------------------------------- Vocab


def test_special_ids_and_length():
    v = Vocab("abc")
    assert (PAD, BOS, EOS, UNK) == (0, 1, 2, 3)
    assert (Vocab.PAD, Vocab.BOS, Vocab.EOS, Vocab.UNK) == (0, 1, 2, 3)
    assert len(v) == 4 + 3
    assert v.encode("cab") == [6, 4, 5, EOS]
    assert v.encode("cab", add_eos=False) == [6, 4, 5]


@given(st.text(alphabet=SYMBOLS, min_size=1, max_size=30))
def test_encode_decode_round_trip(text):
    v = Vocab(SYMBOLS)
    ids = v.encode(text)
    assert ids[-1] == EOS and len(ids) == len(text) + 1
    assert min(ids[:-1]) >= 4  # no special token stands for a real character
    assert v.decode(ids) == text
    assert v.decode(ids + [PAD, PAD]) == text  # padding is stripped too


def test_decode_stops_at_first_eos_and_keeps_specials_on_request():
    v = Vocab("ab")
    ids = [BOS, 4, UNK, 5, EOS, 4, PAD]
    assert v.decode(ids) == "ab"
    assert v.decode(ids, strip_special=False) == "<bos>a<unk>b<eos>a<pad>"
    assert v.tokens([4, 5, EOS]) == ["a", "b", "<eos>"]
    assert v.tokens(np.array([PAD, BOS])) == ["<pad>", "<bos>"]
    with pytest.raises(ValueError, match="id 6"):
        v.tokens([6])


def test_unknown_characters_give_unk_and_one_warning_naming_them():
    v = Vocab("abc")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ids = v.encode("axbyx")
    assert ids == [4, UNK, 5, UNK, UNK, EOS]
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "'xy'" in message and "unk" in message


def test_known_characters_give_no_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Vocab("abc").encode("abc")


def test_empty_text_and_bad_alphabets_raise():
    with pytest.raises(ValueError, match="empty text"):
        Vocab("abc").encode("")
    with pytest.raises(ValueError, match="empty"):
        Vocab("")
    with pytest.raises(ValueError, match="repeats 'a'"):
        Vocab("aba")


@pytest.mark.parametrize("name", sorted(TASKS))
def test_vocab_dict_round_trip_through_json(name):
    v = Vocab(TASKS[name].src_alphabet)
    w = Vocab.from_dict(json.loads(json.dumps(v.to_dict())))
    assert w == v and len(w) == len(v)
    assert w.encode(v.alphabet) == v.encode(v.alphabet)
    with pytest.raises(ValueError, match="specials"):
        Vocab.from_dict({"alphabet": "ab", "specials": ["<pad>"]})


# ---------------------------------------------------------------- tasks


@pytest.mark.parametrize("name", sorted(TASKS))
def test_make_task_is_deterministic_for_a_seed(name):
    a = make_task(name, np.random.default_rng(7), 50, 20)
    b = make_task(name, np.random.default_rng(7), 50, 20)
    c = make_task(name, np.random.default_rng(8), 50, 20)
    assert a.train == b.train and a.val == b.val
    assert a.train != c.train


@pytest.mark.parametrize("name", sorted(TASKS))
def test_validation_sources_are_held_out(name):
    data = make_task(name, np.random.default_rng(0), 300, 100, min_len=2, max_len=6)
    assert len(data.train) == 300 and len(data.val) == 100
    train_src = {s for s, _ in data.train}
    val_src = {s for s, _ in data.val}
    assert len(train_src) == 300 and len(val_src) == 100
    assert train_src.isdisjoint(val_src)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_every_generated_string_is_in_the_task_vocab(name):
    data = make_task(name, np.random.default_rng(1), 200, 50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an UNK would warn, and fail here
        for src, tgt in data.train + data.val:
            assert data.src_vocab.decode(data.src_vocab.encode(src)) == src
            assert data.tgt_vocab.decode(data.tgt_vocab.encode(tgt)) == tgt


def test_string_task_targets():
    rng = np.random.default_rng(3)
    for task, expected in [("copy", lambda s: s), ("reverse", lambda s: s[::-1]),
                           ("sort", lambda s: "".join(sorted(s)))]:
        pairs = TASKS[task].generate(rng, 200, 3, 8)
        assert len(pairs) == 200
        for src, tgt in pairs:
            assert 3 <= len(src) <= 8 and set(src) <= set(SYMBOLS)
            assert tgt == expected(src)
    sorted_tgt = TASKS["sort"].generate(rng, 50, 5, 5)
    assert all(list(t) == sorted(t) and sorted(s) == sorted(t) for s, t in sorted_tgt)


def test_too_few_distinct_sources_raise():
    with pytest.raises(ValueError, match="distinct sources"):
        make_task("copy", np.random.default_rng(0), 30, 0, min_len=1, max_len=1)
    with pytest.raises(ValueError, match="unknown task"):
        make_task("nope", np.random.default_rng(0), 1, 1)


# ---------------------------------------------------------------- batching


@given(st.lists(st.lists(st.integers(4, 50), min_size=0, max_size=12), min_size=1, max_size=8))
def test_pad_batch_masks_exactly_the_real_tokens(seqs):
    ids, mask = pad_batch(seqs)
    assert ids.dtype == np.int64 and mask.dtype == bool
    assert ids.shape == mask.shape == (len(seqs), max(len(s) for s in seqs))
    for b, s in enumerate(seqs):
        assert mask[b].sum() == len(s) and mask[b, : len(s)].all()
        assert ids[b, : len(s)].tolist() == s
    assert (ids[~mask] == PAD).all()
    with pytest.raises(ValueError):
        pad_batch([])


def test_batches_cover_every_pair_once_with_eos_and_padding():
    data = make_task("reverse", np.random.default_rng(2), 53, 0, min_len=2, max_len=9)
    got = list(batches(data.train, data.src_vocab, data.tgt_vocab, 16, np.random.default_rng(4)))
    assert [b.src.shape[0] for b in got] == [16, 16, 16, 5]
    decoded = []
    for b in got:
        assert b.src.shape == b.src_mask.shape and b.tgt.shape == b.tgt_mask.shape
        lengths = b.tgt_mask.sum(axis=1)
        assert (b.tgt[np.arange(len(lengths)), lengths - 1] == EOS).all()  # last real = EOS
        assert (b.tgt[:, 0] != BOS).all()  # the model prepends BOS, not the data
        decoded += [(data.src_vocab.decode(s), data.tgt_vocab.decode(t))
                    for s, t in zip(b.src, b.tgt)]
    assert sorted(decoded) == sorted(data.train)
    again = list(batches(data.train, data.src_vocab, data.tgt_vocab, 16, np.random.default_rng(4)))
    assert all((x.src == y.src).all() for x, y in zip(got, again))


def test_batches_without_shuffle_keep_order_and_shuffle_needs_an_rng():
    pairs = [("ab", "ba"), ("abc", "cba")]
    v = Vocab("abc")
    (only,) = batches(pairs, v, v, 8, shuffle=False)
    assert only.src.tolist() == [[4, 5, EOS, PAD], [4, 5, 6, EOS]]
    assert only.src_mask.tolist() == [[True, True, True, False], [True] * 4]
    with pytest.raises(ValueError, match="rng"):
        next(batches(pairs, v, v, 8))
