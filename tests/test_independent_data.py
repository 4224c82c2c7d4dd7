"""The relational-games labellers on boards worked by hand (issue 27): a 3x3 board is 9 cells in raster order,
0 empty, k > 0 an object id (Shanahan et al. 2020, the rules of each task)."""

import pytest
import torch

from lscnb.data.relational_games import is_between, is_occurs, is_row_matching, is_same, is_xoccurs

CASES = {
    is_same: [
        ([1, 0, 0, 0, 2, 0, 0, 0, 1], 1),
        ([1, 0, 0, 0, 2, 0, 0, 0, 3], 0),
        ([0, 0, 0, 0, 0, 0, 0, 0, 0], 0),  # empty cells are not "the same object"
        ([0, 0, 7, 0, 0, 0, 7, 0, 0], 1),
    ],
    is_between: [
        ([4, 5, 4, 0, 0, 0, 0, 0, 0], 1),  # a row
        ([4, 0, 0, 5, 0, 0, 4, 0, 0], 1),  # a column
        ([0, 0, 4, 0, 5, 0, 4, 0, 0], 1),  # the anti-diagonal
        ([4, 5, 6, 0, 0, 0, 0, 0, 0], 0),  # ends differ
        ([4, 5, 4, 0, 0, 0, 0, 0, 7], 0),  # four objects
        ([4, 0, 4, 0, 0, 0, 0, 5, 0], 0),  # same ends, empty middle
        ([4, 0, 0, 0, 0, 5, 0, 4, 0], 0),  # not on a line
        ([5, 4, 5, 0, 0, 0, 0, 0, 0], 1),
    ],
    is_occurs: [
        ([0, 3, 0, 0, 0, 0, 3, 0, 0], 1),
        ([0, 3, 0, 0, 0, 0, 3, 3, 0], 1),
        ([0, 3, 0, 0, 0, 0, 1, 2, 0], 0),
        ([0, 3, 0, 3, 0, 0, 1, 0, 0], 0),  # the middle row does not count
    ],
    is_xoccurs: [
        ([0, 3, 0, 0, 0, 0, 3, 0, 0], 1),
        ([0, 3, 0, 0, 0, 0, 3, 3, 0], 0),  # twice is not exactly once
        ([0, 0, 2, 0, 0, 0, 1, 0, 2], 1),
        ([0, 3, 0, 0, 0, 0, 1, 2, 0], 0),
    ],
    is_row_matching: [
        ([1, 1, 2, 0, 0, 0, 5, 5, 7], 1),
        ([1, 1, 2, 0, 0, 0, 5, 7, 5], 0),
        ([1, 2, 3, 9, 9, 9, 4, 5, 6], 1),  # the middle row does not count
        ([2, 2, 2, 0, 0, 0, 6, 6, 6], 1),
        ([2, 2, 2, 0, 0, 0, 6, 6, 1], 0),
        ([1, 2, 1, 0, 0, 0, 3, 4, 3], 1),
    ],
}


@pytest.mark.parametrize("rule", list(CASES), ids=lambda f: f.__name__)
def test_labellers_on_hand_worked_boards(rule):
    boards = torch.tensor([b for b, _ in CASES[rule]])
    assert rule(boards).tolist() == [label for _, label in CASES[rule]]
