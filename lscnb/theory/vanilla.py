"""Mean-field theory of a wide vanilla RNN at initialisation (Poole et al. 2016; Chen et al. 2018).

For ``h_t = phi(a_t)``, ``a_t = W h_{t-1} + U x_t + b`` with ``W_ij ~ N(0, g^2/N)``, ``U_ij ~ N(0, s_u^2/D)``,
``x ~ N(0, 1)`` and ``b_i ~ N(0, s_b^2)``, the pre-activation variance obeys

    q_t = g^2 E[phi(sqrt(q_{t-1}) z)^2] + s_u^2 + s_b^2                        (MF1)

and a backpropagated gradient's squared norm is multiplied at every step by

    chi = g^2 E[phi'(sqrt(q*) z)^2]                                           (MF2)

at the fixed point ``q*`` of (MF1). So ``||dL/dh_t||`` decays or grows by ``sqrt(chi)`` per step. For a linear
RNN ``chi = g^2``: the rate is the spectral radius of W. Widths are finite and W is tied across time, so the
measured rates differ from (MF2) by a few percent; the chapter measures by how much.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import checks
from ..models.activations import get_activation
from .gaussian import expect


def _np(fn_name: str):
    phi = get_activation(fn_name)
    return lambda x: phi(torch.as_tensor(x)).numpy()


def _dphi(fn_name: str):
    phi = get_activation(fn_name)

    def d(x):
        t = torch.as_tensor(x, dtype=torch.float64).requires_grad_(True)
        (g,) = torch.autograd.grad(phi(t).sum(), t)
        return g.numpy()

    return d


def variance_map(q, *, g: float, activation: str = "tanh", input_var: float = 0.0, bias_var: float = 0.0):
    """One step of (MF1): the pre-activation variance after a step from variance ``q``."""
    return g**2 * expect(lambda x: _np(activation)(x) ** 2, q) + input_var + bias_var


def fixed_point(
    *,
    g: float,
    activation: str = "tanh",
    input_var: float = 0.0,
    bias_var: float = 0.0,
    q0: float = 1.0,
    tol: float = 1e-12,
    max_iter: int = 10_000,
) -> float:
    """The fixed point ``q*`` of (MF1), by iteration from ``q0`` (0 when the map contracts to the origin)."""
    g = checks.positive_float(g, "g")
    checks.positive_float(input_var, "input_var", allow_zero=True)
    checks.positive_float(bias_var, "bias_var", allow_zero=True)
    if activation == "relu" and g >= np.sqrt(2) and input_var + bias_var > 0:
        return float("inf")  # the variance of a ReLU RNN with g >= sqrt(2) grows without bound
    q = float(q0)
    for _ in range(max_iter):
        new = float(variance_map(q, g=g, activation=activation, input_var=input_var, bias_var=bias_var))
        if abs(new - q) <= tol * max(1.0, q):
            return new
        q = new
    return q


def chi(*, g: float, activation: str = "tanh", input_var: float = 0.0, bias_var: float = 0.0) -> float:
    """(MF2): the per-step factor of the squared gradient norm at the fixed point."""
    if activation == "linear":
        return float(g) ** 2
    if activation == "relu":
        return float(g) ** 2 / 2.0  # phi' is 1 on half the units whatever q is
    q = fixed_point(g=g, activation=activation, input_var=input_var, bias_var=bias_var)
    return float(g**2 * expect(lambda x: _dphi(activation)(x) ** 2, q))


def gradient_rate(*, g: float, activation: str = "tanh", input_var: float = 0.0, bias_var: float = 0.0) -> float:
    """Predicted per-step factor of ``||dL/dh_t||``: ``sqrt(chi)``."""
    return float(np.sqrt(chi(g=g, activation=activation, input_var=input_var, bias_var=bias_var)))
