# %% [markdown]
# # 来源 004 — Attention：模型怎样决定该看哪里？（导读）
#
# 按顺序走完文章的八个小节。每个公式都由本项目自己的代码（`attention/`、`models/`、
# `minigrad/`）计算；文章印出的每个数，都和我们算出的数并排打印（`check`：
# 把我们的数舍入到文章的位数，一致时打 ✓）；每张图都画出来（在笔记本中内嵌显示；
# 作为脚本运行时写成 SVG 文件）；每一节都以一个可以动手试的改动结束。
#
#     python -m models.app.tours 004 --lang zh   # 运行它（图写到 ./attention-tour）
#     python -m models.app.tours 004             # 英文版：source_004.py，代码相同
#     jupytext --to notebook models/app/tours/source_004_zh.py   # 或者在 VS Code 中打开
#
# 本文件与 source_004.py 只有注释不同；直接作为脚本运行时，消息的语言取自 locale
# （例如 LANG=zh_CN.UTF-8）。本项目与文章不同的地方，所在的单元格会说明。

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
from models.encoder import BiGRUEncoder
from models.recurrent import GRUCell
from models.seq2seq import decoder_inputs, masked_cross_entropy

# %% [markdown]
# ## 一、从人的注意力，到按需要读取信息
#
# 这一节还没有公式：它以一个设计要求结束——
# *“保留一组可用的信息，让当前的任务或状态参与决定怎样读取它们，再把读取结果用于后续判断。”*
# 文章其余部分搭建的正是这件事；§6 展示同一份内容被两个状态以两种方式读取。

# %%
section("一、从人的注意力，到按需要读取信息")
print(_("  keep the information; let the current state decide how to read it (built in §3-§6)"))
try_it(_("after §6, change STATES['A'] and see which source gains weight: the content is the "
         "same, the read is not."))

# %% [markdown]
# ## 二、没有 Attention，模型也可以处理上下文
#
# 递归关系 h_j = f_enc(h_{j−1}, e_src(x_j))——这里 f_enc 是一个 `GRUCell`（采用 PyTorch 的方程）——
# 以及基本的编码器–解码器交给解码器的固定摘要 c = h_T。

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
# 本项目的 PlainDecoder 交出的是 [→h_T ; ←h_1]，即双向编码器每个方向的最后一个状态：
# 思路相同，一个固定的向量，解码器每一步都读它。
try_it(_("make ids longer (say [[0, 1, 2, 1, 0]], ids 0-2) and loop over ids.shape[1]: c "
         "changes, and the whole source must still fit in these 3 numbers."))

# %% [markdown]
# ## 三、把“只能使用摘要”改成“可以重新读取”
#
# 保留 h_1 … h_T；解码器每一步都从它们形成一个新的上下文向量。文章的图比较两种架构；
# 这里的图由计算本身画出：每次读取时，*每个源位置有多少进入了解码器拿到的那个向量？*
# 用固定摘要 c = h_T 时，每次读取都是最后一个位置（权重 1）；用注意力时，
# 是所有位置上的权重，由状态重新计算——这里是三个状态 s = −1, 0, 1
# 读取 §6 的源表示（`read_at`：§6 的评分函数加上 `read`）。
# 正如文章所说，这是“架构示意，不是训练得到的对齐”。

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
# 用文章 §6 的数值（状态 A）。权重都为正，总和为 1；上下文向量是和 h_j 一样的向量，
# 有一个负分量——不是概率。然后是文章用文字说出的两件事：
# “Softmax 也不是数学上唯一可能的选择”（这里把 **sparsemax**，即到单纯形上的投影，
# 放在它旁边——它给出精确的零），以及硬读取（argmax）不把梯度传给分数。

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
# `AdditiveScore`（它的 W_q、W_k 就是文章的 W_s、W_h）对照用 NumPy 逐项写出的公式；
# 然后是去掉 tanh 的消融：e_j = vᵀW_s s + vᵀb + vᵀW_h h_j，其中状态只给每个分数加上同一个数
# （文章的说法是“所有分数共同增加的常数”），softmax 不受它影响——权重不再依赖状态。

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
# 文章的表：状态 A（s = −1）和 B（s = 1）的分数与权重，
# 以及“用没有舍入的权重计算”出的两个上下文向量。它印出的每一位数字，
# 都来自 `read_at`（`attention/demos/source_004.py`：`AdditiveScore` + `read`）。

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
# **与文章不同，在此说明：** 本项目的损失是对真实目标 token 取*平均*（`masked_cross_entropy`），
# 文章的是*求和*：N 个 token 时 L_sum = N · L_mean，所以每个梯度都缩小到 N 分之一，
# 而 Adam 的步长几乎不变（它会把尺度除掉，只在 ε 上有差别；用到梯度裁剪的地方，
# 裁剪看到的是较小的范数）。还有 s_0：文章从 y_0 = BOS 开始（“y₀ 是起始符”），
# 没有规定 s_0；本项目的 Bahdanau 解码器从 s_0 = tanh(W · mean_j h_j + b) 开始
# （`BahdanauDecoder.start`）。

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
# Luong 等人 2015 年的工作保留了循环的编码器–解码器，但评分方式不同
# （点积：e_j = sᵀh_j；通用：e_j = sᵀW h_j），并且用更新之后的*当前*状态 h_t 读取，
# 而 Bahdanau 用更新之前的 s_{t−1} 读取（`models/luong.py` 对照 `models/decoders.py`）。
# 用 §6 的源表示，配一个二维状态：

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
