"""Argument checks shared by the public functions: each raises an error that names the argument."""

from __future__ import annotations

import numbers

import torch


def positive_int(value, name: str, *, allow_zero: bool = False) -> int:
    """Return ``value`` as an int, or raise naming ``name`` if it is not a (strictly) positive integer."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return int(value)


def positive_float(value, name: str, *, allow_zero: bool = False) -> float:
    """Return ``value`` as a float, or raise naming ``name`` if it is not a finite (strictly) positive number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not value == value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be {bound}, got {value}")
    return value


def one_of(value, options, name: str):
    """Return ``value`` if it is one of ``options``, else raise naming ``name`` and the options."""
    if value not in options:
        try:
            shown = sorted(options)
        except TypeError:  # options of mixed types, such as (None, "layer", "batch"), do not sort among themselves
            shown = sorted(options, key=repr)
        raise ValueError(f"{name} must be one of {shown}, got {value!r}")
    return value


def tensor(value, name: str, *, min_dim: int | None = None, ndim: int | None = None) -> torch.Tensor:
    """Check that ``value`` is a tensor with the given number of dimensions."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if ndim is not None and value.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(value.shape)}")
    if min_dim is not None and value.ndim < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dimensions, got shape {tuple(value.shape)}")
    return value


def square_matrices(value, name: str) -> torch.Tensor:
    """Check that ``value`` is a tensor of square matrices, shape (..., n, n)."""
    tensor(value, name, min_dim=2)
    if value.shape[-1] != value.shape[-2]:
        raise ValueError(f"{name} must hold square matrices (..., n, n), got shape {tuple(value.shape)}")
    return value
