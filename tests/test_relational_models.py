"""PrediNet (Shanahan et al. 2019) and CoRelNet_mix (thesis §7.3)."""

import pytest
import torch

from lscnb.config import Profile
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
    assert float(pos.min()) >= 0 and float(pos.max()) <= 1  # attended positions are convex combinations
    out.sum().backward()
    assert all(p.grad is not None and float(p.grad.abs().sum()) > 0 for p in net.parameters())
    with torch.no_grad():  # tie the two queries of every head:
        W = net.W_Q.weight.view(32, 2, 16, -1)  # both attend to the same mixture, so
        W[:, 1] = W[:, 0]  # every relation d = (e1 - e2) W_S is 0
        torch.testing.assert_close(net.propositions(z)[..., :16], torch.zeros(5, 32, 16))
        perm = torch.randperm(128)
        assert float((net(z[..., perm]) - net(z)).abs().max()) > 1e-4  # not a pure relational bottleneck
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
        for winner in (0, 1):  # a query aligned with one rule's key
            net.query.bias.copy_(10 * net.keys[winner])
            net.keys.data[1 - winner] = -net.keys[winner]
            net.eval()
            zt = net.tcn(z)
            assert torch.equal(net.choice(zt), torch.nn.functional.one_hot(torch.full((6,), winner), 2).float())
            torch.testing.assert_close(net(z), net.mlp(net.matrices(zt)[:, winner]))
        torch.testing.assert_close(net.matrices(zt)[:, 0], similarity_features(zt, causal=False))
        d = net.matrices(net.tcn(z.flip(1)))[:, 1]
        torch.testing.assert_close(d, -net.matrices(zt)[:, 1])  # differences flip under a swap
    net = CoRelNetMix(2, 2)
    net.train()
    w = net.choice(net.tcn(z))
    assert torch.equal(w.detach().sum(1), torch.ones(6)) and set(w.detach().flatten().tolist()) <= {
        0.0,
        1.0,
    }  # one rule per sample
    net(z).pow(2).sum().backward()
    assert (
        net.keys.grad is not None and float(net.keys.grad.abs().sum()) > 0
    )  # straight-through: the competition learns
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

    col = [
        R("row_matching", "corelnet", 1.0, 0.9),
        R("row_matching", "transformer", 0.5, 0.52),
        R("colour_shape", "corelnet", 0.45, 0.5),
        R("colour_shape", "transformer", 0.8, 0.6),
    ]
    rows = {(r["game"], r["test"]): r for r in ex.games_table(col)}
    rm = rows[("row_matching", "hexominoes")]
    assert rm["CoRelNet (ours)"] == 100 and rm["CoRelNet (thesis)"] == 97.7 and rm["Transformer (thesis)"] == 50.3
    assert rm["ranking (ours)"] == "CoRelNet > Transformer" == rm["ranking (thesis)"]
    assert rows[("colour_shape", "hexominoes")]["ranking (thesis)"] == "Transformer > CoRelNet"
    assert rows[("colour_shape", "stripes")]["ranking (thesis)"] == "not reported"
    gap = ex.gap_games(col)
    assert (
        "row_matching/hexominoes: CoRelNet - Transformer +50 points (thesis +47)" in gap and "not in the thesis" in gap
    )


def test_tcn_matches_the_unbiased_variance_formula():
    from lscnb.models.relational import TCN

    torch.manual_seed(0)
    z = torch.randn(4, 6, 128, dtype=torch.float64)
    ref = lambda p: (p - p.mean(1, keepdim=True)) / torch.sqrt(p.var(1, keepdim=True) + 1e-8)  # noqa: E731
    with torch.no_grad():
        torch.testing.assert_close(TCN(128).double()(z), ref(z))
        torch.testing.assert_close(
            TCN(128, segments=[2, 2, 2]).double()(z), torch.cat([ref(p) for p in z.split(2, 1)], 1)
        )


def test_every_game_model_and_the_mix_run_end_to_end():
    import types

    from lscnb.experiments import corelnet as ex

    ctx = types.SimpleNamespace(profile=Profile("quick"), device="cpu", seed=0)
    for model in ex.GAME_MODELS:
        out = ex.games_run(dict(task="colour_shape", model=model, iters=2, lr=1e-3, test=8, seed=0), ctx)
        assert {"hexominoes", "stripes", "iid"} <= set(out) and all(
            0 <= out[k] <= 1 for k in ("hexominoes", "stripes")
        ), model
    out = ex.task_run(dict(task="rmts", model="mix", m=95, iters=2, test=8, seed=0), ctx)
    assert 0 <= out["similarity_share"] <= 1
    with pytest.raises(ValueError, match="model"):
        ex.games_run(dict(task="same", model="trn", iters=2, lr=1e-3, test=8, seed=0), ctx)


def test_relation_network_sums_over_pairs():
    from lscnb.models.relational_baselines import RelationNetwork

    torch.manual_seed(0)
    z = torch.randn(4, 6, 128, dtype=torch.float64)
    net = RelationNetwork(6, 3).double()
    assert net(z).shape == (4, 3)
    d, y = 128, 3  # TCN, g = 2(d+1) -> 512 -> 256, f = 256 -> 256 -> y
    assert sum(p.numel() for p in net.parameters()) == 2 * d + (2 * (d + 1) + 1) * 512 + 513 * 256 + 257 * 256 + 257 * y
    with torch.no_grad():
        x = net.objects(z)
        assert torch.equal(x[0, :, -1], torch.arange(6.0, dtype=torch.float64))  # the temporal tag
        ref = sum(net.g(torch.cat([x[:, i], x[:, j]], -1)) for i in range(6) for j in range(6))  # eq. 1, pair by pair
        torch.testing.assert_close(net.pair_sum(x), ref)
        perm = torch.randperm(6)
        torch.testing.assert_close(net.pair_sum(x[:, perm]), net.pair_sum(x))  # a sum over pairs: order-free
        untagged = RelationNetwork(6, 3, tag=False).double()
        torch.testing.assert_close(untagged(z[:, perm]), untagged(z))  # without positions the RN sees a set
        assert float((net(z[:, perm]) - net(z)).abs().max()) > 1e-6  # with them it does not
        assert float((net(z[..., torch.randperm(128)]) - net(z)).abs().max()) > 1e-4  # a sensory model
    with pytest.raises(ValueError, match="z"):
        net(torch.randn(4, 128))
    with pytest.raises(ValueError, match="T"):
        RelationNetwork(0, 2)
    with pytest.raises(TypeError, match="classes"):
        RelationNetwork(2, 2.5)


def test_ntm_addressing_reads_what_it_wrote():
    from lscnb.models.relational_baselines import NTM, ntm_address, ntm_read, ntm_write

    torch.manual_seed(0)
    B, N, W = 3, 10, 16
    memory = torch.randn(B, N, W)
    key = torch.randn(B, W)
    one = torch.ones(B, 1)
    stay = torch.tensor([[0.0, 1.0, 0.0]]).expand(B, -1)
    for args in (
        (
            key,
            one,
            one * 0.5,
            torch.softmax(torch.randn(B, 3), -1),
            1 + torch.rand(B, 1),
            torch.softmax(torch.randn(B, N), -1),
        ),
        (key, 5 * one, one, stay, one, None),
    ):
        w = ntm_address(memory, *args)
        assert w.shape == (B, N) and float(w.min()) >= 0
        torch.testing.assert_close(w.sum(-1), torch.ones(B))  # addressing weights sum to 1
    w = ntm_address(memory, memory[:, 4], 1e3 * one, one, stay, one)  # a sharp content key: slot 4 exactly
    torch.testing.assert_close(w, torch.nn.functional.one_hot(torch.full((B,), 4), N).float())
    right = torch.tensor([[0.0, 0.0, 1.0]]).expand(B, -1)  # a shift by +1 moves the focus to slot 5
    assert torch.equal(ntm_address(memory, memory[:, 4], 1e3 * one, one, right, one).argmax(-1), torch.full((B,), 5))
    v = torch.tanh(torch.randn(B, W))
    written = ntm_write(memory, w, torch.ones(B, W), v)  # erase slot 4 fully, add v
    torch.testing.assert_close(written[:, 4], v)
    torch.testing.assert_close(
        torch.cat([written[:, :4], written[:, 5:]], 1), torch.cat([memory[:, :4], memory[:, 5:]], 1)
    )
    r = ntm_read(written, ntm_address(written, v, 1e3 * one, one, stay, 3 * one))  # a content read by v finds it
    torch.testing.assert_close(r, v, atol=1e-4, rtol=0)
    net = NTM(5, 4)
    out = net(torch.randn(2, 5, 128))
    assert out.shape == (2, 4)
    out.sum().backward()
    assert float(net.memory0.grad.abs().sum()) > 0 and float(net.write_head.weight.grad.abs().sum()) > 0
    with pytest.raises(ValueError, match="shift"):
        ntm_address(memory, key, one, one, torch.ones(B, 5) / 5, one)
    with pytest.raises(ValueError, match="memory"):
        ntm_address(memory[0], key, one, one, stay, one)
    with pytest.raises(ValueError, match="slots"):
        NTM(5, 4, slots=0)


def test_asymmetric_esbn_is_not_swap_symmetric():
    from lscnb.models.relational import ESBN, esbn_count

    torch.manual_seed(0)
    sym, asym = ESBN(2, 2), ESBN(2, 2, asym=True)
    z = torch.randn(6, 3, 128)
    with torch.no_grad():
        stored, query = sym.codes(z)
        torch.testing.assert_close(stored, sym.tcn(z))
        torch.testing.assert_close(query, stored)  # one code: a symmetric similarity
        stored, query = asym.codes(z)
        torch.testing.assert_close(stored, asym.tcn(asym.W1(z)))  # the norm after each projection
        torch.testing.assert_close(query, asym.tcn(asym.W2(z)))  # (ESBN_asym1.py)
        cross = (stored[:, 0] * query[:, 1]).sum(-1) - (stored[:, 1] * query[:, 0]).sum(-1)
        assert float(cross.abs().max()) > 1e-3  # s(a, b) != s(b, a)
        z = z[:, :2]
        torch.testing.assert_close(sym(z.flip(1)), sym(z))  # ESBN cannot tell (a, b) from (b, a) ...
        asym.tcn.gamma.fill_(0.1)  # (similarities of order 1, not a saturated confidence)
        asym.tcn.beta.normal_(0, 0.1)  # (two steps: TCN makes z_2 = -z_1, swapped only through beta)
        asym, z = asym.double(), z.double()  # (an untrained controller hardly reads the confidence: ~1e-5)
        assert float((asym(z.flip(1)) - asym(z)).abs().max()) > 1e-7  # ... its asymmetric version can
    assert (
        esbn_count(2, 2) == 1910757
        and sum(p.numel() for p in asym.parameters()) - sum(p.numel() for p in sym.parameters()) == 2 * 128 * 129
    )
    with pytest.raises(ValueError, match="asym and cat"):
        ESBN(2, 2, asym=True, cat=True)


def test_appendix_baselines_and_asymmetric_esbn_in_the_run_lists():
    import types

    from lscnb.experiments import corelnet as ex

    full = {r.config["model"] for r in ex.baseline_runs("full")}  # no MNM: a declared subset (BASELINE_SIZES)
    assert full == {"lstm", "rn", "ntm"} and {r.config["model"] for r in ex.baseline_runs("quick")} == {
        "rn",
        "ntm",
    }
    # games: a declared subset, 4 of Table 5.1's 5 models (ESBN and Table C.2's baselines left out, each still runnable)
    assert {r.config["model"] for r in ex.games_runs("full")} == {"corelnet", "corelnet_t", "predinet", "transformer"}
    assert "no ESBN" in ex.FIGURES["games"].subset and len(ex.games_runs("full")) == 4 * 7 * 3
    assert {r.config["model"] for r in ex.mix_runs("full")} == {"diff", "mix"}  # no ESBN: a declared subset
    assert "asym_esbn" in {r.config["model"] for r in ex.sizes_runs("full")}
    assert "esbn" not in {r.config["model"] for r in ex.variant_runs("full")}
    assert "no ESBN" in ex.FIGURES["mix"].subset and "no ESBN" in ex.FIGURES["variants"].subset
    assert ex.TABLE_5_1[("left_of", "hexominoes")]["RN"] == 51.0 and ex.TABLE_5_1[("same", "stripes")]["NTM"] == 93.4
    ctx = types.SimpleNamespace(profile=Profile("quick"), device="cpu", seed=0)
    out = ex.sizes_run(dict(task="transitive", model="asym_esbn", m=95, iters=2, test=8, seed=0), ctx)
    assert 0 <= out["ood"] <= 1
    unseen = [r for r in ex.baseline_runs("full") if r.config["task"] == "identity_rules4_missing"]
    assert len(unseen) == 9 and unseen[0].config["m"] == 94 and unseen[0].fn is ex.unseen_run
    assert 0 <= unseen[0].fn(dict(unseen[0].config, iters=2, test=8), ctx)["ood"] <= 1

    class R(dict):
        def __init__(self, task, model, ood, iid):
            super().__init__(ood=ood, iid=iid, objects="test")
            self.config = {"task": task, "model": model}

    col = [
        R("same_different", "rn", 0.5, 1.0),
        R("same_different", "rn", 0.6, 0.9),
        R("same_different", "ntm", 0.55, 1.0),
    ]
    rows = ex.baseline_table(col, [R("same_different", "corelnet", 1.0, 1.0)])
    rn = next(r for r in rows if r["model"] == "RN")
    assert rn["held-out objects"] == pytest.approx(0.55) and rn["training objects"] == pytest.approx(0.95)
    assert rn["CoRelNet, held-out (Figs. 5.3, 5.5)"] == 1.0
    assert ex.gap_baselines(col).startswith("mean OOD accuracy over 1 task (chance 50.0%): RN 55.0%, NTM 55.0%")
    col.append(R("identity_rules4", "rn", 0.2, 1.0))  # chance 1/6: the mean chance is over the tasks run
    assert ex.gap_baselines(col).startswith("mean OOD accuracy over 2 tasks (chance 33.3%): RN 37.5%, NTM 55.0%")


def test_mnm_writes_by_its_local_rule():
    from lscnb.models.relational_baselines import MNM, mnm_activations, mnm_update

    torch.manual_seed(0)
    B, d = 4, 16
    W0 = [torch.randn(B, d, d) / 4 for _ in range(3)]
    key = torch.tanh(torch.randn(B, d))
    targets = [0.9 * torch.tanh(torch.randn(B, d)) for _ in range(3)]
    err = lambda Ws, l: (mnm_activations(Ws, key)[l] - targets[l]).norm(dim=-1)  # noqa: E731
    assert all(
        torch.equal(a, b) for a, b in zip(mnm_update(W0, key, targets, torch.zeros(B, 1)), W0)
    )  # gate 0: no write
    W1 = mnm_update(W0, key, targets, torch.ones(B, 1))
    assert bool((err(W1, 0) < err(W0, 0)).all())  # the first layer moves towards its target in one write
    Ws = W0
    for _ in range(30):
        Ws = mnm_update(Ws, key, targets, torch.ones(B, 1))
    assert bool((err(Ws, 2) < 0.01 * err(W0, 2)).all())  # repeated writes: reading the key returns the value
    net = MNM(5, 4, dim=32)
    out = net(torch.randn(3, 5, 32))
    assert out.shape == (3, 4) and float(net.reconstruction.detach()) >= 0
    (out.sum() + net.reconstruction).backward()
    assert float(net.targets.weight.grad.abs().sum()) > 0 and float(net.heads.weight.grad.abs().sum()) > 0
    assert "memory0" not in dict(net.named_parameters())  # the memory's weights are fast weights, not learned
    with pytest.raises(ValueError, match="targets"):
        mnm_update(W0, key, targets[:2], torch.ones(B, 1))
    with pytest.raises(ValueError, match="z"):
        net(torch.randn(3, 32))


def test_symmetric_transformer_ties_keys_to_queries():
    from lscnb.models.relational import TransformerBaseline

    torch.manual_seed(0)
    sym = TransformerBaseline(4, 2, symmetric=True)
    plain = TransformerBaseline(4, 2)
    d = 128
    assert sum(p.numel() for p in plain.parameters()) - sum(p.numel() for p in sym.parameters()) == d * d + d
    z = torch.randn(5, 4, d)
    opt = torch.optim.SGD(sym.parameters(), lr=0.1)
    sym(z).square().sum().backward()
    opt.step()  # still tied after a step: the tie is structural
    attn = sym.layer.self_attn
    torch.testing.assert_close(attn.in_proj_weight[:d], attn.in_proj_weight[d : 2 * d], rtol=0, atol=0)
    torch.testing.assert_close(attn.in_proj_bias[:d], attn.in_proj_bias[d : 2 * d], rtol=0, atol=0)
    state = {k.replace("parametrizations.", "").replace(".original", ""): v for k, v in sym.state_dict().items()}
    state["layer.self_attn.in_proj_weight"] = attn.in_proj_weight.detach()
    state["layer.self_attn.in_proj_bias"] = attn.in_proj_bias.detach()
    plain.load_state_dict(state)  # an ordinary layer with K = Q computes the same
    for mode in (plain.train, plain.eval):
        mode(), sym.train(plain.training)
        with torch.no_grad():
            torch.testing.assert_close(sym(z), plain(z))


def test_cat_versions_add_the_embeddings_to_the_decoder():
    from lscnb.models.relational import ESBN, CoRelNetT

    torch.manual_seed(0)
    z = torch.randn(6, 3, 128)
    for M, inputs in ((ESBN, lambda n: [n.lstm.weight_ih]), (CoRelNetT, lambda n: [n.k.weight, n.v.weight])):
        plain, cat = M(3, 2), M(3, 2, cat=True)
        assert cat.cat and not plain.cat
        with torch.no_grad():
            assert all(c.shape[1] - p.shape[1] == 128 for p, c in zip(inputs(plain), inputs(cat)))
            state = cat.state_dict()
            for k, v in plain.state_dict().items():
                if v.shape != state[k].shape:  # input weights: zero the embedding columns
                    v = torch.cat([v, torch.zeros(v.shape[0], 128)], 1)
                state[k] = v
            cat.load_state_dict(state)
            torch.testing.assert_close(cat(z), plain(z))  # with those columns at zero: the plain model
            w = inputs(cat)[0]
            w[:, -128:] = torch.randn(w.shape[0], 128) * 0.1
            assert float((cat(z) - plain(z)).abs().max()) > 1e-4  # otherwise the embeddings reach the decoder
            perm = torch.randperm(128)
            assert float((cat(z[..., perm]) - cat(z)).abs().max()) > 1e-4  # no longer invariant to the features


def test_asymmetric_corelnet_t_reduces_to_the_symmetric_one_at_identity_maps():
    from lscnb.models.relational import CoRelNetT

    torch.manual_seed(0)
    plain, asym = CoRelNetT(4, 2), CoRelNetT(4, 2, asym=True)
    state = dict(plain.state_dict())
    for name in ("W1", "W2"):
        state[f"{name}.weight"], state[f"{name}.bias"] = torch.eye(128), torch.zeros(128)
    asym.load_state_dict(state)
    z = torch.randn(5, 4, 128)
    with torch.no_grad():
        torch.testing.assert_close(asym(z), plain(z))  # W_1 = W_2 = I: the dot product
        asym.W2.weight.copy_(torch.randn(128, 128) / 128**0.5)
        assert float((asym(z) - plain(z)).abs().max()) > 1e-4
        perm = torch.randperm(128)
        torch.testing.assert_close(plain(z[..., perm]), plain(z), atol=1e-5, rtol=0)
        assert float((asym(z[..., perm]) - asym(z)).abs().max()) > 1e-4  # learned maps see the features themselves


GOLDEN = {
    "corelnet_plain": ("CoRelNet", dict(T=3, dim=8, hidden=16)),
    "corelnet_cat": ("CoRelNet", dict(T=3, dim=8, hidden=16, variant="cat")),
    "corelnet_asym": ("CoRelNet", dict(T=4, dim=8, hidden=16, variant="asym", segments=[2, 2])),
    "corelnet_t": ("CoRelNetT", dict(T=3, dim=8, width=16, pos=4, heads=2)),
    "corelnet_t_asym": ("CoRelNetT", dict(T=4, dim=8, width=16, pos=4, heads=2, asym=True, segments=[2, 2])),
    "corelnet_t_cat": ("CoRelNetT", dict(T=3, dim=8, width=16, pos=4, heads=2, cat=True)),
    "esbn_plain": ("ESBN", dict(T=3, dim=8, hidden=10, key=6)),
    "esbn_asym": ("ESBN", dict(T=4, dim=8, hidden=10, key=6, asym=True, segments=[2, 2])),
    "esbn_cat": ("ESBN", dict(T=3, dim=8, hidden=10, key=6, cat=True)),
}


@pytest.mark.parametrize("name", list(GOLDEN))
def test_models_match_the_authors_code(name):
    """lscnb's models against the authors' classes (repository giancarlok/relationaltasks, commit
    6c4f9f002314d638c5fcb783a0a9cb6123d29e64, cognitive_tests/models/: ``Model`` of CoRelNet.py, CoRelNet_cat.py,
    CoRelNet_asym1.py, CoRelNet_qtsf.py, CoRelNet_qtsf_asym.py, CoRelNet_qtsf_cat.py, ESBN.py, ESBN_asym1.py,
    ESBN_cat.py), run at a tiny size in float64 (embeddings of width 8 fed past the encoder, 2 classes, batch 4;
    tests/golden/README.md): the authors' weights loaded into lscnb's model give the same logits and the same
    gradients of ``sum(C * logits)`` with respect to every weight and to the embeddings."""
    import numpy as np

    from lscnb.models import relational

    data = np.load(f"tests/golden/{name}.npz")
    cls, kw = GOLDEN[name]
    kw = dict(kw)
    model = getattr(relational, cls)(kw.pop("T"), 2, **kw).double()
    weights = {k[2:]: torch.from_numpy(data[k]) for k in data.files if k.startswith("w:")}
    assert set(weights) == {k for k, p in model.named_parameters()}, set(weights) ^ {
        k for k, _ in model.named_parameters()
    }
    model.load_state_dict(weights, strict=False)
    z = torch.from_numpy(data["z"]).requires_grad_(True)
    logits = model(z)
    (logits * torch.from_numpy(data["C"])).sum().backward()
    assert float((logits.detach() - torch.from_numpy(data["logits"])).abs().max()) < 1e-10
    assert float((z.grad - torch.from_numpy(data["grad_z"])).abs().max()) < 1e-10
    for k, p in model.named_parameters():
        assert float((p.grad - torch.from_numpy(data["g:" + k])).abs().max()) < 1e-10, k
