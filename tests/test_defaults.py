"""Default arguments that are a paper's values (issue 27: mutated defaults survived where tests pass the value).

Each test calls with the defaults and compares with the explicit call using the paper's value, written out here (a
test of "default == the paper's value"); where the result has a closed form, it is checked against that instead.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from lscnb.data import embeddings
from lscnb.models import deep_recurrent
from lscnb.theory import memory, vanilla
from lscnb.theory import roa as roa_theory


def _same(a, b):
    """Equal results: dicts, tuples and arrays element by element."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)) and not np.isscalar(a):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("angle", ["polar", "exp", "opt"])
def test_adam_angle_uses_adams_default_hyperparameters(angle):
    # Kingma & Ba (2015), Algorithm 1: "good default settings ... alpha = 0.001, beta1 = 0.9, beta2 = 0.999,
    # epsilon = 1e-8"; Fig. 7 of Zucchet & Orvieto (2024) uses Adam with them
    lam0, lam_star = 0.6 * np.exp(0.5j), 0.9 * np.exp(0.1j)
    default = memory.adam_angle(angle, lam0, lam_star, steps=40)
    explicit = memory.adam_angle(angle, lam0, lam_star, steps=40, lr=0.001, betas=(0.9, 0.999), eps=1e-8)
    _same(default, explicit)


@pytest.mark.parametrize("steps", [None, 6])
def test_gated_moments_default_input_is_the_papers_bert_fit(steps):
    # Zucchet & Orvieto (2024), App. D.3 / Fig. 12: R_x(D) = 0.332 delta_{D,0} + 0.044 * 0.997^|D|
    lam = np.array([0.3, 0.9])
    _same(memory.gated_moments(lam, steps=steps), memory.gated_moments(lam, ((0.332, 0.0), (0.044, 0.997)), steps))


def test_bert_like_default_autocorrelation_is_the_papers_fit():
    # Zucchet & Orvieto (2024), App. D.1 / Fig. 12: white 0.332, slow 0.044, rho 0.997
    default = embeddings.bert_like(2, 5, 3, generator=torch.Generator().manual_seed(0))
    explicit = embeddings.bert_like(
        2, 5, 3, white=0.332, slow=0.044, rho=0.997, generator=torch.Generator().manual_seed(0)
    )
    torch.testing.assert_close(default, explicit, rtol=0, atol=0)


def test_vanilla_defaults_are_the_autonomous_network():
    # Poole et al. (2016) / Chen et al. (2018), (MF1)-(MF2) without input or bias: for g < 1 the variance map
    # q -> g^2 E[tanh(sqrt(q) z)^2] contracts to q* = 0, where chi = g^2 tanh'(0)^2 = g^2
    g = 0.5
    assert vanilla.fixed_point(g=g) == pytest.approx(0.0, abs=1e-9)
    assert vanilla.chi(g=g) == pytest.approx(g**2, rel=1e-9)
    assert vanilla.gradient_rate(g=g) == pytest.approx(g, rel=1e-9)
    assert vanilla.chi(g=g) == vanilla.chi(g=g, activation="tanh", input_var=0.0, bias_var=0.0)


def test_roa_bounds_default_to_one_lipschitz_activations():
    # Ceni (2022), Thms 2.1 and 3.1 for 1-Lipschitz activations (tanh, ReLU): phi' in [0, r] with r = 1
    rho, sigma, maps, alpha = 0.8, 1.3, 4, 0.2
    assert roa_theory.upper_bound(rho, sigma, maps) == pytest.approx((1 + rho / maps * (sigma - 1)) ** maps)
    assert roa_theory.lower_bound(rho, sigma, maps) == roa_theory.lower_bound(rho, sigma, maps, r=1.0)
    assert roa_theory.lower_bound_paper(rho, sigma) == pytest.approx(math.exp(-rho * (1 + sigma)))
    assert roa_theory.annulus(alpha, sigma) == pytest.approx((1 - alpha * (1 + sigma), 1 + alpha * (sigma - 1)))
    centre, radius = roa_theory.eye_disc(alpha, sigma)
    assert centre == 1 - alpha
    assert radius == pytest.approx(alpha * sigma)


def test_diagonal_recurrence_defaults_are_deep_recurrent_nets_ring_at_nu0_0():
    # DeepRecurrentNet (App. D.1 of Zucchet & Orvieto 2024) draws moduli on [nu0, (1 + nu0) / 2]; its default nu0 is 0
    a = deep_recurrent.DiagonalRecurrence(2, 6, generator=torch.Generator().manual_seed(0))
    b = deep_recurrent.DiagonalRecurrence(2, 6, nu_min=0.0, nu_max=0.5, generator=torch.Generator().manual_seed(0))
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        torch.testing.assert_close(p, q, rtol=0, atol=0, msg=name)
    moduli = a.eigenvalues().abs()
    assert bool(((moduli >= 1e-4 - 1e-7) & (moduli <= 0.5 + 1e-6)).all())
