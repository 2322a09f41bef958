"""A terminal table that fits its width: low-value columns are folded or dropped first, never the figures cut.

Rich fits a table that is too wide by cutting its widest cells to "…", which in a price table cuts the prices. Here a
table lists what may go first (a column dropped, or folded as a second line into another column's cells); the steps
are taken in order until the table fits, then the columns get widths that wrap text at spaces only. A table whose
repeated columns still do not fit is cut into several tables with the first column repeated (comparisons of 8 GPUs).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

Cell = str | Text


@dataclass(frozen=True)
class Column:
    """A column: its header, alignment, and whether its text may wrap at spaces (figures never do)."""

    header: str
    justify: str = "left"
    wrap: bool = False


@dataclass(frozen=True)
class Step:
    """One way to save room: drop `column`, or fold it under the cells of `into` (both are column indexes)."""

    column: int
    into: int | None = None


@dataclass
class FitTable:
    """Columns, rows and the steps that make it narrower; renders fitted to the width it is given."""

    columns: Sequence[Column]
    steps: Sequence[Step] = ()
    show_header: bool = True
    # When the steps are not enough, split the columns after the first into several tables (first one repeated).
    split: bool = False
    wide: bool = False
    rows: list[list[Cell]] = field(default_factory=list)
    sections: list[int] = field(default_factory=list)

    def add_row(self, *cells: Cell) -> None:
        self.rows.append(list(cells))

    def add_section(self) -> None:
        self.sections.append(len(self.rows))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.wide:
            yield self._table(self._all())
            return
        yield from self._fitted(console, options.max_width)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        natural = natural_width(console, self)
        return Measurement(min(natural, options.max_width), natural if self.wide else options.max_width)

    # Shapes: a list of (column, cells, headers) where folded columns add their header and cells to the target.

    def _all(self) -> list[tuple[Column, list[Cell], list[str]]]:
        return [(column, [row[i] for row in self.rows], [column.header]) for i, column in enumerate(self.columns)]

    def _shapes(self) -> Iterable[list[tuple[Column, list[Cell], list[str]]]]:
        """The table as it is, then after each step in turn."""
        current: dict[int, tuple[Column, list[Cell], list[str]]] = dict(enumerate(self._all()))
        yield list(current.values())
        for step in self.steps:
            gone = current.pop(step.column)
            if step.into is not None:
                column, cells, headers = current[step.into]
                folded = [_stack(cell, extra) for cell, extra in zip(cells, gone[1], strict=True)]
                current[step.into] = (Column(column.header, column.justify, True), folded, [*headers, *gone[2]])
            yield list(current.values())

    def _fitted(self, console: Console, width: int) -> RenderResult:
        shapes = list(self._shapes())
        # The first shape whose text columns keep a readable width, else the first that fits at all.
        for comfortable in (True, False):
            for shape in shapes:
                if _needed(console, shape, comfortable=comfortable)[0] <= width:
                    yield self._table(shape, console, width)
                    return
        shape = shapes[-1]
        if not self.split or len(shape) < 3:
            yield self._table(shape, console, width)
            return
        first, rest = shape[0], shape[1:]
        chunk: list[tuple[Column, list[Cell], list[str]]] = []
        for part in rest:
            if chunk and _needed(console, [first, *chunk, part])[0] > width:
                yield self._table([first, *chunk], console, width)
                chunk = []
            chunk.append(part)
        yield self._table([first, *chunk], console, width)

    def _table(
        self,
        shape: list[tuple[Column, list[Cell], list[str]]],
        console: Console | None = None,
        width: int | None = None,
    ) -> Table:
        widths: list[int | None] = [None] * len(shape)
        if console is not None and width is not None:
            widths = [*_widths(console, shape, width)]
        table = Table(show_lines=False, show_header=self.show_header)
        for (column, _, headers), column_width in zip(shape, widths, strict=True):
            header = Text(" / ".join(h for h in headers if h), no_wrap=False, overflow="fold")
            table.add_column(
                header,
                justify=column.justify,  # type: ignore[arg-type]
                no_wrap=not column.wrap,
                width=column_width,
                overflow="fold",
            )
        for index in range(len(self.rows)):
            if index in self.sections:
                table.add_section()
            table.add_row(*(cells[index] for _, cells, _ in shape))
        return table


def _stack(cell: Cell, extra: Cell) -> Cell:
    text = extra.plain if isinstance(extra, Text) else extra
    if text in ("", "-"):
        return cell
    return Text.assemble(cell if isinstance(cell, Text) else Text(cell), "\n", Text(text, style="dim"))


def _measure(console: Console, cell: Cell) -> Measurement:
    return Measurement.get(console, console.options, cell)


# Text narrower than this reads as a column of single words.
READABLE = 12


def _ranges(
    console: Console, shape: list[tuple[Column, list[Cell], list[str]]], *, comfortable: bool = False
) -> list[tuple[int, int]]:
    """Each column's (least, natural) width: the longest word of wrapping text, the longest line of figures."""
    ranges = []
    for column, cells, headers in shape:
        header = _measure(console, Text(" / ".join(h for h in headers if h)))
        # Headers wrap at spaces: they ask for their longest word only.
        least = natural = header.minimum
        for cell in cells:
            measured = _measure(console, cell)
            least = max(least, measured.minimum if column.wrap else measured.maximum)
            natural = max(natural, measured.maximum)
        natural = max(least, natural)
        if comfortable and column.wrap:
            least = max(least, min(natural, READABLE))
        ranges.append((least, natural))
    return ranges


def _overhead(columns: int) -> int:
    # One space of padding either side of every cell, and a rule between and around the columns.
    return 3 * columns + 1


def _needed(
    console: Console, shape: list[tuple[Column, list[Cell], list[str]]], *, comfortable: bool = False
) -> tuple[int, int]:
    ranges = _ranges(console, shape, comfortable=comfortable)
    extra = _overhead(len(shape))
    return sum(least for least, _ in ranges) + extra, sum(natural for _, natural in ranges) + extra


def _widths(console: Console, shape: list[tuple[Column, list[Cell], list[str]]], width: int) -> list[int]:
    """Natural widths when they fit; else every column its least and the room left shared by what each lacks."""
    ranges = _ranges(console, shape)
    room = width - _overhead(len(shape)) - sum(least for least, _ in ranges)
    lacking = sum(natural - least for least, natural in ranges)
    if room < 0:
        return [least for least, _ in ranges]  # nothing fits: rich cuts what it must
    if room >= lacking:
        # Room for the headers on one line too, when there is.
        headers = [_measure(console, Text(" / ".join(h for h in heads if h))).maximum for _, _, heads in shape]
        full = [max(natural, header) for (_, natural), header in zip(ranges, headers, strict=True)]
        if sum(full) + _overhead(len(shape)) <= width:
            return full
        return [natural for _, natural in ranges]
    return [least + (natural - least) * room // lacking for least, natural in ranges]


def natural_width(console: Console, table: FitTable) -> int:
    """The width the table takes with every column shown and nothing wrapped, headers included."""
    shape = table._all()
    return sum(_widths(console, shape, 1_000_000)) + _overhead(len(shape))


def fit_tables(parts: Sequence[RenderableType]) -> Iterable[FitTable]:
    """Every FitTable in the parts of an answer, inside groups too."""
    for part in parts:
        if isinstance(part, FitTable):
            yield part
        elif isinstance(part, Group):
            yield from fit_tables(part.renderables)
