"""Table 4.3 and Figs. B.5-B.7: dense dependencies, pMNIST and PTB characters (figure ``dense``)."""

from __future__ import annotations

import functools

import numpy as np
import torch

from ... import checks, plot
from ...data import batchify, bits_per_token, bptt_windows, load_mnist, load_ptb, pixel_sequences
from ...lm import next_token_loss
from ...models.relevancy import Tagger, TokenTagger, attention_matrix
from ...sweep import Run, RunContext
from ...train import fit
from .common import CHAPTER, PAPER_NAME, smoothed

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


def steps_per_epoch(cfg: dict, size: int) -> int:
    """Batches in an epoch over ``size`` training images (pMNIST) or characters (PTB, ``bptt`` a window)."""
    if cfg["task"] == "pmnist":
        return size // cfg["batch"]
    return max(1, size // (cfg["batch"] * cfg["bptt"]))


def dense_counts(cfg: dict) -> dict:
    """For the plan: the steps of a run counted in epochs (``steps=None``), over the real data set's training split,
    cut to ``train_tokens`` where that is set (FileNotFoundError where PTB is not at hand and the size is ``None``)."""
    if cfg["steps"] is not None:
        return {}
    if cfg["task"] == "pmnist":
        size = cfg["n_train"]
    else:
        size = cfg["train_tokens"]
        try:  # the text's own length: the whole of it, or a cut longer than the text (ptb_data stops at its end)
            text = load_ptb("char", download=False, fallback=False).train.numel()
            size = text if size is None else min(size, text)
        except FileNotFoundError:
            if size is None:
                raise
    return {"steps": cfg["epochs"] * steps_per_epoch(cfg, int(size))}


def _pmnist_task(cfg: dict, kind: str, device, gen) -> tuple:
    """pMNIST: the data, a :class:`Tagger` classifying from the last step, steps per epoch, and the batch, loss and
    evaluation functions of :func:`lscnb.train.fit`."""
    data = pmnist_data(cfg)
    (xtr, ytr), (xva, yva), (xte, yte) = data["train"], data["valid"], data["test"]
    model = Tagger(kind, cfg["group"], cfg["width"], 10, nu=cfg["nu"], rho=cfg["rho"]).to(device)

    def batch_fn(k):
        idx = torch.randint(len(ytr), (cfg["batch"],), generator=gen)
        return xtr[idx].to(device), ytr[idx].to(device)

    def loss_fn(m, x, y):
        return torch.nn.functional.cross_entropy(m(x)[:, -1], y)

    def eval_fn(m):
        return {"valid_acc": classify_accuracy(m, xva, yva, device), "test_acc": classify_accuracy(m, xte, yte, device)}

    return data, model, steps_per_epoch(cfg, len(ytr)), batch_fn, loss_fn, eval_fn


def _ptb_task(cfg: dict, kind: str, device, gen) -> tuple:
    """PTB characters: the data, a :class:`TokenTagger` predicting the next character at every step, steps per
    epoch, and the batch, loss and evaluation functions of :func:`lscnb.train.fit`."""
    data = ptb_data(cfg)
    ids, V, L = data["train"], len(data["vocab"]), cfg["bptt"]
    model = TokenTagger(kind, V, cfg["embedding"], cfg["width"], nu=cfg["nu"], rho=cfg["rho"]).to(device)

    def batch_fn(k):
        start = torch.randint(len(ids) - L - 1, (cfg["batch"], 1), generator=gen) + torch.arange(L + 1)
        w = ids[start]
        return w[:, :-1].to(device), w[:, 1:].to(device)

    def loss_fn(m, x, y):
        return next_token_loss(m(x), y)

    def eval_fn(m):
        va, te = lm_scores(m, data["valid"], L, device), lm_scores(m, data["test"], L, device)
        return {"valid_bpc": va["bpc"], "valid_acc": va["accuracy"], "test_bpc": te["bpc"], "test_acc": te["accuracy"]}

    return data, model, steps_per_epoch(cfg, len(ids)), batch_fn, loss_fn, eval_fn


def _scores(hist, task: str) -> dict:
    """The evaluations as arrays (``eval_<metric>``), and the test score at the best validation score (bits per
    character on PTB, accuracy on pMNIST) with its step."""
    if not hist.evals:
        return {}
    ev = {k: np.array([e[k] for e in hist.evals]) for k in hist.evals[0]}
    out = {f"eval_{k}": v for k, v in ev.items()}
    best = int(np.argmin(ev["valid_bpc"]) if task == "ptb" else np.argmax(ev["valid_acc"]))
    out.update({"test_acc": float(ev["test_acc"][best]), "best_step": int(ev["step"][best])})
    if task == "ptb":
        out["test_bpc"] = float(ev["test_bpc"][best])
    return out


def dense_run(cfg: dict, ctx: RunContext) -> dict:
    """Table 4.3: train one model on pMNIST (classify from the last step) or PTB characters (next-character
    prediction at every step), evaluating on the validation and test sets every ``eval_every`` steps (default:
    once per epoch); the test score reported is the one at the best validation score."""
    task = checks.one_of(cfg["task"], ("pmnist", "ptb"), "task")
    kind, device = cfg["model"], ctx.device
    torch.manual_seed(ctx.seed)
    gen = torch.Generator().manual_seed(ctx.seed)
    data, model, per_epoch, batch_fn, loss_fn, eval_fn = {"pmnist": _pmnist_task, "ptb": _ptb_task}[task](
        cfg, kind, device, gen
    )
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
        **_scores(hist, task),
    }
    if task == "ptb":
        out["unigram_bits"] = data["unigram_bits"]
    if kind in ("RelRNN", "RelLSTM") and not hist.diverged:  # one test sequence (Figs. B.5, B.7)
        L = cfg.get("bptt")
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
