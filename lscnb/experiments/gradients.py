"""Chapter "Gradients through time and depth": sweeps and figures.

Figures: ``spectra`` (eigenvalues of W and of transition derivatives, per-step radii and the Lyapunov spectrum
of their product), ``rates`` (measured gradient decay rate against the spectral radius and mean-field theory),
``grid`` (gradient norms over the time-depth grid of a stacked RNN) and ``training`` (the adding problem).
"""

from __future__ import annotations

import numpy as np
import torch

from .. import jacobian, plot
from ..batched import fit_batched, twin
from ..data import ADDING_BASELINE, adding_problem
from ..figures import Figure, Item, declare
from ..models import LSTMCell, RNNCell, SequenceModel, Stack
from ..sweep import SEED_OFFSET, Run, RunContext
from ..theory import vanilla
from ..train import fit

CHAPTER = "gradients"
NOTEBOOK = "book/gradients.ipynb"
INPUT_VAR = 0.3
"""Variance of the input drive ``U x_t`` per unit (x has as many channels as h; see the chapter)."""

SIZES = {
    "quick": dict(
        width=128,
        length=300,
        batch=16,
        seeds=3,
        gains=[0.6, 0.8, 1.0, 1.2, 1.5, 2.0],
        spectra_width=128,
        spectra_length=300,
        radius_samples=240,
        grid_width=64,
        grid_depth=8,
        grid_length=60,
        train_length=50,
        train_width=32,
        train_steps=800,
        train_seeds=1,
        train_lr=1e-2,
    ),
    "full": dict(
        width=1024,
        length=1000,
        batch=32,
        seeds=5,
        gains=[0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0],
        spectra_width=512,
        spectra_length=1000,
        radius_samples=60,
        grid_width=256,
        grid_depth=16,
        grid_length=200,
        train_length=100,
        train_width=64,
        train_steps=1500,
        train_seeds=2,
        train_lr=1e-2,
    ),
}
ACTIVATIONS = ("linear", "tanh", "relu")


def _cell(width: int, activation: str, gain: float, seed: int, dtype=torch.float64) -> RNNCell:
    torch.manual_seed(seed)
    return RNNCell(width, width, activation=activation, weight_scale=gain, input_scale=INPUT_VAR**0.5, bias=False).to(
        dtype
    )


# --------------------------------------------------------------------------------------------- spectra
def spectra_run(cfg: dict, ctx: RunContext) -> dict:
    """Eigenvalues of W and of one transition derivative, radii and norms of sampled J_t, Lyapunov spectrum.

    Jacobians and the QR product run on ``ctx.device``; eigenvalues on the CPU (CUDA's ``eig`` is a slow hybrid
    path), for ``radius_samples`` evenly spaced steps."""
    n, T = cfg["width"], cfg["length"]
    device = torch.device(ctx.device)
    cell = _cell(n, cfg["activation"], cfg["gain"], ctx.seed).to(device)
    gen = torch.Generator().manual_seed(ctx.seed + 1)
    x = torch.randn(1, T, n, generator=gen, dtype=torch.float64).to(device)
    J, _ = jacobian.time_jacobians(cell, x)
    J = J[0, T // 5 :]  # drop the transient from h_0 = 0
    sample = J[torch.linspace(0, len(J) - 1, min(cfg["radius_samples"], len(J))).long()].cpu()
    W = cell.weight_hh.detach().cpu()
    return {
        "eig_W": torch.linalg.eigvals(W).numpy(),
        "eig_J": torch.linalg.eigvals(sample[len(sample) // 2]).numpy(),
        "radius_J": jacobian.spectral_radius(sample).numpy(),
        "norm_J": jacobian.singular_values(sample)[:, 0].numpy(),
        "lyapunov": (jacobian.product_log_singular_values(J) / len(J)).cpu().numpy(),
        "radius_W": float(jacobian.spectral_radius(W)),
        "mean_field_rate": vanilla.gradient_rate(g=cfg["gain"], activation=cfg["activation"], input_var=INPUT_VAR),
    }


def spectra_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "spectra",
            f"{act}-g{g}",
            spectra_run,
            dict(
                activation=act,
                gain=g,
                width=s["spectra_width"],
                length=s["spectra_length"],
                radius_samples=s["radius_samples"],
                seed=0,
            ),
        )
        for act in ("linear", "tanh")
        for g in (0.8, 1.0, 1.5)
    ]


def show_spectra(col) -> None:
    fig, ax = plot.figure(3, 1, width=10.5, height=3.4)
    for g, color in zip((0.8, 1.0, 1.5), ("C0", "C1", "C2")):
        lin = col.one(activation="linear", gain=g)
        plot.eigenvalues(ax[0, 0], lin["eig_W"], radius=None, color=color, label=f"g = {g}")
        tanh = col.one(activation="tanh", gain=g)
        plot.eigenvalues(ax[0, 1], tanh["eig_J"], radius=None, color=color, label=f"g = {g}")
        k = np.arange(1, len(tanh["lyapunov"]) + 1)
        ax[0, 2].plot(k, np.exp(tanh["lyapunov"]), color=color, label=f"tanh, g = {g}")
        ax[0, 2].axhline(tanh["mean_field_rate"], color=color, linestyle=":", linewidth=1)
    for a in ax[0, :2]:
        plot.unit_circle(a)
    ax[0, 0].set_title("eigenvalues of W")
    ax[0, 1].set_title("eigenvalues of one $J_t$ (tanh)")
    ax[0, 0].legend(loc="upper right", markerscale=3)
    ax[0, 2].set_yscale("log")
    ax[0, 2].set_xscale("log")
    ax[0, 2].set_xlabel("index i")
    ax[0, 2].set_ylabel(r"$\exp(\lambda_i)$ per step")
    ax[0, 2].set_title("Lyapunov spectrum of $J_T\\cdots J_1$")
    ax[0, 2].legend(loc="lower left")
    plot.show(fig, col, data="Gaussian inputs, generated")


def spectra_table(col) -> list[dict]:
    rows = []
    for r in col:
        rows.append(
            {
                "activation": r.config["activation"],
                "g": r.config["gain"],
                "ρ(W)": r["radius_W"],
                "mean ρ(J_t)": float(np.mean(r["radius_J"])),
                "mean ‖J_t‖₂": float(np.mean(r["norm_J"])),
                "top Lyapunov factor": float(np.exp(r["lyapunov"][0])),
                "mean-field √χ": r["mean_field_rate"],
            }
        )
    return rows


# --------------------------------------------------------------------------------------------- rates
def rate_run(cfg: dict, ctx: RunContext) -> dict:
    """Gradient norm profiles ``||dL/dh_t||`` of one (activation, gain) over seeds, and their fitted rates."""
    n, T, B = cfg["width"], cfg["length"], cfg["batch"]
    device = torch.device(ctx.device)
    profiles, rates, radii = [], [], []
    for seed in range(ctx.seed, ctx.seed + cfg["seeds"]):
        cell = _cell(n, cfg["activation"], cfg["gain"], seed).to(device)
        gen = torch.Generator(device=device).manual_seed(10_000 + seed)
        x = torch.randn(B, T, n, generator=gen, device=device, dtype=torch.float64)
        readout = torch.randn(n, generator=gen, device=device, dtype=torch.float64) / n**0.5
        norms = jacobian.gradient_norms_through_time(cell, x, lambda h: (h[:, -1] @ readout).sum())
        profiles.append(norms.mean(0).cpu().numpy())
        rates.append(float(jacobian.decay_rate(norms, start=cfg["fit_start"], stop=cfg["fit_stop"]).mean()))
        if cfg["activation"] == "linear":  # the prediction for linear cells; a 1024-wide eig costs seconds
            radii.append(float(jacobian.spectral_radius(cell.weight_hh.detach().cpu())))
    return {
        "profiles": np.array(profiles),
        "rates": np.array(rates),
        "radius_W": np.array(radii, dtype=float),
        "mean_field_rate": vanilla.gradient_rate(g=cfg["gain"], activation=cfg["activation"], input_var=INPUT_VAR),
    }


def rate_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    T = s["length"]
    return [
        Run(
            CHAPTER,
            "rates",
            f"{act}-g{g}",
            rate_run,
            dict(
                activation=act,
                gain=g,
                width=s["width"],
                length=T,
                batch=s["batch"],
                seeds=s["seeds"],
                fit_start=T // 15,
                fit_stop=(5 * T) // 6,
                seed=0,
            ),
        )
        for act in ACTIVATIONS
        for g in s["gains"]
    ]


def rate_errors(col) -> dict:
    """Worst relative errors: linear rate vs its own rho(W); tanh/relu mean rate vs mean-field sqrt(chi)."""
    out = {}
    lin = [r for r in col if r.config["activation"] == "linear"]
    out["linear_vs_radius"] = max(float(np.max(np.abs(r["rates"] / r["radius_W"] - 1))) for r in lin)
    out["linear_vs_gain"] = max(float(np.max(np.abs(r["rates"] / r.config["gain"] - 1))) for r in lin)
    for act in ("tanh", "relu"):
        rs = [r for r in col if r.config["activation"] == act]
        out[f"{act}_vs_mean_field"] = max(abs(float(np.mean(r["rates"])) / r["mean_field_rate"] - 1) for r in rs)
    return out


def show_rates(col) -> None:
    fig, ax = plot.figure(2, 1, width=10.5, height=3.6)
    for act, color in zip(ACTIVATIONS, ("C0", "C1", "C2")):
        for g, ls in ((0.8, "-"), (1.0, "--"), (1.5, "-.")):
            found = col.where(activation=act, gain=g)
            if not found:
                continue
            prof = found[0]["profiles"][0]
            k = np.arange(len(prof))[::-1]
            ax[0, 0].plot(k, prof, color=color, linestyle=ls, label=f"{act}, g = {g}")
    ax[0, 0].set_yscale("log")
    ax[0, 0].set_xlabel("steps back from the loss, T − t")
    ax[0, 0].set_ylabel(r"$\|\partial L/\partial h_t\|$")
    ax[0, 0].set_title("gradient norm through time (one seed)")
    ax[0, 0].legend(ncol=3, fontsize=7)
    gains = sorted({r.config["gain"] for r in col})
    fine = np.linspace(min(gains), max(gains), 200)
    for act, color in zip(ACTIVATIONS, ("C0", "C1", "C2")):
        rs = sorted(col.where(activation=act), key=lambda r: r.config["gain"])
        g = [r.config["gain"] for r in rs]
        ax[0, 1].errorbar(
            g,
            [np.mean(r["rates"]) for r in rs],
            yerr=[np.std(r["rates"]) for r in rs],
            fmt="o",
            color=color,
            markersize=4,
            label=f"{act}: measured",
        )
        if act == "linear":
            ax[0, 1].plot(g, [np.mean(r["radius_W"]) for r in rs], "x", color=color, label="linear: ρ(W)")
        theory = [vanilla.gradient_rate(g=x, activation=act, input_var=INPUT_VAR) for x in fine]
        ax[0, 1].plot(fine, theory, color=color, linestyle=":", label=f"{act}: mean field √χ")
    ax[0, 1].axhline(1.0, color="k", linewidth=0.8)
    ax[0, 1].set_xlabel("weight scale g")
    ax[0, 1].set_ylabel("gradient growth per step")
    ax[0, 1].set_title("rate vs theory")
    ax[0, 1].legend(fontsize=7)
    plot.show(fig, col, data="Gaussian inputs, generated")


# --------------------------------------------------------------------------------------------- grid
def grid_run(cfg: dict, ctx: RunContext) -> dict:
    """``||dL/dh[t,l]||`` over the time-depth grid of a stacked tanh RNN, loss at the top layer's last step."""
    n, L, T = cfg["width"], cfg["depth"], cfg["length"]
    torch.manual_seed(ctx.seed)
    cells = [
        RNNCell(n, n, activation="tanh", weight_scale=cfg["gain"], input_scale=cfg["gain"], bias=False)
        for _ in range(L)
    ]
    stack = Stack(cells).to(torch.float64)
    gen = torch.Generator().manual_seed(ctx.seed + 7)
    x = torch.randn(cfg["batch"], T, n, generator=gen, dtype=torch.float64)
    readout = torch.randn(n, generator=gen, dtype=torch.float64) / n**0.5
    grid = jacobian.grid_gradient_norms(stack, x, lambda seqs: (seqs[-1][:, -1] @ readout).sum())
    return {"grid": grid.mean(0).numpy()}  # (T, L)


def grid_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "grid",
            f"g{g}",
            grid_run,
            dict(gain=g, width=s["grid_width"], depth=s["grid_depth"], length=s["grid_length"], batch=4, seed=0),
        )
        for g in (0.8, 1.2, 2.0)
    ]


def show_grid(col) -> None:
    fig, ax = plot.figure(3, 1, width=10.5, height=3.0)
    for a, r in zip(ax[0], col):
        grid = r["grid"]
        plot.heatmap(
            a,
            grid.T,
            log10=True,
            xlabel="time t",
            ylabel="layer l",
            cbar_label=r"$\log_{10}\|\partial L/\partial h_{t,l}\|$",
        )
        a.set_title(f"tanh stack, g = {r.config['gain']}")
    plot.show(fig, col, data="Gaussian inputs, generated")


# --------------------------------------------------------------------------------------------- training
def _adding_setup(cfg: dict, ctx: RunContext):
    """One training run's model (drawn from ``ctx.seed``), its batches and the held-out set."""
    device = torch.device(ctx.device)
    torch.manual_seed(ctx.seed)
    n, T = cfg["width"], cfg["length"]
    if cfg["model"] == "lstm":
        cell = LSTMCell(2, n)
    else:
        cell = RNNCell(2, n, activation="tanh", weight_scale=cfg["gain"], input_scale=1.0)
    model = SequenceModel([cell], 1, readout="last").to(device)
    base = 1_000_003 * (ctx.seed + 1)

    def batch(k):
        return adding_problem(cfg["batch"], T, seed=base + k, device=device)

    xv, yv = adding_problem(1000, T, seed=7, device=device)  # fixed on purpose: one held-out set for every seed
    return model, batch, lambda m: {"mse": _mse(m, xv, yv)}


def _mse(m, x, y):
    return torch.nn.functional.mse_loss(m(x), y)


def _train_outputs(hist) -> dict:
    return {
        "loss": np.array(hist.loss),
        "eval_step": np.array([e["step"] for e in hist.evals]),
        "eval_mse": np.array([e["mse"] for e in hist.evals]),
        "diverged": hist.diverged,
        "diverged_step": hist.diverged_step,
        "final_mse": hist.evals[-1]["mse"] if hist.evals else None,
    }


def train_run(cfg: dict, ctx: RunContext) -> dict:
    """Train a one-layer model on the adding problem; record the loss curve (divergence is recorded, not raised)."""
    model, batch, held_out = _adding_setup(cfg, ctx)
    hist = fit(
        model,
        batch,
        _mse,
        steps=cfg["steps"],
        lr=cfg["lr"],
        clip=1.0,
        eval_fn=held_out,
        eval_every=max(cfg["steps"] // 20, 1),
        checkpoint=ctx.checkpoint,
        progress=ctx.progress,
        desc=f"{cfg['model']} g={cfg.get('gain')}",
    )
    return _train_outputs(hist)


@twin(train_run, key=lambda cfg: {k: v for k, v in cfg.items() if k not in ("gain", "lr", "seed", SEED_OFFSET)})
def train_group(cfgs: list[dict], ctxs: list[RunContext]) -> list[dict]:
    """:func:`train_run` of runs that differ only in gain, learning rate and seed, their models trained together
    (:func:`lscnb.batched.fit_batched`: the same runs up to floating-point rounding; ``--executor batched``).

    Not bit for bit: the losses agree to ~1e-6 for the first tens of steps, then this training, chaotic in its
    rounding (loss spikes at lr 1e-2), separates, as a solo rerun on another CPU does (the committed full runs,
    made on an AMD CPU, and solo reruns on an Intel one end up to 0.1 apart in final MSE). So the committed
    results stay those of :func:`train_run`, and this path is opt-in."""
    setups = [_adding_setup(cfg, ctx) for cfg, ctx in zip(cfgs, ctxs)]
    cfg = cfgs[0]
    hists = fit_batched(
        [model for model, _, _ in setups],
        [batch for _, batch, _ in setups],
        _mse,
        steps=cfg["steps"],
        lr=[c["lr"] for c in cfgs],
        clip=1.0,
        eval_fn=lambda m: setups[0][2](m),  # the held-out set is the same for every run
        eval_every=max(cfg["steps"] // 20, 1),
        progress=ctxs[0].progress,
        desc=f"{cfg['model']} x{len(cfgs)} (batched)",
    )
    return [_train_outputs(h) for h in hists]


TRAIN_MODELS = (("rnn", 0.5), ("rnn", 1.0), ("rnn", 1.5), ("lstm", None))


def train_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "training",
            f"{m}-g{g}-s{seed}" if g else f"{m}-s{seed}",
            train_run,
            dict(
                model=m,
                gain=g,
                width=s["train_width"],
                length=s["train_length"],
                steps=s["train_steps"],
                batch=64,
                lr=s["train_lr"],
                seed=seed,
            ),
        )
        for m, g in TRAIN_MODELS
        for seed in range(s["train_seeds"])
    ]


def final_mse(col) -> dict:
    """Final held-out MSE per model, averaged over seeds (inf for a diverged run)."""
    out = {}
    for m, g in TRAIN_MODELS:
        rs = col.where(model=m, gain=g)
        vals = [r["final_mse"] if r["final_mse"] is not None else float("inf") for r in rs]
        out[f"{m}" + (f" g={g}" if g else "")] = float(np.mean(vals))
    return out


def show_training(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.0, height=3.4)
    a = ax[0, 0]
    for (m, g), color in zip(TRAIN_MODELS, ("C0", "C1", "C2", "C3")):
        for i, r in enumerate(col.where(model=m, gain=g)):
            label = (f"tanh RNN, g = {g}" if m == "rnn" else "LSTM") if i == 0 else None
            a.plot(r["eval_step"], r["eval_mse"], color=color, label=label, alpha=0.9)
            if r["diverged"]:
                a.axvline(r["diverged_step"], color=color, linestyle=":", linewidth=1)
    a.axhline(ADDING_BASELINE, **plot.PAPER, label="baseline 1/6 (predict 1)")
    a.set_yscale("log")
    a.set_xlabel("training step")
    a.set_ylabel("held-out MSE")
    T = col[0].config["length"]
    a.set_title(f"adding problem, T = {T}")
    a.legend()
    plot.show(fig, col, data="adding problem, generated")


# --------------------------------------------------------------------------------------------- explorer
def profile_figure(gain: float = 1.0, activation: str = "tanh", length: int = 200, width: int = 96, seed: int = 0):
    """Gradient norm through time for one network, with the mean-field (or spectral-radius) prediction: the
    function behind the chapter's explorer."""
    cell = _cell(width, activation, gain, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(4, length, width, generator=gen, dtype=torch.float64)
    readout = torch.randn(width, generator=gen, dtype=torch.float64) / width**0.5
    norms = jacobian.gradient_norms_through_time(cell, x, lambda h: (h[:, -1] @ readout).sum()).mean(0).numpy()
    k = np.arange(length)[::-1]
    if activation == "linear":
        rate, label = float(jacobian.spectral_radius(cell.weight_hh.detach())), "ρ(W)^(T−t)"
    else:
        rate, label = vanilla.gradient_rate(g=gain, activation=activation, input_var=INPUT_VAR), "mean field √χ^(T−t)"
    fig, ax = plot.figure(1, 1, width=6.0, height=3.2)
    ax[0, 0].plot(k, norms, label="measured")
    ax[0, 0].plot(k, norms[-1] * rate ** k.astype(float), **plot.THEORY, label=f"{label}, rate {rate:.3f}")
    ax[0, 0].set_yscale("log")
    ax[0, 0].set_xlabel("steps back from the loss, T − t")
    ax[0, 0].set_ylabel(r"$\|\partial L/\partial h_t\|$")
    ax[0, 0].set_title(f"{activation}, g = {gain}, N = {width}")
    ax[0, 0].legend()
    return fig


def gap_rates(col) -> str:
    err = rate_errors(col)
    return (
        f"rate vs ρ(W) (linear) {err['linear_vs_radius']:.1%}; vs mean field: tanh {err['tanh_vs_mean_field']:.1%}, "
        f"ReLU {err['relu_vs_mean_field']:.1%}"
    )


# the smoke test's shrink: config entries that make a full-profile run take seconds (lscnb.figures.smoke_runs)
SMOKE = dict(width=8, length=30, batch=2, seeds=1, radius_samples=3, depth=2, steps=3, fit_start=2, fit_stop=20)

FIGURES = declare(
    Figure(
        "rates",
        rate_runs,
        items=[
            Item(
                source="Pascanu et al. 2013, Sec. 2",
                what="linear RNN: the gradient changes by ρ(W) per step",
                data="generated Gaussian inputs",
                note="",
                gap=gap_rates,
            ),
            Item(
                source="Poole et al. 2016; Chen et al. 2018",
                what="mean-field rate √χ of tanh/ReLU RNNs",
                data="generated Gaussian inputs",
                note="",
                gap=gap_rates,
            ),
        ],
        show=show_rates,
    ),
    Figure(
        "spectra",
        spectra_runs,
        items=[
            Item(
                source="Lyapunov spectrum of the Jacobian product",
                what="QR-stable log singular values of J_T…J_1",
                data="generated Gaussian inputs",
                note="",
            )
        ],
        show=show_spectra,
        table=spectra_table,
    ),
    Figure(
        "grid",
        grid_runs,
        items=[
            Item(
                source="Herranz-Celotti & Rouat 2023, Fig. 1a",
                what="gradient norms over the time-depth grid",
                data="generated Gaussian inputs",
                note="",
            )
        ],
        show=show_grid,
    ),
    Figure(
        "training",
        train_runs,
        items=[
            Item(
                source="Hochreiter & Schmidhuber 1997 (adding problem)",
                what="vanilla RNN vs LSTM on the adding problem",
                data="adding problem, generated",
                note="",
            )
        ],
        show=show_training,
    ),
)
