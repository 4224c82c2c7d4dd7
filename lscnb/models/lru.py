"""The Linear Recurrent Unit (Orvieto et al. 2023): a complex diagonal linear recurrence with exponential
parametrisation and input normalisation,

    lambda_j = exp(-exp(nu_j) + i exp(theta_j)),  gamma_j = exp(gamma_log_j),
    h_t = lambda * h_{t-1} + gamma * (B x_t),     y_t = Re(C h_t) + D * x_t,

with ``gamma_log`` a free parameter initialised to ``log sqrt(1 - |lambda|^2)``, as in the authors' minimal-LRU
(and the LSC paper's LRU): training or pre-training that moves ``|lambda|`` leaves the normalisation where it is.

The recurrence runs through :func:`lscnb.kernels.linear_scan`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from ..kernels import linear_scan


class LRU(nn.Module):
    """An LRU layer mapping (B, T, d_model) to (B, T, d_model) through ``d_state`` complex units.

    Eigenvalue moduli start uniform on the ring ``[r_min, r_max]`` (uniform in area, as in the original) and
    phases uniform in ``[0, max_phase]``. ``normalize=False`` drops gamma (the curse-of-memory ablation).
    """

    def __init__(
        self,
        d_model: int,
        d_state: int,
        *,
        r_min: float = 0.0,
        r_max: float = 1.0,
        max_phase: float = 2 * math.pi,
        normalize: bool = True,
    ):
        super().__init__()
        self.d_model = checks.positive_int(d_model, "d_model")
        self.d_state = checks.positive_int(d_state, "d_state")
        if not 0.0 <= r_min < r_max <= 1.0:
            raise ValueError(f"need 0 <= r_min < r_max <= 1, got r_min={r_min}, r_max={r_max}")
        self.normalize = normalize
        u1, u2 = torch.rand(d_state), torch.rand(d_state)
        nu = -0.5 * torch.log(u1 * (r_max**2 - r_min**2) + r_min**2)
        self.nu_log = nn.Parameter(torch.log(nu))
        self.theta_log = nn.Parameter(torch.log(max_phase * u2 + 1e-12))
        # learned from its initial value sqrt(1 - |lambda|^2), not recomputed from nu (minimal-LRU's gamma_log)
        self.gamma_log = nn.Parameter(
            0.5 * torch.log(1 - torch.exp(-2 * torch.exp(self.nu_log.detach()))), requires_grad=normalize
        )
        self.B_re = nn.Parameter(torch.randn(d_state, d_model) / math.sqrt(2 * d_model))
        self.B_im = nn.Parameter(torch.randn(d_state, d_model) / math.sqrt(2 * d_model))
        self.C_re = nn.Parameter(torch.randn(d_model, d_state) / math.sqrt(d_state))
        self.C_im = nn.Parameter(torch.randn(d_model, d_state) / math.sqrt(d_state))
        self.D = nn.Parameter(torch.randn(d_model))

    def eigenvalues(self) -> torch.Tensor:
        return torch.exp(-torch.exp(self.nu_log) + 1j * torch.exp(self.theta_log))

    def gamma(self) -> torch.Tensor:
        """The input normalisation ``exp(gamma_log)`` (ones with ``normalize=False``)."""
        return torch.exp(self.gamma_log) if self.normalize else torch.ones_like(self.gamma_log)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        checks.tensor(x, "x", ndim=3)
        lam = self.eigenvalues()
        bx = torch.complex(x @ self.B_re.T, x @ self.B_im.T) * self.gamma()
        h = linear_scan(lam, bx, dim=1)
        y = (h @ torch.complex(self.C_re, self.C_im).T).real
        return y + x * self.D


class LRUBlock(nn.Module):
    """Residual LRU block of Orvieto et al. (2023), as used by the LSC paper:
    ``x + dropout(GLU(dropout(GELU(LRU(LayerNorm(x))))))``."""

    def __init__(self, d_model: int, d_state: int, *, dropout: float = 0.1, **lru_options):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.lru = LRU(d_model, d_state, **lru_options)
        self.glu = nn.Linear(d_model, 2 * d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dropout(nn.functional.gelu(self.lru(self.norm(x))))
        return x + self.dropout(nn.functional.glu(self.glu(y), dim=-1))


class DeepLRU(nn.Module):
    """A stack of :class:`LRUBlock` between an input map (embedding for token ids, linear for vectors) and a
    linear readout at every step. ``blocks[l].lru`` exposes each layer's recurrence."""

    def __init__(
        self,
        input_size: int,
        output_size: int,
        *,
        d_model: int,
        d_state: int,
        depth: int,
        tokens: bool = False,
        dropout: float = 0.1,
        **lru_options,
    ):
        super().__init__()
        checks.positive_int(depth, "depth")
        self.encoder = nn.Embedding(input_size, d_model) if tokens else nn.Linear(input_size, d_model)
        self.blocks = nn.ModuleList(LRUBlock(d_model, d_state, dropout=dropout, **lru_options) for _ in range(depth))
        self.norm = nn.LayerNorm(d_model)
        self.readout = nn.Linear(d_model, checks.positive_int(output_size, "output_size"))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.encoder(x)
        for block in self.blocks:
            h = block(h)
        return self.readout(self.norm(h))
