"""Reference solution: the logistic loss composed from ops, differentiated twice by the engine
(the first gradient recorded with create_graph=True, then its VJP with g)."""
import minigrad as mg


def hvp_vjp(g, w, X, y):
    w = mg.tensor(w, requires_grad=True)
    z = mg.tensor(X) @ w                                          # (N,)
    loss = (mg.log(1 + mg.exp(z)) - y * z).mean()
    (grad,) = mg.grad(loss, [w], create_graph=True)               # (D,), with its graph
    return mg.grad(grad, [w], grad_outputs=g)
