"""Mean-field theory of gated RNNs: the unified cell, the maps, chi, xi, Jacobian moments, population dynamics.

Reference numbers come from an independent re-implementation of the paper's equations (Gilboa et al., eqs. 4-9), not
from lscnb.
"""

import math

import numpy as np
import pytest
import torch
from seedcheck import assert_seed_reaches

from lscnb.models import GRUCell, LSTMCell
from lscnb.models.unified import (
    GATES,
    GatedClassifier,
    Theta,
    critical_theta,
    fresh_product,
    gated_step,
    pair_statistics,
    sample_weights,
    simulate_pair,
    standard_theta,
    uniform_theta,
)
from lscnb.theory import meanfield as mf

PEEP = uniform_theta("peephole", 1.0, 1.0, {"f": 1.0})


def gru(mu_f, **mu):
    return Theta("gru", {"f": 1.0, "r": 1.0, "r2": 2.0}, {"f": 0.5, "r": 0.5, "r2": 0.5}, {"f": mu_f, **mu})


# ------------------------------------------------------------------------------------------- reference numbers
def test_peephole_fixed_point_and_time_scale():
    st = mf.fixed_point(PEEP, 1.0, 0.0)
    assert pytest.approx(0.2733, abs=2e-4) == st.Q and abs(st.C) < 1e-6
    assert mf.chi(PEEP, 1.0, 0.0) == pytest.approx(0.555, abs=1e-3)
    assert mf.time_scale(PEEP, 1.0, 0.0) == pytest.approx(1.70, abs=0.01)
    assert mf.time_scale(uniform_theta("peephole", 4.0, 1.0, {"f": 1.0})) == pytest.approx(2.24, abs=0.01)
    assert mf.time_scale(uniform_theta("peephole", 0.25, 1.0, {"f": 1.0})) == pytest.approx(1.46, abs=0.01)


def test_peephole_trajectory_matches_reference():
    traj = mf.trajectory(PEEP, 11, mf.State(0.0, 1.0, 1.0))
    for t, ref in ((1, 0.6782), (2, 0.5009), (3, 0.4019), (6, 0.2969), (11, 0.2747)):
        assert pytest.approx(ref, abs=2e-4) == traj[t].Q


def test_critical_and_standard_initialisations():
    crit = critical_theta("peephole")
    assert mf.chi(crit) == pytest.approx(1 / (1 + math.exp(-5)) ** 2 + 2.5e-6, rel=1e-6)
    assert mf.xi(mf.chi(crit)) == pytest.approx(74.47, abs=0.05)
    std = standard_theta("peephole", d=1, n=600)
    assert std.n2("f") == pytest.approx(2 / 2401)
    assert mf.chi(std, 1.0, 0.0) == pytest.approx(0.783, abs=1e-3)
    assert mf.time_scale(std) == pytest.approx(4.10, abs=0.01)
    assert pytest.approx(9.6e-4, rel=0.01) == mf.fixed_point(std, 1.0, 0.0).Q


@pytest.mark.parametrize(
    "mu_f,Q,chi0,chi1", [(-1, 0.1785, 0.207, 0.2978), (1, 0.0625, 0.525, 0.5706), (3, 0.0127, 0.8875, 0.8912)]
)
def test_gru_fig5_reference(mu_f, Q, chi0, chi1):
    th = gru(float(mu_f))
    assert pytest.approx(Q, abs=2e-4) == mf.fixed_point(th, 1.0, 1.0).Q
    assert mf.chi(th, 1.0, 0.0) == pytest.approx(chi0, abs=1e-3)
    assert mf.chi(th, 1.0, 1.0) == pytest.approx(chi1, abs=1e-3)


def test_gru_chi_correction_matters_when_mu_r2_is_not_zero():
    """Spec fix 5: the printed A.3.1 drops -2 mu* E[tanh u_r2]; the finite difference agrees with the fix."""
    th = Theta("gru", {"f": 2.0, "r": 1.0, "r2": 2.0}, {"f": 0.5, "r": 0.5, "r2": 0.5}, {"f": 1.0, "r": 0.5, "r2": 1.0})
    st = mf.fixed_point(th)
    assert st.mu == pytest.approx(0.5768, abs=2e-4) and pytest.approx(0.3920, abs=2e-4) == st.Q
    assert mf.chi(th) == pytest.approx(0.57173, abs=2e-5)
    assert mf.chi(th, paper=True) == pytest.approx(0.61736, abs=2e-5)
    assert mf.chi_numeric(th) == pytest.approx(mf.chi(th), abs=1e-5)


def test_gru_a_time_scales():
    ref = [0.41, 0.50, 0.77, 1.40, 2.95, 6.91, 17.5, 46.0, 123]
    got = [mf.time_scale(uniform_theta("gru", 1.0, 1.0, {"f": float(m)})) for m in range(-2, 7)]
    np.testing.assert_allclose(got, ref, rtol=0.01)


# ------------------------------------------------------------------------------------------- identities
@pytest.mark.parametrize(
    "theta",
    [
        PEEP,
        uniform_theta(
            "peephole",
            4.0,
            1.0,
            {"f": 1.0},
        ),
        gru(1.0),
        gru(3.0),
        uniform_theta("vanilla", 1.5, 0.5),
    ],
)
def test_analytic_chi_equals_finite_difference(theta):
    for Sz in (0.0, 0.5):
        assert mf.chi(theta, 1.0, Sz) == pytest.approx(mf.chi_numeric(theta, 1.0, Sz), abs=1e-4)


@pytest.mark.parametrize("theta", [PEEP, gru(1.0), gru(3.0)])
def test_lemma1_chi_at_C1_is_m1(theta):
    assert mf.chi(theta, 1.0, 1.0) == pytest.approx(mf.jacobian_moments(theta)["m1"], rel=1e-3)


def test_map_contracts_toward_C1_at_rate_chi():
    """(T2): under Sz = 1 from Q*, (1 - C^{t+1}) / (1 - C^t) tends to chi."""
    th = gru(1.0)
    st = mf.fixed_point(th, 1.0, 1.0)
    s = mf.State(st.mu, st.Q, st.mu**2 + 0.999 * (st.Q - st.mu**2))
    for _ in range(30):
        new = mf.step(th, s, 1.0, 1.0)
        ratio = (1 - new.C) / (1 - s.C)
        s = new
    assert ratio == pytest.approx(mf.chi(th, 1.0, 1.0), abs=1e-3)


def test_lemma3_peephole_C_map_is_convex():
    th = uniform_theta("peephole", 2.0, 1.0, {"f": 1.0, "r": 0.5, "i": 0.3})
    st = mf.fixed_point(th, 1.0, 0.3)
    Cs = np.linspace(0, 1, 41)
    var = st.Q - st.mu**2
    out = [mf.step(th, mf.State(st.mu, st.Q, st.mu**2 + c * var), 1.0, 0.3).q for c in Cs]
    assert np.min(np.diff(out, 2)) >= -1e-8


def test_jacobian_variance_corrected_vs_printed():
    m = mf.jacobian_moments(PEEP)
    assert m["m1"] == pytest.approx(0.672, abs=1e-3)
    assert m["var"] == pytest.approx(0.2728, rel=0.01) and m["var_paper"] == pytest.approx(0.2960, rel=0.01)
    big = mf.jacobian_moments(uniform_theta("peephole", 4.0, 1.0, {"f": 1.0}))
    assert big["m1"] == pytest.approx(1.049, rel=0.005) and big["var"] == pytest.approx(1.397, rel=0.02)


def test_perpetuity_second_moment_is_the_fixed_point_Q():
    th = PEEP
    st = mf.fixed_point(th, 1.0, 1.0)
    g = {k: mf._gate(th, k, st.Q, st.Q, 1.0, 1.0)[:2] for k in "ifr"}
    EY = [mf.e1(lambda x, j=j: mf.sig(x) ** j, *g["f"]) for j in range(3)]
    EZ = [
        mf.e1(lambda x, j=j: mf.sig(x) ** j, *g["i"]) * mf.e1(lambda x, j=j: np.tanh(x) ** j, *g["r"]) for j in range(3)
    ]
    assert mf._perpetuity_moments(EY, EZ, 2)[2] == pytest.approx(st.Q, rel=1e-9)


def test_xi_edges():
    assert mf.xi(1.0) == math.inf and math.isnan(mf.xi(1.2)) and mf.xi(math.exp(-1)) == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------- cells and simulation
def test_lstm_arch_equals_torch_layout_lstm_cell():
    torch.manual_seed(0)
    n, d, B = 6, 3, 4
    ref = LSTMCell(d, n).double()
    W = dict(zip("ifro", ref.weight_hh.detach().T.split(n, dim=1)))
    U = dict(zip("ifro", ref.weight_ih.detach().T.split(n, dim=1)))
    b = dict(zip("ifro", (ref.bias_ih + ref.bias_hh).detach().split(n)))
    s, z = torch.randn(B, 2 * n, dtype=torch.float64), torch.randn(B, d, dtype=torch.float64)
    torch.testing.assert_close(gated_step("lstm", s, z, W, U, b), ref(s, z))


def test_gru_arch_resets_before_the_product():
    """The paper's GRU (1c) puts the reset inside: W_r2 (sig(u_r) h), not sig(u_r) (W_r2 h) as torch does."""
    torch.manual_seed(1)
    th = uniform_theta("gru", 1.0, 1.0)
    W, U, b = sample_weights(th, 5, 2)
    h, z = torch.randn(3, 5, dtype=torch.float64), torch.randn(3, 2, dtype=torch.float64)
    f, r = torch.sigmoid(h @ W["f"] + z @ U["f"]), torch.sigmoid(h @ W["r"] + z @ U["r"])
    expected = f * h + (1 - f) * torch.tanh((r * h) @ W["r2"] + z @ U["r2"])
    torch.testing.assert_close(gated_step("gru", h, z, W, U, b), expected)
    assert GRUCell is not None  # torch-layout GRU exists separately (reset after the product)


def test_fresh_product_has_the_gram_covariance():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 50, dtype=torch.float64, generator=gen)
    x[1] = 0.6 * x[0] + 0.8 * x[1]
    out = fresh_product(x, 2.0, 200_000, gen)
    cov = torch.cov(out)
    torch.testing.assert_close(cov, 2.0 * x @ x.T / 50, rtol=0.02, atol=0.02)


def test_untied_network_follows_the_mean_field():
    """(T1) at N = 1000: Q within 10%, C within 0.07 of the map, for a GRU over 30 steps."""
    th = gru(1.0)
    gen = torch.Generator().manual_seed(3)
    z = torch.randn(2, 30, 1000, generator=gen, dtype=torch.float64)
    stats = pair_statistics(simulate_pair(th, 1000, z, tied=False, seed=0), "gru")
    traj = mf.trajectory(th, 30, mf.State(0.0, 1.0, 1.0), 1.0, 0.0)
    Q = np.array([s.Q for s in traj])
    C = np.array([s.C for s in traj])
    assert np.max(np.abs(stats["Q"].numpy() / Q - 1)) < 0.1
    assert np.max(np.abs(stats["C"].numpy() - C)) < 0.07


def test_population_dynamics_second_moment():
    th = uniform_theta("lstm", 1.0, 1.0, {"f": 2.0})
    out = mf.population(th, 60, samples=20_000, seed=0)
    assert out["c"].shape == (20_000,) and 0 < out["Q"][-1] < 1
    assert abs(out["Q"][-1] / out["Q"][-10] - 1) < 0.05  # stationary by then


def test_classifier_shapes_and_independent_models():
    thetas = [uniform_theta("gru", 1.0, 1.0, {"f": m}) for m in (0.0, 2.0)]
    model = GatedClassifier(thetas, 8, 5, 4, 3, untied=True, seed=0)
    x = torch.randn(7, 4, 5)
    logits = model(x)
    assert logits.shape == (2, 7, 3)
    logits[0].sum().backward()
    assert model.W["f"].grad[1].abs().max() == 0  # model 1 does not feel model 0's loss
    tied = GatedClassifier(thetas, 8, 5, 4, 3, untied=False)
    assert tied.W["f"].shape == (2, 1, 8, 8)
    peep = GatedClassifier([PEEP], 8, 5, 4, 3)
    assert peep(x).shape == (1, 7, 3)


def test_a_diverged_model_does_not_stop_the_others():
    """Stacked training: model 1's read-out made infinite, its loss drops out of the sum and its gradients are 0;
    model 0 trains exactly as it would alone (same weights after 3 Adam steps), fit records no divergence, and
    ``alive`` tells them apart."""
    from lscnb.experiments.meanfield.common import stacked_loss
    from lscnb.train import fit

    thetas = [uniform_theta("gru", 1.0, 1.0, {"f": m}) for m in (0.0, 2.0)]
    x, y = torch.randn(16, 4, 5, generator=torch.Generator().manual_seed(1)), torch.arange(16) % 3

    def trained(models):
        model = GatedClassifier(thetas, 8, 5, 4, 3, untied=True, seed=0)
        if models == 2:
            with torch.no_grad():
                model.readout[1] = float("inf")
        else:  # model 0 alone, with the same initial weights
            for p in model.parameters():
                p.data = p.data[:1].clone()
            model.models, model.alive = 1, model.alive[:1].clone()
        return model, fit(model, lambda step: (x, y), stacked_loss, steps=3, lr=1e-2, progress=False)

    both, hist = trained(2)
    alone, _ = trained(1)
    assert not hist.diverged and all(math.isfinite(v) for v in hist.loss)
    assert both.alive.tolist() == [True, False] and alone.alive.tolist() == [True]
    for (name, p), q in zip(both.named_parameters(), alone.parameters()):
        torch.testing.assert_close(p.detach()[:1], q.detach(), msg=name)
    assert not torch.equal(both.W["f"].detach()[0], GatedClassifier(thetas, 8, 5, 4, 3, seed=0).W["f"][0])


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="arch"):
        uniform_theta("transformer")
    with pytest.raises(ValueError, match="sigma2"):
        Theta("gru", {"o": 1.0})
    with pytest.raises(ValueError, match="nu2 must be non-negative"):
        Theta("gru", {}, {"f": -1.0})
    with pytest.raises(ValueError, match="inputs"):
        simulate_pair(PEEP, 4, torch.zeros(3, 2, 4), tied=False)
    with pytest.raises(ValueError, match="steps"):
        mf.trajectory(PEEP, 0, mf.State(0, 1, 1))
    with pytest.raises(ValueError, match="population"):
        mf.step(uniform_theta("lstm"), mf.State(0, 1, 1))
    with pytest.raises(ValueError, match="x must be"):
        GatedClassifier([PEEP], 8, 5, 4, 3)(torch.zeros(2, 3, 5))


# ------------------------------------------------------------------------------------------- the chapter's runs
def shrunk(name: str, run, **more) -> dict:
    """``run``'s full-profile config with tiny sizes (a fraction of a second), MNIST replaced by the 8x8 digits."""
    shrink = {**dict(width=24, seeds=1, steps=12, samples=500, iters=3, length=4), **more}
    cfg = {k: (shrink[k] if k in shrink and k != "length" else v) for k, v in run.config.items()}
    if name == "heatmap":
        cfg.update(length=3, source="sklearn", limit=200)
    if name == "backprop":
        cfg["length"] = 10
    if name == "length":
        cfg.update(length=3, source="sklearn", limit=300, held_out=50)
    if name == "table2":
        cfg.update(source="sklearn", limit=200)
    if name == "curves":  # the full config unrolls 28x28 MNIST; on 8x8 digits use 8 values per step
        cfg.update(source="sklearn", limit=300, dim=8, repeat=1, probe=16, every=2)
    return cfg


MEANFIELD_FIGURES = ("backprop", "cellstate", "curves", "dynamics", "heatmap", "length", "spectrum", "table2")


@pytest.mark.parametrize("figure", MEANFIELD_FIGURES)
def test_the_readers_seed_reaches_every_figure(figure):
    """Every figure samples weights, inputs or batches (the theory-only tables are notebook cells, not figures):
    SEED must change it, and only SEED. Two seeds per run, so loops over seeds inside a run are covered."""
    from lscnb.experiments import meanfield as ex
    from lscnb.sweep import Run

    run = ex.FIGURES[figure]("full")[0]
    cfg = shrunk(figure, run, seeds=2, mu_f=[0.0, 1.0])
    assert_seed_reaches(Run(run.chapter, run.figure, run.name, run.fn, cfg))


def test_every_figure_has_a_seed_test():
    from lscnb.experiments import meanfield as ex

    assert set(MEANFIELD_FIGURES) == set(ex.FIGURES)


@pytest.mark.parametrize("source", ["sklearn", "mnist"])
def test_padded_digits_are_standardised(source):
    from lscnb.data.padded import padded_sequences, standardised_digits

    x, y, what = standardised_digits(source, pool=2, limit=300)
    assert x.shape == (300, 64 if source == "sklearn" else 196) and len(y) == 300 and what
    assert float(x.pow(2).mean()) == pytest.approx(1.0, rel=1e-5)
    seq = padded_sequences(x[:4], 5, generator=torch.Generator().manual_seed(0))
    assert seq.shape == (4, 5, x.shape[1]) and torch.equal(seq[:, 0], x[:4])
    with pytest.raises(ValueError, match="length"):
        padded_sequences(x[:4], 0)


@pytest.mark.parametrize("arch", sorted(GATES))
def test_equations_table_is_the_cell(arch):
    """Tables 1/3 as rendered (EQUATIONS) compute exactly what the cell's update computes."""
    from lscnb.models.unified import equations_gap, equations_table

    assert equations_gap(arch, seed=1) < 1e-12
    rows = {r["architecture"]: r for r in equations_table()}
    assert set(rows) == set(GATES) and rows[arch]["gates K"].count(",") == len(GATES[arch]) - 1


def test_evaluate_equations_rejects_unknown_arch():
    from lscnb.models.unified import evaluate_equations

    with pytest.raises(ValueError, match="arch"):
        evaluate_equations("transformer", torch.zeros(2), lambda k, x: x)


def test_replicated_pixels_repeats_then_chunks():
    from lscnb.data.padded import replicated_pixels

    x = torch.arange(12.0).reshape(2, 6)
    seq = replicated_pixels(x, 2, 4)
    assert seq.shape == (2, 3, 4)
    assert seq[0].flatten().tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    assert torch.equal(replicated_pixels(x, 1, 1)[..., 0], x)
    with pytest.raises(ValueError, match="dim"):
        replicated_pixels(x, 1, 5)
    with pytest.raises(ValueError, match="repeat"):
        replicated_pixels(x, 0, 2)


def test_concatenated_digits_label_is_the_tuple_of_digits():
    from lscnb.data.padded import concatenated_digits

    x = torch.arange(5.0).unsqueeze(-1).expand(5, 3)  # row i is all i
    y = torch.tensor([0, 1, 2, 1, 0])
    seq, lab = concatenated_digits(x, y, 3, 50, generator=torch.Generator().manual_seed(0))
    assert seq.shape == (50, 9) and int(lab.max()) < 8
    digits = y[seq[:, ::3].long()]  # the row index is the pixel value
    assert torch.equal(lab, digits[:, 0] * 4 + digits[:, 1] * 2 + digits[:, 2])
    assert not (seq == 2).any()  # only 0s and 1s are drawn
    with pytest.raises(ValueError, match="n"):
        concatenated_digits(x, y, 0, 5)
    with pytest.raises(ValueError, match="y must"):
        concatenated_digits(x, y[:3], 2, 5)


def test_cifar10_reads_pickled_batches_and_fails_clearly_offline(tmp_path, monkeypatch):
    import pickle

    from lscnb.data import cifar, files

    monkeypatch.setattr(files, "data_roots", lambda: [tmp_path])
    with pytest.raises(FileNotFoundError, match="CIFAR-10"):
        cifar.load_cifar10("test", download=False)
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    data = np.arange(2 * 3072, dtype=np.uint8).reshape(2, 3072)
    with open(folder / "test_batch", "wb") as fh:
        pickle.dump({b"data": data, b"labels": [3, 7]}, fh)
    ds = cifar.load_cifar10("test", download=False)
    assert ds.images.shape == (2, 32, 32, 3) and ds.labels.tolist() == [3, 7]
    assert int(ds.images[0, 0, 1, 0]) == 1 and int(ds.images[0, 0, 0, 1]) == 1024 % 256  # red plane, then green
    seq = cifar.cifar_sequences(ds)
    assert seq.shape == (2, 1024, 3) and abs(float(seq.mean())) < 1e-5
    with pytest.raises(ValueError, match="split"):
        cifar.load_cifar10("valid")


def test_curve_counts_give_the_length_the_runs_unroll_to():
    """Fig. 3's data_counts (the plan's work per step) equal the length of the sequences a run feeds its LSTM:
    MNIST's 784 pixels (scikit-learn's 64) per digit, repeated and cut into steps of ``dim``."""
    from lscnb.data.padded import concatenated_digits, replicated_pixels
    from lscnb.experiments.meanfield import curve_counts, curve_runs

    y = torch.tensor([0, 1, 0, 1])
    for scale, pixels in (("full", 784), ("quick", 64)):
        x = torch.zeros(4, pixels)
        for run in curve_runs(scale):
            c = run.config
            flat = x if c["task"] == "replicated" else concatenated_digits(x, y, c["digits"], 2)[0]
            assert replicated_pixels(flat, c["repeat"], c["dim"]).shape[1] == curve_counts(c)["length"], c
    assert [curve_counts(r.config)["length"] for r in curve_runs("full")] == [112, 224, 560, 70, 140, 210]


def test_heatmap_xi_is_the_theorys_and_computed_once_per_bias():
    """Fig. 2's xi per forget-gate bias (runs and plot) is time_scale's for the GRU-a direction, cached by bias."""
    from lscnb.experiments.meanfield.heatmap import GRU_A, gru_a_xi

    for mu, Sz in ((0.0, 0.0), (2.0, 1.0)):
        assert gru_a_xi(mu, Sz) == mf.time_scale(GRU_A.with_(mu={"f": mu}), 1.0, Sz)
    hits = gru_a_xi.cache_info().hits
    assert gru_a_xi(2.0, 1.0) > gru_a_xi(0.0, 0.0) and gru_a_xi.cache_info().hits == hits + 2
