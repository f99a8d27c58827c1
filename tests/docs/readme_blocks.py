"""The READMEs read as data: sections, code blocks, shell transcripts and the facts of the prose.

The documents are the entrance, README.md, and the guides beside the code (a README.md in each
package, the CLI's manual in models/app/), each with its Chinese twin, README.zh-CN.md, in the
same folder: `TWINS` lists them. A twin may translate only a part of its English file (the
section under one heading, with its subsections): benchmarks/README.zh-CN.md translates the
"How fast" section that used to be in the entrance; its text before the first heading is a
preface of its own.

A README is cut into sections at its headings (the text before the first heading is section 0).
Each section keeps its heading level, its fenced and indented code blocks (verbatim), and its
prose: everything else, tables included. From the prose come the facts that a translation must
keep: the numbers, the inline code spans, the link targets (a link to a Chinese twin counts as
a link to its English file) and the count of table rows.
"""
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGLISH, CHINESE = ROOT / "README.md", ROOT / "README.zh-CN.md"
TRADITIONAL = ROOT / "README.zh-TW.md"  # README.zh-CN.md in Traditional characters (traditional.py here)
GLOSSARY_HEADING = "## 术语表"  # the Chinese README's own last section, with no English twin
GLOSSARY_HEADINGS = (GLOSSARY_HEADING, "## 術語表")  # ... and its Traditional form


def rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


@dataclass(frozen=True)
class Twin:
    english: Path
    chinese: Path
    part: str = ""  # the English heading the Chinese file translates; "" for the whole file

    def name(self) -> str:
        return rel(self.english)


TWINS = [Twin(ENGLISH, CHINESE), Twin(ENGLISH, TRADITIONAL)] + [
    Twin(ROOT / folder / "README.md", ROOT / folder / "README.zh-CN.md")
    for folder in ("minigrad", "attention", "models", "models/app")] + [
    Twin(ROOT / "benchmarks" / "README.md", ROOT / "benchmarks" / "README.zh-CN.md", part="How fast")]
GUIDES = [t.english for t in TWINS[2:]]


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
    path: Path = None

    def where(self) -> str:
        return f"{rel(self.path)}:{self.line}"


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
        links = {t.replace("README.zh-CN.md", "README.md").replace("README.zh-TW.md", "README.md")
                 for t in LINK.findall(bare)}
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
            sec.code.append(CodeBlock(fence.group(2), "\n".join(lines[i + 1:end]), i + 1, path))
            i = end + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()) and \
                not line.lstrip().startswith(("-", "*", "|")) and not _in_list(sec.prose):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            while not lines[end - 1].strip():
                end -= 1
            sec.code.append(CodeBlock("indented", "\n".join(l[4:] for l in lines[i:end]), i + 1,
                                      path))
            i = end
            continue
        heading = HEADING.match(line)
        if heading:
            out.append(Section(len(heading.group(1)), heading.group(2), i + 1))
        else:
            sec.prose.append(line)
        i += 1
    return out


def twin_sections(twin: Twin):
    """(English sections, Chinese sections) that must say the same, in order. For a whole-file
    twin, all of both; for a part, the English section headed `part` and its subsections, and
    the Chinese file after its preface."""
    english, chinese = sections(twin.english), sections(twin.chinese)
    if chinese and "#" * chinese[-1].level + " " + chinese[-1].heading in GLOSSARY_HEADINGS:
        chinese = chinese[:-1]  # the entrance's glossary: its own, with no English twin
    if not twin.part:
        return english, chinese
    start = next(i for i, s in enumerate(english) if s.heading == twin.part)
    end = next((i for i in range(start + 1, len(english))
                if english[i].level <= english[start].level), len(english))
    return english[start:end], chinese[1:]


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
