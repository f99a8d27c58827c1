"""The learner's language (``minigrad.i18n``): the locale decides, ``--lang`` overrides, and
every message the code can print has a Chinese translation whose fields are the English ones.

The catalogs are ``<package>/locale/zh/LC_MESSAGES/*.po``, compiled by
``python -m minigrad.i18n_build --write``, which also writes the Traditional ``zh_TW`` catalogs
from them through the character table; a message is found in the code as a literal
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
    ({"LANG": "zh_TW.Big5"}, "zh-TW"), ({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LANGUAGE": "zh_CN:en", "LANG": "en_GB.UTF-8"}, "zh"), ({"LC_MESSAGES": "zh"}, "zh"),
    ({"LANGUAGE": "", "LANG": "zh_CN.UTF-8"}, "zh"), ({"LANG": "zh_TW.UTF-8"}, "zh-TW"),
    ({"LANG": "zh_HK.UTF-8"}, "zh-TW"), ({"LANGUAGE": "zh_TW", "LANG": "en_US.UTF-8"}, "zh-TW"),
    ({"LC_ALL": "zh_Hant_MO"}, "zh-TW"), ({"LANGUAGE": "zh-tw:zh_CN"}, "zh-TW"),
    ({"LANG": "zh_SG.UTF-8"}, "zh"), ({"LANG": "zh.UTF-8"}, "zh")])
def test_the_locale_chooses_the_language(env, language):
    assert i18n.language_from_locale(env) == language


def test_set_language_overrides_the_locale_and_refuses_others(monkeypatch):
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    i18n.set_language(None)
    assert i18n.current() == "zh"
    assert i18n.set_language("en") == "en"
    with pytest.raises(ValueError, match="--lang 'fr': choose one of en, zh, zh-TW"):
        i18n.set_language("fr")


def test_a_message_is_translated_when_it_is_shown_not_when_the_translator_is_made():
    _ = i18n.translator("minigrad")
    message = next(iter(catalogs.messages("minigrad")))
    i18n.set_language("en")
    assert _(message) == message
    i18n.set_language("zh")
    assert _(message) == catalogs.messages("minigrad")[message] != message


@pytest.mark.parametrize("language", ["zh", "zh-TW"])
@pytest.mark.parametrize("package", PACKAGES)
def test_the_compiled_catalog_is_in_step_with_its_po_files(package, language):
    assert catalogs.mo_path(package, language).read_bytes() == catalogs.compile_mo(
        catalogs.catalog(package, language)), "run: python -m minigrad.i18n_build --write"


def _not_traditional(text: str) -> set:
    """The Chinese characters of ``text`` that Big5, Taiwan's Traditional character set, has
    no code for: Simplified ones (这, 个, 们, 复 ...); ``set()`` for Traditional text."""
    def big5(ch):
        try:
            return bool(ch.encode("big5"))
        except UnicodeEncodeError:
            return False
    return {ch for ch in text if "\u4e00" <= ch <= "\u9fff" and not big5(ch)}


def test_the_big5_probe_tells_the_scripts_apart():
    assert _not_traditional("这个梯度复制过去") == set("这个过")  # 复 is in Big5 (a name)
    assert not _not_traditional("這個梯度複製過去") and not _not_traditional("pass ✓ √d")


@pytest.mark.parametrize("package", PACKAGES)
def test_the_traditional_catalog_is_the_simplified_one_in_traditional_characters(package):
    """Every reviewed message, converted by the table (a character it lacks would be left
    Simplified, which Big5 cannot write), with the same fields; the words themselves unchanged."""
    simplified, traditional = catalogs.messages(package), catalogs.catalog(package, "zh-TW")
    assert simplified.keys() == traditional.keys()
    left = {ch for text in traditional.values() for ch in _not_traditional(text)}
    assert not left, f"Simplified characters the table lacks: {sorted(left)} (python " \
        "tests/docs/traditional.py --table, with OpenCC: pip install -e '.[maint]')"
    changed = [k for k in simplified if simplified[k] != traditional[k]]
    assert len(changed) > len(simplified) // 2
    for msgid in changed:
        assert len(simplified[msgid]) == len(traditional[msgid])  # character by character
        assert _fields(traditional[msgid]) == _fields(msgid)


def test_zh_tw_speaks_traditional_and_the_others_do_not(monkeypatch):
    _ = i18n.translator("minigrad")
    message = "the exercises, easy to hard, and which are done"
    monkeypatch.setenv("LANGUAGE", "zh_TW")
    i18n.set_language(None)
    assert i18n.current() == "zh-TW" and _(message) == "由易到難列出練習，以及哪些已經完成"
    monkeypatch.setenv("LANGUAGE", "zh_HK")
    assert _(message) == "由易到難列出練習，以及哪些已經完成"
    i18n.set_language("zh")
    assert _(message) == "由易到难列出练习，以及哪些已经完成"
    i18n.set_language("en")
    assert _(message) == message


def _run(main, argv, capsys) -> str:
    try:
        main(argv)
    except SystemExit:  # --help
        pass
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["exercises --help", "models --help", "attention --list",
                                     "minigrad", "models translate --help"])
def test_every_cli_speaks_traditional_under_zh_tw(monkeypatch, capsys, command):
    """``--lang zh-TW`` (and a zh_TW locale) prints what ``--lang zh`` prints, in Traditional
    characters: every CLI offers the choice, and its help is translated."""
    import minigrad.__main__
    import attention.__main__
    import minigrad.exercises.__main__
    import models.app.cli
    main = {"exercises": minigrad.exercises.__main__.main, "models": models.app.cli.main,
            "attention": attention.__main__.main, "minigrad": minigrad.__main__.main}
    program, *argv = command.split()
    monkeypatch.setenv("COLUMNS", "100")
    simplified = _run(main[program], argv + ["--lang", "zh"], capsys)
    traditional = _run(main[program], argv + ["--lang", "zh-TW"], capsys)
    assert _not_traditional(simplified) and not _not_traditional(traditional)
    assert traditional == catalogs.traditional(simplified, catalogs.load_table()).replace(
        "--lang zh ", "--lang zh-TW ")
    monkeypatch.setenv("LANG", "zh_TW.UTF-8")
    for name in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    assert _run(main[program], argv, capsys) == traditional


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
    for language in ("zh", "zh-TW"):
        assert catalogs.mo_path(package, language).relative_to(catalogs.ROOT / package).match(
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


def _broken_catalog(tmp_path, monkeypatch, kind):
    """minigrad's catalog, copied under ``tmp_path`` and broken in one way."""
    folder = tmp_path / "minigrad" / "locale" / "zh" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    mo, good = folder / "minigrad.mo", catalogs.mo_path("minigrad").read_bytes()
    if kind == "fifo":
        import os
        os.mkfifo(mo)
    else:
        mo.write_bytes({"truncated": good[:len(good) // 3], "corrupt": b"\x00" * 64,
                        "huge": good + b"\0" * i18n.MAX_CATALOG}[kind])
    monkeypatch.setattr(i18n, "ROOT", tmp_path)
    i18n._catalog.cache_clear()
    monkeypatch.setattr(i18n, "_warned", set())


@pytest.mark.parametrize("kind", ["truncated", "corrupt", "fifo", "huge"])
def test_an_unreadable_catalog_means_english_and_one_warning(tmp_path, monkeypatch, capsys, kind):
    _broken_catalog(tmp_path, monkeypatch, kind)
    _ = i18n.translator("minigrad")
    i18n.set_language("zh")
    try:
        assert [_("pass"), _("FAIL"), _("pass")] == ["pass", "FAIL", "pass"]
    finally:
        i18n._catalog.cache_clear()
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("warning: cannot read the zh messages (")
    assert err.endswith("; speaking English\n")


@pytest.mark.parametrize("bad", ["{nosuch} 通过", "{0} 通过", "{n:q} 通过", "{name.x} 通过"])
def test_a_translation_that_does_not_fit_its_fields_gives_english(monkeypatch, capsys, bad):
    monkeypatch.setattr(i18n, "_warned", set())
    monkeypatch.setattr(i18n, "_catalog", lambda package, language: type(
        "Catalog", (), {"gettext": lambda self, message: bad})())
    i18n.set_language("zh")
    text = i18n.translator("minigrad")("{name}: {n} of them")
    assert text.format(name="tanh", n=3) == "tanh: 3 of them"
    assert text.format(name="tanh", n=3) == "tanh: 3 of them"
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "English instead" in err


@pytest.mark.parametrize("encoding, language", [("ascii", "en"), ("latin-1", "en"),
                                                ("utf-8", "zh"), ("gb18030", "zh")])
def test_chinese_only_where_stdout_can_write_it(monkeypatch, encoding, language):
    import io
    import sys
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO(), encoding=encoding))
    i18n.set_language("zh")
    assert i18n.current() == language
    assert (i18n.translator("minigrad")("pass") == "pass") == (language == "en")
