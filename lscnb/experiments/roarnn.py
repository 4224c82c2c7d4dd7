"""Chapter "Random orthogonal additive filters" (Ceni 2022): sweeps and figures.

Figures: ``ioj`` (Thm 2.1: singular values of a roaFNN's input-output Jacobian against depth, vanilla MLP for
contrast, corrected bounds), ``rnn_ioj`` (Thm 3.1: the same through time for roaRNN), ``moons`` (Fig. 1:
double-moon regression, shallow vs deep vanilla vs deep roaFNN, and an extreme-depth roaFNN) and ``digits``
(Figs. 5 and 6 at proxy scale: permuted sequential digits, roaRNN vs eyeRNN (O = I) vs a vanilla RNN).
"""
from __future__ import annotations

import math

import numpy as np
import torch

from .. import jacobian, plot
from ..config import Profile
from ..data.moons import double_moon
from ..models.roa import RoaFNN, RoaRNNCell
from ..sweep import Run, gather
from ..theory import roa as bounds

CHAPTER = "roarnn"
NOTEBOOK = "book/roarnn.ipynb"

SIZES = {
    "quick": dict(depths=[10, 100, 1000], ioj_width=16, ioj_seeds=3, rnn_lengths=[100, 1000], rnn_width=32,
                  moon_epochs=50, deep_depth=2000, deep_epochs=4, digit_epochs=10, digit_width=64, digit_seeds=[0, 1],
                  digit_source="sklearn"),
    "full": dict(depths=[10, 100, 1000, 10000], ioj_width=64, ioj_seeds=5, rnn_lengths=[100, 1000, 10000],
                 rnn_width=128, moon_epochs=250, deep_depth=50_000, deep_epochs=10, digit_epochs=20, digit_width=128,
                 digit_seeds=[0, 1, 2, 3, 4], digit_source="sklearn"),
}
PSMNIST_PAPER = [("Vanilla RNN", "≈68k", 71.6), ("LSTM", "≈270k", 92.9), ("GRU", "≈200k", 94.1),
                 ("expRNN", "≈137k", 96.6), ("Lipschitz RNN", "≈34k", 96.3), ("LMU", "≈102k", 97.15),
                 ("coRNN", "≈134k", 97.3), ("roaRNN (N = 178)", "≈34k", 97.24), ("roaRNN (N = 256)", "≈69k", 97.88),
                 ("roaRNN (N = 512)", "≈270k", 98.25)]


# --------------------------------------------------------------------------------------------- Thm 2.1
def ioj_run(cfg: dict, ctx) -> dict:
    """Log singular values of the hidden-to-hidden IOJ of a roaFNN (rho = 1, W ~ N(0, 1/N)) and the largest one of
    the vanilla MLP with the same weights, at random inputs, over seeds; sigma_max of the drawn weights."""
    n, depth = cfg["width"], cfg["depth"]
    roa_lo, roa_hi, van_hi, sig = [], [], [], []
    for seed in range(cfg["seeds"]):
        x = torch.randn(n, generator=torch.Generator().manual_seed(100 + seed))
        out = {}
        for name, rho in (("roa", cfg["rho"]), ("vanilla", None)):
            net = RoaFNN(n, n, 1, depth, rho=rho, init_std=None, seed=seed).double()
            with torch.no_grad():
                J = net.hidden_jacobians(x.double())
            out[name] = jacobian.product_log_singular_values(J)
            if name == "roa":
                sig.append(float(torch.linalg.matrix_norm(net.W_h.detach(), ord=2).max()))
        roa_lo.append(float(out["roa"].min()))
        roa_hi.append(float(out["roa"].max()))
        van_hi.append(float(out["vanilla"].max()))
    return {"roa_min": np.array(roa_lo), "roa_max": np.array(roa_hi), "vanilla_max": np.array(van_hi),
            "sigma_max": np.array(sig)}


def ioj_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "ioj", f"L{L}", ioj_run, dict(depth=L, width=s["ioj_width"], rho=1.0, seeds=s["ioj_seeds"], seed=0))
            for L in s["depths"]]


def fig_ioj(profile: Profile):
    return gather(ioj_runs, profile)


def ioj_table(col) -> list[dict]:
    rows = []
    for r in sorted(col, key=lambda r: r.config["depth"]):
        maps, sig = r.config["depth"] - 1, float(r["sigma_max"].max())  # alpha = rho / (L - 1); the L - 3 hidden factors obey the same bounds
        rows.append({"L": r.config["depth"], "roa log σ_min": float(r["roa_min"].min()),
                     "roa log σ_max": float(r["roa_max"].max()),
                     "corrected lower bound (log)": math.log(bounds.lower_bound(1.0, sig, maps)),
                     "paper's lower bound (log)": math.log(bounds.lower_bound_paper(1.0, sig)),
                     "upper bound (log)": math.log(bounds.upper_bound(1.0, sig, maps)),
                     "vanilla log σ_max": float(r["vanilla_max"].max())})
    return rows


def show_ioj(col) -> None:
    rows = ioj_table(col)
    L = [r["L"] for r in rows]
    fig, ax = plot.figure(2, 1, width=11, height=3.8)
    ax[0, 0].fill_between(L, [r["roa log σ_min"] for r in rows], [r["roa log σ_max"] for r in rows], color="C3", alpha=0.4,
                          label="roaFNN (ρ = 1): all singular values")
    ax[0, 0].plot(L, [r["corrected lower bound (log)"] for r in rows], **plot.THEORY, label="bounds (corrected lower)")
    ax[0, 0].plot(L, [r["upper bound (log)"] for r in rows], **plot.THEORY)
    ax[0, 0].plot(L, [r["paper's lower bound (log)"] for r in rows], **{**plot.PAPER, "color": "0.5"},
                  label="lower bound as printed")
    ax[0, 0].set(xscale="log", xlabel="depth L", ylabel="log σ(IOJ)", title="roaFNN")
    ax[0, 0].legend(fontsize=8)
    ax[0, 1].plot(L, [r["vanilla log σ_max"] for r in rows], "o-", color="C0", label="vanilla MLP, largest")
    ax[0, 1].plot(L, [r["roa log σ_max"] for r in rows], "o-", color="C3", label="roaFNN, largest")
    ax[0, 1].set(xscale="log", xlabel="depth L", ylabel="log σ_max(IOJ)", title="vanilla vs roa (same weights)")
    ax[0, 1].legend(fontsize=8)
    plot.show(fig, col, data="random Gaussian inputs, generated")


# --------------------------------------------------------------------------------------------- Thm 3.1
def rnn_ioj_run(cfg: dict, ctx) -> dict:
    """All log singular values of dx_T/dx_1 for a roaRNN (alpha = rho / T) and an Elman RNN with the same weights,
    ReLU, random inputs."""
    T, n = cfg["length"], cfg["width"]
    x = torch.randn(1, T, 1, generator=torch.Generator().manual_seed(cfg["seed"]), dtype=torch.float64)
    out = {}
    for name, alpha in (("roa", cfg["rho"] / T), ("vanilla", 1.0)):
        cell = RoaRNNCell(1, n, alpha=alpha, init_std=cfg["init_std"], seed=cfg["seed"]).double()
        J, _ = jacobian.time_jacobians(cell, x)
        out[name] = jacobian.product_log_singular_values(J[0, 1:].detach())
        if name == "roa":
            sigma = float(torch.linalg.matrix_norm(cell.weight_hh.detach(), ord=2))
    return {"roa": out["roa"].numpy(), "vanilla": out["vanilla"].numpy(), "sigma": sigma}


def rnn_ioj_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    return [Run(CHAPTER, "rnn_ioj", f"T{T}-{name}", rnn_ioj_run,
                dict(length=T, width=s["rnn_width"], rho=3.0, init_std=std, init=name, seed=0))
            for T in s["rnn_lengths"] for name, std in (("N(0,1/N)", None), ("N(0,1)", 1.0))]


def fig_rnn_ioj(profile: Profile):
    return gather(rnn_ioj_runs, profile)


def rnn_ioj_table(col) -> list[dict]:
    rows = []
    for r in sorted(col, key=lambda r: (r.config["init"], r.config["length"])):
        maps = r.config["length"]  # alpha = rho / T
        rows.append({"init": r.config["init"], "T": r.config["length"], "σ = ‖W_h‖": r["sigma"],
                     "roa log σ_min": float(r["roa"].min()), "roa log σ_max": float(r["roa"].max()),
                     "proven interval (log)": f"[{math.log(bounds.lower_bound(3.0, r['sigma'], maps)):.1f}, "
                                              f"{math.log(bounds.upper_bound(3.0, r['sigma'], maps)):.1f}]",
                     "vanilla log σ_max": float(r["vanilla"].max())})
    return rows


# --------------------------------------------------------------------------------------------- Fig. 1
def moons_run(cfg: dict, ctx) -> dict:
    """Train one network on the double moon (batch 100); MSE after every epoch and its output on a grid."""
    x, y = double_moon(1000, d=1.0, seed=0)
    net = RoaFNN(2, cfg["width"], 1, cfg["depth"], rho=cfg["rho"], seed=cfg["seed"])
    opt = (torch.optim.SGD(net.parameters(), lr=cfg["lr"]) if cfg["optimizer"] == "sgd"
           else torch.optim.Adam(net.parameters(), lr=cfg["lr"]))
    g = torch.Generator().manual_seed(cfg["seed"])
    mse = []
    for epoch in range(cfg["epochs"]):
        perm = torch.randperm(1000, generator=g)
        for i in range(0, 1000, 100):
            idx = perm[i:i + 100]
            loss = (net(x[idx]).squeeze(-1) - y[idx]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            value = float((net(x).squeeze(-1) - y).pow(2).mean())
        mse.append(value if math.isfinite(value) else float("nan"))
    gx, gy = torch.meshgrid(torch.linspace(-20, 30, 100), torch.linspace(-15, 20, 70), indexing="xy")
    with torch.no_grad():
        surface = net(torch.stack([gx.ravel(), gy.ravel()], 1)).reshape(70, 100)
    return {"mse": np.array(mse), "surface": surface.numpy(), "params": sum(p.numel() for p in net.parameters())}


def moons_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    E = s["moon_epochs"]
    specs = [("shallow (L = 3)", 3, 72, None, "sgd", 0.01, E), ("vanilla L = 50", 50, 2, None, "sgd", 0.1, E),
             ("vanilla L = 50", 50, 2, None, "sgd", 0.01, E),
             ("roaFNN L = 50", 50, 2, 5.0, "sgd", 5.0, E),
             (f"roaFNN L = {s['deep_depth']:,}", s["deep_depth"], 2, 5.0, "adam", 0.05, s["deep_epochs"])]
    return [Run(CHAPTER, "moons", f"{name.split()[0]}-L{depth}-{opt}{lr:g}", moons_run,
                dict(label=name, depth=depth, width=w, rho=rho, optimizer=opt, lr=lr, epochs=ep, seed=0))
            for name, depth, w, rho, opt, lr, ep in specs]


def fig_moons(profile: Profile):
    return gather(moons_runs, profile, subset="1 seed; the paper's learning rates are unknown (legend only)")


def show_moons(col) -> None:
    fig, ax = plot.figure(4, 1, width=14, height=3.4)
    for i, r in enumerate(col):
        ax[0, 0].plot(np.arange(1, len(r["mse"]) + 1), r["mse"], color=f"C{i}",
                      label=f"{r.config['label']}, {r.config['optimizer']} lr {r.config['lr']:g}")
    ax[0, 0].set(yscale="log", xlabel="epoch", ylabel="MSE", title="training")
    ax[0, 0].legend(fontsize=6)
    x, y = double_moon(1000, d=1.0, seed=0)
    picks = [col[0], col[3], col[len(col) - 1]]
    for a, r in zip(ax[0, 1:], picks):
        a.imshow(np.clip(r["surface"], -1.5, 1.5), origin="lower", extent=(-20, 30, -15, 20), cmap="coolwarm", aspect="auto")
        a.scatter(x[:, 0], x[:, 1], c=y, s=2, cmap="coolwarm", edgecolors="none")
        a.set(title=r.config["label"], xticks=[], yticks=[])
    plot.show(fig, col, data="Haykin's double moon (r = 10, w = 6, d = 1), generated")


# --------------------------------------------------------------------------------------------- Figs. 5, 6
def digits_run(cfg: dict, ctx) -> dict:
    """Classify permuted sequential digits (one pixel per step) from the last state; test accuracy per epoch."""
    from sklearn.datasets import load_digits
    d = load_digits()
    perm = np.random.RandomState(0).permutation(64)
    x = torch.tensor(d.data[:, perm] / 16.0, dtype=torch.float32).unsqueeze(-1)
    y = torch.tensor(d.target)
    xtr, ytr, xte, yte = x[:1400], y[:1400], x[1400:], y[1400:]
    torch.manual_seed(cfg["seed"])
    n = cfg["width"]
    if cfg["model"] == "vanilla":
        rnn = torch.nn.RNN(1, n, nonlinearity="relu", batch_first=True)
        torch.nn.init.orthogonal_(rnn.weight_hh_l0)
        run = lambda xb: rnn(xb)[0][:, -1]
        params = list(rnn.parameters())
    else:
        cell = RoaRNNCell(1, n, alpha=cfg["rho"] / 64, seed=cfg["seed"],
                          method="identity" if cfg["model"] == "eye" else "paper")

        def run(xb):
            h = cell.initial_state(xb.shape[0])
            for t in range(xb.shape[1]):
                h = cell(h, xb[:, t])
            return h

        params = list(cell.parameters())
    head = torch.nn.Linear(n, 10)
    if cfg["model"] != "vanilla":
        torch.nn.init.normal_(head.weight)
        torch.nn.init.normal_(head.bias)
    opt = torch.optim.Adam(params + list(head.parameters()), lr=cfg["lr"])
    g = torch.Generator().manual_seed(cfg["seed"])
    acc = []
    for epoch in range(cfg["epochs"]):
        order = torch.randperm(len(ytr), generator=g)
        for i in range(0, len(ytr), 100):
            idx = order[i:i + 100]
            loss = torch.nn.functional.cross_entropy(head(run(xtr[idx])), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc.append(float((head(run(xte)).argmax(-1) == yte).float().mean()))
    return {"accuracy": np.array(acc)}


def digits_runs(scale: str) -> list[Run]:
    s = SIZES[scale]
    specs = [("roa", 0.1), ("eye", 0.01), ("vanilla", 1e-3)]
    return [Run(CHAPTER, "digits", f"{model}-s{seed}", digits_run,
                dict(model=model, lr=lr, rho=1.0, width=s["digit_width"], epochs=s["digit_epochs"], seed=seed))
            for model, lr in specs for seed in s["digit_seeds"]]


def fig_digits(profile: Profile):
    return gather(digits_runs, profile, subset="scikit-learn's 8x8 digits as a psMNIST proxy (T = 64)")


def show_digits(col) -> None:
    fig, ax = plot.figure(1, 1, width=6.5, height=3.6)
    colors = {"roa": "C3", "eye": "C2", "vanilla": "C0"}
    names = {"roa": "roaRNN (random O)", "eye": "eyeRNN (O = I)", "vanilla": "vanilla ReLU RNN (orthogonal init)"}
    for r in col:
        m = r.config["model"]
        ax[0, 0].plot(np.arange(1, len(r["accuracy"]) + 1), r["accuracy"], color=colors[m],
                      label=names[m] if r.config["seed"] == 0 else None)
    ax[0, 0].set(xlabel="epoch", ylabel="test accuracy", ylim=(0, 1), title="permuted sequential digits (T = 64)")
    ax[0, 0].legend(fontsize=8)
    plot.show(fig, col, data="scikit-learn's 1,797 real 8x8 digits, pixels permuted (RandomState(0)), 1,400 train / 397 test")


def digits_final(col) -> dict:
    return {m: [float(r["accuracy"][-1]) for r in col.where(model=m)] for m in ("roa", "eye", "vanilla")}


# --------------------------------------------------------------------------------------------- explorer
def explore_figure(alpha: float = 0.05, sigma_scale: float = 1.0, orthogonal: str = "paper", n: int = 128, seed: int = 0):
    """Eigenvalues of one roaRNN step Jacobian ``alpha D W + (1 - alpha) O`` (random ReLU mask) with the annulus
    of Bauer-Fike (random O) or the disc (O = I)."""
    from ..models.roa import semi_orthogonal
    g = torch.Generator().manual_seed(seed)
    W = torch.randn(n, n, generator=g, dtype=torch.float64) * sigma_scale / math.sqrt(n)
    mask = (torch.rand(n, generator=g) > 0.5).double()
    O = semi_orthogonal(n, n, method=orthogonal, generator=g, dtype=torch.float64)
    J = alpha * mask.unsqueeze(1) * W + (1 - alpha) * O
    eig = torch.linalg.eigvals(J).numpy()
    sigma = float(torch.linalg.matrix_norm(W, ord=2))
    fig, ax = plot.figure(1, 1, width=4.6, height=4.4)
    plot.eigenvalues(ax[0, 0], eig, radius=None, color="C3")
    t = np.linspace(0, 2 * np.pi, 400)
    if orthogonal == "identity":
        c, rad = bounds.eye_disc(alpha, sigma)
        ax[0, 0].plot(c.real + rad * np.cos(t), rad * np.sin(t), **plot.THEORY)
    else:
        for rad in bounds.annulus(alpha, sigma):
            ax[0, 0].plot(rad * np.cos(t), rad * np.sin(t), **plot.THEORY)
    plot.unit_circle(ax[0, 0], color="0.7")
    ax[0, 0].set(title=f"α = {alpha:g}, O = {orthogonal}, ‖W‖ = {sigma:.2f}")
    return fig


# --------------------------------------------------------------------------------------------- bookkeeping
FIGURES = {"ioj": ioj_runs, "rnn_ioj": rnn_ioj_runs, "moons": moons_runs, "digits": digits_runs}


def gap_digits(col) -> str:
    f = digits_final(col)
    return (f"proxy task, not psMNIST: roaRNN {np.mean(f['roa']):.1%} vs eyeRNN {np.mean(f['eye']):.1%}; "
            "paper psMNIST roaRNN 97.2-98.3%")


REPRODUCES = [
    {"source": "Thm 2.1", "what": "singular values of a deep roaFNN's IOJ within (corrected) bounds", "figure": "ioj",
     "data": "generated Gaussian inputs", "note": "the printed lower bound is wrong at finite L (counterexample in the chapter)"},
    {"source": "Thm 3.1", "what": "all singular values of a roaRNN's IOJ over 10^3-10^4 steps", "figure": "rnn_ioj",
     "data": "generated Gaussian inputs", "note": "same erratum"},
    {"source": "Fig. 1", "what": "double moon: shallow vs deep vanilla vs deep and extreme-depth roaFNN", "figure": "moons",
     "data": "Haykin's double moon, generated", "note": "quick: 2,000 layers; full: the paper's 50,000"},
    {"source": "Fig. 2", "what": "copy memory task, L = 400, 2,000, 10,000", "figure": None, "data": "generated",
     "note": "not reproduced yet"},
    {"source": "Fig. 3", "what": "adding problem, T = 200, 1,000, 5,000", "figure": None, "data": "generated",
     "note": "not reproduced yet"},
    {"source": "Fig. 4", "what": "psMNIST illustration (no experiment)", "figure": None, "data": "MNIST",
     "note": "an illustration, nothing to reproduce"},
    {"source": "Fig. 5 and table", "what": "psMNIST test accuracy of roaRNN (N = 178/256/512)", "figure": "digits",
     "data": "proxy: permuted scikit-learn 8x8 digits", "note": "proxy only; psMNIST itself not run yet",
     "gap": gap_digits},
    {"source": "Fig. 6", "what": "eyeRNN (O = I) vs roaRNN", "figure": "digits",
     "data": "proxy: permuted scikit-learn 8x8 digits", "note": "psMNIST task only (proxy); copy and adding not yet"},
]
