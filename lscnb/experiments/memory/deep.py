"""Figs. 5, 12, 13: deep recurrent networks at initialisation against nu0, and the autocorrelation of their inputs."""

from __future__ import annotations

import math

import numpy as np
import torch

from ... import plot
from ...config import Profile
from ...sweep import Run, RunContext, gather
from .common import CHAPTER

# --------------------------------------------------------------------------------------------- Figs. 5, 12, 13
DEEP_NU0 = [round(1 - 10 ** (-k / 2), 4) for k in range(5)]  # nu0 = 1 - 1/T, T in {1, 10^0.5, 10, 10^1.5, 100}
DEEP_MODELS = {"crnn": ("crnn", None), "lru": ("lru", None), "gru": ("gru", None), "crnn+LN": ("crnn", "layer")}
DEEP_LABELS = {"crnn": "cRNN", "lru": "LRU", "gru": "GRU (Chrono)", "crnn+LN": "cRNN + LayerNorm"}
GROUP_LABELS = {
    "lam": "λ",
    "w_nu": "ω_ν",
    "w_theta": "ω_θ",
    "other": "all but λ",
    "gru": "GRU params",
    "ff": "ff",
    "all": "all",
}
DEEP_SIZES = {
    "quick": dict(d_in=96, d_model=64, length=256, batch=16, batches=1),
    "full": dict(d_in=768, d_model=256, length=512, batch=16, batches=8),
}
DEEP_DATA = {
    "bert_like": "synthetic BERT-like inputs with R(Δ) = 0.332 δ + 0.044 · 0.997^Δ (the paper's fit of "
    "BERT embeddings of Wikipedia, Fig. 12), generated; not the paper's data",
    "wikipedia": "BERT-base-uncased embeddings of the first Wikipedia articles (20220301.en), as the paper",
}
PAPER_DEEP = (
    "official notebook (Fig. 13, per layer, d = 256, T = 512): cRNN λ-grad² ≈ 2–4e-6 at ν₀ = 0, 5e9–4e10 "
    "at ν₀ = 0.99; LRU all-but-λ 2.5–5e-7 at every ν₀, ω_ν 1e-7–2e-6 (flat), ω_θ 6e-7–2e-6 rising to "
    "1.3e-3–1.7e-2"
)


def deep_inputs(cfg: dict, seed: int) -> torch.Tensor:
    """The inputs of Figs. 5 and 12: ``cfg["data"]`` is ``bert_like`` (offline, drawn from ``seed``) or
    ``wikipedia`` (the paper's pipeline; needs a network and ``transformers``)."""
    from ...data import embeddings

    n = cfg["batch"] * cfg["batches"]
    if cfg["data"] == "wikipedia":
        return embeddings.bert_wikipedia(n, cfg["length"])
    if cfg["data"] != "bert_like":
        raise ValueError(f"data must be 'bert_like' or 'wikipedia', got {cfg['data']!r}")
    gen = torch.Generator().manual_seed(seed)
    return embeddings.bert_like(n, cfg["length"], cfg["d_in"], generator=gen)


def deep_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 5: one randomly initialised 4-block network (``cfg["model"]`` of ``DEEP_MODELS`` at ``nu0``) on the
    inputs, batch by batch: mean |h|^2 of each recurrent layer and each block output, and the mean squared gradient
    of the next-token loss per parameter group (aggregate and per layer), averaged over the batches."""
    from ...models.deep_recurrent import DeepRecurrentNet, signal_propagation

    x = deep_inputs(cfg, cfg["data_seed"] + ctx.seed).to(ctx.device)
    kind, norm = DEEP_MODELS[cfg["model"]]
    model = DeepRecurrentNet(
        x.shape[-1], kind=kind, d_model=cfg["d_model"], depth=cfg["depth"], nu0=cfg["nu0"], norm=norm, seed=ctx.seed
    ).to(ctx.device)
    outs = [signal_propagation(model, xb) for xb in x.split(cfg["batch"])]
    mean = lambda vals: np.mean(np.array(vals, dtype=float), axis=0)  # noqa: E731
    return {
        "h2": mean([o["h2"] for o in outs]).tolist(),
        "out2": mean([o["out2"] for o in outs]).tolist(),
        "loss": float(mean([o["loss"] for o in outs])),
        "grad2": {g: float(mean([o["grad2"][g][0] for o in outs])) for g in outs[0]["grad2"]},
        "grad2_layers": {g: mean([o["grad2"][g][1] for o in outs]).tolist() for g in outs[0]["grad2"] if g != "all"},
    }


def deep_runs(scale: str, data: str = "bert_like") -> list[Run]:
    size = DEEP_SIZES[scale]
    return [
        Run(
            CHAPTER,
            "deep",
            f"{model}-nu{nu0}" + ("" if data == "bert_like" else f"-{data}"),
            deep_run,
            dict(model=model, nu0=nu0, depth=4, seed=0, data=data, data_seed=0, **size),
        )
        for model in DEEP_MODELS
        for nu0 in DEEP_NU0
    ]


def collect_deep(profile: Profile, data: str = "bert_like"):
    """Figs. 5 and 13; ``data="wikipedia"`` runs the paper's real inputs instead (network needed)."""
    return gather(
        lambda scale: deep_runs(scale, data),
        profile,
        subset="synthetic inputs with the paper's measured autocorrelation (no BERT/Wikipedia offline); "
        "128 sequences, one initialisation seed"
        if data == "bert_like"
        else "one initialisation seed",
    )


def _deep_axis(ax, nus):
    ax.set_xticks([math.log10(1 / (1 - nu)) for nu in nus], [f"{nu:g}" for nu in nus])
    ax.set(xlabel="ν₀", yscale="log")


def _deep_series(col, model, fn):
    rs = sorted(col.where(model=model), key=lambda r: r.config["nu0"])
    return [math.log10(1 / (1 - r.config["nu0"])) for r in rs], [fn(r) for r in rs]


def show_deep(col) -> None:
    """Fig. 5: (A) E h^2 after layers 1 and 4 against nu0; (B) mean squared gradient per parameter group; (C) the
    cRNN with and without LayerNorm."""
    fig, ax = plot.figure(3, 1, width=14, height=4.2)
    colors = {"crnn": "C0", "lru": "C1", "gru": "C2", "crnn+LN": "C3"}
    for model in ("crnn", "lru", "gru"):
        for layer, alpha in ((0, 0.45), (3, 1.0)):
            x, y = _deep_series(col, model, lambda r: r["out2"][layer])
            ax[0, 0].plot(
                x, y, "o-", color=colors[model], alpha=alpha, label=f"{DEEP_LABELS[model]}, block {layer + 1}"
            )
            x, y = _deep_series(col, model, lambda r: r["h2"][layer])
            ax[0, 0].plot(x, y, ":", color=colors[model], alpha=alpha)
    styles = {"lam": "o-", "w_nu": "s-", "w_theta": "^-", "other": "o--", "gru": "s-", "ff": "o--"}
    for model in ("crnn", "lru", "gru"):
        for group in [g for g in styles if col.where(model=model) and g in col.where(model=model)[0]["grad2"]]:
            x, y = _deep_series(col, model, lambda r: r["grad2"][group])
            ax[0, 1].plot(
                x, y, styles[group], color=colors[model], label=f"{DEEP_LABELS[model]}: {GROUP_LABELS[group]}"
            )
    for model in ("crnn", "crnn+LN"):
        for group, style in (("all", "o-"), ("lam", "^--")):
            x, y = _deep_series(col, model, lambda r: r["grad2"][group])
            ax[0, 2].plot(x, y, style, color=colors[model], label=f"{DEEP_LABELS[model]}: {GROUP_LABELS[group]}")
    nus = sorted({r.config["nu0"] for r in col})
    for a, (title, ylabel) in zip(
        ax[0],
        (
            ("(5A) activity", "E[h²] (solid: block output; dotted: recurrent state)"),
            ("(5B) gradients", "E[(dL/dθ)²] per group"),
            ("(5C) LayerNorm, cRNN", "E[(dL/dθ)²]"),
        ),
    ):
        _deep_axis(a, nus)
        a.set(title=title, ylabel=ylabel)
        a.legend(fontsize=6.5)
    plot.show(
        fig,
        col,
        data=DEEP_DATA[col[0].config["data"]],
        note="4 blocks, next-token loss, at initialisation; ν₀ sets moduli in [ν₀, (1+ν₀)/2] (cRNN, LRU) or "
        "Chrono T in [1/(1−ν₀), 2/(1−ν₀)] (GRU).",
    )


def show_deep_layers(col) -> None:
    """Fig. 13: the gradients of Fig. 5B resolved per layer (shades: layers 1 to 4)."""
    panels = [("crnn", ("lam", "other")), ("lru", ("w_nu", "w_theta", "other")), ("gru", ("gru", "ff"))]
    fig, ax = plot.figure(3, 1, width=14, height=4)
    for a, (model, groups) in zip(ax[0], panels):
        for j, group in enumerate(groups):
            depth = len(col.where(model=model)[0]["grad2_layers"][group])
            for layer in range(depth):
                x, y = _deep_series(col, model, lambda r: r["grad2_layers"][group][layer])
                a.plot(
                    x,
                    y,
                    "o-",
                    color=f"C{j}",
                    alpha=0.35 + 0.65 * layer / max(1, depth - 1),
                    markersize=3,
                    label=f"{GROUP_LABELS[group]}, layer {layer + 1}",
                )
        _deep_axis(a, sorted({r.config["nu0"] for r in col}))
        a.set(title=f"(13) {DEEP_LABELS[model]}", ylabel="E[(dL/dθ)²] per layer")
        a.legend(fontsize=6, ncol=2)
    plot.show(
        fig,
        col,
        data=DEEP_DATA[col[0].config["data"]],
        note="Per-layer means (encoder and decoder excluded; they enter the aggregate of Fig. 5B only).",
    )


def deep_ratios(col) -> dict:
    """``{(model, quantity): value at the largest nu0 / value at nu0 = 0}`` for quantities ``h2_L`` (recurrent
    state of layer L), ``out2_L`` (block output) and every gradient group."""
    out = {}
    for model in DEEP_MODELS:
        rs = sorted(col.where(model=model), key=lambda r: r.config["nu0"])
        if len(rs) < 2:
            continue
        lo, hi = rs[0], rs[-1]
        for layer in range(len(lo["h2"])):
            out[(model, f"h2_{layer + 1}")] = hi["h2"][layer] / lo["h2"][layer]
            out[(model, f"out2_{layer + 1}")] = hi["out2"][layer] / lo["out2"][layer]
        for g in lo["grad2"]:
            out[(model, g)] = hi["grad2"][g] / lo["grad2"][g]
    return out


def deep_table(col) -> list[dict]:
    """Ours beside the paper's: each model's quantities at the smallest and largest nu0 and their ratio."""
    rows = []
    for model in DEEP_MODELS:
        rs = sorted(col.where(model=model), key=lambda r: r.config["nu0"])
        if len(rs) < 2:
            continue
        lo, hi = rs[0], rs[-1]
        pairs = [
            ("E h² (state, layer 4)", lo["h2"][-1], hi["h2"][-1]),
            ("E h² (block 4 output)", lo["out2"][-1], hi["out2"][-1]),
        ]
        pairs += [(f"grad² {GROUP_LABELS[g]}", lo["grad2"][g], hi["grad2"][g]) for g in lo["grad2"]]
        for what, a, b in pairs:
            rows.append(
                {
                    "model": DEEP_LABELS[model],
                    "quantity": what,
                    f"ν₀ = {lo.config['nu0']:g}": a,
                    f"ν₀ = {hi.config['nu0']:g}": b,
                    "ratio": b / a,
                }
            )
    return rows


def gap_deep(col) -> str:
    r = deep_ratios(col)
    if ("crnn", "lam") in r and ("lru", "w_theta") in r:
        return (
            f"ν₀ = 0 → 0.99: cRNN λ-grad² ×{r[('crnn', 'lam')]:.1e}, LRU ω_θ ×{r[('lru', 'w_theta')]:.1e}, "
            f"ω_ν ×{r[('lru', 'w_nu')]:.2g}, GRU params ×{r[('gru', 'gru')]:.2g}; paper: {PAPER_DEEP}"
        )
    return "not computed"


AUTOCORR_SIZES = {
    "quick": dict(batch=64, length=512, d_in=96, max_lag=256),
    "full": dict(batch=128, length=512, d_in=768, max_lag=510),
}


def autocorrelation_run(cfg: dict, ctx: RunContext) -> dict:
    """Fig. 12: the empirical autocorrelation of the inputs of Fig. 5, and its two-component log-linear fit."""
    from ...data import embeddings

    x = deep_inputs(dict(cfg, batches=1), cfg["data_seed"] + ctx.seed)
    R = embeddings.autocorrelation(x, cfg["max_lag"])
    return {"R": R, **{f"fit_{k}": v for k, v in embeddings.fit_two_component(R).items()}}


def autocorrelation_runs(scale: str, data: str = "bert_like") -> list[Run]:
    return [
        Run(
            CHAPTER, "autocorrelation", data, autocorrelation_run, dict(data=data, data_seed=1, **AUTOCORR_SIZES[scale])
        )
    ]


def collect_autocorrelation(profile: Profile, data: str = "bert_like"):
    return gather(lambda scale: autocorrelation_runs(scale, data), profile)


def show_autocorrelation(col) -> None:
    from ...data.embeddings import PAPER_AUTOCORRELATION as paper

    r = col[0]
    R = r["R"]
    lags = np.arange(R.size)
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    ax[0, 0].plot(lags[1:], R[1:], color="C0", label="measured R(Δ), Δ ≥ 1")
    ax[0, 0].plot(
        lags[1:],
        r["fit_slow"] * r["fit_rho"] ** lags[1:],
        color="C1",
        label=f"our fit {r['fit_slow']:.3f} · {r['fit_rho']:.4f}^Δ",
    )
    ax[0, 0].plot(
        lags[1:],
        paper["slow"] * paper["rho"] ** lags[1:],
        **plot.PAPER,
        label=f"paper's fit {paper['slow']} · {paper['rho']}^Δ",
    )
    ax[0, 0].set(
        yscale="log",
        xlabel="lag Δ",
        ylabel="R(Δ)",
        title=f"(12) input autocorrelation; R(0) = {R[0]:.3f} (paper's fit: {paper['white'] + paper['slow']:.3f})",
    )
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data=DEEP_DATA[r.config["data"]])
