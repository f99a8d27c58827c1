# %% [markdown]
# # 来源 003 — Bahdanau 与 Luong Attention（导读）
#
# 按原文六节的顺序，用本项目的代码，在这里训练的三个模型上逐节走一遍
# （远不到一分钟：10-50 秒，视机器负载而定）。三个模型做同一个任务，训练预算相同：
# 一个固定摘要的编码器–解码器、Bahdanau 的解码器和 Luong 的解码器
# （通用评分函数，不用输入馈送，如原文 §3.1）。
# 任务是复制一个由 3–8 个符号组成的字符串（`models.app.data`，"copy"），
# 所以正确的对齐是已知的：第 i 个输出应当读取源序列的第 i 个位置。
# 每一节都以一个可以动手试的改动结束；原文与本项目不同的地方，单元格里会说明。
#
#     python -m models.app.tours 003       # 运行它（图写到 ./attention-tour）

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
from models.luong import LuongDecoder
from models.vocab import pad_batch

# %% [markdown]
# ## 1. 从“硬对齐”到“软对齐”Attention机制的诞生背景
#
# 原文所说的“固定大小的背包”：整个源序列只有一个向量。实测：三个模型以同样方式训练
# （`compare_models`），按源序列长度统计完全匹配率，其中包括训练时从未出现过的长度 9–12。
# 固定摘要随源序列变长而下降；注意力一直撑到训练中的最大长度（8）——
# 超过之后，两个注意力模型也同样下降：它们没有学会复制比见过的任何字符串都长的字符串。

# %%
section("1. 从“硬对齐”到“软对齐”Attention机制的诞生背景")
config = ModelsConfig(task="copy", n_train=2000, n_val=200, n_long=200, epochs=6, min_len=3,
                      max_len=8, long_len=12, lr=3e-3, target=0.9)
MODELS = (("fixed summary", dict(decoder="plain", embed=32, hidden=32, dec_hidden=64)),
          ("Bahdanau", dict(decoder="bahdanau", score="additive", embed=32, hidden=32,
                            dec_hidden=64, attn=32)),
          ("Luong", dict(decoder="luong", score="general", embed=32, hidden=32, dec_hidden=64)))
results, trainers, data, long = compare_models(config, log=lambda *_: None, models=MODELS)
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
# **2.1** 在训练好的模型上，对一条留出集字符串的一个解码步 t，走一遍原文的五步：
# e_tj = v_aᵀ tanh(W_a s_{t−1} + U_a h_j)（原文写作 W_a [s_{t−1}; h_j]，把 W_a 拆成两块，
# 就是同一回事），α_t = softmax(e_t)，c_t = Σ_j α_tj h_j，
# s_t = RNN(s_{t−1}, [y_{t−1}; c_t])，p(y_t) = softmax(W_o [s_t; c_t] + b_o)。
# **2.2** 初始状态：原文说 s_0“取编码器最后一个时间步的隐藏状态或者编码器所有隐藏状态的均值”；
# **本项目的解码器从 s_0 = tanh(W · mean_j h_j + b) 开始**（`BahdanauDecoder.start`），
# 即把均值送入一个可学习的层。起始 token（原文的“start令牌”）是 BOS。
# 计算量：每句 T · S 个分数，每个 d 次乘加（原文：“O(目标长度 * 源长度 * 隐藏层维度)”）。
# 还有热力图：对复制任务，它应当是一条对角线。

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
note("bahdanau_diag", float(np.mean(np.diag(out.weights))) if out.weights.shape[0] == len(chars) else 0.0)
note("p1_sum", float(p1.sum()))
try_it(_("decode a string of 11 symbols (longer than training) and look where the diagonal "
         "blurs."))

# %% [markdown]
# ## 3. Luong Attention解耦与简化的高效变体
#
# **3.1** Luong 的顺序：先算 s_t = RNN(s_{t−1}, y_{t−1})（输入里没有上下文向量），
# 再用 s_t 评分——点积 sᵀh、通用 sᵀW_a h（本模型所用）、拼接 v_aᵀ tanh(W_a [s_t; h_j])——
# 然后 h̃_t = tanh(W_c [c_t; s_t])，p(y_t) = softmax(W_o h̃_t + b_o)。
# **3.2** 原文“信息延迟”的说法：s_t 形成时还没有看到 c_t，所以它可能已经“决定”了要生成什么。
# 在两个训练好的模型上从两方面测量：(a) s_t 究竟是否依赖这一步的读取？——
# 求 s_t 对第 t 步所读取的键的梯度；(b) 把每次读取都换成源序列的简单平均
# （温度取 10¹²，`Attention.temperature`，使 α 变得均匀）之后，每个模型的预测还能保住多少？

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
    st, ctx_l = models["Luong"].decoder.start(enc_l)
    s_t = models["Luong"].decoder.rnn(np.array([1]), st[1:], st[:1], ctx_l)[0]   # s_1, first
    for name, score in (("dot", DotScore()), ("general", models["Luong"].decoder.attention.score),
                        ("concat", ConcatScore(64, 64, 32, rng=np.random.default_rng(0)))):
        print(f"  3.1 {name:<7} score(s_1, h_j) = {np.round(score(s_t, enc_l.annotations).data[0], 3)}")
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
# 原文的对比表；凡是有测量的行，都用上面测得的结果重现
# （计算顺序：§3 的梯度；上下文向量整合：c_t 从哪里进入；评分函数：库里的评分函数类；
# 开销与质量：§1 的那次训练）；“提出时间与文献”一行取自两篇论文。

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
# Luong 的“通用”评分函数 sᵀW h 就是 Transformer 中查询与键的乘积，取 Q = s、K = W h：
# `scaled_dot_product_attention` 取 scale 1 时给出同样的权重。
# 原文建议“一定要徒手实现一遍至少是前向传播过程”：这里就用 NumPy，
# 为训练好的模型手算一次 Luong 读取，并与库的结果对照。

# %%
section("5. 从经典Attention到现代模型的桥梁价值")
luong = models["Luong"]
with mg.no_grad():
    enc = luong.encoder(src, mask)
    state, ctx = luong.decoder.start(enc)
    rnn = luong.decoder.rnn(np.array([1]), state[1:], state[:1], ctx)          # s_1
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
note("by_hand_gap", float(max(np.abs(a_np - a_lib.data[0]).max(), np.abs(c_np - c_lib.data[0]).max(),
                              np.abs(q_k - a_np).max())))
for n in (10, 100, 1000):
    print(_("  n = {n:>4} target steps reading a length-{n} source: n² = {scores:,} scores "
            "(O(n²))").format(n=n, scores=n * n))
try_it(_("the exercises (python -m minigrad.exercises) ask for the backward passes of these "
         "reads."))

# %% [markdown]
# ## 6. 实战中的调参经验与扩展思考
#
# **经验一**，双向编码器：h_j = [→h_j ; ←h_j]。
# **经验二**，温度：α = softmax(e / T)——*降低* T 使权重更尖锐，也就是除以一个*更小*的数
# （原文括号里写的是“分母变大”）；还有注意力 dropout（`Attention(dropout=)`）。
# **经验三**，截断注意力（原文的 Truncated Attention，`window=`）：|j − t| > W 处权重为 0；
# 以及分层注意力（`attention.hierarchical`：由词得到句子向量，由句子得到文档向量），
# 在一个小任务上训练（`python -m attention 003-hierarchical`）。
# **经验四**，几项检查：“对角线是否清晰”；“权重是否合理”——
# 这里指每个输出符号是否读取源序列中存放该符号的位置；是否存在“懒惰注意力”，停在 EOS 上；
# 梯度是否经由注意力回传到源序列？
# （`models.app.diagnose`，也就是 `python -m models inspect` 报告的内容，测量后三项。）

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
note("hierarchical", {k: han.values[k] for k in ("accuracy", "sentence_weight", "word_weight", "by_class")})
try_it(_("truncate with window = 0 and see a pure diagonal read; python -m models inspect on a "
         "saved run makes the same checks."))
