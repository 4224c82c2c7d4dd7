"""Chapter "Recurrence and self-attention: relevancy screening" (Kerg et al. 2020; thesis ch. 4).

Figures: ``propagation`` (Thms 4.4.2 and 4.4.3 in the scalar linearised model: no attention, uniform, sparse and
windowed attention), ``reach`` (the gradient reaching a stored relevant state in a nonlinear RelRNN, against
the plain RNN with the same weights, as the sequence grows), ``copy`` (trainings on copy: Tables 4.1 and B.2,
Fig. 4.1 left), ``denoise`` (trainings on denoise: Table 4.2, Fig. 4.2 left, Fig. 4.1 right) and ``memory``
(activation memory and stored states vs T: Fig. 4.2 centre).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from .. import checks, plot
from ..data import (
    batchify,
    bits_per_token,
    bptt_windows,
    copy_memory,
    denoise,
    load_mnist,
    load_ptb,
    pixel_sequences,
)
from ..figures import Figure, Item, declare
from ..memprof import saved_tensor_bytes
from ..models.relevancy import RelRNN, Tagger, TokenTagger, attention_matrix, hidden_gradient_norms
from ..sweep import Run, RunContext
from ..theory import relevancy as theory
from ..train import fit

CHAPTER = "relevancy"
NOTEBOOK = "book/relevancy.ipynb"

SIZES = {
    "quick": dict(lengths=[50, 100, 200, 500, 1000], seeds=3, width=32),
    "full": dict(lengths=[50, 100, 200, 500, 1000, 2000, 5000], seeds=10, width=128),
}
TABLE_4_1 = {
    "orth-RNN": [99, 4, 16, 10, 0],
    "expRNN": [100, 86, 73, 58, 50],
    "MemRNN": [99, 99, 99, 92, None],
    "RelRNN": [100, 99, 99, 99, 99],
    "LSTM": [99, 64, 48, 19, 14],
    "h-detach": [100, 91, 77, 51, 42],
    "SAB": [99, 95, 95, 95, 95],
    "RelLSTM": [100, 99, 99, 99, 99],
}


def propagation_run(cfg: dict, ctx: RunContext) -> dict:
    """g(k) for the four attention patterns, and the measured uniform-attention exponent for several lam."""
    out = {p: theory.propagation(p, cfg["lam"], cfg["steps"], kappa=cfg["kappa"]) for p in theory.PATTERNS}
    slopes = []
    for lam in cfg["lams"]:
        g = theory.propagation("uniform", lam, 4001)
        slopes.append(np.log(g[4000] / g[400]) / np.log(10))
    out["slopes"] = np.array(slopes)
    return out


def propagation_runs(scale: str) -> list[Run]:
    return [
        Run(
            CHAPTER,
            "propagation",
            "scalar",
            propagation_run,
            dict(lam=0.9, kappa=5, steps=1001, lams=[0.3, 0.6, 0.9], seed=0),
        )
    ]


def show_propagation(col) -> None:
    r = col[0]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    names = {
        "none": "no attention (RNN)",
        "uniform": "uniform attention (all past states)",
        "sparse": f"sparse: stored event + last {r.config['kappa'] - 1}",
        "window": f"window of {r.config['kappa']}",
    }
    for p, color in zip(theory.PATTERNS, ("C0", "C1", "C3", "C2")):
        ax[0, 0].plot(r[p], color=color, label=names[p])
    ax[0, 0].axhline(
        theory.sparse_plateau(r.config["lam"], r.config["kappa"]), **plot.THEORY, label="sparse plateau (closed form)"
    )
    ax[0, 0].set(
        yscale="log",
        ylim=(1e-12, 3),
        xlabel="k",
        ylabel="|d s_{t+k} / d h_t|",
        title=f"linearised model, λ = {r.config['lam']}",
    )
    ax[0, 0].legend(fontsize=7)
    plot.show(fig, col, data="closed-form recursion (no data)")


def reach_run(cfg: dict, ctx: RunContext) -> dict:
    """||dL/dh_0|| with L = sum of the last macro-state s_{T-1} (the theorems' quantity), for a RelRNN whose
    screening keeps h_0 (an oracle) and for the plain RNN with the same weights, over ``seeds`` networks (seeds
    ``ctx.seed`` onwards) and lengths."""
    rel, plain = [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        torch.manual_seed(seed)
        model = RelRNN(4, cfg["width"], nu=5, rho=5).double()
        x = torch.randn(2, cfg["length"], 4, generator=torch.Generator().manual_seed(100 + seed), dtype=torch.float64)
        for att, sink in ((True, rel), (False, plain)):
            hs = []
            model(x, pin=(0,), attention=att, hidden=hs, macro=True)[:, -1].sum().backward()
            sink.append(float(hs[0].grad.norm()))
            model.zero_grad()
    return {"relrnn": np.array(rel), "rnn": np.array(plain)}


def reach_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(CHAPTER, "reach", f"T{T}", reach_run, dict(length=T, seeds=s["seeds"], width=s["width"], seed=0))
        for T in s["lengths"]
    ]


def show_reach(col) -> None:
    rs = sorted(col, key=lambda r: r.config["length"])
    T = [r.config["length"] for r in rs]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    ax[0, 0].plot(
        T, [r["relrnn"].mean() for r in rs], "o-", color="C3", label="RelRNN (ν = ρ = 5), h₀ kept as relevant"
    )
    ax[0, 0].plot(T, [max(r["rnn"].mean(), 1e-300) for r in rs], "o-", color="C0", label="plain tanh RNN, same weights")
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="sequence length T",
        ylabel="‖∂L/∂h₀‖",
        title="gradient reaching the first state",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="Gaussian inputs, generated; untrained networks")


TABLE_4_2 = {
    "orth-RNN": [90, 71, 61, 29, 3],
    "expRNN": [34, 25, 20, 16, 11],
    "MemRNN": [99, 99, 99, 99, None],
    "RelRNN": [100, 99, 99, 99, 99],
    "LSTM": [82, 41, 33, 21, 15],
    "GORU": [92, 93, 91, 93, 73],
    "SAB": [99, 99, 99, 99, 99],
    "RelLSTM": [100, 99, 99, 99, 99],
}
TABLE_4_2_T = [100, 300, 500, 1000, 2000]
TABLE_4_1_T = [100, 200, 400, 2000, 5000]
TABLE_B_2 = {
    "LSTM": [100, 100, 100, 12, 12, 12],
    "orth-RNN": [100, 100, 100, 100, 80, 11],
    "expRNN": [100, 100, 100, 100, 100, 100],
    "MemRNN": [100, 100, 100, 100, 100, None],
    "SAB": [100] * 6,
    "RelRNN": [100] * 6,
    "RelLSTM": [100] * 6,
}
TABLE_B_2_T = [100, 200, 300, 500, 1000, 2000]
TABLE_4_3 = [
    ("RNN", 1.56, "66%", "90.4%"),
    ("orth-RNN", 1.53, "66%", "93.4%"),
    ("expRNN", 1.49, "68%", "96.6%"),
    ("RelRNN", 1.43, "69%", "92.8%"),
    ("LSTM", 1.36, "73%", "91.1%"),
    ("h-detach", "–", "–", "92.3%"),
    ("SAB", 1.37, "–", "94.2%"),
    ("RelLSTM", 1.36, "73%", "94.3%"),
]
PAPER_NAME = {"orthRNN": "orth-RNN"}
"""Our model names that the thesis spells differently."""

TASK_SIZES = {
    "quick": dict(
        T=10,
        L=3,
        symbols=4,
        width=32,
        batch=32,
        steps=1000,
        lr=5e-3,
        nu=5,
        rho=5,
        eval_batch=100,
        copy_models=["RelRNN", "LSTM"],
        denoise_models=["RelRNN", "LSTM", "RNN"],
        copy_T=[10],
        denoise_T=[10],
        transfer=[1, 2, 4, 20],
        grad_T=100,
        grad_batch=32,
        seeds=[0],
        memory_T=[25, 50, 100, 200],
        memory_width=32,
        memory_batch=4,
    ),
    "full": dict(
        T=100,
        L=10,
        symbols=8,
        width=128,
        batch=32,
        steps=5000,
        lr=1e-3,
        nu=10,
        rho=10,
        eval_batch=1000,
        copy_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
        denoise_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
        copy_T=[100, 200, 500],
        denoise_T=[100, 300, 500],
        transfer=[1, 2, 4, 20, 50],
        grad_T=1000,
        grad_batch=32,
        seeds=[0],
        memory_T=[200, 400, 800, 1200, 1600, 2000],
        memory_width=128,
        memory_batch=10,
    ),
}
FULL_SUBSET = (
    "one seed; 5,000 Adam updates of batch 32 at lr 1e-3 (RMSprop for orthRNN) instead of the code's "
    "50,000-100,000; copy trained at T = 100, 200, 500 and denoise at T = 100, 300, 500 only; "
    "no expRNN, h-detach, SAB, GORU"
)


def task_batch(task: str, batch: int, T: int, *, L: int, symbols: int, generator) -> tuple:
    """A copy (length T + 2L) or denoise (T blanks, length T + 2L) batch in the thesis's convention."""
    if task == "copy":
        return copy_memory(batch, T - 1, n_symbols=symbols, length=L, generator=generator)
    if task == "denoise":
        return denoise(batch, T, n_symbols=symbols, length=L, generator=generator)
    raise ValueError(f"task must be 'copy' or 'denoise', got {task!r}")


def recall_accuracy(model, task: str, T: int, cfg: dict, device, *, seed: int = 12345, chunk: int = 100) -> float:
    """Fraction of the L recalled symbols predicted correctly (what Tables 4.1, 4.2 and B.2 report), on a held-out
    set drawn from ``seed`` (fixed on purpose: every model and reader seed is tested on the same sequences)."""
    gen, hits, total = torch.Generator().manual_seed(seed), 0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, cfg["eval_batch"], chunk):
            x, y = task_batch(
                task, min(chunk, cfg["eval_batch"] - start), T, L=cfg["L"], symbols=cfg["symbols"], generator=gen
            )
            pred = model(x.to(device)).argmax(-1).cpu()
            hits += int((pred[:, -cfg["L"] :] == y[:, -cfg["L"] :]).sum())
            total += y[:, -cfg["L"] :].numel()
    model.train()
    return hits / total


def train_run(cfg: dict, ctx: RunContext) -> dict:
    """Train one model on copy or denoise (per-step cross-entropy averaged over the sequence, as in the code),
    then measure recall accuracy at the training length and longer ones, the attention matrix of one sequence
    (attentive models) and, where asked, ``log10 ||dL/dh_t||`` on longer sequences (Fig. 4.2, left)."""
    task, T, device = cfg["task"], cfg["T"], ctx.device
    torch.manual_seed(ctx.seed)
    gen = torch.Generator().manual_seed(ctx.seed)
    x0, _ = task_batch(task, 1, T, L=cfg["L"], symbols=cfg["symbols"], generator=gen)
    classes = cfg["symbols"] + 1
    model = Tagger(cfg["model"], x0.shape[-1], cfg["width"], classes, nu=cfg["nu"], rho=cfg["rho"]).to(device)

    def batch_fn(k):
        x, y = task_batch(task, cfg["batch"], T, L=cfg["L"], symbols=cfg["symbols"], generator=gen)
        return x.to(device), y.to(device)

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x).reshape(-1, classes), y.reshape(-1))

    orth = cfg["model"] == "orthRNN"
    hist = fit(
        model,
        batch_fn,
        loss_fn,
        steps=cfg["steps"],
        lr=cfg["lr"],
        optimizer="rmsprop" if orth else "adam",
        clip=1.0,
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"{task} {cfg['model']} T={T}",
        generators=(gen,),
    )
    lengths = [T * m for m in cfg["transfer"]]
    out = {
        "loss": np.array(hist.loss),
        "diverged": hist.diverged,
        "lengths": np.array(lengths),
        "baseline": cfg["L"] * np.log(cfg["symbols"]) / (T + 2 * cfg["L"]),
        "accuracy": np.array(
            [np.nan if hist.diverged else recall_accuracy(model, task, n, cfg, device) for n in lengths]
        ),
    }
    if cfg["model"] in ("MemRNN", "RelRNN", "RelLSTM") and not hist.diverged:
        # a fixed probe sequence (seed 7, on purpose): the heatmap shows the same input at every reader seed
        x, _ = task_batch(task, 1, T, L=cfg["L"], symbols=cfg["symbols"], generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            _, attn = model(x.to(device), return_attention=True)
        out["attention"] = attention_matrix([(i.cpu(), a.cpu()) for i, a in attn], x.shape[1]).numpy()
        out["tokens"] = x[0].argmax(-1).numpy()
    if cfg.get("grad_T") and not hist.diverged:
        x, y = task_batch(
            task,
            cfg["grad_batch"],
            cfg["grad_T"],
            L=cfg["L"],
            symbols=cfg["symbols"],
            generator=torch.Generator().manual_seed(8),
        )  # fixed probe batch (on purpose)
        norms = hidden_gradient_norms(model, x.to(device), y.to(device), last=cfg["L"]).cpu().double()
        out["grad_log10"] = torch.log10(norms.clamp_min(1e-300)).mean(0).numpy()
    return out


def _train_runs(task: str, scale: str) -> list[Run]:
    s = TASK_SIZES[scale]
    keys = ("L", "symbols", "width", "batch", "steps", "lr", "nu", "rho", "eval_batch", "transfer", "grad_batch")
    return [
        Run(
            CHAPTER,
            task,
            f"{m}-T{T}-s{seed}",
            train_run,
            dict(
                task=task,
                model=m,
                T=T,
                seed=seed,
                grad_T=s["grad_T"] if task == "denoise" else None,
                **{k: s[k] for k in keys},
            ),
        )
        for T in s[f"{task}_T"]
        for m in s[f"{task}_models"]
        for seed in s["seeds"]
    ]


def copy_runs(scale: str) -> list[Run]:
    return _train_runs("copy", scale)


def denoise_runs(scale: str) -> list[Run]:
    return _train_runs("denoise", scale)


def accuracy(col, model: str, T: int) -> np.ndarray:
    """Recall accuracy (%) of ``model`` trained at ``T``, mean over seeds, at each evaluated length."""
    rs = col.where(model=model, T=T)
    if not rs:
        raise KeyError(f"no run of {model} at T = {T}")
    return 100 * np.nanmean([r["accuracy"] for r in rs], axis=0)


def _pct(v) -> str:
    return "OOM" if v is None else ("–" if v != v else f"{v:.0f}%")


def transfer_rows(col) -> list[dict]:
    """Table 4.1: the paper's row (T = 100 ... 5000) beside ours (trained at the smallest T, tested at the same
    multiples of it)."""
    T = min(r.config["T"] for r in col)
    mult = col[0].config["transfer"]
    rows = []
    for m in dict.fromkeys(r.config["model"] for r in col):
        ours = accuracy(col, m, T)
        paper = TABLE_4_1.get(PAPER_NAME.get(m, m))
        row = {"model": m}
        for j, k in enumerate(mult):
            label = f"×{k}"
            idx = TABLE_4_1_T.index(100 * k) if 100 * k in TABLE_4_1_T else None
            row[f"{label} paper"] = _pct(paper[idx]) if paper and idx is not None else "–"
            row[f"{label} ours (T={T * k})"] = _pct(ours[j])
        rows.append(row)
    return rows


def _trained_rows(col, paper: dict, paper_T: list) -> list[dict]:
    rows = []
    for m in dict.fromkeys(r.config["model"] for r in col):
        pm = paper.get(PAPER_NAME.get(m, m))
        row = {"model": m}
        for T in sorted({r.config["T"] for r in col}):
            k = paper_T.index(T) if T in paper_T else 0  # quick: beside the paper's shortest T
            row[f"paper (T={paper_T[k]})"] = _pct(pm[k]) if pm else "–"
            row[f"ours (T={T})"] = _pct(accuracy(col, m, T)[0])
        rows.append(row)
    return rows


def copy_rows(col) -> list[dict]:
    """Table B.2: copy accuracy at the training length, the paper's beside ours."""
    return _trained_rows(col, TABLE_B_2, TABLE_B_2_T)


def denoise_rows(col) -> list[dict]:
    """Table 4.2: denoise accuracy at the training length, the paper's beside ours."""
    return _trained_rows(col, TABLE_4_2, TABLE_4_2_T)


def paper_table(table: dict, lengths: list) -> list[dict]:
    return [{"model": m, **{f"T = {T}": _pct(v) for T, v in zip(lengths, vals)}} for m, vals in table.items()]


def gradient_profiles(col) -> dict:
    """Fig. 4.2 left: mean over sequences of log10 ||dL/dh_t|| per model, indexed by distance from the end."""
    T = min(r.config["T"] for r in col)
    return {r.config["model"]: r["grad_log10"][::-1] for r in col if r.config["T"] == T and "grad_log10" in r}


def show_gradients(col) -> None:
    prof = gradient_profiles(col)
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4", "orthRNN": "C5"}
    for m, g in prof.items():
        ax[0, 0].plot(g, color=colors.get(m), label=m)
    r = col[0]
    ax[0, 0].set(
        xlabel="distance t from the end of the sequence",
        ylabel="mean log₁₀ ‖∂L/∂h_t‖",
        title=f"denoise, trained at T = {r.config['T']}, measured at T = {r.config['grad_T']}",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(
        fig,
        col,
        data=f"denoise sequences, generated ({r.config['symbols']} symbols, {r.config['L']} to recall); "
        "L = cross-entropy of the recalled symbols",
    )


def heatmap_model(col) -> str:
    """MemRNN (the thesis's Fig. 4.1) where it was trained, else RelRNN (the quick profile)."""
    return "MemRNN" if col.where(model="MemRNN") else "RelRNN"


def heatmap_of(col, model: str | None = None, task: str | None = None) -> tuple:
    rs = col.where(model=model or heatmap_model(col), **({"task": task} if task else {}))
    r = min(rs, key=lambda r: r.config["T"])
    return r["attention"], r["tokens"]


def symbol_attention_ratio(A, tokens, symbols: int, L: int) -> float:
    """Attention mass on the symbol positions during the last ``L`` (recall) steps, divided by their uniform share
    (number of symbol positions / number of states i <= t), averaged over those steps."""
    A, tokens = np.asarray(A), np.asarray(tokens)
    sym = (tokens > 0) & (tokens <= symbols)
    T = len(tokens)
    ratios = [A[t, : t + 1][sym[: t + 1]].sum() / (sym[: t + 1].sum() / (t + 1)) for t in range(T - L, T)]
    return float(np.mean(ratios))


def show_heatmaps(copy_col, denoise_col, *, label: str = "") -> None:
    """Fig. 4.1 (and, for runs that attend over the short-term buffer only, Figs. B.8/B.9, ``label`` naming them):
    the attention matrix of one sequence per task, symbol positions marked."""
    fig, ax = plot.figure(2, 1, width=9, height=3.8)
    for a, (name, col) in zip(ax[0], (("copy", copy_col), ("denoise", denoise_col))):
        model = heatmap_model(col)
        A, tokens = heatmap_of(col, model, name)
        plot.heatmap(a, A, xlabel="attended state i", ylabel="querying step t", cbar_label="α_{i,t}", vmin=0)
        marks = np.flatnonzero((tokens > 0) & (tokens <= col[0].config["symbols"]))
        a.plot(marks, np.full(len(marks), -0.5), "v", color="w", markersize=5, clip_on=False)
        a.set_title(f"{model}{label} on {name} (▼ symbol positions)", fontsize=9)
    cols = [copy_col] if copy_col is denoise_col else [copy_col, denoise_col]
    plot.show(fig, *cols, data="one generated sequence per task at the training length")


# ------------------------------------------------------------------ Figs. B.8, B.9: attention over the buffer only
BUFFER_STEPS = {"quick": 500, "full": 5000}


def buffer_runs(scale: str) -> list[Run]:
    """RelRNN with no long-term set (rho = 0: attention over the last nu states only) on copy and denoise, at the
    shortest training length of Tables B.2/4.2 (Figs. B.8/B.9, the contrast to Fig. 4.1)."""
    s = TASK_SIZES[scale]
    keys = ("L", "symbols", "width", "batch", "lr", "nu", "eval_batch", "grad_batch")
    return [
        Run(
            CHAPTER,
            "buffer",
            f"{task}-RelRNN-rho0-T{s[f'{task}_T'][0]}",
            train_run,
            dict(
                task=task,
                model="RelRNN",
                T=s[f"{task}_T"][0],
                seed=0,
                grad_T=None,
                rho=0,
                transfer=[1],
                steps=BUFFER_STEPS[scale],
                **{k: s[k] for k in keys},
            ),
        )
        for task in ("copy", "denoise")
    ]


def outside_buffer_mass(A, nu: int) -> float:
    """Largest attention weight on a state ``nu`` or more steps back, outside the buffer ``h_{t-nu+1}..h_t``
    (0 when only the buffer is attended)."""
    A = np.asarray(A)
    return float(max((A[t, : t - nu + 1].max() for t in range(nu, len(A))), default=0.0))


# ------------------------------------------------------------------ Figs. B.2, B.3: training curves
def smoothed(values, window: int = 50) -> tuple:
    """(update index, running mean over ``window`` updates) of a loss history."""
    v = np.asarray(values, dtype=float)
    window = max(1, min(checks.positive_int(window, "window"), len(v)))
    return np.arange(window - 1, len(v)), np.convolve(v, np.ones(window) / window, "valid")


def updates_to(r, level: float, window: int = 50) -> float:
    """First update at which the smoothed training loss of run ``r`` is below ``level`` (inf if never)."""
    x, y = smoothed(r["loss"], window)
    below = np.flatnonzero(y < level)
    return float(x[below[0]]) if len(below) else float("inf")


def show_curves(copy_col, denoise_col) -> None:
    """Figs. B.2 (every model) and B.3 (the LSTM line): cross-entropy against updates, one panel per task and
    training length, with the memoryless baseline (blanks, then a uniform guess of the symbols)."""
    panels = [
        (name, col, T)
        for name, col in (("copy", copy_col), ("denoise", denoise_col))
        for T in sorted({r.config["T"] for r in col})
    ]
    ncols = max(sum(p[0] == "copy" for p in panels), sum(p[0] == "denoise" for p in panels))
    fig, ax = plot.figure(ncols, 2, width=min(3.6 * ncols, 10.5), height=5.6)
    for a in ax.flat:
        a.set_visible(False)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4", "orthRNN": "C5"}
    for row, name in enumerate(("copy", "denoise")):
        for j, (_, col, T) in enumerate(p for p in panels if p[0] == name):
            a = ax[row, j]
            a.set_visible(True)
            rs = col.where(T=T)
            window = max(10, len(rs[0]["loss"]) // 50)
            for r in rs:
                a.plot(*smoothed(r["loss"], window), color=colors.get(r.config["model"]), lw=1, label=r.config["model"])
            a.axhline(rs[0]["baseline"], **plot.THEORY, label="memoryless baseline")
            a.set(yscale="log", xlabel="update", ylabel="cross-entropy", title=f"{name}, T = {T}")
            a.legend(fontsize=7)
    plot.show(fig, copy_col, denoise_col, data="copy and denoise sequences, generated; running mean of the loss")


# ------------------------------------------------------------------ Figs. B.5-B.7: dense tasks, curves and attention
def show_dense_curves(col) -> None:
    """Fig. B.6 (pMNIST validation accuracy against updates) beside the PTB training loss in bits per character."""
    fig, ax = plot.figure(2, 1, width=9.5, height=3.5)
    colors = {"RNN": "C0", "LSTM": "C2", "RelRNN": "C1", "RelLSTM": "C4", "orthRNN": "C5"}
    for r in col.where(task="ptb"):
        x, y = smoothed(r["loss"], max(1, len(r["loss"]) // 20))
        ax[0, 0].plot(r["loss_step"][x], y / np.log(2), color=colors.get(r.config["model"]), label=r.config["model"])
    unigram = col.where(task="ptb")[0]["unigram_bits"]
    ax[0, 0].axhline(unigram, **plot.THEORY, label="letter frequencies")
    ax[0, 0].set(
        xlabel="update", ylabel="training loss (bits per character)", title="PTB characters", ylim=(None, 1.6 * unigram)
    )
    for r in col.where(task="pmnist"):
        ax[0, 1].plot(
            r["eval_step"],
            100 * r["eval_valid_acc"],
            "o-",
            ms=3,
            color=colors.get(r.config["model"]),
            label=r.config["model"],
        )
    ax[0, 1].axhline(10, **plot.THEORY, label="chance")
    ax[0, 1].set(xlabel="update", ylabel="validation accuracy (%)", title="pMNIST (Fig. B.6)")
    for a in ax[0]:
        a.legend(fontsize=7)
    plot.show(fig, col, data=dense_data_note(col))


def show_dense_attention(col, model: str = "RelRNN") -> None:
    """Figs. B.5 (PTB) and B.7 (pMNIST): ``model``'s attention on one test sequence (blocks averaged when the
    sequence is longer than the heatmap; the thesis groups 7 pixels per step)."""
    fig, ax = plot.figure(2, 1, width=10, height=4.2)
    for a, task, what in zip(
        ax[0], ("ptb", "pmnist"), ("PTB test characters (Fig. B.5)", "a pMNIST test digit (Fig. B.7)")
    ):
        r = col.one(task=task, model=model)
        plot.heatmap(
            a, r["attention"], xlabel="attended step i", ylabel="querying step t", cbar_label="α_{i,t}", vmin=0
        )
        a.set_title(f"{model} on {what}", fontsize=9)
        text = r.get("sample_text", "") if task == "ptb" else ""
        if text and len(text) == len(r["attention"]):
            a.set_xticks(range(len(text)), list(text), fontsize=5)
    plot.show(fig, col, data=dense_data_note(col))


def memory_run(cfg: dict, ctx: RunContext) -> dict:
    """Bytes autograd saves for one forward pass (loss on every step) and the number of stored states attended at
    the last step, per model, at length ``T`` (Fig. 4.2 centre; on CUDA also the peak allocated memory)."""
    device = ctx.device
    torch.manual_seed(ctx.seed)
    # fixed probe batch (seed 0, on purpose): byte and state counts do not depend on the values anyway
    x, y = task_batch("denoise", cfg["batch"], cfg["T"], L=10, symbols=8, generator=torch.Generator().manual_seed(0))
    x, y = x.to(device), y.to(device)
    out = {}
    for m in cfg["models"]:
        model = Tagger(m, x.shape[-1], cfg["width"], 9, nu=cfg["nu"], rho=cfg["rho"]).to(device)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        saved, loss = saved_tensor_bytes(
            lambda model=model: torch.nn.functional.cross_entropy(model(x).reshape(-1, 9), y.reshape(-1))
        )
        if device.startswith("cuda"):
            loss.backward()
            torch.cuda.synchronize()
            out[f"{m}_peak_bytes"] = torch.cuda.max_memory_allocated() - base
        out[f"{m}_saved_bytes"] = saved
        out[f"{m}_stored_states"] = max(model.core.memory_trace)
        del loss, model
    return out


def memory_runs(scale: str) -> list[Run]:
    s = TASK_SIZES[scale]
    models = ["RNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"]
    return [
        Run(
            CHAPTER,
            "memory",
            f"T{T}",
            memory_run,
            dict(
                T=T, models=models, width=s["memory_width"], batch=s["memory_batch"], nu=s["nu"], rho=s["rho"], seed=0
            ),
        )
        for T in s["memory_T"]
    ]


def memory_table(col) -> dict:
    """{model: (lengths, saved bytes, stored states)} sorted by length."""
    rs = sorted(col, key=lambda r: r.config["T"])
    T = np.array([r.config["T"] for r in rs])
    return {
        m: (T, np.array([r[f"{m}_saved_bytes"] for r in rs], float), np.array([r[f"{m}_stored_states"] for r in rs]))
        for m in rs[0].config["models"]
    }


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def show_memory(col) -> None:
    tab = memory_table(col)
    fig, ax = plot.figure(2, 1, width=9.5, height=3.6)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4"}
    for m, (T, b, k) in tab.items():
        ax[0, 0].plot(T, b / 2**20, "o-", color=colors[m], label=f"{m} (slope {loglog_slope(T, b):.2f})")
        ax[0, 1].plot(T, k, "o-", color=colors[m], label=m)
    ax[0, 0].set(
        xscale="log",
        yscale="log",
        xlabel="sequence length T",
        ylabel="MiB saved for backward",
        title="activation memory of one training step",
    )
    ax[0, 1].set(xlabel="sequence length T", ylabel="states attended at the last step", title="attention memory")
    ax[0, 0].legend(fontsize=7)
    ax[0, 1].legend(fontsize=7)
    plot.show(fig, col, data="denoise sequences, generated; untrained networks, one forward pass")


# ------------------------------------------------------------------ Table 4.3: dense dependencies (pMNIST, PTB)
DENSE_MODELS = ["RNN", "orthRNN", "LSTM", "RelRNN", "RelLSTM"]
DENSE_SIZES = {
    "quick": {
        "pmnist": dict(
            pool=2,
            group=4,
            n_train=2000,
            n_valid=500,
            n_test=500,
            width=32,
            batch=32,
            steps=100,
            epochs=None,
            eval_every=25,
            lr=1e-2,
            nu=5,
            rho=5,
            real_only=False,
        ),
        "ptb": dict(
            train_tokens=200_000,
            valid_tokens=10_000,
            test_tokens=20_000,
            bptt=40,
            batch=16,
            width=64,
            embedding=16,
            steps=120,
            epochs=None,
            eval_every=120,
            lr=5e-3,
            nu=5,
            rho=5,
            real_only=False,
        ),
    },
    "full": {  # the thesis's set-up (Tables B.5, B.6; code defaults for sizes, batch and epochs, spec §2)
        "pmnist": dict(
            pool=1,
            group=1,
            n_train=50_000,
            n_valid=10_000,
            n_test=10_000,
            width=100,
            batch=100,
            steps=None,
            epochs=200,
            eval_every=None,
            nu=10,
            rho=10,
            real_only=True,
            lr=dict(RNN=1e-4, orthRNN=1e-4, LSTM=2e-4, RelRNN=3e-4, RelLSTM=3e-4),
        ),
        "ptb": dict(
            train_tokens=None,
            valid_tokens=None,
            test_tokens=None,
            bptt=150,
            batch=128,
            width=1024,
            embedding=200,
            steps=None,
            epochs=100,
            eval_every=None,
            nu=10,
            rho=5,
            real_only=True,
            lr=dict(RNN=1e-3, orthRNN=1e-3, LSTM=2e-4, RelRNN=3e-4, RelLSTM=3e-4),
        ),
    },
}
DENSE_NOTE = (
    "Adam, clipping 1.0, one seed; learning rates of Tables B.5/B.6 (RNN takes orthRNN's and RelLSTM RelRNN's, "
    "which the thesis does not give); tanh RelRNN (the thesis lists modReLU for pMNIST); every BPTT window "
    "starts from a zero state (windows drawn at random offsets); no expRNN, h-detach, SAB"
)
HEATMAP_MAX = 112
"""Attention matrices longer than this are stored block-averaged (the thesis groups 7 pixels per step, Fig. B.7)."""


def block_mean(A: np.ndarray, size: int = HEATMAP_MAX) -> np.ndarray:
    """``A`` (T, T) pooled over square blocks so that no side exceeds ``size`` (unchanged if it already fits):
    querying steps are averaged and attended steps summed within a block, so rows stay probability vectors."""
    A = np.asarray(A, dtype=float)
    k = -(-A.shape[0] // checks.positive_int(size, "size"))
    if k == 1:
        return A
    n = A.shape[0] // k * k
    return A[:n, :n].reshape(n // k, k, n // k, k).mean(1).sum(-1)


@functools.lru_cache(maxsize=2)
def _mnist(real_only: bool) -> tuple:
    return tuple(load_mnist(s, download=real_only, fallback=not real_only) for s in ("train", "test"))


@functools.lru_cache(maxsize=2)
def _ptb(real_only: bool):
    return load_ptb("char", download=real_only, fallback=not real_only)


def pmnist_data(cfg: dict) -> dict:
    """Permuted pixel-by-pixel MNIST (the fixed ``RandomState(1234)`` permutation of the authors' code), images
    average-pooled by ``pool`` first, ``group`` permuted pixels per step (``pool=group=1``: the 784-step task). Train on
    the first ``n_train`` training
    images, validate on the last ``n_valid``, test on the first ``n_test`` test images. ``real_only`` refuses the
    small fallback set (full runs); otherwise no download is tried and the fallback is used where files are absent."""
    train, test = _mnist(bool(cfg["real_only"]))

    def seqs(images, sl):
        imgs = images.images[sl].float()
        if cfg["pool"] > 1:
            imgs = torch.nn.functional.avg_pool2d(imgs.unsqueeze(1), cfg["pool"]).squeeze(1)
        x = pixel_sequences(imgs, permute=True)
        return x.reshape(len(x), -1, cfg["group"])

    tr, va, te = slice(0, cfg["n_train"]), slice(len(train) - cfg["n_valid"], len(train)), slice(0, cfg["n_test"])
    if tr.stop > va.start:
        raise ValueError(f"n_train + n_valid exceed the {len(train)} training images of {train.source}")
    return {
        "train": (seqs(train, tr), train.labels[tr]),
        "valid": (seqs(train, va), train.labels[va]),
        "test": (seqs(test, te), test.labels[te]),
        "source": train.source,
    }


def ptb_data(cfg: dict) -> dict:
    """PTB characters (``<eos>`` at line ends, 50 symbols), each split cut to its first ``*_tokens`` (None: all)."""
    corpus = _ptb(bool(cfg["real_only"]))
    cut = {s: getattr(corpus, s)[: cfg[f"{s}_tokens"]] for s in ("train", "valid", "test")}
    counts = torch.bincount(cut["train"], minlength=corpus.vocab_size).double()
    p = counts[counts > 0] / counts.sum()
    return {**cut, "vocab": corpus.vocab, "source": corpus.source, "unigram_bits": float(-(p * p.log2()).sum())}


@torch.no_grad()
def classify_accuracy(model, x: torch.Tensor, y: torch.Tensor, device, *, chunk: int = 500) -> float:
    """Fraction of sequences whose last-step logits pick the label."""
    hits = sum(
        int((model(x[i : i + chunk].to(device))[:, -1].argmax(-1).cpu() == y[i : i + chunk]).sum())
        for i in range(0, len(y), chunk)
    )
    return hits / len(y)


@torch.no_grad()
def lm_scores(model, ids: torch.Tensor, bptt: int, device, *, rows: int = 64) -> dict:
    """Bits per character and next-character accuracy over a token stream cut into ``rows`` rows and
    non-overlapping windows of ``bptt`` steps, each from a zero state."""
    nats, hits, count = 0.0, 0, 0
    for x, y in bptt_windows(batchify(ids, min(rows, ids.numel() // (bptt + 1) or 1)), bptt):
        logits = model(x.to(device)).cpu()
        nats += float(
            torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="sum")
        )
        hits += int((logits.argmax(-1) == y).sum())
        count += y.numel()
    return {"bpc": bits_per_token(nats / count), "accuracy": hits / count}


def _thin(values, points: int = 1000) -> tuple:
    """(step, mean over blocks) of a per-step series, with at most ``points`` blocks (training curves)."""
    v = np.asarray(values, dtype=float)
    k = max(1, -(-len(v) // points))
    n = len(v) // k * k
    return np.arange(n // k) * k + (k - 1) / 2, v[:n].reshape(-1, k).mean(1)


def _attention_of(model, x, device) -> np.ndarray:
    with torch.no_grad():
        _, attn = model(x.to(device), return_attention=True)
    return block_mean(attention_matrix([(i.cpu(), a.cpu()) for i, a in attn], x.shape[1]).numpy())


def dense_run(cfg: dict, ctx: RunContext) -> dict:
    """Table 4.3: train one model on pMNIST (classify from the last step) or PTB characters (next-character
    prediction at every step), evaluating on the validation and test sets every ``eval_every`` steps (default:
    once per epoch); the test score reported is the one at the best validation score."""
    task = checks.one_of(cfg["task"], ("pmnist", "ptb"), "task")
    kind, device = cfg["model"], ctx.device
    torch.manual_seed(ctx.seed)
    gen = torch.Generator().manual_seed(ctx.seed)
    if task == "pmnist":
        data = pmnist_data(cfg)
        (xtr, ytr), (xva, yva), (xte, yte) = data["train"], data["valid"], data["test"]
        model = Tagger(kind, cfg["group"], cfg["width"], 10, nu=cfg["nu"], rho=cfg["rho"]).to(device)
        per_epoch = len(ytr) // cfg["batch"]

        def batch_fn(k):
            idx = torch.randint(len(ytr), (cfg["batch"],), generator=gen)
            return xtr[idx].to(device), ytr[idx].to(device)

        def loss_fn(m, x, y):
            return torch.nn.functional.cross_entropy(m(x)[:, -1], y)

        def eval_fn(m):
            return {
                "valid_acc": classify_accuracy(m, xva, yva, device),
                "test_acc": classify_accuracy(m, xte, yte, device),
            }
    elif task == "ptb":
        data = ptb_data(cfg)
        ids, V, L = data["train"], len(data["vocab"]), cfg["bptt"]
        model = TokenTagger(kind, V, cfg["embedding"], cfg["width"], nu=cfg["nu"], rho=cfg["rho"]).to(device)
        per_epoch = max(1, len(ids) // (cfg["batch"] * L))

        def batch_fn(k):
            start = torch.randint(len(ids) - L - 1, (cfg["batch"], 1), generator=gen) + torch.arange(L + 1)
            w = ids[start]
            return w[:, :-1].to(device), w[:, 1:].to(device)

        def loss_fn(m, x, y):
            return torch.nn.functional.cross_entropy(m(x).reshape(-1, V), y.reshape(-1))

        def eval_fn(m):
            va, te = lm_scores(m, data["valid"], L, device), lm_scores(m, data["test"], L, device)
            return {
                "valid_bpc": va["bpc"],
                "valid_acc": va["accuracy"],
                "test_bpc": te["bpc"],
                "test_acc": te["accuracy"],
            }
    else:
        raise ValueError(f"task must be 'pmnist' or 'ptb', got {task!r}")
    steps = cfg["steps"] or cfg["epochs"] * per_epoch
    hist = fit(
        model,
        batch_fn,
        loss_fn,
        steps=steps,
        lr=cfg["lr"],
        optimizer="adam",
        clip=1.0,
        eval_fn=eval_fn,
        eval_every=cfg["eval_every"] or per_epoch,
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"{task} {kind}",
        generators=(gen,),
    )
    at, loss = _thin(hist.loss)
    out = {
        "loss_step": at,
        "loss": loss,
        "diverged": hist.diverged,
        "source": data["source"],
        "steps": steps,
        "loss_start": float(np.mean(hist.loss[:10])) if hist.loss else float("nan"),
        "loss_end": float(np.mean(hist.loss[-10:])) if hist.loss else float("nan"),
    }
    if hist.evals:
        ev = {k: np.array([e[k] for e in hist.evals]) for k in hist.evals[0]}
        out.update({f"eval_{k}": v for k, v in ev.items()})
        best = int(np.argmin(ev["valid_bpc"]) if task == "ptb" else np.argmax(ev["valid_acc"]))
        out.update({"test_acc": float(ev["test_acc"][best]), "best_step": int(ev["step"][best])})
        if task == "ptb":
            out["test_bpc"] = float(ev["test_bpc"][best])
    if task == "ptb":
        out["unigram_bits"] = data["unigram_bits"]
    if kind in ("RelRNN", "RelLSTM") and not hist.diverged:  # one test sequence (Figs. B.5, B.7)
        sample = data["test"][0][:1] if task == "pmnist" else data["test"][:L].unsqueeze(0)
        out["attention"] = _attention_of(model, sample, device)
        out["sample"] = sample[0].cpu().numpy()
        if task == "ptb":
            out["sample_text"] = "".join({"<eos>": "¶"}.get(data["vocab"][i], data["vocab"][i]) for i in out["sample"])
    return out


def dense_runs(scale: str) -> list[Run]:
    sizes = DENSE_SIZES[scale]
    runs = []
    for task in ("ptb", "pmnist"):
        base = {k: v for k, v in sizes[task].items() if k != "lr"}
        for m in DENSE_MODELS:
            lr = sizes[task]["lr"]
            runs.append(
                Run(
                    CHAPTER,
                    "dense",
                    f"{task}-{m}-s0",
                    dense_run,
                    dict(task=task, model=m, seed=0, lr=lr[m] if isinstance(lr, dict) else lr, **base),
                )
            )
    return runs


def _num(v) -> float:
    """A thesis entry as a number (``'66%'`` -> 66.0, ``'–'`` -> nan)."""
    if isinstance(v, (int, float)):
        return float(v)
    v = str(v).rstrip("%")
    return float(v) if v.replace(".", "", 1).isdigit() else float("nan")


def dense_scores(col) -> dict:
    """{model: {"bpc", "ptb_acc", "pmnist_acc"}} of our runs (accuracies in %; nan where a run diverged)."""
    out = {}
    for r in col:
        d = out.setdefault(r.config["model"], {})
        if r.config["task"] == "ptb":
            d["bpc"], d["ptb_acc"] = r.get("test_bpc", np.nan), 100 * r.get("test_acc", np.nan)
        else:
            d["pmnist_acc"] = 100 * r.get("test_acc", np.nan)
    return out


def dense_rows(col) -> list[dict]:
    """Table 4.3 with ours beside the thesis's and the gap (ours - thesis), thesis row order; models we do not
    train keep their thesis numbers with '–' for ours."""
    ours = dense_scores(col)
    fmt = {"bpc": "{:.2f}", "ptb_acc": "{:.0f}%", "pmnist_acc": "{:.1f}%"}
    name = {v: k for k, v in PAPER_NAME.items()}
    rows = []
    for paper_name, bpc, acc, pm in TABLE_4_3:
        m = name.get(paper_name, paper_name)
        row = {"model": m}
        for key, label, pv in (
            ("bpc", "PTB BPC", bpc),
            ("ptb_acc", "PTB acc.", acc),
            ("pmnist_acc", "pMNIST acc.", pm),
        ):
            o = ours.get(m, {}).get(key, np.nan)
            gap = o - _num(pv)
            row[f"{label} thesis"] = str(pv)
            row[f"{label} ours"] = "–" if o != o else fmt[key].format(o)
            row[f"{label} gap"] = "–" if gap != gap else f"{gap:+.2f}" if key == "bpc" else f"{gap:+.1f}"
        rows.append(row)
    return rows


def dense_data_note(col) -> str:
    """The data line of Table 4.3's caption: sources, slices and lengths."""
    ptb = [r for r in col if r.config["task"] == "ptb"][0]
    pm = [r for r in col if r.config["task"] == "pmnist"][0]
    c, d = ptb.config, pm.config
    side, g = 28 // d["pool"], d["group"]
    tok = lambda n: "all" if n is None else f"{n:,}"
    return (
        f"{ptb['source']}: {tok(c['train_tokens'])} training / {tok(c['test_tokens'])} test characters, BPTT "
        f"{c['bptt']}, width {c['width']}; {pm['source']}: {d['n_train']:,} / {d['n_test']:,} images"
        + (f" average-pooled to {side}x{side}" if d["pool"] > 1 else "")
        + ", pixels permuted, "
        + (f"{g} per step" if g > 1 else "one per step")
        + f" ({side * side // g} steps), width {d['width']}"
    )


# ------------------------------------------------------------------ Fig. B.1: the nu / rho trade-off (toy)
SCREENING_NOTE = (
    "the linearised model of App. B.3's argument (T = 1,000, the thesis's nu and rho values, 5 relevant "
    "events), not the trained RelLSTM on denoise of Fig. B.1, which is owed"
)


def screening_run(cfg: dict, ctx: RunContext) -> dict:
    """|dL/dh_t| in the linearised screening model for rho in ``rhos`` at nu = ``fixed`` and nu in ``nus`` at
    rho = ``fixed``, with ``events`` relevant inputs at random positions (App. B.3, Fig. B.1)."""
    rng = np.random.default_rng(ctx.seed)
    events = np.sort(rng.choice(cfg["T"], cfg["events"], replace=False))
    out = {"events": events}
    for name, pairs in (
        ("rho", [(cfg["fixed"], r) for r in cfg["rhos"]]),
        ("nu", [(n, cfg["fixed"]) for n in cfg["nus"]]),
    ):
        for nu, rho in pairs:
            r = theory.screened_gradients(cfg["T"], events, nu=nu, rho=rho, lam=cfg["lam"], boost=cfg["boost"])
            value = rho if name == "rho" else nu
            out[f"{name}{value}_grad"] = r["grad"]
            out[f"{name}{value}_kept"] = int(np.isin(events, r["stored"]).sum())
    return out


def screening_runs(scale: str) -> list[Run]:
    return [
        Run(
            CHAPTER,
            "screening",
            "linear",
            screening_run,
            dict(T=1000, events=5, rhos=[3, 8, 18, 25], nus=[3, 8, 18, 25], fixed=15, lam=0.9, boost=4.0, seed=0),
        )
    ]


def event_gradients(col, name: str) -> dict:
    """{value of ``name`` ("rho" or "nu"): smallest |dL/dh_t| over the relevant events}."""
    r = col[0]
    return {v: float(r[f"{name}{v}_grad"][r["events"]].min()) for v in r.config[f"{name}s"]}


def show_screening(col) -> None:
    r = col[0]
    fig, ax = plot.figure(2, 1, width=10, height=3.6, sharey=True)
    for a, name in zip(ax[0], ("rho", "nu")):
        for v, color in zip(r.config[f"{name}s"], ("C3", "C1", "C2", "C0")):
            g = r[f"{name}{v}_grad"][::-1]
            a.plot(
                np.log10(np.clip(g, 1e-300, None)),
                color=color,
                lw=1,
                label=f"{'ρ' if name == 'rho' else 'ν'} = {v} ({r[f'{name}{v}_kept']} of {len(r['events'])} kept)",
            )
        for e in r["events"]:
            a.axvline(r.config["T"] - 1 - e, color="k", lw=0.5, ls=":")
        other = "ν" if name == "rho" else "ρ"
        a.set(xlabel="t, steps back from the end", title=f"{other} = {r.config['fixed']}, λ = {r.config['lam']}")
        a.legend(fontsize=7)
    ax[0, 0].set_ylabel("log₁₀ |∂L/∂h_t|")
    plot.show(fig, col, data=f"no data: {len(r['events'])} relevant events at random positions (dotted)")


def explore_figure(lam: float = 0.9, kappa: int = 5, steps: int = 1000):
    fig, ax = plot.figure(1, 1, width=6, height=3.6)
    for p in theory.PATTERNS:
        ax[0, 0].plot(theory.propagation(p, lam, steps, kappa=kappa), label=p)
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", title=f"λ = {lam:g}, κ = {kappa}")
    ax[0, 0].legend(fontsize=8)
    return fig


FIGURES = declare(
    Figure(
        "propagation",
        propagation_runs,
        items=[
            Item(
                source="Thm 4.4.2, Thm 4.4.3",
                what="gradient propagation: uniform Omega(1/T), sparse Omega(1/kappa^d)",
                data="closed form",
                note="scalar linearised model of the theorems",
            )
        ],
        show=show_propagation,
    ),
    Figure(
        "reach",
        reach_runs,
        items=[
            Item(
                source="§4.5 (relevancy screening)",
                what="gradients reach stored relevant states at any length",
                data="generated",
                note="untrained networks, oracle screening",
            )
        ],
        show=show_reach,
    ),
    Figure(
        "copy",
        copy_runs,
        items=[
            Item(
                source="Table 4.1, Table B.2",
                what="transfer copy and copy accuracy",
                data="copy task, generated",
                note="quick: T = 10, 4 symbols; full: declared subset (T <= 500, 5k steps)",
            ),
            Item(
                source="Fig. 4.1",
                what="attention weights after training on copy and denoise",
                data="",
                note="quick shows RelRNN (MemRNN in full); symbol-focused attention not reproduced at toy scale",
            ),
            Item(
                source="Figs. B.2, B.3",
                what="training curves on copy and denoise (B.3: the LSTM's)",
                data="",
                note="the copy/denoise runs' loss histories; GORU (Fig. B.4) not implemented",
            ),
        ],
        subset=FULL_SUBSET,
    ),
    Figure(
        "denoise",
        denoise_runs,
        items=[
            Item(
                source="Table 4.2, Fig. 4.2 (left)",
                what="denoise accuracy; gradient norms after training",
                data="denoise task, generated",
                note="quick: T = 10, gradients at T = 100",
            )
        ],
        subset=FULL_SUBSET,
    ),
    Figure(
        "memory",
        memory_runs,
        items=[
            Item(
                source="Fig. 4.2 (centre)",
                what="memory vs sequence length",
                data="generated",
                note="saved-for-backward bytes and attended states (peak GPU memory in full); scaling, not OOM marks",
            )
        ],
        show=show_memory,
        table=memory_table,
    ),
    Figure(
        "dense",
        dense_runs,
        items=[
            Item(
                source="Table 4.3",
                what="PTB characters (BPC, accuracy) and pMNIST accuracy",
                data="Penn Treebank characters, MNIST (real files)",
                note="quick: 200 steps on slices (pMNIST pooled to 7x7); full: the thesis's set-up, owed to a GPU",
            ),
            Item(
                source="Figs. B.5, B.6, B.7",
                what="attention on PTB and pMNIST; pMNIST validation curves",
                data="",
                note="RelRNN's attention (the thesis's B.5 is full attention, which ran out of memory)",
            ),
        ],
        subset=DENSE_NOTE,
    ),
    Figure(
        "screening",
        screening_runs,
        items=[
            Item(
                source="Fig. B.1",
                what="nu / rho trade-off: gradients with a smaller buffer or long-term set",
                data="closed form",
                note="linearised model with the screening rule; trained RelLSTM owed",
            )
        ],
        subset=SCREENING_NOTE,
        show=show_screening,
    ),
    Figure(
        "buffer",
        buffer_runs,
        items=[
            Item(
                source="Figs. B.8, B.9",
                what="attention over the short-term buffer only (rho = 0)",
                data="copy and denoise, generated",
                note="quick: 500 updates",
            )
        ],
        subset=FULL_SUBSET,
    ),
)
# the paper's figures and tables that no figure here reproduces (illustrations, say)
NOT_RUN = [
    Item(
        source="Tables B.1, B.3-B.6, Fig. B.4",
        what="MiniGrid; hyper-parameter tables; GORU curves",
        data="",
        note="MiniGrid and GORU not reproduced; Tables B.3-B.6 are the configs used",
    )
]
