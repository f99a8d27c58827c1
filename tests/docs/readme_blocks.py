"""The READMEs read as data: sections, code blocks, shell transcripts and the facts of the prose.

A README is cut into sections at its headings (the text before the first heading is section 0).
Each section keeps its heading level, its fenced and indented code blocks (verbatim), and its
prose: everything else, tables included. From the prose come the facts that a translation must
keep: the numbers, the inline code spans, the link targets and the count of table rows.
"""
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGLISH, CHINESE = ROOT / "README.md", ROOT / "README.zh-CN.md"
GLOSSARY_HEADING = "## 术语表"  # the Chinese README's own last section, with no English twin

FENCE = re.compile(r"^(```+)\s*(\S*)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*\S)\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# A number as prose writes it: 7, 0.5, 1e-6, 99 (of 99%), 2.3 (of §2.3). Not the digits inside
# a name (float64, h_j1, head_1); ASCII-only look-behind, so "共12个" still yields 12.
NUMBER = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass
class CodeBlock:
    lang: str      # "python", "sh", "" (plain); "indented" for a 4-space block
    text: str
    line: int      # 1-based line of the block's first line in the file


@dataclass
class Section:
    level: int     # 0 for the text before the first heading
    heading: str
    line: int
    code: list = field(default_factory=list)
    prose: list = field(default_factory=list)  # lines

    def facts(self) -> dict:
        """What a faithful translation of this section keeps: numbers (as a multiset), inline
        code spans and link targets (as sets), and the number of table rows."""
        text = "\n".join([self.heading] + self.prose)
        spans = {" ".join(m.group(2).split()) for m in INLINE_CODE.finditer(text)}
        bare = INLINE_CODE.sub(" ", text)
        links = {t for t in LINK.findall(bare) if not t.startswith("README")}
        bare = LINK.sub(" ", bare)
        return {"numbers": sorted(Counter(NUMBER.findall(bare)).elements()),
                "inline code": sorted(spans), "links": sorted(links),
                "table rows": sum(1 for l in self.prose if l.lstrip().startswith("|"))}


def sections(path: Path) -> list:
    """The file cut at its headings; code blocks and prose kept per section."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [Section(0, "", 1)], 0
    while i < len(lines):
        line, sec = lines[i], out[-1]
        fence = FENCE.match(line)
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith(fence.group(1))
                       and not lines[j].strip("`").strip())
            sec.code.append(CodeBlock(fence.group(2), "\n".join(lines[i + 1:end]), i + 1))
            i = end + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()) and \
                not line.lstrip().startswith(("-", "*", "|")) and not _in_list(sec.prose):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():
                end -= 1
            sec.code.append(CodeBlock("indented", "\n".join(l[4:] for l in lines[i:end]), i + 1))
            i = end
            continue
        heading = HEADING.match(line)
        if heading:
            out.append(Section(len(heading.group(1)), heading.group(2), i + 1))
        else:
            sec.prose.append(line)
        i += 1
    return out


def _in_list(prose: list) -> bool:
    """True when the last non-blank prose line belongs to a list item (an indented line after
    it continues the item; it is not a code block)."""
    for l in reversed(prose):
        if l.strip():
            return l.startswith(("- ", "* ", "  "))
    return False


def code_blocks(path: Path, lang: str) -> list:
    return [b for s in sections(path) for b in s.code if b.lang == lang]


@dataclass
class Step:
    command: str
    output: list   # the lines shown after the command, up to the next "$ " line


def transcript(block: CodeBlock):
    """The steps of a block that starts with "$ command", or None for any other block."""
    if not block.text.startswith("$ "):
        return None
    steps = []
    for line in block.text.split("\n"):
        if line.startswith("$ "):
            steps.append(Step(line[2:], []))
        else:
            steps[-1].output.append(line)
    return steps
