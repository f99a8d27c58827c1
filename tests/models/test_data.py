"""Tests for models/app/data.py: vocabularies, toy tasks, date formats and batching."""
import datetime as dt
import json
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.app.data import (CASES, DATE_FORMATS, DATE_MAX, DATE_MIN, SYMBOLS, TASKS, batches,
                             date_pairs, format_date, make_task)
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


# ---------------------------------------------------------------- dates

# An independent parser: strptime patterns per format, except the two cases strptime gets
# wrong for us (ordinal suffixes, and its %y pivot of 69 instead of our 50).
_STRPTIME = {
    "d_month_yyyy": "%d %B %Y", "d_mon_yyyy": "%d %b %Y", "month_d_yyyy": "%B %d, %Y",
    "mon_d_yyyy": "%b %d, %Y", "weekday_month_d_yyyy": "%A, %B %d, %Y",
    "wkd_d_mon_yyyy": "%a, %d %b %Y", "dd/mm/yyyy": "%d/%m/%Y", "dd.mm.yyyy": "%d.%m.%Y",
}


def _parse(text: str) -> dt.date:
    m = re.fullmatch(r"(\d{1,2})/(\d{1,2})/(\d{2})", text)
    if m:
        yy = int(m.group(3))
        return dt.date(1900 + yy if yy >= 50 else 2000 + yy, int(m.group(2)), int(m.group(1)))
    text = re.sub(r"^(\d{1,2})(st|nd|rd|th) of ", r"\1 ", text, flags=re.IGNORECASE)
    for pattern in _STRPTIME.values():  # %B, %b, %A, %a match any letter case
        try:
            return dt.datetime.strptime(text, pattern).date()
        except ValueError:
            pass
    raise AssertionError(f"no pattern parses {text!r}")


def test_format_examples():
    d = dt.date(2026, 11, 29)
    got = {fmt: format_date(d, fmt) for fmt in DATE_FORMATS}
    assert got == {
        "d_month_yyyy": "29 November 2026", "d_mon_yyyy": "29 Nov 2026",
        "month_d_yyyy": "November 29, 2026", "mon_d_yyyy": "Nov 29, 2026",
        "weekday_month_d_yyyy": "Sunday, November 29, 2026",
        "wkd_d_mon_yyyy": "Sun, 29 Nov 2026", "dth_of_month_yyyy": "29th of November 2026",
        "d/m/yy": "29/11/26", "dd/mm/yyyy": "29/11/2026", "dd.mm.yyyy": "29.11.2026",
    }
    assert format_date(d, "mon_d_yyyy", "lower") == "nov 29, 2026"
    assert format_date(d, "weekday_month_d_yyyy", "upper") == "SUNDAY, NOVEMBER 29, 2026"
    with pytest.raises(ValueError, match="unknown format"):
        format_date(d, "mm/dd/yyyy")


def test_numeric_formats_are_day_first_and_two_digit_years_pivot_at_50():
    assert format_date(dt.date(2026, 3, 4), "d/m/yy") == "4/3/26"
    assert format_date(dt.date(2026, 3, 4), "dd/mm/yyyy") == "04/03/2026"
    assert format_date(dt.date(1950, 1, 1), "d/m/yy") == "1/1/50"
    assert format_date(dt.date(2049, 12, 31), "d/m/yy") == "31/12/49"
    assert [format_date(dt.date(2001, 1, d), "dth_of_month_yyyy")[:4]
            for d in (1, 2, 3, 11, 12, 13, 21, 22)] == [
        "1st ", "2nd ", "3rd ", "11th", "12th", "13th", "21st", "22nd"]


@settings(max_examples=300)
@given(st.dates(min_value=DATE_MIN, max_value=DATE_MAX),
       st.sampled_from(DATE_FORMATS), st.sampled_from(CASES))
def test_every_format_and_case_parses_back_to_the_date(date, fmt, case):
    assert _parse(format_date(date, fmt, case)) == date


def test_generated_dates_match_their_targets():
    pairs = date_pairs(np.random.default_rng(11), 2000)
    seen_cases = set()
    for src, tgt in pairs:
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", tgt)
        date = dt.date.fromisoformat(tgt)
        assert DATE_MIN <= date <= DATE_MAX
        assert _parse(src) == date
        seen_cases.add("upper" if src.isupper() else "lower" if src.islower() else "other")
    assert seen_cases == {"upper", "lower", "other"}
    years = [int(t[:4]) for _, t in pairs]
    assert min(years) < 1960 and max(years) > 2039  # spread over the whole range


def test_weekday_names_are_the_dates_weekday():
    names = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    checked = 0
    for src, tgt in date_pairs(np.random.default_rng(5), 3000):
        word = re.match(r"([A-Za-z]+),", src)  # only the weekday formats start "Word,"
        if word:
            weekday = dt.date.fromisoformat(tgt).weekday()
            assert names[weekday].startswith(word.group(1).lower()), (src, tgt)
            checked += 1
    assert checked > 300  # two of the ten formats carry a weekday


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
