"""Gradient propagation through self-attentive RNNs (Kerg et al. 2020; thesis ch. 4), in the scalar linearised
model of its theorems: ``h_{u+1} = lam s_u``, ``s_u = combine(h_u, c_u)``, ``c_u = sum_{i in A_u} h_i / |A_u|``
with a fixed attention pattern ``A_u``. Perturbing ``h_t`` by 1 and propagating forward gives
``g(k) = |ds_{t+k} / dh_t|``, the quantity the theorems bound:

* ``none`` (a plain RNN, ``s = h``): ``lam^k``, exponential;
* ``uniform`` (attend to every past state): a power law, ``Omega(1/T)`` (Thm 4.4.2);
* ``sparse`` (the perturbed state is a stored relevant event, plus the last ``kappa - 1`` states): a constant
  ``Omega(1/kappa)`` (Thm 4.4.3 with dependency depth 1);
* ``window`` (the last ``kappa`` states only): exponential again.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .. import checks

PATTERNS = ("none", "uniform", "sparse", "window")


def propagation(
    pattern: str, lam: float, steps: int, *, kappa: int = 5, t: int = 1, combine: str = "mean"
) -> np.ndarray:
    """``g(k)`` for k = 0..steps-1 (``combine="mean"``: ``s = (h + c)/2`` as in the authors' code; ``"sum"``:
    ``s = h + c`` as in the thesis)."""
    checks.one_of(pattern, PATTERNS, "pattern")
    checks.one_of(combine, ("mean", "sum"), "combine")
    steps, kappa = checks.positive_int(steps, "steps"), checks.positive_int(kappa, "kappa")
    t = checks.positive_int(t, "t")
    w = 0.5 if combine == "mean" else 1.0
    d = 1.0  # dh_u / dh_t at the current step u
    total, count = 1.0, t  # uniform: sum of dh_i/dh_t over i <= u (states before t contribute 0), and u
    # derivatives of the most recent states, the current one included; the states before t (derivative 0) fill
    # the window as they fill uniform's count
    recent = deque([0.0] * (min(t, kappa) - 1) + [1.0], maxlen=kappa)
    out = []
    for _ in range(steps):
        if pattern == "none":
            e = d
        elif pattern == "uniform":
            e = w * (d + total / count)
        elif pattern == "window":
            e = w * (d + sum(recent) / len(recent))
        else:  # sparse: the stored state t (derivative 1) plus the last kappa - 1 states
            last = list(recent)[-(kappa - 1) :] if kappa > 1 else []
            e = w * (d + (1.0 + sum(last)) / (1 + len(last)))
        out.append(abs(e))
        d = lam * e
        total += d
        count += 1
        recent.append(d)
    return np.array(out)


def sparse_plateau(lam: float, kappa: int) -> float:
    """The constant ``g`` of the sparse pattern with ``s = (h + c)/2``: ``1 / (2 kappa - lam (2 kappa - 1))``."""
    return 1.0 / (2 * kappa - lam * (2 * kappa - 1))


def uniform_exponent(lam: float, combine: str = "mean") -> float:
    """The power ``p`` of ``g(T) ~ T^p`` under uniform attention: ``(2 lam - 1)/(1 - lam)`` for ``s = h + c`` and
    ``-2 (1 - lam) / (2 - lam)`` for ``s = (h + c)/2``; both are >= -1 (Thm 4.4.2's Omega(1/T))."""
    checks.one_of(combine, ("mean", "sum"), "combine")
    return (2 * lam - 1) / (1 - lam) if combine == "sum" else -2 * (1 - lam) / (2 - lam)


def screened_gradients(T: int, events, *, nu: int, rho: int, lam: float = 0.9, boost: float = 4.0) -> dict:
    """``|dL/dh_t|`` for every t of the linearised self-attentive RNN with relevancy screening (Algorithm 1, code
    form; App. B.3's nu/rho trade-off), ``L = s_{T-1}``.

    ``h_u = lam s_{u-1}``, ``s_u = (h_u + c_u)/2`` with ``c_u`` the attention over the buffer ``h_{u-nu+1}..h_u``
    and the long-term set: as in the authors' code (and :class:`lscnb.models.relevancy.RelRNN`), ``h_u`` joins the
    buffer and the state leaving it is screened *before* step u attends. Alignment is content-based and fixed: score
    ``boost`` for the states at ``events`` (the relevant inputs), 0 otherwise, softmax over the memory. A state's
    relevance is the attention it received in the buffer; on leaving the buffer it takes a free long-term slot or
    replaces the lowest-scored one if its relevance is larger. Returns the gradient (T,), the stored set at the
    end, and the number of states attended per step."""
    T, nu = checks.positive_int(T, "T"), checks.positive_int(nu, "nu")
    rho = checks.positive_int(rho, "rho", allow_zero=True)
    events = {checks.positive_int(int(e), "events", allow_zero=True) for e in events}
    if events and max(events) >= T:
        raise ValueError(f"events must lie in 0..{T - 1}, got {max(events)}")
    buf, score, slots = deque(), {}, {}  # buffer indices, relevance per buffered index, slot index -> relevance
    attended = []  # (indices, weights) per step
    for u in range(T):
        buf.append(u)
        score[u] = 0.0
        if len(buf) > nu:
            old = buf.popleft()
            s_old = score.pop(old)
            if rho and len(slots) < rho:
                slots[old] = s_old
            elif rho:
                low = min(slots, key=slots.get)
                if s_old > slots[low]:
                    del slots[low]
                    slots[old] = s_old
        mem = list(buf) + list(slots)
        e = np.array([boost if i in events else 0.0 for i in mem])
        a = np.exp(e - e.max())
        a /= a.sum()
        for i, w in zip(mem[: len(buf)], a):
            score[i] += w
        attended.append((mem, a))
    gs, gh = np.zeros(T), np.zeros(T)  # adjoints of s_u and h_u, reverse accumulation from L = s_{T-1}
    gs[-1] = 1.0
    for u in range(T - 1, -1, -1):
        mem, a = attended[u]
        gh[u] += 0.5 * gs[u]
        for i, w in zip(mem, a):
            gh[i] += 0.5 * w * gs[u]
        if u:
            gs[u - 1] += lam * gh[u]
    return {"grad": np.abs(gh), "stored": sorted(slots), "attended": np.array([len(m) for m, _ in attended])}
