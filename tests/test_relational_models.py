"""PrediNet (Shanahan et al. 2019) and CoRelNet_mix (thesis §7.3)."""
import pytest
import torch

from lscnb.models.relational import CoRelNetMix, PrediNet, similarity_features


def test_predinet_propositions():
    torch.manual_seed(0)
    z = torch.randn(5, 9, 128)
    net = PrediNet(9, 4)
    out = net(z)
    assert out.shape == (5, 4)
    props = net.propositions(z)
    assert props.shape == (5, 32, 18)
    pos = props[..., -2:].detach()
    assert float(pos.min()) >= 0 and float(pos.max()) <= 1                     # attended positions are convex combinations
    out.sum().backward()
    assert all(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in net.parameters())
    with torch.no_grad():                                                       # tie the two queries of every head:
        W = net.W_Q.weight.view(32, 2, 16, -1)                                   # both attend to the same mixture, so
        W[:, 1] = W[:, 0]                                                        # every relation d = (e1 - e2) W_S is 0
        torch.testing.assert_close(net.propositions(z)[..., :16], torch.zeros(5, 32, 16))
        perm = torch.randperm(128)
        assert float((net(z[..., perm]) - net(z)).abs().max()) > 1e-4           # not a pure relational bottleneck
    with pytest.raises(ValueError, match="T=9"):
        net(torch.randn(2, 6, 128))
    with pytest.raises(ValueError, match="heads"):
        PrediNet(9, 4, heads=0)


def test_corelnet_mix_competition():
    torch.manual_seed(0)
    z = torch.randn(6, 2, 128)
    net = CoRelNetMix(2, 2)
    assert net.matrices(net.tcn(z)).shape == (6, 2, 4)
    with torch.no_grad():
        net.query.weight.zero_()
        for winner in (0, 1):                                                   # a query aligned with one rule's key
            net.query.bias.copy_(10 * net.keys[winner])
            net.keys.data[1 - winner] = -net.keys[winner]
            net.eval()
            zt = net.tcn(z)
            assert torch.equal(net.choice(zt), torch.nn.functional.one_hot(torch.full((6,), winner), 2).float())
            torch.testing.assert_close(net(z), net.mlp(net.matrices(zt)[:, winner]))
        torch.testing.assert_close(net.matrices(zt)[:, 0], similarity_features(zt, causal=False))
        d = net.matrices(net.tcn(z.flip(1)))[:, 1]
        torch.testing.assert_close(d, -net.matrices(zt)[:, 1])                   # differences flip under a swap
    net = CoRelNetMix(2, 2)
    net.train()
    w = net.choice(net.tcn(z))
    assert torch.equal(w.detach().sum(1), torch.ones(6)) and set(w.detach().flatten().tolist()) <= {0.0, 1.0}   # one rule per sample
    net(z).pow(2).sum().backward()
    assert net.keys.grad is not None and float(net.keys.grad.abs().sum()) > 0  # straight-through: the competition learns
    with pytest.raises(ValueError, match="tau"):
        CoRelNetMix(2, 2, tau=0.0)
    with pytest.raises(ValueError, match="z"):
        net(torch.randn(2, 128))


def test_games_table_ranks_ours_beside_the_thesis():
    from lscnb.experiments import corelnet as ex

    class R(dict):
        def __init__(self, task, model, hex_, str_):
            super().__init__(hexominoes=hex_, stripes=str_)
            self.config = {"task": task, "model": model}

    col = [R("row_matching", "corelnet", 1.0, 0.9), R("row_matching", "transformer", 0.5, 0.52),
           R("colour_shape", "corelnet", 0.45, 0.5), R("colour_shape", "transformer", 0.8, 0.6)]
    rows = {(r["game"], r["test"]): r for r in ex.games_table(col)}
    rm = rows[("row_matching", "hexominoes")]
    assert rm["CoRelNet (ours)"] == 100 and rm["CoRelNet (thesis)"] == 97.7 and rm["Transformer (thesis)"] == 50.3
    assert rm["ranking (ours)"] == "CoRelNet > Transformer" == rm["ranking (thesis)"]
    assert rows[("colour_shape", "hexominoes")]["ranking (thesis)"] == "Transformer > CoRelNet"
    assert rows[("colour_shape", "stripes")]["ranking (thesis)"] == "not reported"
    gap = ex.gap_games(col)
    assert "row_matching/hexominoes: CoRelNet - Transformer +50 points (thesis +47)" in gap and "not in the thesis" in gap


def test_tcn_matches_the_unbiased_variance_formula():
    from lscnb.models.relational import TCN
    torch.manual_seed(0)
    z = torch.randn(4, 6, 128, dtype=torch.float64)
    ref = lambda p: (p - p.mean(1, keepdim=True)) / torch.sqrt(p.var(1, keepdim=True) + 1e-8)   # noqa: E731
    with torch.no_grad():
        torch.testing.assert_close(TCN(128).double()(z), ref(z))
        torch.testing.assert_close(TCN(128, segments=[2, 2, 2]).double()(z), torch.cat([ref(p) for p in z.split(2, 1)], 1))


def test_every_game_model_and_the_mix_run_end_to_end():
    import types

    from lscnb.experiments import corelnet as ex
    ctx = types.SimpleNamespace(device="cpu")
    for model in ex.GAME_MODELS:
        out = ex.games_run(dict(task="colour_shape", model=model, iters=2, lr=1e-3, test=8, seed=0), ctx)
        assert {"hexominoes", "stripes", "iid"} <= set(out) and all(0 <= out[k] <= 1 for k in ("hexominoes", "stripes")), model
    out = ex.task_run(dict(task="rmts", model="mix", m=95, iters=2, test=8, seed=0), ctx)
    assert 0 <= out["similarity_share"] <= 1
    with pytest.raises(ValueError, match="model"):
        ex.games_run(dict(task="same", model="ntm", iters=2, lr=1e-3, test=8, seed=0), ctx)
