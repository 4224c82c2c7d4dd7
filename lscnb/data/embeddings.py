"""Token-embedding input streams for the deep-network experiments of the curse of memory (Sec. 5, App. D).

The paper feeds BERT-base-uncased embedding-layer outputs (``hidden_states[0]``, 768-d) of Wikipedia articles,
512 tokens each. Averaged over features, their autocorrelation is fitted by (App. D.1, Fig. 12)

    R_x(D) ~= 0.332 delta_{D,0} + 0.044 * 0.997^|D|.

Neither the articles nor the weights can be had offline, so :func:`bert_like` draws a Gaussian process with exactly
that autocorrelation, ``x_t = sqrt(0.332) eps_t + sqrt(0.044) z_t`` with ``z`` an AR(1) chain of correlation 0.997
started in its stationary law (the AR(1) recursion is a linear scan), independent across features. The theory of
App. D.3 then applies to it exactly. :func:`bert_wikipedia` is the real pipeline for readers with a network and the
``transformers`` and ``datasets`` packages; :func:`autocorrelation` and :func:`fit_two_component` measure Fig. 12's
quantities on either.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .. import checks
from ..kernels import linear_scan

PAPER_AUTOCORRELATION = {"white": 0.332, "slow": 0.044, "rho": 0.997}
"""The paper's two-component fit of the BERT/Wikipedia autocorrelation (App. D.1, Fig. 12)."""
PAPER_FIRST_ORDER = 0.376
"""The paper's first-order fit, ``R_x(D) ~= 0.376 delta_{D,0}``."""


def ar1(
    batch: int, length: int, features: int, rho: float, *, generator: torch.Generator | None = None, dtype=torch.float32
) -> torch.Tensor:
    """Unit-variance AR(1) chains ``z_t = rho z_{t-1} + sqrt(1 - rho^2) eps_t`` (batch, length, features), with
    ``z_0 ~ N(0, 1)`` (stationary), so ``E z_t z_{t+D} = rho^|D|``."""
    batch, length = checks.positive_int(batch, "batch"), checks.positive_int(length, "length")
    features = checks.positive_int(features, "features")
    if not 0 <= rho <= 1:
        raise ValueError(f"rho must lie in [0, 1], got {rho}")
    eps = torch.randn(batch, length, features, generator=generator, dtype=torch.float64)
    drive = math.sqrt(1 - rho**2) * eps
    drive[:, 0] = eps[:, 0]
    return linear_scan(torch.tensor(rho, dtype=torch.float64), drive, dim=1).to(dtype)


def bert_like(
    batch: int,
    length: int,
    features: int,
    *,
    white: float = PAPER_AUTOCORRELATION["white"],
    slow: float = PAPER_AUTOCORRELATION["slow"],
    rho: float = PAPER_AUTOCORRELATION["rho"],
    generator: torch.Generator | None = None,
    dtype=torch.float32,
) -> torch.Tensor:
    """Gaussian inputs (batch, length, features) with ``R_x(D) = white delta_{D,0} + slow rho^|D|`` per feature:
    the paper's fit of BERT embeddings of Wikipedia (defaults), the offline stand-in for :func:`bert_wikipedia`."""
    white = checks.positive_float(white, "white", allow_zero=True)
    slow = checks.positive_float(slow, "slow", allow_zero=True)
    z = ar1(batch, length, features, rho, generator=generator, dtype=torch.float64)
    eps = torch.randn(batch, length, features, generator=generator, dtype=torch.float64)
    return (math.sqrt(white) * eps + math.sqrt(slow) * z).to(dtype)


def autocorrelation(x: torch.Tensor, max_lag: int) -> np.ndarray:
    """``R(D) = mean over (sequence, t, feature) of x_t x_{t+D}`` for ``D = 0..max_lag`` (no mean removed, as in
    the paper's Fig. 12), for ``x`` (batch, length, features)."""
    x = checks.tensor(x, "x", ndim=3).double()
    max_lag = checks.positive_int(max_lag, "max_lag", allow_zero=True)
    if max_lag >= x.shape[1]:
        raise ValueError(f"max_lag must be below the sequence length {x.shape[1]}, got {max_lag}")
    return np.array([float((x[:, D:] * x[:, : x.shape[1] - D]).mean()) for D in range(max_lag + 1)])


def fit_two_component(R, lags: slice = slice(1, None)) -> dict:
    """Fig. 12's refined fit ``R(D) ~= white delta_{D,0} + slow rho^D``: a linear regression of ``log R(D)`` on ``D``
    over ``lags`` (default all ``D >= 1``) gives ``slow`` and ``rho``; ``white = R(0) - slow``."""
    R = np.asarray(R, dtype=float)
    if R.ndim != 1 or R.size < 3:
        raise ValueError(f"R must be a 1-d array of at least 3 lags, got shape {R.shape}")
    D = np.arange(R.size)[lags]
    vals = R[lags]
    if np.any(vals <= 0):
        raise ValueError("R must be positive on the fitted lags (log-linear fit)")
    slope, intercept = np.polyfit(D, np.log(vals), 1)
    slow, rho = float(np.exp(intercept)), float(np.exp(slope))
    return {"white": float(R[0] - slow), "slow": slow, "rho": rho}


def bert_wikipedia(
    articles: int = 128, length: int = 512, *, model: str = "bert-base-uncased", config: str = "20220301.en"
) -> torch.Tensor:
    """The paper's real inputs (App. D.1): the first ``articles`` Wikipedia articles (Hugging Face ``wikipedia``,
    ``config``), tokenised with padding/truncation to ``length`` tokens and embedded by ``model``'s embedding layer
    (``hidden_states[0]``): a float32 tensor (articles, length, 768). Needs ``transformers``, ``datasets`` and a
    network (or their caches); not used by the book's offline builds."""
    articles, length = checks.positive_int(articles, "articles"), checks.positive_int(length, "length")
    try:
        import datasets
        import transformers
    except ImportError as err:
        raise RuntimeError(
            "bert_wikipedia needs the transformers and datasets packages and a network "
            "(pip install transformers datasets); offline, use bert_like"
        ) from err
    texts = datasets.load_dataset("wikipedia", config, split=f"train[:{articles}]")["text"]
    tokenizer = transformers.AutoTokenizer.from_pretrained(model)
    encoder = transformers.AutoModel.from_pretrained(model)
    tokens = tokenizer(texts, padding="max_length", truncation=True, max_length=length, return_tensors="pt")
    with torch.no_grad():
        out = encoder(**tokens, output_hidden_states=True)
    return out.hidden_states[0].float()
