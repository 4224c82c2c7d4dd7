import math

import pytest

from lscnb.exercises import first_state_gradient


def test_first_state_gradient_long_term_set_keeps_the_first_state():
    kept = [first_state_gradient(T, rho=5, seed=1) for T in (20, 200)]
    buffer_only = [first_state_gradient(T, rho=0, seed=1) for T in (20, 200)]
    plain = first_state_gradient(200, attention=False, seed=1)
    assert kept[1] > 0.1 * kept[0]  # the skip connection: about as large at T = 200 as at T = 20
    assert buffer_only[1] < 1e-6 * buffer_only[0]  # a buffer alone: exponential decay with T
    assert plain < buffer_only[1] < kept[1]
    assert all(math.isfinite(v) and v >= 0 for v in kept + buffer_only + [plain])


def test_first_state_gradient_is_deterministic_and_checks_its_arguments():
    assert first_state_gradient(30, seed=2) == first_state_gradient(30, seed=2)
    with pytest.raises(ValueError):
        first_state_gradient(0)
