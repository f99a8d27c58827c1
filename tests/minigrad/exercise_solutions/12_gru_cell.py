"""Reference solution: one torch-layout GRU step composed from linear algebra and split."""
import minigrad as mg


def gru_cell_vjp(g, x, h, W_ih, W_hh, b_ih, b_hh):
    ts = [mg.tensor(a, requires_grad=True) for a in (x, h, W_ih, W_hh, b_ih, b_hh)]
    x, h, W_ih, W_hh, b_ih, b_hh = ts
    i_r, i_z, i_n = mg.split(x @ W_ih.transpose() + b_ih, 3, axis=1)
    h_r, h_z, h_n = mg.split(h @ W_hh.transpose() + b_hh, 3, axis=1)
    r = mg.sigmoid(i_r + h_r)
    z = mg.sigmoid(i_z + h_z)
    n = mg.tanh(i_n + r * h_n)
    return mg.grad(n + z * (h - n), ts, grad_outputs=g)
