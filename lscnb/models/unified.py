"""The unified gated cell of the mean-field theory of gated RNNs (Gilboa et al. 2019, eqs. 1a-1c, Tables 1, 3).

Every architecture is a set of gates ``k`` with pre-activations ``u_k = W_k s + U_k z + b_k`` (1b) and an
element-wise update ``s' = f(s, {u_k}, z)`` (1a) that is affine in ``s``:

=========== ============== ====== ===========================================================================
arch        gates          state  update
=========== ============== ====== ===========================================================================
vanilla     f              h      ``h' = tanh(u_f)``
gru         f, r, r2       h      ``h' = sig(u_f) h + (1 - sig(u_f)) tanh(u_r2)``, ``u_r2 = W_r2 (sig(u_r) h) +..`` (1c)
peephole    i, f, r, o     c      ``c' = sig(u_f) c + sig(u_i) tanh(u_r)``; read-out ``p = sig(u_o) tanh(c')``
lstm        i, f, r, o     h, c   ``c' = sig(u_f) c + sig(u_i) tanh(u_r)``, ``h' = sig(u_o) tanh(c')`` (13)
=========== ============== ====== ===========================================================================

The GRU applies its reset gate *before* the matrix product (1c), unlike ``torch.nn.GRU``; the peephole LSTM's
gates all read the cell state ``c`` (Table 3). Weights are drawn with ``Theta``: ``W_k ~ N(0, sigma2_k / N)``,
``U_k ~ N(0, nu2_k / d)`` (fan-in d), ``b_k = mu_k`` (bias variances are 0, as in all of the paper's
initialisations). "Untied" networks draw fresh weights at every step, the assumption of the theory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from .. import checks

GATES = {"vanilla": ("f",), "gru": ("f", "r", "r2"), "peephole": ("i", "f", "r", "o"), "lstm": ("i", "f", "r", "o")}


def state_size(arch: str, n: int) -> int:
    """Length of the flat state: ``2n`` for the LSTM (``[h, c]``), ``n`` otherwise."""
    return 2 * n if checks.one_of(arch, GATES, "arch") == "lstm" else n


@dataclass(frozen=True)
class Theta:
    """Initialisation hyper-parameters per gate: weight variance ``sigma2``, input variance ``nu2``, bias ``mu``."""

    arch: str
    sigma2: dict = field(default_factory=dict)
    nu2: dict = field(default_factory=dict)
    mu: dict = field(default_factory=dict)

    def __post_init__(self):
        gates = GATES[checks.one_of(self.arch, GATES, "arch")]
        for name in ("sigma2", "nu2", "mu"):
            table = getattr(self, name)
            unknown = set(table) - set(gates)
            if unknown:
                raise ValueError(f"{name} has gates {sorted(unknown)} that a {self.arch} cell lacks ({gates})")
            if name != "mu" and any(v < 0 for v in table.values()):
                raise ValueError(f"{name} must be non-negative, got {table}")

    @property
    def gates(self) -> tuple:
        return GATES[self.arch]

    def s2(self, k: str) -> float:
        return float(self.sigma2.get(k, 0.0))

    def n2(self, k: str) -> float:
        return float(self.nu2.get(k, 0.0))

    def m(self, k: str) -> float:
        return float(self.mu.get(k, 0.0))

    def with_(self, **changes) -> Theta:
        """A copy with some gates changed, e.g. ``theta.with_(mu={"f": 3.0})`` (other gates kept)."""
        out = {name: dict(getattr(self, name)) for name in ("sigma2", "nu2", "mu")}
        for name, table in changes.items():
            if name not in out:
                raise ValueError(f"unknown field {name!r}: use sigma2, nu2 or mu")
            out[name].update(table)
        return replace(self, **out)


def uniform_theta(arch: str, sigma2: float = 1.0, nu2: float = 1.0, mu: dict | None = None) -> Theta:
    """The same weight and input variance for every gate, with bias means ``mu`` (default 0)."""
    gates = GATES[checks.one_of(arch, GATES, "arch")]
    return Theta(arch, {k: sigma2 for k in gates}, {k: nu2 for k in gates}, dict(mu or {}))


def critical_theta(arch: str = "peephole") -> Theta:
    """App. E.4: the critical initialisations (peephole: sigma2 = 1e-5, nu = 0, mu_f = 5; CIFAR LSTM)."""
    if arch == "peephole":
        return Theta("peephole", {k: 1e-5 for k in "ifro"}, {k: 0.0 for k in "ifro"}, {"f": 5.0})
    if arch == "lstm":
        return Theta(
            "lstm", {"i": 1e-5, "f": 1e-5, "r": 1e-5, "o": 1.0}, {"i": 1.0, "r": 1.0, "f": 0.0, "o": 0.0}, {"f": 1.0}
        )
    raise ValueError(f"arch must be 'peephole' or 'lstm' (App. E.4), got {arch!r}")


def standard_theta(arch: str = "peephole", d: int = 1, n: int = 600) -> Theta:
    """App. E.5: sigma2 = 1 (orthogonal or 1/N Gaussian recurrent weights per gate), mu_f = 1, and Keras' Glorot
    on the stacked d x 4N input kernel, ``nu2 = 2d / (d + 4N)``."""
    if arch not in ("peephole", "lstm"):
        raise ValueError(f"arch must be 'peephole' or 'lstm' (App. E.5), got {arch!r}")
    nu2 = 2 * checks.positive_int(d, "d") / (d + 4 * checks.positive_int(n, "n"))
    return uniform_theta(arch, 1.0, nu2, {"f": 1.0})


# ----------------------------------------------------------------------------------------------- the step
def gated_step(arch: str, s: torch.Tensor, z: torch.Tensor, W: dict, U: dict, b: dict) -> torch.Tensor:
    """One step of eq. (1) for a batch: ``s`` (..., S), ``z`` (..., d); ``W[k]`` (..., N, N) acting as ``x @ W``,
    ``U[k]`` (..., d, N), ``b[k]`` (..., N); leading dimensions broadcast (models, batch)."""

    def pre(k, x):
        return (x.unsqueeze(-2) @ W[k]).squeeze(-2) + (z.unsqueeze(-2) @ U[k]).squeeze(-2) + b[k]

    return update(arch, s, pre)


def update(arch: str, s: torch.Tensor, pre) -> torch.Tensor:
    """Eq. (1a) given ``pre(k, x)``, the pre-activation of gate ``k`` reading the vector ``x`` (eq. 1b, 1c)."""
    sig, tanh = torch.sigmoid, torch.tanh
    if arch == "vanilla":
        return tanh(pre("f", s))
    if arch == "gru":
        f, r = sig(pre("f", s)), sig(pre("r", s))
        return f * s + (1 - f) * tanh(pre("r2", r * s))
    if arch == "peephole":
        return sig(pre("f", s)) * s + sig(pre("i", s)) * tanh(pre("r", s))
    if arch == "lstm":
        n = s.shape[-1] // 2
        h, c = s[..., :n], s[..., n:]
        c = sig(pre("f", h)) * c + sig(pre("i", h)) * tanh(pre("r", h))
        return torch.cat([sig(pre("o", h)) * tanh(c), c], dim=-1)
    raise ValueError(f"arch must be one of {sorted(GATES)}, got {arch!r}")


# ----------------------------------------------------------------------------------------------- Tables 1, 3
EQUATIONS = {
    "vanilla": {"state": "h", "reads": {"f": "s"}, "update": [("s", "tanh(u_f)")]},
    "gru": {
        "state": "h",
        "reads": {"f": "s", "r": "s", "r2": "sig(u_r) * s"},
        "update": [("s", "sig(u_f) * s + (1 - sig(u_f)) * tanh(u_r2)")],
    },
    "peephole": {
        "state": "c",
        "reads": {k: "s" for k in "ifro"},
        "update": [("s", "sig(u_f) * s + sig(u_i) * tanh(u_r)")],
        "readout": "sig(u_o) * tanh(s)",
    },
    "lstm": {
        "state": "h, c",
        "reads": {k: "h" for k in "ifro"},
        "update": [("c", "sig(u_f) * c + sig(u_i) * tanh(u_r)"), ("h", "sig(u_o) * tanh(c)")],
    },
}
"""Tables 1 and 3 as data: per architecture, the vector each gate's ``W_k`` multiplies (eqs. 1b, 1c) and the
update (1a) as expressions, evaluated in order (a later line sees the new value of an earlier one).
:func:`evaluate_equations` runs them and a test checks they are :func:`update`; :func:`equations_table`
renders them."""


def evaluate_equations(arch: str, s: torch.Tensor, pre) -> torch.Tensor:
    """Eq. (1a) computed from the expressions of ``EQUATIONS[arch]`` (slow; for checking :func:`update`)."""
    eq = EQUATIONS[checks.one_of(arch, EQUATIONS, "arch")]
    n = s.shape[-1] // 2
    env = {"s": s} if arch != "lstm" else {"h": s[..., :n], "c": s[..., n:]}
    cache = {}

    class Names(dict):
        def __missing__(self, name):
            if name.startswith("u_") and name[2:] in eq["reads"]:
                k = name[2:]
                if k not in cache:
                    cache[k] = pre(k, eval(eq["reads"][k], {}, Names(env)))  # noqa: S307 - our own constants
                return cache[k]
            return {"sig": torch.sigmoid, "tanh": torch.tanh}.get(name) if name in ("sig", "tanh") else env[name]

    for var, expr in eq["update"]:
        env[var] = eval(expr, {}, Names(env))  # noqa: S307 - our own constants
    return env["s"] if arch != "lstm" else torch.cat([env["h"], env["c"]], dim=-1)


def equations_gap(arch: str, n: int = 6, d: int = 3, seed: int = 0) -> float:
    """Largest difference between :func:`evaluate_equations` and :func:`update` on random weights and states."""
    gen = torch.Generator().manual_seed(seed)
    s = torch.randn(4, state_size(arch, n), generator=gen, dtype=torch.float64)
    z = torch.randn(4, d, generator=gen, dtype=torch.float64)
    W, U, b = sample_weights(uniform_theta(arch, 1.5, 0.7, {"f": 0.3}), n, d, generator=gen)

    def pre(k, x):
        return x @ W[k] + z @ U[k] + b[k]

    return float((evaluate_equations(arch, s, pre) - update(arch, s, pre)).abs().max())


def _tex(expr: str, new: set, state: str = "s") -> str:
    """An expression of ``EQUATIONS`` in LaTeX: variables at ``t`` if updated already (``new``), else ``t-1``;
    the flat state ``s`` is written ``state``."""
    import re

    def name(m):
        tok = m.group(0)
        if tok == "sig":
            return r"\sigma"
        if tok == "tanh":
            return r"\tanh"
        if tok.startswith("u_"):
            k = tok[2:]
            return rf"\mathbf u_{{{k[0]}_{k[1]}}}^t" if len(k) > 1 else rf"\mathbf u_{k}^t"
        sym = state if tok == "s" else tok
        return rf"\mathbf {sym}^{{t}}" if tok in new else rf"\mathbf {sym}^{{t-1}}"

    out = re.sub(r"[A-Za-z_][A-Za-z_0-9]*", name, expr)
    return out.replace(" * ", r"\circ ").replace("(1 - ", r"(1-")


def equations_table() -> list[dict]:
    """Rows of Tables 1 and 3 rendered from ``EQUATIONS`` (Markdown with inline LaTeX)."""
    rows = []
    for arch, eq in EQUATIONS.items():
        new, lines, st = set(), [], eq["state"] if arch != "lstm" else "s"
        for var, expr in eq["update"]:
            lhs = st if var == "s" else var
            lines.append(f"$\\mathbf {lhs}^t={_tex(expr, new, st)}$")
            new.add(var)
        reads = {}
        for k, v in eq["reads"].items():
            reads.setdefault(_tex(v, set(), st), []).append(k.replace("r2", "r₂"))
        rows.append(
            {
                "architecture": arch,
                "gates K": ", ".join(g.replace("r2", "r₂") for g in eq["reads"]),
                "state s": eq["state"],
                "W_k multiplies": "; ".join(f"{', '.join(ks)}: ${v}$" for v, ks in reads.items()),
                "update (1a)": "<br>".join(lines),
                "read-out": f"${_tex(eq['readout'], {'s'}, st)}$" if "readout" in eq else "$\\mathbf h^t$",
            }
        )
    return rows


def fresh_product(x: torch.Tensor, var: float, units: int, generator=None) -> torch.Tensor:
    """``x @ W`` for a fresh ``W ~ N(0, var / fan_in)`` with ``units`` columns, sampled exactly in
    distribution at O(units) cost instead of drawing W.

    For rows ``x`` (m, fan_in) (m copies of a network sharing W) the products are independent across output
    units and Gaussian with covariance ``var * x x^T / fan_in`` between the copies (the spec's Gram trick)."""
    checks.tensor(x, "x", ndim=2)
    m = x.shape[0]
    gram = var * (x @ x.T) / x.shape[-1]
    L = torch.linalg.cholesky(gram + 1e-12 * torch.eye(m, dtype=x.dtype, device=x.device))
    return L @ torch.randn(m, units, generator=generator, dtype=x.dtype, device=x.device)


def sample_weights(
    theta: Theta, n: int, d: int, *, lead: tuple = (), generator=None, dtype=torch.float64, device=None
) -> tuple[dict, dict, dict]:
    """Weights of eq. (1b) with shapes ``lead + (N, N)``, ``lead + (d, N)``, ``lead + (N,)`` for every gate."""
    n, d = checks.positive_int(n, "n"), checks.positive_int(d, "d")
    W, U, b = {}, {}, {}
    for k in theta.gates:
        W[k] = torch.randn(*lead, n, n, generator=generator, dtype=dtype, device=device) * math.sqrt(theta.s2(k) / n)
        U[k] = torch.randn(*lead, d, n, generator=generator, dtype=dtype, device=device) * math.sqrt(theta.n2(k) / d)
        b[k] = torch.full((*lead, n), theta.m(k), dtype=dtype, device=device)
    return W, U, b


# ----------------------------------------------------------------------------------------------- simulation
def simulate_pair(
    theta: Theta, n: int, inputs: torch.Tensor, *, tied: bool, seed: int = 0, state0: torch.Tensor | None = None
) -> torch.Tensor:
    """Run two copies of one random network (shared weights) on a pair of input sequences.

    ``inputs`` is (2, T, d). Untied networks draw fresh weights at every step (the theory's assumption), which
    ``fresh_product`` samples exactly in distribution at O(N) per step; tied ones draw them once. Returns the states (T
    + 1, 2, S), the initial state first (default N(0, 1))."""
    checks.tensor(inputs, "inputs", ndim=3)
    if inputs.shape[0] != 2:
        raise ValueError(f"inputs must hold two sequences (2, T, d), got shape {tuple(inputs.shape)}")
    gen = torch.Generator().manual_seed(seed)
    T, d = inputs.shape[1], inputs.shape[2]
    S = state_size(theta.arch, n)
    s = state0 if state0 is not None else torch.randn(S, generator=gen, dtype=inputs.dtype).expand(2, S)
    states = [s]
    weights = sample_weights(theta, n, d, generator=gen, dtype=inputs.dtype) if tied else None
    for t in range(T):
        z = inputs[:, t]
        if tied:
            s = gated_step(theta.arch, s, z, *weights)
        else:
            s = update(
                theta.arch,
                s,
                lambda k, x, z=z: (
                    fresh_product(x, theta.s2(k), n, gen) + fresh_product(z, theta.n2(k), n, gen) + theta.m(k)
                ),
            )
        states.append(s)
    return torch.stack(states)


def pair_statistics(states: torch.Tensor, arch: str) -> dict:
    """Mean-field order parameters measured across units: ``Q`` (mean square of copy a) and the Pearson
    correlation ``C`` between the copies, per step; for the LSTM they are those of ``h``."""
    if arch == "lstm":
        states = states[..., : states.shape[-1] // 2]
    a, b = states[:, 0], states[:, 1]
    ac, bc = a - a.mean(-1, keepdim=True), b - b.mean(-1, keepdim=True)
    C = (ac * bc).mean(-1) / (ac.pow(2).mean(-1).sqrt() * bc.pow(2).mean(-1).sqrt()).clamp_min(1e-300)
    return {"Q": a.pow(2).mean(-1), "mean": a.mean(-1), "C": C}


# ----------------------------------------------------------------------------------------------- training
class GatedClassifier(nn.Module):
    """``G`` independent gated networks trained at once (weights stacked along a leading model axis), each
    reading a (B, T, d) sequence and classifying from its last read-out state.

    ``untied=True`` gives every step its own trainable weights (the networks of Fig. 2); ``False`` shares them
    (Fig. 6). Model ``g`` is initialised with ``thetas[g]``. The loss of ``forward`` is summed over models, so
    one optimiser step is G independent steps (Adam and SGD act per parameter). A model that diverges is marked in
    ``alive`` and gets no gradient from then on (its optimiser state still drifts it a few steps), so the others
    train on as they would alone.
    """

    def __init__(
        self, thetas: list[Theta], n: int, d: int, length: int, classes: int, *, untied: bool = True, seed: int = 0
    ):
        super().__init__()
        if not thetas or len({t.arch for t in thetas}) != 1:
            raise ValueError("thetas must be a non-empty list of Theta of one architecture")
        self.arch, self.n, self.d = thetas[0].arch, checks.positive_int(n, "n"), checks.positive_int(d, "d")
        self.length, self.untied = checks.positive_int(length, "length"), untied
        steps = self.length if untied else 1
        gen = torch.Generator().manual_seed(seed)
        per_model = [sample_weights(th, n, d, lead=(steps,), generator=gen, dtype=torch.float32) for th in thetas]
        self.W = nn.ParameterDict({k: nn.Parameter(torch.stack([m[0][k] for m in per_model])) for k in thetas[0].gates})
        self.U = nn.ParameterDict({k: nn.Parameter(torch.stack([m[1][k] for m in per_model])) for k in thetas[0].gates})
        self.b = nn.ParameterDict({k: nn.Parameter(torch.stack([m[2][k] for m in per_model])) for k in thetas[0].gates})
        self.readout = nn.Parameter(torch.randn(len(thetas), n, classes, generator=gen) / math.sqrt(n))
        self.models = len(thetas)
        self.register_buffer("alive", torch.ones(self.models, dtype=torch.bool))  # False once model g diverged
        for p in self.parameters():
            p.register_hook(self._drop_diverged)

    def _pre(self, t: int, z: torch.Tensor):
        """The pre-activation function of step ``t`` (batched matrix products over the model axis)."""
        i = t if self.untied else 0
        G = self.models

        def pre(k, x):
            return torch.baddbmm(self.b[k][:, i].unsqueeze(1), x, self.W[k][:, i]) + torch.bmm(
                z.expand(G, *z.shape[-2:]), self.U[k][:, i]
            )

        return pre

    def _drop_diverged(self, grad: torch.Tensor) -> torch.Tensor:
        """Gradient hook of every weight: a model whose gradient is not finite has diverged (``alive`` turns False);
        its gradients are 0 from then on, so one diverged model does not stop the others."""
        self.alive &= torch.isfinite(grad).flatten(1).all(1)
        return torch.where(self.alive.view(-1, *(1,) * (grad.ndim - 1)), grad, torch.zeros_like(grad))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (G, B, classes) for inputs (B, T, d)."""
        checks.tensor(x, "x", ndim=3)
        if x.shape[1] != self.length or x.shape[2] != self.d:
            raise ValueError(f"x must be (B, {self.length}, {self.d}), got {tuple(x.shape)}")
        B = x.shape[0]
        s = torch.zeros(self.models, B, state_size(self.arch, self.n), dtype=x.dtype, device=x.device)
        for t in range(self.length):
            s = update(self.arch, s, self._pre(t, x[:, t].unsqueeze(0)))
        if self.arch == "peephole":
            out = torch.sigmoid(self._pre(self.length - 1, x[:, -1].unsqueeze(0))("o", s)) * torch.tanh(s)
        else:
            out = s[..., : self.n]
        return out @ self.readout
