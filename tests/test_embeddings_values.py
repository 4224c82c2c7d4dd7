"""The curse of memory's input data (lscnb.data.embeddings) by value: the AR(1) chains and the BERT stand-in by their
autocorrelation, the two-component fit on an exact curve, and the Wikipedia/BERT path through faked Hugging Face
packages (it needs a network otherwise) (issue 27)."""

import sys
import types

import numpy as np
import pytest
import torch

from lscnb.data import embeddings as E


def _gen(seed=0):
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("rho", [0.0, 0.6, 1.0])
def test_ar1_autocorrelation_is_rho_to_the_lag(rho):
    z = E.ar1(400, 30, 20, rho, generator=_gen())
    assert z.dtype == torch.float32 and z.shape == (400, 30, 20)
    R = E.autocorrelation(z, 4)
    np.testing.assert_allclose(R, [rho**d for d in range(5)], atol=0.05 if rho == 1 else 0.015)  # rho 1: 8000 draws
    assert z[:, -1].var().item() == pytest.approx(1.0, abs=0.05)  # unit variance at every step
    assert E.ar1(2, 3, 1, rho, dtype=torch.float64).dtype == torch.float64


def test_ar1_rejects_rho_outside_the_unit_interval():
    for bad in (-0.1, 1.1):
        with pytest.raises(ValueError, match=f"rho must lie in \\[0, 1\\], got {bad}"):
            E.ar1(2, 3, 1, bad)


def test_bert_like_has_the_two_component_autocorrelation():
    x = E.bert_like(300, 40, 30, white=0.5, slow=1.5, rho=0.8, generator=_gen(1))
    R = E.autocorrelation(x, 5)
    expected = [0.5 + 1.5] + [1.5 * 0.8**d for d in range(1, 6)]
    np.testing.assert_allclose(R, expected, rtol=0.03, atol=0.01)
    assert x.dtype == torch.float32 and E.bert_like(2, 3, 1, dtype=torch.float64).dtype == torch.float64
    fit = E.fit_two_component(R)
    assert fit["rho"] == pytest.approx(0.8, abs=0.02) and fit["slow"] == pytest.approx(1.5, rel=0.05)


def test_autocorrelation_by_hand():
    x = torch.tensor([[[1.0], [2.0], [3.0]]])
    # R(0) = (1 + 4 + 9)/3, R(1) = (2 + 6)/2, R(2) = 3/1
    assert E.autocorrelation(x, 2).tolist() == pytest.approx([14 / 3, 4.0, 3.0])
    with pytest.raises(ValueError, match="max_lag must be below the sequence length 3, got 3"):
        E.autocorrelation(x, 3)


def test_fit_two_component_on_an_exact_curve():
    R = [2.0 + 3.0] + [3.0 * 0.7**d for d in range(1, 8)]
    fit = E.fit_two_component(R)
    assert fit == pytest.approx({"white": 2.0, "slow": 3.0, "rho": 0.7}, rel=1e-12)
    part = E.fit_two_component(R[:3] + [-1.0], lags=slice(1, 3))  # only the lags asked for are fitted
    assert part == pytest.approx({"white": 2.0, "slow": 3.0, "rho": 0.7}, rel=1e-12)
    assert E.fit_two_component([1.0, 0.5, 0.25]) == pytest.approx({"white": 0.0, "slow": 1.0, "rho": 0.5})
    with pytest.raises(ValueError, match=r"R must be a 1-d array of at least 3 lags, got shape \(2,\)"):
        E.fit_two_component([1.0, 0.5])
    with pytest.raises(ValueError, match=r"R must be positive on the fitted lags \(log-linear fit\)"):
        E.fit_two_component([1.0, 0.5, 0.0])


def test_bert_wikipedia_through_faked_packages(monkeypatch):
    calls = {}

    def load_dataset(name, config, split):
        calls["dataset"] = (name, config, split)
        return {"text": ["one", "two"]}

    class Tokenizer:
        def __call__(self, texts, **kw):
            calls["tokenize"] = (texts, kw)
            return {"input_ids": torch.zeros(2, kw["max_length"], dtype=torch.long)}

    class Encoder:
        def __call__(self, **kw):
            calls["encode"] = sorted(kw)
            return types.SimpleNamespace(hidden_states=[torch.ones(2, 7, 3, dtype=torch.float64), None])

    transformers = types.SimpleNamespace(
        AutoTokenizer=types.SimpleNamespace(from_pretrained=lambda m: calls.setdefault("tok", m) and Tokenizer()),
        AutoModel=types.SimpleNamespace(from_pretrained=lambda m: calls.setdefault("model", m) and Encoder()),
    )
    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.setitem(sys.modules, "transformers", transformers)
    out = E.bert_wikipedia(2, 7, model="tiny-bert", config="2020.en")
    assert out.dtype == torch.float32 and out.shape == (2, 7, 3)
    assert calls["dataset"] == ("wikipedia", "2020.en", "train[:2]")
    assert calls["tok"] == calls["model"] == "tiny-bert"
    assert calls["tokenize"] == (
        ["one", "two"],
        {"padding": "max_length", "truncation": True, "max_length": 7, "return_tensors": "pt"},
    )
    assert calls["encode"] == ["input_ids", "output_hidden_states"]
    E.bert_wikipedia()
    assert calls["dataset"] == ("wikipedia", "20220301.en", "train[:128]") and calls["tok"] == "tiny-bert"
    assert calls["tokenize"][1]["max_length"] == 512


def test_bert_wikipedia_without_the_packages(monkeypatch):
    monkeypatch.setitem(sys.modules, "datasets", None)
    with pytest.raises(RuntimeError, match="bert_wikipedia needs the transformers and datasets packages"):
        E.bert_wikipedia(1, 2)
