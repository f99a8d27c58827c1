"""The learner's language: every demo, walkthrough and exercise message through Python's
standard ``gettext`` catalogs.

    from minigrad.i18n import translator
    _ = translator("attention")                        # the package whose catalog to read
    print(_("{n} of {total} numbers agree").format(n=3, total=4))

Each package keeps its catalog in ``<package>/locale/zh/LC_MESSAGES/<package>.mo``, compiled
from the reviewed ``.po`` files beside it by ``python -m minigrad.i18n_build --write`` (a
maintainer's script; the tests check that the ``.mo`` is in step, and that every message has
a translation). English is the text in the code, so English needs no catalog.

The language is, in this order: ``set_language`` (the commands' ``--lang en|zh``), else the
locale -- the first of ``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``, ``LANG`` that is set; a
value starting with ``zh`` (``zh_CN.UTF-8``, ``zh_TW``, ``zh``) means Chinese -- else English.

Messages are templates with named fields, filled by ``str.format`` *after* translation, so a
translation may put the fields in any order. Texts defined once as data (an exercise's hints,
a demo's "about") are translated where they are shown: ``_(text)``.
"""
from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

LANGUAGES = ("en", "zh")
_chosen: str | None = None   # set_language's choice; None: from the locale


def language_from_locale(environ=None) -> str:
    """"zh" when the locale asks for Chinese, else "en"."""
    environ = os.environ if environ is None else environ
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name, "")
        if value:
            return "zh" if value.split(":")[0].lower().startswith("zh") else "en"
    return "en"


def set_language(language: str | None) -> str:
    """Choose the language ("en" or "zh"; None: from the locale again). Returns it."""
    global _chosen
    if language is not None and language not in LANGUAGES:
        raise ValueError(f"--lang {language!r}: choose one of {', '.join(LANGUAGES)}")
    _chosen = language
    return current()


def current() -> str:
    return _chosen or language_from_locale()


def add_argument(parser) -> None:
    """``--lang en|zh`` on an ``argparse`` parser; ``apply(args)`` then sets it."""
    _ = translator("minigrad")  # the language is read from argv first where --help is wanted
    parser.add_argument("--lang", choices=LANGUAGES, default=None,
                        help=_("language of the messages: en or zh (default: from the locale)"))


def apply(args) -> None:
    set_language(getattr(args, "lang", None))


@functools.lru_cache(maxsize=None)
def _catalog(package: str, language: str) -> gettext.NullTranslations:
    if language == "en":
        return gettext.NullTranslations()
    folder = Path(__file__).resolve().parent.parent / package / "locale"
    return gettext.translation(package, localedir=str(folder), languages=[language],
                               fallback=True)


def translator(package: str):
    """``_(message)`` for ``package`` ("minigrad", "attention" or "models"), in the language
    chosen when it is called (not when it is made)."""
    def _(message: str) -> str:
        return _catalog(package, current()).gettext(message)
    return _
