"""Sentences wrapped to the terminal so that no line starts with closing punctuation (Chinese line-breaking rules)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

# A line may not start with these (closing brackets and stops) nor end with the opening ones.
NO_START = frozenset("）)」』】》〉。，、；：！？.,;:!?%")
NO_END = frozenset("（(「『【《〈")


def wrap(text: str, width: int, indent: str = "") -> list[str]:
    """Lines of at most `width` cells: at spaces for Latin words, between characters for CJK, keeping the rules."""
    width = max(width, 8)
    lines: list[str] = []
    current: list[str] = [indent] if indent else []

    def used(pieces: list[str]) -> int:
        return cell_len("".join(pieces))

    for piece in _pieces(text):
        if used(current) + cell_len(piece.rstrip()) <= width or not "".join(current).strip():
            current.append(piece)
            continue
        # The piece goes to the next line; a closing mark takes the piece before it along, and an opening bracket
        # at the end of this line moves down with what follows it.
        carried = [piece]
        while len(current) > 1 and (carried[0][:1] in NO_START or current[-1][-1:] in NO_END):
            carried.insert(0, current.pop())
        lines.append("".join(current).rstrip())
        current = ([" " * len(indent)] if indent else []) + carried
    if "".join(current).strip():
        lines.append("".join(current).rstrip())
    return lines


def _pieces(text: str) -> list[str]:
    """Break opportunities: a Latin word with its trailing space, or one wide character."""
    pieces: list[str] = []
    word = ""
    for character in text:
        if cell_len(character) == 2:
            if word:
                pieces.append(word)
                word = ""
            pieces.append(character)
        else:
            word += character
            if character == " ":
                pieces.append(word)
                word = ""
    if word:
        pieces.append(word)
    return pieces


class Prose:
    """A paragraph that wraps by `wrap` at whatever width it is given."""

    def __init__(self, text: str, indent: str = "") -> None:
        self.text, self.indent = text, indent

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in wrap(self.text, options.max_width, self.indent):
            yield Text(line, no_wrap=True, overflow="ignore")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        full = cell_len(self.indent + self.text)
        return Measurement(min(full, 20), min(full, options.max_width))
