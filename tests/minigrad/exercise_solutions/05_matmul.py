"""Reference solution: the engine's own reverse mode through A @ B."""
import minigrad as mg


def matmul_vjp(g, A, B):
    A, B = mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)
    return mg.grad(A @ B, (A, B), grad_outputs=g)
