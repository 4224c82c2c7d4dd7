"""Deep recurrent networks of the curse of memory's signal-propagation study (Zucchet & Orvieto 2024, Sec. 5, App. D).

- :class:`DiagonalRecurrence`: complex diagonal layer ``h_t = lam * h_{t-1} + gamma * (B x_t)``,
  ``y_t = Re(C h_t) + D * x_t``; ``param="default"`` learns ``Re lam``, ``Im lam`` with no normalisation (the cRNN),
  ``param="exp"`` learns ``lam = exp(-exp(w_nu) + i exp(w_theta))`` and ``gamma = exp(w_gamma)`` initialised to
  ``sqrt(1 - |lam|^2)`` (the LRU). Moduli start uniform (in area) on the ring ``[nu_min, nu_max]``.
- :class:`ChronoGRU`: the GRU of eqs. 26-29 (:class:`lscnb.models.gated.GRUCell`) with the Chrono initialisation
  (Tallec & Ollivier 2018): the forget-gate bias ``b_f = log T``, ``T ~ U[t_min, t_max]``, so ``f ~= T / (1 + T)``
  when ``x = h = 0``; input weights LeCun-normal times ``scale_x``, each hidden-to-gate block orthogonal times
  ``scale_h``, other biases zero.
- :class:`DeepRecurrentNet`: linear encoder, ``depth`` blocks ``x + GLU(GELU(rec(norm(x))))`` (optional LayerNorm
  or BatchNorm before the recurrence and before the GLU), linear decoder back to the input size (App. D.1).
  Linear layers use Flax's defaults (LeCun normal, zero bias), as the paper's code.
- :func:`signal_propagation`: ``E|h|^2`` of every recurrent layer and ``E[(dL/dtheta)^2]`` per parameter group
  and layer for the next-token loss ``L = 1/2 ||x_hat_t - x_{t+1}||^2`` (eq. 156), at initialisation.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from ..kernels import linear_scan
from .gated import GRUCell

KINDS = ("crnn", "lru", "gru")


def lecun_(weight: torch.Tensor, scale: float = 1.0, generator: torch.Generator | None = None) -> torch.Tensor:
    """In place: ``N(0, scale^2 / fan_in)`` (LeCun normal, not truncated)."""
    with torch.no_grad():
        return weight.normal_(0.0, scale / math.sqrt(weight.shape[-1]), generator=generator)


class DiagonalRecurrence(nn.Module):
    """A complex diagonal recurrent layer (B, T, d_model) -> (B, T, d_model) through ``d_hidden`` units."""

    def __init__(
        self,
        d_model: int,
        d_hidden: int,
        *,
        nu_min: float = 0.0,
        nu_max: float = 0.5,  # the ring DeepRecurrentNet uses at its default nu0 = 0: [nu0, (1 + nu0) / 2]
        max_phase: float = 2 * math.pi,
        param: str = "exp",
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        self.d_model = checks.positive_int(d_model, "d_model")
        self.d_hidden = checks.positive_int(d_hidden, "d_hidden")
        self.param = checks.one_of(param, ("exp", "default"), "param")
        if not 0 <= nu_min <= nu_max < 1:
            raise ValueError(f"need 0 <= nu_min <= nu_max < 1, got nu_min={nu_min}, nu_max={nu_max}")
        g = generator
        u = torch.rand(d_hidden, generator=g, dtype=torch.float64)
        nu = torch.sqrt(u * (nu_max**2 - nu_min**2) + nu_min**2).clamp(min=1e-4)
        theta = (max_phase * torch.rand(d_hidden, generator=g, dtype=torch.float64)).clamp_min(1e-6)
        if param == "exp":
            self.w_nu = nn.Parameter(torch.log(-torch.log(nu)).float())
            self.w_theta = nn.Parameter(torch.log(theta).float())
            self.w_gamma = nn.Parameter(0.5 * torch.log(1 - nu**2).float())
        else:
            self.lam_re = nn.Parameter((nu * torch.cos(theta)).float())
            self.lam_im = nn.Parameter((nu * torch.sin(theta)).float())
        std_b = 1 / math.sqrt(2 * d_model)
        self.B_re = nn.Parameter(torch.randn(d_hidden, d_model, generator=g) * std_b)
        self.B_im = nn.Parameter(torch.randn(d_hidden, d_model, generator=g) * std_b)
        self.C_re = nn.Parameter(torch.randn(d_model, d_hidden, generator=g) / math.sqrt(d_hidden))
        self.C_im = nn.Parameter(torch.randn(d_model, d_hidden, generator=g) / math.sqrt(d_hidden))
        self.D = nn.Parameter(torch.randn(d_model, generator=g))
        self.last_state: torch.Tensor | None = None

    def eigenvalues(self) -> torch.Tensor:
        if self.param == "exp":
            return torch.exp(torch.complex(-torch.exp(self.w_nu), torch.exp(self.w_theta)))
        return torch.complex(self.lam_re, self.lam_im)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        checks.tensor(x, "x", ndim=3)
        drive = torch.complex(x @ self.B_re.T, x @ self.B_im.T)
        if self.param == "exp":
            drive = drive * torch.exp(self.w_gamma)
        h = linear_scan(self.eigenvalues(), drive, dim=1)
        self.last_state = h
        return (h @ torch.complex(self.C_re, self.C_im).T).real + x * self.D


def chrono_init_(
    cell: GRUCell,
    t_min: float,
    t_max: float,
    *,
    scale_x: float = 1.0,
    scale_h: float = 1.0,
    generator: torch.Generator | None = None,
) -> GRUCell:
    """In place, the Chrono initialisation of a :class:`GRUCell` (gates r, z = forget, n): ``b_z = log T`` with
    ``T ~ U[t_min, t_max]``, other biases 0; input weights LeCun normal times ``scale_x``; each of the three
    hidden-to-gate blocks orthogonal times ``scale_h``."""
    if not 0 < t_min <= t_max:
        raise ValueError(f"need 0 < t_min <= t_max, got t_min={t_min}, t_max={t_max}")
    n = cell.hidden_size
    with torch.no_grad():
        lecun_(cell.weight_ih, scale_x, generator)
        for k in range(3):
            q, r = torch.linalg.qr(torch.randn(n, n, generator=generator, dtype=torch.float64))
            q = q * torch.sign(torch.diagonal(r))
            cell.weight_hh[k * n : (k + 1) * n] = scale_h * q.float()
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
        T = t_min + (t_max - t_min) * torch.rand(n, generator=generator, dtype=torch.float64)
        cell.bias_ih[n : 2 * n] = torch.log(T).float()
    return cell


def gru_sequence(cell: GRUCell, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
    """Run ``cell`` over ``x`` (B, T, d_in) from ``h0`` (zeros if None); the states (B, T, d_hidden)."""
    h = cell.initial_state(x.shape[0], dtype=x.dtype) if h0 is None else h0
    out = []
    for x_t in x.unbind(1):
        h = cell(h, x_t)
        out.append(h)
    return torch.stack(out, 1)


class ChronoGRU(nn.Module):
    """A GRU layer (B, T, d_model) -> (B, T, d_hidden) with the Chrono initialisation (see :func:`chrono_init_`)."""

    def __init__(
        self,
        d_model: int,
        d_hidden: int,
        *,
        t_min: float = 1.0,
        t_max: float = 2.0,
        scale_x: float = 1.0,
        scale_h: float = 1.0,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        self.cell = chrono_init_(
            GRUCell(d_model, d_hidden), t_min, t_max, scale_x=scale_x, scale_h=scale_h, generator=generator
        )
        self.last_state: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = gru_sequence(self.cell, checks.tensor(x, "x", ndim=3))
        self.last_state = h
        return h


class _Norm(nn.Module):
    def __init__(self, kind: str | None, d: int):
        super().__init__()
        self.kind = kind
        self.norm = {None: nn.Identity(), "layer": nn.LayerNorm(d), "batch": nn.BatchNorm1d(d)}[kind]

    def forward(self, x):
        return self.norm(x.transpose(1, 2)).transpose(1, 2) if self.kind == "batch" else self.norm(x)


class Block(nn.Module):
    """``x + GLU(GELU(rec(norm(x))))`` with a second optional norm before the GLU (App. D.1)."""

    def __init__(self, rec: nn.Module, d_model: int, norm: str | None, generator=None):
        super().__init__()
        self.norm1, self.rec, self.norm2 = _Norm(norm, d_model), rec, _Norm(norm, d_model)
        self.glu = nn.Linear(d_model, 2 * d_model)
        lecun_(self.glu.weight, generator=generator)
        nn.init.zeros_(self.glu.bias)

    def forward(self, x):
        y = self.norm2(nn.functional.gelu(self.rec(self.norm1(x))))
        return x + nn.functional.glu(self.glu(y), dim=-1)


class DeepRecurrentNet(nn.Module):
    """Encoder, ``depth`` recurrent blocks, decoder (App. D.1). ``kind`` is ``crnn`` (complex diagonal, no
    normalisation), ``lru`` or ``gru`` (Chrono); ``nu0`` sets the memory: moduli in ``[nu0, (1 + nu0)/2]`` for the
    diagonal layers, Chrono ``T`` in ``[1/(1 - nu0), 2/(1 - nu0)]`` for the GRU. ``norm``: None, ``layer`` or
    ``batch``."""

    def __init__(
        self,
        d_in: int,
        *,
        kind: str = "lru",
        d_model: int = 256,
        depth: int = 4,
        nu0: float = 0.0,
        norm: str | None = None,
        seed: int = 0,
    ):
        super().__init__()
        self.kind = checks.one_of(kind, KINDS, "kind")
        checks.one_of(norm, (None, "layer", "batch"), "norm")
        d_in, d_model = checks.positive_int(d_in, "d_in"), checks.positive_int(d_model, "d_model")
        checks.positive_int(depth, "depth")
        if not 0 <= nu0 < 1:
            raise ValueError(f"nu0 must lie in [0, 1), got {nu0}")
        g = torch.Generator().manual_seed(seed)
        self.encoder, self.decoder = nn.Linear(d_in, d_model), nn.Linear(d_model, d_in)
        for lin in (self.encoder, self.decoder):
            lecun_(lin.weight, generator=g)
            nn.init.zeros_(lin.bias)

        def layer():
            if kind == "gru":
                return ChronoGRU(d_model, d_model, t_min=1 / (1 - nu0), t_max=2 / (1 - nu0), generator=g)
            return DiagonalRecurrence(
                d_model,
                d_model,
                nu_min=nu0,
                nu_max=(1 + nu0) / 2,
                param="exp" if kind == "lru" else "default",
                generator=g,
            )

        self.blocks = nn.ModuleList(Block(layer(), d_model, norm, g) for _ in range(depth))
        self.block_outputs: list[torch.Tensor] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(checks.tensor(x, "x", ndim=3))
        self.block_outputs = []
        for block in self.blocks:
            h = block(h)
            self.block_outputs.append(h)
        return self.decoder(h)

    def states(self) -> list[torch.Tensor]:
        """The hidden states of every recurrent layer from the last forward pass (complex for cRNN/LRU)."""
        return [b.rec.last_state for b in self.blocks]

    def groups(self) -> dict[str, list[tuple[int | None, str]]]:
        """Parameter groups of Fig. 5B: ``{group: [(layer or None, parameter name), ...]}`` with groups ``lam``
        (cRNN), ``w_nu`` and ``w_theta`` (LRU), ``other`` (the rest of both), ``gru`` (the GRU cells) and ``ff`` (the
        rest of the GRU network); layer ``None`` marks the encoder and decoder, counted in the aggregate only."""
        recurrent = {
            "crnn": {"lam_re": "lam", "lam_im": "lam"},
            "lru": {"w_nu": "w_nu", "w_theta": "w_theta"},
            "gru": {},
        }[self.kind]
        other = "ff" if self.kind == "gru" else "other"
        out: dict[str, list] = {}
        for name, _ in self.named_parameters():
            parts = name.split(".")
            layer = int(parts[1]) if parts[0] == "blocks" else None
            if self.kind == "gru" and layer is not None and parts[2] == "rec":
                group = "gru"
            else:
                group = recurrent.get(parts[-1], other) if layer is not None and parts[2] == "rec" else other
            out.setdefault(group, []).append((layer, name))
        return out


def next_token_loss(pred: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Eq. 156: ``1/2 ||x_hat_t - x_{t+1}||^2`` summed over features, averaged over sequences and time (the
    prediction made after reading ``x_{1:t}`` is compared with ``x_{t+1}``)."""
    return 0.5 * (pred[:, :-1] - x[:, 1:]).pow(2).sum(-1).mean()


def signal_propagation(model: DeepRecurrentNet, x: torch.Tensor) -> dict:
    """At the model's current parameters: ``h2`` (depth,) the mean ``|h|^2`` of every recurrent layer's state over
    sequences, time and units; ``out2`` the same for every block's output (after the skip connection); ``grad2``
    ``{group: (mean over all its entries, [per-layer means])}`` of ``(dL/dtheta)^2`` for the next-token loss (group
    ``all``: every parameter); and
    the loss value."""
    if not isinstance(model, DeepRecurrentNet):
        raise TypeError(f"model must be a DeepRecurrentNet, got {type(model).__name__}")
    model.zero_grad(set_to_none=True)
    loss = next_token_loss(model(x), x)
    loss.backward()
    params = dict(model.named_parameters())
    h2 = [float(s.detach().abs().pow(2).mean()) for s in model.states()]
    out2 = [float(o.detach().pow(2).mean()) for o in model.block_outputs]
    grad2 = {}
    depth = len(model.blocks)
    for group, members in model.groups().items():
        total = sum(float(params[n].grad.pow(2).sum()) for _, n in members)
        count = sum(params[n].numel() for _, n in members)
        per_layer = []
        for layer in range(depth):
            names = [n for lay, n in members if lay == layer]
            per_layer.append(
                sum(float(params[n].grad.pow(2).sum()) for n in names) / max(1, sum(params[n].numel() for n in names))
                if names
                else float("nan")
            )
        grad2[group] = (total / count, per_layer)
    every = [p for p in params.values() if p.grad is not None]
    grad2["all"] = (sum(float(p.grad.pow(2).sum()) for p in every) / sum(p.numel() for p in every), [])
    model.zero_grad(set_to_none=True)
    return {"loss": float(loss.detach()), "h2": h2, "out2": out2, "grad2": grad2}


# --------------------------------------------------------------------------------------------- App. D
GATES = ("constant", "input", "hidden")


class SimplifiedGRU(nn.Module):
    """App. D.3 (eqs. 157-158), for a batch of independent networks: ``f = sigma(W_fx x + W_fh h + b_f)``,
    ``h' = f h + (1 - f) n`` with ``n = W_in x`` (linear, no bias). ``gates`` is ``constant`` (W_fx = W_fh = 0: a
    diagonal linear recurrence), ``input`` (W_fh = 0, as in Mamba or Hawk) or ``hidden`` (both). W_in and W_fx are
    LeCun normal, W_fh orthogonal times ``scale_h``, ``b_f = log T`` with ``T ~ U[t_min, t_max]`` (Chrono)."""

    def __init__(
        self,
        d_in: int,
        d: int,
        *,
        networks: int = 1,
        gates: str = "hidden",
        t_min: float = 1.0,
        t_max: float = 256.0,
        scale_h: float = 1.0,
        generator: torch.Generator | None = None,
    ):
        super().__init__()
        d_in, d = checks.positive_int(d_in, "d_in"), checks.positive_int(d, "d")
        networks = checks.positive_int(networks, "networks")
        self.gates = checks.one_of(gates, GATES, "gates")
        if not 0 < t_min <= t_max:
            raise ValueError(f"need 0 < t_min <= t_max, got t_min={t_min}, t_max={t_max}")
        g = generator
        self.W_in = nn.Parameter(lecun_(torch.empty(networks, d, d_in), generator=g))
        self.W_fx = nn.Parameter(lecun_(torch.empty(networks, d, d_in), generator=g) * (gates != "constant"))
        q, r = torch.linalg.qr(torch.randn(networks, d, d, generator=g, dtype=torch.float64))
        q = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1)).unsqueeze(-2)
        self.W_fh = nn.Parameter(scale_h * q.float() * (gates == "hidden"))
        T = t_min + (t_max - t_min) * torch.rand(networks, d, generator=g, dtype=torch.float64)
        self.b_f = nn.Parameter(torch.log(T).float())

    def final_state(self, x: torch.Tensor, b_f: torch.Tensor | None = None) -> torch.Tensor:
        """``h_T`` (networks, d) for one sequence per network ``x`` (networks, T, d_in), from ``h_0 = 0``."""
        b_f = self.b_f if b_f is None else b_f
        n = torch.einsum("kdi,kti->ktd", self.W_in, x)
        a = torch.einsum("kdi,kti->ktd", self.W_fx, x) + b_f.unsqueeze(1)
        h = torch.zeros_like(b_f)
        for t in range(x.shape[1]):
            f = torch.sigmoid(a[:, t] + torch.einsum("kde,ke->kd", self.W_fh, h))
            h = f * h + (1 - f) * n[:, t]
        return h

    def bias_sensitivity(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``h_T`` and the diagonal ``dh_{T,i}/db_{f,i}`` (networks, d), by forward-mode differentiation written out
        (checked against ``torch.func.jacfwd`` in the tests). With hidden-to-gate weights the units couple, so the
        whole Jacobian ``S = dh/db_f`` is carried along the sequence: ``dz = I + S W_fh^T`` and
        ``S' = f (1 - f) dz (h - n) + f S`` (rows: the bias moved). With constant or input gates the Jacobian is
        diagonal and its diagonal ``s`` obeys ``s' = f (1 - f) (h - n) + f s``."""
        checks.tensor(x, "x", ndim=3)
        with torch.no_grad():
            b = self.b_f.detach()
            n = torch.einsum("kdi,kti->ktd", self.W_in, x)
            a = torch.einsum("kdi,kti->ktd", self.W_fx, x) + b.unsqueeze(1)
            coupled = self.gates == "hidden"
            h = torch.zeros_like(b)
            S = torch.zeros(*b.shape, b.shape[-1], dtype=b.dtype, device=b.device) if coupled else torch.zeros_like(b)
            eye, Wt = torch.eye(b.shape[-1], dtype=b.dtype, device=b.device), self.W_fh.transpose(1, 2)
            for t in range(x.shape[1]):
                f = torch.sigmoid(a[:, t] + torch.einsum("kde,ke->kd", self.W_fh, h))
                if coupled:  # S[k, j, i] = dh_i / db_j
                    S = (f * (1 - f) * (h - n[:, t])).unsqueeze(1) * (eye + torch.bmm(S, Wt)) + f.unsqueeze(1) * S
                else:
                    S = f * (1 - f) * (h - n[:, t]) + f * S
                h = f * h + (1 - f) * n[:, t]
            return h, torch.diagonal(S, dim1=1, dim2=2) if coupled else S
