"""CoRelNet's figures and tables: the appendix curves (Figs. C.1-C.12), the sensory and nhid tables, Figs. 5.1, 5.2
and 5.4, each drawn or tabled from tiny runs or stand-in results."""

import types

import numpy as np
import pytest
import torch

from lscnb.config import Profile
from lscnb.data.objects import load_objects
from lscnb.data.relational import TASKS, split


def test_appendix_curves_figs_c8_to_c11():
    from lscnb.experiments import corelnet as ex
    from lscnb.experiments.corelnet.common import EXTREME_M

    ctx = types.SimpleNamespace(profile=Profile("quick"), device="cpu", seed=0, checkpoint=None, progress=False)
    full = {
        f: ex.FIGURES[f]("full") for f in ("mcurve_encoder", "mcurve_sym", "mcurve_unseen", "mcurve_unseen_encoder")
    }
    # the extreme split of Fig. C.10 is figure unseen's (same set-up): not run twice
    assert {r.config["m"] for r in full["mcurve_unseen"]} == {0, 50, 85}
    un = {(r.config["task"], r.config["model"], r.config["seed"]): r.config for r in ex.unseen_runs("full")}
    c = full["mcurve_unseen"][0].config
    assert {k: v for k, v in c.items() if k != "m"} == {
        k: v for k, v in un[(c["task"], c["model"], c["seed"])].items() if k != "m"
    }
    # and that of Fig. C.8 is figure encoder's (same set-up): not run twice, in either profile
    assert all(r.config["m"] != EXTREME_M[r.config["task"]] for r in full["mcurve_encoder"])
    quick = ex.FIGURES["mcurve_encoder"]("quick")
    assert [r.config["m"] for r in quick] == [0]
    have = [r.config for r in ex.encoder_runs("quick")]
    assert dict(quick[0].config, m=98) in have
    # a declared subset: ESBN is left out of Figs. C.8 and C.11 (ENCODER_LEFT_OUT; Fig. C.8 keeps figure encoder's
    # same/different point)
    for f in ("mcurve_encoder", "mcurve_unseen_encoder"):
        assert {r.config["model"] for r in full[f]} == {"corelnet", "corelnet_t"}
    assert "esbn" in {r.config["model"] for r in ex.encoder_runs("full") if r.config["task"] == "same_different"}
    assert len(full["mcurve_encoder"]) == 4 * 2 * 2 * 3 * 3 and len(full["mcurve_unseen_encoder"]) == 4 * 2 * 2 * 4 * 3
    keys = [r.key for runs in full.values() for r in runs]
    assert len(keys) == len(set(keys))
    learned = next(r for r in full["mcurve_unseen_encoder"] if r.config["encoder"] == "learned")
    out = learned.fn(dict(learned.config, iters=2, test=10), ctx)
    assert 0 <= out["ood"] <= 1 and 0 <= out["iid"] <= 1
    assert len([r for f in full for r in ex.FIGURES[f]("quick")]) == 11  # the quick profile's few seconds
    # a declared subset: the thesis's asymmetric ESBN is left out (APPENDIX_SIZES)
    assert {r.config["model"] for r in full["mcurve_sym"]} == {"asym", "asym_corelnet_t", "sym_transformer"}
    assert len(full["mcurve_sym"]) == 3 * 4 * 4 * 3
    # and Fig. C.10 leaves ESBN and the LSTM out below the extreme split (figure unseen has them at the extreme)
    assert {r.config["model"] for r in full["mcurve_unseen"]} == {"corelnet", "corelnet_t", "transformer", "mlp"}
    assert len(full["mcurve_unseen"]) == 4 * 4 * 3 * 3
    # and Fig. C.13 leaves the MNM out (BASELINE_SIZES)
    assert {r.config["model"] for r in ex.baseline_runs("full")} == {"lstm", "rn", "ntm"}
    assert len(ex.baseline_runs("full")) == 8 * 3 * 3
    assert {"esbn", "lstm"} <= {r.config["model"] for r in ex.unseen_runs("full")}
    assert ex.series_table() == {} and ex.curve_drop() == {}


def test_separated_inputs_fig_c4():
    from lscnb.data.relational import SEPARATED, same_different, separated
    from lscnb.experiments import corelnet as ex
    from lscnb.models.relational import encode_colours

    fn, T, classes = SEPARATED["same_different_sep"]
    tr, _ = split(98)
    seq, y = fn(tr, 64, torch.Generator().manual_seed(0))
    assert seq.shape == (64, T) and T == 4 and classes == 2
    assert set(seq[:, ::2].unique().tolist()) <= set(tr.tolist()) and int(seq[:, 1::2].min()) >= 100
    assert bool(((seq[:, 0] == seq[:, 2]) == (y == 0)).all())  # the label is the shapes' relation only
    with pytest.raises(ValueError, match="n_colours"):
        separated(same_different, n_colours=0)
    emb = encode_colours(torch.rand(5, 3))
    assert emb.shape == (5, 128)
    with pytest.raises(ValueError, match="palette"):
        encode_colours(torch.rand(5, 4))
    runs = ex.separated_runs("full")
    assert {r.config["model"] for r in runs} == {"esbn", "transformer", "corelnet"} and len(runs) == 3 * 4 * 3


def test_spurious_per_model_fig_c3_and_sensory_fig_c12():
    from lscnb.experiments import corelnet as ex

    # Fig. C.3 is a per-model view of figure spurious: its full list already holds ESBN and CoRelNet
    assert {r.config["model"] for r in ex.spurious_runs("full")} == {"corelnet", "esbn"}
    runs = ex.sensory_runs("full")
    assert {r.config["model"] for r in runs} == {"cat", "corelnet_t_cat", "esbn_cat"} and len(runs) == (3 + 7) * 3 * 3
    assert len({r.key for r in runs}) == len(runs)
    assert [r.key.rsplit("-", 1)[0] for r in ex.sensory_runs("quick")] == [
        "sensory/rmts3-cat-s0",
        "sensory/game-row_matching-cat-s0",
    ]
    un = {
        (r.config["task"], r.config["seed"]): r.config
        for r in ex.unseen_runs("full")
        if r.config["model"] == "corelnet"
    }
    c = runs[0].config  # the relational-only side is figure unseen's, same set-up
    assert {k: v for k, v in c.items() if k != "model"} == {
        k: v for k, v in un[(c["task"], c["seed"])].items() if k != "model"
    }
    assert len(ex.sensory_runs("quick")) == 2
    net = ex._game_model("cat", 4)
    assert net.variant == "cat" and net(torch.randn(3, 9, 128)).shape == (3, 4)
    for model in ("corelnet_t_cat", "esbn_cat"):
        assert ex._game_model(model, 4).cat and ex._game_model(model, 4)(torch.randn(3, 9, 128)).shape == (3, 4)
    with pytest.raises(ValueError, match="model"):
        ex._game_model("mlp", 4)


def test_spurious_tables_average_over_models_for_fig_5_6_and_over_seeds_for_fig_c3():
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result

    col = [
        Result("s", {"task": "dist3", "model": m, "encoder": "random", "seed": s}, {"ood": a, "iid": b})
        for m, s, a, b in (
            ("corelnet", 0, 0.3, 0.5),
            ("corelnet", 1, 0.4, 0.5),
            ("esbn", 0, 0.6, 0.9),
            ("esbn", 1, 0.6, 0.7),
        )
    ]
    assert ex.spurious_table(col) == {("dist3", "random"): pytest.approx((0.475, 0.65))}
    by_model = ex.spurious_by_model(col)
    assert by_model[("dist3", "corelnet", "random")] == pytest.approx((0.35, 0.5))
    assert by_model[("dist3", "esbn", "random")] == pytest.approx((0.6, 0.8))
    rows = ex.spurious_model_table(col)
    assert [(r["model"], r["encoder"]) for r in rows] == [
        (ex.CURVE_MODELS["corelnet"], ex.ENCODERS["random"]),
        (ex.CURVE_MODELS["esbn"], ex.ENCODERS["random"]),
    ]
    assert rows[1]["OOD accuracy"] == pytest.approx(0.6) and rows[1]["training shapes"] == pytest.approx(0.8)


def test_sensory_table_pairs_each_model_with_its_cat_version(monkeypatch):
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    un = [
        Result("u", {"task": t, "model": m, "seed": 0}, {"ood": a})
        for t, m, a in (
            ("rmts3", "corelnet", 1.0),
            ("rmts3", "esbn", 0.8),
            ("same_diff6", "corelnet", 0.9),
            ("rmts3", "mlp", 0.5),
        )
    ]
    gm = [Result("g", {"task": "same", "model": "corelnet", "seed": 0}, {"hexominoes": 0.9, "stripes": 0.7})]
    sens = [
        Result("s", {"task": "rmts3", "model": m, "seed": s}, {"ood": a})
        for m, s, a in (("cat", 0, 0.5), ("cat", 1, 0.7), ("esbn_cat", 0, 0.4), ("corelnet_t_cat", 0, 0.3))
    ]
    sens.append(Result("s", {"task": "same", "model": "cat", "seed": 0}, {"hexominoes": 0.5, "stripes": 0.3}))
    rows = {r["panel"]: r for r in ex.sensory_table(sens, un, gm)}
    # unseen: (CoRelNet, rmts3) and (ESBN, rmts3); same/diff 6 has no cat run, CoRelNet-T no relational-only run
    assert rows["unseen relations"]["models"] == "CoRelNet, ESBN" and rows["unseen relations"]["tasks"] == "rmts3"
    assert rows["unseen relations"]["relational only"] == pytest.approx(0.9)
    assert rows["unseen relations"]["relational + sensory"] == pytest.approx((0.6 + 0.4) / 2)
    assert rows["Relational Games"]["relational only"] == pytest.approx(0.8)  # mean of hexominoes and stripes
    assert rows["Relational Games"]["relational + sensory"] == pytest.approx(0.4)
    # a replay while figure games' full runs are owed: its quick runs are not set against full sensory ones
    col = lambda results, scale: Collected("corelnet", "f", "replay", scale, results, "cpu")  # noqa: E731
    full, quick = (col(sens, "full"), col(un, "full"), col(gm, "quick")), (col(sens, "quick"), col(un, "quick"))
    assert [r["panel"] for r in ex.sensory_table(*full)] == ["unseen relations"]
    assert ex.sensory_table(*full)[0] == rows["unseen relations"]
    assert [r["panel"] for r in ex.sensory_table(*quick, col(gm, "quick"))] == list(rows)
    with pytest.raises(ValueError, match="no panel"):
        ex.show_sensory(col(sens, "full"), col(un, "quick"), col(gm, "quick"))
    shown = {}
    monkeypatch.setattr("lscnb.plot.show", lambda fig, *cols, **kw: shown.update(panels=len(fig.axes), **kw))
    ex.show_sensory(*full)
    assert shown["panels"] == 1 and shown["note"].endswith(
        "Left out here: Relational Games, whose relational-only runs are at quick scale and the relational + "
        "sensory ones at full scale."
    )


def test_show_curves_marks_quick_points_beside_full_ones(monkeypatch):
    """Fig. C.10 in a replay: figure mcurve_unseen's quick points (m = 0, 50) on the curve that figure unseen's full
    run ends (m = 94) are drawn hollow, and the note says so; at one scale no point is hollow."""
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    def col(ms, scale):
        config = {"task": "rmts3", "model": "corelnet", "seed": 0}
        runs = [Result("r", {**config, "m": m}, {"ood": 0.9, "objects": "generated"}) for m in ms]
        return Collected("corelnet", "f", "replay", scale, runs, "cpu")

    shown = {}

    def show(fig, *cols, **kw):
        lines = fig.axes[0].get_lines()
        shown.update(kw, hollow=[ln.get_xdata().tolist() for ln in lines if ln.get_markerfacecolor() == "white"])

    monkeypatch.setattr("lscnb.plot.show", show)
    ex.show_curves(col([0, 50], "quick"), col([94], "full"), title="C.10")
    assert shown["hollow"] == [[0, 50]] and shown["note"].endswith(
        "Hollow markers: points at quick (toy) scale, beside paper-scale ones."
    )
    ex.show_curves(col([0, 50], "quick"), col([94], "quick"), title="C.10")
    assert shown["hollow"] == [] and "Hollow" not in shown["note"]
    other = Collected(
        "corelnet",
        "g",
        "quick",
        "quick",
        [Result("r", {"task": "same_diff6", "model": "mlp", "m": 98, "seed": 0}, {"ood": 0.5})],
        "cpu",
    )
    rows = ex.curve_rows(col([94, 0], "quick"), other)  # every m a column, sorted; blank where a series has no run
    assert [list(r) for r in rows] == [["task", "model", "m = 0", "m = 94", "m = 98"]] * 2
    assert (rows[0]["m = 98"], rows[1]["m = 0"], rows[1]["m = 98"]) == ("", "", 0.5)


def test_show_curves_legend_names_a_series_of_one_panel(monkeypatch):
    """Fig. C.8: ESBN has figure encoder's same/different point only, in the first panel; the legend (in the last
    panel) names it too."""
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    def res(task, model, m):
        config = {"task": task, "model": model, "m": m, "seed": 0, "encoder": "random"}
        return Result("r", config, {"ood": 1.0, "objects": "generated"})

    runs = [res(t, "corelnet", m) for t in ("same_different", "rmts") for m in (0, 50)]
    col = Collected("corelnet", "f", "full", "full", [*runs, res("same_different", "esbn", 98)], "cpu")
    legend = {}
    monkeypatch.setattr("lscnb.plot.show", lambda fig, *a, **k: legend.update(t=fig.axes[-1].get_legend().get_texts()))
    ex.show_curves(col, title="C.8")
    assert [t.get_text() for t in legend["t"]] == ["CoRelNet, random encoder", "ESBN, random encoder"]


def test_cat_curves_fig_c7():
    from lscnb.experiments import corelnet as ex

    full = ex.mcurve_cat_runs("full")
    assert {r.config["model"] for r in full} == set(ex.CAT_PAIRS.values())
    # a declared subset: ESBN + sensory on same/different only, the others on the four tasks
    assert {r.config["task"] for r in full if r.config["model"] == "esbn_cat"} == {"same_different"}
    assert {r.config["task"] for r in full if r.config["model"] == "cat"} == set(TASKS)
    assert len(full) == (2 * 4 + 1) * 4 * 3
    assert len({r.key for r in full}) == len(full)
    mc = {(r.config["task"], r.config["m"], r.config["seed"]): r.config for r in ex.mcurve_runs("full")}
    c = full[0].config  # the relational-only curve is figure mcurve's, same set-up
    assert {k: v for k, v in c.items() if k != "model"} == {
        k: v for k, v in mc[(c["task"], c["m"], c["seed"])].items() if k != "model"
    }
    assert [(r.config["model"], r.config["m"]) for r in ex.mcurve_cat_runs("quick")] == [
        ("cat", 0),
        ("cat", 98),
        ("corelnet_t_cat", 0),
        ("corelnet_t_cat", 98),
    ]


def test_appendix_variants_figs_c1_c2():
    from lscnb.data.relational import APPENDIX_UNSEEN, IDENTITY4, distribution_of_n, identity_rules4_flipped
    from lscnb.experiments import corelnet as ex

    tr, _ = split(89)
    g = torch.Generator().manual_seed(0)
    for _name, (fn, T, classes) in APPENDIX_UNSEEN.items():
        for phase in ("train", "test"):
            seq, y = fn(tr, 200, g, phase=phase)
            assert seq.shape == (200, T) and int(y.max()) < classes and set(seq.unique().tolist()) <= set(tr.tolist())
    # restricted distribution-of-10: training permutations keep the first 7 objects' set, test ones never do
    for phase, keeps in (("train", True), ("test", False)):
        seq, y = distribution_of_n(tr, 300, g, phase=phase)
        head = [set(s[:7].tolist()) == set(s[10:17].tolist()) for s in seq]
        assert all(h == keeps for h in head), phase
        assert all(
            int(s[19 + int(l)]) in s[:10].tolist() and int(s[19 + int(l)]) not in s[10:19].tolist()
            for s, l in zip(seq, y)
        )
    seq, _ = identity_rules4_flipped(tr, 100, g, phase="train", missing=True)
    assert not any(
        s[0] == s[3] and len(set(s[:4].tolist())) == 3 and s[0] != s[1] and s[1] != s[2] and s[0] != s[2]
        for s in seq[:, :4]
    )  # no abca
    with pytest.raises(ValueError, match="phase"):
        identity_rules4_flipped(tr, 4, g, phase="val")
    with pytest.raises(ValueError, match="n"):
        distribution_of_n(tr, 4, g, n=3)
    runs = ex.variant_runs("full")
    assert len(runs) == 4 * 5 * 3 and len({r.key for r in runs}) == len(runs)  # Fig. 5.5's six models but ESBN
    assert len(IDENTITY4["test"]) == 3


def test_corelnet_nhid_fig_c5_parameter_counts():
    from lscnb.experiments import corelnet as ex
    from lscnb.models.relational import esbn_count, nhid_count, nhid_width

    table = {(2, 2): 1910760, (6, 2): 1910754, (9, 4): 1911784, (9, 2): 1910754, (13, 6): 1912808}  # Table C.3
    assert {k: nhid_count(*k) for k in table} == table
    assert abs(nhid_count(6, 2) - 1910760) == 6  # same/diff 6's printed count
    assert all(abs(nhid_count(*k) - esbn_count(*k)) <= 3 for k in table)
    with pytest.raises(ValueError, match="T"):
        nhid_width(0, 2)
    net = ex.make_model("corelnet_nhid", "identity_rules4")
    assert net.mlp[0].out_features == nhid_width(13, 6) == 17489
    runs = ex.nhid_runs("full")
    assert len(runs) == 8 * 3 and {r.config["model"] for r in runs} == {"corelnet_nhid"}
    quick = ex.nhid_runs("quick")
    assert [(r.config["task"], r.config["m"], r.config["lr"]) for r in quick] == [("identity_rules4", 94, 2e-3)]
    with pytest.raises(ValueError, match="model"):
        ex.build("corelnet_wide", 2, 2)


def test_nhid_table_fig_c5():
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result

    nh = [
        Result("n", {"task": "identity_rules4", "model": "corelnet_nhid", "m": 94, "seed": s}, {"ood": a})
        for s, a in ((0, 1.0), (1, 0.9))
    ]
    un = [
        Result("u", {"task": "identity_rules4", "model": m, "m": 94, "seed": 0}, {"ood": a})
        for m, a in (("corelnet", 0.99), ("mlp", 0.2))
    ]
    mc = [
        Result("c", {"task": "identity_rules4", "model": "esbn", "m": 0, "seed": 0}, {"ood": 1.0})
    ]  # not the extreme m
    (row,) = ex.nhid_table(nh, un, mc)
    assert row["task"] == "identity_rules4 (m = 94)" and row["chance"] == pytest.approx(1 / 6)
    assert row["CoRelNet-nhid"] == pytest.approx(0.95) and row["CoRelNet"] == pytest.approx(0.99)
    assert np.isnan(row["ESBN"]) and row["CoRelNet-nhid parameters"] == 1912808 and row["ESBN parameters"] == 1912809
    # a replay: figure nhid and its reference unseen at full scale, mcurve's full runs owed (quick, and with a run of
    # CoRelNet at the extreme m): mcurve's quick runs are neither pooled with the full ones nor shown beside them
    from lscnb.sweep import Collected

    col = lambda results, scale: Collected("corelnet", "f", "replay", scale, results, "cpu")  # noqa: E731
    mc94 = [
        Result("c", {"task": "identity_rules4", "model": m, "m": 94, "seed": 0}, {"ood": a})
        for m, a in (("corelnet", 0.5), ("esbn", 0.4))
    ]
    (row,) = ex.nhid_table(col(nh, "full"), col(un, "full"), col(mc94, "quick"))
    assert row["CoRelNet"] == pytest.approx(0.99) and np.isnan(row["ESBN"])
    (row,) = ex.nhid_table(col(nh, "quick"), col(un, "quick"), col(mc94, "quick"))  # one scale: all of them
    assert row["CoRelNet"] == pytest.approx((0.99 + 0.5) / 2) and row["ESBN"] == pytest.approx(0.4)
    with pytest.raises(ValueError, match="would pool quick and full runs"):  # the tables that pool runs refuse to
        ex.accuracy_table(col(un, "full"), col(mc94, "quick"))
    with pytest.raises(ValueError, match="would pool quick and full runs"):
        ex.series_table(col(un, "full"), col(mc94, "quick"))
    sd = [Result("c", {"task": "same_different", "model": "corelnet", "m": 98, "seed": 0}, {"ood": 1.0})]
    with pytest.raises(ValueError, match="would pool quick and full runs"):
        ex.ablation_average(col(sd, "full"), col(sd, "quick"))


def test_figs_5_1_and_5_2_are_drawn_from_the_generators_and_the_model():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from lscnb.experiments import corelnet as ex

    tr, _ = split(95)
    g = torch.Generator().manual_seed(0)
    for task, (fn, T, _classes) in TASKS.items():
        assert sum(ex.LAYOUT[task]) == T
        seq, y = fn(tr, 200, g)
        for s, label in zip(seq.tolist(), y.tolist()):
            pos = ex.answer_positions(task, label)
            if task == "rmts":  # the framed pair has the source pair's relation, the other pair not
                other = [p for p in range(2, 6) if p not in pos]
                assert (s[pos[0]] == s[pos[1]]) == (s[0] == s[1]) != (s[other[0]] == s[other[1]])
            elif task == "identity_rules":  # the framed option gives row 2 row 1's pattern
                row2 = [s[3], s[4], s[pos[0]]]
                assert [s[i] == s[j] for i, j in ((0, 1), (1, 2), (0, 2))] == [
                    row2[i] == row2[j] for i, j in ((0, 1), (1, 2), (0, 2))
                ]
            elif task == "dist3":  # the framed option completes row 2 to a permutation of row 1
                assert sorted([s[3], s[4], s[pos[0]]]) == sorted(s[:3])
        fig, ax = plt.subplots()
        ex.draw_trial(ax, load_objects().images, seq[0], task, int(y[0]))
        assert len(ax.patches) == len(ex.answer_positions(task, int(y[0]))) and len(ax.images) == T
        plt.close(fig)
    ex.show_bottleneck(load_objects(), "rmts")


def test_fig_5_4_three_model_average():
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result

    def res(model, task, m, ood, **extra):
        return Result("r", {"task": task, "model": model, "m": m, "seed": 0, **extra}, {"ood": ood})

    mc = [
        res("corelnet", "same_different", 98, 1.0),
        res("esbn", "same_different", 98, 0.9),
        res("corelnet", "same_different", 0, 0.2),  # not the extreme split: ignored
        res("corelnet_t", "rmts", 95, 0.8),
    ]
    mk = [res("cat", "same_different", 98, 0.5), res("esbn_cat", "same_different", 98, 0.7)]
    ms = [res("asym_corelnet_t", "rmts", 95, 0.6)]
    me = [
        res("corelnet", "dist3", 95, 0.9, encoder="random"),
        res("corelnet", "dist3", 95, 0.8, encoder="learned"),
        res("esbn", "dist3", 95, 0.7, encoder="random"),
    ]  # no learned ESBN: not paired
    rows = {r["panel"]: r for r in ex.ablation_average(mc, mk, ms, me)}
    left = rows["relational only vs relational + sensory"]
    assert left["models"] == "CoRelNet, ESBN" and left["relational only"] == pytest.approx(0.95)
    assert left["relational + sensory"] == pytest.approx(0.6)
    mid = rows["symmetric vs asymmetric"]
    assert (mid["models"], mid["tasks"], mid["symmetric"], mid["asymmetric"]) == ("CoRelNet-T", "rmts", 0.8, 0.6)
    enc = rows["random encoder vs learned encoder"]
    assert enc["models"] == "CoRelNet" and (enc["random encoder"], enc["learned encoder"]) == (0.9, 0.8)
    assert ex.ablation_average([]) == []


def test_fig_5_4_leaves_out_the_cells_whose_sides_come_at_two_scales(monkeypatch):
    """A replay with figure mcurve committed at full scale and mcurve_cat, mcurve_sym, mcurve_encoder owed (quick):
    the relational-only and symmetric sides are full, their ablations quick, so those two panels are left out and
    the note says so; the encoder panel (both sides quick) stays; no panel left is an error."""
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    def res(model, task, m, ood, **extra):
        return Result("r", {"task": task, "model": model, "m": m, "seed": 0, **extra}, {"ood": ood, "objects": "x"})

    col = lambda results, scale: Collected("corelnet", "f", "replay", scale, results, "cpu")  # noqa: E731
    mc = col([res("corelnet", "same_different", 98, 1.0), res("corelnet_t", "rmts", 95, 0.8)], "full")
    mk, ms = (
        col([res("cat", "same_different", 98, 0.5)], "quick"),
        col([res("asym_corelnet_t", "rmts", 95, 0.6)], "quick"),
    )
    me = col([res("corelnet", "dist3", 95, 0.9, encoder=e) for e in ("random", "learned")], "quick")
    assert [r["panel"] for r in ex.ablation_average(mc, mk, ms, me)] == ["random encoder vs learned encoder"]
    shown = {}
    monkeypatch.setattr("lscnb.plot.show", lambda fig, *cols, **kw: shown.update(kw))
    ex.show_ablation_average(mc, mk, ms, me)
    assert "Left out of relational only vs relational + sensory: 1 (model, task) cell(s)" in shown["note"]
    assert (
        "Left out of symmetric vs asymmetric: 1" in shown["note"]
        and "random encoder vs learned" not in (shown["note"].split("Left out")[-1])
    )
    quick = [col(list(c), "quick") for c in (mc, mk, ms)]
    assert len(ex.ablation_average(*quick, me)) == 3  # all at one scale: the three panels
    with pytest.raises(ValueError, match="no panel of Fig. 5.4"):
        ex.show_ablation_average(mc, mk, ms)


def test_fig_5_4_reads_figure_ablation_beside_full_curves():
    """A replay with figure mcurve at full scale and the ablation curves owed: figure ablation's full runs (CoRelNet's
    cat and asym at the extreme split) pair with mcurve's CoRelNet in place of the quick curves, which would pair
    nothing (and pool quick with full); its quick runs (300 steps) never join the curves' (60). A run that figure
    ablation and a curve share counts once."""
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result
    from lscnb.sweep import Collected

    def res(model, task, m, ood, seed=0, **extra):
        return Result("r", {"task": task, "model": model, "m": m, "seed": seed, **extra}, {"ood": ood, "objects": "x"})

    col = lambda results, scale: Collected("corelnet", "f", "replay", scale, results, "cpu")  # noqa: E731
    runs = {
        "mc": [res("corelnet", "same_different", 98, 1.0), res("esbn", "same_different", 98, 0.9)],
        "abl": [res("cat", "same_different", 98, 0.6), res("asym", "same_different", 98, 0.7)],
        "mk": [res("cat", "same_different", 98, 0.3), res("esbn_cat", "same_different", 98, 0.2)],
        "ms": [res("asym", "same_different", 98, 0.1, seed=1)],
        "en": [res("corelnet", "dist3", 95, 0.9, encoder=e) for e in ("random", "learned")],
    }
    at = lambda **scales: [col(runs[k], scales.get(k, "quick")) for k in runs]  # noqa: E731
    rows = {r["panel"]: r for r in ex.ablation_average(*ex.ablation_sources(*at(mc="full", abl="full")))}
    assert set(rows) == {
        "relational only vs relational + sensory",
        "symmetric vs asymmetric",
        "random encoder vs learned encoder",
    }
    assert rows["relational only vs relational + sensory"]["relational + sensory"] == pytest.approx(0.6)
    assert (rows["symmetric vs asymmetric"]["models"], rows["symmetric vs asymmetric"]["asymmetric"]) == (
        "CoRelNet",
        0.7,
    )
    quick = ex.ablation_sources(*at())  # a quick profile: the curves only, at their 60 steps
    assert [c.results for c in quick] == [runs[k] for k in ("mc", "mk", "ms", "en")]
    rows = {r["panel"]: r for r in ex.ablation_average(*quick)}
    assert rows["relational only vs relational + sensory"]["relational + sensory"] == pytest.approx(0.25)
    full = ex.ablation_sources(*at(mc="full", abl="full", mk="full", ms="full"))  # abl's runs are mk's and ms's too
    mid = {r["panel"]: r for r in ex.ablation_average(*full, col([res("asym", "same_different", 98, 0.7)], "full"))}
    assert mid["symmetric vs asymmetric"]["asymmetric"] == pytest.approx(
        (0.7 + 0.1) / 2
    )  # the shared run once, not 0.5


def test_encoder_fig_5_4_right_declared_subset():
    """Figure encoder's full runs: CoRelNet and CoRelNet-T on the four tasks, ESBN on same/different only (a declared
    subset), each with both encoders at the extreme split; figure ablation reads them for its encoder panel."""
    from lscnb.experiments import corelnet as ex
    from lscnb.experiments.corelnet.common import EXTREME_M

    full = ex.FIGURES["encoder"]("full")
    tasks = lambda model: {r.config["task"] for r in full if r.config["model"] == model}  # noqa: E731
    assert tasks("corelnet") == tasks("corelnet_t") == set(TASKS) and tasks("esbn") == {"same_different"}
    assert {r.config["encoder"] for r in full} == {"random", "learned"} and len(full) == (2 * 4 + 1) * 2 * 3
    assert all(r.config["m"] == EXTREME_M[r.config["task"]] for r in full)
    assert "encoder" in ex.FIGURES["ablation"].reads and "mcurve_encoder" not in ex.FIGURES["ablation"].reads


def test_gap_of_fig_5_5_right_averages_each_encoder_at_the_extreme_split():
    """The status page's gap for Fig. C.11: each encoder's mean OOD accuracy at each series's largest m, over tasks,
    models and seeds; smaller m do not count."""
    from lscnb.experiments import corelnet as ex
    from lscnb.results import Result

    def r(task, model, enc, m, seed, ood):
        return Result("c", {"task": task, "model": model, "encoder": enc, "m": m, "seed": seed}, {"ood": ood})

    col = [
        r("rmts3", "corelnet", "random", 94, 0, 1.0),
        r("rmts3", "corelnet", "random", 94, 1, 0.8),
        r("rmts3", "corelnet", "random", 0, 0, 0.1),  # not the extreme split
        r("same_diff6", "corelnet_t", "random", 98, 0, 0.6),
        r("rmts3", "corelnet", "learned", 94, 0, 0.5),
        r("same_diff6", "corelnet_t", "learned", 98, 0, 0.7),
    ]
    assert ex.gap_unseen_encoder(col) == (
        "mean OOD accuracy at the extreme split, random encoder 75.0%, learned encoder 60.0%; the thesis prints bars "
        "only (Fig. 5.5 right)"
    )
