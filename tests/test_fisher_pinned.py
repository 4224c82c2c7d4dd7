"""lscnb.theory.fisher pinned against answers it did not compute: low-precision inputs promoted to float64 (checked
against closed forms at float64 precision), documented defaults, exact error messages and a float64 edge case of the
unipotent power (issue 27)."""

import math

import numpy as np
import pytest

from lscnb.theory import fisher as F


def test_real_schur_lower_works_in_float64_for_float32_input():
    """A float32 matrix is decomposed in float64: Q Theta Q^T rebuilds it to float64 round-off."""
    A = np.array([[0.1, 2.3, 0.0], [0.7, 1.1, 3.0], [1.3, 0.2, 2.0]], dtype=np.float32)
    Q, theta = F.real_schur_lower(A)
    assert Q.dtype == np.float64 and theta.dtype == np.float64
    np.testing.assert_allclose(Q @ theta @ Q.T, A.astype(np.float64), rtol=0, atol=1e-13)
    np.testing.assert_allclose(Q.T @ Q, np.eye(3), rtol=0, atol=1e-13)


@pytest.mark.parametrize("w_dtype, v_dtype", [(np.float16, np.float64), (np.float64, np.float16)])
def test_fisher_memory_curve_of_a_scaled_identity_in_float64(w_dtype, v_dtype):
    """W = a I is normal: C = eps I / (1 - a^2) and J(k) = a^(2k) (1 - a^2) / eps for any unit v (float16 inputs)."""
    a16 = np.float16(0.3)
    a = float(a16)  # the float16 value, exactly
    W = (a16 * np.eye(2, dtype=np.float16)).astype(w_dtype)
    v = np.array([1.0, 2.0]).astype(v_dtype)
    got = F.fisher_memory_curve(W, v, 4, eps=0.5)
    want = np.array([a ** (2 * k) * (1 - a * a) / 0.5 for k in range(4)])
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_fmc_delay_line_float16_lags_in_float64():
    """J(k) = alpha^k (alpha - 1) / (alpha^(k+1) - 1) at alpha = 2: 1, 2/3, 4/7 (float16 lags, float64 answer)."""
    got = F.fmc_delay_line(np.arange(3, dtype=np.float16), 2.0)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [1.0, 2 / 3, 4 / 7], rtol=1e-15)


def test_transients_defaults_are_1000_samples_and_seed_4():
    """The signature's documented defaults (samples=1000, seed=4) pinned against the explicit call."""
    theta = np.array([[0.9, 0.0, 0.0], [1.5, 0.5, 0.0], [0.3, 2.0, 0.2]])
    got, want = F.transients(theta, 3), F.transients(theta, 3, samples=1000, seed=4)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])
    other = F.transients(theta, 3, samples=1001, seed=4)
    assert not np.array_equal(other["norm_std"], want["norm_std"])


def test_rotation_blocks_float16_angles_in_float64():
    """gamma [[cos, -sin], [sin, cos]](theta) with cos/sin taken in float64 of the float16 angle's value."""
    th, g = np.array([0.3, 1.1], dtype=np.float16), np.array([0.9, 0.5])
    lam = F.rotation_blocks(th, g)
    t = th.astype(np.float64)
    for i in range(2):
        c, s = g[i] * math.cos(t[i]), g[i] * math.sin(t[i])
        np.testing.assert_allclose(lam[2 * i : 2 * i + 2, 2 * i : 2 * i + 2], [[c, -s], [s, c]], rtol=1e-15)


def test_subdiagonal_profile_float16_in_float64_and_rejects_non_square():
    """Mean |entry| per sub-diagonal by hand on float16 values; a (2, 3) matrix is refused with its shape."""
    theta = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.7, -0.3, 0.0]], dtype=np.float16)
    t = theta.astype(np.float64)
    got = F.subdiagonal_profile(theta)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [(t[1, 0] + abs(t[2, 1])) / 2, t[2, 0]], rtol=1e-15)
    with pytest.raises(ValueError, match=r"^theta must be a square matrix, got shape \(2, 3\)$"):
        F.subdiagonal_profile(np.zeros((2, 3)))


def test_angle_concentration_float16_in_float64_and_empty_message():
    """|mean exp(i theta)| = |cos((a - b)/2)| for two angles, in float64 of their float16 values; empty is refused."""
    angles = np.array([0.1, 0.7], dtype=np.float16)
    a, b = (float(x) for x in angles)
    assert F.angle_concentration(angles) == pytest.approx(abs(math.cos((a - b) / 2)), rel=1e-15)
    with pytest.raises(ValueError, match=r"^angles must not be empty$"):
        F.angle_concentration([])


def test_unipotent_power_huge_x_matches_the_matrix_power():
    """(I + x S)^2 written out: entry (0, 2) is 2x + x^2, finite in float64 at x = 1e150 (no spurious terms)."""
    x = 1e150
    got = F.unipotent_power(3, x, 2)
    want = np.array([[1.0, 2 * x, 2 * x + x * x], [0.0, 1.0, 2 * x], [0.0, 0.0, 1.0]])
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-15)
