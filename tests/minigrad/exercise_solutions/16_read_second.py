"""Reference solution: the attention read composed from ops, its gradient in e recorded with
create_graph=True, then differentiated with g by the engine (a double backward)."""
import minigrad as mg


def read_second_vjp(g, e, h, gc):
    e, h, gc = (mg.tensor(x, requires_grad=True) for x in (e, h, gc))
    w = mg.exp(e - e.data.max(axis=-1, keepdims=True))
    alpha = w / w.sum(axis=-1, keepdims=True)                     # (B, S)
    c = (mg.expand_dims(alpha, 1) @ h).squeeze(1)                 # (B, D)
    (a,) = mg.grad((c * gc).sum(), [e], create_graph=True)        # (B, S), with its graph
    return mg.grad(a, [e, h, gc], grad_outputs=g)
