"""The /ui page in a real browser: each workload kind, chart, Chinese, share links, errors, comparison, keyboard."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Portal, save_screenshot

CJK = re.compile(r"[\u4e00-\u9fff]")
MONEY = re.compile(r"\d")
REC_URL = re.compile(r"/ui\?rec=(rec_[0-9a-f]{24})$")


def option_rows(page: Page) -> list[dict[str, str]]:
    """The ranked options as the table shows them."""
    return page.eval_on_selector_all(
        "#options tbody tr.option",
        """rows => rows.map(row => ({
            rank: row.dataset.rank,
            gpu: row.querySelector("th.gpu span").textContent.trim(),
            hourly: row.querySelector(".cost-hourly").textContent.trim(),
            kind: row.querySelector(".cost-kind").textContent.trim(),
        }))""",
    )


def submit_and_wait(page: Page) -> list[dict[str, str]]:
    before = page.url
    page.click("#submit")
    # The address changes to the new recommendation's share link once it is shown.
    page.wait_for_function(
        "before => location.href !== before && document.querySelector('#results').ariaBusy === 'false'", arg=before
    )
    return option_rows(page)


def assert_ranked(page: Page, rows: list[dict[str, str]]) -> None:
    assert rows, "no ranked options"
    first = rows[0]
    assert first["rank"] == "1" and first["gpu"], first
    assert "$" in first["hourly"] and MONEY.search(first["hourly"]), first
    assert MONEY.search(first["kind"]), first
    # One point per option, and every point labelled.
    points = page.locator("#chart .point")
    expect(points).to_have_count(len(rows))
    labels = page.eval_on_selector_all("#chart .point text", "texts => texts.map(t => t.textContent)")
    assert all(label.startswith("#") for label in labels)
    assert page.locator("#chart title").first.text_content()
    assert page.locator("#summary").text_content()
    assert REC_URL.search(page.url), page.url


def no_horizontal_scroll(page: Page) -> None:
    width = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert width[0] <= width[1], width


@pytest.mark.parametrize(
    ("kind", "fill", "kind_cost"),
    [
        ("inference", {"#f-concurrency": "16", "#f-output-tokens": "512"}, "Per million tokens"),
        ("training", {"#f-train-tokens": "20", "#f-target-days": "30"}, "Per run"),
        ("fine_tuning", {"#f-train-tokens": "200"}, "Per run"),
        ("image_generation", {"#f-images-per-hour": "417"}, "Per 1000 images"),
    ],
)
def test_each_kind_ranks_options(portal_page: Portal, kind: str, fill: dict[str, str], kind_cost: str) -> None:
    page = portal_page.page
    portal_page.open()
    page.select_option("#f-kind", kind)
    for selector, value in fill.items():
        page.fill(selector, value)
    # Only the fields of the chosen kind are shown (and sent).
    assert page.is_visible("#f-concurrency") == (kind == "inference")
    assert page.is_visible("#f-images-per-hour") == (kind == "image_generation")
    model_kinds = page.eval_on_selector_all("#f-model option", "options => options.map(o => o.value)")
    assert ("sdxl" in model_kinds) == (kind == "image_generation")
    rows = submit_and_wait(page)
    assert_ranked(page, rows)
    headers = page.eval_on_selector_all("#options thead th", "ths => ths.map(th => th.textContent)")
    assert kind_cost in headers and "Throughput" in headers
    # Inference shows what a user feels: time per token, tokens/s per user, time to first token.
    latency = page.locator('#options tbody tr.option td[data-label="Throughput"]').first.text_content() or ""
    shown = "ms per token" in latency and "tokens/s per user" in latency and "first token" in latency
    assert shown == (kind == "inference"), latency
    # Layouts name every kind of parallelism.
    config = page.locator('#options tbody tr.option td[data-label="Configuration"]').first.text_content() or ""
    assert re.search(r"TP \d+ · PP \d+ · EP \d+ · DP \d+", config), config
    assert all(th == "col" for th in page.eval_on_selector_all("#options thead th", "e => e.map(x => x.scope)"))
    expect(page.locator("#alert")).to_be_empty()
    assert page.locator("#assumptions tbody tr").count() > 0
    no_horizontal_scroll(page)
    print(portal_page.screenshot(kind))
    # The excluded GPUs are folded away until asked for.
    excluded = page.locator("#excluded tbody tr")
    if excluded.count():
        assert not excluded.first.is_visible()
        page.click("#excluded-summary")
        assert excluded.first.is_visible()


def test_chinese_labels_and_summary(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()
    submit_and_wait(page)
    english_url = page.url
    assert not CJK.search(page.locator("#summary").text_content() or "")
    page.click("button[data-lang='zh']")
    # The labels switch at once; the request is sent again with lang "zh" for the service's own sentences.
    expect(page.locator("#submit")).to_have_text("推荐 GPU")
    expect(page.locator("#tab-compare")).to_have_text("GPU 对比")
    expect(page.locator("label[for='f-model']")).to_have_text("模型")
    page.wait_for_function("() => /[\\u4e00-\\u9fff]/.test(document.querySelector('#summary').textContent)")
    page.wait_for_function("before => location.href !== before", arg=english_url)
    assert page.evaluate("document.documentElement.lang") == "zh-CN"
    headers = page.eval_on_selector_all("#options thead th", "ths => ths.map(th => th.textContent)")
    assert "排名" in headers and "每百万 token" in headers
    assert CJK.search(page.locator("#chart-title").text_content() or "")
    rows = option_rows(page)
    assert rows and rows[0]["gpu"]
    expect(page.locator("#chart .point")).to_have_count(len(rows))
    print(portal_page.screenshot("zh"))
    # And back.
    page.click("button[data-lang='en']")
    expect(page.locator("#submit")).to_have_text("Recommend GPUs")
    page.wait_for_function("() => !/[\\u4e00-\\u9fff]/.test(document.querySelector('#summary').textContent)")


def test_share_link_reloads_the_same_recommendation(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()
    page.select_option("#f-kind", "fine_tuning")
    page.select_option("#f-method", "qlora")
    page.check("#f-vendor-amd")
    page.check("#f-vendor-nvidia")
    rows = submit_and_wait(page)
    match = REC_URL.search(page.url)
    assert match, page.url
    rec_id = match.group(1)
    link = page.input_value("#share-url")
    assert link == f"{portal_page.url}/ui?rec={rec_id}"
    page.click("#copy-link")
    expect(page.locator("#copy-status")).not_to_be_empty()

    # Someone else opens the link.
    other = page.context.new_page()
    other.on("console", portal_page.watch.on_console)
    other.on("request", portal_page.watch.on_request)
    other.on("pageerror", portal_page.watch.on_page_error)
    other.goto(link)
    other.wait_for_selector("#options tbody tr.option")
    assert REC_URL.search(other.url).group(1) == rec_id  # type: ignore[union-attr]
    assert other.input_value("#share-url") == link
    shared_rows = option_rows(other)
    assert shared_rows[0]["gpu"] == rows[0]["gpu"] and len(shared_rows) == len(rows)
    assert other.locator("#summary").text_content() == page.locator("#summary").text_content()
    # The form shows the stored request.
    assert other.input_value("#f-kind") == "fine_tuning"
    assert other.input_value("#f-method") == "qlora"
    assert other.is_checked("#f-vendor-amd") and other.is_checked("#f-vendor-nvidia")
    assert not other.is_checked("#f-vendor-intel")
    expect(other.locator("#chart .point")).to_have_count(len(rows))
    print(save_screenshot(other, portal_page.screenshots, "shared"))


def test_rejected_input_shows_the_problem(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"status of 400")
    portal_page.open()
    alert = page.locator("#alert[role='alert']")
    # A number outside the schema's range, past the browser's own validation.
    page.evaluate(
        """() => {
            const input = document.querySelector('#f-concurrency');
            input.removeAttribute('max');
            input.value = '2000000';
        }"""
    )
    page.click("#submit")
    expect(alert).to_contain_text("Concurrent requests: at most 1,000,000.")
    assert page.get_attribute("#f-concurrency", "aria-invalid") == "true"
    # A model the service does not know: the detail and the field.
    page.fill("#f-concurrency", "8")
    page.evaluate(
        """() => {
            const select = document.querySelector('#f-model');
            select.add(new Option('A model nobody has', 'gpt-9-ultra'));
            select.value = 'gpt-9-ultra';
        }"""
    )
    page.click("#submit")
    expect(alert).to_contain_text("no model 'gpt-9-ultra'")
    expect(alert).to_contain_text("Model: no model")
    assert page.get_attribute("#f-model", "aria-invalid") == "true"
    assert page.locator("#results-body").is_hidden()
    print(portal_page.screenshot("error"))


def test_network_failure_shows_a_message(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"ERR_FAILED|/v1/recommendations")
    portal_page.open()
    page.route("**/v1/recommendations", lambda route: route.abort())
    page.click("#submit")
    expect(page.locator("#alert")).to_contain_text("could not be reached")


def test_unknown_share_link_is_an_alert(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.watch.allow(r"status of 404")
    portal_page.open("/ui?rec=rec_000000000000000000000000")
    expect(page.locator("#alert")).to_contain_text("not stored")


def test_comparison_of_two_gpus(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()
    page.click("#tab-compare")
    expect(page.locator("#panel-compare")).to_be_visible()
    page.select_option("#c-gpu-1", "h100-sxm")
    page.select_option("#c-gpu-2", "mi300x")
    page.click("#compare-form button[type=submit]")
    table = page.locator("#compare-table")
    expect(table.locator("thead th")).to_have_count(3)
    columns = page.eval_on_selector_all("#compare-table thead th", "ths => ths.map(th => th.textContent)")
    assert "H100" in columns[1] and "MI300X" in columns[2]
    memory = page.eval_on_selector_all(
        "#compare-table tbody tr", "rows => rows.map(r => [...r.children].map(c => c.textContent))"
    )
    by_spec = {row[0]: row[1:] for row in memory}
    assert by_spec["Memory (GB)"][0] == "80" and by_spec["Memory (GB)"][1].startswith("192")
    assert "×" in by_spec["Memory (GB)"][1]
    assert page.locator("#compare-summary").text_content()
    assert "compare=h100-sxm,mi300x" in page.url
    print(portal_page.screenshot("compare"))
    page.click("button[data-lang='zh']")
    page.wait_for_function("() => /[\\u4e00-\\u9fff]/.test(document.querySelector('#compare-summary').textContent)")


def test_keyboard_only(portal_page: Portal) -> None:
    page = portal_page.page
    portal_page.open()

    def tab_to(selector: str) -> None:
        for _ in range(80):
            page.keyboard.press("Tab")
            if page.evaluate("s => document.activeElement.matches(s)", selector):
                # Focus is visible where the keyboard is.
                outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
                assert outline != "none", selector
                return
        raise AssertionError(f"Tab never reached {selector}")

    # Tabs: arrow keys move between the views.
    tab_to("#tab-size")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("document.activeElement.id") == "tab-compare"
    expect(page.locator("#panel-compare")).to_be_visible()
    page.keyboard.press("ArrowLeft")
    expect(page.locator("#panel-size")).to_be_visible()

    tab_to("#f-kind")
    page.keyboard.press("ArrowDown")
    assert page.input_value("#f-kind") == "training"
    tab_to("#f-train-tokens")
    page.keyboard.press("Control+A")
    page.keyboard.type("5")
    tab_to("#f-objective-balanced")
    page.keyboard.press("ArrowRight")
    assert page.is_checked("#f-objective-cost")
    tab_to("#submit")
    before = page.url
    page.keyboard.press("Enter")
    page.wait_for_function("before => location.href !== before", arg=before)
    page.wait_for_selector("#options tbody tr.option")
    headers = page.eval_on_selector_all("#options thead th", "ths => ths.map(th => th.textContent)")
    assert "Per run" in headers
    rows = option_rows(page)
    assert rows and rows[0]["gpu"]


def test_page_policy_and_origin(portal_page: Portal) -> None:
    page = portal_page.page
    response = page.goto(portal_page.url + "/ui")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'self'" in policy
    page.wait_for_selector("body[data-ready]")
    # Every label has its control, every control its label.
    unlabelled = page.eval_on_selector_all(
        "#workload-form input, #workload-form select, #compare-form select",
        "controls => controls.filter(c => !c.labels || c.labels.length === 0).map(c => c.id || c.name)",
    )
    assert unlabelled == []
