"""The nnRNN cell by value (lscnb.models.nonnormal): its initial law and seeds, Lambda's rotation blocks written out,
the gamma penalty, the optimiser groups and the parameter count by hand, sequences against the step loop (issue 27)."""

import math

import pytest
import torch

from lscnb.models.nonnormal import THETA_MAX, NNRNNCell
from lscnb.models.orthogonal import skew_init


def test_initial_law_and_seeds():
    cell = NNRNNCell(50, 400, seed=3)
    assert cell.theta.min() >= 0 and cell.theta.max() <= THETA_MAX and THETA_MAX == 6.28
    assert cell.theta.mean().item() == pytest.approx(3.14, abs=0.2)
    bound = 1 / math.sqrt(50)
    assert cell.U.abs().max() <= bound and cell.U.abs().max() > 0.99 * bound  # nn.Linear's uniform bound
    torch.testing.assert_close(cell.log_P, skew_init(400, "henaff", generator=torch.Generator().manual_seed(3)))
    assert torch.all(cell.gamma == 1) and torch.all(cell.T == 0)
    same, other = NNRNNCell(4, 6, seed=3), NNRNNCell(4, 6, seed=4)
    small = NNRNNCell(4, 6, seed=3)
    assert (
        torch.equal(same.U, small.U) and torch.equal(same.theta, small.theta) and torch.equal(same.log_P, small.log_P)
    )
    assert not torch.equal(same.U, other.U) and not torch.equal(same.theta, other.theta)
    assert torch.equal(NNRNNCell(4, 6).U, NNRNNCell(4, 6, seed=0).U)
    cay = NNRNNCell(4, 6, init="cayley", seed=3)
    torch.testing.assert_close(cay.log_P, skew_init(6, "cayley", generator=torch.Generator().manual_seed(3)))


def test_lambda_blocks_written_out():
    cell = NNRNNCell(2, 4)
    with torch.no_grad():
        cell.theta.copy_(torch.tensor([0.3, 1.2]))
        cell.gamma.copy_(torch.tensor([0.5, 2.0]))
    expected = torch.zeros(4, 4)
    for k, (t, g) in enumerate(((0.3, 0.5), (1.2, 2.0))):
        expected[2 * k : 2 * k + 2, 2 * k : 2 * k + 2] = g * torch.tensor(
            [[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]]
        )
    torch.testing.assert_close(cell.Lambda(), expected)
    assert cell.gamma_penalty(0.1).item() == pytest.approx(0.1 * (0.25 + 1.0))


def test_param_groups_and_parameter_count():
    cell = NNRNNCell(3, 6)
    main, orth = cell.param_groups(lr=0.01, lr_orth=0.001, t_decay=0.5)
    rest = {id(p) for p in main[0]["params"]}
    assert id(cell.log_P) not in rest and id(cell.T) not in rest and id(cell.U) in rest and id(cell.theta) in rest
    assert main[0]["lr"] == 0.01 and main[1] == {"params": [cell.T], "lr": 0.01, "weight_decay": 0.5}
    assert orth == [{"params": [cell.log_P], "lr": 0.001}]
    torch.optim.RMSprop(main)  # the groups are valid optimiser groups
    # P: 6*5/2; T under the block mask: 15 - 3; theta 3; gamma 3; modReLU biases 6; U 18
    count = cell.effective_parameters()
    assert count == 15 + 12 + 3 + 3 + 6 + 18 and isinstance(count, int)
    assert NNRNNCell(3, 6, gamma_fixed=0.9).effective_parameters() == count - 3


def test_sequence_is_the_step_loop():
    cell = NNRNNCell(3, 4, seed=1)
    x = torch.randn(2, 5, 3, generator=torch.Generator().manual_seed(0))
    V, h, states = cell.V(), torch.zeros(2, 4), []
    for t in range(5):
        h = cell.phi(h @ V.T + x[:, t] @ cell.U.T)
        states.append(h)
    torch.testing.assert_close(cell.sequence(x), torch.stack(states, 1))
    start = torch.ones(2, 4)
    torch.testing.assert_close(cell.sequence(x[:, :1], start)[:, 0], cell(start, x[:, 0]))
    assert cell.initial_state(3).shape == (3, 4) and cell.initial_state(1, dtype=torch.float64).dtype == torch.float64
    assert cell.initial_state(2, device="meta").device.type == "meta"
    assert cell.to("meta").sequence(x.to("meta")).device.type == "meta"  # the zero start on the input's device
