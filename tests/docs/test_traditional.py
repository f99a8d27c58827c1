"""README.zh-TW.md is README.zh-CN.md in Traditional characters, made by the reviewed table
(minigrad/locale/zh_tw.tsv, read by minigrad/i18n_build.py): character by character, so every technical
term is the same word in both (局部 stays 局部, 全局 stays 全局), and nothing is left behind."""
import re

from traditional import SIMPLIFIED, TRADITIONAL, convert, load_table


def test_the_traditional_entrance_is_the_conversion_of_the_simplified_one():
    assert TRADITIONAL.read_text(encoding="utf-8") == convert(SIMPLIFIED.read_text(encoding="utf-8"),
                                                              load_table()), (
        "README.zh-TW.md does not follow README.zh-CN.md: python tests/docs/traditional.py --write "
        "(--table first when README.zh-CN.md has new characters; it needs pip install opencc==1.4.2)")


def test_technical_terms_survive_the_conversion():
    """A term becomes the same word in Traditional characters, character by character (no
    phrase of the table rewrites it); 局部 and 全局 are written alike in both scripts."""
    table = load_table()
    traditional = TRADITIONAL.read_text(encoding="utf-8")
    for term in ("局部", "全局", "梯度", "反向传播", "注意力", "上下文向量", "解码器", "编码器", "软件"):
        assert convert(term, table) == "".join(table.get(ch, ch) for ch in term), term
    assert convert("局部", table) == "局部" and convert("全局", table) == "全局"
    simplified = SIMPLIFIED.read_text(encoding="utf-8")
    assert traditional.count("局部") >= simplified.count("局部") > 0
    assert traditional.count("全局") >= simplified.count("全局") > 0
    assert "軟體" not in traditional and "全域" not in traditional        # no regional phrases


def test_the_table_is_characters_and_a_few_reviewed_phrases():
    table = load_table()
    phrases = {k: v for k, v in table.items() if len(k) > 1}
    assert all(len(k) == len(v) for k, v in table.items())             # character for character
    assert 0 < len(phrases) <= 20 and len(table) - len(phrases) > 100
    traditional = TRADITIONAL.read_text(encoding="utf-8").replace("[简体中文]", "")  # its link name
    left = {ch for ch in traditional if ch in table and len(table[ch]) == 1 and table[ch] != ch}
    assert not left - set("".join(table.values())), f"simplified characters left: {sorted(left)}"
    assert re.search(r"\[简体中文\]\(README\.zh-CN\.md\) \| 繁體中文",
                     TRADITIONAL.read_text(encoding="utf-8"))                 # its language bar
