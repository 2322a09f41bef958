// The recommendation view: status, the ranked options table, the chart, two options side by side, assumptions,
// exclusions, CSV export and the share link.

import { drawChart } from "./chart.js";
import { $, $$, csv, download, h, setBusy } from "./dom.js";
import { shortGpuName } from "./format.js";
import { locale } from "./i18n.js";
import { KIND_COST, atLoadCost, optionColumns, sortedOptions, throughputOf as throughputIn } from "./options.js";
import { gpuName, money, named, number, state, t, targetName } from "./state.js";
import { shareUrl } from "./url.js";

const throughputOf = (option, kind) => throughputIn(option, kind, t);

/** Say what is being loaded (or, with null, show what there is). */
export function setLoading(key) {
  state.recLoading = key;
  setBusy($("#results"), Boolean(key));
  renderRecommendation();
}

export function renderRecommendation() {
  const recommendation = state.recommendation;
  const status = $("#results-status");
  const body = $("#results-body");
  status.removeAttribute("data-i18n");
  if (!recommendation) {
    status.textContent = t(state.recLoading ?? "results.empty");
    $("#summary").textContent = "";
    body.hidden = true;
    return;
  }
  const kind = recommendation.workload?.kind ?? "inference";
  const options = recommendation.options ?? [];
  if (state.recLoading) status.textContent = t(state.recLoading);
  else status.textContent = options.length ? t("results.count", { n: options.length }) : t("results.none");
  $("#summary").textContent = recommendation.summary ?? "";
  $("#summary").lang = recommendation.lang === "zh" ? "zh-CN" : "en";
  body.hidden = false;

  const created = recommendation.created_at ? new Date(recommendation.created_at) : null;
  const meta = [
    t("results.meta", {
      id: recommendation.id,
      version: recommendation.catalog_version,
      date: created ? created.toLocaleString(locale(state.lang), { dateStyle: "medium", timeStyle: "short" }) : "",
    }),
  ];
  const rate = recommendation.exchange_rate;
  if (rate) meta.push(t("results.rate", { rate: rate.usd_to_cny, date: rate.as_of }));
  $("#results-meta").textContent = meta.join(" ");
  $("#share-url").value = shareUrl(recommendation.id);
  $("#copy-status").textContent = "";

  renderOptions(options, kind, recommendation.currency, recommendation.workload ?? {});
  drawChart(options, kind, recommendation.currency, chartContext);
  renderAssumptions(options[0]);
  renderExcluded(recommendation.excluded ?? []);
  renderSideBySide();
}

function sortBy(key) {
  state.sort = state.sort.key === key ? { key, descending: !state.sort.descending } : { key, descending: false };
  renderRecommendation();
  $(`#options thead button[data-sort="${key}"]`)?.focus();
}

// A layout as engines name it: tensor, pipeline, expert and data parallel, and data-parallel attention where used.
function layoutText(parallelism) {
  const text = t("config.parallel", {
    tp: parallelism.tensor ?? 1,
    pp: parallelism.pipeline ?? 1,
    ep: parallelism.expert ?? 1,
    dp: parallelism.data ?? 1,
  });
  return parallelism.attention_data ? `${text} · ${t("config.attentionDp", { n: parallelism.attention_data })}` : text;
}

// Time per output token, the tokens per second one user sees, and time to first token.
function latencyCell(performance) {
  const tpot = performance?.tpot_ms?.expected;
  const ttft = performance?.ttft_ms?.expected;
  if (!tpot) return [];
  return [
    h("span", { class: "sub", text: t("latency.tpot", { ms: number(tpot, 0) }) }),
    h("span", { class: "sub", text: t("latency.perUser", { rate: number(1000 / tpot, 1) }) }),
    h("span", { class: "sub", text: t("latency.ttft", { ms: number(ttft ?? 0, 0) }) }),
  ];
}

function renderOptions(options, kind, currency, workload) {
  const table = $("#options");
  const costField = (KIND_COST[kind] ?? KIND_COST.inference)[0];
  const withLoad = options.some((option) => atLoadCost(option, workload) !== null);
  const columns = optionColumns(kind, withLoad);
  const heading = ([id, key, sort]) => {
    const attrs = { scope: "col", id: `options-col-${id}`, "data-col": id };
    if (!sort) return h("th", { ...attrs, text: t(key) });
    const active = state.sort.key === sort;
    attrs["aria-sort"] = active ? (state.sort.descending ? "descending" : "ascending") : "none";
    const button = h("button", { type: "button", class: "sort", "data-sort": sort, text: t(key) });
    button.addEventListener("click", () => sortBy(sort));
    return h("th", attrs, button);
  };
  $("thead", table).replaceChildren(h("tr", {}, columns.map(heading)));
  const label = (id) => t(columns.find((column) => column[0] === id)?.[1] ?? "");
  const rows = sortedOptions(options, kind, workload, state.sort, state.lang).flatMap((option) => {
    const throughput = throughputOf(option, kind);
    const cost = option.cost;
    const optionCurrency = cost?.currency ?? currency;
    const parallelism = option.parallelism ?? {};
    const config = [
      h("span", {
        text: `${t("config.gpus", { n: option.gpu_count })} · ${
          option.nodes === 1 ? t("config.oneNode") : t("config.nodes", { n: option.nodes })
        }`,
      }),
      h("span", {
        class: "sub",
        text: layoutText(parallelism),
      }),
    ];
    const runHours = option.performance?.run_hours?.expected;
    if (runHours) config.push(h("span", { class: "sub", text: t("config.runTime", { hours: number(runHours, 0) }) }));
    const fits = [h("span", { class: option.feasible ? "yes" : "no", text: t(option.feasible ? "fits.yes" : "fits.no") })];
    if (!option.meets_targets && option.unmet_targets?.length) {
      const targets = option.unmet_targets.map(targetName).join(state.lang === "zh" ? "、" : ", ");
      fits.push(h("span", { class: "sub", text: t("fits.unmet", { targets }) }));
    }
    const throughputCell = throughput
      ? [
          h("span", { text: `${number(throughput.range.expected)} ${throughput.unit}` }),
          h("span", { class: "sub", text: `${number(throughput.range.low)}–${number(throughput.range.high)}` }),
        ]
      : [t("spec.notAvailable")];
    const offer = option.offer;
    const pricing = offer
      ? [
          h("span", { text: `${t(`pricing.${offer.pricing}`)} · ${offer.provider}` }),
          ...(offer.tier ? [h("span", { class: "sub", text: t(`tier.${offer.tier}`) })] : []),
        ]
      : [t("pricing.none")];
    // Warnings and reasons are sentences: they get a full-width row under their option instead of a narrow column.
    const rowId = `option-${option.rank}`;
    const notes = [h("span", { class: "notes-label", text: `${t("col.notes")}: ` })];
    if (option.warnings?.length) {
      notes.push(h("ul", { class: "notes" }, option.warnings.map((warning) => h("li", { text: warning }))));
    } else {
      notes.push(t("notes.none"));
    }
    if (option.reasons?.length) {
      notes.push(
        h(
          "details",
          { class: "why" },
          h("summary", { text: t("notes.why") }),
          h("ul", { class: "notes" }, option.reasons.map((reason) => h("li", { text: reason }))),
        ),
      );
    }
    if (option.launch) notes.push(launchBlock(option));
    const choose = h("input", {
      type: "checkbox",
      class: "choose",
      id: `choose-${option.rank}`,
      "data-rank": option.rank,
      checked: state.chosen.includes(option.rank),
    });
    choose.addEventListener("change", () => chooseOption(option.rank, choose.checked));
    const atLoad = withLoad ? atLoadCost(option, workload) : null;
    const cells = {
      rank: h("td", { class: "num rank", rowspan: 2, text: option.rank }),
      gpu: h(
        "th",
        { scope: "row", id: rowId, class: "gpu" },
        h("span", { class: "gpu-name", text: option.gpu.name }),
        h("span", { class: "sub", text: option.gpu.vendor.toUpperCase() }),
        h("span", { class: "choose-wrap" }, choose, h("label", { for: choose.id, text: t("choose.label") })),
      ),
      config: h("td", { class: "stack" }, config),
      fits: h("td", { class: "stack" }, fits),
      // Inference adds what a user feels: time per token, tokens/s per user, time to first token.
      throughput: h(
        "td",
        { class: "stack num" },
        kind === "inference" ? [...throughputCell, ...latencyCell(option.performance)] : throughputCell,
      ),
      hourly: h("td", { class: "num cost-hourly", text: money(cost?.hourly, optionCurrency) }),
      monthly: h("td", { class: "num cost-monthly", text: money(cost?.monthly, optionCurrency) }),
      unit: h("td", { class: "num cost-kind", text: money(cost?.[costField], optionCurrency) }),
      atLoad: h("td", { class: "num cost-at-load", text: atLoad === null ? t("atLoad.same") : money(atLoad, optionCurrency) }),
      pricing: h("td", { class: "stack" }, pricing),
      // An old price is information beside the option, not a reason it ranks lower.
      priceAge: h(
        "td",
        // The stale marker is one word: the sentence that says what to do is the cell's tooltip.
        {
          class: `num price-age${option.cost?.stale_price ? " stale" : ""}`,
          ...(option.cost?.stale_price ? { title: t("priceAge.check") } : {}),
        },
        offer
          ? [
              h("span", { text: t("priceAge.days", { days: offer.age_days }) }),
              h("span", { class: "sub", text: offer.as_of }),
              ...(option.cost?.stale_price ? [h("span", { class: "sub", text: t("priceAge.old") })] : []),
            ]
          : [t("spec.notAvailable")],
      ),
    };
    for (const [id] of columns) if (id !== "gpu" && id !== "rank") cells[id].dataset.label = label(id);
    return [
      h("tr", { "data-rank": option.rank, class: "option" }, columns.map(([id]) => cells[id])),
      h(
        "tr",
        { class: "option-notes" },
        h("td", { colspan: columns.length - 1, headers: rowId, class: "notes-cell" }, notes),
      ),
    ];
  });
  $("tbody", table).replaceChildren(...rows);
}

// ---------------------------------------------------------------------------------------------- two options side by side

function chooseOption(rank, on) {
  const chosen = state.chosen.filter((item) => item !== rank);
  if (on) chosen.push(rank);
  // Two at a time: choosing a third lets the oldest go.
  state.chosen = chosen.slice(-2);
  for (const input of $$("#options input.choose")) input.checked = state.chosen.includes(Number(input.dataset.rank));
  renderSideBySide();
}

function renderSideBySide() {
  const section = $("#side-by-side");
  const recommendation = state.recommendation;
  const options = (recommendation?.options ?? []).filter((option) => state.chosen.includes(option.rank));
  if (!recommendation || options.length < 2) {
    section.hidden = true;
    $("#side-hint").textContent = recommendation?.options?.length > 1 ? t("side.hint") : "";
    return;
  }
  $("#side-hint").textContent = "";
  section.hidden = false;
  const kind = recommendation.workload?.kind ?? "inference";
  const [costField, costLabel] = KIND_COST[kind] ?? KIND_COST.inference;
  const currency = recommendation.currency;
  const rows = [
    ["col.config", (o) => `${t("config.gpus", { n: o.gpu_count })} · ${layoutText(o.parallelism ?? {})}`],
    ["col.fits", (o) => t(o.feasible ? "fits.yes" : "fits.no")],
    ["side.memory", (o) => `${number(o.memory?.required_gb, 0)} / ${number(o.memory?.capacity_gb, 0)} GB`],
    ["col.throughput", (o) => {
      const throughput = throughputOf(o, kind);
      return throughput ? `${number(throughput.range.expected)} ${throughput.unit}` : t("spec.notAvailable");
    }],
    ["col.hourly", (o) => money(o.cost?.hourly, o.cost?.currency ?? currency)],
    ["col.monthly", (o) => money(o.cost?.monthly, o.cost?.currency ?? currency)],
    [costLabel, (o) => money(o.cost?.[costField], o.cost?.currency ?? currency)],
    ["col.pricing", (o) => (o.offer ? `${t(`pricing.${o.offer.pricing}`)} · ${o.offer.provider}` : t("pricing.none"))],
    ["side.score", (o) => number(o.score, 2)],
  ];
  const [a, b] = options.sort((x, y) => x.rank - y.rank);
  const difference = (field) => {
    const x = a.cost?.[field];
    const y = b.cost?.[field];
    if (!x || !y) return null;
    return t("side.difference", { gpu: shortGpuName(b.gpu.name), pct: number(((y - x) / x) * 100, 0) });
  };
  $("#side-table thead").replaceChildren(
    h("tr", {}, h("td", {}), [a, b].map((o) => h("th", { scope: "col", text: `#${o.rank} ${o.gpu.name}` }))),
  );
  $("#side-table tbody").replaceChildren(
    ...rows.map(([key, value]) => h("tr", {}, h("th", { scope: "row", text: t(key) }), [a, b].map((o) => h("td", { text: value(o) })))),
  );
  $("#side-note").textContent = difference("hourly") ?? "";
}

// ---------------------------------------------------------------------------------------------- CSV export

export function exportOptions() {
  const recommendation = state.recommendation;
  if (!recommendation) return;
  const kind = recommendation.workload?.kind ?? "inference";
  const costField = (KIND_COST[kind] ?? KIND_COST.inference)[0];
  const header = ["rank", "gpu", "gpu_name", "gpu_count", "nodes", "tensor", "pipeline", "data", "feasible",
    "meets_targets", "throughput", "throughput_unit", "currency", "hourly", "monthly", costField, "at_asked_load",
    "pricing", "provider", "price_as_of", "score", "warnings"];
  const rows = (recommendation.options ?? []).map((option) => {
    const throughput = throughputOf(option, kind);
    const atLoad = atLoadCost(option, recommendation.workload ?? {});
    return [option.rank, option.gpu.id, option.gpu.name, option.gpu_count, option.nodes, option.parallelism?.tensor,
      option.parallelism?.pipeline, option.parallelism?.data, option.feasible, option.meets_targets,
      throughput?.range.expected, throughput?.unit, option.cost?.currency, option.cost?.hourly, option.cost?.monthly,
      option.cost?.[costField], atLoad === null ? "" : Number(atLoad.toPrecision(6)), option.offer?.pricing,
      option.offer?.provider, option.offer?.as_of, option.score, (option.warnings ?? []).join(" | ")];
  });
  download(`${recommendation.id}-options.csv`, csv([header, ...rows]));
}

export function exportExcluded() {
  const recommendation = state.recommendation;
  if (!recommendation) return;
  const rows = (recommendation.excluded ?? []).map((item) => [item.gpu, gpuName(item.gpu), item.reason]);
  download(`${recommendation.id}-excluded.csv`, csv([["gpu", "gpu_name", "reason"], ...rows]));
}

// The engine's command for the option's layout, with why this layout, and a button that copies the command.
function launchBlock(option) {
  const copy = h("button", { type: "button", class: "copy", text: t("launch.copy") });
  copy.addEventListener("click", async () => {
    await navigator.clipboard?.writeText(option.launch.command);
    copy.textContent = t("launch.copied");
  });
  return h(
    "details",
    { class: "launch" },
    h("summary", { text: t("launch.heading") }),
    option.layout_reason ? h("p", { text: option.layout_reason }) : null,
    h("pre", {}, h("code", { text: option.launch.command })),
    copy,
  );
}

function renderAssumptions(option) {
  const rows = (option?.assumptions ?? []).map((assumption) =>
    h(
      "tr",
      {},
      h("th", { scope: "row", text: named("assumption", assumption.name) }),
      h("td", { text: assumption.value }),
      h("td", { class: "source", text: assumption.source }),
    ),
  );
  $("#assumptions tbody").replaceChildren(...rows);
}

function renderExcluded(excluded) {
  $("#excluded-summary").textContent = t("excluded.summary", { n: excluded.length });
  const rows = excluded.map((item) =>
    h("tr", {}, h("th", { scope: "row", text: gpuName(item.gpu) }), h("td", { text: item.reason })),
  );
  $("#excluded tbody").replaceChildren(...rows);
}

// ---------------------------------------------------------------------------------------------- share link

export async function copyLink() {
  const input = $("#share-url");
  const status = $("#copy-status");
  try {
    await navigator.clipboard.writeText(input.value);
    status.textContent = t("share.copied");
  } catch {
    // Without clipboard access (an iframe without allow="clipboard-write", an old browser) the link is selected.
    input.focus();
    input.select();
    status.textContent = t("share.manual");
  }
}

// The chart's module, given the page's translation and formatting.
export const chartContext = {
  t: (key, values) => t(key, values),
  money: (value, currency) => money(value, currency),
  number: (value, digits) => number(value, digits),
  throughputOf: (option, kind) => throughputOf(option, kind),
  shortGpuName: (name) => shortGpuName(name),
};
