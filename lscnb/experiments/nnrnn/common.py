"""The nnRNN chapter's shared pieces: the chapter's name, the copy-task sizes and Table A.1's rates, the
recurrent models and their RMSprop optimisers (:func:`make_model`), the parameter count and the learned
Schur factors a run keeps."""

from __future__ import annotations

import math

import torch
from torch.nn.utils import parametrize

from ...models import RNNCell
from ...models.modrelu_rnn import EURNNCell, FreeRNNCell
from ...models.nonnormal import NNRNNCell
from ...models.orthogonal import OrthogonalRNNCell
from ...train import make_optimizer

CHAPTER = "nnrnn"

SIZES = {
    "quick": dict(copy_T=50, copy_width=64, copy_iters=500, copy_seeds=[0], theta_iters=250),
    "full": dict(copy_T=200, copy_width=128, copy_iters=1500, copy_seeds=[0, 1, 2], theta_iters=1500),
}

COPY_HYPER = {  # Table A.1 (copy task)
    "nnRNN": dict(lr=5e-4, lr_orth=1e-6, alpha=0.99, delta=1e-4, t_decay=1e-6),
    "expRNN": dict(lr=1e-3, lr_orth=1e-4, alpha=0.99),
    "RNN": dict(lr=1e-3, alpha=0.9),
    "LSTM": dict(lr=5e-4, alpha=0.99),
}


class _LSTMModel(torch.nn.Module):
    """The authors' LSTM (``LSTM.py``) on ``torch.nn.LSTM``: each gate is ``nn.Linear(d + n, n)`` on ``[h, x]`` with
    Xavier-normal weights (std ``sqrt(2 / (2n + d))``, for the ``h`` and ``x`` columns alike) and one bias,
    ``nn.Linear``'s default uniform in ``+-1/sqrt(n + d)``; here that bias is ``bias_ih`` and ``bias_hh`` is frozen
    at zero."""

    def __init__(self, d, n):
        super().__init__()
        self.lstm = torch.nn.LSTM(d, n, batch_first=True)
        std, bound = math.sqrt(2 / (2 * n + d)), 1 / math.sqrt(n + d)
        with torch.no_grad():
            for w in (self.lstm.weight_ih_l0, self.lstm.weight_hh_l0):
                w.normal_(0.0, std)
            self.lstm.bias_ih_l0.uniform_(-bound, bound)
            self.lstm.bias_hh_l0.zero_()
        self.lstm.bias_hh_l0.requires_grad_(False)

    def sequence(self, x):
        return self.lstm(x)[0]

    def run(self, x, state=None):
        """Outputs (B, T, N) and the last state ``[h, c]`` (concatenated) from ``state`` (zeros if None)."""
        if state is not None:
            h, c = state.chunk(2, -1)
            state = (h.unsqueeze(0).contiguous(), c.unsqueeze(0).contiguous())
        out, (h, c) = self.lstm(x, state)
        return out, torch.cat([h[0], c[0]], -1)


class _CellModel(torch.nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def sequence(self, x):
        return self.run(x)[0]

    def run(self, x, state=None):
        """States (B, T, N) and the last one, from ``state`` (zeros if None); W built once per sequence."""
        if hasattr(self.cell, "sequence"):
            out = self.cell.sequence(x, state) if state is not None else self.cell.sequence(x)
            return out, out[:, -1]
        with parametrize.cached():
            h = self.cell.initial_state(x.shape[0], device=x.device, dtype=x.dtype) if state is None else state
            out = []
            for t in range(x.shape[1]):
                h = self.cell(h, x[:, t])
                out.append(h)
        return torch.stack(out, 1), h


def make_model(
    name: str, width: int, seed: int, *, n_in: int = 10, n_out: int = 9, hyper: dict | None = None, init: str = "henaff"
):
    """(recurrent model with ``sequence(x)``, readout, optimisers) with the RMSprop settings of ``hyper[name]``
    (Table A.1 by default; P's skew parameter in its own optimiser, T weight-decayed in its own group)."""
    hyper = COPY_HYPER if hyper is None else hyper
    if name not in hyper:
        raise ValueError(f"name must be one of {sorted(hyper)}, got {name!r}")
    torch.manual_seed(seed)
    hp = hyper[name]
    arch = hp.get("arch", name)
    if arch == "nnRNN":
        core = _CellModel(NNRNNCell(n_in, width, init=init, seed=seed, gamma_fixed=hp.get("gamma_fixed")))
        main, orth = core.cell.param_groups(hp["lr"], hp["lr_orth"], hp["t_decay"])
    elif arch in ("RNN-modReLU", "RNN-orth"):  # thesis §3.6: every non-gated baseline uses modReLU
        core, orth = _CellModel(FreeRNNCell(n_in, width, init=hp.get("init", "glorot"), seed=seed)), None
        main = [{"params": list(core.parameters()), "lr": hp["lr"]}]
    elif arch == "EURNN":
        core, orth = _CellModel(EURNNCell(n_in, width, capacity=hp.get("capacity", 2), seed=seed)), None
        main = [{"params": list(core.parameters()), "lr": hp["lr"]}]
    elif arch == "expRNN":
        core = _CellModel(
            OrthogonalRNNCell(
                n_in, width, map="exp", init=init, input_init=hp.get("input_init", "xavier"), input_bias=False
            )
        )
        skew_param = core.cell.recurrent.parametrizations.weight.original
        main = [{"params": [p for p in core.parameters() if p is not skew_param], "lr": hp["lr"]}]
        orth = [{"params": [skew_param], "lr": hp["lr_orth"]}]
    elif arch == "RNN":
        core, orth = _CellModel(RNNCell(n_in, width, activation="tanh")), None
        main = [{"params": list(core.parameters()), "lr": hp["lr"]}]
    elif arch == "LSTM":
        core, orth = _LSTMModel(n_in, width), None
        main = [{"params": list(core.parameters()), "lr": hp["lr"]}]
    else:
        raise ValueError(f"arch must be nnRNN, expRNN, RNN, RNN-modReLU, RNN-orth, EURNN or LSTM, got {arch!r}")
    readout = torch.nn.Linear(width, n_out)
    torch.nn.init.xavier_normal_(readout.weight)
    main[0]["params"] = list(main[0]["params"]) + list(readout.parameters())
    opts = [make_optimizer(main, "rmsprop", hp["lr"], alpha=hp["alpha"])]
    if orth:
        opts.append(make_optimizer(orth, "rmsprop", hp["lr"], alpha=hp["alpha"]))
    return core, readout, opts


def make_copy_model(name: str, width: int, seed: int):
    """(recurrent model with ``sequence(x)``, readout, optimisers) for a copy-task model with Table A.1's
    RMSprop settings."""
    return make_model(name, width, seed)


def effective_parameters(core, readout) -> int:
    """Free parameters of a model (the nnRNN's masked T and skew half counted once; spec §2.8)."""
    if isinstance(getattr(core, "cell", None), (NNRNNCell, FreeRNNCell, EURNNCell)):
        rec = core.cell.effective_parameters()
    elif isinstance(getattr(core, "cell", None), OrthogonalRNNCell):
        n = core.cell.hidden_size
        rec = n * (n - 1) // 2 + sum(p.numel() for name, p in core.cell.named_parameters() if "recurrent" not in name)
    else:
        rec = sum(p.numel() for p in core.parameters() if p.requires_grad)
    return rec + sum(p.numel() for p in readout.parameters())


class CoreReadout(torch.nn.Module):
    """A recurrent ``core`` (with ``sequence(x)``) and a linear ``readout``, as one module for
    :func:`lscnb.train.fit`: ``forward`` reads out every step, ``last`` only the final state."""

    def __init__(self, core: torch.nn.Module, readout: torch.nn.Module):
        super().__init__()
        self.core, self.readout = core, readout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.core.sequence(x))

    def last(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.core.sequence(x)[:, -1])

    def gamma_penalty(self, delta: float):
        """:func:`gamma_penalty` of the core."""
        return gamma_penalty(self.core, delta)


def gamma_penalty(core, delta: float | None):
    """The nnRNN's penalty on its scales gamma with weight ``delta`` (0 for other cores, or without ``delta``)."""
    cell = getattr(core, "cell", None)
    return cell.gamma_penalty(delta) if isinstance(cell, NNRNNCell) and delta else 0.0


def _theta_snapshot(core) -> dict:
    parts = core.cell.schur_parts()
    return {"P_orthogonality": parts.pop("P_orthogonality"), "gamma_mean": float(parts["gamma"].mean()), **parts}
