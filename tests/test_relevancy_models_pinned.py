"""The relevancy-screening models (lscnb.models.relevancy) pinned where the by-value tests leave room: the streaming
top-rho rule on ties and pinned slots, the macro-states against the attention they report, the plain RNN's empty
memory trace, defaults and options reaching the core, devices, and the gradient norms' default window and argument
check (issue 27)."""

import math

import pytest
import torch

from lscnb.models import relevancy as RV


def _admit(model, scores, score):
    """One eviction into slots of the given scores (B = 1): the new (slot indices, slot scores)."""
    rho = len(scores)
    slots = torch.zeros(1, rho, model.n)
    idx = torch.arange(rho)[None] + 10
    _, new_idx, new_score = model._admit(slots, idx, torch.tensor([scores]), torch.ones(1, model.n), 7, score)
    return new_idx[0].tolist(), new_score[0].tolist()


def test_admit_replaces_only_on_a_strictly_larger_score():
    """Algorithm 1: the evicted state replaces the lowest-scored slot if its score is larger; an empty slot (-inf)
    takes anything; a tie, or slots all pinned (+inf), keep what they hold."""
    model = RV.RelRNN(2, 3, nu=1, rho=2)
    assert _admit(model, [0.5, 0.75], torch.tensor([0.5])) == ([10, 11], [0.5, 0.75])
    assert _admit(model, [0.5, 0.75], torch.tensor([0.625])) == ([7, 11], [0.625, 0.75])
    assert _admit(model, [math.inf, math.inf], torch.tensor([3.0])) == ([10, 11], [math.inf, math.inf])
    assert _admit(model, [0.25, -math.inf], torch.tensor([0.0])) == ([10, 7], [0.25, 0.0])


def test_macro_states_are_the_mean_of_state_and_context():
    """s_t = (h_t + c_t) / 2 with c_t = sum_i alpha_i h_i over the attended states (full attention, nu >= T)."""
    torch.manual_seed(0)
    model = RV.RelRNN(2, 3, nu=10, rho=0)
    x = torch.randn(2, 4, 2)
    h, attn = model(x, return_attention=True)
    macro = model(x, macro=True)
    for t, (idx, a) in enumerate(attn):
        assert idx[0].tolist() == list(range(t + 1))
        c = (a[..., None] * h[:, : t + 1]).sum(1)
        torch.testing.assert_close(macro[:, t], 0.5 * (h[:, t] + c))
    assert not torch.allclose(macro[:, 1:], h[:, 1:])


def test_plain_rnn_attends_to_nothing():
    """attention=False and the "RNN" tagger record zero memory entries at every step, and report no attention."""
    torch.manual_seed(1)
    x = torch.randn(2, 5, 3)
    model = RV.RelRNN(3, 4)
    model(x, attention=False)
    assert model.memory_trace == [0] * 5
    tagger = RV.Tagger("RNN", 3, 4, 2)
    assert tagger.kind == "RNN"
    logits, attn = tagger(x, return_attention=True)
    assert attn == [] and tagger.core.memory_trace == [0] * 5
    h, hs = torch.zeros(2, 4), []
    for t in range(5):  # h_t = tanh(U x_t + V h_{t-1})
        h = torch.tanh(tagger.core.U(x[:, t]) + tagger.core.V(h))
        hs.append(h)
    torch.testing.assert_close(logits, tagger.readout(torch.stack(hs, 1)))


def test_cell_sequence_memory_trace():
    """A plain cell attends to no memory: an empty trace before any pass, then one 0 per step (T = 5, D = 3)."""
    seq = RV.make_core("LSTM", 3, 4)
    assert seq.memory_trace == []
    seq(torch.randn(2, 5, 3))
    assert seq.memory_trace == [0] * 5


def test_taggers_memory_defaults_and_options():
    """Tagger and TokenTagger default to nu = rho = 10 and pass nu, rho on to the core."""
    core = RV.Tagger("RelRNN", 2, 3, 2).core
    assert (core.nu, core.rho) == (10, 10)
    core = RV.Tagger("RelRNN", 2, 3, 2, nu=3, rho=2).core
    assert (core.nu, core.rho) == (3, 2)
    tok = RV.TokenTagger("RelRNN", 5, 2, 3)
    assert (tok.core.nu, tok.core.rho) == (10, 10)
    tok = RV.TokenTagger("RelLSTM", 5, 2, 3, nu=4, rho=1)
    assert (tok.core.nu, tok.core.rho, tok.core.cell) == (4, 1, "lstm")


def test_token_tagger_fills_the_hidden_list():
    """hidden receives every step's state, (B, N) each."""
    hidden = []
    logits = RV.TokenTagger("RelRNN", 5, 2, 3, nu=2, rho=1)(torch.randint(5, (2, 4)), hidden=hidden)
    assert logits.shape == (2, 4, 5) and len(hidden) == 4 and all(h.shape == (2, 3) for h in hidden)


@pytest.mark.parametrize("cell", ["rnn", "lstm"])
def test_relrnn_stays_on_the_input_device(cell):
    """Masks, slot indices and scores follow the input (the meta device stands in for a GPU)."""
    model = RV.RelRNN(3, 4, nu=2, rho=2, cell=cell).to("meta")
    states, attn = model(torch.empty(2, 6, 3, device="meta"), return_attention=True)
    assert states.device.type == "meta" and states.shape == (2, 6, 4)
    assert all(i.device.type == "meta" and i.shape == (2, 4) for i, _ in attn[2:])


def test_gradient_norms_default_window_and_argument_check():
    """last=None is the whole sequence (last=T), also when the input width D is smaller than T; x must be 3-D, checked
    before last."""
    torch.manual_seed(2)
    model = RV.Tagger("RelRNN", 2, 3, 4, nu=2, rho=1)
    x, y = torch.randn(2, 5, 2), torch.randint(4, (2, 5))
    torch.testing.assert_close(RV.hidden_gradient_norms(model, x, y), RV.hidden_gradient_norms(model, x, y, last=5))
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(5, 2\)$"):
        RV.hidden_gradient_norms(model, x[0], y[0])
    with pytest.raises(ValueError, match=r"^x must have 3 dimensions, got shape \(5, 2\)$"):
        RV.hidden_gradient_norms(model, x[0], y[0], last=0)
