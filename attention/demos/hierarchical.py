"""Source 003 §6, experience three: hierarchical attention on a small task, trained in seconds.

A document is K = 4 sentences of L = 5 words. Every word is filler (ids 0-7) except one
content word (ids 8-11), at a random sentence and position; the label is which content word
it is. A model that reads the document well has to find that word: the word-level attention
of its sentence should land on it, and the sentence-level attention on its sentence. The
model: word vectors E[x] plus a position vector, ``HierarchicalAttention``, a linear layer to
the 4 classes; Adam on the cross-entropy. Measured on held-out documents: accuracy, the mean
sentence weight β on the sentence holding the content word, and the mean word weight α on
the word itself (chance: 1/K = 0.25 and 1/L = 0.2). Documents may have padding: the last
sentence of every other document is 2 words short, masked.

Shape letters: B documents, K sentences, L words, D width.
"""
from __future__ import annotations

import numpy as np

from attention.demos.common import DemoResult, svg_path
from attention.hierarchical import HierarchicalAttention
from minigrad import functional as F
from minigrad import no_grad, optim
from minigrad.draw import grid_svg, heatmap_svg, heatmap_text
from minigrad.i18n import translator
from minigrad.nn import Embedding, Linear, Module, Parameter

_ = translator("attention")

K, L, FILLER, CONTENT = 4, 5, 8, 4           # sentences, words, filler ids 0-7, content ids 8-11


def documents(rng: np.random.Generator, n: int) -> tuple:
    """(ids (n, K, L), mask (n, K, L), labels (n,), where (n, 2): sentence and word of the
    content word)."""
    ids = rng.integers(0, FILLER, (n, K, L))
    mask = np.ones((n, K, L), bool)
    mask[1::2, -1, -2:] = False                                       # padding in half of them
    where = np.stack([rng.integers(0, K, n), rng.integers(0, L, n)], axis=1)
    where[(where[:, 0] == K - 1) & (np.arange(n) % 2 == 1), 1] %= L - 2  # never on padding
    labels = rng.integers(0, CONTENT, n)
    ids[np.arange(n), where[:, 0], where[:, 1]] = FILLER + labels
    return ids, mask, labels, where


class DocumentModel(Module):
    def __init__(self, rng: np.random.Generator, dim: int = 16, attn: int = 16):
        self.embed = Embedding(FILLER + CONTENT, dim, rng=rng)
        self.pos = Parameter(0.1 * rng.standard_normal((L, dim)))     # (L, D)
        self.han = HierarchicalAttention(dim, attn, rng=rng)
        self.out = Linear(dim, CONTENT, rng=rng)

    def forward(self, ids, mask) -> tuple:
        d, alpha, beta = self.han(self.embed(ids) + self.pos, mask)   # (B, D), (B, K, L), (B, K)
        return self.out(d), alpha, beta                               # (B, classes)


def train(seed: int = 0, steps: int = 300, batch: int = 32) -> tuple:
    """The trained model and its held-out figures {accuracy, sentence_weight, word_weight}."""
    rng = np.random.default_rng(seed)
    model = DocumentModel(rng)
    opt = optim.Adam(model.parameters(), lr=0.02)
    for _ in range(steps):
        ids, mask, labels, _ = documents(rng, batch)
        logits, _, _ = model(ids, mask)
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    ids, mask, labels, where = documents(np.random.default_rng(seed + 1), 500)
    with no_grad():
        logits, alpha, beta = model(ids, mask)
    n = np.arange(len(ids))
    on_sentence = beta.data[n, where[:, 0]]                          # (500,): β on the evidence
    on_word = alpha.data[n, where[:, 0], where[:, 1]]                # (500,): α on the evidence
    # a document of class 1, of class 0
    first = [int(np.flatnonzero(labels == c)[0]) for c in (1, 0)]
    return model, {"accuracy": float(np.mean(logits.data.argmax(-1) == labels)),
                   "sentence_weight": float(on_sentence.mean()),
                   "word_weight": float(on_word.mean()),
                   "by_class": [(float(on_sentence[labels == c].mean()),
                                 float(on_word[labels == c].mean()))
                                for c in range(CONTENT)],
                   "examples": [(ids[i], labels[i], alpha.data[i], beta.data[i], where[i])
                                for i in first]}


def hierarchical(out_dir=None, seed: int = 0) -> DemoResult:
    """Train, then print the weights by class and draw two held-out documents' two levels."""
    figures = train(seed)[1]
    words = [f"w{j + 1}" for j in range(L)]
    lines = [_("Source 003 §6, experience three: hierarchical attention (word level, then "
               "sentence level)"),
             _("  {sentences} sentences of {words} words; one content word per document, the "
               "label; trained 300 Adam steps").format(sentences=K, words=L),
             _("  held-out accuracy {accuracy:.1%}; mean weight on the evidence: sentence β "
               "{beta:.3f} (chance 0.25), word α {alpha:.3f} (chance 0.2); by class (the content "
               "word's id):").format(accuracy=figures["accuracy"], beta=figures["sentence_weight"],
                                     alpha=figures["word_weight"])]
    lines += [_("    class {c} (id {id}): β {beta:.3f}, α {alpha:.3f}").format(
                  c=c, id=FILLER + c, beta=b, alpha=a)
              for c, (b, a) in enumerate(figures["by_class"])]
    on = [c for c, (b, a) in enumerate(figures["by_class"]) if b > 0.9]
    off = [c for c in range(CONTENT) if c not in on]
    lines.append(_("  Are the weights sensible (003 §6, experience four)? For class(es) {on} "
                   "β > 0.9: on the evidence.").format(on=on))
    if off:  # by elimination: named when none of the other content words is found
        lines.append(_("  For class(es) {off} they are not: the model can name such a class when "
                       "none of the others\n  is found (accuracy {accuracy:.1%}), and its "
                       "attention then points elsewhere (attention as\n  explanation, 000 §7 Q3)."
                       ).format(off=off, accuracy=figures["accuracy"]))
    lines.append("")
    pictures = []
    for ids, label, alpha, beta, where in figures["examples"]:
        rows = [f"s{k + 1}:{beta[k]:.2f}" for k in range(K)]
        title = _("class {label}: content word {word} of sentence {sentence}; rows α, with each "
                  "sentence's β").format(label=label, word=where[1] + 1, sentence=where[0] + 1)
        lines += [f"  {title}", heatmap_text(alpha, rows, words), ""]
        pictures += [heatmap_svg(alpha, rows, words,
                                 title=_("class {label}: word level α").format(label=label)),
                     heatmap_svg(beta[:, None], [f"s{k + 1}" for k in range(K)], ["β"],
                                 title=_("sentence level β"))]
    files, path = [], svg_path(out_dir, "003_hierarchical.svg")
    figures["figure"] = grid_svg(pictures, columns=2, path=path, title=_(
        "Source 003 §6: hierarchical attention on two held-out documents"))
    if path is not None:
        files.append(path)
        lines.append(_("wrote {path}").format(path=path))
    return DemoResult("\n".join(lines), figures, files)
