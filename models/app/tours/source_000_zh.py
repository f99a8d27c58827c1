# %% [markdown]
# # 来源 000 — 7.1 注意力機制的誕生:從對齊模型到 Bahdanau Attention（导读）
#
# 按顺序走完文章的七个小节，用的是本项目的代码。每个公式都由库来计算；
# 文章印出的每个数，都和我们的数并排打印（`check`：我们的数舍入到文章的位数）；
# 每张图都画出来；每一节都以一个可以动手试的改动结束。
# 文章只提到名字、没有展开的内容——「多跳(multi-hop)軟檢索」、「鍵值對 = 參數化的記憶表」、
# 「稀疏化」、相关的查询和键（「相關性很強」）、「注意力 = 解釋」、「線性注意力」——
# 在这里都实现出来；文章和本项目不同的地方，单元格里会说明。
#
#     python -m models.app.tours 000       # 运行它（图写到 ./attention-tour）

# %%
import numpy as np

import minigrad as mg
from minigrad import functional as F
from minigrad.draw import grid_svg, heatmap_svg, heatmap_text, line_plot_svg
from minigrad.nn import Linear
from attention.demos.source_000 import path_length, scaling
from attention.demos.untrained import alignment
from attention.hard import hard_read
from attention.multihead import scaled_dot_product_attention
from attention.positional import sinusoidal_encoding
from attention.read import read
from attention.scores import AdditiveScore, DotScore, ScaledDotScore
from models.app.tours.book import _, check, note, section, show, try_it
from models.decoders import BahdanauDecoder
from models.encoder import BiGRUEncoder

# %% [markdown]
# ## 一、歷史背景:一個翻譯工程問題引發的革命
#
# 「Seq2Seq 的固定向量瓶頸」：基本的编码器–解码器不管源句多长，都只交给解码器一个向量；
# Bahdanau 等人则“讓解碼器在每一步直接「參考」編碼器的全部隱狀態”。
# 「長句翻譯性能隨句長崩塌」的测量是 `python -m models compare-length`
# （models/app/README.md：注意力在每个长度上的完全匹配率都在 97.7% 以上，固定摘要则下降）：
# 它要训练六个模型，对导读来说太久了。这里只看两种接口的形状。

# %%
section("一、歷史背景:一個翻譯工程問題引發的革命")
for S in (5, 20, 80):
    enc = BiGRUEncoder(10, 4, 8, rng=np.random.default_rng(0))(np.ones((1, S), dtype=int))
    print(_("  source length {S:>2}: fixed summary {final} numbers; attention keeps {kept} = "
            "{S} × {width}").format(S=S, final=enc.final.shape[1:], kept=enc.annotations.shape[1:],
                                    width=enc.annotations.shape[2]))
note("summary_width", enc.final.shape[1])
try_it(_("python -m models compare-length (a few minutes) measures the collapse itself."))

# %% [markdown]
# ## 二、思想前史:對齊與檢索的可微化
#
# **2.1** 记忆网络和神经图灵机对记忆做软读取：
# 「對記憶槽計算相似度權重、加權讀取——讀取是可微的」。**2.2** Bahdanau 的四个步骤：
#
#     e_ti = v_aᵀ tanh(W_a s_{t−1} + U_a h_i),   α_ti = exp(e_ti) / Σ_j exp(e_tj),
#     c_t = Σ_i α_ti h_i,   s_t = GRU([y_{t−1}; c_t], s_{t−1}),   p(y_t) = softmax(W_o [s_t; c_t])
#
# **文章的 softmax 有一处笔误**：它的分母写成 Σ_j exp(e_ti)——对 j 求和，被加项里却没有 j，
# 结果是 T_x·exp(e_ti)，于是对每个 i 都有 α_ti = 1/T_x。照字面理解，这是均匀平均；
# 本意的分母是 Σ_j exp(e_tj)。下面两者都算出来。
# **2.3** 评分函数（「打分函數的演化」）：加性、点积、缩放点积，以及为什么要除以 √d_k。

# %%
section("二、思想前史:對齊與檢索的可微化")
rng = np.random.default_rng(0)
memory = rng.standard_normal((1, 5, 4))                  # 5 memory slots of width 4
memory /= np.linalg.norm(memory, axis=-1, keepdims=True) # unit length: q·m is then cosine similarity
query = memory[:, 2] + 0.1 * rng.standard_normal((1, 4)) # close to slot 3
e = 4 * DotScore()(query, memory)                        # similarity to every slot (sharpened by 4)
c, a = read(e, memory)                                   # soft, content-based read
print(_("  2.1 soft addressing: weights {weights} (slot 3 most), read = Σ α_i m_i")
      .format(weights=np.round(a.data[0], 3)))
note("soft_address_argmax", int(a.data.argmax()))

score = AdditiveScore(query_dim=3, key_dim=4, attn_dim=5, bias=False, rng=rng)  # W_a, U_a, v_a
s_prev, h = rng.standard_normal((1, 3)), rng.standard_normal((1, 6, 4))         # s_{t-1}, h_1..h_6
e = score(s_prev, h).data[0]                             # (1) e_ti
typo = np.exp(e) / np.sum([np.exp(e) for j in range(len(e))], axis=0)  # Σ_j exp(e_ti), literally
fixed = np.exp(e) / np.exp(e).sum()                      # Σ_j exp(e_tj)
ours = F.softmax(mg.tensor(e)).data                      # (2) the library's softmax
print(f"  2.2 (1) e = {np.round(e, 3)}")
print(_("      (2) as printed, Σ_j exp(e_ti): α = {typo} = 1/{n} each (uniform)")
      .format(typo=np.round(typo, 4), n=len(e)))
print(_("          as meant,   Σ_j exp(e_tj): α = {fixed} (F.softmax: the same)")
      .format(fixed=np.round(fixed, 4)))
note("typo_is_uniform", bool(np.allclose(typo, 1 / len(e))))
note("softmax_gap", float(np.abs(fixed - ours).max()))
c = read(mg.tensor(e[None]), h)[0].data[0]               # (3) c_t = Σ α_ti h_i
print(f"      (3) c_t = {np.round(c, 4)}")
decoder = BahdanauDecoder(6, 3, 3, 4, rng=rng)           # (4) one step of the project's decoder
encoded = BiGRUEncoder(6, 3, 2, rng=rng)(np.array([[1, 2, 3, 4, 5, 1]]))
state, ctx = decoder.start(encoded)
state, features, alpha = decoder.step(np.array([1]), state, ctx, 0)
p = F.softmax(decoder.logits(features)).data[0]
print(_("      (4) s_t = GRU([y_(t-1); c_t], s_(t-1)) {state}; p(y_t) sums to {total:.6f}")
      .format(state=np.round(state[0].data[0], 4), total=p.sum()))
# 本项目的解码器从 s_0 = tanh(W · mean_i h_i + b) 开始（BahdanauDecoder.start）；
# 文章没有说 s_0 是怎样得到的。
stds = {}
for d in (4, 16, 64, 256):                               # 2.3: Var(q·k) = d
    q, k = rng.standard_normal((10000, d)), rng.standard_normal((10000, 1, d))
    stds[d] = (DotScore()(q, k).data.std(), ScaledDotScore()(q, k).data.std())
    print(f"  2.3 d = {d:>3}: std(q·k) {stds[d][0]:6.3f} (√d = {np.sqrt(d):6.3f}),  "
          f"std(q·k/√d) {stds[d][1]:.3f}")
note("stds", stds)
sat = scaling().values["softmax"]                        # 8 keys, d = 64, 2000 queries
scores = {"raw": _("raw    scores"), "scaled": _("scaled scores")}  # padded to one width
for kind in ("raw", "scaled"):
    print(_("  2.3 {scores}: mean largest α {max_weight:.3f}, rows nearly one-hot {one_hot:.1%}, "
            "‖∂α/∂e‖_F {jacobian:.3f} (what reaches the scores)")
          .format(scores=scores[kind], **sat[kind]))
note("saturation", {k: (sat[k]["one_hot"], sat[k]["jacobian"]) for k in sat})
try_it(_("drop the line that normalises the memory: a dot product then favours the longest slot, "
         "not the nearest one (here slot 4 wins)."))

# %% [markdown]
# ## 三、自注意力的前夜:從「查別人」到「查自己」
#
# **多跳读取**（端到端记忆网络，Sukhbaatar et al. 2015）：文章提到了它，但没有演示——
# 「連續多次加權讀取記憶,每跳之後用上一跳的結果重新尋址」。
# 这里的记忆以“键 → 值”对的形式存放事实（键和值是不同的向量：键是拿来和查询比较的，
# 值是读回来的），实体是一组标准正交向量。“从 A 出发走两步到哪里？”需要两条事实
# A → B 和 B → C：第一跳读出 B，第二跳用 B 寻址，读出 C。
# （MemN2N 通过学到的矩阵把前一次的查询加进来，u_{k+1} = u_k + o_k；
# 这里取 u_{k+1} = o_k，只留下最核心的想法。）
# 然后是序列读取它自己——「序列也可以查自己」：自注意力，Q = K = V = X。

# %%
section("三、自注意力的前夜:從「查別人」到「查自己」")
names = ["A", "B", "C", "D"]
E = np.eye(4)                                            # entity vectors
keys = E[[0, 1, 3]][None] * 8                            # facts: A → B, B → C, D → A (β = 8)
values = E[[1, 2, 0]][None]
u = E[[0]]                                               # the question starts from A
for hop in (1, 2):
    o, w = read(DotScore()(u, keys), values)             # address by content, read the value
    u = o.data                                           # re-address with what was read
    print(_("  hop {hop}: weights over the facts A→B, B→C, D→A: {weights}; read ≈ {name} "
            "({vector})").format(hop=hop, weights=np.round(w.data[0], 4),
                                 name=names[int(u.argmax())], vector=np.round(u[0], 3)))
    note(f"hop{hop}", names[int(u.argmax())])
X = rng.standard_normal((1, 5, 4))                       # a sequence of 5 vectors
out, weights = scaled_dot_product_attention(X, X, X, return_weights=True)  # Q = K = V = X
print(_("  self-attention: each of the 5 positions reads all 5: weights {shape}, rows sum to "
        "{sums}").format(shape=weights.shape, sums=np.round(weights.data[0].sum(-1), 6)))
note("self_rows", weights.data[0].sum(-1))
order = [4, 3, 2, 1, 0]                                  # the same vectors, in reverse order
out_rev = scaled_dot_product_attention(X[:, order], X[:, order], X[:, order])
print(_("  without positions, reversing the sequence only reverses the outputs: gap {gap:.1e} "
        "(order is invisible)").format(gap=np.abs(out_rev.data[0] - out.data[0, order]).max()))
P = sinusoidal_encoding(5, 4)                            # positional encoding, injected
Xp, Xr = X + P, X[:, order] + P
out_p = scaled_dot_product_attention(Xp, Xp, Xp)
out_pr = scaled_dot_product_attention(Xr, Xr, Xr)
print(_("  with sinusoidal positions added, the reversed sequence reads differently: gap "
        "{gap:.2f}").format(gap=np.abs(out_pr.data[0] - out_p.data[0, order]).max()))
note("order_gaps", (float(np.abs(out_rev.data[0] - out.data[0, order]).max()),
                    float(np.abs(out_pr.data[0] - out_p.data[0, order]).max())))
try_it(_("add a fact C → D and a third hop: the answer moves on to D."))

# %% [markdown]
# ## 四、程式碼實作
#
# 文章的四段程序，用本库来写：**4.1** 加性注意力，批大小为 2，编码器有 7 个位置
# （每一行的权重之和为 1：「注意力權重(和為 1)」）；
# **4.2** 缩放点积注意力和 q·k 的统计（「raw dot 標準差」≈ √64 = 8，「縮放後標準差」≈ 1）；
# **4.3**「玩具翻譯(恆等任務)」的对齐矩阵，未训练时和训练后各一个
# （「若訓練充分,此矩陣趨近近似對角」）；
# **4.4** 路径长度：经过 tanh RNN（n − 1 步）和经过一次注意力读取的 ‖∂y_n/∂x_1‖。

# %%
section("四、程式碼實作")
att = AdditiveScore(query_dim=64, key_dim=64, attn_dim=32, bias=False, rng=rng)
s, h = rng.standard_normal((2, 64)), rng.standard_normal((2, 7, 64))
c, alpha = read(att(s, h), h)                            # 4.1
for b, total in enumerate(alpha.data.sum(-1)):
    check(_("4.1 row {row}: Σ α").format(row=b + 1), total, "1.0")
mask = np.ones((2, 7), bool)
mask[1, 5:] = False                                      # the second sentence: 5 real positions
alpha_m = read(att(s, h), h, mask=mask)[1]               # the article's masked_fill(mask == 0, ...)
print(_("  4.1 with padding: row 2 weights {weights} (0 on the 2 padded positions, Σ = "
        "{total:.6f})").format(weights=np.round(alpha_m.data[1], 3), total=alpha_m.data[1].sum()))
note("padded_weight", float(alpha_m.data[1, 5:].sum()))
Q, K, V = (rng.standard_normal((2, 8, 64)) for _ in range(3))
out, alpha = scaled_dot_product_attention(Q, K, V, return_weights=True)   # 4.2
q, k = rng.standard_normal((10000, 64)), rng.standard_normal((10000, 64))
check(_("4.2 raw dot std (≈ √64)"), (q * k).sum(-1).std(), "8")
check(_("4.2 scaled std (≈ 1)"), ((q * k).sum(-1) / 8).std(), "1")
toy = alignment(kernels=True).values                     # 4.3: trains the toy model (seconds)
words = [f"x{j + 1}" for j in range(6)]
steps = [f"y{t + 1}" for t in range(6)]
print(heatmap_text(toy["untrained"], steps, words, title=_("4.3 untrained: rows near uniform")))
print(heatmap_text(toy["trained"], steps, words, title=_("4.3 trained: the diagonal")))
show(grid_svg([heatmap_svg(toy["untrained"], steps, words, title=_("untrained")),
               heatmap_svg(toy["trained"], steps, words, title=_("trained"))], columns=2,
              title=_("Source 000 §4.3: the alignment matrix of the identity task")),
     "000_s4_alignment.svg")
note("diagonal", float(np.mean(np.diag(toy["trained"]))))
note("untrained_max", float(toy["untrained"].max()))
paths = path_length().values                             # 4.4
for n, r, a in zip(paths["lengths"], paths["rnn"], paths["attention"]):
    print(_("  4.4 n = {n:>3}: ‖∂y_n/∂x_1‖ tanh RNN {rnn:.2e}   attention {attention:.2e}")
          .format(n=n, rnn=r, attention=a))
show(line_plot_svg({_("tanh RNN (n − 1 steps)"): (paths["lengths"], np.log10(paths["rnn"])),
                    _("attention (1 read)"): (paths["lengths"], np.log10(paths["attention"]))},
                   title=_("Source 000 §4.4: log10 ‖∂y_n/∂x_1‖ against n"),
                   xlabel=_("sequence length n"), ylabel="log10 ‖∂y_n/∂x_1‖_F", markers=True),
     "000_s4_path_length.svg")
note("paths", paths)
try_it(_("python -m attention 000-scaling shows what the raw scores do to softmax "
         "(near one-hot)."))

# %% [markdown]
# ## 五、注意力的歷史地位:從技巧到範式
#
# “「加權彙總 + softmax 檢索」可以堆疊、可以自引用”：同一个读取，把序列当作它自己的记忆，
# 就是一层。「內容尋址(依相似度檢索)」正是上面每一次读取所做的事。
# 除了 §3 和 §4 已经算过的，这里没有新的要算；只核对一下“读取就是一层”
# （「注意力即通用層」）这个说法：两次堆叠的自注意力读取，端到端仍然可微。

# %%
section("五、注意力的歷史地位:從技巧到範式")
x = mg.tensor(rng.standard_normal((1, 4, 3)), requires_grad=True)
y = scaled_dot_product_attention(x, x, x)                # layer 1
z = scaled_dot_product_attention(y, y, y)                # layer 2, stacked
z.sum().backward()
print(_("  two stacked reads: output {shape}, gradient reaches the input: ‖∂L/∂x‖ = {norm:.4f}")
      .format(shape=z.shape, norm=np.linalg.norm(x.grad)))
note("stacked_grad", float(np.linalg.norm(x.grad)))
try_it(_("stack a third read and watch the weights of the last one flatten."))

# %% [markdown]
# ## 六、本節重點
#
# 把本节重点放进一次计算：「打分(內容相似度)→ softmax 歸一 → 加權彙總,全流程可微」——
# 用梯度检查（gradcheck）来验证。

# %%
section("六、本節重點")
from minigrad.gradcheck import gradcheck   # noqa: E402 -- the one tool this cell adds
ok = gradcheck(lambda q_, k_: read(ScaledDotScore()(q_, k_), k_)[0], [rng.standard_normal((2, 4)),
                                                                        rng.standard_normal((2, 5, 4))])
print(_("  score → softmax → weighted sum, gradcheck in float64: ok") if ok
      else _("  score → softmax → weighted sum, gradcheck in float64: FAILED"))
note("gradcheck", bool(ok))
try_it(_("python -m minigrad.gradcheck checks every op the read is built from."))

# %% [markdown]
# ## 七、思考問題
#
# **Q1** “軟注意力「平均化」造成的模糊問題”：读取分数相近的两个不同的值，得到的是两者的混合；
# 硬读取只挑一个（没有梯度）；sparsemax（`F.sparsemax`）给出精确的零，同时保留梯度；
# 几个头可以各自保留一个（下面有测量：两个头各把同一组键投影到自己的坐标上，
# 就把两个值分开读出来了）。
# **Q2** 各分量独立时（「各維獨立同分布」）Var(q·k) = d；
# q 和 k 相关时（k = ρq + √(1−ρ²) z），均值为 ρd，方差为 d(1 + ρ²)：原来的分析不再成立，
# 而且缩放之后，相关的那个键的分数会高出 ρ√d。
# **Q3**「注意力 = 解釋」：如果值都相等，无论怎样加权，读出的都是同一个上下文向量——
# 这时权重什么也解释不了；而且一个位置的权重排名不一定与它的梯度排名一致
# （「權重與梯度歸因不一致」）。
# **Q4**「線性注意力」：用特征映射 φ（elu + 1），读取 φ(Q)[φ(K)ᵀV] 的代价是 T·d²
# 而不是 T²·d，结果与二次代价的写法完全相同。
# **Q5** 把键和值当作记忆（「鍵值對 = 參數化的記憶表」）：
# 前馈层 W₂ relu(W₁ x) 是一次未归一化的键–值读取，Σ_i relu(k_i·x) v_i，
# 键是 W₁ 的行，值是 W₂ 的列。

# %%
section("七、思考問題")
e = mg.tensor([[2.0, 1.8, -1.0]])                        # Q1: two close scores
vals = np.array([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])
soft = read(e, vals)[0].data[0]
hard = hard_read(e, vals)[0].data[0]
sparse = F.sparsemax(e).data[0]
print(_("  Q1 soft read {soft} (a blend), hard {hard}, sparsemax weights {sparse} (an exact 0)")
      .format(soft=np.round(soft, 3), hard=hard, sparse=np.round(sparse, 3)))
note("q1_sparse_zero", bool(sparse[2] == 0.0))
Kq = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])    # Q1, heads: keys of the three values (S, d)
q4 = np.array([4.0, 4.0])                                # a query as close to key 1 as to key 2
one = scaled_dot_product_attention(q4[None, None], Kq[None], vals, scale=1.0).data[0, 0]  # (dv,)
P = np.stack([np.diag([1.0, 0.0]), np.diag([0.0, 1.0])])  # (h, d, d): each head sees one coordinate
heads = scaled_dot_product_attention((q4 @ P)[None, :, None], (Kq @ P)[None],
                                     np.broadcast_to(vals, (1, 2, 3, 2)), scale=1.0).data[0, :, 0]
print(_("  Q1 one head reads {one} (a blend); two heads, each projecting onto its own "
        "coordinate, read {first} and {second}: each keeps one value").format(
    one=np.round(one, 3), first=np.round(heads[0], 3), second=np.round(heads[1], 3)))
note("q1_heads", (one, heads))
d = 64
q = rng.standard_normal((20000, d))
for rho in (0.0, 0.5, 0.9):                              # Q2
    k = rho * q + np.sqrt(1 - rho ** 2) * rng.standard_normal((20000, d))
    dots = (q * k).sum(-1)
    print(_("  Q2 ρ = {rho}: mean q·k {mean:6.2f} (ρd = {rho_d:4.1f}), var {var:6.1f} "
            "(d(1 + ρ²) = {want:5.1f})").format(rho=rho, mean=dots.mean(), rho_d=rho * d,
                                                var=dots.var(), want=d * (1 + rho ** 2)))
    note(f"q2_{rho}", (dots.mean(), dots.var(), rho * d, d * (1 + rho ** 2)))
same = np.ones((1, 3, 2))                                # Q3: equal values
reads = [read(mg.tensor(np.log(w)), same)[0].data[0] for w in ([[0.8, 0.1, 0.1]], [[0.1, 0.1, 0.8]])]
print(_("  Q3 equal values, weights (0.8, 0.1, 0.1) vs (0.1, 0.1, 0.8): reads {first} and "
        "{second}: the weights explain nothing here").format(first=reads[0], second=reads[1]))
note("q3_same", bool(np.allclose(reads[0], reads[1])))
differ = 0
for trial in range(200):                                 # self-read: h_j is key and value
    q_, H = rng.standard_normal((1, 4)), mg.tensor(rng.standard_normal((1, 5, 4)), requires_grad=True)
    c_, a_ = read(DotScore()(q_, H), H)
    (c_ * rng.standard_normal(4)).sum().backward()       # L = w·c
    differ += int(a_.data.argmax() != np.linalg.norm(H.grad[0], axis=-1).argmax())
print(_("  Q3 the largest weight and the largest ‖∂L/∂h_j‖ name different positions in {differ} "
        "of 200 random reads (h_j both key and value, L = w·c)").format(differ=differ))
note("q3_differ", differ)
T, dk = 6, 4                                              # Q4
Qx, Kx, Vx = (mg.tensor(rng.standard_normal((T, dk))) for _ in range(3))
phi_q, phi_k = F.elu(Qx) + 1, F.elu(Kx) + 1
quadratic = ((phi_q @ phi_k.T) @ Vx) / (phi_q @ phi_k.T).sum(axis=-1, keepdims=True)  # T × T
linear = (phi_q @ (phi_k.T @ Vx)) / (phi_q @ phi_k.sum(axis=0)[:, None])             # d × d
print(_("  Q4 linear attention: (φQ φKᵀ)V vs φQ(φKᵀV) differ by {gap:.1e}; cost T²d = {quadratic} "
        "vs Td² = {linear}").format(gap=np.abs(quadratic.data - linear.data).max(),
                                    quadratic=T * T * dk, linear=T * dk * dk))
note("q4_gap", float(np.abs(quadratic.data - linear.data).max()))
n_tok, W = 1_000_000, 512                                # a million-token context, a ±512 window
print(_("  Q4 scores to compute at n = {n:,}: full n² = {full:.1e}, sliding window "
        "n·(2W + 1) = {window:.1e} (Attention(window=W)), linear n·d² with d = 64: {linear:.1e}")
      .format(n=n_tok, full=n_tok ** 2, window=n_tok * (2 * W + 1), linear=n_tok * 64 ** 2))
W1, W2 = Linear(3, 5, bias=False, rng=rng), Linear(5, 3, bias=False, rng=rng)  # Q5
xq = rng.standard_normal((1, 3))
ffn = W2(mg.relu(W1(xq))).data[0]
memory_read = sum(max(W1.weight.data[i] @ xq[0], 0) * W2.weight.data[:, i] for i in range(5))
print(_("  Q5 feed-forward {ffn} = Σ_i relu(k_i·x) v_i {read}")
      .format(ffn=np.round(ffn, 4), read=np.round(memory_read, 4)))
note("q5_gap", float(np.abs(ffn - memory_read).max()))
try_it(_("in Q2 give only one of 8 keys the correlation ρ = 0.9 and measure its softmax weight."))
