"""The curse of memory: closed forms (with the eq. 59 erratum), Monte Carlo, autodiff, the linear students."""

import numpy as np
import pytest
import torch

from lscnb.experiments import memory as _chapter
from lscnb.models.linear_rnn import DenseLinearRNN, DiagonalLRU, Teacher, causal_conv, power_vectors
from lscnb.theory import memory as m

# (rho, lam) -> (E h^2, E s^2): eq. 48 and the corrected eq. 59, evaluated independently of lscnb
REFERENCE = {
    (0.0, 0.9): (5.26316, 263.887),
    (0.0, 0.99): (50.2513, 2.51263e5),
    (0.0, 0.999): (500.25, 2.50125e8),
    (0.9, 0.9): (50.1385, 3756.95),
    (0.9, 0.99): (871.79, 4.73781e6),
    (0.9, 0.999): (9415.51, 4.75196e9),
    (0.99, 0.99): (5000.13, 3.75006e7),
    (1.0, 0.9): (100, 1e4),
    (1.0, 0.99): (1e4, 1e8),
}


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
        assert float(m.sensitivity_variance_printed(0.99, rho)) == pytest.approx(
            float(m.sensitivity_variance(0.99, rho)), rel=1e-9
        )
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
    assert np.allclose((1 - lams**2) * m.hidden_variance(lams, 0.0), 1.0, atol=1e-12)
    flat = m.normalised_sensitivity(lams, 0.0)
    assert np.all((flat >= 0.45) & (flat <= 0.5))
    assert m.normalised_sensitivity(0.9999, 1.0) > 50 * m.normalised_sensitivity(0.99, 1.0)
    for rho in (0.0, 0.9):
        assert m.monte_carlo_reparametrised(0.99, rho, chains=8192) == pytest.approx(
            float(m.normalised_sensitivity(0.99, rho)), rel=0.08
        )


def test_landscape_real_is_the_expected_squared_error():
    gen = torch.Generator().manual_seed(0)
    lam, star = 0.8, 0.95
    x = torch.randn(20000, 400, generator=gen, dtype=torch.float64)
    k = torch.arange(400, dtype=torch.float64)
    diff = causal_conv(x, lam**k - star**k)[:, -1]
    assert float(0.5 * diff.pow(2).mean()) == pytest.approx(float(m.landscape_real(lam, star)), rel=0.05)
    assert float(m.landscape_real(star, star)) == pytest.approx(0.0, abs=1e-9)
    assert float(m.landscape_angle(0.0, star)) == pytest.approx(0.0, abs=1e-9)


# ------------------------------------------------------------------------------------------- students
@pytest.mark.parametrize(
    "model",
    [
        DenseLinearRNN(12, seed=1, dtype=torch.float64),
        DenseLinearRNN(12, heads=6, seed=1, dtype=torch.float64),
        DiagonalLRU(12, nu0=0.9, dtype=torch.float64),
        DiagonalLRU(12, nu0=0.5, param="default", gamma=False, dtype=torch.float64),
    ],
)
def test_convolution_equals_recurrence(model):
    x = torch.randn(3, 150, dtype=torch.float64)
    torch.testing.assert_close(model(x), model.forward_recurrent(x), rtol=1e-9, atol=1e-10)


def test_parameter_counts_of_the_paper():
    from lscnb.experiments.memory import make_student

    counts = {
        name: sum(p.numel() for p in make_student(name, 64, 0.99, 0).parameters())
        for name in ("dense", "block", "block128", "complex", "complex+γ", "lru")
    }
    assert counts == {"dense": 4225, "block": 257, "block128": 513, "complex": 385, "complex+γ": 449, "lru": 449}


def test_teacher_eigenvalues_and_samples():
    t = Teacher(10, nu0=0.92, seed=4)
    mags = torch.linalg.eigvals(t.A).abs()
    assert bool((mags >= 0.92 - 1e-9).all() and (mags < 1).all())
    x, y = t.sample(5, 80, torch.Generator().manual_seed(0), dtype=torch.float64)
    h, ys = torch.zeros(5, 10, dtype=torch.float64), []
    for k in range(80):
        h = h @ t.A.T + x[:, k : k + 1] * t.B
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


SHRINK = _chapter.SMOKE  # the chapter's smoke-test shrink (lscnb.experiments.memory)


def shrunk(run):
    """``run`` with the entries of ``SHRINK`` it has: seconds at most."""
    from lscnb.sweep import Run

    return Run(
        run.chapter,
        run.figure,
        run.name,
        run.fn,
        {**run.config, **{k: v for k, v in SHRINK.items() if k in run.config}},
    )


DETERMINISTIC = {"adam_angle": "Adam on the closed-form loss of eq. 91 from a fixed start: no sampling"}
SAMPLED = [
    "sensitivity",
    "normalisation",
    "teacher",
    "hessian",
    "adam_lr",
    "deep",
    "autocorrelation",
    "gated",
    "gru_jacobian",
    "heads",
    "hessian_lru",
    "hessian_s4",
    "adam_lr_ssm",
    "theta0",
]


@pytest.mark.parametrize("name", SAMPLED)
def test_the_readers_seed_reaches_every_sampled_figure(name):
    """Every figure that samples or trains: its last quick run, shrunk, repeats at one seed and changes at another."""
    from seedcheck import assert_seed_reaches

    from lscnb.experiments import memory as ex

    assert set(ex.FIGURES) == set(SAMPLED) | set(DETERMINISTIC)
    assert_seed_reaches(shrunk(ex.FIGURES[name]("quick")[-1]))


def test_similarity_is_the_sensitivity_and_the_printed_eq134_is_half():
    lam = 0.99 * np.exp(1j * np.pi / 4)
    assert abs(m.similarity(np.conj(lam), lam, 0.9)) == pytest.approx(88909, rel=1e-5)
    assert float(m.similarity(lam, np.conj(lam), 0.9).real) == pytest.approx(float(m.sensitivity_variance(lam, 0.9)))
    assert abs(m.similarity_printed(np.conj(lam), lam, 0.9)) == pytest.approx(4.7e4, rel=0.01)
    for rho in (0.0, 1.0):
        assert m.similarity_printed(0.3 + 0.2j, 0.5 - 0.1j, rho) == pytest.approx(
            m.similarity(0.3 + 0.2j, 0.5 - 0.1j, rho)
        )


def test_similarity_is_the_mixed_derivative_of_the_generating_function():
    a, b, rho, eps = 0.4 + 0.3j, 0.6 - 0.2j, 0.7, 1e-5
    F = lambda x, y: (1 - rho**2 * x * y) / ((1 - x * y) * (1 - rho * x) * (1 - rho * y))  # noqa: E731
    mixed = (F(a + eps, b + eps) - F(a + eps, b - eps) - F(a - eps, b + eps) + F(a - eps, b - eps)) / (4 * eps**2)
    assert m.similarity(a, b, rho) == pytest.approx(mixed, rel=1e-5)


def test_hessian_theory_eq143_is_symmetric_with_the_trace_formula():
    rng = np.random.default_rng(0)
    lam = 0.95 * np.exp(1j * rng.uniform(-3, 3, 4))
    b, c = rng.standard_normal(4) + 1j * rng.standard_normal(4), rng.standard_normal(4) + 1j * rng.standard_normal(4)
    H = m.hessian_diagonal_theory(lam, b, c, 0.5)
    assert np.allclose(H, H.T, rtol=1e-10, atol=1e-10 * np.abs(H).max())
    trace = np.sum(np.abs(b) ** 2 * np.abs(c) ** 2 * m.sensitivity_variance(lam, 0.5))
    assert np.trace(H) == pytest.approx(trace, rel=1e-10)
    assert np.all(np.linalg.eigvalsh(H) > -1e-8 * np.abs(H).max())  # a Gauss-Newton matrix
    assert m.offdiagonal_fraction(np.diag(np.arange(1.0, 9.0))) == 0.0
    with pytest.raises(ValueError, match="same length"):
        m.hessian_diagonal_theory(lam, b[:3], c)


def test_hessian_theory_eq143_matches_monte_carlo():
    """E[g g^T] with g = (Re u, -Im u), u_i = b_i c_i dh_i/dlam_i, simulated for white noise (eq. 143)."""
    lam = np.array([0.9 * np.exp(0.4j), 0.9 * np.exp(-0.4j), 0.8 * np.exp(2j)])
    b, c = np.array([1.0, 0.5 + 0.5j, -1j]), np.array([0.7, 1.0 - 0.3j, 0.4 + 0.2j])
    chains, steps = 40000, 150
    g = torch.Generator().manual_seed(0)
    h = torch.zeros(chains, 3, dtype=torch.complex128)
    s = torch.zeros_like(h)
    lt = torch.tensor(lam)
    for _ in range(steps):
        x = torch.randn(chains, 1, generator=g, dtype=torch.float64)
        s = lt * s + h
        h = lt * h + x
    u = s * torch.tensor(b * c)
    feats = torch.cat([u.real, -u.imag], dim=1).numpy()
    mc = feats.T @ feats / chains
    H = m.hessian_diagonal_theory(lam, b, c, 0.0)
    big = np.abs(H) > 0.05 * np.abs(H).max()
    assert np.max(np.abs(mc[big] / H[big] - 1)) < 0.08


def test_landscape_gradient_is_the_autograd_one_and_eq91_eq93_vanish_at_the_teacher():
    star = 0.97 * np.exp(0.3j)
    lam = torch.tensor(0.8 * np.exp(1.1j), dtype=torch.complex128)
    x = torch.tensor([lam.real.item(), lam.imag.item()], dtype=torch.float64, requires_grad=True)
    m.landscape_complex(torch.complex(x[0], x[1]), star).backward()
    assert np.allclose(m.landscape_gradient(complex(lam), star), x.grad.numpy(), rtol=1e-10)
    for normalised in (False, True):
        assert abs(m.landscape_complex(np.array(star), star, normalised=normalised)) < 1e-12
    assert m.landscape_complex(np.array(0.5), 0.9) == pytest.approx(float(m.landscape_real(0.5, 0.9)))


def test_normalised_landscape_curvatures_eqs_98_105():
    from lscnb.experiments import memory as ex

    for gap in (0.01, 0.1):
        nu = 1 - gap
        assert ex.parametrised_landscape("polar", "magnitude", gap, 3)["hessian_at_optimum"] == pytest.approx(
            1 / (1 - nu**2) ** 2, rel=1e-8
        )
        assert ex.parametrised_landscape("polar", "angle", gap, 3)["hessian_at_optimum"] == pytest.approx(
            nu**2 * (1 + nu**2) / (1 - nu**2) ** 2, rel=1e-8
        )
        assert ex.parametrised_landscape("opt", "angle", gap, 3)["hessian_at_optimum"] == pytest.approx(1, rel=1e-8)
    with pytest.raises(ValueError, match="param"):
        ex.parametrised_landscape("cartesian", "angle", 0.1)


def test_adam_angle_reaches_the_teacher_with_the_polar_angle_only_fast():
    out = m.adam_angle("polar", 0.99 * np.exp(1j * np.pi / 4), 0.99 * np.exp(1j * np.pi / 100), steps=6000)
    assert np.median(out["loss"][-100:]) < 1e-6
    nu, theta = m.polar_from(out["w"][-1, 0], out["w"][-1, 1], "polar")
    assert nu == pytest.approx(0.99, abs=1e-4) and theta == pytest.approx(np.pi / 100, abs=1e-3)
    with pytest.raises(ValueError, match="angle"):
        m.adam_angle("log", 0.5, 0.6)


def test_heads_builder_and_students():
    from lscnb.experiments import memory as ex

    full = ex.heads_runs("full")
    assert {r.config["model"] for r in full} == {f"heads{k}" for k in (1, 2, 4, 8, 16, 32)}
    assert len(full) == 6 * 5 * 3 and all(r.config["readout"] for r in full)
    assert ex.make_student("heads4", 8, 0.99, 0).A.shape == (4, 2, 2)
    with pytest.raises(ValueError, match="heads"):
        ex.make_student("headsX", 8, 0.99, 0)


def test_lru_from_system_reproduces_the_complex_diagonal_student():
    from lscnb.models.linear_rnn import conjugate_pair_system

    s = conjugate_pair_system(1)
    diag = DiagonalLRU.from_system(s["lam"], s["b"], s["c"], s["D"])
    lru = DiagonalLRU.from_system(s["lam"], s["b"], s["c"], s["D"], param="exp")
    x = torch.randn(3, 50, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(lru(x), diag(x), atol=1e-10)
        assert torch.allclose(lru.eigenvalues(), diag.eigenvalues(), atol=1e-12)
    with pytest.raises(ValueError, match="param"):
        DiagonalLRU.from_system(s["lam"], s["b"], s["c"], s["D"], param="polar")


def test_teacher_runs_cover_every_model_of_the_ablation():
    from lscnb.experiments import memory as ex

    assert {r.config["model"] for r in ex.teacher_runs("full")} == set(ex.ABLATION)


@pytest.mark.parametrize("model", ["dense", "block", "complex+γ", "lru"])
def test_teacher_runs_that_differ_in_rate_train_together_as_alone(model):
    """The batched twin of teacher_run (one teacher, one initial student, one batch stream; a cosine schedule per
    peak rate) gives each run what it gives alone, to float32 rounding at rates where training is not chaotic."""
    from lscnb import runs
    from lscnb.config import Profile
    from lscnb.experiments.memory import teacher as tm

    cfgs = [dict(model=model, nu0=0.9, lr=lr, seed=1, steps=40, batch=8, length=20, student=8) for lr in (1e-3, 3e-3)]
    ctx = lambda: runs.RunContext(Profile("full"), "cpu", 1, None, False)
    alone = [tm.teacher_run(dict(c), ctx()) for c in cfgs]
    together = tm.teacher_group([dict(c) for c in cfgs], [ctx(), ctx()])
    for a, b in zip(alone, together):
        assert a.keys() == b.keys() and not a["diverged"] and not b["diverged"]
        for k in ("final_loss", "normalised_loss", "teacher_half_var", "params"):
            assert b[k] == pytest.approx(a[k], rel=1e-5), k
    assert alone[0]["final_loss"] != pytest.approx(alone[1]["final_loss"], rel=1e-3)  # the rates matter
    key = runs.group_key
    group = [r for r in tm.teacher_runs("full") if r.config["model"] == model and r.config["nu0"] == 0.99][:3]
    assert len({key(r) for r in group}) == 1 and key(group[0]) != key(tm.teacher_runs("full")[-1])


def test_teacher_runs_that_read_out_adams_rates_are_trained_one_by_one():
    from lscnb import runs
    from lscnb.config import Profile
    from lscnb.experiments.memory import teacher as tm

    cfg = dict(model="heads4", nu0=0.9, lr=1e-3, seed=0, steps=5, batch=4, length=10, student=8, readout=True)
    ctx = lambda: runs.RunContext(Profile("full"), "cpu", 0, None, False)
    (got,) = tm.teacher_group([dict(cfg)], [ctx()])
    want = tm.teacher_run(dict(cfg), ctx())
    assert got.keys() == want.keys() and any(k.startswith("lr_") for k in got)
    assert all(np.array_equal(got[k], want[k]) for k in want)


def test_a_killed_teacher_group_resumes_where_it_stopped(tmp_path, monkeypatch):
    """The batched teacher runs keep one checkpoint (with the batch generator): killed at step 6 of 12, the group
    resumes there and ends where an uninterrupted group ends."""
    from lscnb import batched, runs
    from lscnb.config import Profile
    from lscnb.experiments.memory import teacher as tm

    def dying(die_at):
        def fit_batched(models, draw, *args, **kwargs):
            def batch(k):
                if k == die_at:
                    raise KeyboardInterrupt
                return draw(k)

            return batched.fit_batched(models, batch, *args, **{**kwargs, "checkpoint_every": 1})

        return fit_batched

    cfgs = [dict(model="lru", nu0=0.9, lr=lr, seed=2, steps=12, batch=4, length=10, student=4) for lr in (1e-3, 1e-2)]
    ctxs = lambda ckpt: [
        runs.RunContext(Profile("full"), "cpu", 2, ckpt, False),
        runs.RunContext(Profile("full"), "cpu", 2, None, False),
    ]
    monkeypatch.setattr(tm, "fit_batched", dying(None))
    whole = tm.teacher_group([dict(c) for c in cfgs], ctxs(None))
    monkeypatch.setattr(tm, "fit_batched", dying(6))
    with pytest.raises(KeyboardInterrupt):
        tm.teacher_group([dict(c) for c in cfgs], ctxs(tmp_path / "g.ckpt"))
    monkeypatch.setattr(tm, "fit_batched", dying(None))
    resumed = tm.teacher_group([dict(c) for c in cfgs], ctxs(tmp_path / "g.ckpt"))
    for a, b in zip(whole, resumed):
        assert b["final_loss"] == pytest.approx(a["final_loss"], rel=1e-6)
