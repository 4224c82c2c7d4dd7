"""Relevancy screening: the linearised propagation model (Thms 4.4.2-4.4.3) and the RelRNN memory."""

import types
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from lscnb.experiments import relevancy as _chapter
from lscnb.models.relevancy import RelRNN
from lscnb.theory import relevancy as theory


def test_four_patterns_at_k_1000():
    g = {p: theory.propagation(p, 0.9, 1001)[1000] for p in theory.PATTERNS}
    assert g["none"] == pytest.approx(1.7e-46, rel=0.05)
    assert g["uniform"] > 1e-3 and g["sparse"] / g["window"] > 1e15
    assert g["sparse"] == pytest.approx(theory.sparse_plateau(0.9, 5), abs=1e-3)
    assert theory.sparse_plateau(0.9, 20) == pytest.approx(0.2041, abs=1e-4)


@pytest.mark.parametrize(
    "lam,combine", [(0.3, "mean"), (0.6, "mean"), (0.9, "mean"), (0.1, "sum"), (0.3, "sum"), (0.45, "sum")]
)
def test_uniform_attention_power_law(lam, combine):
    a, b = (400, 4000) if combine == "mean" else (800, 8000)
    g = theory.propagation("uniform", lam, b + 1, combine=combine)
    slope = np.log(g[b] / g[a]) / np.log(b / a)
    assert slope == pytest.approx(theory.uniform_exponent(lam, combine), abs=0.02)
    assert theory.uniform_exponent(lam, combine) >= -1


def test_memory_is_bounded_and_scores_pick_the_top():
    torch.manual_seed(0)
    m = RelRNN(3, 8, nu=4, rho=3)
    _, attn = m(torch.randn(2, 30, 3), return_attention=True)
    assert all(idx.shape[1] <= 7 for idx, _ in attn)
    assert all(torch.allclose(a.sum(-1), torch.ones(2)) for _, a in attn)
    # streaming top-rho against brute force on hand-made scores
    slots, idx, score = torch.zeros(1, 3, 2), torch.full((1, 3), -1), torch.full((1, 3), -float("inf"))
    scores = [0.5, 2.0, 0.1, 1.5, 3.0, 0.2]
    for i, sc in enumerate(scores):
        slots, idx, score = m._admit(slots, idx, score, torch.zeros(1, 2), i, torch.tensor([sc]))
    assert sorted(idx[0].tolist()) == sorted(np.argsort(scores)[-3:].tolist())


def test_gradient_reaches_a_stored_state():
    torch.manual_seed(0)
    m = RelRNN(4, 16, nu=5, rho=5).double()
    norms = {}
    for T in (100, 400):
        x = torch.randn(2, T, 4, dtype=torch.float64)
        for att in (True, False):
            hs = []
            m(x, pin=(0,), attention=att, hidden=hs, macro=True)[:, -1].sum().backward()
            norms[(T, att)] = float(hs[0].grad.norm())
            m.zero_grad()
    assert norms[(100, True)] / norms[(400, True)] < 10
    assert norms[(400, False)] < 1e-5 * norms[(400, True)]


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="pattern"):
        theory.propagation("dense", 0.9, 10)
    with pytest.raises(ValueError, match="nu"):
        RelRNN(3, 4, nu=0)


SHRINK = _chapter.SMOKE  # the chapter's smoke-test shrink (lscnb.experiments.relevancy)


def _shrunk(name: str):
    """The first full-profile run of figure ``name`` with its sizes cut to seconds."""
    from lscnb.experiments import relevancy as ex
    from lscnb.sweep import Run

    run = ex.FIGURES[name]("full")[0]
    cfg = {**run.config, **{k: v for k, v in SHRINK.items() if k in run.config}}
    if name == "memory":
        cfg.update(T=12, batch=2, width=8)
    return Run(run.chapter, run.figure, run.name, run.fn, cfg)


DETERMINISTIC = {
    "propagation": "closed-form recursion, no random draw",
    "memory": "byte and state counts, which depend on the sizes only, not on weights or data",
}


@pytest.mark.parametrize("name", ["reach", "copy", "denoise", "dense", "screening", "buffer"])
def test_seed_reaches_every_figure_that_trains_or_samples(name):
    from seedcheck import assert_seed_reaches

    assert_seed_reaches(_shrunk(name))


def test_every_figure_is_seed_tested_or_deterministic():
    from lscnb.experiments import relevancy as ex

    tested = {"reach", "copy", "denoise", "dense", "screening", "buffer"}
    assert tested | set(DETERMINISTIC) == set(ex.FIGURES) and not tested & set(DETERMINISTIC)


# ----------------------------------------------------------------------------------- models, tasks, memory
from lscnb.memprof import saved_tensor_bytes  # noqa: E402
from lscnb.models.relevancy import MODELS, MemRNN, Tagger, attention_matrix, hidden_gradient_norms  # noqa: E402


@pytest.mark.parametrize("kind", MODELS)
def test_taggers_give_logits_and_gradients_at_every_step(kind):
    torch.manual_seed(0)
    m = Tagger(kind, 5, 8, 4, nu=3, rho=2)
    x, y = torch.randn(2, 12, 5), torch.randint(0, 4, (2, 12))
    assert m(x).shape == (2, 12, 4)
    g = hidden_gradient_norms(m, x, y, last=3)
    assert g.shape == (2, 12) and torch.isfinite(g).all() and (g[:, -1] > 0).all()


def test_empty_slots_are_masked_and_memrnn_attends_everything():
    torch.manual_seed(0)
    m = RelRNN(3, 6, nu=2, rho=4)
    _, attn = m(torch.randn(2, 5, 3), return_attention=True)
    for idx, a in attn:  # empty long-term slots (index -1) get exactly zero weight (score -inf before softmax)
        assert torch.all(a[idx < 0] == 0) and torch.allclose(a.sum(-1), torch.ones(2))
    full = MemRNN(3, 6)
    _, attn = full(torch.randn(1, 9, 3), return_attention=True)
    assert [i.shape[1] for i, _ in attn] == list(range(1, 10))  # step t attends h_0..h_t
    A = attention_matrix(attn, 9)
    assert torch.allclose(A.sum(1), torch.ones(9)) and torch.all(A.triu(1) == 0) and A[0, 0] == 1


def test_buffer_is_fifo_and_evicted_states_fill_free_slots_first():
    torch.manual_seed(0)
    m = RelRNN(2, 4, nu=3, rho=2)
    _, attn = m(torch.randn(1, 8, 2), return_attention=True)
    idx = [i[0].tolist() for i, _ in attn]
    assert idx[0] == [0, -1, -1]  # step 0: h_0 joins the buffer before the step attends
    assert idx[2] == [0, 1, 2, -1, -1]  # step 2: buffer h_0..h_2, slots empty
    assert idx[3] == [1, 2, 3, 0, -1]  # step 3: h_0 evicted into a free slot
    assert idx[4][:3] == [2, 3, 4] and sorted(idx[4][3:]) == [0, 1]


def test_relrnn_attention_memory_is_constant_in_T_and_full_attention_grows():
    for T in (20, 60):
        x = torch.randn(1, T, 3)
        rel, full = RelRNN(3, 4, nu=4, rho=3), MemRNN(3, 4)
        rel(x), full(x)
        assert max(rel.memory_trace) == 7 and max(full.memory_trace) == T
    b = {T: saved_tensor_bytes(lambda: MemRNN(3, 8)(torch.randn(2, T, 3)).sum())[0] for T in (40, 80)}
    r = {T: saved_tensor_bytes(lambda: RelRNN(3, 8, nu=4, rho=4)(torch.randn(2, T, 3)).sum())[0] for T in (40, 80)}
    assert b[80] / b[40] > 3 and r[80] / r[40] < 2.3


def test_saved_bytes_leave_out_a_dropped_branch_and_count_each_storage_once():
    """Only what the graph still holds when the pass returns counts: a branch whose result is dropped frees what it
    saved, and a later storage that reuses its address must not replace its size (the bytes were once not affine in
    the batch size, at random, because of the unread attention of a last step)."""
    w = torch.randn(64, 64, requires_grad=True)

    def pass_with_dropped_branch(drop: int):
        x = torch.randn(8, 64)
        for _ in range(drop):
            torch.tanh(torch.randn(drop, 64) @ w)  # saves a (drop, 64) input and a tanh output, then is dropped
        y = torch.tanh(x @ w)  # saves x (w needs no saving: x needs no gradient) and y
        return (y * y).sum()  # saves y twice (one storage)

    kept = saved_tensor_bytes(lambda: pass_with_dropped_branch(0))[0]
    assert kept == 4 * (8 * 64 + 8 * 64)
    assert all(saved_tensor_bytes(lambda: pass_with_dropped_branch(d))[0] == kept for d in (1, 8, 100))


def test_relevance_score_is_the_attention_received_in_the_buffer():
    torch.manual_seed(1)
    m = RelRNN(2, 4, nu=2, rho=1)
    _, attn = m(torch.randn(1, 6, 2), return_attention=True)
    # h_0 is in the buffer at steps 0 and 1; its score is the sum of the two weights it received there
    beta0 = float(attn[0][1][0, 0] + attn[1][1][0, 0])
    beta1 = float(attn[1][1][0, 1] + attn[2][1][0, 0])
    kept = attn[3][0][0, -1].item()  # after h_1 is evicted (step 3), the slot holds the larger
    assert kept == (0 if beta0 >= beta1 else 1)


def test_bad_model_kind_and_task_name_themselves():
    from lscnb.experiments import relevancy as ex

    with pytest.raises(ValueError, match="kind"):
        Tagger("GRU", 3, 4, 2)
    with pytest.raises(ValueError, match="cell"):
        RelRNN(3, 4, cell="gru")
    with pytest.raises(ValueError, match="task"):
        ex.task_batch("adding", 2, 5, L=2, symbols=3, generator=torch.Generator())
    with pytest.raises(TypeError, match="fn"):
        saved_tensor_bytes(3)


# ----------------------------------------------------------------------------------- Table 4.3 (pMNIST, PTB)
@pytest.mark.parametrize("task,kind", [("pmnist", "RelRNN"), ("ptb", "RelLSTM"), ("ptb", "orthRNN")])
def test_dense_runs_report_test_scores_at_the_best_validation_step(task, kind):
    from lscnb.experiments import relevancy as ex

    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    run = [r for r in ex.dense_runs("full") if r.config["task"] == task and r.config["model"] == kind][0]
    assert run.config["lr"] == ex.DENSE_SIZES["full"][task]["lr"][kind]  # the thesis's rate, per model
    cfg = {
        **run.config,
        "steps": 4,
        "eval_every": 2,
        "width": 8,
        "batch": 4,
        "real_only": False,
        "train_tokens": 3000,
        "valid_tokens": 300,
        "test_tokens": 300,
        "bptt": 10,
        "embedding": 4,
        "n_train": 40,
        "n_valid": 20,
        "n_test": 20,
        "pool": 7,
    }
    out = ex.dense_run(cfg, ctx)
    assert list(out["eval_step"]) == [2, 4] and not out["diverged"]
    best = int(np.argwhere(out["eval_step"] == out["best_step"])[0, 0])
    assert out["test_acc"] == out["eval_test_acc"][best]
    if task == "ptb":
        assert 0 < out["test_bpc"] < 8 and out["unigram_bits"] < np.log2(50)
    if kind.startswith("Rel"):
        A = out["attention"]
        assert A.shape[0] == A.shape[1] and np.allclose(A[1:].sum(1), 1, atol=1e-5)


@pytest.mark.parametrize("task", ["pmnist", "ptb"])
def test_the_plan_counts_the_steps_a_dense_run_takes(task, monkeypatch):
    """``steps=None``: a run takes its epochs of the training split, and ``dense_counts`` (what the plan times
    against) says as many; at full scale 200 epochs of 500 batches (pMNIST) and 100 epochs of the whole PTB text."""
    from lscnb.experiments import relevancy as ex
    from lscnb.experiments.relevancy import dense

    full = next(r.config for r in ex.dense_runs("full") if r.config["task"] == task)
    text = types.SimpleNamespace(train=torch.zeros(5_000_000, dtype=torch.long))
    monkeypatch.setattr(dense, "load_ptb", lambda *a, **k: text)  # PTB's size, without its files
    assert ex.dense_counts(full) == {"steps": 200 * 500 if task == "pmnist" else 100 * (5_000_000 // (128 * 150))}
    assert ex.dense_counts({**full, "steps": 7}) == {}
    if task == "ptb":  # a cut longer than the text stops at its end, as the run does; a shorter one is its length
        assert ex.dense_counts({**full, "train_tokens": 9_000_000}) == ex.dense_counts(full)
        assert ex.dense_counts({**full, "train_tokens": 192_000}) == {"steps": 100 * 10}
    monkeypatch.undo()
    cfg = {**full, "epochs": 2, "eval_every": 100, "width": 8, "batch": 4, "real_only": False, "embedding": 4}
    cfg.update(train_tokens=300, valid_tokens=100, test_tokens=100, bptt=10, n_train=12, n_valid=8, n_test=8, pool=7)
    ctx = types.SimpleNamespace(device="cpu", seed=0, checkpoint=None, progress=False)
    assert ex.dense_run(cfg, ctx)["steps"] == ex.dense_counts(cfg)["steps"] == (6 if task == "pmnist" else 14)


def test_dense_table_puts_ours_beside_the_thesis():
    from lscnb.experiments import relevancy as ex
    from lscnb.results import Result

    col = [
        Result("k", {"task": "ptb", "model": "RelRNN"}, {"test_bpc": 1.53, "test_acc": 0.6}),
        Result("k", {"task": "pmnist", "model": "RelRNN"}, {"test_acc": 0.9}),
    ]
    rows = {r["model"]: r for r in ex.dense_rows(col)}
    assert list(rows) == [{"orth-RNN": "orthRNN"}.get(m, m) for m, *_ in ex.TABLE_4_3]
    r = rows["RelRNN"]
    assert (r["PTB BPC thesis"], r["PTB BPC ours"], r["PTB BPC gap"]) == ("1.43", "1.53", "+0.10")
    assert (r["PTB acc. ours"], r["PTB acc. gap"], r["pMNIST acc. gap"]) == ("60%", "-9.0", "-2.8")
    assert rows["SAB"]["PTB BPC ours"] == "–" and rows["SAB"]["PTB BPC thesis"] == "1.37"


def test_block_mean_and_bad_task():
    from lscnb.experiments import relevancy as ex

    A = np.arange(16.0).reshape(4, 4)
    assert ex.block_mean(A, 4) is not None and np.array_equal(ex.block_mean(A, 4), A)
    assert ex.block_mean(A, 2).tolist() == [[5.0, 9.0], [21.0, 25.0]]  # rows averaged, columns summed
    P = np.tril(np.ones((9, 9)))
    P /= P.sum(1, keepdims=True)
    assert np.allclose(ex.block_mean(P, 3).sum(1), 1)
    with pytest.raises(ValueError, match="task"):
        ex.dense_run({"task": "imdb", "model": "RNN", "seed": 0}, types.SimpleNamespace(device="cpu"))
    with pytest.raises(ValueError, match="size"):
        ex.block_mean(A, 0)


# ----------------------------------------------------------------------------------- Fig. B.1 (nu / rho, linear)
def test_screening_keeps_the_events_iff_rho_covers_them():
    events = [30, 70, 110, 150]
    g = {rho: theory.screened_gradients(200, events, nu=6, rho=rho, lam=0.8) for rho in (2, 8)}
    assert all(len(g[r]["stored"]) <= r and g[r]["attended"].max() <= 6 + r for r in g)
    assert set(events) <= set(g[8]["stored"]) and len(set(events) & set(g[2]["stored"])) == 2
    assert g[2]["grad"][events].min() < 1e-8 < 0.1 < g[8]["grad"][events].min()
    assert 0.5 < g[8]["grad"][-1] < 1  # L = s_{T-1} = (h_{T-1} + c)/2, c attends h_{T-1} too
    # a buffer of one and no long-term set: s_u = (h_u + h_u)/2 = h_u, the plain recurrence, lam^k back from the end
    plain = theory.screened_gradients(50, [], nu=1, rho=0, lam=0.8, boost=0.0)["grad"]
    assert np.allclose(plain, 0.8 ** np.arange(49, -1, -1), rtol=1e-12)


def test_screening_gradients_match_autograd():
    """Reverse accumulation against autograd through the same recursion: h_u = lam s_{u-1} + delta_u, and
    dL/d delta_u = dL/dh_u; the memory sets are rebuilt by an independent loop with the same rule."""
    T, nu, rho, lam, events = 40, 4, 2, 0.9, [5, 12, 30]
    delta = torch.zeros(T, dtype=torch.float64, requires_grad=True)
    hs, s, buf, score, slots = [], None, [], {}, {}
    for u in range(T):
        h = (lam * s if s is not None else torch.tensor(1.0, dtype=torch.float64)) + delta[u]
        hs.append(h)
        buf.append(u)  # the code's order: h_u joins the buffer, the oldest leaves, then attend
        score[u] = 0.0
        if len(buf) > nu:
            old = buf.pop(0)
            sc = score.pop(old)
            low = min(slots, key=slots.get) if len(slots) == rho else None
            if low is None or sc > slots[low]:
                slots.pop(low, None)
                slots[old] = sc
        mem = buf + list(slots)
        a = torch.softmax(torch.tensor([4.0 if i in events else 0.0 for i in mem], dtype=torch.float64), 0)
        for i, w in zip(buf, a):
            score[i] += float(w)
        s = 0.5 * (h + sum(w * hs[i] for i, w in zip(mem, a)))
    s.backward()
    out = theory.screened_gradients(T, events, nu=nu, rho=rho, lam=lam)
    assert sorted(slots) == out["stored"]
    assert np.allclose(out["grad"], delta.grad.abs().numpy(), rtol=1e-10, atol=1e-300)


# ----------------------------------------------------------------------------------- golden: the authors' code
GOLDEN = Path(__file__).parent / "golden"
AUTHORS_COMMIT = "9ae06bbbc9fea3ee0b157b021aefd3da37f3363f"


def _golden(name: str, model) -> tuple:
    """lscnb's model with the authors' weights: h_t at every step and the weight gradients of sum_t <R_t, h_t>."""
    d = np.load(GOLDEN / f"relevancy_{name}.npz")
    assert str(d["commit"]) == AUTHORS_COMMIT
    model = model.double()
    t = {k[2:]: torch.tensor(d[k]) for k in d.files if k.startswith("w_")}
    with torch.no_grad():
        model.Wa.weight.copy_(t["Va.weight"])
        model.Ua.weight.copy_(t["Ua.weight"])
        model.va.copy_(t["v"][0])
        if model.cell == "lstm":
            n, gates = model.n, ("Wi", "Wf", "Wg", "Wo")  # lscnb's gate order i, f, g, o; the code's input [s, x]
            model.lstm.weight_hh.copy_(torch.cat([t[f"{g}.weight"][:, :n] for g in gates]))
            model.lstm.weight_ih.copy_(torch.cat([t[f"{g}.weight"][:, n:] for g in gates]))
            model.lstm.bias_ih.copy_(torch.cat([t[f"{g}.bias"] for g in gates]))
            model.lstm.bias_hh.zero_()
        else:
            model.U.weight.copy_(t["U.weight"])
            model.U.bias.copy_(t["U.bias"])
            model.V.weight.copy_(t["V.weight"])
    h = model(torch.tensor(d["x"]).transpose(0, 1))
    (h * torch.tensor(d["R"]).transpose(0, 1)).sum().backward()
    if model.cell == "lstm":
        lstm, n = model.lstm, model.n
        rows = [slice(k * n, (k + 1) * n) for k in range(4)]
        grads = {
            f"{g}.weight": torch.cat([lstm.weight_hh.grad[r], lstm.weight_ih.grad[r]], 1) for g, r in zip(gates, rows)
        }
        grads.update({f"{g}.bias": lstm.bias_ih.grad[k * n : (k + 1) * n] for k, g in enumerate(gates)})
    else:
        grads = {"U.weight": model.U.weight.grad, "U.bias": model.U.bias.grad, "V.weight": model.V.weight.grad}
    grads.update({"Va.weight": model.Wa.weight.grad, "Ua.weight": model.Ua.weight.grad, "v": model.va.grad[None]})
    h_err = float(np.abs(h.detach().transpose(0, 1).numpy() - d["h"]).max())
    g_err = max(float(np.abs(grads[k].numpy() - d[f"g_{k}"]).max() / np.abs(d[f"g_{k}"]).max()) for k in t)
    assert set(grads) == set(t)
    return h_err, g_err, d


@pytest.mark.parametrize("name", ["relrnn", "rellstm", "memrnn"])
def test_models_match_the_authors_code(name):
    """RelRNN, RelLSTM and MemRNN against the authors' classes: bhargav104/MemoryNets, commit 9ae06bbbc9fe
    (``RelMemRNN`` and ``MemRNN`` in RNN.py, tanh; ``RelLSTM`` in LSTM.py), float64, 4 units, nu = 3, rho = 2,
    14 steps, batch 2, weights of the authors' initialisation (alignment sharpened 3x so that long-term slots are
    replaced). Every h_t and every weight gradient of ``sum_t <R_t, h_t>`` agree to 1e-10: h_t joins the buffer
    (and the oldest state leaves it) before the step attends; the readout is h_t."""
    d0 = np.load(GOLDEN / f"relevancy_{name}.npz")
    nu, rho = int(d0["nu"]), int(d0["rho"])
    model = {
        "relrnn": lambda: RelRNN(3, 4, nu=nu, rho=rho),
        "memrnn": lambda: MemRNN(3, 4),
        "rellstm": lambda: RelRNN(3, 4, nu=nu, rho=rho, cell="lstm"),
    }[name]()
    h_err, g_err, d = _golden(name, model)
    assert h_err < 1e-10 and g_err < 1e-10, (h_err, g_err)
    if name != "memrnn":  # the code's slots were replaced: the test covers the streaming top-rho
        assert len(np.unique(d["long_ids"][:, :, 1])) > 2


def test_memory_bytes_measured_at_two_small_batches_extrapolate_exactly():
    """Fig. 4.2 (centre) at T >= 1600 is measured at batches 1 and 2 and extrapolated: the saved bytes are affine in
    the batch size, so the extrapolation equals the direct measurement, for every model."""
    from lscnb.config import Profile
    from lscnb.experiments.relevancy.memory import memory_run, memory_runs
    from lscnb.runs import RunContext

    cfg = dict(T=23, models=["RNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"], width=12, batch=7, nu=4, rho=3, seed=0)
    ctx = RunContext(Profile("full", "cpu"), "cpu", 0, None, False)
    direct, probed = memory_run(dict(cfg), ctx), memory_run(dict(cfg, probe_batches=[1, 2]), ctx)
    assert direct == probed and direct["MemRNN_saved_bytes"] > direct["RNN_saved_bytes"] > 0
    full = {r.config["T"]: r.config for r in memory_runs("full")}
    assert [T for T, c in full.items() if "probe_batches" in c] == [1600, 2000]


def test_only_the_shortest_training_length_is_tested_at_longer_ones():
    """Table 4.1 reads the copy runs at the shortest T at multiples of it, and Fig. 4.2 (left) the gradients of the
    denoise runs at the shortest T; every other training is tested at its own length only (Tables 4.2, B.2), which
    spares MemRNN's O(T^2) attention at T = 25,000. Committed runs keep their keys."""
    from lscnb.experiments.relevancy.common import TASK_SIZES
    from lscnb.experiments.relevancy.tasks import _train_runs

    s = TASK_SIZES["full"]
    copy, denoise = _train_runs("copy", "full"), _train_runs("denoise", "full")
    assert {r.config["T"] for r in copy if r.config["transfer"] != [1]} == {min(s["copy_T"])}
    assert all(r.config["transfer"] == s["transfer"] for r in copy if r.config["T"] == min(s["copy_T"]))
    assert all(r.config["transfer"] == [1] for r in denoise)
    assert {r.config["T"] for r in denoise if r.config["grad_T"]} == {min(s["denoise_T"])}
    assert not any(r.config["grad_T"] for r in copy)
    keys = {r.key for r in copy}
    assert {"copy/RNN-T100-s0-24a829ff03", "copy/orthRNN-T100-s0-6aa2ec374d", "copy/LSTM-T100-s0-cd3ba071ea"} <= keys


def test_memrnn_is_not_tested_past_its_longest_length(monkeypatch):
    """MemRNN trained at T = 4 and tested at 4 and 16 with a cap of 8: the longer test is left out (NaN, "not run" in
    Table 4.1), the shorter one is measured; RelRNN is measured at both."""
    from lscnb import config
    from lscnb.experiments.relevancy import tasks
    from lscnb.runs import RunContext

    monkeypatch.setattr(tasks, "MEMRNN_LONGEST", 8)
    cfg = dict(
        task="copy",
        T=4,
        L=2,
        symbols=3,
        width=8,
        batch=4,
        steps=2,
        lr=1e-3,
        nu=2,
        rho=2,
        eval_batch=4,
        transfer=[1, 4],
        grad_batch=2,
        grad_T=None,
        seed=0,
    )
    ctx = RunContext(config.resolve("quick"), "cpu", 0, None, False)
    mem, rel = (tasks.train_run({**cfg, "model": m}, ctx) for m in ("MemRNN", "RelRNN"))
    assert np.isfinite(mem["accuracy"][0]) and np.isnan(mem["accuracy"][1]) and np.isfinite(rel["accuracy"]).all()
    res = _Results([_Result({**cfg, "model": "MemRNN"}, mem), _Result({**cfg, "model": "RelRNN"}, rel)])
    rows = {r["model"]: r for r in tasks.transfer_rows(res)}
    assert rows["MemRNN"]["×4 ours (T=16)"] == "not run" and rows["RelRNN"]["×4 ours (T=16)"].endswith("%")


def test_copy_subset_trains_memrnn_and_rellstm_at_short_lengths_and_tables_say_not_run():
    """The full copy sweep (COPY_SUBSET): MemRNN at T = 100 only, RelLSTM up to T = 200, the other four at every T; the
    denoise sweep (DENOISE_SUBSET) the same cut, RelLSTM up to T = 300. Table B.2 writes "not run" where a model did
    not train at a length."""
    from lscnb.experiments.relevancy import tasks

    copy = {(r.config["model"], r.config["T"]) for r in tasks.copy_runs("full")}
    assert {T for m, T in copy if m == "MemRNN"} == {100} and {T for m, T in copy if m == "RelLSTM"} == {100, 200}
    assert all({T for m, T in copy if m == k} == {100, 200, 500} for k in ("RNN", "orthRNN", "LSTM", "RelRNN"))
    denoise = {(r.config["model"], r.config["T"]) for r in tasks.denoise_runs("full")}
    assert {T for m, T in denoise if m == "MemRNN"} == {100} and {T for m, T in denoise if m == "RelLSTM"} == {100, 300}
    assert all({T for m, T in denoise if m == k} == {100, 300, 500} for k in ("RNN", "orthRNN", "LSTM", "RelRNN"))
    assert len(denoise) == 4 * 3 + 1 + 2
    assert len(tasks.copy_runs("quick")) == 2  # the quick sweep is unchanged
    res = _Results(
        [_Result(dict(model=m, T=T), {"accuracy": [0.5]}) for m, T in [("RelRNN", 4), ("RelRNN", 8), ("MemRNN", 4)]]
    )
    rows = {r["model"]: r for r in tasks.copy_rows(res)}
    assert rows["MemRNN"]["ours (T=8)"] == "not run" and rows["MemRNN"]["ours (T=4)"] == "50%"
    assert rows["RelRNN"]["ours (T=8)"] == "50%"


def test_copy_gap_puts_the_thesis_beside_ours_at_the_longest_transfer_and_each_training_length():
    """The status page's gap for Tables 4.1/B.2: each model with a thesis row at 50x T = 100 (the thesis's column
    T = 5,000; MemRNN untested there), and RelRNN at each training length beside Table B.2's."""
    from lscnb.experiments.relevancy import tasks

    runs = [
        ("RelRNN", 100, [1.0, 0.9]),
        ("LSTM", 100, [0.5, 0.125]),
        ("MemRNN", 100, [1.0, float("nan")]),
        ("RNN", 100, [0.2, 0.1]),
        ("RelRNN", 200, [0.59]),
        ("RelRNN", 500, [0.01]),
    ]
    res = _Results([_Result(dict(model=m, T=T, transfer=[1, 50]), {"accuracy": a}) for m, T, a in runs])
    with warnings.catch_warnings():  # MemRNN's untested length: NaN, without a warning (stderr fails the book build)
        warnings.simplefilter("error")
        gap = tasks.gap_copy(res)
    assert gap.startswith("Table 4.1 at 50x T = 100: RelRNN 90% (thesis 99%), LSTM 12% (thesis 14%), MemRNN untested")
    assert "RNN 10%" not in gap  # no thesis row
    assert gap.endswith("Table B.2, RelRNN at T = 100/200/500: 100/59/1% (thesis 100/100/100%)")
    res = _Results([*res, _Result(dict(model="RelRNN", T=400, transfer=[1]), {"accuracy": [0.5]})])
    assert tasks.gap_copy(res).endswith("T = 100/200/400/500: 100/59/50/1% (thesis 100/100/–/100%)")  # thesis: no 400


class _Result(dict):
    def __init__(self, cfg, out):
        super().__init__(out)
        self.config = cfg


class _Results(list):
    def where(self, **config):
        return [r for r in self if all(r.config.get(k) == v for k, v in config.items())]


@pytest.mark.parametrize("kind", ["MemRNN", "RelRNN", "LSTM"])
def test_gradient_norms_of_a_batch_are_those_of_its_chunks(kind):
    """The gradient probe of Fig. 4.2 (left) back-propagates a few sequences at a time: with the loss summed and no
    interaction between sequences, each sequence's ||dL/dh_t|| is the same as in the whole batch."""
    from lscnb.experiments.relevancy.common import task_batch
    from lscnb.experiments.relevancy.tasks import _chunks
    from lscnb.models.relevancy import Tagger, hidden_gradient_norms

    torch.manual_seed(0)
    x, y = task_batch("denoise", 6, 12, L=2, symbols=3, generator=torch.Generator().manual_seed(1))
    model = Tagger(kind, x.shape[-1], 8, 4, nu=2, rho=2)
    whole = hidden_gradient_norms(model, x, y, last=2)
    parts = torch.cat([hidden_gradient_norms(model, xb, yb, last=2) for xb, yb in _chunks(x, y)])
    assert whole.shape == (6, x.shape[1]) and len(list(_chunks(x, y))) > 1
    torch.testing.assert_close(parts, whole, rtol=1e-5, atol=1e-7)


def test_underflow_marks_profiles_that_float32_cannot_hold():
    """A mean of float32 log10 norms can fall below float32's smallest number only if some norm was 0 (stored as
    1e-300): the first such distance is where Fig. 4.2's plot cuts the curve."""
    from lscnb.experiments.relevancy import UNDERFLOW, underflow_distance

    assert -45 < UNDERFLOW < -44.8
    norms = torch.tensor([[1.0, 1e-30, 1e-44], [1.0, 1e-30, 0.0]], dtype=torch.float32).double()
    g = torch.log10(norms.clamp_min(1e-300)).mean(0).numpy()
    assert underflow_distance(g) == 2 and underflow_distance(g[:2]) is None
    assert underflow_distance(np.array([0.0, UNDERFLOW])) is None


def test_denoise_gap_puts_the_thesis_beside_ours_at_each_training_length():
    """The status page's gap for Table 4.2: models with a thesis row, at the lengths each was trained at."""
    from lscnb.experiments.relevancy import tasks

    runs = [("RelRNN", 100, 0.943), ("RelRNN", 300, 0.5), ("RNN", 100, 0.12), ("orthRNN", 100, 0.318)]
    runs += [("LSTM", 400, 0.2)]
    res = _Results([_Result(dict(model=m, T=T), {"accuracy": [a]}) for m, T, a in runs])
    assert tasks.gap_denoise(res) == (
        "Table 4.2: RelRNN at T = 100/300: 94/50% (thesis 100/99%), orthRNN at T = 100: 32% (thesis 90%), "
        "LSTM at T = 400: 20% (thesis –)"
    )
