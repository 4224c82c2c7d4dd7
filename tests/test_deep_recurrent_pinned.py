"""lscnb.models.deep_recurrent pinned against answers it did not compute (issue 27, surviving mutants): initial
draws written out in the test from the documented recipes, the same draws whatever the global RNG state, the
documented defaults, exact error messages, and the bounds of the documented ranges."""

import math

import pytest
import torch
from pinning import assert_same_params, params_of

from lscnb.models import deep_recurrent as D
from lscnb.models.gated import GRUCell


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


def _under_two_global_states(make):
    """``make()`` twice, after seeding the global RNG differently: a seeded generator must decide every draw."""
    torch.manual_seed(11)
    first = make()
    torch.manual_seed(12)
    return first, make()


# ------------------------------------------------------------------------------------------------ draws by recipe
@pytest.mark.parametrize("param", ["exp", "default"])
def test_diagonal_recurrence_draws_written_out(param):
    """Module docstring recipe, drawn here: float64 uniforms for the ring and the phases, then B, C, D."""
    dm, dh, lo, hi, phase = 3, 6, 0.2, 0.7, 2.5
    layer = D.DiagonalRecurrence(dm, dh, nu_min=lo, nu_max=hi, max_phase=phase, param=param, generator=_gen(4))
    g = _gen(4)
    u = torch.rand(dh, generator=g, dtype=torch.float64)
    nu = torch.sqrt(lo**2 + u * (hi**2 - lo**2))  # uniform in area on the ring
    theta = phase * torch.rand(dh, generator=g, dtype=torch.float64)
    lam = layer.eigenvalues().detach().to(torch.complex128)
    torch.testing.assert_close(lam.abs(), nu, rtol=1e-6, atol=0)
    torch.testing.assert_close(torch.remainder(lam.angle(), 2 * math.pi), theta, rtol=1e-6, atol=0)
    if param == "exp":
        torch.testing.assert_close(torch.exp(layer.w_gamma.detach()).double(), torch.sqrt(1 - nu**2), rtol=1e-6, atol=0)
    B_re = torch.randn(dh, dm, generator=g) / math.sqrt(2 * dm)
    B_im = torch.randn(dh, dm, generator=g) / math.sqrt(2 * dm)
    C_re = torch.randn(dm, dh, generator=g) / math.sqrt(dh)
    C_im = torch.randn(dm, dh, generator=g) / math.sqrt(dh)
    Dv = torch.randn(dm, generator=g)
    for name, want in (("B_re", B_re), ("B_im", B_im), ("C_re", C_re), ("C_im", C_im), ("D", Dv)):
        torch.testing.assert_close(getattr(layer, name).detach(), want, rtol=1e-6, atol=0, msg=name)


def test_chrono_init_draws_written_out():
    """Chrono (Tallec & Ollivier 2018) drawn here: LeCun input weights, three float64 QR blocks with R's diagonal
    made positive, then T from a float64 uniform; default scales 1."""
    n, d_in = 5, 4
    cell = D.chrono_init_(GRUCell(d_in, n), 2.0, 7.0, generator=_gen(3))
    g = _gen(3)
    w_ih = torch.empty(3 * n, d_in).normal_(0.0, 1 / math.sqrt(d_in), generator=g)
    torch.testing.assert_close(cell.weight_ih.detach(), w_ih, rtol=0, atol=0)
    for k in range(3):
        a = torch.randn(n, n, generator=g, dtype=torch.float64)
        block = cell.weight_hh[k * n : (k + 1) * n].detach().double()
        r = block.T @ a  # a = Q R with Q the block: R upper triangular with a positive diagonal
        assert torch.all(torch.diagonal(r) > 0)
        torch.testing.assert_close(torch.tril(r, -1), torch.zeros(n, n, dtype=torch.float64), rtol=0, atol=1e-6)
        torch.testing.assert_close(block @ block.T, torch.eye(n, dtype=torch.float64), rtol=0, atol=1e-6)
    T = 2.0 + 5.0 * torch.rand(n, generator=g, dtype=torch.float64)
    torch.testing.assert_close(cell.bias_ih[n : 2 * n].detach(), torch.log(T).float(), rtol=0, atol=0)


def test_chrono_gru_passes_scales_and_has_documented_defaults():
    """ChronoGRU(...) is chrono_init_ of a GRUCell with the same arguments; defaults t in [1, 2], scales 1."""
    layer = D.ChronoGRU(3, 4, scale_x=2.5, scale_h=0.5, t_min=1.5, t_max=3.0, generator=_gen(1))
    cell = D.chrono_init_(GRUCell(3, 4), 1.5, 3.0, scale_x=2.5, scale_h=0.5, generator=_gen(1))
    assert_same_params(params_of(layer.cell), params_of(cell))
    default = D.ChronoGRU(3, 4, generator=_gen(2))
    explicit = D.chrono_init_(GRUCell(3, 4), 1.0, 2.0, scale_x=1.0, scale_h=1.0, generator=_gen(2))
    assert_same_params(params_of(default.cell), params_of(explicit))
    assert default.last_state is None
    assert D.DiagonalRecurrence(2, 3).last_state is None


def test_simplified_gru_draws_written_out():
    """App. D.3 recipe drawn here: LeCun W_in, W_fx, float64 QR with R's diagonal made positive, float64 T."""
    k, d, d_in = 2, 5, 4
    model = D.SimplifiedGRU(d_in, d, networks=k, t_min=2.0, t_max=9.0, scale_h=0.5, generator=_gen(6))
    g = _gen(6)
    W_in = torch.empty(k, d, d_in).normal_(0.0, 1 / math.sqrt(d_in), generator=g)
    W_fx = torch.empty(k, d, d_in).normal_(0.0, 1 / math.sqrt(d_in), generator=g)
    torch.testing.assert_close(model.W_in.detach(), W_in, rtol=0, atol=0)
    torch.testing.assert_close(model.W_fx.detach(), W_fx, rtol=0, atol=0)
    a = torch.randn(k, d, d, generator=g, dtype=torch.float64)
    for j in range(k):
        q = model.W_fh[j].detach().double() / 0.5
        r = q.T @ a[j]
        assert torch.all(torch.diagonal(r) > 0)
        torch.testing.assert_close(torch.tril(r, -1), torch.zeros(d, d, dtype=torch.float64), rtol=0, atol=1e-6)
        torch.testing.assert_close(q @ r, a[j], rtol=0, atol=1e-5)
    T = 2.0 + 7.0 * torch.rand(k, d, generator=g, dtype=torch.float64)
    torch.testing.assert_close(model.b_f.detach(), torch.log(T).float(), rtol=0, atol=0)


def test_simplified_gru_documented_defaults():
    """Defaults: one network, Chrono T in [1, 256], scale_h 1 (App. D.3)."""
    default = D.SimplifiedGRU(3, 4, generator=_gen(0))
    explicit = D.SimplifiedGRU(3, 4, networks=1, gates="hidden", t_min=1.0, t_max=256.0, scale_h=1.0, generator=_gen(0))
    assert_same_params(params_of(default), params_of(explicit))
    assert default.W_in.shape == (1, 4, 3)


# ------------------------------------------------------------------------------------------------ reproducibility
@pytest.mark.parametrize(
    "make",
    [
        lambda: D.lecun_(torch.empty(3, 4), generator=_gen(0)),
        lambda: D.chrono_init_(GRUCell(3, 4), 1.0, 3.0, generator=_gen(0)),
        lambda: D.ChronoGRU(3, 4, generator=_gen(0)),
        lambda: D.Block(D.ChronoGRU(2, 2, generator=_gen(0)), 2, None, generator=_gen(1)),
        lambda: D.SimplifiedGRU(3, 4, networks=2, generator=_gen(0)),
        lambda: D.DeepRecurrentNet(2, kind="crnn", d_model=3, depth=2, seed=5),
        lambda: D.DeepRecurrentNet(2, kind="lru", d_model=3, depth=2, seed=5),
        lambda: D.DeepRecurrentNet(2, kind="gru", d_model=3, depth=2, seed=5),
    ],
    ids=["lecun", "chrono", "chrono_gru", "block", "simplified", "crnn", "lru", "gru"],
)
def test_seeded_draws_ignore_the_global_rng(make):
    """Two builds with one seed under different global RNG states are identical (the generator is used)."""
    a, b = _under_two_global_states(make)
    if isinstance(a, torch.Tensor):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    else:
        assert_same_params(params_of(a), params_of(b))


# ------------------------------------------------------------------------------------------------ the network
def test_deep_net_documented_defaults():
    """Defaults: LRU, d_model 256, depth 4, nu0 0, no norm, seed 0 (App. D.1)."""
    default = D.DeepRecurrentNet(2)
    explicit = D.DeepRecurrentNet(2, kind="lru", d_model=256, depth=4, nu0=0.0, norm=None, seed=0)
    assert_same_params(params_of(default), params_of(explicit))
    assert len(default.blocks) == 4 and default.encoder.weight.shape == (256, 2)
    assert default.block_outputs == []


def test_deep_net_chrono_range_for_the_gru():
    """kind="gru": T spread over [1/(1 - nu0), 2/(1 - nu0)] = [4, 8] at nu0 = 0.75, mean 6."""
    net = D.DeepRecurrentNet(2, kind="gru", d_model=200, depth=1, nu0=0.75, seed=0)
    T = torch.exp(net.blocks[0].rec.cell.bias_ih[200:400].detach().double())
    assert T.min().item() == pytest.approx(4.0, abs=0.1) and T.max().item() == pytest.approx(8.0, abs=0.1)
    assert T.mean().item() == pytest.approx(6.0, abs=0.25)


def test_nu0_bounds_and_message():
    """nu0 in [0, 1): 1.0 and 1.5 are refused with the documented message; 0.999 is accepted."""
    for bad in (1.0, 1.5):
        with pytest.raises(ValueError, match=rf"^nu0 must lie in \[0, 1\), got {bad}$"):
            D.DeepRecurrentNet(2, d_model=2, depth=1, nu0=bad)
    D.DeepRecurrentNet(2, d_model=2, depth=1, nu0=0.999)


def test_diagonal_ring_bounds():
    """0 <= nu_min <= nu_max < 1: an equal pair is a circle of that radius; nu_max = 1 or 1.5 is refused."""
    layer = D.DiagonalRecurrence(2, 5, nu_min=0.4, nu_max=0.4, generator=_gen())
    torch.testing.assert_close(layer.eigenvalues().detach().abs(), torch.full((5,), 0.4), rtol=1e-6, atol=0)
    for bad in (1.0, 1.5):
        with pytest.raises(ValueError, match=rf"^need 0 <= nu_min <= nu_max < 1, got nu_min=0.2, nu_max={bad}$"):
            D.DiagonalRecurrence(2, 3, nu_min=0.2, nu_max=bad)


def test_simplified_gru_chrono_bounds():
    """0 < t_min <= t_max: t_min = t_max = 2 gives b_f = log 2; t_min = 0 is refused with the message."""
    model = D.SimplifiedGRU(2, 3, t_min=2.0, t_max=2.0, generator=_gen())
    torch.testing.assert_close(model.b_f.detach(), torch.full((1, 3), math.log(2.0)), rtol=1e-6, atol=0)
    with pytest.raises(ValueError, match=r"^need 0 < t_min <= t_max, got t_min=0.0, t_max=2.0$"):
        D.SimplifiedGRU(2, 3, t_min=0.0, t_max=2.0)


def test_deep_net_refuses_a_2d_input_by_its_shape():
    """The network checks x itself: the message names x's own shape (4, 2), not an inner layer's."""
    net = D.DeepRecurrentNet(2, d_model=3, depth=1)
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(4, 2\)$"):
        net(torch.zeros(4, 2))


def test_signal_propagation_single_unit_per_layer_means():
    """d_model = 1: the per-layer w_nu mean is the square of one gradient entry (autograd here, no divisor 2)."""
    net = D.DeepRecurrentNet(2, kind="lru", d_model=1, depth=2, seed=3)
    x = torch.randn(2, 5, 2, generator=_gen(1))
    out = D.signal_propagation(net, x)
    loss = 0.5 * (net(x)[:, :-1] - x[:, 1:]).pow(2).sum(-1).mean()
    grads = torch.autograd.grad(loss, [b.rec.w_nu for b in net.blocks])
    per_layer = out["grad2"]["w_nu"][1]
    assert per_layer == pytest.approx([g.item() ** 2 for g in grads], rel=1e-5)


def test_bias_sensitivity_keeps_the_models_dtype():
    """In bfloat16 the Jacobian stays bfloat16 and near the float64 one (the identity is made in b's dtype)."""
    model = D.SimplifiedGRU(2, 3, networks=2, t_min=1.0, t_max=4.0, generator=_gen(2))
    x = torch.randn(2, 4, 2, generator=_gen(3))
    h64, s64 = model.double().bias_sensitivity(x.double())
    h, s = model.to(torch.bfloat16).bias_sensitivity(x.to(torch.bfloat16))
    assert h.dtype == torch.bfloat16 and s.dtype == torch.bfloat16
    torch.testing.assert_close(s.double(), s64, rtol=0.05, atol=0.02)


@pytest.mark.parametrize("gates", ["constant", "input", "hidden"])
def test_bias_sensitivity_stays_on_the_models_device(gates):
    """The carried Jacobian and the identity are made on b's device (a GPU window's smoke run of the memory
    chapter's Fig. 15 found them on the CPU); torch's meta device stands in for the GPU."""
    model = D.SimplifiedGRU(3, 4, networks=2, gates=gates).to("meta")
    h, s = model.bias_sensitivity(torch.zeros(2, 5, 3, device="meta"))
    assert h.device.type == s.device.type == "meta" and s.shape == (2, 4)
