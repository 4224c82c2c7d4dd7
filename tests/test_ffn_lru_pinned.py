"""The feed-forward network's transition derivatives and orthogonal draw, and the LRU's scales, options and defaults,
against answers the code did not compute: autograd Jacobians, the Gram-Schmidt property of QR, moments of the
documented laws, the documented defaults (issue 27)."""

import math

import pytest
import torch

from lscnb.models.ffn import DeepFFN
from lscnb.models.lru import LRU, DeepLRU, LRUBlock


@pytest.mark.parametrize("activation", ["sin", "tanh"])
def test_ffn_transition_derivatives_are_layer_jacobians(activation):
    """M_l = d h_l / d h_{l-1} by autograd on h_l = phi(W_l h_{l-1} + b_l), per sample."""
    torch.manual_seed(0)
    net = DeepFFN(3, 4, 3, 1, activation=activation, init="he", seed=1).double()
    with torch.no_grad():
        for layer in net.layers:
            layer.bias.normal_()
    x = torch.randn(2, 3, dtype=torch.float64)
    mats = net.transition_derivatives(x)
    assert len(mats) == 2 and all(m.shape == (2, 4, 4) for m in mats)
    phi = {"sin": torch.sin, "tanh": torch.tanh}[activation]
    for b in range(2):
        h = phi(net.layers[0](x[b]))
        for l, layer in enumerate(net.layers[1:]):
            jac = torch.autograd.functional.jacobian(lambda v, layer=layer: phi(layer(v)), h)
            torch.testing.assert_close(mats[l][b], jac)
            h = phi(layer(h))


def test_ffn_orthogonal_square_layer_is_gram_schmidt_of_its_draw():
    """A square orthogonal layer is QR's Q of the seeded Gaussian draw: its first column is the draw's first column
    normalised (Gram-Schmidt), up to sign, and the layer is orthogonal."""
    net = DeepFFN(2, 5, 2, 1, init="orthogonal", seed=4)
    g = torch.Generator().manual_seed(4)
    torch.randn(5, 2, generator=g)  # the first (5 x 2) layer's draw
    draw = torch.randn(5, 5, generator=g)
    w = net.layers[1].weight.detach()
    torch.testing.assert_close(w @ w.T, torch.eye(5), atol=1e-5, rtol=0)
    first = draw[:, 0] / draw[:, 0].norm()
    assert torch.allclose(w[:, 0], first, atol=1e-5) or torch.allclose(w[:, 0], -first, atol=1e-5)


def test_lru_b_and_c_scales():
    """B_re, B_im ~ N(0, 1/(2 d_model)) and C_re, C_im ~ N(0, 1/d_state) entrywise (Orvieto et al. 2023)."""
    torch.manual_seed(0)
    layer = LRU(50, 4000)
    for p in (layer.B_re, layer.B_im):
        assert p.std().item() == pytest.approx(1 / math.sqrt(100), rel=0.03)
    for p in (layer.C_re, layer.C_im):
        assert p.std().item() == pytest.approx(1 / math.sqrt(4000), rel=0.03)


def test_lru_ring_inner_radius():
    """|lambda|^2 uniform on [r_min^2, r_max^2]: mean (r_min^2 + r_max^2) / 2, minimum at least r_min^2."""
    torch.manual_seed(1)
    r2 = LRU(2, 20_000, r_min=0.5, r_max=0.9).eigenvalues().detach().abs().double() ** 2
    assert r2.mean().item() == pytest.approx((0.25 + 0.81) / 2, rel=0.01)
    assert r2.min().item() >= 0.25 - 1e-5


def test_lru_zero_max_phase_gives_real_eigenvalues():
    """max_phase = 0: every phase is 0 (up to the 1e-12 guard), the eigenvalues are real and finite."""
    torch.manual_seed(2)
    layer = LRU(3, 6, max_phase=0.0)
    lam = layer.eigenvalues().detach()
    assert torch.isfinite(layer.theta_log).all() and torch.isfinite(lam.real).all()
    assert lam.imag.abs().max().item() < 1e-9


def test_lru_block_defaults_and_options():
    """LRUBlock's dropout defaults to 0.1 and its LRU options reach the layer; DeepLRU passes both on."""
    assert LRUBlock(4, 3).dropout.p == 0.1
    block = LRUBlock(4, 30, r_min=0.5, r_max=0.6, normalize=False)
    r = block.lru.eigenvalues().detach().abs()
    assert r.min() >= 0.5 - 1e-5 and r.max() <= 0.6 + 1e-5 and block.lru.normalize is False
    deep = DeepLRU(3, 2, d_model=4, d_state=30, depth=2, dropout=0.3, r_min=0.5, r_max=0.6, normalize=False)
    for b in deep.blocks:
        r = b.lru.eigenvalues().detach().abs()
        assert b.dropout.p == 0.3 and b.lru.normalize is False
        assert r.min() >= 0.5 - 1e-5 and r.max() <= 0.6 + 1e-5
