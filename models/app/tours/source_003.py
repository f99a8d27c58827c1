# %% [markdown]
# # Source 003 — Bahdanau 与 Luong Attention (a walkthrough)
#
# The article's six sections in order, on this project's code and on three models trained
# here (in well under a minute: 10-50 s, with the machine's load), on the same task with the
# same budget: a fixed-summary encoder–decoder, Bahdanau's decoder and Luong's (general score,
# no input feeding, as its §3.1). The task is copying a string of 3–8 symbols
# (`models.app.data`, "copy"), so the right alignment is known: output i should read source
# position i. Each section ends with something to try; where the article and the project
# differ, the cell says so.
#
#     python -m models.app.tours 003       # run it (figures into ./attention-tour)

# %%
import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.draw import grid_svg, heatmap_svg, heatmap_text, line_plot_svg
from minigrad.draw.common import pad
from attention.demos.hierarchical import hierarchical
from attention.multihead import scaled_dot_product_attention
from attention.local import LocalAttention
from attention.scores import ConcatScore, DotScore
from models.app.tours.book import _, note, section, show, try_it
from models.app.compare_models import ModelsConfig, compare_models, models_table
from models.kernels import use_core
from models.app.diagnose import measure
from models.app.progress import say
from models.luong import LuongDecoder
from models.vocab import pad_batch

# %% [markdown]
# ## 1. 从“硬对齐”到“软对齐”Attention机制的诞生背景
#
# The "fixed backpack": one vector for the whole source. Measured: the three models, trained
# alike (`compare_models`), scored by exact match per source length, including lengths 9–12
# that training never showed. The fixed summary falls as the source grows; attention holds up to
# the longest training length (8) — and beyond it both attention models fall as well: they have
# not learned to copy strings longer than any they saw.

# %%
section("1. 从“硬对齐”到“软对齐”Attention机制的诞生背景")
config = ModelsConfig(task="copy", n_train=2000, n_val=200, n_long=200, epochs=6, min_len=3,
                      max_len=8, long_len=12, lr=3e-3, target=0.9)
MODELS = (("fixed summary", dict(decoder="plain", embed=32, hidden=32, dec_hidden=64)),
          ("Bahdanau", dict(decoder="bahdanau", score="additive", embed=32, hidden=32,
                            dec_hidden=64, attn=32)),
          ("Luong", dict(decoder="luong", score="general", embed=32, hidden=32, dec_hidden=64)))
results, trainers, data, long = compare_models(config, log=say, models=MODELS)  # as it trains
print(models_table(results, config.max_len))
lengths = sorted(results["Bahdanau"]["by_length"])
show(line_plot_svg({name: (np.array(lengths), 100 * np.array([r["by_length"][n] for n in lengths]))
                    for name, r in results.items()},
                   title=_("Source 003 §1: exact match by source length "
                           "(9-12: longer than training)"),
                   xlabel=_("source length"), ylabel=_("exact match (%)"), ylim=(0, 100),
                   markers=True),
     "003_s1_bottleneck.svg")
note("by_length", {k: r["by_length"] for k, r in results.items()})
models = {name: use_core(t.model.eval()) for name, t in trainers.items()}  # the composed core
try_it(_("raise epochs in config: the fixed summary improves on short strings, not on long ones."))

# %% [markdown]
# ## 2. Bahdanau Attention联合学习的对齐之道
#
# **2.1** The five steps on the trained model, one decoder step t for one held-out string:
# e_tj = v_aᵀ tanh(W_a s_{t−1} + U_a h_j) (the article writes W_a [s_{t−1}; h_j], the same
# thing with W_a split in two), α_t = softmax(e_t), c_t = Σ_j α_tj h_j,
# s_t = RNN(s_{t−1}, [y_{t−1}; c_t]), p(y_t) = softmax(W_o [s_t; c_t] + b_o).
# **2.2** The initial state: the article says s_0 is the encoder's last state or the mean of
# its states; **this project's decoders start from s_0 = tanh(W · mean_j h_j + b)**
# (`BahdanauDecoder.start`), the mean passed through a learned layer. The start token is
# BOS. The cost: T · S scores of d multiply-adds each per sentence. And the heatmap, which for
# a copy should be the diagonal.

# %%
section("2. Bahdanau Attention联合学习的对齐之道")
text = data.val[0][0]
src, mask = pad_batch([data.src_vocab.encode(text)])     # (1, S): the string, then EOS
bahdanau = models["Bahdanau"]
with mg.no_grad():
    encoded = bahdanau.encoder(src, mask)                # h_j (1, S, 2H)
    state, ctx = bahdanau.decoder.start(encoded)         # s_0, keys, projected keys
    (s1,), (s1_, c1), alpha1 = bahdanau.decoder.step(np.array([1]), state, ctx, 0)  # y_0 = BOS
    p1 = F.softmax(bahdanau.decoder.logits((s1, c1))).data[0]
mean = encoded.annotations.data[0].mean(axis=0)          # mean_j h_j
print(_("  source {text!r}; step 1: α_1 = {alpha}").format(text=text,
                                                           alpha=np.round(alpha1.data[0], 3)))
print(_("  c_1 is {c_width} wide (= 2H: both directions), s_1 {s_width} wide, "
        "p(y_1) sums to {total:.6f}, argmax {argmax!r}").format(
          c_width=c1.shape[1], s_width=s1.shape[1], total=p1.sum(),
          argmax=data.tgt_vocab.decode([int(p1.argmax())])))
print(_("  s_0 = tanh(W·mean + b): {s0} …; mean_j h_j starts {mean} …, the last h_S {last} …")
      .format(s0=np.round(state[0].data[0][:4], 3), mean=np.round(mean[:4], 3),
              last=np.round(encoded.annotations.data[0, -1, :4], 3)))
S, T, d = src.shape[1], len(text) + 1, bahdanau.decoder.attention.score.v.shape[0]
print(_("  cost of the scores for this sentence: T·S·d = {T}·{S}·{d} = {total} multiply-adds "
        "(and the tanh of each)").format(T=T, S=S, d=d, total=T * S * d))
out = bahdanau.greedy(src, T + 2, mask)[0]
chars = list(text) + ["<eos>"]
rows = list(data.tgt_vocab.decode(out.tokens[:-1])) + ["<eos>"]
print(heatmap_text(out.weights, rows, chars,
                   title=_("Bahdanau, trained: α (rows output, columns source)")))
note("bahdanau_diag", float(np.mean(np.diag(out.weights)))
     if out.weights.shape[0] == len(chars) else 0.0)
note("p1_sum", float(p1.sum()))
try_it(_("decode a string of 11 symbols (longer than training) and look where the diagonal "
         "blurs."))

# %% [markdown]
# ## 3. Luong Attention解耦与简化的高效变体
#
# **3.1** Luong's order: first s_t = RNN(s_{t−1}, y_{t−1}) (no context in the input), then the
# score with s_t — dot sᵀh, general sᵀW_a h (this model), concat v_aᵀ tanh(W_a [s_t; h_j]) —
# then h̃_t = tanh(W_c [c_t; s_t]) and p(y_t) = softmax(W_o h̃_t + b_o). **3.2** The "information
# delay" claim: s_t is formed before it has seen c_t, so it may have "decided" already.
# Measured on the two trained models, two ways: (a) does s_t depend on this step's read at
# all? — the gradient of s_t with respect to the keys read at step t; (b) how much of each
# model's prediction survives when every read is replaced by the plain average of the source
# (a temperature of 10¹², `Attention.temperature`, makes α uniform)?

# %%
section("3. Luong Attention解耦与简化的高效变体")


def state_dependence(model, t: int = 2) -> float:
    """‖∂s_t/∂h‖ for the keys h that step t reads (a fresh leaf for that step only)."""
    with mg.no_grad():
        enc = model.encoder(src, mask)
    state, ctx = model.decoder.start(enc)
    y = np.array([1])
    for step in range(t + 1):
        if step == t:
            leaf = mg.tensor(ctx.keys.data, requires_grad=True)
            ctx = ctx._replace(keys=leaf, projected=model.decoder.attention.project_keys(leaf))
        state, features, _ = model.decoder.step(y, state, ctx, step)
        y = np.array([int(F.softmax(model.decoder.logits(features)).data.argmax())])
    return float(np.linalg.norm(mg.grad(state[0].sum(), leaf)))


def token_accuracy(model, temperature: float = 1.0) -> float:
    """Teacher-forced next-token accuracy on the held-out strings, reads at ``temperature``."""
    model.decoder.attention.temperature = temperature
    src_, m = pad_batch([data.src_vocab.encode(s) for s, _ in data.val])
    tgt, tm = pad_batch([data.tgt_vocab.encode(t) for _, t in data.val])
    with mg.no_grad():
        logits, _ = model(src_, tgt, m)
    model.decoder.attention.temperature = 1.0
    return float(((logits.data.argmax(-1) == tgt) & tm).sum() / tm.sum())


with mg.no_grad():
    enc_l = models["Luong"].encoder(src, mask)
    st = models["Luong"].decoder.start(enc_l)[0]
    s_t = models["Luong"].decoder.rnn(np.array([1]), st[1:], st[:1])[0]   # s_1, first
    for name, score in (("dot", DotScore()), ("general", models["Luong"].decoder.attention.score),
                        ("concat", ConcatScore(64, 64, 32, rng=np.random.default_rng(0)))):
        print(f"  3.1 {name:<7} score(s_1, h_j) = "
              f"{np.round(score(s_t, enc_l.annotations).data[0], 3)}")
try:
    DotScore()(np.zeros((1, 3)), enc_l.annotations)
except ValueError as err:
    print(_("  dot needs s and h of one width: {err}").format(err=err))
local = LocalAttention(models["Luong"].decoder.attention.score, window=2)   # local-m, D = 2
c_local, a_local = local(s_t, enc_l.annotations, position=3)          # p_t = t = 3
print(_("  local-m, p_t = 3, D = 2: α = {alpha} (0 outside [1, 5])").format(
      alpha=np.round(a_local.data[0], 3)))
note("local_outside", float(np.delete(a_local.data[0], range(1, 6)).sum()))
gated = LuongDecoder(4, 4, 64, 64, combine="gate", rng=np.random.default_rng(0))
c_t, a_t = models["Luong"].decoder.attention(s_t, enc_l.annotations)
h_gate = gated.attentional(c_t, s_t)                  # z ⊙ tanh(W_c c_t) + (1 − z) ⊙ s_t
print(_("  the gate fusion h̃ = z ⊙ tanh(W_c c) + (1 - z) ⊙ s (combine=\"gate\", untrained): "
        "{h} …").format(h=np.round(h_gate.data[0, :4], 3)))
delay = {}
for name in ("Bahdanau", "Luong"):
    delay[name] = (state_dependence(models[name]), token_accuracy(models[name]),
                   token_accuracy(models[name], 1e12))
    print(_("  {name:<8} ‖∂s_t/∂(keys read at t)‖ = {dependence:.4f};  next-token accuracy "
            "{accuracy:.1%}, with every read the plain average {flat:.1%}").format(
              name=name, dependence=delay[name][0], accuracy=delay[name][1], flat=delay[name][2]))
note("delay", delay)
print(_("  (a) Luong's s_t does not depend on this step's read (0: it is formed first); Bahdanau's"
        "\n  does. (b) Yet neither prediction survives an uninformative read: on this task the"
        "\n  decision is made by the read in both orderings, late fusion or not."))
try_it(_("train Luong with input feeding (dict(..., input_feeding=True)): s_t then sees c_{t-1}."))

# %% [markdown]
# ## 4. 深入对比Bahdanau vs. Luong 的五个关键维度
#
# The article's table, its rows reproduced from what was measured above where a measurement
# exists (order of computation: the gradient of §3; fusion: where c_t enters; scores: the
# library's score classes; cost and quality: the §1 run); the history row is the papers'.

# %%
section("4. 深入对比Bahdanau vs. Luong 的五个关键维度")
rb, rl = results["Bahdanau"], results["Luong"]
table = [(_("papers"), "2014, ICLR 2015", "2015, EMNLP 2015"),
         (_("order (‖∂s_t/∂read_t‖)"),
          _("read, then RNN ({dependence:.3f})").format(dependence=delay['Bahdanau'][0]),
          _("RNN, then read ({dependence:.3f})").format(dependence=delay['Luong'][0])),
         (_("score"), _("additive vᵀtanh(W s + U h)"), _("dot, general sᵀWh, concat")),
         (_("fusion of c_t"), _("early: [y; c_t] into the RNN"),
          _("late: h̃ = tanh(W_c [c_t; s_t])")),
         (_("params / train s"), f"{rb['params']:,} / {rb['seconds']:.1f} s",
          f"{rl['params']:,} / {rl['seconds']:.1f} s"),
         (_("held-out exact"), f"{100 * rb['exact']:.1f}%", f"{100 * rl['exact']:.1f}%"),
         (_("greedy decode / s"), f"{rb['speed']:.0f}", f"{rl['speed']:.0f}"),
         (_("philosophy (the article's)"), _("align and translate jointly"),
          _("decouple: decide, then correct"))]
for row in table:
    print(f"  {pad(row[0], 24)} {pad(row[1], 32)} {row[2]}")  # pad: a CJK character is 2 columns
note("table", table)
print(_("  Measured on one small task and one seed: the article's point that the gap 'is usually"
        "\n  small' is a claim about many tasks, which this does not test."))
try_it(_("run python -m models compare-models for the same comparison on a longer task with a "
         "Transformer."))

# %% [markdown]
# ## 5. 从经典Attention到现代模型的桥梁价值
#
# Luong's general score sᵀW h is the Transformer's query–key product with Q = s and K = W h:
# the same weights come out of `scaled_dot_product_attention` with scale 1. And the article's
# advice to write the forward pass by hand once: here it is, in NumPy, for one Luong read of
# the trained model, against the library.

# %%
section("5. 从经典Attention到现代模型的桥梁价值")
luong = models["Luong"]
with mg.no_grad():
    enc = luong.encoder(src, mask)
    state, ctx = luong.decoder.start(enc)
    rnn = luong.decoder.rnn(np.array([1]), state[1:], state[:1])               # s_1
    c_lib, a_lib = luong.decoder.attention(rnn[0], ctx.keys, mask=ctx.mask, projected=ctx.projected)
s_np, H_np = rnn[0].data[0], enc.annotations.data[0]                          # (H,), (S, 2H)
W = luong.decoder.attention.score.W.data                                      # (H, 2H)
e_np = H_np @ W.T @ s_np                                                      # e_j = sᵀ W h_j
a_np = np.exp(e_np - e_np.max()) / np.exp(e_np - e_np.max()).sum()
c_np = a_np @ H_np
q_k = scaled_dot_product_attention(rnn[0].data[:, None], (H_np @ W.T)[None], H_np[None],
                                   scale=1.0, return_weights=True)[1].data[0, 0]
print(_("  by hand: α = {alpha}").format(alpha=np.round(a_np, 4)))
print(_("  library: α = {alpha};  as Q·K (scale 1): {q_k}").format(
      alpha=np.round(a_lib.data[0], 4), q_k=np.round(q_k, 4)))
note("by_hand_gap", float(max(np.abs(a_np - a_lib.data[0]).max(),
                              np.abs(c_np - c_lib.data[0]).max(),
                              np.abs(q_k - a_np).max())))
for n in (10, 100, 1000):
    print(_("  n = {n:>4} target steps reading a length-{n} source: n² = {scores:,} scores "
            "(O(n²))").format(n=n, scores=n * n))
try_it(_("the exercises (python -m minigrad.exercises) ask for the backward passes of these "
         "reads."))

# %% [markdown]
# ## 6. 实战中的调参经验与扩展思考
#
# **Experience one**, the bidirectional encoder: h_j = [→h_j ; ←h_j]. **Two**, temperature:
# α = softmax(e / T) — *lowering* T sharpens the weights, which means a *smaller* divisor (the
# article's parenthesis says the denominator grows); and attention dropout (`Attention(dropout=)`).
# **Three**, truncated attention (`window=`): weight 0 beyond |j − t| > W, and hierarchical
# attention (`attention.hierarchical`: words into sentence vectors, sentences into a document
# vector), trained on a small task (`python -m attention 003-hierarchical`). **Four**, the
# checks: is the alignment diagonal; are the weights sensible — here, does each output symbol
# read the source position holding that symbol; is the attention lazy, parked on EOS; does the
# gradient reach the source through the attention? (`models.app.diagnose`, what `python -m
# models inspect` reports, measures the last three.)

# %%
section("6. 实战中的调参经验与扩展思考")
print(_("  one: h_j is {width} wide = 2 × {hidden} (forward and backward states)").format(
      width=enc.annotations.shape[2], hidden=luong.encoder.hidden_size))
att = bahdanau.decoder.attention
for T_ in (0.5, 1.0, 2.0):
    att.temperature = T_
    w = bahdanau.greedy(src, len(text) + 3, mask)[0].weights
    print(_("  two: T = {T}: mean largest α {largest:.3f}").format(T=T_,
                                                                  largest=w.max(axis=1).mean()))
    note(f"temperature_{T_}", float(w.max(axis=1).mean()))
att.temperature, att.window = 1.0, 1
w = bahdanau.greedy(src, len(text) + 3, mask)[0].weights
far = max(w[t, j] for t in range(w.shape[0]) for j in range(w.shape[1]) if abs(j - t) > 1)
print(_("  three: window = 1: largest weight beyond |j - t| > 1 is {far}").format(far=far))
note("window_far", float(far))
att.window = None
pairs = data.val[:100]
checks = {}
for name in ("Bahdanau", "Luong"):
    matching = []                                        # sensible: on the symbol being copied
    for s_text, _target in pairs:
        s_ids, m = pad_batch([data.src_vocab.encode(s_text)])
        o = models[name].greedy(s_ids, len(s_text) + 3, m)[0]
        for t, tok in enumerate(o.tokens[:-1]):          # each output symbol before EOS
            matching.append(o.weights[t, s_ids[0] == tok].sum())
    found = measure(models[name], data.src_vocab, data.tgt_vocab, pairs)  # inspect's numbers
    checks[name] = (float(np.mean(matching)), float(found["eos_mass"]), float(found["att_share"]))
    print(_("  four: {name:<8} weight on the source symbol being written {matching:.3f}; "
            "on EOS before the last step {on_eos:.3f}; share of ‖∂L/∂h_j‖ through "
            "attention {through:.1%}").format(name=name, matching=checks[name][0],
                                             on_eos=checks[name][1], through=checks[name][2]))
note("sensible", checks)
b_out = bahdanau.greedy(src, len(text) + 3, mask)[0]
l_out = luong.greedy(src, len(text) + 3, mask)[0]
labels = lambda o: list(data.tgt_vocab.decode(o.tokens[:-1])) + ["<eos>"]  # noqa: E731
show(grid_svg([heatmap_svg(b_out.weights, labels(b_out), chars, title="Bahdanau"),
               heatmap_svg(l_out.weights, labels(l_out), chars, title=_("Luong (general)"))],
              columns=2, title=_("Source 003 §6: where each decoder looked, copying {text!r}")
              .format(text=text)),
     "003_s6_alignments.svg")
han = hierarchical(out_dir=None)                         # experience three, the other half
print(han.text)
show(han.values["figure"], "003_s6_hierarchical.svg")
note("hierarchical", {k: han.values[k]
                      for k in ("accuracy", "sentence_weight", "word_weight", "by_class")})
try_it(_("truncate with window = 0 and see a pure diagonal read; python -m models inspect on a "
         "saved run makes the same checks."))
