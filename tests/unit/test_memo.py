"""Memos of pure functions: an answer is computed once per argument tuple, and a bounded memo stays bounded."""

from __future__ import annotations

from domain.performance.memo import Memo


def test_an_answer_is_computed_once_per_arguments() -> None:
    calls: list[tuple[int, str]] = []

    def function(number: int, text: str) -> str:
        calls.append((number, text))
        return text * number

    memo = Memo(function)
    assert [memo(2, "a"), memo(2, "a"), memo(3, "a"), memo(2, "a")] == ["aa", "aa", "aaa", "aa"]
    assert calls == [(2, "a"), (3, "a")]


def test_a_bounded_memo_never_holds_more_than_its_size() -> None:
    calls: list[int] = []

    def square(number: int) -> int:
        calls.append(number)
        return number * number

    memo = Memo(square, 3)
    for number in range(10):
        assert memo(number) == number * number
    assert memo(9) == 81 and calls == list(range(10))  # the newest answer is kept
    assert len(memo) <= 3
