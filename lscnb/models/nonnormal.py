"""The non-normal RNN (nnRNN, Kerg et al. 2019; thesis eq. 3.5.1).

``h_{t+1} = modReLU(V h_t + U x_{t+1})`` with ``V = P (Lambda + T) P^T``: P orthogonal through the exponential
map of a skew matrix (as expRNN), Lambda block-diagonal 2x2 rotations ``gamma_i R(theta_i)`` (the eigenvalues),
T strictly lower triangular (feed-forward coupling between Schur modes). ``gamma_penalty`` is the delta term of
eq. 3.5.1; T's L2 penalty is weight decay on T's own optimiser group (``param_groups``).

``t_mask="block"`` keeps T out of the 2x2 diagonal blocks, so ``spec(V) = {gamma_i e^{+-i theta_i}}`` exactly;
``"tril"`` is the released code's mask (T inside the blocks moves the eigenvalue moduli).

The authors' code draws P's initialisation (Henaff or Cayley) but never applies it (the parameter is overwritten
by zeros before use), so their P starts at the identity; here the chosen initialisation is applied. At
initialisation P commutes with Lambda's rotation blocks, so V = Lambda either way; P matters once T != 0.

The other initial values follow the authors' ``OrthoRNNCell`` (``RNN_Cell.py``): U keeps ``nn.Linear``'s default
(their cell never calls its input initialiser), uniform in ``+-1/sqrt(input_size)`` (std ``1/sqrt(3 input_size)``),
no input bias; angles uniform in ``[0, 2 x 3.14)`` (their constant); gamma = 1; modReLU biases uniform in +-0.01.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .. import checks
from .orthogonal import ModReLU, skew, skew_init

THETA_MAX = 2 * 3.14
"""The authors' upper bound of the initial angles (``np.random.uniform(0, 2*3.14)``), kept for fidelity."""


class NNRNNCell(nn.Module):
    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        *,
        init: str = "henaff",
        t_mask: str = "block",
        seed: int = 0,
        gamma_fixed: float | None = None,
    ):
        super().__init__()
        self.input_size, self.hidden_size = (
            checks.positive_int(input_size, "input_size"),
            checks.positive_int(hidden_size, "hidden_size"),
        )
        if hidden_size % 2:
            raise ValueError(f"hidden_size must be even (2x2 rotation blocks), got {hidden_size}")
        checks.one_of(t_mask, ("block", "tril"), "t_mask")
        g = torch.Generator().manual_seed(seed)
        n, m = hidden_size, hidden_size // 2
        self.log_P = nn.Parameter(skew_init(n, init, generator=g))
        self.theta = nn.Parameter(THETA_MAX * torch.rand(m, generator=g))
        if gamma_fixed is None:
            self.gamma = nn.Parameter(torch.ones(m))
        else:  # thesis App. A.6: gamma clamped (a buffer, not learned)
            self.register_buffer("gamma", torch.full((m,), checks.positive_float(gamma_fixed, "gamma_fixed")))
        self.T = nn.Parameter(torch.zeros(n, n))
        mask = torch.tril(torch.ones(n, n), -1)
        if t_mask == "block":
            idx = torch.arange(0, n, 2)
            mask[idx + 1, idx] = 0.0
        self.register_buffer("mask", mask)
        bound = 1 / math.sqrt(input_size)  # nn.Linear's default (kaiming_uniform_ with a = sqrt(5))
        self.U = nn.Parameter((2 * torch.rand(n, input_size, generator=g) - 1) * bound)
        self.phi = ModReLU(n)

    @property
    def state_size(self) -> int:
        return self.hidden_size

    def P(self) -> torch.Tensor:
        return torch.matrix_exp(skew(self.log_P))

    def Lambda(self) -> torch.Tensor:
        c, s = self.gamma * torch.cos(self.theta), self.gamma * torch.sin(self.theta)
        blocks = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (m, 2, 2)
        return torch.block_diag(*blocks)

    def Theta(self) -> torch.Tensor:
        return self.Lambda() + self.T * self.mask

    def V(self) -> torch.Tensor:
        P = self.P()
        return P @ self.Theta() @ P.T

    def gamma_penalty(self, delta: float) -> torch.Tensor:
        return delta * (self.gamma - 1).pow(2).sum()

    def forward(self, state: torch.Tensor, x: torch.Tensor, V: torch.Tensor | None = None) -> torch.Tensor:
        V = self.V() if V is None else V
        return self.phi(state @ V.T + x @ self.U.T)

    def sequence(self, x: torch.Tensor, state: torch.Tensor | None = None) -> torch.Tensor:
        """States (B, T, N) for inputs (B, T, D) from ``state`` (zeros if None), computing V once."""
        V, out = self.V(), []
        h = torch.zeros(x.shape[0], self.hidden_size, dtype=x.dtype, device=x.device) if state is None else state
        for t in range(x.shape[1]):
            h = self.forward(h, x[:, t], V)
            out.append(h)
        return torch.stack(out, 1)

    def output(self, state):
        return state

    def initial_state(self, batch: int, device=None, dtype=None) -> torch.Tensor:
        return torch.zeros(batch, self.hidden_size, device=device, dtype=dtype or self.U.dtype)

    def param_groups(self, lr: float, lr_orth: float, t_decay: float) -> tuple[list, list]:
        """The official split: (main groups, with T weight-decayed in its own group; P's skew parameter alone)."""
        rest = [p for n, p in self.named_parameters() if n not in ("log_P", "T")]
        return [{"params": rest, "lr": lr}, {"params": [self.T], "lr": lr, "weight_decay": t_decay}], [
            {"params": [self.log_P], "lr": lr_orth}
        ]

    @torch.no_grad()
    def schur_parts(self) -> dict:
        """The learned factors as float64 arrays, read from the parameters (never from a Schur decomposition of a
        trained V, which is unstable for non-normal matrices; thesis App. A.4): ``Theta = Lambda + T``, ``Lambda``,
        ``T`` (masked), the angles ``theta`` in [0, 2 pi), the scales ``gamma``, and ``P``'s departure from
        orthogonality ``max |P^T P - I|``."""
        P = self.P()
        eye = torch.eye(self.hidden_size, dtype=P.dtype, device=P.device)
        lam, T = self.Lambda(), self.T * self.mask
        return {
            "Theta": (lam + T).double().cpu().numpy(),
            "Lambda": lam.double().cpu().numpy(),
            "T": T.double().cpu().numpy(),
            "theta": (self.theta % (2 * math.pi)).double().cpu().numpy(),
            "gamma": self.gamma.double().cpu().numpy(),
            "P_orthogonality": float((P.T @ P - eye).abs().max()),
        }

    def effective_parameters(self) -> int:
        """Free parameters: N(N-1)/2 (P) + the masked T + N/2 angles + N/2 scales (unless clamped) + N biases + U."""
        n = self.hidden_size
        scales = n // 2 if isinstance(self.gamma, nn.Parameter) else 0
        return n * (n - 1) // 2 + int(self.mask.sum()) + n // 2 + scales + n + self.U.numel()
