"""The learner's language (``minigrad.i18n``): the locale decides, ``--lang`` overrides, and
every message the code can print has a Chinese translation whose fields are the English ones.

The catalogs are ``<package>/locale/zh/LC_MESSAGES/*.po``, compiled by
``python -m minigrad.i18n_build --write``; a message is found in the code as a literal
``_("...")``, or, for texts kept as data (exercise hints, demo descriptions), by reading the
data the code shows.
"""
import string

import pytest

from minigrad import i18n_build as catalogs
from minigrad import i18n

PACKAGES = catalogs.PACKAGES


@pytest.fixture(autouse=True)
def english_after():
    yield
    i18n.set_language("en")


@pytest.mark.parametrize("env, language", [
    ({}, "en"), ({"LANG": "C.UTF-8"}, "en"), ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "zh_TW.Big5"}, "zh"), ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANGUAGE": "zh_CN:en", "LANG": "en_GB.UTF-8"}, "zh"), ({"LC_MESSAGES": "zh"}, "zh"),
    ({"LANGUAGE": "", "LANG": "zh_CN.UTF-8"}, "zh")])
def test_the_locale_chooses_the_language(env, language):
    assert i18n.language_from_locale(env) == language


def test_set_language_overrides_the_locale_and_refuses_others(monkeypatch):
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    i18n.set_language(None)
    assert i18n.current() == "zh"
    assert i18n.set_language("en") == "en"
    with pytest.raises(ValueError, match="--lang 'fr': choose one of en, zh"):
        i18n.set_language("fr")


def test_a_message_is_translated_when_it_is_shown_not_when_the_translator_is_made():
    _ = i18n.translator("minigrad")
    message = next(iter(catalogs.messages("minigrad")))
    i18n.set_language("en")
    assert _(message) == message
    i18n.set_language("zh")
    assert _(message) == catalogs.messages("minigrad")[message] != message


@pytest.mark.parametrize("package", PACKAGES)
def test_the_compiled_catalog_is_in_step_with_its_po_files(package):
    assert catalogs.mo_path(package).read_bytes() == catalogs.compile_mo(
        catalogs.messages(package)), "run: python -m minigrad.i18n_build --write"


def _fields(text: str) -> list:
    return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


def _untranslated(package: str, texts) -> list:
    have = catalogs.messages(package)
    return [t for t in texts if not have.get(t)]


@pytest.mark.parametrize("package", PACKAGES)
def test_every_message_in_the_code_has_a_translation(package):
    missing = _untranslated(package, catalogs.used_messages(package))
    assert not missing, (f"{len(missing)} message(s) of {package} without a translation, e.g. "
                         f"{missing[:3]}: run python -m minigrad.i18n_build --missing")


@pytest.mark.parametrize("package", PACKAGES)
def test_a_translation_has_the_fields_of_its_message(package):
    for msgid, msgstr in catalogs.messages(package).items():
        assert _fields(msgid) == _fields(msgstr), (msgid, msgstr)


def test_every_exercise_text_has_a_translation():
    from minigrad.exercises import all_exercises
    texts = [t for e in all_exercises()
             for t in (e.title, e.formula, *e.hints, *(m.text for m in e.mistakes), e.nan_hint,
                       e.moral) if t]
    missing = _untranslated("minigrad", texts)
    assert not missing, f"{len(missing)} exercise text(s) without a translation, e.g. {missing[:2]}"


@pytest.mark.parametrize("package", PACKAGES)
def test_the_compiled_catalogs_ship_with_the_package(package):
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(catalogs.ROOT / "setup.cfg")
    shipped = cfg["options.package_data"][package].replace(",", " ").split()
    assert "locale/*/LC_MESSAGES/*.mo" in shipped
    assert catalogs.mo_path(package).relative_to(catalogs.ROOT / package).match(
        "locale/*/LC_MESSAGES/*.mo")


def test_no_library_module_imports_the_catalog_compiler():
    """``minigrad/i18n_build.py`` is a maintainer's tool: the translator reads the compiled
    ``.mo`` files; only the walkthroughs' Chinese writer (a tool too) reads ``.po`` with it."""
    import ast
    allowed = {"minigrad/i18n_build.py", "models/app/tours/zh.py"}
    found = []
    for package in PACKAGES:
        for path in sorted((catalogs.ROOT / package).rglob("*.py")):
            where = path.relative_to(catalogs.ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
                else:
                    continue
                if any(n.startswith("minigrad.i18n_build") for n in names) and where not in allowed:
                    found.append(f"{where}:{node.lineno}")
    assert not found, f"a library module imports the catalog compiler: {found}"
