"""Fig. 4 and Table I: LRU stacks on Penn Treebank, default vs pre-trained initialisations, with and without
gradient clipping."""

from __future__ import annotations

import functools
import math

import numpy as np
import torch

from ... import plot
from ...config import Profile
from ...lm import next_token_loss
from ...runs import part_checkpoints, remove_checkpoints
from ...sweep import Run, RunContext, gather
from .common import CHAPTER, SIZES


@functools.lru_cache(maxsize=2)
def _corpus(level: str):
    from ...data import load_ptb

    return load_ptb(level, download=False)


def _ptb(level: str, limit: int | None, real: bool = False):
    """PTB token ids (``limit`` caps the training stream, a prefix) and the corpus' description; the real files
    where :mod:`lscnb.data.files` finds them, else the offline Markov stand-in (the description says which),
    which ``real=True`` (full runs) refuses."""
    corpus = _corpus(level)
    if real and corpus.entropy_rate_bits is not None:
        raise FileNotFoundError(
            "this run needs the real Penn Treebank files (ptb/ under ./data, ../shared/data or "
            "$LSCNB_DATA); only the offline stand-in was found"
        )
    train = corpus.train[:limit] if limit else corpus.train
    return train, corpus.valid, corpus.test, corpus.vocab_size, corpus.source


def _windows(ids: torch.Tensor, length: int, count: int, generator) -> tuple:
    """``count`` random windows of ``length`` tokens and their next tokens."""
    start = torch.randint(len(ids) - length - 1, (count,), generator=generator)
    idx = start[:, None] + torch.arange(length + 1)
    return ids[idx[:, :-1]], ids[idx[:, 1:]]


def lru_targets(target, length: int, depth: int):
    """The pre-training target: a number, or for ``"bar"`` (the paper's rho-bar_t = 1/2) the pair
    ``time = T / (T + L)``, ``depth = L / (T + L)``."""
    return {"time": length / (length + depth), "depth": depth / (length + depth)} if target == "bar" else target


def _start_radii(model, windows: torch.Tensor) -> dict:
    """The mean spectral radius of the stack's time and depth transitions at the middle step of ``windows``
    (:func:`lscnb.pretrain.lru_transitions`): where the training starts."""
    from ...pretrain import lru_transitions

    model.eval()
    with torch.no_grad():
        jac = lru_transitions(model, windows, windows.shape[1] // 2)
        radii = {g: float(torch.linalg.eigvals(J).abs().amax(-1).mean()) for g, J in jac.items()}
    mean = lambda kind: float(np.mean([v for g, v in radii.items() if g.startswith(kind)]))
    return {"time_radius": mean("time"), "depth_radius": mean("depth")}


def _next_token_loss(m, x, y):
    """Cross-entropy of the next tokens ``y`` under the model's logits on ``x``."""
    return next_token_loss(m(x), y)


def _perplexity(m, x, y, device=None, chunk: int = 64) -> float:
    """Perplexity of ``m`` on windows ``x`` (next tokens ``y``), in chunks of ``chunk`` windows, capped at e^50."""
    m.eval()
    with torch.no_grad():
        ce = sum(
            float(_next_token_loss(m, x[i : i + chunk].to(device), y[i : i + chunk].to(device))) * len(x[i : i + chunk])
            for i in range(0, len(x), chunk)
        ) / len(x)
    m.train()
    return math.exp(min(ce, 50.0))


def lru_run(cfg: dict, ctx: RunContext) -> dict:
    """One initialisation of Fig. 4 / Table I: an LRU stack language model on PTB (default init, or pre-trained to
    ``target``), then trained from that same start with and without gradient clipping (``clips``); validation
    perplexity every ``eval_every`` steps, test perplexity at the end."""
    import copy

    from ...models.lru import DeepLRU
    from ...pretrain import pretrain_lru
    from ...train import fit

    torch.manual_seed(ctx.seed)
    train, valid, test, vocab, _ = _ptb(cfg["level"], cfg.get("limit"), cfg.get("real_data", False))
    T, L = cfg["length"], cfg["depth"]
    model = DeepLRU(
        vocab,
        vocab,
        d_model=cfg["width"],
        d_state=cfg["width"],
        depth=L,
        tokens=True,
        dropout=cfg["dropout"],
        r_min=0.5,
        r_max=1.0,
        max_phase=math.pi / 10,
    )  # App. H's LRU init
    gen = torch.Generator().manual_seed(ctx.seed)
    out = {"pre_steps": 0, "converged": False}
    if cfg["target"] is not None:
        hist = pretrain_lru(
            model,
            lambda s: _windows(train, T, 8, gen)[0],
            target=lru_targets(cfg["target"], T, L),
            steps=cfg["pre_steps"],
            lr=1e-2,
            eps=0.05,
            seed=ctx.seed,
            progress=False,
        )
        out.update(pre_steps=hist.steps, converged=hist.converged)
    out.update(_start_radii(model, _windows(train, T, 16, gen)[0]))
    # fixed on purpose: the same validation and test windows for every seed, so perplexities compare
    xv, yv = _windows(valid, T, cfg["eval_windows"], torch.Generator().manual_seed(1))
    xt, yt = _windows(test, T, cfg["eval_windows"], torch.Generator().manual_seed(2))
    perplexity = functools.partial(_perplexity, device=ctx.device)

    unclipped = None
    ckpts = part_checkpoints(ctx.checkpoint, ["clip" if c else "noclip" for c in cfg["clips"]])
    for clip in cfg["clips"]:
        tag = "clip" if clip else "noclip"
        if clip and unclipped is not None and not unclipped.diverged and max(unclipped.grad_norm) < 0.999 * clip:
            # clipping would never have engaged: the clipped run is the unclipped one, step for step
            for key in ("valid", "eval_steps", "test", "diverged"):
                out[f"{key}_{tag}"] = out[f"{key}_noclip"]
            continue
        m = copy.deepcopy(model).train()
        g = torch.Generator().manual_seed(ctx.seed + 1)
        hist = fit(
            m,
            lambda k: _windows(train, T, cfg["batch"], g),
            _next_token_loss,
            steps=cfg["steps"],
            lr=cfg["lr"],
            clip=clip,
            eval_fn=lambda mm: {"ppl": perplexity(mm, xv, yv)},
            eval_every=cfg["eval_every"],
            checkpoint=ckpts[tag],
            generators=(g,),
            progress=False,
            device=ctx.device,
        )
        if clip is None:
            unclipped = hist
            out["clip_engaged"] = float(np.mean(np.array(hist.grad_norm) > 1.0)) if hist.grad_norm else float("nan")
            out["max_grad_norm"] = max(hist.grad_norm, default=float("nan"))
        out[f"valid_{tag}"] = np.array([e["ppl"] for e in hist.evals]) if not hist.diverged else np.array([np.nan])
        out[f"eval_steps_{tag}"] = np.array([e["step"] for e in hist.evals]) if not hist.diverged else np.array([0])
        out[f"test_{tag}"] = perplexity(m, xt, yt) if not hist.diverged else float("nan")
        out[f"diverged_{tag}"] = hist.diverged
    remove_checkpoints(ckpts)
    return out


LRU_TARGETS = (None, 1.0, 0.5, "bar")
LRU_LABELS = {None: "default", 1.0: "ρ = 1", 0.5: "ρ = 0.5", "bar": "ρ̄_t = 0.5"}


def lru_runs(scale: str) -> list[Run]:
    """Fig. 4: LRU stacks at depth 3 and 6 (quick: 3), each initialisation trained with and without clipping."""
    s = SIZES[scale]
    return [
        Run(
            CHAPTER,
            "lru",
            f"{s['lru_level']}-L{depth}-{LRU_LABELS[target].split()[0]}{target}-s{seed}",
            lru_run,
            dict(
                level=s["lru_level"],
                limit=s["lru_limit"],
                depth=depth,
                width=s["lru_width"],
                length=s["lru_length"],
                batch=s["lru_batch"],
                lr=s["lru_lr"],
                steps=s["lru_steps"],
                dropout=0.0,
                target=target,
                pre_steps=s["lru_pre_steps"],
                clips=[None, 1.0],
                eval_every=s["lru_eval_every"],
                eval_windows=s["lru_eval_windows"],
                real_data=scale == "full",
                seed=seed,
            ),
        )
        for depth in s["lru_depths"]
        for target in s["lru_targets"]
        for seed in s["lru_seeds"]
    ]


def lru_table_runs(scale: str) -> list[Run]:
    """Table I's configuration (after the authors' hyper-parameter search): width 256, 300 steps per window,
    batch 64, lr 3e-2, exterior dropout 0.2 (depth 3) / 0.1 (depth 6); 4 seeds. Quick: Fig. 4's quick runs."""
    if scale == "quick":
        return lru_runs("quick")
    return [
        Run(
            CHAPTER,
            "lru_table",
            f"word-L{depth}-{LRU_LABELS[target].split()[0]}{target}-s{seed}",
            lru_run,
            dict(
                level="word",
                limit=None,
                depth=depth,
                width=256,
                length=300,
                batch=64,
                lr=3e-2,
                steps=20_000,
                dropout=0.2 if depth == 3 else 0.1,
                target=target,
                pre_steps=500,
                clips=[None, 1.0],
                eval_every=1000,
                eval_windows=1024,
                real_data=True,
                seed=seed,
            ),
        )
        for depth in (3, 6)
        for target in LRU_TARGETS
        for seed in range(4)
    ]


LRU_SMOKE = dict(  # the shrunk size of Fig. 4 and Table I (their runs share one function)
    width=8, length=12, batch=4, steps=2, pre_steps=2, eval_every=1, eval_windows=4, limit=5000, real_data=False
)

LRU_SUBSET = (
    "Adam at a constant learning rate for a fixed number of steps instead of AdaBelief + Lookahead + SWA "
    "with cosine decay and early stopping; no MLM-style input corruption; random windows from zero state; "
    "untied readout; pre-training by the paper's loss (eq. 2) on task windows"
)


def collect_lru_table(profile: Profile, quick=None):
    """Table I: the committed full runs of its configuration when present, else ``quick`` (Fig. 4's quick runs,
    which the spec shares with the table) or the quick sweep."""
    from ...results import store_for

    if profile.scale == "full" or (
        profile.is_replay and all(store_for("full", CHAPTER).has(r.key) for r in lru_table_runs("full"))
    ):
        return gather(lru_table_runs, profile, subset=LRU_SUBSET)
    return quick if quick is not None else gather(lru_runs, profile, subset=LRU_SUBSET)


LRU_PAPER = {  # Table I, copied: (validation, test) perplexity, mean ± std over 4 seeds
    (3, None, None): ("139.34 ± 27.10", "110.95 ± 26.61"),
    (3, 1.0, None): ("229.67 ± 32.02", "186.60 ± 27.56"),
    (3, 0.5, None): ("131.84 ± 2.58", "103.18 ± 2.14"),
    (3, "bar", None): ("126.57 ± 1.52", "97.94 ± 1.02"),
    (3, None, 1.0): ("139.35 ± 27.11", "110.69 ± 26.80"),
    (3, 1.0, 1.0): ("329.42 ± 237.82", "295.01 ± 250.27"),
    (3, 0.5, 1.0): ("132.06 ± 2.30", "102.69 ± 0.60"),
    (3, "bar", 1.0): ("133.79 ± 16.02", "104.89 ± 12.46"),
    (6, None, None): ("125.29 ± 0.82", "97.59 ± 0.78"),
    (6, 1.0, None): ("545.41 ± 386.85", "535.67 ± 465.11"),
    (6, 0.5, None): ("132.12 ± 1.49", "103.17 ± 1.36"),
    (6, "bar", None): ("133.23 ± 18.00", "106.45 ± 17.02"),
    (6, None, 1.0): ("147.62 ± 39.26", "119.04 ± 37.88"),
    (6, 1.0, 1.0): ("596.69 ± 409.26", "602.50 ± 515.43"),
    (6, 0.5, 1.0): ("129.94 ± 0.46", "101.40 ± 0.48"),
    (6, "bar", 1.0): ("132.74 ± 18.52", "105.48 ± 17.96"),
}


def _mean_std(values) -> str:
    v = np.asarray(values, dtype=float)
    if np.isnan(v).all():
        return "diverged"
    text = f"{np.nanmean(v):.2f}" + (f" ± {np.nanstd(v):.2f}" if np.isfinite(v).sum() > 1 else "")
    return text + (f" ({int(np.isnan(v).sum())} diverged)" if np.isnan(v).any() else "")


def lru_summary(col) -> dict:
    """``{(depth, target, clip): {"valid": mean final validation ppl, "test": mean test ppl, ...}}`` over seeds."""
    out = {}
    for depth in sorted({r.config["depth"] for r in col}):
        for target in LRU_TARGETS:
            rs = col.where(depth=depth, target=target)
            for clip, tag in ((None, "noclip"), (1.0, "clip")):
                if rs:
                    out[(depth, target, clip)] = {
                        "valid": [float(r[f"valid_{tag}"][-1]) for r in rs],
                        "test": [float(r[f"test_{tag}"]) for r in rs],
                        "clip engaged": float(np.mean([r.get("clip_engaged", np.nan) for r in rs])),
                        "time radius": float(np.mean([r["time_radius"] for r in rs])),
                        "depth radius": float(np.mean([r["depth_radius"] for r in rs])),
                    }
    return out


def lru_table(col) -> list[dict]:
    """Table I's rows: ours (mean ± std over seeds) beside the paper's."""
    rows, level = [], col[0].config["level"]
    for (depth, target, clip), v in lru_summary(col).items():
        paper = LRU_PAPER.get((depth, target, clip), ("", ""))
        rows.append(
            {
                "depth": depth,
                "init": LRU_LABELS[target] + (" + clip" if clip else ""),
                "radii (time, depth)": f"{v['time radius']:.2f}, {v['depth radius']:.2f}",
                "steps with ‖g‖ > 1 (unclipped)": f"{v['clip engaged']:.1%}",
                f"valid ppl, ours ({level})": _mean_std(v["valid"]),
                f"test ppl, ours ({level})": _mean_std(v["test"]),
                "valid ppl, paper (word)": paper[0],
                "test ppl, paper (word)": paper[1],
            }
        )
    return rows


def show_lru(col) -> None:
    depths = sorted({r.config["depth"] for r in col})
    fig, ax = plot.figure(len(depths), 1, width=5.5 * len(depths), height=3.6)
    for a, depth in zip(ax[0], depths):
        for j, target in enumerate(LRU_TARGETS):
            for tag, style in (("noclip", "-"), ("clip", "--")):
                rs = col.where(depth=depth, target=target)
                if not rs:
                    continue
                curves = [r[f"valid_{tag}"] for r in rs if len(r[f"valid_{tag}"]) == len(rs[0][f"eval_steps_{tag}"])]
                if curves:
                    a.plot(
                        rs[0][f"eval_steps_{tag}"],
                        np.mean(curves, axis=0),
                        style,
                        color=f"C{j}",
                        label=LRU_LABELS[target] if tag == "noclip" else None,
                    )
        a.set(
            xlabel="training step",
            ylabel="validation perplexity",
            title=f"LRU depth {depth}, width {col[0].config['width']} (dashed: clipped)",
        )
        a.legend(fontsize=8)
    data = _ptb_caption(col[0].config)
    plot.show(fig, col, data=data)


def _ptb_caption(cfg) -> str:
    src = _corpus(cfg["level"]).source
    n = f"the first {cfg['limit']:,} training tokens" if cfg.get("limit") else "all training tokens"
    return f"{src}; {n}, windows of {cfg['length']}"
