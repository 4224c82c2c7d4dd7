"""Trainings on copy and denoise (figures ``copy`` and ``denoise``): Tables 4.1, 4.2 and B.2, the gradient norms of
Fig. 4.2 (left) and the training curves of Figs. B.2 and B.3."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...models.relevancy import Tagger, attention_matrix, hidden_gradient_norms
from ...sweep import Run, RunContext
from ...train import fit
from .common import CHAPTER, PAPER_NAME, TASK_SIZES, smoothed, task_batch

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
MEMRNN_LONGEST = 2000
"""The longest sequence MemRNN is tested on: its full attention costs O(T^2) (about two hours of a CPU core for the
1,000 test sequences at T = 5,000), and the thesis's MemRNN ran out of memory there (Table 4.1)."""
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


def untested(model: str, length: int) -> bool:
    """Whether ``model`` is left untested at sequences of ``length`` (:data:`MEMRNN_LONGEST`)."""
    return model == "MemRNN" and length > MEMRNN_LONGEST


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
            [
                np.nan if hist.diverged or untested(cfg["model"], n) else recall_accuracy(model, task, n, cfg, device)
                for n in lengths
            ]
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
        # in chunks: sequences do not interact and the loss is summed, so each sequence's norms are the same, with a
        # fraction of the memory (a MemRNN at T = 1,000 saves about 0.5 GB a sequence for the backward)
        chunks = [hidden_gradient_norms(model, xb.to(device), yb.to(device), last=cfg["L"]) for xb, yb in _chunks(x, y)]
        norms = torch.cat(chunks).cpu().double()
        out["grad_log10"] = torch.log10(norms.clamp_min(1e-300)).mean(0).numpy()
    return out


GRAD_CHUNK = 4
"""Sequences a gradient probe (Fig. 4.2, left) back-propagates at once."""


def _chunks(x, y):
    return zip(x.split(GRAD_CHUNK), y.split(GRAD_CHUNK))


def _train_runs(task: str, scale: str) -> list[Run]:
    """The trainings of ``task``: every model at every training length; only copy at its shortest length is tested at
    the multiples ``transfer`` of it (Table 4.1), the others at their own length (Tables 4.2, B.2), and only denoise
    at its shortest length measures gradients on sequences of ``grad_T`` (Fig. 4.2, left). A model named in
    ``{task}_longest`` trains up to that length only (:data:`~.common.COPY_SUBSET`)."""
    s = TASK_SIZES[scale]
    keys = ("L", "symbols", "width", "batch", "steps", "lr", "nu", "rho", "eval_batch", "grad_batch")
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
                grad_T=s["grad_T"] if task == "denoise" and min(s["denoise_T"]) == T else None,
                transfer=s["transfer"] if task == "copy" and min(s["copy_T"]) == T else [1],
                **{k: s[k] for k in keys},
            ),
        )
        for T in s[f"{task}_T"]
        for m in s[f"{task}_models"]
        if s.get(f"{task}_longest", {}).get(m, T) >= T
        for seed in s["seeds"]
    ]


def copy_runs(scale: str) -> list[Run]:
    return _train_runs("copy", scale)


def denoise_runs(scale: str) -> list[Run]:
    return _train_runs("denoise", scale)


def accuracy(col, model: str, T: int) -> np.ndarray:
    """Recall accuracy (%) of ``model`` trained at ``T``, mean over seeds, at each evaluated length (NaN where none
    was tested)."""
    rs = col.where(model=model, T=T)
    if not rs:
        raise KeyError(f"no run of {model} at T = {T}")
    acc = np.array([r["accuracy"] for r in rs], dtype=float)
    n = (~np.isnan(acc)).sum(0)  # a length no seed was tested at stays NaN, without numpy's empty-mean warning
    return np.where(n > 0, 100 * np.nansum(acc, 0) / np.maximum(n, 1), np.nan)


def _pct(v) -> str:
    return "OOM" if v is None else ("–" if v != v else f"{v:.0f}%")


def transfer_rows(col) -> list[dict]:
    """Table 4.1: the paper's row (T = 100 ... 5000) beside ours (trained at the smallest T, tested at the same
    multiples of it)."""
    T = min(r.config["T"] for r in col)
    mult = next(r for r in col if r.config["T"] == T).config["transfer"]
    rows = []
    for m in dict.fromkeys(r.config["model"] for r in col):
        ours = accuracy(col, m, T)
        paper = TABLE_4_1.get(PAPER_NAME.get(m, m))
        row = {"model": m}
        for j, k in enumerate(mult):
            label = f"×{k}"
            idx = TABLE_4_1_T.index(100 * k) if 100 * k in TABLE_4_1_T else None
            row[f"{label} paper"] = _pct(paper[idx]) if paper and idx is not None else "–"
            row[f"{label} ours (T={T * k})"] = "not run" if untested(m, T * k) else _pct(ours[j])
        rows.append(row)
    return rows


def _trained_rows(col, paper: dict, paper_T: list) -> list[dict]:
    """One row per model of ``col``: at each training length, its accuracy at that length (mean over seeds, "not run"
    where it has no run) beside the thesis's (``paper``, at lengths ``paper_T``; quick lengths beside its shortest)."""
    lengths = sorted({r.config["T"] for r in col})
    rows = []
    for m in dict.fromkeys(r.config["model"] for r in col):
        pm = paper.get(PAPER_NAME.get(m, m))
        trained = {r.config["T"] for r in col.where(model=m)}
        row = {"model": m}
        for T in lengths:
            k = paper_T.index(T) if T in paper_T else 0  # quick: beside the paper's shortest T
            row[f"paper (T={paper_T[k]})"] = _pct(pm[k]) if pm else "–"
            row[f"ours (T={T})"] = _pct(accuracy(col, m, T)[0]) if T in trained else "not run"
        rows.append(row)
    return rows


def gap_copy(col) -> str:
    """The status page's gap for Tables 4.1 and B.2: each model with a thesis row at the longest transfer length, and
    RelRNN's copy accuracy at each training length, the thesis's beside ours."""
    T = min(r.config["T"] for r in col)
    k = col.where(T=T)[0].config["transfer"][-1]
    at = TABLE_4_1_T.index(100 * k) if 100 * k in TABLE_4_1_T else None
    parts = []
    for m in dict.fromkeys(r.config["model"] for r in col.where(T=T)):
        paper = TABLE_4_1.get(PAPER_NAME.get(m, m))
        if paper is not None and at is not None:
            ours = "untested" if untested(m, T * k) else _pct(accuracy(col, m, T)[-1])
            parts.append(f"{m} {ours} (thesis {_pct(paper[at])})")
    return (
        f"Table 4.1 at {k}x T = {T}: "
        + ", ".join(parts)
        + "; Table B.2, "
        + _by_length(col, "RelRNN", TABLE_B_2, TABLE_B_2_T)
    )


def _by_length(col, m: str, paper: dict, paper_T: list) -> str:
    """``m``'s accuracy at each length it was trained at, the thesis's (``paper``, at lengths ``paper_T``) beside."""
    lengths = sorted({r.config["T"] for r in col.where(model=m)})
    ours = "/".join(_pct(accuracy(col, m, n)[0]).rstrip("%") for n in lengths)
    row = paper[PAPER_NAME.get(m, m)]
    theirs = "/".join(str(row[paper_T.index(n)]) if n in paper_T else "–" for n in lengths)
    theirs += "%" if any(c.isdigit() for c in theirs) else ""
    return f"{m} at T = {'/'.join(map(str, lengths))}: {ours}% (thesis {theirs})"


def gap_denoise(col) -> str:
    """The status page's gap for Table 4.2: each model with a thesis row, at each length it was trained at, the
    thesis's accuracy beside ours."""
    models = [m for m in dict.fromkeys(r.config["model"] for r in col) if PAPER_NAME.get(m, m) in TABLE_4_2]
    return "Table 4.2: " + ", ".join(_by_length(col, m, TABLE_4_2, TABLE_4_2_T) for m in models)


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


UNDERFLOW = float(np.log10(np.finfo(np.float32).smallest_subnormal))
"""log10 of float32's smallest positive number (about -44.85). The gradients are float32, so a mean of log10 norms
below it means the norm underflowed to 0 in some sequences (stored as 1e-300, log10 = -300)."""


def underflow_distance(g) -> int | None:
    """The first distance from the end at which profile ``g`` is below :data:`UNDERFLOW` (None if never)."""
    below = np.flatnonzero(np.asarray(g) < UNDERFLOW)
    return int(below[0]) if len(below) else None


def show_gradients(col) -> None:
    """Fig. 4.2 left, the y axis cut just below :data:`UNDERFLOW` (the curves, not the data, are clipped there)."""
    prof = gradient_profiles(col)
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4", "orthRNN": "C5"}
    floor = UNDERFLOW - 5
    for m, g in prof.items():
        ax[0, 0].plot(np.maximum(g, floor), color=colors.get(m), label=m)
    clipped = any(underflow_distance(g) is not None for g in prof.values())
    if clipped:
        ax[0, 0].axhline(UNDERFLOW, color="grey", ls=":", lw=1)
        ax[0, 0].set_ylim(bottom=floor)
    r = col[0]
    ax[0, 0].set(
        xlabel="distance t from the end of the sequence",
        ylabel="mean log₁₀ ‖∂L/∂h_t‖",
        title=f"denoise, trained at T = {r.config['T']}, measured at T = {r.config['grad_T']}",
    )
    ax[0, 0].legend(fontsize=8)
    note = (
        "; dotted: float32 underflow (below it the gradient is exactly 0 in some sequences; curves cut just below it)"
        if clipped
        else ""
    )
    plot.show(
        fig,
        col,
        data=f"denoise sequences, generated ({r.config['symbols']} symbols, {r.config['L']} to recall); "
        "L = cross-entropy of the recalled symbols" + note,
    )


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
