"""Memos of pure functions held by short-lived objects."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class Memo(Generic[T]):
    """`function`'s answers by argument tuple, at most `size` of them (all are dropped when full).

    For the speed and sizing models a ranking makes by the thousand: `functools.lru_cache` copies the wrapped
    function's attributes each time one is made (`update_wrapper`), about 6% of a ranking's time in a profile, for
    memos most of which are asked only a few times.
    """

    __slots__ = ("_answers", "_function", "_size")

    def __init__(self, function: Callable[..., T], size: int | None = None) -> None:
        self._function = function
        self._size = size
        self._answers: dict[tuple[Hashable, ...], T] = {}

    def __len__(self) -> int:
        return len(self._answers)

    def __call__(self, *args: Hashable) -> T:
        answers = self._answers
        try:
            return answers[args]
        except KeyError:
            pass
        if self._size is not None and len(answers) >= self._size:
            answers.clear()
        answer = answers[args] = self._function(*args)
        return answer
