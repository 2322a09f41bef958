"""Terminal views of what the API answers: rich tables and short text, with headers in English or Chinese.

Every function here takes an answer the HTTP API would send (a recommendation, an option, a comparison, a page of
offers, a TCO comparison) and returns renderables; the sentences inside come from the domain in the answer's language.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence

from rich.console import Console, Group, RenderableType
from rich.text import Text

from api.cli.fit_table import Column, FitTable, Step, fit_tables, natural_width
from api.cli.labels import label
from api.cli.prose import Prose, wrap
from domain.catalog import Pricing
from domain.narrative.explain import assumption_name, money, parallelism_text, pricing_name, target_names
from domain.workloads.requests import Lang
from domain.workloads.results import Assumption, Cost, Option, PerformanceEstimate, Recommendation


def console(*, stderr: bool = False) -> Console:
    """A console for stdout (or stderr); off a terminal it is 160 columns wide unless COLUMNS says otherwise."""
    stream = sys.stderr if stderr else sys.stdout
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else None if stream.isatty() else 160
    # Domain sentences may contain brackets: never read them as markup.
    return Console(stderr=stderr, width=width, markup=False, highlight=False, emoji=False)


def _figure(value: float | None, spec: str = ",.0f") -> str:
    return "-" if value is None else format(value, spec)


def _heading(text: str) -> Text:
    return Text(text, style="bold")


def _block(title: str, *body: RenderableType) -> Group:
    """A titled part of an answer: the title on its own line (no padding), then the body."""
    return Group(_heading(title), *body)


def _table(
    *columns: tuple[str, str], wrap: Sequence[int] = (), steps: Sequence[Step] = (), split: bool = False
) -> FitTable:
    """A table with (header, justify) columns; only the columns listed in `wrap` may wrap; `steps` make it narrower."""
    return FitTable(
        [Column(header, justify, index in wrap) for index, (header, justify) in enumerate(columns)],
        steps=steps,
        split=split,
    )


def shorten(text: str, width: int = 40) -> str:
    """A source or a sentence cut to a width: URLs lose their scheme and `www.`."""
    for prefix in ("https://", "http://"):
        text = text.removeprefix(prefix)
    text = text.removeprefix("www.")
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


# Ranked options


def _throughput(performance: PerformanceEstimate | None, lang: Lang) -> str:
    if performance is None:
        return "-"
    lines = []
    if performance.run_hours:
        hours = performance.run_hours.expected
        lines.append(label("run" if hours >= 48 else "run_hours", lang, hours=hours, days=hours / 24))
    if performance.tokens_per_second:
        lines.append(label("tok_s", lang, value=performance.tokens_per_second.expected))
    if performance.tpot_ms and performance.ttft_ms:
        tpot = performance.tpot_ms.expected
        lines.append(label("tpot", lang, tpot=tpot))
        if tpot > 0:
            lines.append(label("per_user", lang, value=1000 / tpot))
        lines.append(label("ttft", lang, ttft=performance.ttft_ms.expected))
    if performance.images_per_hour:
        lines.append(label("images", lang, value=performance.images_per_hour.expected))
    return "\n".join(lines) or "-"


def _unit_cost(cost: Cost | None, lang: Lang) -> str:
    if cost is None:
        return "-"
    for unit in ("per_million_tokens", "per_run", "per_1000_images"):
        value = getattr(cost, unit)
        if value is not None:
            return label(unit, lang, money=money(value, cost.currency))
    return "-"


def _targets(option: Option, lang: Lang) -> str:
    if not option.feasible:
        return label("infeasible", lang)
    if option.meets_targets:
        return label("ok", lang)
    return label("missed", lang, targets=target_names(option.unmet_targets, lang))


def _memory(option: Option, lang: Lang) -> str:
    memory = option.memory
    used = f"{memory.required_gb:,.0f} / {memory.capacity_gb:,.0f} GB"
    if memory.headroom_pct < 0:
        return f"{used}\n{label('short', lang, gb=memory.required_gb - memory.capacity_gb)}"
    return f"{used}\n{label('free', lang, pct=memory.headroom_pct)}"


def priced(pricing: Pricing, tier: str | None, lang: Lang) -> str:
    """The pricing model, with the provider's tier where it sells two."""
    name = pricing_name(pricing, lang)
    if tier is None:
        return name
    tier_name = label(f"tier_{tier}", lang)
    return f"{name}（{tier_name}）" if lang == "zh" else f"{name} ({tier_name})"


def _offer(option: Option, lang: Lang) -> str:
    offer = option.offer
    if offer is None:
        return "-"
    text = f"{offer.provider}\n{priced(offer.pricing, offer.tier, lang)}"
    if offer.instances > 1 or offer.gpus_per_instance > 1:
        instances = label("instances", lang, instances=offer.instances, gpus=offer.gpus_per_instance)
        text += ("，" if lang == "zh" else ", ") + instances
    return text


# Narrower first: no score, the layout under the GPU count, the targets under the throughput, the offer under the GPU,
# the unit cost under the hourly one.
_OPTION_STEPS = (Step(11), Step(3, into=2), Step(10, into=5), Step(9, into=8), Step(8, into=1), Step(7, into=6))


def _price_age(option: Option, lang: Lang) -> Text:
    """How old the option's price is; an old one says so (it is information, not a reason it ranks lower)."""
    if option.offer is None:
        return Text("-")
    days = label("price_days", lang, days=option.offer.age_days)
    if option.cost is not None and option.cost.stale_price:
        return Text.assemble((days, "yellow"), "\n", (label("price_old", lang), "yellow"))
    return Text(days)


def options_table(options: Sequence[Option], lang: Lang) -> FitTable:
    """Ranked options: GPU, configuration, memory, throughput, costs, offer, its price's age, targets and score."""
    table = _table(
        (label("rank", lang), "right"),
        (label("gpu", lang), "left"),
        (label("gpus", lang), "right"),
        (label("layout", lang), "left"),
        (label("memory_used", lang), "right"),
        (label("throughput", lang), "right"),
        (label("per_hour", lang), "right"),
        (label("per_unit", lang), "right"),
        (label("offer", lang), "left"),
        (label("price_age", lang), "right"),
        (label("targets", lang), "left"),
        (label("score", lang), "right"),
        wrap=(1, 4, 5, 7, 8, 9, 10),
        steps=_OPTION_STEPS,
    )
    for option in options:
        parallel = option.parallelism
        count = str(option.gpu_count)
        if option.nodes > 1:
            count += "\n" + label("nodes", lang, count=option.nodes)
        table.add_row(
            str(option.rank),
            Text.assemble(option.gpu.name, "\n", (option.gpu.id, "dim")),
            count,
            parallelism_text(parallel, lang, sep="\n"),
            _memory(option, lang),
            _throughput(option.performance, lang),
            money(option.cost.hourly, option.cost.currency) if option.cost else "-",
            _unit_cost(option.cost, lang),
            _offer(option, lang),
            _price_age(option, lang),
            _targets(option, lang),
            f"{option.score:.2f}",
        )
    return table


def _notes(title: str, notes: Iterable[tuple[str, str]]) -> list[RenderableType]:
    """Sentences once each, with the options they apply to; nothing when there are none."""
    grouped: dict[str, list[str]] = {}
    for where, sentence in notes:
        grouped.setdefault(sentence, []).append(where)
    lines = []
    for sentence, places in grouped.items():
        where = f"[{', '.join(places)}] " if any(places) else ""
        lines.append(Prose(f"- {where}{sentence}", indent="  "))
    return [_block(title, *lines)] if lines else []


ZH_VALUE_WIDTH = 44


def _assumptions(assumptions: Sequence[Assumption], lang: Lang, title: str, *, sources: bool) -> Group:
    columns = [(label("name", lang), "left"), (label("value", lang), "left")]
    if sources:
        columns.append((label("source", lang), "left"))
    table = _table(*columns, wrap=(1, 2))
    for assumption in assumptions:
        value = assumption.value
        if lang == "zh":
            # Chinese has no spaces to wrap at: break it by the line rules here so the names keep their room.
            value = "\n".join(wrap(value, ZH_VALUE_WIDTH))
        row = [assumption_name(assumption.name, lang), value]
        if sources:
            # A long URL is one unbreakable word that would squeeze the names: `--json` carries it whole.
            row.append(shorten(assumption.source))
        table.add_row(*row)
    return _block(title, table)


def _launch(option: Option, lang: Lang, title: str) -> list[RenderableType]:
    """Why this layout, and its command one flag a line (a wrapped line would break a paste into a shell)."""
    if option.launch is None:
        return []
    command = option.launch.command.replace(" --", " \\\n    --")
    lines: list[RenderableType] = [Prose(option.layout_reason)] if option.layout_reason else []
    lines.append(Text(command, no_wrap=True, overflow="ignore"))
    return [_block(title, *lines)]


def _requirements(result: Recommendation, lang: Lang) -> Text:
    needs = result.requirements
    parts = [label("weights", lang, gb=needs.weights_gb), label("min_memory", lang, gb=needs.min_memory_gb)]
    if needs.kv_cache_gb_per_request:
        parts.append(label("kv_per_request", lang, gb=needs.kv_cache_gb_per_request))
    if needs.total_flops:
        parts.append(label("total_flops", lang, flops=needs.total_flops))
    separator, colon = ("，", "：") if lang == "zh" else (", ", ": ")
    return Text(label("requirements", lang) + colon + separator.join(parts))


def recommendation_view(result: Recommendation, lang: Lang) -> list[RenderableType]:
    """Ranked options, their warnings, the excluded GPUs by reason, the summary and the main assumptions."""
    workload = result.workload
    model = getattr(workload, "model", None) or getattr(getattr(workload, "custom_model", None), "name", "")
    kind = label(f"kind_{type(workload).__struct_config__.tag}", lang)
    title = f"{label('options', lang)}: {model} · {kind} · {label(f'objective_{result.objective}', lang)}"
    parts: list[RenderableType] = [_block(title, options_table(result.options, lang))]
    parts += _notes(
        label("warnings", lang), ((f"#{o.rank}", warning) for o in result.options for warning in o.warnings)
    )
    if result.excluded:
        by_reason: dict[str, list[str]] = {}
        for exclusion in result.excluded:
            by_reason.setdefault(exclusion.reason, []).append(exclusion.gpu)
        table = _table((label("reason", lang), "left"), (label("gpus_excluded", lang), "left"), wrap=(0, 1))
        for reason, gpus in by_reason.items():
            table.add_row(reason, ", ".join(gpus))
        parts.append(_block(f"{label('excluded', lang)} ({len(result.excluded)})", table))
    parts.append(_block(label("summary", lang), Prose(result.summary), _requirements(result, lang)))
    if result.options:
        best = result.options[0]
        parts += _launch(best, lang, f"{label('launch', lang)} (#1 {best.gpu.name})")
        title = f"{label('assumptions', lang)} (#1 {best.gpu.name})"
        parts.append(_assumptions(best.assumptions, lang, title, sources=False))
    parts.append(Text(label("footer", lang, id=result.id, version=result.catalog_version), style="dim"))
    return parts


def estimate_view(option: Option, lang: Lang) -> list[RenderableType]:
    """One configuration: its row, the reasons, the warnings, what renting costs against owning, assumptions."""
    parts: list[RenderableType] = [_block(f"{option.gpu_count}x {option.gpu.name}", options_table([option], lang))]
    parts += _notes(label("reasons", lang), (("", reason) for reason in option.reasons))
    parts += _notes(label("warnings", lang), (("", warning) for warning in option.warnings))
    hint = option.tco
    if hint is not None:
        cheaper = label("buy_word" if hint.cheaper == "buy" else "rent_word", lang)
        figures = {
            "rent": money(hint.monthly_rent, hint.currency),
            "owned": money(hint.monthly_owned, hint.currency),
            "years": hint.years,
            "cheaper": cheaper,
        }
        parts.append(Text(label("tco_hint", lang, **figures)))
    parts += _launch(option, lang, label("launch", lang))
    if option.assumptions:
        parts.append(_assumptions(option.assumptions, lang, label("assumptions", lang), sources=False))
    return parts


def show(parts: Sequence[RenderableType], *, wide: bool = False) -> None:
    """Print the parts of an answer to stdout, a blank line between them; `wide` shows every column of every table."""
    out = console()
    if wide:
        tables = list(fit_tables(parts))
        for table in tables:
            table.wide = True
        out.width = max([out.width, *(natural_width(out, table) for table in tables)])
    for index, part in enumerate(parts):
        if index:
            out.print()
        out.print(part)
