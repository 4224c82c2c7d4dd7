"""The unified gated cell (lscnb.models.unified) against answers it did not compute: the paper's initialisations as
printed (App. E.4, E.5), Tables 1 and 3 as rendered LaTeX, a plain loop for the classifier, moments for the
weights, and hand-worked order parameters (issue 27)."""

import math

import pytest
import torch

from lscnb.models import unified as U


def test_critical_initialisations_of_app_e4():
    peep = U.critical_theta()
    assert peep.arch == "peephole"
    assert peep.sigma2 == {"i": 1e-5, "f": 1e-5, "r": 1e-5, "o": 1e-5}
    assert peep.nu2 == {"i": 0.0, "f": 0.0, "r": 0.0, "o": 0.0} and peep.mu == {"f": 5.0}
    lstm = U.critical_theta("lstm")  # nu_i = nu_r = sigma_o = mu_f = 1; sigma_i,f,r = 1e-5; the rest 0
    assert lstm.arch == "lstm"
    assert [lstm.s2(k) for k in "ifro"] == [1e-5, 1e-5, 1e-5, 1.0]
    assert [lstm.n2(k) for k in "ifro"] == [1.0, 0.0, 1.0, 0.0]
    assert [lstm.m(k) for k in "ifro"] == [0.0, 1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"arch must be 'peephole' or 'lstm' \(App. E.4\), got 'gru'"):
        U.critical_theta("gru")


def test_standard_initialisation_of_app_e5():
    std = U.standard_theta()  # d = 1 pixel, N = 600 units: Glorot on the 1 x 2400 kernel, 2 / 2401
    assert std.arch == "peephole" and std.mu == {"f": 1.0}
    assert all(std.s2(k) == 1.0 and std.n2(k) == pytest.approx(2 / 2401, rel=1e-12) for k in "ifro")
    lstm = U.standard_theta("lstm", d=3, n=5)
    assert lstm.arch == "lstm" and lstm.n2("o") == pytest.approx(6 / 23, rel=1e-12)
    with pytest.raises(ValueError, match=r"arch must be 'peephole' or 'lstm' \(App. E.5\), got 'vanilla'"):
        U.standard_theta("vanilla")


def test_with_keeps_the_other_gates():
    theta = U.uniform_theta("gru", 2.0, 0.5, {"f": 1.0}).with_(mu={"r": 3.0}, sigma2={"f": 0.1})
    assert theta.mu == {"f": 1.0, "r": 3.0} and theta.sigma2 == {"f": 0.1, "r": 2.0, "r2": 2.0}
    assert theta.nu2 == {"f": 0.5, "r": 0.5, "r2": 0.5}


def test_tables_1_and_3_as_rendered():
    """The rendered rows, read against the paper's Tables 1 and 3 (GRU: the reset gate before the product)."""
    rows = {r["architecture"]: r for r in U.equations_table()}
    assert list(rows) == ["vanilla", "gru", "peephole", "lstm"]
    assert rows["vanilla"] == {
        "architecture": "vanilla",
        "gates K": "f",
        "state s": "h",
        "W_k multiplies": r"f: $\mathbf h^{t-1}$",
        "update (1a)": r"$\mathbf h^t=\tanh(\mathbf u_f^t)$",
        "read-out": r"$\mathbf h^t$",
    }
    assert rows["gru"]["gates K"] == "f, r, r₂"
    assert rows["gru"]["W_k multiplies"] == r"f, r: $\mathbf h^{t-1}$; r₂: $\sigma(\mathbf u_r^t)\circ \mathbf h^{t-1}$"
    assert rows["gru"]["update (1a)"] == (
        r"$\mathbf h^t=\sigma(\mathbf u_f^t)\circ \mathbf h^{t-1} + (1-\sigma(\mathbf u_f^t))\circ "
        r"\tanh(\mathbf u_{r_2}^t)$"
    )
    assert rows["peephole"]["state s"] == "c"
    assert rows["peephole"]["W_k multiplies"] == r"i, f, r, o: $\mathbf c^{t-1}$"
    assert rows["peephole"]["update (1a)"] == (
        r"$\mathbf c^t=\sigma(\mathbf u_f^t)\circ \mathbf c^{t-1} + \sigma(\mathbf u_i^t)\circ \tanh(\mathbf u_r^t)$"
    )
    assert rows["peephole"]["read-out"] == r"$\sigma(\mathbf u_o^t)\circ \tanh(\mathbf c^{t})$"
    assert rows["lstm"]["state s"] == "h, c" and rows["lstm"]["W_k multiplies"] == r"i, f, r, o: $\mathbf h^{t-1}$"
    assert rows["lstm"]["update (1a)"] == (
        r"$\mathbf c^t=\sigma(\mathbf u_f^t)\circ \mathbf c^{t-1} + \sigma(\mathbf u_i^t)\circ \tanh(\mathbf u_r^t)$"
        r"<br>$\mathbf h^t=\sigma(\mathbf u_o^t)\circ \tanh(\mathbf c^{t})$"
    )
    assert rows["lstm"]["read-out"] == r"$\mathbf h^t$"


@pytest.mark.parametrize("arch", ["vanilla", "gru", "peephole", "lstm"])
def test_equations_gap_is_zero_and_sensitive(arch, monkeypatch):
    assert U.equations_gap(arch) < 1e-12
    real = U.update
    monkeypatch.setattr(U, "update", lambda a, s, pre: real(a, s, pre) * 1.001)
    assert U.equations_gap(arch) > 1e-6  # the check sees a small slip


def _plain_logits(model: U.GatedClassifier, x: torch.Tensor) -> torch.Tensor:
    """The classifier's logits by a loop over models and steps, written from eqs. (1a), (1b), (13) and Table 3."""
    sig, tanh = torch.sigmoid, torch.tanh
    out = []
    for g in range(model.models):

        def u(k, v, z, t, g=g):
            i = t if model.untied else 0
            return v @ model.W[k][g, i] + z @ model.U[k][g, i] + model.b[k][g, i]

        n = model.n
        h = torch.zeros(x.shape[0], n)
        c = torch.zeros(x.shape[0], n)
        for t in range(model.length):
            z = x[:, t]
            if model.arch == "vanilla":
                h = tanh(u("f", h, z, t))
            elif model.arch == "gru":
                f, r = sig(u("f", h, z, t)), sig(u("r", h, z, t))
                h = f * h + (1 - f) * tanh(u("r2", r * h, z, t))
            elif model.arch == "peephole":
                c = sig(u("f", c, z, t)) * c + sig(u("i", c, z, t)) * tanh(u("r", c, z, t))
            else:
                c_new = sig(u("f", h, z, t)) * c + sig(u("i", h, z, t)) * tanh(u("r", h, z, t))
                h, c = sig(u("o", h, z, t)) * tanh(c_new), c_new
        last = model.length - 1
        read = sig(u("o", c, x[:, -1], last)) * tanh(c) if model.arch == "peephole" else h
        out.append(read @ model.readout[g])
    return torch.stack(out)


@pytest.mark.parametrize("arch", ["vanilla", "gru", "peephole", "lstm"])
@pytest.mark.parametrize("untied", [True, False])
def test_classifier_is_the_plain_loop(arch, untied):
    thetas = [U.uniform_theta(arch, 1.3, 0.8, {"f": 0.5}), U.uniform_theta(arch, 0.6, 1.1)]
    model = U.GatedClassifier(thetas, n=5, d=3, length=4, classes=2, untied=untied, seed=1)
    with torch.no_grad():  # distinct biases per gate and step, so a swapped index shows
        for k in model.b:
            model.b[k].copy_(torch.randn_like(model.b[k]))
    x = torch.randn(6, 4, 3, generator=torch.Generator().manual_seed(2))
    got = model(x)
    assert got.shape == (2, 6, 2)
    torch.testing.assert_close(got, _plain_logits(model, x), rtol=1e-5, atol=1e-6)
    steps = 4 if untied else 1
    assert model.W["f"].shape == (2, steps, 5, 5) and model.U["f"].shape == (2, steps, 3, 5)
    assert model.readout.shape == (2, 5, 2)


def test_classifier_initialises_each_model_with_its_theta():
    thetas = [U.uniform_theta("peephole", 4.0, 0.25, {"f": 2.0}), U.uniform_theta("peephole", 0.25, 4.0)]
    model = U.GatedClassifier(thetas, n=200, d=50, length=2, classes=3, seed=0)
    w, u = model.W["i"].detach(), model.U["i"].detach()
    assert w[0].var().item() == pytest.approx(4.0 / 200, rel=0.05) and w[1].var().item() == pytest.approx(
        0.25 / 200, rel=0.05
    )
    assert u[0].var().item() == pytest.approx(0.25 / 50, rel=0.05) and u[1].var().item() == pytest.approx(
        4.0 / 50, rel=0.05
    )
    assert torch.all(model.b["f"][0] == 2.0) and torch.all(model.b["f"][1] == 0.0) and torch.all(model.b["i"] == 0.0)
    assert model.readout.detach().var().item() == pytest.approx(1 / 200, rel=0.1)
    with pytest.raises(ValueError, match="thetas must be a non-empty list"):
        U.GatedClassifier([thetas[0], U.uniform_theta("gru")], n=2, d=1, length=1, classes=2)
    with pytest.raises(ValueError, match=r"x must be \(B, 2, 50\), got \(1, 3, 50\)"):
        model(torch.zeros(1, 3, 50))


def test_sample_weights_moments_and_shapes():
    theta = U.Theta("peephole", {"i": 0.5, "f": 2.0, "r": 1.0, "o": 0.0}, {"i": 3.0, "f": 0.0}, {"f": -1.5, "o": 2.0})
    gen = torch.Generator().manual_seed(0)
    W, Uw, b = U.sample_weights(theta, 300, 40, lead=(2,), generator=gen)
    assert W["i"].shape == (2, 300, 300) and Uw["i"].shape == (2, 40, 300) and b["i"].shape == (2, 300)
    assert W["i"].dtype == torch.float64
    for k, s2 in theta.sigma2.items():
        assert W[k].var().item() == pytest.approx(s2 / 300, rel=0.02, abs=1e-12)
    assert Uw["i"].var().item() == pytest.approx(3.0 / 40, rel=0.03) and torch.all(Uw["f"] == 0)
    assert torch.all(b["f"] == -1.5) and torch.all(b["o"] == 2.0) and torch.all(b["i"] == 0.0)


def test_fresh_product_has_the_gram_covariance():
    """Columns of ``x @ W`` for W ~ N(0, var / fan_in) are N(0, var x x^T / fan_in): check the moments."""
    x = torch.tensor([[1.0, 2.0, 0.0, -1.0], [0.5, 0.0, 1.0, 1.0]], dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    y = U.fresh_product(x, 3.0, 200_000, generator=gen)
    expected = 3.0 * torch.tensor([[6.0, -0.5], [-0.5, 2.25]], dtype=torch.float64) / 4
    torch.testing.assert_close(y @ y.T / y.shape[1], expected, rtol=0.02, atol=0.01)
    assert y.dtype == torch.float64 and y.shape == (2, 200_000)


def test_pair_statistics_by_hand():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    states = torch.stack([torch.stack([a, 2 * a]), torch.stack([a, 5 - a])])  # (T + 1 = 2, 2 copies, 4 units)
    st = U.pair_statistics(states, "vanilla")
    torch.testing.assert_close(st["Q"], torch.tensor([7.5, 7.5]))
    torch.testing.assert_close(st["mean"], torch.tensor([2.5, 2.5]))
    torch.testing.assert_close(st["C"], torch.tensor([1.0, -1.0]))
    lstm = U.pair_statistics(torch.cat([states, 100 * states], dim=-1), "lstm")  # only h, the first half
    torch.testing.assert_close(lstm["Q"], torch.tensor([7.5, 7.5]))


def test_simulate_pair_tied_is_gated_step_with_one_draw():
    theta = U.uniform_theta("gru", 1.5, 0.5, {"f": 0.2})
    inputs = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    states = U.simulate_pair(theta, 4, inputs, tied=True, seed=7)
    gen = torch.Generator().manual_seed(7)
    s = torch.randn(4, generator=gen, dtype=torch.float64).expand(2, 4)
    W, Uw, b = U.sample_weights(theta, 4, 3, generator=gen)
    expected = [s]
    for t in range(5):
        f = torch.sigmoid(s @ W["f"] + inputs[:, t] @ Uw["f"] + b["f"])
        r = torch.sigmoid(s @ W["r"] + inputs[:, t] @ Uw["r"] + b["r"])
        s = f * s + (1 - f) * torch.tanh((r * s) @ W["r2"] + inputs[:, t] @ Uw["r2"] + b["r2"])
        expected.append(s)
    torch.testing.assert_close(states, torch.stack(expected))
    start = torch.ones(2, 4, dtype=torch.float64)
    untied = U.simulate_pair(theta, 4, inputs, tied=False, seed=7, state0=start)
    assert untied.shape == (6, 2, 4) and torch.equal(untied[0], start)
    assert not torch.allclose(untied[1:], U.simulate_pair(theta, 4, inputs, tied=True, seed=7, state0=start)[1:])
    with pytest.raises(ValueError, match=r"inputs must hold two sequences \(2, T, d\), got shape \(3, 5, 3\)"):
        U.simulate_pair(theta, 4, torch.zeros(3, 5, 3), tied=True)


def test_untied_pair_matches_the_fresh_weight_statistics():
    """With sigma2 = nu2 = 0 the vanilla state is tanh(mu) after one step, whatever the start (up to the 1e-12
    jitter fresh_product adds to the Gram matrix: a deviation of order 1e-6)."""
    theta = U.uniform_theta("vanilla", 0.0, 0.0, {"f": 0.7})
    inputs = torch.zeros(2, 3, 2, dtype=torch.float64)
    states = U.simulate_pair(theta, 6, inputs, tied=False, seed=0)
    torch.testing.assert_close(
        states[1:], torch.full((3, 2, 6), math.tanh(0.7), dtype=torch.float64), atol=1e-5, rtol=0
    )
