"""The curse of memory's Monte Carlo estimators and Fig. 7's Adam against answers they did not compute: exact
finite-time moments from the impulse response and the AR(1) covariance, and torch's Adam on a loss written here
(issue 27)."""

import cmath
import math

import numpy as np
import pytest
import torch

from lscnb.theory import memory as M


def _ar1_covariance(steps: int, rho: float) -> np.ndarray:
    """``E[x_i conj(x_j)] = rho^|i-j|`` for a unit-variance stationary AR(1) input."""
    i = np.arange(steps)
    return rho ** np.abs(i[:, None] - i[None, :])


def _exact_moments(lam: complex, rho: float, steps: int) -> tuple[float, float]:
    """``E|h_T|^2`` and ``E|s_T|^2`` after ``T = steps`` updates of ``s <- lam s + h``, ``h <- lam h + x`` from zero:
    ``h_T = sum_k lam^(T-k) x_k`` and ``s_T = sum_{t<T} lam^(T-1-t) h_t``, as coefficient vectors on x_1..x_T."""
    T = steps
    h_coef = np.array([lam ** (T - k) for k in range(1, T + 1)])
    s_coef = np.zeros(T, dtype=complex)
    for t in range(1, T):  # h_t = sum_{k <= t} lam^(t-k) x_k enters s_T with weight lam^(T-1-t)
        s_coef[:t] += lam ** (T - 1 - t) * np.array([lam ** (t - k) for k in range(1, t + 1)])
    cov = _ar1_covariance(T, rho)
    return float((h_coef.conj() @ cov @ h_coef).real), float((s_coef.conj() @ cov @ s_coef).real)


@pytest.mark.parametrize("lam, rho", [(0.8, 0.0), (0.6, 0.7), (0.7 * cmath.exp(0.9j), 0.5)])
def test_monte_carlo_is_the_exact_finite_time_moment(lam, rho):
    h2, s2 = M.monte_carlo(lam, rho, chains=100_000, steps=30, seed=1)
    eh2, es2 = _exact_moments(lam, rho, 30)
    assert h2 == pytest.approx(eh2, rel=0.03) and s2 == pytest.approx(es2, rel=0.04)


def test_monte_carlo_default_steps_reach_the_stationary_law():
    """Real lam, white input: E h^2 = 1 / (1 - lam^2) once stationary."""
    h2, _ = M.monte_carlo(0.5, 0.0, chains=100_000, seed=2)
    assert M.burn_in(0.5, 0.0) == 25 and M.burn_in(0.5, 0.5) == 30 and M.burn_in(0.5, 1.0) == 20
    assert h2 == pytest.approx(1 / (1 - 0.25), rel=0.02)
    assert M.monte_carlo(0.5, 0.0, chains=1000, seed=3) == M.monte_carlo(0.5, 0.0, chains=1000, seed=3)
    assert M.monte_carlo(0.5, 0.0, chains=1000, seed=3) != M.monte_carlo(0.5, 0.0, chains=1000, seed=4)


@pytest.mark.parametrize("lam, rho", [(0.7, 0.0), (0.9, 0.5)])
def test_monte_carlo_reparametrised_is_the_exact_moment(lam, rho):
    """``h_T = gamma sum_k lam^(T-k) x_k`` with gamma detached, so ``dh_T/domega = (dlam/domega) gamma sum_k (T-k)
    lam^(T-k-1) x_k`` and ``dlam/domega = lam log lam`` for ``lam = exp(-exp(omega))``."""
    T = 40
    gamma = math.sqrt(1 - lam**2)
    coef = np.array([lam * math.log(lam) * gamma * (T - k) * lam ** (T - k - 1) for k in range(1, T + 1)])
    exact = float(coef @ _ar1_covariance(T, rho) @ coef)
    got = M.monte_carlo_reparametrised(lam, rho, chains=100_000, steps=T, seed=0)
    assert got == pytest.approx(exact, rel=0.03)


def _loss(lam: torch.Tensor, lam_star: complex) -> torch.Tensor:
    """Eq. 91, written here: ``1/2 (1/(1-|lam|^2) + 1/(1-|lam*|^2) - 2 Re[1/(1 - conj(lam) lam*)])``."""
    r2 = lam.abs() ** 2
    return 0.5 * (1 / (1 - r2) + 1 / (1 - abs(lam_star) ** 2) - 2 * (1 / (1 - lam.conj() * lam_star)).real)


@pytest.mark.parametrize("angle", ["polar", "exp", "opt"])
def test_adam_angle_is_torch_adam_on_eq_91(angle):
    lam0, lam_star = 0.5 * cmath.exp(-2.0j), 0.8 * cmath.exp(0.5j)
    steps, every = 25, 10
    got = M.adam_angle(angle, lam0, lam_star, steps=steps, lr=0.05, betas=(0.8, 0.99), eps=1e-6, record_every=every)
    nu0, th0 = abs(lam0), 2 * math.pi - 2.0
    scale = lambda nu: (1 - nu**2) / (nu * math.sqrt(1 + nu**2))  # noqa: E731 - eq. 109
    w1 = {"polar": th0, "exp": math.log(th0), "opt": th0 / scale(nu0)}[angle]
    w = torch.tensor([math.atanh(nu0), w1], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.05, betas=(0.8, 0.99), eps=1e-6)
    traj, losses = [], []
    for t in range(1, steps + 1):
        nu = torch.tanh(w[0])
        theta = {"polar": w[1], "exp": torch.exp(w[1]), "opt": w[1] * scale(nu.detach())}[angle]  # stop-gradient
        loss = _loss(torch.complex(nu * torch.cos(theta), nu * torch.sin(theta)), lam_star)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if t % every == 0 or t == 1:
            traj.append(w.detach().clone().numpy())
            losses.append(loss.item())
    np.testing.assert_allclose(got["w"], np.array(traj), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got["loss"], losses, rtol=1e-9)
    assert got["steps"].tolist() == [1, 10, 20]


def test_adam_angle_defaults():
    """Fig. 7's defaults: 20,000 steps of Adam (1e-3, betas 0.9/0.999, eps 1e-8), recorded every 10 steps."""
    import inspect

    params = inspect.signature(M.adam_angle).parameters
    assert [params[k].default for k in ("steps", "lr", "betas", "eps", "record_every")] == [
        20_000,
        1e-3,
        (0.9, 0.999),
        1e-8,
        10,
    ]
    short = M.adam_angle("polar", 0.5, 0.9, steps=30)  # a real start: angle 0, fine for the polar angle
    assert short["steps"].tolist() == [1, 10, 20, 30] and short["w"].shape == (4, 2)


def test_monte_carlo_estimators_repeat_with_their_seed():
    lam = 0.6 * cmath.exp(0.4j)
    assert M.monte_carlo(lam, 0.3, chains=500, steps=10, seed=2) == M.monte_carlo(
        lam, 0.3, chains=500, steps=10, seed=2
    )
    assert M.monte_carlo(lam, 0.3, chains=500, steps=10, seed=2) != M.monte_carlo(
        lam, 0.3, chains=500, steps=10, seed=3
    )
    one = M.monte_carlo_reparametrised(0.8, 0.3, chains=500, steps=10, seed=2)
    assert one == M.monte_carlo_reparametrised(0.8, 0.3, chains=500, steps=10, seed=2)
    assert one != M.monte_carlo_reparametrised(0.8, 0.3, chains=500, steps=10, seed=3)


def test_eq53_sensitivity_of_an_input_k_steps_back():
    """A unit input k steps before the end leaves k lam^(k-1) in s_T (eq. 53 corrected; printed: (k-1) lam^(k-2))."""
    lam, T = 0.9, 30
    for k in range(1, 6):
        x = np.zeros(T)
        x[T - 1 - k] = 1.0
        assert M.final_sensitivity(lam, x) == pytest.approx(k * lam ** (k - 1), rel=1e-12)
    assert M.final_sensitivity(lam, np.ones(3)) == pytest.approx(1 + 2 * lam)  # inputs 1 and 2 steps back


def test_eq57_sum_with_the_corrected_denominator_is_the_closed_form():
    for lam, rho in ((0.99, 0.0), (0.99 * cmath.exp(0.25j * math.pi), 0.9), (0.9, 0.5)):
        p = abs(lam) ** 2
        corrected = M.eq57_sum(lam, rho, (1 - p) ** 3)
        assert corrected == pytest.approx(float(M.sensitivity_variance(lam, rho)), rel=1e-6)
    white = M.eq57_sum(0.99, 0.0, (1 - 0.99**2) ** 3)
    printed = M.eq57_sum(0.99, 0.0, (1 - 0.99) ** 3)
    assert printed / white == pytest.approx(1.99**3, rel=1e-3)  # (1 + |lam|)^3 too large (white input: one term)
    assert M.eq57_sum(0.5, 0.0, 1.0, lags=1) == pytest.approx((1 + 0.25) * 1.0 + 0.0)  # rho = 0: only Delta = 0 counts


def test_local_slope_of_the_sensitivity():
    assert M.local_slope(1e-5, 0.0) == pytest.approx(3.0, abs=1e-3)  # E s^2 ~ (1 - lam)^-3, white inputs
    assert M.local_slope(1e-5, 1.0) == pytest.approx(4.0, abs=0.05)
    assert M.local_slope(1e-3, 0.99) == pytest.approx(3.0, abs=0.05)  # memory 1000 steps > the inputs' 100
    assert M.local_slope(1e-1, 0.99) > 3.8  # memory 10 steps < the inputs' 100: nearly the rho = 1 slope
    lams = 1 - 0.1 * np.array([1.2, 1 / 1.2])
    s = M.sensitivity_variance(lams, 0.0)
    assert M.local_slope(0.1, 0.0, factor=1.2) == pytest.approx(float(np.log(s[1] / s[0]) / np.log(1.44)))
