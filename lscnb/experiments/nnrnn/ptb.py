"""Tables 3.1 and A.3: character-level Penn Treebank language models, test BPC and accuracy at T = 150 and
300 (Table A.4's rates)."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import checks, plot
from ...data.text import batchify, bptt_windows, load_ptb
from ...lm import evaluate as lm_evaluate
from ...lm import next_token_loss
from ...models.nonnormal import NNRNNCell
from ...sweep import Run, RunContext
from ...train import fit
from .common import CHAPTER, _theta_snapshot, effective_parameters, gamma_penalty, make_model


def _ptb_row(model, hid, lr, alpha, budgets=("width", "params"), **extra) -> dict:
    return dict(model=model, hid=hid, lr=lr, alpha=alpha, budgets=list(budgets), **extra)


PTB_HYPER = {  # Table A.4 (PTB, truncation length 150 and 300): one row per model and width, as the thesis prints it
    length: [
        _ptb_row(
            "nnRNN",
            1024,
            8e-4,
            0.9,
            arch="nnRNN",
            lr_orth=8e-5 if length == 150 else 6e-5,
            delta=1.0 if length == 150 else 1e-4,
            t_decay=1e-4,
            init="cayley",
        ),
        _ptb_row(
            "expRNN", 1024, 5e-3, 0.9, ("width",), arch="expRNN", lr_orth=1e-4, init="cayley", input_init="kaiming"
        ),  # the authors' PTB script's default input init
        _ptb_row(
            "expRNN", 1386, 5e-3, 0.9, ("params",), arch="expRNN", lr_orth=1e-4, init="cayley", input_init="kaiming"
        ),
        _ptb_row("LSTM", 1024, 8e-3, 0.9, ("width",), arch="LSTM"),
        _ptb_row(
            "LSTM", 475, 1e-3 if length == 150 else 3e-3, 0.99 if length == 150 else 0.9, ("params",), arch="LSTM"
        ),
        _ptb_row("RNN-orth", 1024, 1e-4, 0.9, arch="RNN-orth", init="orth" if length == 150 else "cayley"),
        _ptb_row("EURNN", 1024, 1e-3, 0.9, ("width",), arch="EURNN", capacity=2),
        _ptb_row("EURNN", 2048, 1e-3, 0.9, ("params",), arch="EURNN", capacity=2),
        _ptb_row("RNN", 1024, 1e-5, 0.9, arch="RNN-modReLU", init="glorot"),
    ]
    for length in (150, 300)
}
PTB_MODELS = ["RNN", "RNN-orth", "EURNN", "expRNN", "nnRNN", "LSTM"]
PTB_SHARED = {  # toy scale: one learning rate for every model (the thesis's rates were tuned at N = 1024)
    "lr": 5e-3,
    "lr_orth": 5e-4,
    "alpha": 0.9,
}
PTB_SIZES = {
    "quick": dict(
        width=32,
        emb=16,
        batch=16,
        epochs=1,
        n_train=200_000,
        n_eval=8_000,
        eval_batch=10,
        seeds=[0],
        hyper="quick",
        budgets=["width"],
    ),
    "full": dict(
        width=None,
        emb=200,
        batch=128,
        epochs=100,
        n_train=None,
        n_eval=None,
        eval_batch=10,
        seeds=[0],
        hyper="paper",
        budgets=["width", "params"],
    ),
}
PTB_SUBSET = (
    "1 seed of the thesis's 5 (no error bars); EURNN is the real tunable-capacity-2 variant "
    "(the thesis does not state its capacity)"
)
TABLE_3_1 = {  # thesis Table 3.1 (test BPC) and Table A.3 (test accuracy, %): mean, SEM
    "bpc": {
        ("RNN", "params", 150): (2.89, 0.002),
        ("RNN", "params", 300): (2.90, 0.0016),
        ("RNN", "width", 150): (2.89, 0.002),
        ("RNN", "width", 300): (2.90, 0.002),
        ("RNN-orth", "params", 150): (1.62, 0.004),
        ("RNN-orth", "params", 300): (1.66, 0.006),
        ("RNN-orth", "width", 150): (1.62, 0.004),
        ("RNN-orth", "width", 300): (1.66, 0.006),
        ("EURNN", "params", 150): (1.61, 0.001),
        ("EURNN", "params", 300): (1.62, 0.001),
        ("EURNN", "width", 150): (1.69, 0.001),
        ("EURNN", "width", 300): (1.68, 0.001),
        ("expRNN", "params", 150): (1.49, 0.008),
        ("expRNN", "params", 300): (1.52, 0.001),
        ("expRNN", "width", 150): (1.51, 0.005),
        ("expRNN", "width", 300): (1.55, 0.001),
        ("nnRNN", "params", 150): (1.47, 0.003),
        ("nnRNN", "params", 300): (1.49, 0.002),
        ("nnRNN", "width", 150): (1.47, 0.003),
        ("nnRNN", "width", 300): (1.49, 0.002),
        ("LSTM", "width", 150): (1.37, 0.003),
    },  # LSTM: text only, N = 1024 (length not stated)
    "acc": {
        ("RNN", "params", 150): (40.01, 0.026),
        ("RNN", "params", 300): (39.97, 0.025),
        ("RNN", "width", 150): (40.01, 0.026),
        ("RNN", "width", 300): (39.97, 0.025),
        ("RNN-orth", "params", 150): (66.29, 0.07),
        ("RNN-orth", "params", 300): (65.53, 0.09),
        ("RNN-orth", "width", 150): (66.29, 0.07),
        ("RNN-orth", "width", 300): (65.53, 0.09),
        ("EURNN", "params", 150): (65.68, 0.002),
        ("EURNN", "params", 300): (65.55, 0.002),
        ("EURNN", "width", 150): (64.01, 0.002),
        ("EURNN", "width", 300): (64.20, 0.003),
        ("expRNN", "params", 150): (68.07, 0.15),
        ("expRNN", "params", 300): (67.58, 0.04),
        ("expRNN", "width", 150): (67.51, 0.11),
        ("expRNN", "width", 300): (66.89, 0.024),
        ("nnRNN", "params", 150): (68.78, 0.0006),
        ("nnRNN", "params", 300): (68.52, 0.0004),
        ("nnRNN", "width", 150): (68.78, 0.0006),
        ("nnRNN", "width", 300): (68.52, 0.0004),
    },
}


def ptb_hyper(row: dict, scale_hyper: str) -> dict:
    """A Table A.4 row, or at toy scale the same row with the shared learning rate and smoothing."""
    if scale_hyper == "paper":
        return dict(row)
    shared = {k: v for k, v in PTB_SHARED.items() if k != "lr_orth" or "lr_orth" in row}
    return dict(row, **shared)


class CharLM(torch.nn.Module):
    """Embedding -> recurrent core -> linear decoder (the awd-lstm-lm layout of the thesis's PTB code, no tying).

    ``forward(tokens, states)`` returns logits and ``[last state]``, the call :func:`lscnb.lm.evaluate` makes."""

    def __init__(self, core, decoder, vocab_size: int, embedding: int):
        super().__init__()
        self.core, self.decoder = core, decoder
        self.embed = torch.nn.Embedding(
            checks.positive_int(vocab_size, "vocab_size"), checks.positive_int(embedding, "embedding")
        )
        for w in (self.embed.weight, decoder.weight):
            torch.nn.init.uniform_(w, -0.1, 0.1)
        torch.nn.init.zeros_(decoder.bias)

    def forward(self, tokens, states=None):
        out, last = self.core.run(self.embed(tokens), None if states is None else states[0])
        return self.decoder(out), [last]


def make_lm(hp: dict, seed: int, vocab_size: int, embedding: int):
    """(CharLM, optimisers) for a Table A.4 row ``hp``: RMSprop as :func:`make_model`, the embedding with the
    main learning rate."""
    name = hp["model"]
    core, decoder, opts = make_model(
        name, hp["hid"], seed, n_in=embedding, n_out=vocab_size, hyper={name: hp}, init=hp.get("init", "henaff")
    )
    lm = CharLM(core, decoder, vocab_size, embedding)
    opts[0].add_param_group({"params": list(lm.embed.parameters()), "lr": hp["lr"]})
    return lm, opts


def backprop_norms(lm, tokens, state=None) -> np.ndarray:
    """``||dL/dh_t||`` for t = 1..T on one window (L the window's mean cross-entropy) for an nnRNN language model:
    how the gradient grows as it travels back through time (thesis Fig. A.3, left)."""
    cell = getattr(lm.core, "cell", None)
    if not isinstance(cell, NNRNNCell):
        raise TypeError(f"lm must hold an NNRNNCell, got {type(cell).__name__}")
    x, y = tokens[:, :-1], tokens[:, 1:]
    e, V = lm.embed(x), cell.V()
    h = cell.initial_state(x.shape[0], x.device) if state is None else state
    hs = []
    for t in range(x.shape[1]):
        h = cell(h, e[:, t], V)
        h.retain_grad()
        hs.append(h)
    logits = lm.decoder(torch.stack(hs, 1))
    torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
    lm.zero_grad(set_to_none=True)
    return np.array([float(h.grad.norm()) for h in hs])


def ptb_data(n_train: int | None, n_eval: int | None):
    """Character ids of PTB (train, valid, test), cut to the first ``n_train`` / ``n_eval`` characters."""
    corpus = load_ptb("char")
    cut = lambda ids, n: ids if n is None else ids[: checks.positive_int(n, "n")]
    return corpus, cut(corpus.train, n_train), cut(corpus.valid, n_eval), cut(corpus.test, n_eval)


def ptb_counts(cfg: dict) -> dict:
    """For the plan: the characters a run with ``n_train=None`` trains on, those of the real PTB training text
    (FileNotFoundError where it is not at hand: the offline stand-in's size would say nothing of the real run)."""
    if cfg["n_train"] is not None:
        return {}
    return {"n_train": int(load_ptb("char", download=False, fallback=False).train.numel())}


def is_real_ptb(col) -> bool:
    """Whether the runs of ``col`` read the real PTB characters (not the offline stand-in)."""
    return all(str(r["source"]).startswith("Penn Treebank") for r in col)


def unigram_bits(col) -> float:
    """Entropy (bits) of the character frequencies of the training text the runs of ``col`` saw: the BPC of a
    model that learned letter frequencies and nothing else."""
    c = col[0].config
    corpus, train, _, _ = ptb_data(c["n_train"], c["n_eval"])
    p = torch.bincount(train, minlength=corpus.vocab_size).double()
    p = p[p > 0] / p.sum()
    return float(-(p * p.log2()).sum())


class _Progress:
    """What :func:`ptb_run` keeps besides the model and its optimisers, saved with its checkpoint: the state carried
    across windows, the validation curve, the best model so far and the plateau schedulers."""

    def __init__(self, plateau: list):
        self.carried, self.valid_bpc, self.best, self.plateau = None, [], {"nats": float("inf"), "state": None}, plateau

    def state_dict(self) -> dict:
        plateau = [p.state_dict() for p in self.plateau]
        return {"carried": self.carried, "valid_bpc": list(self.valid_bpc), "best": self.best, "plateau": plateau}

    def load_state_dict(self, saved: dict) -> None:
        self.carried, self.valid_bpc, self.best = saved["carried"], list(saved["valid_bpc"]), saved["best"]
        for p, state in zip(self.plateau, saved["plateau"]):
            p.load_state_dict(state)


def ptb_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one character-level language model on PTB by truncated BPTT (length ``cfg["length"]``, the state
    carried across windows), RMSprop with Table A.4's rates (or the shared toy rate), the learning rates halved
    whenever the validation loss does not improve; the best-validation model is evaluated on test (thesis A.1.3)."""
    hp = dict(ptb_hyper(cfg["row"], cfg["hyper"]), hid=cfg["width"])
    corpus, train, valid, test = ptb_data(cfg["n_train"], cfg["n_eval"])
    device = ctx.device
    lm, opts = make_lm(hp, ctx.seed, corpus.vocab_size, cfg["emb"])
    lm = lm.to(device)
    windows = list(bptt_windows(batchify(train, cfg["batch"]).to(device), cfg["length"]))
    plateau = [
        torch.optim.lr_scheduler.ReduceLROnPlateau(o, factor=0.5, patience=0, threshold=0.0, eps=0.0) for o in opts
    ]
    track = _Progress(plateau)

    def next_window(k):
        x, y = windows[k % len(windows)]
        return (x, k % len(windows) == 0), y

    def loss_fn(lm, x, y):
        logits, states = lm(x[0], None if x[1] else track.carried)
        track.carried = [s.detach() for s in states]
        return next_token_loss(logits, y)

    def evaluate(lm):  # every epoch: keep the best model; halve the rates on a plateau (the code's StepLR(0.5))
        val = lm_evaluate(lm, valid, batch=cfg["eval_batch"], length=cfg["length"], device=device)
        track.valid_bpc.append(val["bits"])
        if val["nats"] < track.best["nats"]:
            track.best = {"nats": val["nats"], "state": {k: v.detach().clone() for k, v in lm.state_dict().items()}}
        for schedule in plateau:
            schedule.step(val["nats"])
        return {"valid_bpc": val["bits"]}

    hist = fit(
        lm,
        next_window,
        loss_fn,
        steps=cfg["epochs"] * len(windows),
        optimizer=opts,
        penalty=lambda lm: gamma_penalty(lm.core, hp.get("delta")),
        eval_fn=evaluate,
        eval_every=len(windows),
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"PTB {hp['model']}-{hp['hid']}",
        extra=track,
    )
    valid_bpc, best = track.valid_bpc, track.best
    best_state = best["state"]
    out = {
        "loss": np.array(hist.loss),
        "grad_norm": np.array(hist.grad_norm),
        "valid_bpc": np.array(valid_bpc),
        "diverged": hist.diverged,
        "params": effective_parameters(lm.core, lm.decoder) + lm.embed.weight.numel(),
        "vocab": corpus.vocab_size,
        "source": corpus.source,
    }
    if best_state is not None:
        lm.load_state_dict(best_state)
        res = lm_evaluate(lm, test, batch=cfg["eval_batch"], length=cfg["length"], device=device)
        out.update(test_bpc=res["bits"], test_acc=res["accuracy"])
    else:
        out.update(test_bpc=float("nan"), test_acc=float("nan"))
    if isinstance(getattr(lm.core, "cell", None), NNRNNCell):
        snap = _theta_snapshot(lm.core)  # the learned Theta (float16: 2 MB at N = 1024) only for Table 3.1's runs
        out.update({k: snap[k] for k in ("P_orthogonality", "gamma_mean", "theta", "gamma")})
        if cfg.get("keep_theta"):
            out["Theta"] = snap["Theta"].astype(np.float16)
        if cfg.get("probe") and best_state is not None:
            window = batchify(valid, cfg["eval_batch"])[:, : cfg["length"] + 1].to(device)
            out["backprop_norm"] = backprop_norms(lm, window)
    return out


def _ptb_config(s: dict, row: dict, length: int, seed: int, **extra) -> dict:
    return dict(
        row=row,
        model=row["model"],
        width=row["hid"],
        length=length,
        emb=s["emb"],
        batch=s["batch"],
        epochs=s["epochs"],
        n_train=s["n_train"],
        n_eval=s["n_eval"],
        eval_batch=s["eval_batch"],
        hyper=s["hyper"],
        seed=seed,
        **extra,
    )


def _scaled_rows(scale: str, length: int) -> list[dict]:
    """Table A.4's rows at ``scale``: the paper's widths, or every model at the toy width (equal width only)."""
    s = PTB_SIZES[scale]
    rows = PTB_HYPER[length]
    if s["width"] is None:
        return rows
    return [dict(r, hid=s["width"], budgets=["width"]) for r in rows if "width" in r["budgets"]]


def ptb_runs(scale: str) -> list[Run]:
    s = PTB_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "ptb",
            f"{r['model']}-N{r['hid']}-T{length}-s{seed}",
            ptb_run,
            _ptb_config(
                s, r, length, seed, budgets=r["budgets"], probe=r["model"] == "nnRNN", keep_theta=r["model"] == "nnRNN"
            ),
        )
        for length in (150, 300)
        for r in _scaled_rows(scale, length)
        for seed in s["seeds"]
    ]


def _mean_cell(runs, key: str, scale: float = 1.0):
    """Mean of ``key`` over the runs that did not diverge (a float), or a phrase saying what happened."""
    ok = [r[key] * scale for r in runs if not r["diverged"]]
    if not runs:
        return "not run"
    if not ok:
        return "diverged"
    if len(ok) < len(runs):
        return f"{np.mean(ok):.3f} ({len(runs) - len(ok)} of {len(runs)} diverged)"
    return float(np.mean(ok))


def table_3_1(col, metric: str = "bpc") -> list[dict]:
    """Table 3.1 (``metric="bpc"``, test bits per character) or Table A.3 (``"acc"``, test accuracy in %): ours
    (mean over seeds) beside the thesis, per model, budget and truncation length."""
    checks.one_of(metric, ("bpc", "acc"), "metric")
    key, scale = ("test_bpc", 1.0) if metric == "bpc" else ("test_acc", 100.0)
    rows = []
    for budget in ("params", "width"):
        for m in PTB_MODELS:
            row = {"budget": "≈1.32M parameters" if budget == "params" else "N = 1024 (toy: equal width)", "model": m}
            have = False
            for length in (150, 300):
                runs = [r for r in col.where(model=m, length=length) if budget in r.config["budgets"]]
                paper = TABLE_3_1[metric].get((m, budget, length))
                have |= bool(runs)
                row[f"N, T={length}"] = runs[0].config["width"] if runs else ""
                row[f"ours, T={length}"] = _mean_cell(runs, key, scale)
                row[f"thesis, T={length}"] = f"{paper[0]:g} ± {paper[1]:g}" if paper else "—"
            if have:
                rows.append(row)
    return rows


def show_ptb(col) -> None:
    fig, ax = plot.figure(2, 1, width=11, height=3.6)
    for j, length in enumerate((150, 300)):
        for i, m in enumerate(PTB_MODELS):
            for r in col.where(model=m, length=length):
                if "width" not in r.config["budgets"] or r.config["seed"] != col[0].config["seed"]:
                    continue
                k = max(1, len(r["loss"]) // 20)
                smooth = np.convolve(r["loss"], np.ones(k) / k, mode="valid") / math.log(2)
                ax[0, j].plot(np.arange(len(smooth)) + k, smooth, color=f"C{i}", label=f"{m} (N = {r.config['width']})")
        ax[0, j].axhline(math.log2(col[0]["vocab"]), **plot.PAPER, label="uniform guess")
        ax[0, j].set(xlabel="training window", ylabel="training bits per character", title=f"PTB, T_PTB = {length}")
        ax[0, j].legend(fontsize=7)
    plot.show(fig, col, data=_ptb_data_note(col))


def _ptb_data_note(col) -> str:
    c = col[0].config
    amount = "the full corpus" if c["n_train"] is None else f"its first {c['n_train']:,} training characters"
    return f"{col[0]['source']}, {amount}; validation and test " + (
        "in full" if c["n_eval"] is None else f"cut to {c['n_eval']:,} characters"
    )


def gap_ptb(col) -> str:
    cells = [
        _mean_cell([r for r in col.where(model="nnRNN", length=n) if "width" in r.config["budgets"]], "test_bpc")
        for n in (150, 300)
    ]
    text = [f"{c:.3f}" if isinstance(c, float) else c for c in cells]
    return (
        f"test BPC of the nnRNN at equal width: {text[0]} (T = 150), {text[1]} (T = 300); thesis 1.47 and 1.49 "
        "at N = 1024" + ("" if col.is_paper_scale else " (toy scale: not comparable)")
    )
