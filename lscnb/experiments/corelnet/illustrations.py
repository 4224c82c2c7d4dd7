"""Figs. 5.1 and 5.2: one trial of each basic task, and CoRelNet's bottleneck drawn from its own tensors (no
training)."""

from __future__ import annotations

import numpy as np
import torch

from ... import plot
from ...data.relational import TASKS, split
from ...models.relational import causal_softmax, encode_objects
from .common import make_model

# --------------------------------------------------------------------------------------------- Figs. 5.1, 5.2
LAYOUT = {"same_different": [2], "rmts": [2, 2, 2], "dist3": [3, 2, 4], "identity_rules": [3, 2, 4]}
"""How a trial of each basic task groups its objects: same/different's pair; RMTS's source and two target pairs;
distribution-of-3's and identity rules' first row, incomplete second row and four options."""


def answer_positions(task: str, label: int) -> list[int]:
    """The positions of a trial that its ``label`` points at: both objects (same/different), the matching target
    pair (RMTS) or the correct option (distribution-of-3, identity rules)."""
    if task == "same_different":
        return [0, 1]
    if task == "rmts":
        return [2 + 2 * label, 3 + 2 * label]
    return [5 + label]


def draw_trial(ax, images, seq, task: str, label: int) -> None:
    """One trial as a strip of object images on ``ax``, its groups (:data:`LAYOUT`) set apart and its answer
    framed (green for a correct answer, red for 'different')."""
    from matplotlib.patches import Rectangle

    x, t = 0.0, 0
    colour = "C3" if task == "same_different" and label == 1 else "C2"
    for size in LAYOUT[task]:
        for _ in range(size):
            ax.imshow(
                torch.as_tensor(images[int(seq[t])]).numpy(), cmap="gray", vmin=0, vmax=1, extent=(x, x + 1, 0, 1)
            )
            if t in answer_positions(task, label):
                ax.add_patch(Rectangle((x, 0), 1, 1, fill=False, edgecolor=colour, linewidth=2.5))
            x, t = x + 1.05, t + 1
        x += 0.5
    ax.set(xlim=(-0.1, x - 0.4), ylim=(-0.05, 1.05), xticks=[], yticks=[], aspect="equal")
    ax.axis("off")


def show_tasks(objs, shapes, seed: int = 0) -> None:
    """Fig. 5.1: one trial of each basic task drawn from its generator on ``shapes``."""
    fig, ax = plot.figure(1, len(TASKS), width=10, height=1.25 * len(TASKS))
    g = torch.Generator().manual_seed(seed)
    what = {
        "same_different": "same/different: same (green frame) or different (red)",
        "rmts": "RMTS: which target pair has the source pair's relation",
        "dist3": "distribution-of-3: the option that completes the second row",
        "identity_rules": "identity rules: the option that gives row 2 row 1's pattern (ABA, ABB or AAA)",
    }
    for a, (task, (fn, _, _)) in zip(ax[:, 0], TASKS.items()):
        seq, y = fn(shapes, 1, g)
        draw_trial(a, objs.images, seq[0], task, int(y[0]))
        a.set_title(f"{what[task]}; label {int(y[0])}", fontsize=9, loc="left")
    plot.show(
        fig,
        data=objs.source,
        note="Fig. 5.1 re-drawn from lscnb.data.relational: one trial per task, training "
        "shapes of the m = 95 split; the framed objects are the answer.",
    )


def show_bottleneck(objs, task: str = "identity_rules", seed: int = 0) -> None:
    """Fig. 5.2 drawn from CoRelNet's own tensors on one trial: the objects, their normalised codes ``Z`` (random
    frozen encoder, TCN), the relations ``R`` (eq. corelnet, causal softmax) and the lower triangle that is all the
    decoder sees."""
    fn, T, classes = TASKS[task]
    seq, y = fn(split(95, seed=seed)[0], 1, torch.Generator().manual_seed(seed))
    net = make_model("corelnet", task)
    with torch.no_grad():
        z = net.tcn(encode_objects(objs.images[seq[0]], seed=seed)[None])[0]
        R = causal_softmax(z @ z.T)
        logits = net(z[None])[0]
    fig = plot.canvas(width=11, height=5.2)
    top, bottom = fig.subfigures(2, 1, height_ratios=[1, 2.4])
    draw_trial(top.subplots(), objs.images, seq[0], task, int(y[0]))
    top.suptitle(f"1. objects (one {task.replace('_', ' ')} trial, answer framed)", fontsize=9, x=0.02, ha="left")
    az, ar, ao = bottom.subplots(1, 3, width_ratios=[2.2, 1.2, 1])
    for a, values, label, kw in (
        (az, z.numpy(), "z", dict(cmap="RdBu_r", vmin=-3, vmax=3, aspect="auto")),
        (ar, np.where(np.tril(np.ones((T, T))) > 0, R.numpy(), np.nan), "R_ij", dict(vmin=0, vmax=1)),
    ):
        fig.colorbar(a.imshow(values, **kw), ax=a).set_label(label)
        a.grid(False)
    az.set(xlabel="feature", ylabel="object t", yticks=range(T))
    az.set_title("2. encoder + TCN: Z (T x 128)", fontsize=9)
    ar.set(xlabel="j", ylabel="i", xticks=range(T), yticks=range(T))
    ar.set_title("3. R = causal softmax(Z Z^T)", fontsize=9)
    ao.barh(range(classes), torch.softmax(logits, -1).numpy(), color="C0")
    ao.set(xlim=(0, 1), yticks=range(classes), xlabel="p(class)", ylabel="class")
    ao.set_title(f"4. MLP on the {T * (T + 1) // 2} entries of R\n(untrained here; label {int(y[0])})", fontsize=9)
    plot.show(
        fig,
        data=objs.source,
        note="Fig. 5.2 (the architecture) drawn from the model's tensors: only panel 3 "
        "reaches the decoder, whatever the objects look like.",
    )
