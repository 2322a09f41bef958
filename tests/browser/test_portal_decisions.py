"""The /ui page as a buyer uses it, on a laptop and on a phone, in English and Chinese: the fixes of what a new user
ran into (precision per kind, stale answers, error wording, phone cards, chart text, scrolling, Chinese assumptions)
and what carries a decision (monthly and at-load cost, sorting, rent or buy, own model, two options side by side,
CSV, print). Every test keeps screenshots.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Portal
from tests.browser.test_portal import CJK, no_horizontal_scroll, option_rows, submit_and_wait

LANGS = ["en", "zh"]
MONEY_FIGURE = re.compile(r"[\d,]+(?:\.\d+)?")


def size_name(page: Page) -> str:
    viewport = page.viewport_size or {"width": 0, "height": 0}
    return f"{viewport['width']}x{viewport['height']}"


def shoot(portal: Portal, name: str, lang: str) -> None:
    print(portal.screenshot(f"{name}-{size_name(portal.page)}-{lang}"))


def open_in(portal: Portal, lang: str, path: str = "/ui") -> Page:
    portal.open(f"{path}{'&' if '?' in path else '?'}lang={lang}" if lang != "en" else path)
    return portal.page


def figure(text: str) -> float:
    match = MONEY_FIGURE.search(text)
    assert match, text
    return float(match.group(0).replace(",", ""))


def sent_body(page: Page, action: Any) -> dict[str, Any]:
    """The JSON body of the recommendation request that `action` makes the page send."""
    with page.expect_request(lambda request: request.url.endswith("/v1/recommendations")) as caught:
        action()
    body = caught.value.post_data_json
    assert isinstance(body, dict)
    return body


# --- What we saw ------------------------------------------------------------------------------------------------


def test_precision_is_per_kind(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()
    page.select_option("#f-kind", "image_generation")
    page.select_option("#f-precision", "fp16")
    submit_and_wait(page)
    page.select_option("#f-kind", "inference")
    page.select_option("#f-model", "deepseek-r1")
    # DeepSeek-R1 is sized at its own precision, not at the image model's FP16.
    assert page.input_value("#f-precision") == ""
    body = sent_body(page, lambda: page.click("#submit"))
    assert "precision" not in body["workload"] and body["workload"]["model"] == "deepseek-r1"
    # And each kind keeps what was chosen for it.
    page.select_option("#f-kind", "image_generation")
    assert page.input_value("#f-precision") == "fp16"


@pytest.mark.parametrize("lang", LANGS)
def test_a_rejected_submit_clears_the_previous_answer(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"status of 400")
    open_in(portal_page, lang)
    submit_and_wait(page)
    assert page.locator("#results-body").is_visible()
    page.evaluate(
        """() => {
            const input = document.querySelector('#f-concurrency');
            input.removeAttribute('max');
            input.value = '2000000';
        }"""
    )
    page.click("#submit")
    expect(page.locator("#alert")).not_to_be_empty()
    expect(page.locator("#results-body")).to_be_hidden()
    assert page.locator("#summary").text_content() == ""
    assert "rec=" not in page.url
    shoot(portal_page, "rejected", lang)


@pytest.mark.parametrize(
    ("lang", "expected"),
    [("en", "Concurrent requests: at most 1,000,000."), ("zh", "并发请求数：最多为 1,000,000。")],
)
def test_errors_read_as_sentences_about_the_form(portal_page: Portal, lang: str, expected: str) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"status of 400")
    open_in(portal_page, lang)
    page.evaluate(
        """() => {
            const input = document.querySelector('#f-concurrency');
            input.removeAttribute('max');
            input.value = '2000000';
        }"""
    )
    page.click("#submit")
    alert = page.locator("#alert")
    expect(alert).to_contain_text(expected)
    text = alert.text_content() or ""
    assert "Expected" not in text and "`" not in text and "workload.concurrency" not in text
    assert page.get_attribute("#f-concurrency", "aria-invalid") == "true"
    # A whole number where a fraction was typed.
    page.evaluate(
        """() => {
            const input = document.querySelector('#f-concurrency');
            input.step = 'any';
            input.value = '2.5';
        }"""
    )
    page.click("#submit")
    expect(alert).to_contain_text("整数" if lang == "zh" else "a whole number")
    shoot(portal_page, "error-words", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_the_answer_comes_into_view_on_a_phone(sized_page: Portal, lang: str) -> None:
    page = sized_page.page
    open_in(sized_page, lang)
    page.fill("#f-rps", "0.5")
    submit_and_wait(page)
    page.wait_for_function(
        "() => { const top = document.querySelector('#results').getBoundingClientRect().top;"
        " return top >= -1 && top < innerHeight * 0.6; }"
    )
    no_horizontal_scroll(page)
    viewport = page.viewport_size
    assert viewport is not None
    # Every figure of every option is on the screen's width: cards on a phone, the table on a laptop.
    boxes = page.eval_on_selector_all(
        "#options tr.option td, #options tr.option th",
        "cells => cells.map(c => { const b = c.getBoundingClientRect(); return [b.left, b.right]; })",
    )
    assert boxes and all(left >= -1 and right <= viewport["width"] + 1 for left, right in boxes), boxes
    display = page.eval_on_selector("#options tr.option", "row => getComputedStyle(row).display")
    assert display == ("grid" if viewport["width"] < 600 else "table-row")
    if viewport["width"] < 600:
        labels = page.eval_on_selector_all(
            "#options tr.option:first-child td.cost-hourly", "cells => cells.map(c => c.dataset.label)"
        )
        assert labels == ["每小时费用" if lang == "zh" else "Cost per hour"]
    # Chart text is drawn at the size it is read at.
    heights = page.eval_on_selector_all(
        "#chart text", "texts => texts.map(t => t.getBoundingClientRect().height).filter(h => h > 0)"
    )
    assert heights and min(heights) >= 11, heights
    shoot(sized_page, "answer", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_assumptions_are_in_the_page_language(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    open_in(portal_page, lang)
    submit_and_wait(page)
    names = page.eval_on_selector_all("#assumptions tbody th", "ths => ths.map(th => th.textContent)")
    headers = page.eval_on_selector_all("#assumptions thead th", "ths => ths.map(th => th.textContent)")
    assert names
    if lang == "zh":
        assert all(CJK.search(name) for name in names), names
        assert all(CJK.search(header) for header in headers), headers
    else:
        assert not any("_" in name for name in names), names


# --- What carries a decision ------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_monthly_cost_sorting_and_cost_at_the_asked_load(sized_page: Portal, lang: str) -> None:
    page = sized_page.page
    open_in(sized_page, lang)
    submit_and_wait(page)
    # Without a request rate the load is the capacity: no extra column.
    assert page.locator("#options thead th[data-col='atLoad']").count() == 0
    page.fill("#f-rps", "0.2")
    rows = submit_and_wait(page)
    assert page.locator("#options thead th[data-col='atLoad']").count() == 1
    monthly = page.eval_on_selector_all("#options tr.option td.cost-monthly", "cells => cells.map(c => c.textContent)")
    for row, month in zip(rows, monthly, strict=True):
        assert figure(month) == pytest.approx(figure(row["hourly"]) * 730, rel=0.01, abs=1)
    at_load = page.eval_on_selector_all("#options tr.option td.cost-at-load", "cells => cells.map(c => c.textContent)")
    # A small load on a large configuration costs more per token than the configuration at full use.
    assert any(
        figure(cost) > figure(row["kind"]) for cost, row in zip(at_load, rows, strict=True) if MONEY_FIGURE.search(cost)
    )

    page.click("#options thead button[data-sort='hourly']")
    hourly = [figure(row["hourly"]) for row in option_rows(page)]
    assert hourly == sorted(hourly)
    assert page.get_attribute("#options thead th[data-col='hourly']", "aria-sort") == "ascending"
    page.click("#options thead button[data-sort='hourly']")
    hourly = [figure(row["hourly"]) for row in option_rows(page)]
    assert hourly == sorted(hourly, reverse=True)
    assert page.get_attribute("#options thead th[data-col='hourly']", "aria-sort") == "descending"
    page.click("#options thead button[data-sort='rank']")
    assert [row["rank"] for row in option_rows(page)] == [str(n) for n in range(1, len(rows) + 1)]
    shoot(sized_page, "sorted", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_two_options_side_by_side(sized_page: Portal, lang: str) -> None:
    page = sized_page.page
    open_in(sized_page, lang)
    rows = submit_and_wait(page)
    assert len(rows) >= 3
    expect(page.locator("#side-by-side")).to_be_hidden()
    page.check("#choose-1")
    page.check("#choose-3")
    side = page.locator("#side-by-side")
    expect(side).to_be_visible()
    heads = page.eval_on_selector_all("#side-table thead th", "ths => ths.map(th => th.textContent)")
    assert heads == [f"#1 {rows[0]['gpu']}", f"#3 {rows[2]['gpu']}"]
    cells = page.eval_on_selector_all("#side-table tbody tr", "rows => rows.map(r => r.children.length)")
    assert cells and all(count == 3 for count in cells)
    # A third choice lets the first go: two at a time.
    page.check("#choose-2")
    assert not page.is_checked("#choose-1")
    no_horizontal_scroll(page)
    side.scroll_into_view_if_needed()
    shoot(sized_page, "side-by-side", lang)


def test_csv_of_the_options_and_the_exclusions(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()
    rows = submit_and_wait(page)
    with page.expect_download() as caught:
        page.click("#export-options")
    download = caught.value
    text = Path(download.path()).read_text(encoding="utf-8-sig")
    table = list(csv.DictReader(io.StringIO(text)))
    assert download.suggested_filename.endswith("-options.csv")
    assert [line["rank"] for line in table] == [row["rank"] for row in rows]
    assert {"gpu", "hourly", "monthly", "per_million_tokens", "provider"} <= set(table[0])
    assert float(table[0]["hourly"]) == pytest.approx(figure(rows[0]["hourly"]), abs=0.01)
    with page.expect_download() as caught:
        page.click("#export-excluded")
    excluded = list(csv.DictReader(io.StringIO(Path(caught.value.path()).read_text(encoding="utf-8-sig"))))
    assert excluded and set(excluded[0]) == {"gpu", "gpu_name", "reason"}
    assert page.locator("#excluded tbody tr").count() == len(excluded)


@pytest.mark.parametrize("lang", LANGS)
def test_print_view_shows_the_answer_not_the_controls(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    open_in(portal_page, lang)
    submit_and_wait(page)
    page.emulate_media(media="print")
    for hidden in ("#workload-form", ".tabs", ".share", ".actions"):
        assert page.locator(hidden).first.is_hidden(), hidden
    assert page.locator("#options").is_visible() and page.locator("#summary").is_visible()
    shoot(portal_page, "print", lang)
    page.emulate_media(media="screen")
    assert page.locator("#workload-form").is_visible()


@pytest.mark.parametrize("lang", LANGS)
def test_rent_or_buy_tab(sized_page: Portal, lang: str) -> None:
    page = sized_page.page
    open_in(sized_page, lang)
    page.click("#tab-tco")
    expect(page.locator("#panel-tco")).to_be_visible()
    assert "view=tco" in page.url
    page.select_option("#t-gpu", "h100-sxm")
    page.fill("#t-count", "8")
    page.fill("#t-years", "4")
    page.fill("#t-utilization", "80")
    with page.expect_request(lambda request: request.url.endswith("/v1/tco")) as caught:
        page.click("#tco-submit")
    body = caught.value.post_data_json
    assert body["gpu"] == "h100-sxm" and body["years"] == 4 and body["utilization"] == pytest.approx(0.8)
    expect(page.locator("#tco-body")).to_be_visible()
    summary = page.locator("#tco-summary").text_content() or ""
    assert summary and bool(CJK.search(summary)) == (lang == "zh")
    # One pair of bars per year, and the break-even is stated (a month, or "not within the period").
    expect(page.locator("#tco-chart .bars rect.owned")).to_have_count(4)
    assert page.locator("#tco-chart .bars rect.rented").count() in (0, 4)
    terms = page.eval_on_selector_all("#tco-verdict dt", "dts => dts.map(d => d.textContent)")
    assert ("回本时间" if lang == "zh" else "Break-even") in terms
    assert page.locator("#tco-table tbody tr").count() == 4
    no_horizontal_scroll(page)
    heights = page.eval_on_selector_all(
        "#tco-chart text", "texts => texts.map(t => t.getBoundingClientRect().height).filter(h => h > 0)"
    )
    assert heights and min(heights) >= 11, heights
    shoot(sized_page, "rent-or-buy", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_each_option_shows_how_old_its_price_is(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    open_in(portal_page, lang)
    with page.expect_response(lambda response: response.url.endswith("/v1/recommendations")) as caught:
        submit_and_wait(page)
    options = caught.value.json()["options"]
    assert page.locator("#options thead th[data-col='priceAge']").count() == 1
    cells = page.eval_on_selector_all("#options tr.option td.price-age", "cells => cells.map(c => c.textContent)")
    ages = [str(o["offer"]["age_days"]) for o in options if o.get("offer")]
    assert len(cells) == len(options) and all(age in cell for age, cell in zip(ages, cells, strict=False))
    # An old price is marked where it is, not by moving the option down.
    stale = [bool(o.get("cost") and o["cost"]["stale_price"]) for o in options]
    marked = page.eval_on_selector_all(
        "#options tr.option td.price-age", "cells => cells.map(c => c.classList.contains('stale'))"
    )
    assert marked == stale


@pytest.mark.parametrize("lang", LANGS)
def test_rent_or_buy_shows_the_purchase_price_its_date_the_warnings_and_takes_a_quote(
    portal_page: Portal, lang: str
) -> None:
    page = portal_page.page
    open_in(portal_page, lang)
    page.click("#tab-tco")
    page.select_option("#t-gpu", "h100-sxm")
    page.fill("#t-count", "8")
    with page.expect_response(lambda response: response.url.endswith("/v1/tco")) as caught:
        page.click("#tco-submit")
    answer = caught.value.json()
    expect(page.locator("#tco-body")).to_be_visible()
    verdict = page.locator("#tco-verdict").text_content() or ""
    # The catalog's purchase price with its date, and every warning of the answer on the page.
    assert answer["buy"]["purchase_as_of"] and answer["buy"]["purchase_as_of"] in verdict
    warnings = page.eval_on_selector_all("#tco-warnings li", "items => items.map(i => i.textContent)")
    assert warnings == answer["warnings"]
    # The user's own quote replaces the catalog price and is called theirs.
    page.fill("#t-purchase", "250000")
    with page.expect_request(lambda request: request.url.endswith("/v1/tco")) as quoted:
        page.click("#tco-submit")
    assert quoted.value.post_data_json["purchase_usd"] == 250000
    expect(page.locator("#tco-verdict")).to_contain_text("您的报价" if lang == "zh" else "your quote")


@pytest.mark.parametrize("lang", LANGS)
def test_your_own_model(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"status of 400")
    open_in(portal_page, lang)
    expect(page.locator("#custom-model")).to_be_hidden()
    page.select_option("#f-model", "__custom__")
    expect(page.locator("#custom-model")).to_be_visible()
    page.fill("#f-cm-name", "acme-13b")
    page.fill("#f-cm-params", "13")
    page.fill("#f-cm-layers", "40")
    page.fill("#f-cm-hidden", "5120")
    page.fill("#f-cm-heads", "40")
    page.fill("#f-cm-kv-heads", "8")
    body = sent_body(page, lambda: page.click("#submit"))
    custom = body["workload"]["custom_model"]
    assert "model" not in body["workload"]
    assert custom == {
        "name": "acme-13b",
        "attention": "gqa",
        "params_b": 13,
        "layers": 40,
        "hidden_size": 5120,
        "attention_heads": 40,
        "kv_heads": 8,
    }
    page.wait_for_selector("#options tbody tr.option")
    assert option_rows(page)
    shoot(portal_page, "own-model", lang)
    # A mixture of experts without its active parameters: the service says which field, the page in words.
    page.fill("#f-cm-experts", "64")
    page.fill("#f-cm-per-token", "8")
    page.click("#submit")
    expect(page.locator("#alert")).to_contain_text("自定义模型" if lang == "zh" else "Your own model")
    expect(page.locator("#results-body")).to_be_hidden()


@pytest.mark.parametrize("lang", LANGS)
def test_each_option_shows_how_to_run_it_with_a_copy_button(sized_page: Portal, lang: str) -> None:
    page = sized_page.page
    open_in(sized_page, lang)
    submit_and_wait(page)
    block = page.locator("#options details.launch").first
    block.locator("summary").click()
    command = block.locator("pre code").inner_text()
    # AMD options switch AITER on first (VLLM_ROCM_USE_AITER=1 vllm serve ...).
    assert re.match(r"(\w+=\S+ )*vllm serve ", command) and "--tensor-parallel-size" in command, command
    expect(block.locator("button.copy")).to_have_text("复制命令" if lang == "zh" else "Copy command")
    no_horizontal_scroll(page)
    shoot(sized_page, "launch", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_your_own_model_from_a_pasted_config_json(portal_page: Portal, lang: str) -> None:
    page = portal_page.page
    config = (Path(__file__).parents[1] / "fixtures" / "hf_configs" / "qwen3-32b.json").read_text()
    open_in(portal_page, lang)
    page.select_option("#f-model", "__custom__")
    page.fill("#f-cm-name", "our-qwen")
    page.fill("#f-cm-config", config)
    expect(page.locator("#f-cm-params")).to_be_disabled()  # the figures are not needed
    body = sent_body(page, lambda: page.click("#submit"))
    custom = body["workload"]["custom_model"]
    assert custom["name"] == "our-qwen" and custom["hf_config"]["model_type"] == "qwen3", custom
    assert "params_b" not in custom
    page.wait_for_selector("#options tbody tr.option")
    assert option_rows(page)
    # Not JSON: the page says so in its own words and sends nothing.
    page.fill("#f-cm-config", "{not json")
    page.click("#submit")
    expect(page.locator("#alert")).to_contain_text("config.json")
    shoot(portal_page, "own-model-config", lang)
