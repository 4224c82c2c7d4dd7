"""Linear recurrent networks of the curse-of-memory teacher-student task (Zucchet & Orvieto 2024, Sec. 4.2).

Every model here is linear and time-invariant, ``h_{t+1} = A h_t + B x_{t+1}``, ``y_t = C h_t + D x_t``, so its
output is a causal convolution ``y_t = sum_k K_k x_{t-k} + D x_t`` with kernel ``K_k = C A^k B``. Training uses
the kernel and an FFT (``forward``), which is exact and fast; ``forward_recurrent`` runs the recurrence step by
step through :func:`lscnb.kernels.linear_scan` for diagonal models, as a check (they agree to float64 round-off).

- ``DenseLinearRNN``: a dense real A (optionally ``heads`` independent blocks: the block-diagonal ablation);
- ``DiagonalLRU``: complex diagonal ``lam = exp(-exp(w_nu) + i exp(w_theta))`` with a learned input
  normalisation ``gamma = exp(w_gamma)`` initialised to ``sqrt(1 - |lam|^2)`` (the LRU); ``param="default"``
  learns Re/Im of lam and gamma itself directly (as the authors' ``LRUBase``), ``gamma=False`` drops gamma;
- ``DiagonalS4``: the paper's modified S4 (App. A.3, eqs. 23-25), ``lam = exp((w_A^re + i w_A^im) Delta)`` with a
  learned step ``Delta = softplus(w_Delta)`` per unit that also scales the input, ``Delta * B``.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from .. import checks
from ..kernels import linear_scan


def causal_conv(x: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """``y_t = sum_{k<=t} kernel_k x_{t-k}`` along the last axis of ``x`` (B, T), by FFT."""
    T = x.shape[-1]
    n = 2 * T
    return torch.fft.irfft(torch.fft.rfft(x, n=n) * torch.fft.rfft(kernel[:T], n=n), n=n)[..., :T]


def power_vectors(A: torch.Tensor, b: torch.Tensor, T: int) -> torch.Tensor:
    """``[b, A b, ..., A^(T-1) b]`` (T, ..., n) for ``A`` (..., n, n) and ``b`` (..., n), by doubling:
    O(T n^2) work in log2(T) matrix products (all the vectors so far times ``A^(2^j)`` in one), differentiable."""
    T = checks.positive_int(T, "T")
    vecs, step = b.unsqueeze(0), A
    while vecs.shape[0] < T:
        vecs = torch.cat([vecs, torch.einsum("...ij,k...j->k...i", step, vecs)], dim=0)
        step = step @ step
    return vecs[:T]


def remap_eigenvalues(A: np.ndarray, nu0: float, theta0: float = math.pi) -> np.ndarray:
    """Eq. 15: eigenvalues ``lam -> (nu0 + (1 - nu0) tanh|lam|) exp(i angle(lam) theta0 / pi)``, eigenvectors kept;
    conjugate pairs stay pairs, so the result is real (float64, on the CPU)."""
    lam, V = np.linalg.eig(A)
    mag = nu0 + (1 - nu0) * np.tanh(np.abs(lam))
    new = mag * np.exp(1j * np.angle(lam) * theta0 / math.pi)
    return np.real(V @ np.diag(new) @ np.linalg.inv(V))


class DenseLinearRNN(nn.Module):
    """Dense (or block-diagonal, ``heads`` > 1) real linear RNN with scalar input and output.

    A starts as ``randn / sqrt(block)`` per block with eigenvalue moduli squashed by tanh (nu0 = 0, as in the
    paper's code) and angles scaled by ``theta0 / pi`` (eq. 15; Table 3's "theta0 teacher"); B, C, D follow
    Flax's LeCun-normal defaults (std 1, 1/sqrt(n), 1)."""

    def __init__(self, n: int = 64, *, heads: int = 1, seed: int = 0, theta0: float = math.pi, dtype=torch.float32):
        super().__init__()
        self.n, self.heads = checks.positive_int(n, "n"), checks.positive_int(heads, "heads")
        if n % heads:
            raise ValueError(f"heads must divide n, got n={n}, heads={heads}")
        rng = np.random.default_rng(seed)
        size = n // heads
        blocks = [
            remap_eigenvalues(rng.standard_normal((size, size)) / math.sqrt(size), 0.0, theta0) for _ in range(heads)
        ]
        self.A = nn.Parameter(torch.tensor(np.stack(blocks), dtype=dtype))
        self.B = nn.Parameter(torch.tensor(rng.standard_normal(n), dtype=dtype))
        self.C = nn.Parameter(torch.tensor(rng.standard_normal(n) / math.sqrt(n), dtype=dtype))
        self.D = nn.Parameter(torch.tensor(rng.standard_normal(), dtype=dtype))

    @classmethod
    def from_system(cls, A, B, C, D) -> DenseLinearRNN:
        """A dense student equal to the system ``(A, B, C, D)`` (dtype of ``A``): the optimum of Fig. 4A."""
        A = torch.as_tensor(A)
        model = cls(checks.tensor(A, "A", ndim=2).shape[0], dtype=A.dtype)
        with torch.no_grad():
            model.A.copy_(A.unsqueeze(0))
            model.B.copy_(torch.as_tensor(B, dtype=A.dtype))
            model.C.copy_(torch.as_tensor(C, dtype=A.dtype))
            model.D.copy_(torch.as_tensor(D, dtype=A.dtype))
        return model

    def kernel(self, T: int) -> torch.Tensor:
        """``K_k = C A^k B`` for k < T."""
        s = self.n // self.heads
        v = power_vectors(self.A, self.B.view(self.heads, s), T)  # (T, heads, s)
        return torch.einsum("hi,thi->t", self.C.view(self.heads, s), v)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs (batch, T) for scalar inputs (batch, T)."""
        checks.tensor(x, "x", ndim=2)
        return causal_conv(x, self.kernel(x.shape[-1])) + self.D * x

    def forward_recurrent(self, x: torch.Tensor) -> torch.Tensor:
        """The same outputs by running the recurrence step by step (the check of ``forward``)."""
        A = torch.block_diag(*self.A)
        h = torch.zeros(x.shape[0], self.n, dtype=x.dtype)
        ys = []
        for t in range(x.shape[1]):
            h = h @ A.T + x[:, t : t + 1] * self.B
            ys.append(h @ self.C + self.D * x[:, t])
        return torch.stack(ys, dim=1)


class _ComplexDiagonal(nn.Module):
    """What every complex diagonal student shares: ``y_t = Re(sum_i C_i h_t,i) + D x_t`` with
    ``h_t = lam * h_{t-1} + u * x_t``; subclasses give ``eigenvalues()`` (lam) and ``_input()`` (u)."""

    def _draw_input_output(self, n: int, g: torch.Generator, dtype) -> None:
        """``B ~ CN(0, 2/n)`` (real and imaginary parts N(0, 1/n)), ``C ~ CN(0, 2)``, ``D ~ N(0, 1)``, drawn in
        float64 from ``g`` after the eigenvalues (the authors' LRU initialisation)."""
        self.B_re = nn.Parameter((torch.randn(n, generator=g, dtype=torch.float64) / math.sqrt(n)).to(dtype))
        self.B_im = nn.Parameter((torch.randn(n, generator=g, dtype=torch.float64) / math.sqrt(n)).to(dtype))
        self.C_re = nn.Parameter(torch.randn(n, generator=g, dtype=torch.float64).to(dtype))
        self.C_im = nn.Parameter(torch.randn(n, generator=g, dtype=torch.float64).to(dtype))
        self.D = nn.Parameter(torch.randn((), generator=g, dtype=torch.float64).to(dtype))

    def kernel(self, T: int) -> torch.Tensor:
        """``K_k = Re(sum_i C_i lam_i^k u_i)`` for k < T."""
        k = torch.arange(checks.positive_int(T, "T"), dtype=self.D.dtype, device=self.D.device)
        lam = self.eigenvalues()
        powers = torch.exp(k[:, None] * torch.log(lam)[None, :])
        return torch.real(powers @ (torch.complex(self.C_re, self.C_im) * self._input()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        checks.tensor(x, "x", ndim=2)
        return causal_conv(x, self.kernel(x.shape[-1])) + self.D * x

    def forward_recurrent(self, x: torch.Tensor) -> torch.Tensor:
        """The recurrence through ``lscnb.kernels.linear_scan`` (the check of ``forward``)."""
        lam = self.eigenvalues()
        drive = x.to(lam.dtype).unsqueeze(-1) * self._input()  # (batch, T, n)
        h = linear_scan(lam.expand_as(drive), drive, dim=1)
        return torch.real(h @ torch.complex(self.C_re, self.C_im)) + self.D * x


def _ring(n: int, nu0: float, theta0: float, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """The LRU's initial eigenvalues: moduli uniform in area on the ring ``[nu0, 1]``, angles uniform in
    ``(-theta0, theta0)`` (float64)."""
    if not 0 <= nu0 < 1:
        raise ValueError(f"nu0 must lie in [0, 1), got {nu0}")
    u = torch.rand(n, generator=g, dtype=torch.float64)
    nu = torch.sqrt(u * (1 - nu0**2) + nu0**2).clamp(max=1 - 1e-7)
    return nu, (2 * torch.rand(n, generator=g, dtype=torch.float64) - 1) * theta0


class DiagonalLRU(_ComplexDiagonal):
    """Complex diagonal linear RNN with scalar input/output: the LRU (``param="exp"``, ``gamma=True``) and its
    ablations. Moduli start uniform on the ring ``[nu0, 1]``, phases uniform in ``(-theta0, theta0)``.

    The input scale starts at ``sqrt(1 - |lam|^2)`` and is learned as ``exp(w_gamma)`` with ``param="exp"`` and
    as ``gamma`` itself with ``param="default"`` (the authors' ``LRUBase``: ``jnp.exp(self.gamma) if
    parametrization == "exp" else self.gamma``)."""

    def __init__(
        self,
        n: int = 64,
        *,
        nu0: float = 0.0,
        theta0: float = math.pi,
        param: str = "exp",
        gamma: bool = True,
        seed: int = 0,
        dtype=torch.float32,
    ):
        super().__init__()
        self.n = checks.positive_int(n, "n")
        self.param, self.use_gamma = checks.one_of(param, ("exp", "default"), "param"), gamma
        g = torch.Generator().manual_seed(seed)
        nu, theta = _ring(n, nu0, theta0, g)
        theta = torch.remainder(theta, 2 * math.pi).clamp_min(1e-7)
        if param == "exp":
            self.w_nu = nn.Parameter(torch.log(-torch.log(nu)).to(dtype))
            self.w_theta = nn.Parameter(torch.log(theta).to(dtype))
        else:
            self.lam_re = nn.Parameter((nu * torch.cos(theta)).to(dtype))
            self.lam_im = nn.Parameter((nu * torch.sin(theta)).to(dtype))
        gamma0 = torch.sqrt(1 - nu**2)
        self.w_gamma = nn.Parameter(torch.log(gamma0).to(dtype)) if gamma and param == "exp" else None
        self.gamma = nn.Parameter(gamma0.to(dtype)) if gamma and param == "default" else None
        self._draw_input_output(n, g, dtype)

    @classmethod
    def from_system(cls, lam, b, c, D, dtype=torch.float64, *, param: str = "default") -> DiagonalLRU:
        """A complex diagonal student with eigenvalues ``lam``, input weights ``b`` and readout ``c`` (complex
        vectors) and skip ``D``: the diagonalised optimum of Fig. 4B (``param="default"``, no gamma), or the LRU's
        (``param="exp"``: ``w_nu = log(-log|lam|)``, ``w_theta = log(angle mod 2 pi)``, ``gamma = sqrt(1 - |lam|^2)``
        and ``B = b / gamma``, Fig. 9A)."""
        checks.one_of(param, ("default", "exp"), "param")
        lam, b, c = (torch.as_tensor(v, dtype=torch.complex128) for v in (lam, b, c))
        model = cls(checks.tensor(lam, "lam", ndim=1).shape[0], param=param, gamma=param == "exp", dtype=dtype)
        with torch.no_grad():
            if param == "exp":
                gamma = torch.sqrt(1 - lam.abs() ** 2)
                model.w_nu.copy_(torch.log(-torch.log(lam.abs())))
                model.w_theta.copy_(torch.log(torch.remainder(torch.angle(lam), 2 * math.pi)))
                model.w_gamma.copy_(torch.log(gamma))
                b = b / gamma
                pairs = (("B", b), ("C", c))
            else:
                pairs = (("lam", lam), ("B", b), ("C", c))
            for name, value in pairs:
                getattr(model, f"{name}_re").copy_(value.real)
                getattr(model, f"{name}_im").copy_(value.imag)
            model.D.copy_(torch.as_tensor(D, dtype=dtype))
        return model

    def eigenvalues(self) -> torch.Tensor:
        if self.param == "exp":
            return torch.exp(torch.complex(-torch.exp(self.w_nu), torch.exp(self.w_theta)))
        return torch.complex(self.lam_re, self.lam_im)

    def _input(self) -> torch.Tensor:
        b = torch.complex(self.B_re, self.B_im)
        if not self.use_gamma:
            return b
        return b * (torch.exp(self.w_gamma) if self.param == "exp" else self.gamma)


class DiagonalS4(_ComplexDiagonal):
    """The paper's modified S4 (App. A.3) with scalar input/output: ``Delta = softplus(w_Delta)`` (eq. 23),
    ``h_{t+1} = exp((w_A^re + i w_A^im) Delta) * h_t + Delta * B x_{t+1}`` (eq. 24), ``y_t = Re(C h_t) + D x_t``
    (eq. 25); one Delta per unit (no state expansion, no sharing). Delta starts at ``delta`` (1 in the paper) and
    ``exp(Delta w_A)`` like the LRU's lambda (same draws as :class:`DiagonalLRU` with the same seed)."""

    def __init__(
        self,
        n: int = 64,
        *,
        nu0: float = 0.0,
        theta0: float = math.pi,
        delta: float = 1.0,
        seed: int = 0,
        dtype=torch.float32,
    ):
        super().__init__()
        self.n = checks.positive_int(n, "n")
        delta = checks.positive_float(delta, "delta")
        g = torch.Generator().manual_seed(seed)
        nu, theta = _ring(n, nu0, theta0, g)
        self.w_A_re = nn.Parameter((torch.log(nu) / delta).to(dtype))
        self.w_A_im = nn.Parameter((theta / delta).to(dtype))
        self.w_delta = nn.Parameter(torch.full((n,), _softplus_inverse(delta), dtype=dtype))
        self._draw_input_output(n, g, dtype)

    @classmethod
    def from_system(cls, lam, b, c, D, *, delta: float = 0.01, dtype=torch.float64) -> DiagonalS4:
        """The S4 student equal to the diagonal system ``(lam, b, c, D)`` with step ``delta`` (Fig. 9B):
        ``w_A = (log|lam| + i angle(lam)) / delta`` and ``B = b / delta``."""
        lam, b, c = (torch.as_tensor(v, dtype=torch.complex128) for v in (lam, b, c))
        delta = checks.positive_float(delta, "delta")
        model = cls(checks.tensor(lam, "lam", ndim=1).shape[0], delta=delta, dtype=dtype)
        a, b = torch.log(lam) / delta, b / delta
        with torch.no_grad():
            for name, value in (("w_A", a), ("B", b), ("C", c)):
                getattr(model, f"{name}_re").copy_(value.real)
                getattr(model, f"{name}_im").copy_(value.imag)
            model.D.copy_(torch.as_tensor(D, dtype=dtype))
        return model

    def delta(self) -> torch.Tensor:
        return nn.functional.softplus(self.w_delta)

    def eigenvalues(self) -> torch.Tensor:
        return torch.exp(torch.complex(self.w_A_re, self.w_A_im) * self.delta())

    def _input(self) -> torch.Tensor:
        return torch.complex(self.B_re, self.B_im) * self.delta()


def _softplus_inverse(y: float) -> float:
    """``w`` with ``softplus(w) = y`` (y > 0)."""
    return y + math.log(-math.expm1(-y))


def conjugate_pair_system(seed: int = 0, *, nu: float = 0.99, spread: float = 0.003) -> dict:
    """The 4-unit system of Fig. 4 (App. C.3): two conjugate eigenvalue pairs with moduli ``nu + spread U`` and
    angles ``2 pi U``, complex Gaussian eigenvectors ``P``; ``A = P diag(lam) P^-1`` is real. Returns ``A, B, C,
    D`` (float64) and the diagonal form ``lam, b = P^-1 B, c = C P`` (complex128), so that
    ``C A^k B = sum_i c_i lam_i^k b_i``."""
    rng = np.random.default_rng(seed)
    half = nu + spread * rng.random(2)
    half = half * np.exp(2j * np.pi * rng.random(2))
    lam = np.array([half[0], half[0].conjugate(), half[1], half[1].conjugate()])
    v = (rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))) / (2 * math.sqrt(2))
    P = np.stack([v[:, 0], v[:, 0].conj(), v[:, 1], v[:, 1].conj()], axis=1)
    A = np.real(P @ np.diag(lam) @ np.linalg.inv(P))
    B, C, D = rng.standard_normal(4), rng.standard_normal(4) / 2, rng.standard_normal()
    return {
        "A": torch.tensor(A),
        "B": torch.tensor(B),
        "C": torch.tensor(C),
        "D": torch.tensor(D, dtype=torch.float64),
        "lam": torch.tensor(lam),
        "b": torch.tensor(np.linalg.solve(P, B)),
        "c": torch.tensor(C @ P),
    }


class Teacher:
    """The linear teacher of Sec. 4.2: ``n`` = 10 units, eigenvalue moduli in ``[nu0, nu0 + (1 - nu0) tanh(~1.2)]``
    (eq. 15), float64. ``sample(batch, T, generator)`` returns white-noise inputs and the teacher's outputs."""

    def __init__(self, n: int = 10, *, nu0: float = 0.9, theta0: float = math.pi, seed: int = 0):
        n = checks.positive_int(n, "n")
        rng = np.random.default_rng(seed)
        raw = rng.standard_normal((n, n)) / math.sqrt(n)
        B, C, D = rng.standard_normal(n), rng.standard_normal(n) / math.sqrt(n), rng.standard_normal()
        self._set(raw, B, C, D, nu0, theta0)

    @classmethod
    def from_authors(cls, nu0: float = 0.9, theta0: float | None = None) -> Teacher:
        """The teacher every run of the paper's code learns (:mod:`lscnb.models.zucchet_teacher`: its
        ``LinearSystem`` of seed 42, whatever the run's seed), remapped by eq. 15 to ``nu0`` and ``theta0``
        (default: the code's 3.14)."""
        from . import zucchet_teacher as z

        theta0 = z.MAX_PHASE if theta0 is None else checks.positive_float(theta0, "theta0")
        teacher = cls.__new__(cls)  # no random draw to overwrite: the draws are the authors'
        teacher._set(z.A_RAW, z.B, z.C, z.D, nu0, theta0)
        return teacher

    def _set(self, raw, B, C, D, nu0: float, theta0: float) -> None:
        """Keep ``A`` = ``raw`` (n x n) remapped by eq. 15 to ``nu0`` and ``theta0``, and ``B``, ``C``, ``D``."""
        if not 0 <= nu0 < 1:
            raise ValueError(f"nu0 must lie in [0, 1), got {nu0}")
        self.n = len(B)
        self.A = torch.tensor(remap_eigenvalues(np.asarray(raw, dtype=np.float64), nu0, theta0))
        self.B, self.C = (torch.tensor(np.asarray(v, dtype=np.float64)) for v in (B, C))
        self.D = torch.tensor(float(D), dtype=torch.float64)
        self._kernels = {}

    def kernel(self, T: int) -> torch.Tensor:
        if T not in self._kernels:
            self._kernels[T] = power_vectors(self.A, self.B, T) @ self.C
        return self._kernels[T]

    def output_variance(self, T: int = 10_000) -> float:
        """``Var(y*) = sum_k K_k^2 + D^2`` for unit white noise (the scale of the normalised loss)."""
        return float(self.kernel(T).pow(2).sum() + self.D**2)

    def sample(self, batch: int, T: int, generator=None, dtype=torch.float32):
        x = torch.randn(batch, T, generator=generator, dtype=torch.float64)
        y = causal_conv(x, self.kernel(T)) + self.D * x
        return x.to(dtype), y.to(dtype)
