# %% [markdown]
# # Source 004 — Attention：模型怎样决定该看哪里？ (a walkthrough)
#
# The article's eight sections in order. Each formula is computed by this project's own code
# (`attention/`, `models/`, `minigrad/`), each number the article prints is printed beside
# ours (`check`: ours rounded to the article's digits, ✓ when they agree), each figure is drawn
# (inline in a notebook; as an SVG file when run as a script), and each section ends with
# something to try.
#
#     python -m models.app.tours 004       # run it (figures into ./attention-tour)
#     python -m models.app.tours 004 --lang zh   # in Chinese: the same code, Chinese messages
#     jupytext --to notebook models/app/tours/source_004.py   # or open it in VS Code
#     python -m models.app.tours.zh 004    # writes source_004_zh.py, its Markdown in Chinese
#
# Where this project differs from the article, the cell says so.

# %%
import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.draw import grid_svg, heatmap_svg, heatmap_text, line_plot_svg
from minigrad.gradcheck import numerical_grad
from attention.demos.source_004 import SOURCES, STATES, TOKENS, article_scorer, read_at
from attention.hard import hard_read
from attention.read import attend, read, score_grad
from attention.scores import DotScore, GeneralScore
from models.app.tours.book import _, check, note, section, show, try_it
from models.decoders import BahdanauDecoder
from models.recurrent import BiGRUEncoder
from models.recurrent import GRUCell
from models.seq2seq import decoder_inputs, masked_cross_entropy

# %% [markdown]
# ## 一、从人的注意力，到按需要读取信息
#
# No formula yet: the section ends with a design requirement — *keep a set of available
# information, let the current task or state decide how to read it, use what was read for
# what comes next.* The rest of the article builds exactly that; §6 shows the same content
# read two ways by two states.

# %%
section("一、从人的注意力，到按需要读取信息")
print(_("  keep the information; let the current state decide how to read it (built in §3-§6)"))
try_it(_("after §6, change STATES['A'] and see which source gains weight: the content is the "
         "same, the read is not."))

# %% [markdown]
# ## 二、没有 Attention，模型也可以处理上下文
#
# The recurrence h_j = f_enc(h_{j−1}, e_src(x_j)) — here f_enc is a `GRUCell` (PyTorch's
# equations) — and the fixed summary c = h_T that a basic encoder–decoder hands over.

# %%
section("二、没有 Attention，模型也可以处理上下文")
rng = np.random.default_rng(0)
embed = mg.nn.Embedding(3, 4, rng=rng)                   # e_src: one vector per token
cell = GRUCell(4, 3, rng=rng)                            # f_enc
ids = np.array([[0, 1, 2]])                              # "I like cats" (B = 1, T = 3)
h, states = None, []
for j in range(3):
    h = cell(embed(ids[:, j]), h)                        # h_j = f_enc(h_{j-1}, e_src(x_j))
    states.append(h.data[0])
    print(f"  h_{j + 1} ({TOKENS[j]:<4}) = {np.round(h.data[0], 4)}")
summary = states[-1]                                     # c = h_T
print(_("  c = h_T = {c}: one vector of width 3, whatever the source length").format(
    c=np.round(summary, 4)))
note("summary_is_last_state", bool(np.array_equal(summary, h.data[0])))
# This project's PlainDecoder hands over [→h_T ; ←h_1], the last state of each direction
# of a bidirectional encoder: the same idea, one fixed vector, read at every decoder step.
try_it(_("make ids longer (say [[0, 1, 2, 1, 0]], ids 0-2) and loop over ids.shape[1]: c "
         "changes, and the whole source must still fit in these 3 numbers."))

# %% [markdown]
# ## 三、把“只能使用摘要”改成“可以重新读取”
#
# Keep h_1 … h_T; at every decoder step form a new context from them. The article's figure
# compares the two architectures; here it is drawn from the computation itself: for each
# read, *how much of each source position goes into the vector the decoder gets?* With a fixed
# summary c = h_T, every read is the last position (weight 1); with attention, the weights
# over all positions, recomputed from the state — here three states s = −1, 0, 1 reading the
# §6 sources (`read_at`: the §6 scorer and `read`). An architecture sketch, as the article
# says, not a learned alignment.

# %%
section("三、把“只能使用摘要”改成“可以重新读取”")
probe = [-1.0, 0.0, 1.0]                                 # three decoder states s
alpha = read_at(probe)[1]                                # (3, S): α for each state
fixed = np.zeros((len(probe), 3))
fixed[:, -1] = 1.0                                       # c = h_T for every state
rows, cols = [f"s={s:g}" for s in probe], list(TOKENS)
print(heatmap_text(fixed, rows, cols, title=_("fixed summary c = h_T (every read the same)")))
print(heatmap_text(alpha, rows, cols, title=_("re-reading: α_j(s), new for every state")))
show(grid_svg([heatmap_svg(fixed, rows, cols, title=_("fixed summary c = h_T")),
               heatmap_svg(alpha, rows, cols, title=_("attention: α_j(s) over h_1..h_T"))],
              columns=2,
              title=_("Source 004 §3: one fixed summary vs re-reading every source position")),
     "004_s3_architectures.svg")
note("alpha_rows", alpha)
try_it(_("add a state s = 0.5 to probe: the summary row is the same again, the attention row "
         "is new."))

# %% [markdown]
# ## 四、从当前需求，到一组读取权重
#
#     e_tj = a_φ(s_{t−1}, h_j),   α_tj = exp(e_tj) / Σ_k exp(e_tk),   c_t = Σ_j α_tj h_j
#
# On the article's §6 numbers (state A). The weights are positive and sum to 1; the context is
# a vector like the h_j, with a negative component — not a probability. Then two things the
# article says in words: softmax is not the only normaliser (here **sparsemax**, the
# projection onto the simplex, beside it — it gives exact zeros), and a hard read (argmax)
# passes no gradient to the scores.

# %%
section("四、从当前需求，到一组读取权重")
h = SOURCES[None]                                        # (1, S, D): h_1, h_2, h_3
e = article_scorer()(np.array([[STATES["A"]]]), h)       # e_j = a_φ(s, h_j) (1, 3)
c, a = read(e, h)                                        # α = softmax(e), c = Σ α_j h_j
print(_("  α = {alpha}  (all > 0, Σ = {total:.15f})").format(alpha=np.round(a.data[0], 4),
                                                             total=a.data.sum()))
print(_("  c = {c}  (a vector like h_j; its second component is negative)").format(
    c=np.round(c.data[0], 6)))
print(_("  α has {n} entries, one per source position — not one per target word").format(
    n=a.shape[-1]))
raw = (e.data[0][:, None] * SOURCES).sum(axis=0)         # Σ_j e_j h_j, no normaliser
print(_("  the raw scores as weights: Σ_j e_j h_j = {raw} (they sum to {total:.4f} and could "
        "be negative: not a convex combination)").format(raw=np.round(raw, 4),
                                                          total=e.data.sum()))
p = F.sparsemax(e)
print(_("  sparsemax(e) = {p}  (Σ = {total:g}: a distribution with an exact zero)").format(
    p=np.round(p.data[0], 4), total=p.data.sum()))
for name, normalise in (("softmax", F.softmax), ("sparsemax", F.sparsemax)):
    x = mg.tensor(e.data, requires_grad=True)
    jac = np.stack([mg.grad(normalise(x)[0, i], x)[0] for i in range(3)])  # ∂α_i/∂e_j
    print(_("  ∂α/∂e ({name}), row i = ∂α_i/∂e:").format(name=name))
    for row in jac:
        print("    " + "  ".join(f"{x:+.4f}" for x in row))
    note(f"jacobian_{name}", jac)
x, values = mg.tensor(e.data, requires_grad=True), mg.tensor(h, requires_grad=True)
hard_c, hard_w = hard_read(x, values)                    # c = h_{j*}, j* = argmax_j e_j
(hard_c * np.array([1.0, 0.5])).sum().backward()         # L = g·c
print(_("  hard read: picks {token!r}, c = {c}; no gradient reaches e (x.grad is {grad}: the "
        "scores are not in its graph; the true derivative is 0 almost everywhere), "
        "∂L/∂h = {dh}").format(token=TOKENS[int(hard_w.data.argmax())], c=hard_c.data[0],
                                grad=x.grad, dh=values.grad[0].tolist()))
note("hard_grad", x.grad)
note("sparsemax_A", p.data[0].copy())
try_it(_("in a softmax read every source keeps some weight; find a state s where sparsemax "
         "gives 'I' weight 0 (or 'cats'; 'like' never reaches 0 here)."))

# %% [markdown]
# ## 五、早期 Attention 怎样计算“匹配”？
#
#     e_tj = vᵀ tanh(W_s s_{t−1} + W_h h_j + b),   W_s (d_a × d_s), W_h (d_a × d_h), v, b (d_a)
#
# `AdditiveScore` (its W_q, W_k are the article's W_s, W_h) against the formula typed out in
# NumPy; then the ablation without tanh: e_j = vᵀW_s s + vᵀb + vᵀW_h h_j, where the state
# adds the same number to every score and softmax ignores it — the weights stop depending on
# the state.

# %%
section("五、早期 Attention 怎样计算“匹配”？")
score = article_scorer()
W_s, W_h, v, b = (p.data for p in (score.W_q, score.W_k, score.v, score.b))
for s in (-1.0, 1.0):
    by_hand = np.tanh(W_s @ [s] + SOURCES @ W_h.T + b) @ v          # (S,): the formula
    ours = score(np.array([[s]]), h).data[0]
    print(_("  s = {s:+g}: AdditiveScore {ours}   formula {by_hand}").format(
        s=s, ours=np.round(ours, 4), by_hand=np.round(by_hand, 4)))
    note(f"score_formula_gap_{s:+g}", float(np.abs(ours - by_hand).max()))
grid = np.linspace(-3.0, 3.0, 61)
with_tanh = read_at(grid)[1]                             # (61, S)
flat = article_scorer(activation=None)                  # e_j = vᵀW_s s + vᵀb + vᵀW_h h_j
without = np.stack([F.softmax(flat(np.array([[s]]), h)).data[0] for s in grid])  # (61, S)
print(_("  without tanh, over s in [-3, 3]: weights vary by at most {spread:.1e}: {row} "
        "everywhere").format(spread=np.ptp(without, axis=0).max(), row=np.round(without[0], 4)))
print(_("  (here they are even equal between sources: vᵀW_s = 0 and vᵀW_h h_j = h_j1 - h_j2 = 2 "
        "for\n  every j; in general they are softmax_j(vᵀW_h h_j): fixed by the sources, blind "
        "to s)"))
note("ablation_spread", float(np.ptp(without, axis=0).max()))
series = {_("tanh: α({token})").format(token=t): (grid, with_tanh[:, j])
          for j, t in enumerate(TOKENS)}
series.update({_("no tanh: α({token})").format(token=t): (grid, without[:, j])
               for j, t in enumerate(TOKENS)})
show(line_plot_svg(series, title=_("Source 004 §5: the read with and without tanh"),
                   xlabel=_("decoder state s"), ylabel=_("weight α_j"), ylim=(0.0, 0.6)),
     "004_s5_with_without_tanh.svg")
try_it(_("set flat.v.data[...] = [1, 0] and rerun the cell: without tanh the weights now differ "
         "between sources, and still not between states."))

# %% [markdown]
# ## 六、同一份内容，换一种状态就换一种读取
#
# The article's table: scores and weights for state A (s = −1) and B (s = 1), and the two
# contexts from the unrounded weights. Every one of its printed digits, from `read_at`
# (`attention/demos/source_004.py`: `AdditiveScore` + `read`).

# %%
section("六、同一份内容，换一种状态就换一种读取")
scores, weights, contexts = read_at([STATES["A"], STATES["B"]])  # rows A, B
expanded = np.array([np.tanh(s + SOURCES[:, 0]) - np.tanh(s + SOURCES[:, 1])
                     for s in STATES.values()])
print(_("  e_j(s) = tanh(s + h_j1) - tanh(s + h_j2), typed out: max gap to the library "
        "{gap:.1e}").format(gap=np.abs(expanded - scores).max()))
note("expansion_gap", float(np.abs(expanded - scores).max()))
TABLE = {"I": ("1.5232", "0.5414", "0.2335", "0.1491"),
         "like": ("0.9640", "0.3095", "0.9640", "0.3095"),
         "cats": ("0.2335", "0.1491", "1.5232", "0.5414")}
for j, (tok, (eA, aA, eB, aB)) in enumerate(TABLE.items()):
    check(_("{token}: A score").format(token=tok), scores[0, j], eA)
    check(_("{token}: A weight").format(token=tok), weights[0, j], aA)
    check(_("{token}: B score").format(token=tok), scores[1, j], eB)
    check(_("{token}: B weight").format(token=tok), weights[1, j], aB)
for name, row, printed in (("c_A", 0, ("1.392334", "−0.607666")),
                            ("c_B", 1, ("0.607666", "−1.392334"))):
    for k in range(2):
        check(f"{name}[{k + 1}]", contexts[row, k], printed[k])
curve = read_at(grid)[1]
show(line_plot_svg({f"α({t})": (grid, curve[:, j]) for j, t in enumerate(TOKENS)},
                   title=_("Source 004 §6: attention weights as the decoder state s varies"),
                   xlabel=_("decoder state s"), ylabel=_("weight α_j"), ylim=(0.0, 0.6)),
     "004_s6_weights_vs_state.svg")
try_it(_("read equal values: h_eq = np.ones((1, 3, 2)); read(e, h_eq)[0] is (1, 1) whatever the "
         "weights e gives (the article's counter-example)."))

# %% [markdown]
# ## 七、没有人标注“应该看哪里”，它怎样学会？
#
#     s_t = f_dec(s_{t−1}, e_tgt(y_{t−1}), c_t),      L(θ) = −Σ_t log p_θ(y_t | y_<t, x)
#
#     ∂L/∂e_tj = α_tj g_tᵀ (h_j − c_t),   g_t = ∂L/∂c_t
#
# **Differs from the article, said here:** this project's loss is the *mean* over the real
# target tokens (`masked_cross_entropy`), the article's is the *sum*: L_sum = N · L_mean for
# N tokens, so every gradient is N times smaller and Adam's step nearly unchanged (it divides
# the scale out, up to its ε; gradient clipping, where used, sees the smaller norm). And s_0:
# the article starts from y_0 = BOS and leaves s_0 open; this project's Bahdanau decoder
# starts from s_0 = tanh(W · mean_j h_j + b) (`BahdanauDecoder.start`).

# %%
section("七、没有人标注“应该看哪里”，它怎样学会？")
src = np.array([[1, 2, 3]])                              # I like cats, ids 1..3
encoded = BiGRUEncoder(5, 4, 3, rng=np.random.default_rng(1))(src)   # h_j (1, 3, 6)
decoder = BahdanauDecoder(7, 4, 5, 6, rng=np.random.default_rng(2))  # f_dec
tgt = np.array([[4, 5, 6, 2]])                           # 我 喜欢 猫 EOS (ids 4-6; EOS = 2)
tgt_in = decoder_inputs(tgt)                             # BOS 我 喜欢 猫: y_{t-1}, never y_t
print(_("  teacher forcing: targets {targets}, decoder inputs {inputs} (BOS = 1)").format(
    targets=tgt[0].tolist(), inputs=tgt_in[0].tolist()))
logits = decoder(encoded, tgt_in)[0]                     # (1, 4, V)
mean = masked_cross_entropy(logits, tgt, None)
total = F.cross_entropy(logits, tgt, reduction="sum")
n = tgt.size
print(f"  L_mean = {mean.item():.6f}, L_sum = {total.item():.6f} = {n} × L_mean "
      f"({n * mean.item():.6f})")
note("sum_over_mean", total.item() / mean.item())
g = np.array([1.0, 0.5])                                 # g = ∂L/∂c for L = g·c
for name, s in STATES.items():
    e_s, a_s, c_s = (x[:1] for x in read_at([s]))
    dc_de = a_s[0][:, None] * (SOURCES - c_s[0])           # rows ∂c/∂e_j = α_j (h_j − c)
    formula = score_grad(a_s, h, c_s, g[None])[0]        # α_j g·(h_j − c)
    print(_("  state {name}: ∂c/∂e_j = α_j (h_j - c), rows {rows}").format(
        name=name, rows=np.round(dc_de, 4).tolist()))
    x = mg.tensor(e_s, requires_grad=True)
    (attend(x, h)[0] * g).sum().backward()               # autograd through the composed read
    numeric = numerical_grad(lambda t: (read(t, h)[0] * g).sum(), [mg.tensor(e_s)], eps=1e-6)[0][0]
    print(_("  state {name}: ∂L/∂e formula {formula}   autograd {autograd}   finite diff. "
            "{numeric}").format(name=name, formula=np.round(formula, 6),
                                autograd=np.round(x.grad[0], 6), numeric=np.round(numeric, 6)))
    gap = max(np.abs(formula - x.grad[0]).max(), np.abs(formula - numeric).max())
    note(f"grad_gap_{name}", float(gap))
try_it(_("set g = (1, -1): every h_j - c is parallel to (1, 1) here, so what do the scores "
         "receive?"))

# %% [markdown]
# ## 八、从早期 Attention，走向下一种结构
#
# Luong et al. 2015 keep the recurrent encoder–decoder but score differently (dot: e_j = sᵀh_j;
# general: e_j = sᵀW h_j) and read with the *current* state h_t after the update, where
# Bahdanau reads with s_{t−1} before it (`models/luong.py` vs `models/decoders.py`). On the
# §6 sources, with a two-dimensional state:

# %%
section("八、从早期 Attention，走向下一种结构")
state = np.array([[1.0, 0.5]])                           # a state as wide as the h_j
dot = DotScore()(state, h)
general_score = GeneralScore(2, 2, rng=np.random.default_rng(0))
general_score.W.data[...] = np.eye(2)                    # W = I: general reduces to dot
general = general_score(state, h)
print(_("  dot      e = {e}   α = {alpha}").format(e=dot.data[0],
                                                    alpha=np.round(F.softmax(dot).data[0], 4)))
print(_("  general  e = {e}   (W = I: the same as dot)").format(e=general.data[0]))
note("dot_equals_general", bool(np.array_equal(dot.data, general.data)))
try_it(_("set general_score.W to [[1, 0], [0, 0]]: now only the first coordinate is "
         "compared."))
