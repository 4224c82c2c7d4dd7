"""The non-normal RNN theory (lscnb.theory.fisher) against answers it did not compute: the delay line's Fisher memory
by the Lyapunov equation and by hand, transients of an orthogonal map, sub-diagonals and powers written out
(issue 27)."""

import math

import numpy as np
import pytest

from lscnb.theory import fisher as F


@pytest.mark.parametrize("alpha, eps", [(1.0, 1.0), (1.0, 0.5), (0.6, 1.0), (1.7, 2.0)])
def test_delay_line_closed_form_is_the_lyapunov_fmc(alpha, eps):
    n = 12
    W = F.delay_line(n, math.sqrt(alpha))
    e1 = np.eye(n)[0]
    numeric = F.fisher_memory_curve(W, 3 * e1, n, eps=eps)  # v is normalised
    np.testing.assert_allclose(F.fmc_delay_line(np.arange(n), alpha, eps), numeric, rtol=1e-9)


def test_delay_line_fmc_by_hand():
    assert F.fmc_delay_line(0, 1.0).item() == 1.0 and F.fmc_delay_line(3, 1.0, 0.5).item() == pytest.approx(0.5)
    # alpha = 2, k = 1: 2 (2 - 1) / (4 - 1) = 2/3
    assert F.fmc_delay_line(1, 2.0).item() == pytest.approx(2 / 3) and F.fmc_delay_line(1, 2.0, 4.0) == pytest.approx(
        1 / 6
    )
    assert F.fmc_delay_line([0, 1], 2.0).tolist() == pytest.approx([1.0, 2 / 3])
    W = np.array([[0.0, 0.0], [2.0, 0.0]])  # W e1 = 2 e2, W^2 = 0: C = eps (I + W W^T) = diag(1, 5)
    assert F.fisher_memory_curve(W, [1.0, 0.0], 3).tolist() == pytest.approx([1.0, 4 / 5, 0.0])


def test_henrici_and_schur_by_hand():
    assert F.henrici(np.array([[1.0, 3.0], [0.0, 2.0]])) == pytest.approx(3.0)  # ||A||_F^2 = 14, eigenvalues 1, 2
    assert F.henrici(np.array([[0.0, -1.0], [1.0, 0.0]])) == pytest.approx(0.0, abs=1e-7)  # sqrt of round-off
    with pytest.raises(ValueError, match=r"A must be a square matrix, got shape \(2, 3\)"):
        F.henrici(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="A must be a square matrix"):
        F.henrici(np.zeros(3))
    A = np.array([[1, 2, 0], [0, 1, 3], [1, 0, 2]])  # integers: converted to float
    Q, theta = F.real_schur_lower(A)
    np.testing.assert_allclose(Q @ theta @ Q.T, A, atol=1e-12)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), atol=1e-12)
    assert np.allclose(np.triu(theta, 2), 0)  # block lower triangular: nothing above the first super-diagonal
    assert Q.dtype == np.float64 and np.isrealobj(theta)


def test_transients_of_a_rotation_and_a_shift():
    c, s = math.cos(0.3), math.sin(0.3)
    rot = np.array([[c, -s], [s, c]])
    out = F.transients(rot, 4, samples=50, seed=0)
    np.testing.assert_allclose(out["norm_mean"], 1.0)
    np.testing.assert_allclose(out["norm_std"], 0.0, atol=1e-12)
    shift = F.delay_line(3, 2.0)
    out = F.transients(shift, 4, samples=200, seed=1)
    assert out["norm_mean"][0] == pytest.approx(1.0) and out["norm_mean"][3] == 0.0  # W^3 = 0
    rng = np.random.default_rng(1)  # the same draws: unit vectors, then one step of the shift
    h = rng.standard_normal((200, 3))
    h /= np.linalg.norm(h, axis=1, keepdims=True)
    h1 = h @ shift.T
    assert out["norm_mean"][1] == pytest.approx(np.linalg.norm(h1, axis=1).mean())
    assert out["unit_std_mean"][1] == pytest.approx(h1.std(axis=1).mean())
    assert out["unit_std_std"][1] == pytest.approx(h1.std(axis=1).std())
    assert out["norm_std"][1] == pytest.approx(np.linalg.norm(h1, axis=1).std())
    assert len(F.transients(shift, 2)["norm_mean"]) == 2


def test_rotation_blocks_and_angles():
    lam = F.rotation_blocks([0.5, math.pi / 2], [2.0, 1.0])
    expected = np.zeros((4, 4))
    expected[:2, :2] = 2 * np.array([[math.cos(0.5), -math.sin(0.5)], [math.sin(0.5), math.cos(0.5)]])
    expected[2:, 2:] = [[0.0, -1.0], [1.0, 0.0]]
    np.testing.assert_allclose(lam, expected, atol=1e-15)
    with pytest.raises(ValueError, match="theta and gamma must be vectors of one length"):
        F.rotation_blocks([0.1, 0.2], [1.0])
    assert F.angle_concentration([0.3, 0.3]) == pytest.approx(1.0)
    assert F.angle_concentration([0.0, math.pi]) == pytest.approx(0.0, abs=1e-12)
    assert F.angle_concentration([0, 1]) == pytest.approx(abs((1 + np.exp(1j)) / 2))


def test_subdiagonal_profile_and_unipotent_power_by_hand():
    theta = np.array([[1.0, 0, 0], [2.0, 1, 0], [-4.0, 6.0, 1]])
    assert F.subdiagonal_profile(theta).tolist() == [4.0, 4.0]  # |2|, |6| then |-4|
    assert F.subdiagonal_profile(theta.astype(int), kmax=1).tolist() == [4.0]
    with pytest.raises(ValueError, match="kmax must be at most n - 1 = 2, got 3"):
        F.subdiagonal_profile(theta, kmax=3)
    with pytest.raises(ValueError, match=r"theta must be a square matrix, got shape \(3,\)"):
        F.subdiagonal_profile(np.zeros(3))
    A = np.eye(4) + 0.5 * np.triu(np.ones((4, 4)), 1)
    for t in (0, 1, 3):
        np.testing.assert_allclose(F.unipotent_power(4, 0.5, t), np.linalg.matrix_power(A, t), rtol=1e-12)
