"""Patterns that Python's `re` and ECMA-262 (the dialect OpenAPI states) read alike, and the matching strip."""

from __future__ import annotations

# ECMA-262's WhiteSpace and LineTerminator, spelled out: Python's `\s` also takes U+001C-U+001F and U+0085 and
# leaves out U+FEFF, so a schema-valid value would be refused (or a refused one accepted) with `\s`.
ECMA_SPACE_CLASS = r"\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
ECMA_SPACES = (
    "\t\n\v\f\r \u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# End of input in both: Python's `$` also matches before a final newline, so it is barred from doing so.
END = r"(?!\n)$"


def strip_spaces(text: str) -> str:
    """`text` without the leading and trailing characters the published patterns call white space."""
    return text.strip(ECMA_SPACES)
