"""Small helpers shared by the pinned tests: snapshots of a module's weights compared bit for bit, and a stand-in for
torch whose uniform draws are one fixed value."""

import torch


def params_of(module) -> dict:
    """A detached copy of every named parameter."""
    return {k: v.detach().clone() for k, v in module.named_parameters()}


def assert_same_params(a: dict, b: dict) -> None:
    """The same names, and every tensor equal to the bit."""
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=0, msg=k)


class ConstantUniforms:
    """torch, except that every uniform draw is the given value (a legal draw of U[0, 1))."""

    def __init__(self, value):
        self.value = value

    def __getattr__(self, name):
        return getattr(torch, name)

    def rand(self, *size, generator=None, **kw):
        return torch.full(size, self.value, **kw)
