// The rent-or-buy tab: POST /v1/tco for a number of GPUs, owning them year by year against the cheapest rent,
// drawn as cumulative cost per year with the break-even.

import { $, $$, chartWidth, h, reveal, s } from "./dom.js";

let page = null;
const tco = { answer: null, body: null, loading: false, controller: null };

/** Wire the tab's form; `context` gives the page's translation, formatting, requests and alerts. */
export function initTco(context) {
  page = context;
  context.relanguage = async () => {
    if (tco.body) await ask({ ...tco.body, lang: context.lang() });
  };
  const select = $("#t-gpu");
  const priced = context.gpus().filter((gpu) => gpu.lowest_price?.on_demand);
  const gpus = priced.length ? priced : context.gpus();
  select.replaceChildren(...gpus.map((gpu) => h("option", { value: gpu.id, text: gpu.name })));
  select.value = gpus.some((gpu) => gpu.id === "h100-sxm") ? "h100-sxm" : (gpus[0]?.id ?? "");
  $("#tco-form").addEventListener("submit", (event) => {
    event.preventDefault();
    ask(request(), { scroll: true });
  });
  renderTco();
}

function request() {
  const value = (id) => {
    const input = $(id);
    return input.value.trim() === "" ? undefined : Number(input.value);
  };
  const body = { gpu: $("#t-gpu").value, currency: $('#tco-form input[name="t-currency"]:checked')?.value ?? "USD" };
  const count = value("#t-count");
  if (count !== undefined) body.gpu_count = count;
  const years = value("#t-years");
  if (years !== undefined) body.years = years;
  const utilization = value("#t-utilization");
  if (utilization !== undefined) body.utilization = utilization / 100;
  const electricity = value("#t-electricity");
  if (electricity !== undefined) body.electricity_usd_per_kwh = electricity;
  const purchase = value("#t-purchase");
  if (purchase !== undefined) body.purchase_usd = purchase;
  body.lang = page.lang();
  return body;
}

async function ask(body, { scroll = false } = {}) {
  tco.controller?.abort();
  const controller = new AbortController();
  tco.controller = controller;
  page.clearAlert();
  tco.loading = true;
  renderTco();
  try {
    tco.answer = await page.api("/v1/tco", { method: "POST", body, signal: controller.signal });
    tco.body = body;
    tco.loading = false;
    renderTco();
    if (scroll) reveal($("#tco-results"));
  } catch (error) {
    if (controller.signal.aborted) return;
    // A rejected question leaves no answer to another one on the screen.
    tco.answer = null;
    tco.body = null;
    tco.loading = false;
    renderTco();
    page.showError(error);
    if (scroll) reveal($("#alert"));
  } finally {
    if (tco.controller === controller) tco.controller = null;
  }
}

/** Cumulative cost at the end of each year: owning, and renting with the cheapest offer. */
export function cumulative(answer) {
  const best = answer.rent?.[0] ?? null;
  let owned = 0;
  let rented = 0;
  return answer.buy.years.map((year, index) => {
    owned += year.total;
    rented += best?.years?.[index]?.total ?? 0;
    return { year: year.year, owned, rented: best ? rented : null };
  });
}

export function renderTco() {
  if (!page) return;
  const { t, money, number } = page;
  const status = $("#tco-status");
  const body = $("#tco-body");
  $("#tco-results").setAttribute("aria-busy", String(tco.loading));
  const answer = tco.answer;
  if (!answer) {
    status.textContent = t(tco.loading ? "tco.loading" : "tco.empty");
    $("#tco-summary").textContent = "";
    body.hidden = true;
    return;
  }
  status.textContent = tco.loading ? t("tco.loading") : "";
  $("#tco-summary").textContent = answer.summary ?? "";
  $("#tco-summary").lang = answer.lang === "zh" ? "zh-CN" : "en";
  body.hidden = false;
  const currency = answer.currency;
  const best = answer.rent?.[0] ?? null;
  const buy = answer.buy;
  // The purchase price is the figure the whole comparison rests on: shown with its date, or as the user's quote.
  const purchase = buy.purchase_as_of
    ? t("tco.purchaseDated", { price: money(buy.purchase, currency), date: buy.purchase_as_of, days: buy.purchase_age_days })
    : t("tco.purchaseQuoted", { price: money(buy.purchase, currency) });
  const shape = best ? t(best.like_for_like === false ? "tco.shapeFallback" : "tco.shape", { instances: best.instances, gpus: best.gpus_per_instance }) : "";
  const verdict = [
    [t("tco.cheaper"), answer.cheaper ? t(`tco.choice.${answer.cheaper}`) : t("tco.nothingToCompare")],
    [t("tco.purchasePrice"), purchase],
    [t("tco.buyTotal"), money(buy.total, currency)],
    [t("tco.rentTotal"), best ? `${money(best.total, currency)} (${t(`pricing.${best.pricing}`)} · ${best.provider} · ${shape})` : t("tco.noRent")],
    [t("tco.breakEvenMonth"), answer.break_even_month ? t("tco.month", { n: answer.break_even_month }) : t("tco.never")],
    [
      t("tco.breakEvenUtilization"),
      answer.break_even_utilization === null || answer.break_even_utilization === undefined
        ? t("tco.never")
        : `${number(answer.break_even_utilization * 100, 1)}%`,
    ],
  ];
  $("#tco-verdict").replaceChildren(...verdict.flatMap(([name, value]) => [h("dt", { text: name }), h("dd", { text: value })]));
  const warnings = answer.warnings ?? [];
  $("#tco-warnings").hidden = !warnings.length;
  $("#tco-warnings").replaceChildren(...warnings.map((warning) => h("li", { text: warning })));
  const years = cumulative(answer);
  $("#tco-table thead").replaceChildren(
    h("tr", {}, ["tco.year", "tco.ownedSoFar", "tco.rentedSoFar"].map((key) => h("th", { scope: "col", text: t(key) }))),
  );
  $("#tco-table tbody").replaceChildren(
    ...years.map((row) =>
      h(
        "tr",
        {},
        h("th", { scope: "row", text: t("tco.yearN", { n: row.year }) }),
        h("td", { class: "num", "data-label": t("tco.ownedSoFar"), text: money(row.owned, currency) }),
        h("td", { class: "num", "data-label": t("tco.rentedSoFar"), text: row.rented === null ? t("spec.notAvailable") : money(row.rented, currency) }),
      ),
    ),
  );
  drawYears(years, answer);
}

function drawYears(years, answer) {
  const { t, money } = page;
  const svg = $("#tco-chart");
  const width = chartWidth(svg);
  const height = width < 600 ? 280 : 320;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const margin = { left: 64, right: 16, top: 16, bottom: 48 };
  for (const child of Array.from(svg.children)) if (child.tagName !== "title" && child.tagName !== "desc") child.remove();
  $("#tco-chart-title").textContent = t("tco.chartTitle");
  const values = years.flatMap((row) => [row.owned, row.rented ?? 0]);
  const top = Math.max(...values, 1) * 1.1;
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const band = plotWidth / years.length;
  const barWidth = Math.min(36, band / 3);
  const y = (value) => margin.top + plotHeight - (Math.max(value, 0) / top) * plotHeight;
  const grid = s("g", { class: "grid" });
  const axes = s("g", { class: "axes" });
  for (let index = 0; index <= 4; index += 1) {
    const value = (top / 4) * index;
    grid.append(s("line", { x1: margin.left, x2: width - margin.right, y1: y(value), y2: y(value) }));
    axes.append(s("text", { x: margin.left - 6, y: y(value) + 4, "text-anchor": "end" }, page.compactMoney(value, answer.currency)));
  }
  const bars = s("g", { class: "bars" });
  years.forEach((row, index) => {
    const center = margin.left + band * index + band / 2;
    axes.append(s("text", { x: center, y: height - margin.bottom + 18, "text-anchor": "middle" }, t("tco.yearN", { n: row.year })));
    const owned = s("rect", { class: "owned", x: center - barWidth - 2, y: y(row.owned), width: barWidth, height: y(0) - y(row.owned) });
    owned.append(s("title", {}, `${t("tco.ownedSoFar")}: ${money(row.owned, answer.currency)}`));
    bars.append(owned);
    if (row.rented !== null) {
      const rented = s("rect", { class: "rented", x: center + 2, y: y(row.rented), width: barWidth, height: y(0) - y(row.rented) });
      rented.append(s("title", {}, `${t("tco.rentedSoFar")}: ${money(row.rented, answer.currency)}`));
      bars.append(rented);
    }
  });
  const legend = s(
    "g",
    { class: "legend" },
    s("rect", { class: "owned", x: margin.left, y: height - 18, width: 12, height: 12 }),
    s("text", { x: margin.left + 16, y: height - 8 }, t("tco.ownedSoFar")),
    s("rect", { class: "rented", x: margin.left + plotWidth / 2, y: height - 18, width: 12, height: 12 }),
    s("text", { x: margin.left + plotWidth / 2 + 16, y: height - 8 }, t("tco.rentedSoFar")),
  );
  svg.append(grid, axes, bars, legend);
  const month = answer.break_even_month;
  if (month) {
    // The break-even month on the year axis: owning has cost less than renting from here on.
    const x = margin.left + (Math.min(month, years.length * 12) / (years.length * 12)) * plotWidth;
    svg.append(
      s(
        "g",
        { class: "break-even" },
        s("line", { x1: x, x2: x, y1: margin.top, y2: margin.top + plotHeight }),
        s("text", { x: Math.min(x + 4, width - margin.right - 4), y: margin.top + 12, "text-anchor": x > width - 140 ? "end" : "start" }, t("tco.month", { n: month })),
      ),
    );
  }
  for (const text of $$("text", svg)) text.setAttribute("dominant-baseline", "auto");
}
