"""lscnb.models.unified pinned against answers it did not compute (issue 27, surviving mutants): hand-written
eq. (1) on batched states, the check helper's draws written out, documented defaults, exact messages, seeded
draws under different global RNG states, and dtypes."""

import math

import pytest
import torch
from pinning import assert_same_params, params_of

from lscnb.models import unified as U

GATES = {"vanilla": "f", "gru": ("f", "r", "r2"), "peephole": "ifro", "lstm": "ifro"}


def test_missing_gates_have_zero_variance():
    """A gate absent from sigma2 or nu2 has variance 0 (as absent biases have mean 0)."""
    theta = U.Theta("gru", sigma2={"f": 2.0}, nu2={"r": 3.0})
    assert [theta.s2(k) for k in ("f", "r", "r2")] == [2.0, 0.0, 0.0]
    assert [theta.n2(k) for k in ("f", "r", "r2")] == [0.0, 3.0, 0.0]
    assert [theta.m(k) for k in ("f", "r", "r2")] == [0.0, 0.0, 0.0]


def test_uniform_theta_defaults_are_unit_variances():
    """uniform_theta(arch): sigma2 = nu2 = 1 for every gate, no biases."""
    assert U.uniform_theta("gru") == U.Theta("gru", {"f": 1.0, "r": 1.0, "r2": 1.0}, {"f": 1.0, "r": 1.0, "r2": 1.0})


def test_error_messages():
    """The messages name what was wrong, in full."""
    with pytest.raises(ValueError, match=r"^unknown field 'bias': use sigma2, nu2 or mu$"):
        U.uniform_theta("gru").with_(bias={"f": 1.0})
    with pytest.raises(ValueError, match=r"^arch must be one of \['gru', 'lstm', 'peephole', 'vanilla'\], got 'rnn'$"):
        U.update("rnn", torch.zeros(2), lambda k, x: x)
    with pytest.raises(ValueError, match=r"^thetas must be a non-empty list of Theta of one architecture$"):
        U.GatedClassifier([], n=2, d=1, length=1, classes=2)


def _hand_update(arch, s, pre):
    """Eq. (1a) with Table 1/3 written out here."""
    sig, tanh = torch.sigmoid, torch.tanh
    if arch == "vanilla":
        return tanh(pre("f", s))
    if arch == "gru":
        f, r = sig(pre("f", s)), sig(pre("r", s))
        return f * s + (1 - f) * tanh(pre("r2", r * s))
    if arch == "peephole":
        return sig(pre("f", s)) * s + sig(pre("i", s)) * tanh(pre("r", s))
    n = s.shape[-1] // 2
    h, c = s[..., :n], s[..., n:]
    c = sig(pre("f", h)) * c + sig(pre("i", h)) * tanh(pre("r", h))
    return torch.cat([sig(pre("o", h)) * tanh(c), c], dim=-1)


@pytest.mark.parametrize("arch", ["vanilla", "gru", "peephole", "lstm"])
def test_evaluate_equations_on_batched_states(arch):
    """States (models, batch, S) with three axes: the equations give the hand-written update."""
    n, gen = 3, torch.Generator().manual_seed(1)
    W = {k: torch.randn(n, n, generator=gen, dtype=torch.float64) for k in GATES[arch]}
    b = {k: torch.randn(n, generator=gen, dtype=torch.float64) for k in GATES[arch]}

    def pre(k, x):
        return x @ W[k] + b[k]

    s = torch.randn(2, 4, U.state_size(arch, n), generator=gen, dtype=torch.float64)
    torch.testing.assert_close(U.evaluate_equations(arch, s, pre), _hand_update(arch, s, pre))


@pytest.mark.parametrize("arch", ["vanilla", "gru", "peephole", "lstm"])
def test_equations_gap_draws_written_out(arch, monkeypatch):
    """The check runs on 4 states of N = 6 units, d = 3 inputs, seed 0, sigma2 = 1.5, nu2 = 0.7, mu_f = 0.3 and
    pre = x W + z U + b: drawn here and compared with what the check hands to update."""
    seen = {}
    real = U.update

    def spy(a, s, pre):
        seen.update(s=s, pre=pre)
        return real(a, s, pre)

    monkeypatch.setattr(U, "update", spy)
    assert U.equations_gap(arch) < 1e-12
    gen = torch.Generator().manual_seed(0)
    S = 12 if arch == "lstm" else 6
    s = torch.randn(4, S, generator=gen, dtype=torch.float64)
    z = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(seen["s"], s, rtol=0, atol=0)
    probe = torch.randn(4, 6, generator=torch.Generator().manual_seed(9), dtype=torch.float64)
    for k in GATES[arch]:
        Wk = torch.randn(6, 6, generator=gen, dtype=torch.float64) * math.sqrt(1.5 / 6)
        Uk = torch.randn(3, 6, generator=gen, dtype=torch.float64) * math.sqrt(0.7 / 3)
        bk = 0.3 if k == "f" else 0.0
        torch.testing.assert_close(seen["pre"](k, probe), probe @ Wk + z @ Uk + bk, rtol=1e-12, atol=1e-12)


def test_tex_default_state_and_capitals():
    """_tex writes the flat state as s by default and reads names with capitals too."""
    assert U._tex("s", set()) == r"\mathbf s^{t-1}"
    assert U._tex("sig(Wx) * s", {"Wx"}) == r"\sigma(\mathbf Wx^{t})\circ \mathbf s^{t-1}"


def test_simulate_pair_default_seed_and_float32():
    """Default seed 0; float32 inputs give float32 states (the tied weights are drawn in the inputs' dtype)."""
    theta = U.uniform_theta("gru", 1.2, 0.5)
    inputs = torch.randn(2, 3, 2, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    torch.testing.assert_close(
        U.simulate_pair(theta, 4, inputs, tied=True), U.simulate_pair(theta, 4, inputs, tied=True, seed=0)
    )
    assert not torch.equal(
        U.simulate_pair(theta, 4, inputs, tied=True), U.simulate_pair(theta, 4, inputs, tied=True, seed=1)
    )
    single = U.simulate_pair(theta, 4, inputs.float(), tied=True)
    assert single.dtype == torch.float32 and single.shape == (4, 2, 4) and bool(torch.isfinite(single).all())


def test_pair_statistics_centres_each_step_by_hand():
    """Each step is centred on its own mean: rows with different means, Pearson C worked by hand."""
    a0, a1 = torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([0.0, 0.0, 0.0, 4.0])
    states = torch.stack([torch.stack([a0, 5 - a0]), torch.stack([a1, 2 * a1 + 1])])
    st = U.pair_statistics(states, "vanilla")
    torch.testing.assert_close(st["C"], torch.tensor([-1.0, 1.0]))
    torch.testing.assert_close(st["Q"], torch.tensor([7.5, 4.0]))
    torch.testing.assert_close(st["mean"], torch.tensor([2.5, 1.0]))


def test_classifier_defaults_seed_and_dtype():
    """Defaults untied = True and seed 0; float32 weights; seeded draws ignore the global RNG."""
    thetas = [U.uniform_theta("gru", 1.0, 0.5)]
    default = U.GatedClassifier(thetas, n=3, d=2, length=4, classes=2)
    assert_same_params(
        params_of(default), params_of(U.GatedClassifier(thetas, n=3, d=2, length=4, classes=2, untied=True, seed=0))
    )
    assert default.untied is True and default.W["f"].shape == (1, 4, 3, 3)
    assert all(p.dtype == torch.float32 for p in default.parameters())
    torch.manual_seed(1)
    a = params_of(U.GatedClassifier(thetas, n=3, d=2, length=4, classes=2, seed=3))
    torch.manual_seed(2)
    assert_same_params(a, params_of(U.GatedClassifier(thetas, n=3, d=2, length=4, classes=2, seed=3)))


def test_classifier_input_checks_and_float64():
    """A 2-D x is refused by its shape; in float64 the logits stay float64 (state zeros in x's dtype)."""
    model = U.GatedClassifier([U.uniform_theta("lstm", 1.0, 0.5)], n=3, d=2, length=4, classes=2)
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(4, 2\)$"):
        model(torch.zeros(4, 2))
    x = torch.randn(5, 4, 2, generator=torch.Generator().manual_seed(0))
    out = model.double()(x.double())
    assert out.dtype == torch.float64
    torch.testing.assert_close(out, model.float()(x).double(), rtol=1e-4, atol=1e-5)


def test_results_on_the_requested_device():
    """On the meta device (shapes only): weights, fresh products and the classifier's state stay there."""
    theta = U.uniform_theta("gru", 1.0, 0.5, {"f": 1.0})
    W, Uw, b = U.sample_weights(theta, 3, 2, device="meta")
    assert all(t.device.type == "meta" for t in (*W.values(), *Uw.values(), *b.values()))
    y = U.fresh_product(torch.empty(2, 4, device="meta", dtype=torch.float64), 1.0, 5)
    assert y.device.type == "meta" and y.shape == (2, 5) and y.dtype == torch.float64
    model = U.GatedClassifier([theta], n=3, d=2, length=4, classes=2).to("meta")
    out = model(torch.empty(5, 4, 2, device="meta"))
    assert out.device.type == "meta" and out.shape == (1, 5, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU (meta tensors mix with CPU draws)")
def test_fresh_product_draws_on_the_inputs_gpu():
    """On a GPU the Gaussian draw is made on x's device: the product comes back there."""
    x = torch.randn(2, 4, dtype=torch.float64, device="cuda")
    y = U.fresh_product(x, 1.0, 5)
    assert y.device == x.device and y.shape == (2, 5)
