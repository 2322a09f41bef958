"""Chinese sentences wrap in the terminal without a line that starts with closing punctuation."""

from __future__ import annotations

from rich.cells import cell_len

from api.cli.prose import NO_END, NO_START, wrap

SUMMARY = (
    "首选：8 张 NVIDIA B200 (HGX, 1000 W)（TP1 · PP1 · EP8 · DP1 · 注意力 DP8）（CoreWeave，每小时 $68.80），约 11,007 "
    "输出 token/秒（1024 并发，每 token 93 毫秒，即每用户 10.7 token/秒，首 token 158 毫秒），每百万输出 token $1.74。"
    "目标：chat（对话）：每 token 延迟（TPOT）≤ 100 毫秒，首 token 延迟（TTFT）≤ 2,000 毫秒。次选：8 张 AMD 网络）。"
)


def test_no_line_starts_with_closing_punctuation_at_any_width() -> None:
    for width in range(20, 100):
        lines = wrap(SUMMARY, width, indent="  ")
        assert "".join(line.strip() for line in lines).replace(" ", "") == SUMMARY.replace(" ", "")
        for line in lines:
            assert cell_len(line) <= width, (width, line)
            assert line.strip()[:1] not in NO_START, (width, line)
            assert line.rstrip()[-1:] not in NO_END, (width, line)
