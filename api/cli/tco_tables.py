"""Buying against renting, as terminal tables."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from api.cli.fit_table import Step
from api.cli.labels import label
from api.cli.tables import (
    _assumptions,
    _block,
    _heading,
    _notes,
    _table,
)
from domain.narrative.explain import money, percent, pricing_name
from domain.pricing.tco_schema import TcoRead
from domain.workloads.requests import Lang

# Buying against renting


def _buy_table(answer: TcoRead, lang: Lang) -> Group:
    buy, currency = answer.buy, answer.currency
    columns = ("capex", "financing", "power", "facility", "operations", "resale", "total")
    # Narrower first: financing under capex, the facility's share under power (each pair is one kind of cost).
    table = _table(
        (label("year", lang), "right"),
        *((label(key, lang), "right") for key in columns),
        steps=(Step(2, into=1), Step(4, into=3)),
    )
    for year in buy.years:
        figures = (getattr(year, key) for key in columns)
        table.add_row(str(year.year), *(money(value, currency) if value else "-" for value in figures))
    table.add_section()
    table.add_row(
        label("total", lang),
        *(money(sum(getattr(year, key) for year in buy.years), currency) for key in columns[:-1]),
        Text(money(buy.total, currency), style="bold"),
    )
    caption = label(
        "buy_caption", lang, purchase=money(buy.purchase, currency), per_hour=money(buy.per_gpu_hour, currency)
    )
    dated = (
        label("purchase_dated", lang, as_of=buy.purchase_as_of.isoformat(), days=buy.purchase_age_days)
        if buy.purchase_as_of is not None
        else label("purchase_quoted", lang)
    )
    caption += ("（" + dated + "）") if lang == "zh" else f" ({dated})"
    return _block(label("buy", lang), table, Text(caption))


def _rent_table(answer: TcoRead, lang: Lang) -> Group:
    currency = answer.currency
    table = _table(
        (label("pricing", lang), "left"),
        (label("provider", lang), "left"),
        (label("offer_usd", lang), "right"),
        (label("instances_col", lang), "right"),
        (label("billed", lang), "right"),
        (label("per_year", lang), "right"),
        (label("total", lang), "right"),
        (label("per_gpu_hour", lang), "right"),
        (label("as_of", lang), "left"),
        wrap=(0, 3, 4, 8),
        # Narrower first: no date, the instances under the provider, the billed share under the pricing.
        steps=(Step(8), Step(3, into=1), Step(4, into=0)),
    )
    for option in answer.rent:
        table.add_row(
            pricing_name(option.pricing, lang),
            option.provider,
            f"{option.usd_per_gpu_hour:,.2f}",
            label("instances", lang, instances=option.instances, gpus=option.gpus_per_instance)
            + ("" if option.like_for_like else "\n" + label("unlike", lang)),
            label("billed_share", lang, share=percent(option.billed_fraction)),
            money(option.years[0].total, currency) if option.years else "-",
            money(option.total, currency),
            money(option.per_gpu_hour, currency),
            label("dated", lang, as_of=option.as_of.isoformat(), days=option.age_days),
        )
    return _block(label("rent", lang), table)


def _verdict(answer: TcoRead, lang: Lang) -> Group:
    table = _table(("", "left"), ("", "left"), wrap=(0, 1))
    table.show_header = False
    if answer.cheaper is not None:
        choice = label("buy_word" if answer.cheaper == "buy" else "rent_word", lang)
        pct = answer.rent_vs_buy_pct
        if pct is not None:
            choice = label("cheaper_less" if pct < 0 else "cheaper_more", lang, choice=choice, pct=abs(pct))
        table.add_row(label("cheaper", lang), choice)
    utilization, month = answer.break_even_utilization, answer.break_even_month
    table.add_row(
        label("break_even_utilization", lang),
        percent(utilization) if utilization is not None else label("never", lang),
    )
    table.add_row(
        label("break_even_month", lang),
        label("month", lang, month=month) if month is not None else label("never", lang),
    )
    return _block(label("verdict", lang), table)


def tco_view(answer: TcoRead, lang: Lang) -> list[RenderableType]:
    """Buying year by year, renting per pricing model, break-even, the cheaper choice, summary and assumptions."""
    title = label(
        "tco_title",
        lang,
        count=answer.gpu_count,
        gpu=answer.gpu.name,
        system=f" ({answer.system})" if answer.system else "",
        years=answer.years,
        utilization=percent(answer.utilization),
        currency=answer.currency,
    )
    parts: list[RenderableType] = [_heading(title), _buy_table(answer, lang)]
    if answer.rent:
        parts.append(_rent_table(answer, lang))
    parts += _notes(label("not_available", lang), (("", unavailable.reason) for unavailable in answer.not_available))
    parts += [_verdict(answer, lang), _block(label("summary", lang), Text(answer.summary))]
    parts += _notes(label("warnings", lang), (("", warning) for warning in answer.warnings))
    parts.append(_assumptions(answer.assumptions, lang, label("assumptions", lang), sources=True))
    return parts
