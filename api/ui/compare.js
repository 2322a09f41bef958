// The comparison view: GPUs chosen side by side, each figure with its ratio to the first.

import { clearAlert, showError } from "./alerts.js";
import { $, $$, h, setBusy } from "./dom.js";
import { api } from "./request.js";
import { ECOSYSTEMS, money, number, state, t } from "./state.js";
import { updateUrl } from "./url.js";

export function renderCompareOptions() {
  const byVendor = new Map();
  for (const gpu of state.gpus) {
    if (!byVendor.has(gpu.vendor)) byVendor.set(gpu.vendor, []);
    byVendor.get(gpu.vendor).push(gpu);
  }
  $$("#compare-form select").forEach((select, index) => {
    const current = select.value;
    const groups = Array.from(byVendor, ([vendor, gpus]) =>
      h("optgroup", { label: t(`vendor.${vendor}`) }, gpus.map((gpu) => h("option", { value: gpu.id, text: gpu.name }))),
    );
    const none = index >= 2 ? h("option", { value: "", text: t("compare.none") }) : null;
    select.replaceChildren(...[none, ...groups].filter(Boolean));
    if (current) select.value = current;
  });
}

export function chosenGpus() {
  return [...new Set($$("#compare-form select").map((select) => select.value).filter(Boolean))];
}

export async function compare(ids) {
  state.compareController?.abort();
  const controller = new AbortController();
  state.compareController = controller;
  clearAlert();
  setCompareLoading(true);
  try {
    const query = new URLSearchParams({ ids: ids.join(","), lang: state.lang });
    const comparison = await api(`/v1/gpus/compare?${query}`, { signal: controller.signal });
    state.comparison = comparison;
    state.compareIds = ids;
    setCompareLoading(false);
    updateUrl();
  } catch (error) {
    if (controller.signal.aborted) return;
    setCompareLoading(false);
    showError(error);
  } finally {
    if (state.compareController === controller) state.compareController = null;
  }
}

function setCompareLoading(loading) {
  state.compareLoading = loading;
  setBusy($("#compare-results"), loading);
  renderComparison();
}

export function renderComparison() {
  const comparison = state.comparison;
  const status = $("#compare-status");
  status.removeAttribute("data-i18n");
  if (!comparison) {
    status.textContent = t(state.compareLoading ? "compare.loading" : "compare.empty");
    $("#compare-wrap").hidden = true;
    return;
  }
  status.textContent = state.compareLoading ? t("compare.loading") : "";
  $("#compare-summary").textContent = comparison.summary ?? "";
  $("#compare-summary").lang = comparison.lang === "zh" ? "zh-CN" : "en";
  const items = comparison.items ?? [];
  const ratios = new Map((comparison.ratios ?? []).map((ratio) => [ratio.gpu, ratio]));
  const baseline = comparison.baseline;
  const withRatio = (gpu, value, key, digits, format = (figure) => number(figure, digits)) => {
    const text = value === null || value === undefined ? t("spec.notAvailable") : format(value);
    const ratio = ratios.get(gpu.id)?.[key];
    if (gpu.id === baseline || ratio === null || ratio === undefined || value === null || value === undefined) return text;
    return `${text} (${number(ratio, 2)}×)`;
  };
  const price = (gpu) => gpu.lowest_price?.on_demand?.usd_per_gpu_hour ?? null;
  const rows = [
    ["spec.vendor", (gpu) => t(`vendor.${gpu.vendor}`)],
    ["spec.architecture", (gpu) => gpu.architecture],
    ["spec.launch", (gpu) => String(gpu.launch_year)],
    ["spec.memory", (gpu) => withRatio(gpu, gpu.memory_gb, "memory_gb", 0)],
    ["spec.memoryType", (gpu) => gpu.memory_type],
    ["spec.bandwidth", (gpu) => withRatio(gpu, gpu.memory_bandwidth_gbps, "memory_bandwidth_gbps", 0)],
    ["spec.bf16", (gpu) => withRatio(gpu, gpu.tflops?.bf16, "bf16_tflops", 0)],
    ["spec.fp8", (gpu) => withRatio(gpu, gpu.tflops?.fp8, "fp8_tflops", 0)],
    ["spec.fp4", (gpu) => number(gpu.tflops?.fp4, 0)],
    ["spec.tdp", (gpu) => withRatio(gpu, gpu.tdp_w, "tdp_w", 0)],
    ["spec.interconnect", (gpu) => gpu.interconnect?.description ?? t("spec.notAvailable")],
    ["spec.ecosystem", (gpu) => ECOSYSTEMS[gpu.ecosystem] ?? gpu.ecosystem],
    ["spec.price", (gpu) => withRatio(gpu, price(gpu), "usd_per_gpu_hour", 2, (figure) => money(figure, "USD"))],
  ];
  const table = $("#compare-table");
  $("thead", table).replaceChildren(
    h("tr", {}, h("th", { scope: "col", text: t("spec.spec") }), items.map((gpu) => h("th", { scope: "col", text: gpu.name }))),
  );
  $("tbody", table).replaceChildren(
    ...rows.map(([key, value]) =>
      h("tr", {}, h("th", { scope: "row", text: t(key) }), items.map((gpu) => h("td", { class: "num", text: value(gpu) }))),
    ),
  );
  $("#compare-wrap").hidden = false;
}
