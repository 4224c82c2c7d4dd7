"""Chapter "Recurrence and self-attention: relevancy screening" (Kerg et al. 2020; thesis ch. 4).

Figures: ``propagation`` (Thms 4.4.2 and 4.4.3 in the scalar linearised model: no attention, uniform, sparse and
windowed attention), ``reach`` (the gradient reaching a stored relevant state in a nonlinear RelRNN, against
the plain RNN with the same weights, as the sequence grows), ``copy`` (trainings on copy: Tables 4.1 and B.2,
Fig. 4.1 left), ``denoise`` (trainings on denoise: Table 4.2, Fig. 4.2 left, Fig. 4.1 right) and ``memory``
(activation memory and stored states vs T: Fig. 4.2 centre).
"""
from __future__ import annotations

import numpy as np
import torch

from .. import plot
from ..config import Profile
from ..data import copy_memory, copy_memory_baseline, denoise
from ..memprof import saved_tensor_bytes
from ..models.relevancy import RelRNN, Tagger, attention_matrix, hidden_gradient_norms
from ..sweep import Run, gather
from ..theory import relevancy as theory
from ..train import fit

CHAPTER = "relevancy"
NOTEBOOK = "book/relevancy.ipynb"

SIZES = {"quick": dict(lengths=[50, 100, 200, 500, 1000], seeds=3, width=32),
         "full": dict(lengths=[50, 100, 200, 500, 1000, 2000, 5000], seeds=10, width=128)}
TABLE_4_1 = {"orth-RNN": [99, 4, 16, 10, 0], "expRNN": [100, 86, 73, 58, 50], "MemRNN": [99, 99, 99, 92, None],
             "RelRNN": [100, 99, 99, 99, 99], "LSTM": [99, 64, 48, 19, 14], "h-detach": [100, 91, 77, 51, 42],
             "SAB": [99, 95, 95, 95, 95], "RelLSTM": [100, 99, 99, 99, 99]}


def propagation_run(cfg: dict, ctx) -> dict:
    """g(k) for the four attention patterns, and the measured uniform-attention exponent for several lam."""
    out = {p: theory.propagation(p, cfg["lam"], cfg["steps"], kappa=cfg["kappa"]) for p in theory.PATTERNS}
    slopes = []
    for lam in cfg["lams"]:
        g = theory.propagation("uniform", lam, 4001)
        slopes.append(np.log(g[4000] / g[400]) / np.log(10))
    out["slopes"] = np.array(slopes)
    return out


def propagation_runs(scale: str) -> list[Run]:
    return [Run(CHAPTER, "propagation", "scalar", propagation_run,
                dict(lam=0.9, kappa=5, steps=1001, lams=[0.3, 0.6, 0.9], seed=0))]


def fig_propagation(profile: Profile):
    return gather(propagation_runs, profile)


def show_propagation(col) -> None:
    r = col[0]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.8)
    names = {"none": "no attention (RNN)", "uniform": "uniform attention (all past states)",
             "sparse": f"sparse: stored event + last {r.config['kappa'] - 1}", "window": f"window of {r.config['kappa']}"}
    for p, color in zip(theory.PATTERNS, ("C0", "C1", "C3", "C2")):
        ax[0, 0].plot(r[p], color=color, label=names[p])
    ax[0, 0].axhline(theory.sparse_plateau(r.config["lam"], r.config["kappa"]), **plot.THEORY, label="sparse plateau (closed form)")
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", ylabel="|d s_{t+k} / d h_t|",
                 title=f"linearised model, λ = {r.config['lam']}")
    ax[0, 0].legend(fontsize=7)
    plot.show(fig, col, data="closed-form recursion (no data)")


def reach_run(cfg: dict, ctx) -> dict:
    """||dL/dh_0|| with L = sum of the last macro-state, for a RelRNN whose screening keeps h_0 (an oracle) and
    for the plain RNN with the same weights, over seeds and lengths."""
    rel, plain = [], []
    for seed in range(cfg["seeds"]):
        torch.manual_seed(seed)
        model = RelRNN(4, cfg["width"], nu=5, rho=5).double()
        x = torch.randn(2, cfg["length"], 4, generator=torch.Generator().manual_seed(100 + seed), dtype=torch.float64)
        for att, sink in ((True, rel), (False, plain)):
            hs = []
            model(x, pin=(0,), attention=att, hidden=hs)[:, -1].sum().backward()
            sink.append(float(hs[0].grad.norm()))
            model.zero_grad()
    return {"relrnn": np.array(rel), "rnn": np.array(plain)}


def reach_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "reach", f"T{T}", reach_run, dict(length=T, seeds=s["seeds"], width=s["width"], seed=0))
            for T in s["lengths"]]


def fig_reach(profile: Profile):
    return gather(reach_runs, profile)


def show_reach(col) -> None:
    rs = sorted(col, key=lambda r: r.config["length"])
    T = [r.config["length"] for r in rs]
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    ax[0, 0].plot(T, [r["relrnn"].mean() for r in rs], "o-", color="C3", label="RelRNN (ν = ρ = 5), h₀ kept as relevant")
    ax[0, 0].plot(T, [max(r["rnn"].mean(), 1e-300) for r in rs], "o-", color="C0", label="plain tanh RNN, same weights")
    ax[0, 0].set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="‖∂L/∂h₀‖", title="gradient reaching the first state")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="Gaussian inputs, generated; untrained networks")


TABLE_4_2 = {"orth-RNN": [90, 71, 61, 29, 3], "expRNN": [34, 25, 20, 16, 11], "MemRNN": [99, 99, 99, 99, None],
             "RelRNN": [100, 99, 99, 99, 99], "LSTM": [82, 41, 33, 21, 15], "GORU": [92, 93, 91, 93, 73],
             "SAB": [99, 99, 99, 99, 99], "RelLSTM": [100, 99, 99, 99, 99]}
TABLE_4_2_T = [100, 300, 500, 1000, 2000]
TABLE_4_1_T = [100, 200, 400, 2000, 5000]
TABLE_B_2 = {"LSTM": [100, 100, 100, 12, 12, 12], "orth-RNN": [100, 100, 100, 100, 80, 11],
             "expRNN": [100, 100, 100, 100, 100, 100], "MemRNN": [100, 100, 100, 100, 100, None],
             "SAB": [100] * 6, "RelRNN": [100] * 6, "RelLSTM": [100] * 6}
TABLE_B_2_T = [100, 200, 300, 500, 1000, 2000]
TABLE_4_3 = [("RNN", 1.56, "66%", "90.4%"), ("orth-RNN", 1.53, "66%", "93.4%"), ("expRNN", 1.49, "68%", "96.6%"),
             ("RelRNN", 1.43, "69%", "92.8%"), ("LSTM", 1.36, "73%", "91.1%"), ("h-detach", "–", "–", "92.3%"),
             ("SAB", 1.37, "–", "94.2%"), ("RelLSTM", 1.36, "73%", "94.3%")]
PAPER_NAME = {"orthRNN": "orth-RNN"}
"""Our model names that the thesis spells differently."""

TASK_SIZES = {
    "quick": dict(T=10, L=3, symbols=4, width=32, batch=32, steps=1000, lr=5e-3, nu=5, rho=5, eval_batch=100,
                  copy_models=["RelRNN", "LSTM"], denoise_models=["RelRNN", "LSTM", "RNN"],
                  copy_T=[10], denoise_T=[10], transfer=[1, 2, 4, 20], grad_T=100, grad_batch=32, seeds=[0],
                  memory_T=[25, 50, 100, 200], memory_width=32, memory_batch=4),
    "full": dict(T=100, L=10, symbols=8, width=128, batch=32, steps=5000, lr=1e-3, nu=10, rho=10, eval_batch=1000,
                 copy_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
                 denoise_models=["RNN", "orthRNN", "LSTM", "MemRNN", "RelRNN", "RelLSTM"],
                 copy_T=[100, 200, 500], denoise_T=[100, 300, 500], transfer=[1, 2, 4, 20, 50], grad_T=1000,
                 grad_batch=32, seeds=[0], memory_T=[200, 400, 800, 1200, 1600, 2000], memory_width=128,
                 memory_batch=10),
}
FULL_SUBSET = ("one seed; 5,000 Adam updates of batch 32 at lr 1e-3 (RMSprop for orthRNN) instead of the code's "
               "50,000-100,000; copy trained at T = 100, 200, 500 and denoise at T = 100, 300, 500 only; "
               "no expRNN, h-detach, SAB, GORU")


def task_batch(task: str, batch: int, T: int, *, L: int, symbols: int, generator) -> tuple:
    """A copy (length T + 2L) or denoise (T blanks, length T + 2L) batch in the thesis's convention."""
    if task == "copy":
        return copy_memory(batch, T - 1, n_symbols=symbols, length=L, generator=generator)
    if task == "denoise":
        return denoise(batch, T, n_symbols=symbols, length=L, generator=generator)
    raise ValueError(f"task must be 'copy' or 'denoise', got {task!r}")


def recall_accuracy(model, task: str, T: int, cfg: dict, device, *, seed: int = 12345, chunk: int = 100) -> float:
    """Fraction of the L recalled symbols predicted correctly (what Tables 4.1, 4.2 and B.2 report)."""
    gen, hits, total = torch.Generator().manual_seed(seed), 0, 0
    model.eval()
    with torch.no_grad():
        for start in range(0, cfg["eval_batch"], chunk):
            x, y = task_batch(task, min(chunk, cfg["eval_batch"] - start), T, L=cfg["L"], symbols=cfg["symbols"],
                              generator=gen)
            pred = model(x.to(device)).argmax(-1).cpu()
            hits += int((pred[:, -cfg["L"]:] == y[:, -cfg["L"]:]).sum())
            total += y[:, -cfg["L"]:].numel()
    model.train()
    return hits / total


def train_run(cfg: dict, ctx) -> dict:
    """Train one model on copy or denoise (per-step cross-entropy averaged over the sequence, as in the code),
    then measure recall accuracy at the training length and longer ones, the attention matrix of one sequence
    (attentive models) and, where asked, ``log10 ||dL/dh_t||`` on longer sequences (Fig. 4.2, left)."""
    task, T, device = cfg["task"], cfg["T"], getattr(ctx, "device", "cpu")
    torch.manual_seed(cfg["seed"])
    gen = torch.Generator().manual_seed(cfg["seed"])
    x0, _ = task_batch(task, 1, T, L=cfg["L"], symbols=cfg["symbols"], generator=gen)
    classes = cfg["symbols"] + 1
    model = Tagger(cfg["model"], x0.shape[-1], cfg["width"], classes, nu=cfg["nu"], rho=cfg["rho"]).to(device)

    def batch_fn(k):
        x, y = task_batch(task, cfg["batch"], T, L=cfg["L"], symbols=cfg["symbols"], generator=gen)
        return x.to(device), y.to(device)

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x).reshape(-1, classes), y.reshape(-1))

    orth = cfg["model"] == "orthRNN"
    hist = fit(model, batch_fn, loss_fn, steps=cfg["steps"], lr=cfg["lr"], optimizer="rmsprop" if orth else "adam",
               clip=1.0, checkpoint=getattr(ctx, "checkpoint", None), progress=getattr(ctx, "progress", False),
               desc=f"{task} {cfg['model']} T={T}")
    lengths = [T * m for m in cfg["transfer"]]
    out = {"loss": np.array(hist.loss), "diverged": hist.diverged, "lengths": np.array(lengths),
           "baseline": cfg["L"] * np.log(cfg["symbols"]) / (T + 2 * cfg["L"]),
           "accuracy": np.array([np.nan if hist.diverged else recall_accuracy(model, task, n, cfg, device)
                                 for n in lengths])}
    if cfg["model"] in ("MemRNN", "RelRNN", "RelLSTM") and not hist.diverged:
        x, _ = task_batch(task, 1, T, L=cfg["L"], symbols=cfg["symbols"], generator=torch.Generator().manual_seed(7))
        with torch.no_grad():
            _, attn = model(x.to(device), return_attention=True)
        out["attention"] = attention_matrix([(i.cpu(), a.cpu()) for i, a in attn], x.shape[1]).numpy()
        out["tokens"] = x[0].argmax(-1).numpy()
    if cfg.get("grad_T") and not hist.diverged:
        x, y = task_batch(task, cfg["grad_batch"], cfg["grad_T"], L=cfg["L"], symbols=cfg["symbols"],
                          generator=torch.Generator().manual_seed(8))
        norms = hidden_gradient_norms(model, x.to(device), y.to(device), last=cfg["L"]).cpu().double()
        out["grad_log10"] = torch.log10(norms.clamp_min(1e-300)).mean(0).numpy()
    return out


def _train_runs(task: str, scale: str) -> list[Run]:
    s = TASK_SIZES[scale]
    keys = ("L", "symbols", "width", "batch", "steps", "lr", "nu", "rho", "eval_batch", "transfer", "grad_batch")
    return [Run(CHAPTER, task, f"{m}-T{T}-s{seed}", train_run,
                dict(task=task, model=m, T=T, seed=seed, grad_T=s["grad_T"] if task == "denoise" else None,
                     **{k: s[k] for k in keys}))
            for T in s[f"{task}_T"] for m in s[f"{task}_models"] for seed in s["seeds"]]


def copy_runs(scale: str) -> list[Run]:
    return _train_runs("copy", scale)


def denoise_runs(scale: str) -> list[Run]:
    return _train_runs("denoise", scale)


def fig_copy(profile: Profile):
    return gather(copy_runs, profile, subset=FULL_SUBSET)


def fig_denoise(profile: Profile):
    return gather(denoise_runs, profile, subset=FULL_SUBSET)


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
            k = paper_T.index(T) if T in paper_T else 0      # quick: beside the paper's shortest T
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
    ax[0, 0].set(xlabel="distance t from the end of the sequence", ylabel="mean log₁₀ ‖∂L/∂h_t‖",
                 title=f"denoise, trained at T = {r.config['T']}, measured at T = {r.config['grad_T']}")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data=f"denoise sequences, generated ({r.config['symbols']} symbols, {r.config['L']} to recall); "
                             "L = cross-entropy of the recalled symbols")


def heatmap_model(col) -> str:
    """MemRNN (the thesis's Fig. 4.1) where it was trained, else RelRNN (the quick profile)."""
    return "MemRNN" if col.where(model="MemRNN") else "RelRNN"


def heatmap_of(col, model: str | None = None) -> tuple:
    r = min(col.where(model=model or heatmap_model(col)), key=lambda r: r.config["T"])
    return r["attention"], r["tokens"]


def symbol_attention_ratio(A, tokens, symbols: int, L: int) -> float:
    """Attention mass on the symbol positions during the last ``L`` (recall) steps, divided by their uniform share
    (number of symbol positions / number of attended states), averaged over those steps."""
    A, tokens = np.asarray(A), np.asarray(tokens)
    sym = (tokens > 0) & (tokens <= symbols)
    T = len(tokens)
    ratios = [A[t, :t][sym[:t]].sum() / (sym[:t].sum() / t) for t in range(T - L, T)]
    return float(np.mean(ratios))


def show_heatmaps(copy_col, denoise_col) -> None:
    fig, ax = plot.figure(2, 1, width=9, height=3.8)
    for a, (name, col) in zip(ax[0], (("copy", copy_col), ("denoise", denoise_col))):
        model = heatmap_model(col)
        A, tokens = heatmap_of(col, model)
        plot.heatmap(a, A, xlabel="attended state i", ylabel="querying step t", cbar_label="α_{i,t}", vmin=0)
        marks = np.flatnonzero((tokens > 0) & (tokens <= col[0].config["symbols"]))
        a.plot(marks, np.full(len(marks), -0.5), "v", color="w", markersize=5, clip_on=False)
        a.set_title(f"{model} on {name} (▼ symbol positions)")
    plot.show(fig, copy_col, denoise_col, data="one generated sequence per task at the training length")


def memory_run(cfg: dict, ctx) -> dict:
    """Bytes autograd saves for one forward pass (loss on every step) and the number of stored states attended at
    the last step, per model, at length ``T`` (Fig. 4.2 centre; on CUDA also the peak allocated memory)."""
    device = getattr(ctx, "device", "cpu")
    torch.manual_seed(cfg["seed"])
    x, y = task_batch("denoise", cfg["batch"], cfg["T"], L=10, symbols=8, generator=torch.Generator().manual_seed(0))
    x, y = x.to(device), y.to(device)
    out = {}
    for m in cfg["models"]:
        model = Tagger(m, x.shape[-1], cfg["width"], 9, nu=cfg["nu"], rho=cfg["rho"]).to(device)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        saved, loss = saved_tensor_bytes(lambda: torch.nn.functional.cross_entropy(model(x).reshape(-1, 9), y.reshape(-1)))
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
    return [Run(CHAPTER, "memory", f"T{T}", memory_run,
                dict(T=T, models=models, width=s["memory_width"], batch=s["memory_batch"], nu=s["nu"], rho=s["rho"],
                     seed=0)) for T in s["memory_T"]]


def fig_memory(profile: Profile):
    return gather(memory_runs, profile)


def memory_table(col) -> dict:
    """{model: (lengths, saved bytes, stored states)} sorted by length."""
    rs = sorted(col, key=lambda r: r.config["T"])
    T = np.array([r.config["T"] for r in rs])
    return {m: (T, np.array([r[f"{m}_saved_bytes"] for r in rs], float), np.array([r[f"{m}_stored_states"] for r in rs]))
            for m in rs[0].config["models"]}


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def show_memory(col) -> None:
    tab = memory_table(col)
    fig, ax = plot.figure(2, 1, width=9.5, height=3.6)
    colors = {"RNN": "C0", "LSTM": "C2", "MemRNN": "C3", "RelRNN": "C1", "RelLSTM": "C4"}
    for m, (T, b, k) in tab.items():
        ax[0, 0].plot(T, b / 2 ** 20, "o-", color=colors[m], label=f"{m} (slope {loglog_slope(T, b):.2f})")
        ax[0, 1].plot(T, k, "o-", color=colors[m], label=m)
    ax[0, 0].set(xscale="log", yscale="log", xlabel="sequence length T", ylabel="MiB saved for backward",
                 title="activation memory of one training step")
    ax[0, 1].set(xlabel="sequence length T", ylabel="states attended at the last step", title="attention memory")
    ax[0, 0].legend(fontsize=7)
    ax[0, 1].legend(fontsize=7)
    plot.show(fig, col, data="denoise sequences, generated; untrained networks, one forward pass")


def explore_figure(lam: float = 0.9, kappa: int = 5, steps: int = 1000):
    fig, ax = plot.figure(1, 1, width=6, height=3.6)
    for p in theory.PATTERNS:
        ax[0, 0].plot(theory.propagation(p, lam, steps, kappa=kappa), label=p)
    ax[0, 0].set(yscale="log", ylim=(1e-12, 3), xlabel="k", title=f"λ = {lam:g}, κ = {kappa}")
    ax[0, 0].legend(fontsize=8)
    return fig


FIGURES = {"propagation": propagation_runs, "reach": reach_runs, "copy": copy_runs, "denoise": denoise_runs,
           "memory": memory_runs}

REPRODUCES = [
    {"source": "Thm 4.4.2, Thm 4.4.3", "what": "gradient propagation: uniform Omega(1/T), sparse Omega(1/kappa^d)",
     "figure": "propagation", "data": "closed form", "note": "scalar linearised model of the theorems"},
    {"source": "§4.5 (relevancy screening)", "what": "gradients reach stored relevant states at any length",
     "figure": "reach", "data": "generated", "note": "untrained networks, oracle screening"},
    {"source": "Table 4.1, Table B.2", "what": "transfer copy and copy accuracy", "figure": "copy",
     "data": "copy task, generated", "note": "quick: T = 10, 4 symbols; full: declared subset (T <= 500, 5k steps)"},
    {"source": "Table 4.2, Fig. 4.2 (left)", "what": "denoise accuracy; gradient norms after training",
     "figure": "denoise", "data": "denoise task, generated", "note": "quick: T = 10, gradients at T = 100"},
    {"source": "Fig. 4.1", "what": "attention weights after training on copy and denoise", "figure": "copy",
     "data": "", "note": "quick shows RelRNN (MemRNN in full); symbol-focused attention not reproduced at toy scale"},
    {"source": "Fig. 4.2 (centre)", "what": "memory vs sequence length", "figure": "memory", "data": "generated",
     "note": "saved-for-backward bytes and attended states (peak GPU memory in full); scaling, not OOM marks"},
    {"source": "Table 4.3, Tables B.3-B.6, Figs. B.1-B.9, Table B.1", "what": "PTB, pMNIST, MiniGrid; ablations",
     "figure": None, "data": "", "note": "not reproduced yet (Table 4.3 numbers shown)"},
]
