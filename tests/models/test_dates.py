"""The dates task (models/app/dates.py) and what translate does around it (datetext.py).

``parse`` below is an independent reader of the forms, written from the conventions (day first
when ambiguous, the pivot at 50, weekdays ignored) and not from the generator's code. It checks
the generator's pairs and the hand-written wild set's answers alike.
"""
import datetime as dt
import difflib
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.app.data import make_task
from models.app.dates import (CASES, DATE_MAX, DATE_MIN, FORMS, HELP, WIDE_MAX, WIDE_MIN,
                              date_pairs, date_text, ordinal, two_digit_year)
from models.app.datetext import (ambiguity, calendar_error, missing, month_first, normalise,
                                 read_dates, split_time, wild_accuracy, wild_dates)
from models.decoding import Translation
from models.vocab import Vocab

NAMES = ["january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"]


def _month(word: str) -> int:
    """A month from its name, abbreviation or a misspelling close to the full name."""
    for i, name in enumerate(NAMES):
        if word == name or (len(word) in (3, 4) and name.startswith(word)):
            return i + 1
    close = difflib.get_close_matches(word, NAMES, n=1, cutoff=0.6)
    assert close, f"no month reads like {word!r}"
    return NAMES.index(close[0]) + 1


def _year(text: str) -> int:
    digits = text.lstrip("'")
    return int(digits) if len(digits) == 4 else (1900 if int(digits) >= 50 else 2000) + int(digits)


def parse(text: str) -> dt.date:
    t = re.sub(r"^(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,? ", "", text.lower())
    if m := re.fullmatch(r"(\d{4})([-/.]?)(\d{1,2})\2(\d{1,2})", t):
        return dt.date(int(m[1]), int(m[3]), int(m[4]))
    if m := re.fullmatch(r"(\d{1,2})([-/.])(\d{1,2})\2(\d{2}|\d{4})", t):
        a, b = int(m[1]), int(m[3])
        day, month = (b, a) if b > 12 else (a, b)  # day first unless the second number is a day
        return dt.date(_year(m[4]), month, day)
    if m := re.fullmatch(r"(?:the )?(\d{1,2})(?:st|nd|rd|th)?(?: of)?[ -]([a-z]+)\.?[ ,-]+('?\d{2}|\d{4})", t):
        return dt.date(_year(m[3]), _month(m[2]), int(m[1]))
    if m := re.fullmatch(r"([a-z]+)\.? (?:the )?(\d{1,2})(?:st|nd|rd|th)?,? ('?\d{2}|\d{4})", t):
        return dt.date(_year(m[3]), _month(m[1]), int(m[2]))
    raise AssertionError(f"no pattern reads {text!r}")


# ---------------------------------------------------------------- the generator

def test_ordinals_and_the_pivot():
    assert [ordinal(d) for d in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 31)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "23rd", "31st"]
    assert [two_digit_year(y) for y in (0, 49, 50, 99)] == [2000, 2049, 1950, 1999]


@settings(max_examples=200)
@given(st.dates(min_value=WIDE_MIN, max_value=WIDE_MAX), st.sampled_from(FORMS),
       st.sampled_from(CASES), st.integers(0, 2 ** 32))
def test_every_form_and_case_reads_back_to_the_date(date, form, case, seed):
    if form == "month-first" and date.day <= 12:
        with pytest.raises(ValueError, match="day above 12"):
            date_text(np.random.default_rng(seed), date, form, case)
        return
    text = date_text(np.random.default_rng(seed), date, form, case)
    assert parse(text) == date, text
    if case != "as written":
        assert text == (text.lower() if case == "lower" else text.upper())


def test_generated_pairs_match_their_targets_and_cover_the_forms():
    pairs = date_pairs(np.random.default_rng(11), 6000)
    for src, tgt in pairs:
        assert calendar_error(tgt) is None and parse(src) == dt.date.fromisoformat(tgt), (src, tgt)
        assert src == normalise(src)  # the model never sees what normalise removes
    srcs = [s for s, _ in pairs]
    wanted = {  # a form people type: a pattern that finds it
        "yyyymmdd": r"\d{8}", "iso": r"\d{4}-\d\d-\d\d", "y/m/d": r"\d{4}/\d+/\d+",
        "y.m.d": r"\d{4}\.\d+\.\d+", "US, day > 12": r"(1[0-2]|0?[1-9])/(1[3-9]|2\d|3[01])/\d+",
        "two-digit year": r".*\D\d\d", "apostrophe": r".*'\d\d", "ordinal": r".*\d(st|nd|rd|th)\b.*",
        "the ... of": r"(?i)(.* )?the \d+\w\w of .*", "month the day": r"(?i)[a-z]+\.? the \d.*",
        "d-Mon-y": r"(?i).*\d-[a-z]+-\d.*", "Sept": r"(?i).*\bsept\b.*", "dotted": r"(?i).*[a-z]\. \d.*",
        "misspelled": r"(?i).*\b(febuary|agust|septmber|ocotber)\b.*", "comma": r".*\d, \d.*",
        "no comma": r"(?i).*[a-z] \d+ \d{4}", "weekday,": r"(?i)[a-z]+\.?, .*",
        "weekday": r"(?i)(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.? \w.*",
        "upper": r"[^a-z]*[A-Z][^a-z]*", "lower": r"[^A-Z]*[a-z][^A-Z]*",
    }
    for name, pattern in wanted.items():
        assert any(re.fullmatch(pattern, s) for s in srcs), f"no {name} among 6000 sources"
    years = [int(t[:4]) for _, t in pairs]
    assert min(years) < 1500 and max(years) > 5000 and np.mean([1950 <= y <= 2049 for y in years]) > 0.6


def test_weekdays_are_mostly_right_and_sometimes_wrong():
    right = wrong = 0
    for src, tgt in date_pairs(np.random.default_rng(5), 4000):
        word = re.match(r"(?i)(mon|tue|wed|thu|fri|sat|sun)", src)
        if word:
            day = dt.date.fromisoformat(tgt).strftime("%a").lower()
            right, wrong = right + (word[1].lower() == day), wrong + (word[1].lower() != day)
    assert right > 3 * wrong > 0


def test_month_first_is_never_ambiguous_and_the_vocab_covers_every_source():
    data = make_task("dates", np.random.default_rng(3), 3000, 300)
    for src, tgt in data.train + data.val:
        amb = ambiguity(src)
        assert amb is None or amb.day_first == tgt  # ambiguous sources are day first
        assert 3 not in data.src_vocab.encode(src)  # no <unk>
    with pytest.raises(ValueError, match="unknown form"):
        date_text(np.random.default_rng(0), DATE_MIN, "yyyy")


def test_help_names_the_forms_range_pivot_and_convention():
    for words in ("20200304", "12/25/2020", "Sept", "the 3rd of May", "'20", "1000-9999",
                  "50-99 -> 19yy", "DAY FIRST", "--month-first", "spaces"):
        assert words in HELP


# ---------------------------------------------------------------- around the model

def test_normalise():
    assert normalise("  March \t14 ,  2015 \n") == "March 14, 2015"
    assert normalise("3\u20134\u20132020") == "3-4-2020" and normalise("May 3 \u201999") == "May 3 '99"


def test_ambiguity_and_the_month_first_rewrite():
    amb = ambiguity("03/04/2020")
    assert (amb.day_first, amb.month_first) == ("2020-04-03", "2020-03-04")
    assert ambiguity("Tue 3.4.99").day_first == "1999-04-03"
    for text in ("13/04/2020", "04/13/2020", "04/04/2020", "2020-03-04", "3 May 2020", "3/4-2020"):
        assert ambiguity(text) is None, text
    assert month_first("Tue, 03/04/20") == "Tue, 04/03/20"
    assert month_first("13/04/2020") == "13/04/2020"  # not ambiguous: unchanged


def test_calendar_error():
    assert calendar_error("2024-02-29") is None
    assert "calendar" in calendar_error("2011-05-33") and "calendar" in calendar_error("2023-02-29")
    assert "YYYY-MM-DD" in calendar_error("0001-00-0") and "YYYY-MM-DD" in calendar_error("")


def test_the_wild_set_is_big_varied_and_its_answers_read_back():
    pairs = wild_dates()
    assert len(pairs) >= 80 and len({t for t, _ in pairs}) == len(pairs)
    for text, answer in pairs:
        assert parse(normalise(text)) == dt.date.fromisoformat(answer), text
    texts = [t for t, _ in pairs]
    assert sum(ambiguity(normalise(t)) is not None for t in texts) >= 5
    assert sum(normalise(t) != t for t in texts) >= 3
    assert any(not DATE_MIN.year <= int(a[:4]) <= DATE_MAX.year for _, a in pairs)


class Stub:
    """A 'model' that writes fixed outputs (beam with ``accept``: the ``accepted`` ones, as
    if they were lower in the beam) and records what it was given."""
    def __init__(self, tgt_vocab, outputs, accepted=None):
        self.tgt_vocab, self.outputs, self.accepted, self.seen = tgt_vocab, outputs, accepted, None

    def _out(self, src, outputs):
        self.seen = src
        return [Translation(self.tgt_vocab.encode(o), None, -1.0) for o in outputs[:len(src)]]

    def greedy(self, src, max_len, mask):
        return self._out(src, self.outputs)

    def beam(self, src, k, lp, max_len, mask, accept=None):
        return self._out(src, self.outputs if accept is None else self.accepted)


def test_read_dates_notes_normalisation_ambiguity_and_impossible_dates():
    src_vocab, tgt_vocab = Vocab("0123456789 ,/'-ACMacdhr"), Vocab("0123456789-")
    model = Stub(tgt_vocab, ["2015-03-14", "2020-04-03", "2011-05-33"])
    got = read_dates(model, src_vocab, tgt_vocab, ["  March 14 , 2015", "03/04/2020", "1/2/03"])
    assert [r.model_input for r in got] == ["March 14, 2015", "03/04/2020", "1/2/03"]
    assert "normalised" in got[0].notes[0] and got[0].valid
    assert "ambiguous: read day first as 2020-04-03" in got[1].notes[0]
    assert "--month-first reads it as 2020-03-04" in got[1].notes[0]
    assert not got[2].valid and "WARNING" in got[2].notes[-1] and "2011-05-33" in got[2].notes[-1]
    got = read_dates(model, src_vocab, tgt_vocab, ["03/04/2020"], beam=3, convention="month-first")
    assert src_vocab.decode(model.seen[0]) == "04/03/2020"  # the model reads the swapped text
    assert "read month first as 2020-03-04" in got[0].notes[0]
    assert "WARNING: the model wrote '2015-03-14', not this reading" in got[0].notes[1]
    with pytest.raises(ValueError, match="convention"):
        read_dates(model, src_vocab, tgt_vocab, ["1/2/03"], convention="us")
    with pytest.raises(ValueError, match="no text"):
        read_dates(model, src_vocab, tgt_vocab, ["   "])
    acc, wrong = wild_accuracy(Stub(tgt_vocab, ["2015-03-14", "1999-01-01"]), src_vocab,
                               tgt_vocab, [("March 14, 2015", "2015-03-14"), ("1/1/99", "1999-01-02")])
    assert acc == 0.5 and wrong == [("1/1/99", "1999-01-02", "1999-01-01")]


def test_the_wild_set_ships_as_package_data():
    import configparser
    import pathlib
    cfg = configparser.ConfigParser()
    cfg.read(pathlib.Path(__file__).parents[2] / "setup.cfg")
    assert "app/wild_dates.tsv" in cfg["options.package_data"]["models"].replace(",", " ").split()


def test_beam_shows_the_best_real_date_or_warns():
    src_vocab, tgt_vocab = Vocab("0123456789 ,.'Sepst"), Vocab("0123456789-")
    model = Stub(tgt_vocab, ["2021-09-31"], accepted=["2021-09-01"])
    r = read_dates(model, src_vocab, tgt_vocab, ["Sept. 31st, 2021"], beam=4)[0]
    assert r.output == "2021-09-01" and r.valid
    assert "the most likely output '2021-09-31' is not a calendar date" in r.notes[0]
    model = Stub(tgt_vocab, ["2021-09-31"], accepted=["2021-09-32"])
    r = read_dates(model, src_vocab, tgt_vocab, ["Sept. 31st, 2021"], beam=4)[0]
    assert r.output == "2021-09-31" and not r.valid
    assert "WARNING: none of the 4 beam hypotheses is a real date" in r.notes[-1]


# ---------------------------------------------------------------- nothing made up

@pytest.mark.parametrize("text, why", [
    ("May 3rd", "it names no year,"), ("3 may", "it names no year,"),
    ("Aug 2018", "it names no day,"), ("April 2023", "it names no day,"),
    ("5/3", "it names no year,"), ("2018-08", "it names no day,"),
    ("2018", "it names no month and no day,"), ("May", "it names no year and no day,"),
    ("May 3 999", "the year 999 is outside 1000-9999"),
    ("3/5/0999", "the year 0999 is outside 1000-9999")])
def test_a_date_with_a_part_missing_is_refused_not_made_up(text, why):
    """The model always writes a whole date, so it never reads one that lacks a part."""
    src_vocab, tgt_vocab = Vocab("0123456789 ,/'-ADMadgilprsuy"), Vocab("0123456789-")
    model = Stub(tgt_vocab, ["2033-05-03", "1999-05-03"])
    got = read_dates(model, src_vocab, tgt_vocab, [text, "3 May 1999"])
    assert got[0].refused.startswith(why) and got[0].output == "" and not got[0].valid
    assert got[1].refused is None and got[1].output == "2033-05-03"  # the only text read
    assert [src_vocab.decode(s) for s in model.seen] == ["3 May 1999"]
    assert missing(normalise(text)) == got[0].refused
    acc, wrong = wild_accuracy(model, src_vocab, tgt_vocab, [(text, "2033-05-03")])
    assert acc == 0 and wrong == [(text, "2033-05-03", f"(refused: {got[0].refused})")]


def test_every_wild_date_names_its_year_month_and_day():
    assert [t for t, _ in wild_dates() if missing(split_time(normalise(t))[0])] == []


@pytest.mark.parametrize("text, date, time", [
    ("2018-08-29T12:00:00", "2018-08-29", "T12:00:00"),
    ("2018-08-29T12:00:00.5+02:00", "2018-08-29", "T12:00:00.5+02:00"),
    ("May 3, 2020 14:30", "May 3, 2020", " 14:30"),
    ("3 May 2020 at 2:30 pm", "3 May 2020", " at 2:30 pm"),
    ("3 May 2020", "3 May 2020", "")])
def test_a_time_after_the_date_is_cut_off_and_said(text, date, time):
    assert split_time(text) == (date, time)
    src_vocab, tgt_vocab = Vocab("0123456789 ,:.+/'-TMapmty"), Vocab("0123456789-")
    r = read_dates(Stub(tgt_vocab, ["2018-08-29"]), src_vocab, tgt_vocab, [text])[0]
    assert r.model_input == date and r.refused is None
    said = [n for n in r.notes if "is not read" in n]
    assert said == ([f"the time {time.strip()!r} is not read: only the date {date!r} is"]
                    if time else [])
