"""A model whose gradient is finite in float32 while the float32 norm of it is not: the tests that a run with an
exploding gradient goes on (tests/test_train_theory.py, alone; tests/test_batched.py, in a group)."""

import torch


class Steep(torch.nn.Module):
    """y = w . x: with x = 1e25, the gradient is finite in float32 but its float32 norm is not (squares > 3e38)."""

    def __init__(self, start: float = 0.0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((4,), float(start)))

    def forward(self, x):
        return x @ self.w
