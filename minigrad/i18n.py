"""The learner's language: every demo, walkthrough and exercise message through Python's
standard ``gettext`` catalogs.

    from minigrad.i18n import translator
    _ = translator("attention")                        # the package whose catalog to read
    print(_("{n} of {total} numbers agree").format(n=3, total=4))

Each package keeps its catalog in ``<package>/locale/zh/LC_MESSAGES/<package>.mo``, compiled
from the reviewed ``.po`` files beside it by ``python -m minigrad.i18n_build --write`` (a
maintainer's script; the tests check that the ``.mo`` is in step, and that every message has
a translation); the same command writes ``locale/zh_TW/...``, the Simplified catalog in
Traditional characters through the project's character table. English is the text in the
code, so English needs no catalog.

The language is, in this order: ``set_language`` (the commands' ``--lang en|zh|zh-TW``), else
the locale -- the first of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set; a
value starting with ``zh`` means Chinese: Traditional for Taiwan, Hong Kong and Macau
(``zh_TW``, ``zh_HK``, ``zh_MO``, ``zh_Hant``), else Simplified (``zh_CN.UTF-8``, ``zh``) --
else English.

Messages are templates with named fields, filled by ``str.format`` *after* translation, so a
translation may put the fields in any order. Texts defined once as data (an exercise's hints,
a demo's "about") are translated where they are shown: ``_(text)``.
"""
from __future__ import annotations

import functools
import gettext
import os
import sys
from pathlib import Path

LANGUAGES = ("en", "zh", "zh-TW")  # zh-TW: Chinese in Traditional characters
_chosen: str | None = None   # set_language's choice; None: from the locale
_warned: set = set()         # the warnings printed (each once)
MAX_CATALOG = 1 << 24        # bytes: a catalog, read whole
ROOT = Path(__file__).resolve().parent.parent  # the packages' folder


def language_from_locale(environ=None) -> str:
    """"zh-TW" or "zh" when the locale asks for Chinese, else "en"."""
    environ = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "").split(":")[0].lower().replace("-", "_")
        if value:
            if not value.startswith("zh"):
                return "en"
            return "zh-TW" if value[3:5] in ("tw", "hk", "mo") or "hant" in value else "zh"
    return "en"


def set_language(language: str | None) -> str:
    """Choose the language (one of ``LANGUAGES``; None: from the locale again). Returns it."""
    global _chosen
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"--lang {language!r}: choose one of {', '.join(LANGUAGES)}")
    _chosen = language
    return current()


def current() -> str:
    """The language chosen, or English where stdout cannot write it (Chinese under an ASCII or
    Latin-1 locale would print as "??")."""
    try:
        "中文".encode(getattr(sys.stdout, "encoding", None) or "utf-8")
        return _chosen or language_from_locale()
    except (UnicodeEncodeError, LookupError):
        return "en"


def add_argument(parser) -> None:
    """``--lang en|zh|zh-TW`` on an ``argparse`` parser; ``apply(args)`` then sets it."""
    _ = translator("minigrad")  # the language is read from argv first where --help is wanted
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=_("language of the messages: en, zh (Simplified) or zh-TW "
                               "(Traditional); default: from the locale"))


def apply(args) -> None:
    set_language(getattr(args, "lang", None))


def _warn(line: str) -> None:
    if line not in _warned and sys.stderr is not None:  # each warning once
        _warned.add(line)
        print(f"warning: {line}", file=sys.stderr)


@functools.lru_cache(maxsize=None)
def _catalog(package: str, language: str) -> gettext.NullTranslations:
    """The catalog; English, with one warning, when it is unreadable (truncated, corrupt, no
    regular file, larger than ``MAX_CATALOG``)."""
    folder = language.replace("-", "_")  # zh-TW: locale/zh_TW
    path = ROOT / package / "locale" / folder / "LC_MESSAGES" / f"{package}.mo"
    if language == "en" or not os.path.lexists(path):
        return gettext.NullTranslations()
    try:
        if not path.is_file() or path.stat().st_size > MAX_CATALOG:  # a FIFO would block
            raise OSError(f"not a regular file of at most {MAX_CATALOG >> 20} MiB")
        with open(path, "rb") as f:
            return gettext.GNUTranslations(f)
    except Exception as e:  # any flaw of the file: OSError, struct.error, UnicodeError, ...
        _warn(f"cannot read the {language} messages ({path}: {e}); speaking English")
        return gettext.NullTranslations()


class _Translation(str):
    """A translated template; ``format`` falls back to the English one (warning once) when
    the translation names a field the code does not give, or is no valid template."""

    def format(self, *args, **kwargs) -> str:
        try:
            return str.format(self, *args, **kwargs)
        except (KeyError, IndexError, ValueError, AttributeError) as e:
            _warn(f"the translation of {self.english!r} does not fit ({e!r}); English instead")
            return self.english.format(*args, **kwargs)


def translator(package: str):
    """``_(message)`` for ``package`` ("minigrad", "attention" or "models"), in the language
    chosen when it is called (not when it is made)."""
    def _(message: str) -> str:
        text = _catalog(package, current()).gettext(message)
        if text == message:
            return text
        translated = _Translation(text)
        translated.english = message
        return translated
    return _
