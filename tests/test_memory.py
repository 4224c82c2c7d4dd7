"""The curse of memory: closed forms (with the eq. 59 erratum), Monte Carlo, autodiff, the linear students."""
import math
import types

import numpy as np
import pytest
import torch

from lscnb.models.linear_rnn import DenseLinearRNN, DiagonalLRU, Teacher, causal_conv, power_vectors
from lscnb.theory import memory as m

# the spec's reference table: (rho, lam) -> (E h^2, E s^2)
REFERENCE = {(0.0, 0.9): (5.26316, 263.887), (0.0, 0.99): (50.2513, 2.51263e5), (0.0, 0.999): (500.25, 2.50125e8),
             (0.9, 0.9): (50.1385, 3756.95), (0.9, 0.99): (871.79, 4.73781e6), (0.9, 0.999): (9415.51, 4.75196e9),
             (0.99, 0.99): (5000.13, 3.75006e7), (1.0, 0.9): (100, 1e4), (1.0, 0.99): (1e4, 1e8)}


@pytest.mark.parametrize("key", sorted(REFERENCE))
def test_closed_forms_match_reference_table(key):
    rho, lam = key
    h, s = REFERENCE[key]
    assert float(m.hidden_variance(lam, rho)) == pytest.approx(h, rel=1e-5)
    assert float(m.sensitivity_variance(lam, rho)) == pytest.approx(s, rel=1e-5)


def test_complex_reference_values():
    lam = 0.99 * np.exp(1j * np.pi / 4)
    assert float(m.hidden_variance(lam, 0.9)) == pytest.approx(19.4032, rel=1e-5)
    assert float(m.sensitivity_variance(lam, 0.9)) == pytest.approx(88909, rel=1e-5)


@pytest.mark.parametrize("lam,rho", [(0.9, 0.0), (0.9, 0.5), (0.95 * np.exp(0.4j), 0.7), (0.99, 0.9)])
def test_closed_forms_equal_the_double_series(lam, rho):
    h, s = m.series_moments(lam, rho)
    assert float(m.hidden_variance(lam, rho)) == pytest.approx(h, rel=1e-8)
    assert float(m.sensitivity_variance(lam, rho)) == pytest.approx(s, rel=1e-8)


def test_printed_eq59_is_wrong_between_the_limits_only():
    for rho in (0.0, 1.0):
        assert float(m.sensitivity_variance_printed(0.99, rho)) == pytest.approx(float(m.sensitivity_variance(0.99, rho)),
                                                                                 rel=1e-9)
    assert float(m.sensitivity_variance_printed(0.99, 0.9)) == pytest.approx(2.50e6, rel=0.01)
    assert float(m.sensitivity_variance(0.99, 0.9)) == pytest.approx(4.73781e6, rel=1e-5)


@pytest.mark.parametrize("lam,rho", [(0.9, 0.0), (0.99, 0.9), (0.99, 1.0), (0.95 * np.exp(1j * np.pi / 4), 0.9)])
def test_monte_carlo_matches_closed_forms(lam, rho):
    h, s = m.monte_carlo(lam, rho, chains=8192, seed=3)
    assert h == pytest.approx(float(m.hidden_variance(lam, rho)), rel=0.08)
    assert s == pytest.approx(float(m.sensitivity_variance(lam, rho)), rel=0.08)


def test_sensitivity_is_what_autograd_computes():
    lam = torch.tensor(0.97, dtype=torch.float64, requires_grad=True)
    x = torch.randn(200, dtype=torch.float64)
    h, s = torch.zeros((), dtype=torch.float64), torch.zeros((), dtype=torch.float64)
    for t in range(200):
        s = lam.detach() * s + h.detach()
        h = lam * h + x[t]
    (grad,) = torch.autograd.grad(h, lam)
    assert float(grad) == pytest.approx(float(s), rel=1e-10)


def test_scaling_laws():
    lams = 1 - np.logspace(-2, -4, 5)
    for rho, lo, hi in ((0.0, 2.9, 3.1), (1.0, 3.9, 4.1)):
        slope = -np.polyfit(np.log(1 - lams), np.log(m.sensitivity_variance(lams, rho)), 1)[0]
        assert lo < slope < hi


def test_normalisation_and_reparametrisation():
    lams = np.linspace(0.9, 0.9999, 30)
    assert np.allclose((1 - lams ** 2) * m.hidden_variance(lams, 0.0), 1.0, atol=1e-12)
    flat = m.normalised_sensitivity(lams, 0.0)
    assert np.all((flat >= 0.45) & (flat <= 0.5))
    assert m.normalised_sensitivity(0.9999, 1.0) > 50 * m.normalised_sensitivity(0.99, 1.0)
    for rho in (0.0, 0.9):
        assert m.monte_carlo_reparametrised(0.99, rho, chains=8192) == pytest.approx(
            float(m.normalised_sensitivity(0.99, rho)), rel=0.08)


def test_landscape_real_is_the_expected_squared_error():
    gen = torch.Generator().manual_seed(0)
    lam, star = 0.8, 0.95
    x = torch.randn(20000, 400, generator=gen, dtype=torch.float64)
    k = torch.arange(400, dtype=torch.float64)
    diff = causal_conv(x, lam ** k - star ** k)[:, -1]
    assert float(0.5 * diff.pow(2).mean()) == pytest.approx(float(m.landscape_real(lam, star)), rel=0.05)
    assert float(m.landscape_real(star, star)) == pytest.approx(0.0, abs=1e-9)
    assert float(m.landscape_angle(0.0, star)) == pytest.approx(0.0, abs=1e-9)


# ------------------------------------------------------------------------------------------- students
@pytest.mark.parametrize("model", [DenseLinearRNN(12, seed=1, dtype=torch.float64),
                                   DenseLinearRNN(12, heads=6, seed=1, dtype=torch.float64),
                                   DiagonalLRU(12, nu0=0.9, dtype=torch.float64),
                                   DiagonalLRU(12, nu0=0.5, param="default", gamma=False, dtype=torch.float64)])
def test_convolution_equals_recurrence(model):
    x = torch.randn(3, 150, dtype=torch.float64)
    torch.testing.assert_close(model(x), model.forward_recurrent(x), rtol=1e-9, atol=1e-10)


def test_parameter_counts_of_the_paper():
    from lscnb.experiments.memory import make_student
    counts = {name: sum(p.numel() for p in make_student(name, 64, 0.99, 0).parameters())
              for name in ("dense", "block", "block128", "complex", "complex+γ", "lru")}
    assert counts == {"dense": 4225, "block": 257, "block128": 513, "complex": 385, "complex+γ": 449, "lru": 449}


def test_teacher_eigenvalues_and_samples():
    t = Teacher(10, nu0=0.92, seed=4)
    mags = torch.linalg.eigvals(t.A).abs()
    assert bool((mags >= 0.92 - 1e-9).all() and (mags < 1).all())
    x, y = t.sample(5, 80, torch.Generator().manual_seed(0), dtype=torch.float64)
    h, ys = torch.zeros(5, 10, dtype=torch.float64), []
    for k in range(80):
        h = h @ t.A.T + x[:, k:k + 1] * t.B
        ys.append(h @ t.C + t.D * x[:, k])
    torch.testing.assert_close(y, torch.stack(ys, 1))


def test_power_vectors():
    A, b = torch.randn(2, 4, 4, dtype=torch.float64) / 2, torch.randn(2, 4, dtype=torch.float64)
    v = power_vectors(A, b, 11)
    torch.testing.assert_close(v[7], (torch.linalg.matrix_power(A, 7) @ b.unsqueeze(-1)).squeeze(-1))


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="lam"):
        m.hidden_variance(1.2, 0.0)
    with pytest.raises(ValueError, match="rho"):
        m.sensitivity_variance(0.5, 1.5)
    with pytest.raises(ValueError, match="param"):
        m.normalised_sensitivity(0.5, 0.0, param="tanh")
    with pytest.raises(ValueError, match="heads"):
        DenseLinearRNN(10, heads=3)
    with pytest.raises(ValueError, match="nu0"):
        DiagonalLRU(8, nu0=1.0)
    with pytest.raises(ValueError, match="chains"):
        m.monte_carlo(0.5, 0.0, chains=0)


def test_chapter_runs_at_full_configuration_shrunk():
    from lscnb.experiments import memory as ex
    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    for name, build in ex.FIGURES.items():
        run = build("full")[0]
        cfg = dict(run.config, chains=64, steps=5, lams=[0.9])
        out = run.fn(cfg, ctx)
        assert out, name
    assert {e["figure"] for e in ex.REPRODUCES if e["figure"]} <= set(ex.FIGURES)
    models = {r.config["model"] for r in ex.teacher_runs("full")}
    assert models == set(ex.ABLATION)
