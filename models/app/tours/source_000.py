# %% [markdown]
# # Source 000 — 7.1 注意力機制的誕生:從對齊模型到 Bahdanau Attention (a walkthrough)
#
# The article's seven sections in order, on this project's code. Each formula is computed by
# the library, each number the article prints is printed beside ours (`check`: ours rounded
# to the article's digits), each figure is drawn, each section ends with something to try.
# What the article only names — multi-hop reading over a memory, keys and values as memory,
# sparsification, correlated queries and keys, attention as explanation, linear attention —
# is built here, and where the article and the project differ the cell says so.
#
#     python -m models.app.tours 000       # run it (figures into ./attention-tour)

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
from models.recurrent import BiGRUEncoder

# %% [markdown]
# ## 一、歷史背景:一個翻譯工程問題引發的革命
#
# The fixed-vector bottleneck: a basic encoder–decoder hands the decoder one vector, whatever
# the source length; Bahdanau et al. let every decoder step consult all encoder states. The
# measurement of "long-sentence quality collapses with length" is `python -m models
# compare-length` (models/app/README.md: attention stays above 97.7% exact match at every
# length, the fixed summary falls): it trains six models, too long for a walkthrough. Here,
# the shape of the two interfaces.

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
# **2.1** Memory networks and the neural Turing machine read a memory softly: similarity
# weights over the slots, a weighted read — differentiable. **2.2** Bahdanau's four steps:
#
#     e_ti = v_aᵀ tanh(W_a s_{t−1} + U_a h_i),   α_ti = exp(e_ti) / Σ_j exp(e_tj),
#     c_t = Σ_i α_ti h_i,   s_t = GRU([y_{t−1}; c_t], s_{t−1}),   p(y_t) = softmax(W_o [s_t; c_t])
#
# **The article's softmax has a typo**: its denominator reads Σ_j exp(e_ti) — a sum over j of
# a term without j, T_x·exp(e_ti), which makes every α_ti = 1/T_x. Taken literally it is a
# uniform average; the intended denominator is Σ_j exp(e_tj). Both are computed below.
# **2.3** The score functions: additive, dot, scaled dot, and why √d_k.

# %%
section("二、思想前史:對齊與檢索的可微化")
rng = np.random.default_rng(0)
memory = rng.standard_normal((1, 5, 4))                  # 5 memory slots of width 4
memory /= np.linalg.norm(memory, axis=-1,
                         keepdims=True) # unit length: q·m is then cosine similarity
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
# The project's decoder starts from s_0 = tanh(W · mean_i h_i + b) (BahdanauDecoder.start);
# the article does not say how s_0 is made.
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
# **Multi-hop reading** (end-to-end memory networks, Sukhbaatar et al. 2015), which the article
# names and does not show: read the memory, then address it again with what was read. Here the
# memory holds facts as key → value pairs (keys and values are different vectors: the key is
# what a query is compared with, the value is what is read back), entities as orthonormal
# vectors. "Where does A lead, two steps on?" needs two facts, A → B and B → C: one hop reads
# B, the second hop, addressed with B, reads C. (MemN2N adds the previous query,
# u_{k+1} = u_k + o_k, through learned matrices; here u_{k+1} = o_k keeps the idea bare.)
# Then a sequence reading itself: self-attention, Q = K = V = X.

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
# The article's four programs, in this library: **4.1** additive attention on a batch of 2 with
# 7 encoder positions (the weights of each row sum to 1); **4.2** scaled dot-product attention
# and the statistics of q·k (std ≈ √64 = 8 raw, ≈ 1 scaled); **4.3** the alignment matrix of a
# toy identity task, untrained and trained (trained enough, near diagonal); **4.4** the path
# length: ‖∂y_n/∂x_1‖ through a tanh RNN (n − 1 steps) and through one attention read.

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
# "Weighted summary + softmax retrieval" stacks and refers to itself: the same read, with the
# sequence as its own memory, is a layer. Content addressing — retrieve by similarity — is what
# every read above did. Nothing to compute beyond §3 and §4; one check of the claim that the
# read is a layer: two stacked self-attention reads are still differentiable end to end.

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
# The summary in one computation: score (content similarity) → softmax → weighted sum, all
# differentiable — gradcheck it.

# %%
section("六、本節重點")
from minigrad.gradcheck import gradcheck   # noqa: E402 -- the one tool this cell adds
ok = gradcheck(lambda q_, k_: read(ScaledDotScore()(q_, k_), k_)[0],
               [rng.standard_normal((2, 4)), rng.standard_normal((2, 5, 4))])
print(_("  score → softmax → weighted sum, gradcheck in float64: ok") if ok
      else _("  score → softmax → weighted sum, gradcheck in float64: FAILED"))
note("gradcheck", bool(ok))
try_it(_("python -m minigrad.gradcheck checks every op the read is built from."))

# %% [markdown]
# ## 七、思考問題
#
# **Q1** soft averaging blurs: a read of two different values with similar scores is a blend
# of both; a hard read picks one (no gradient); sparsemax (`F.sparsemax`) gives exact zeros
# and keeps a gradient; several heads can each keep one (measured below: two heads, each
# projecting the same keys onto its own coordinate, read the two values apart). **Q2**
# Var(q·k) = d for independent
# components; with correlated q and k (k = ρq + √(1−ρ²) z) the mean is ρd and the variance
# d(1 + ρ²): the analysis no longer holds, and a correlated key stands out by ρ√d after scaling.
# **Q3** attention as explanation: if the values are equal, every weighting reads the same
# context — the weights then explain nothing; and the weight of a position need not rank with
# its gradient. **Q4** linear attention: with a feature map φ (elu + 1), the read
# φ(Q)[φ(K)ᵀV] costs T·d² instead of T²·d and equals the quadratic form. **Q5** keys and
# values as memory: a feed-forward layer W₂ relu(W₁ x) is an unnormalised key–value read,
# Σ_i relu(k_i·x) v_i, keys the rows of W₁ and values the columns of W₂.

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
Kq = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])   # Q1, heads: keys of the three values (S, d)
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
reads = [read(mg.tensor(np.log(w)), same)[0].data[0]
         for w in ([[0.8, 0.1, 0.1]], [[0.1, 0.1, 0.8]])]
print(_("  Q3 equal values, weights (0.8, 0.1, 0.1) vs (0.1, 0.1, 0.8): reads {first} and "
        "{second}: the weights explain nothing here").format(first=reads[0], second=reads[1]))
note("q3_same", bool(np.allclose(reads[0], reads[1])))
differ = 0
for trial in range(200):                                 # self-read: h_j is key and value
    q_, H = rng.standard_normal((1, 4)), mg.tensor(rng.standard_normal((1, 5, 4)),
                                                   requires_grad=True)
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
