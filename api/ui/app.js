// The portal page: a workload form posted to /v1/recommendations, the ranked answer as a table and a chart,
// share links (/ui?rec=<id>), a GPU comparison and rent or buy. Plain DOM, no dependencies; all requests go to this
// origin. This module starts the page and holds what spans views: the language, asking for a recommendation.

import { clearAlert, renderError, showError } from "./alerts.js";
import { chosenGpus, compare, renderCompareOptions, renderComparison } from "./compare.js";
import { $, $$, chartWidth, reveal as bringIntoView, setBusy } from "./dom.js";
import { drawChart } from "./chart.js";
import { formatCompactMoney } from "./format.js";
import {
  buildRequest,
  field,
  fillForm,
  form,
  renderModelOptions,
  renderPrecisionOptions,
  updateCustomModel,
  updateKind,
} from "./form.js";
import { LANGS } from "./i18n.js";
import { RequestError, api } from "./request.js";
import { chartContext, copyLink, exportExcluded, exportOptions, renderRecommendation, setLoading } from "./results.js";
import { REC_ID, money, number, state, t } from "./state.js";
import { initTco, renderTco } from "./tco.js";
import { onTabKey, selectView, updateUrl } from "./url.js";

function applyLanguage() {
  document.documentElement.lang = state.lang === "zh" ? "zh-CN" : "en";
  document.title = t("page.title");
  for (const element of $$("[data-i18n]")) {
    element.textContent = t(element.dataset.i18n, { n: element.dataset.n });
  }
  for (const button of $$(".lang-button")) {
    button.setAttribute("aria-pressed", String(button.dataset.lang === state.lang));
  }
  renderPrecisionOptions();
  renderModelOptions();
  renderCompareOptions();
  renderRecommendation();
  renderComparison();
  renderTco();
  renderError();
}

async function setLanguage(lang) {
  if (lang === state.lang || !LANGS.includes(lang)) return;
  state.lang = lang;
  applyLanguage();
  updateUrl();
  // The service writes summaries, reasons and warnings in the request's language: ask again.
  const pending = [];
  if (state.lastBody) pending.push(recommend({ ...state.lastBody, lang }));
  if (state.compareIds) pending.push(compare(state.compareIds));
  pending.push(tcoContext.relanguage());
  await Promise.all(pending);
}

async function recommend(body, { reveal = false } = {}) {
  state.recController?.abort();
  const controller = new AbortController();
  state.recController = controller;
  clearAlert();
  setLoading("results.loading");
  try {
    const recommendation = await api("/v1/recommendations", { method: "POST", body, signal: controller.signal });
    state.lastBody = body;
    state.recommendation = recommendation;
    state.chosen = [];
    setLoading(null);
    updateUrl();
    if (reveal) bringIntoView($("#results"));
  } catch (error) {
    if (controller.signal.aborted) return;
    // The answer below was to another question: it must not stay as if it answered this one.
    state.recommendation = null;
    state.lastBody = null;
    state.chosen = [];
    setLoading(null);
    updateUrl();
    showError(error);
    if (reveal) bringIntoView($("#alert"));
  } finally {
    if (state.recController === controller) state.recController = null;
  }
}

async function loadShared(id) {
  if (!REC_ID.test(id)) {
    showError(new RequestError(t("error.notFound"), { status: 404 }));
    return;
  }
  setLoading("results.loadingShared");
  try {
    const recommendation = await api(`/v1/recommendations/${id}`);
    state.recommendation = recommendation;
    if (LANGS.includes(recommendation.lang) && recommendation.lang !== state.lang) {
      state.lang = recommendation.lang;
    }
    fillForm(recommendation);
    state.lastBody = buildRequest();
    state.recLoading = null;
    setBusy($("#results"), false);
    applyLanguage();
    updateUrl();
  } catch (error) {
    setLoading(null);
    showError(error.status === 404 ? new RequestError(t("error.notFound"), error) : error);
  }
}

async function loadCatalog() {
  const gpus = [];
  for (let offset = 0; offset < 10000; offset += 200) {
    const page = await api(`/v1/gpus?limit=200&offset=${offset}`);
    gpus.push(...page.items);
    if (gpus.length >= page.total || page.items.length === 0) break;
  }
  const models = await api("/v1/models");
  state.gpus = gpus;
  state.gpuNames = new Map(gpus.map((gpu) => [gpu.id, gpu.name]));
  state.models = models.items;
}

function wire() {
  for (const button of $$(".lang-button")) {
    button.addEventListener("click", () => setLanguage(button.dataset.lang));
  }
  for (const tab of $$('[role="tab"]')) {
    tab.addEventListener("click", () => selectView(tab.getAttribute("aria-controls").replace("panel-", "")));
    tab.addEventListener("keydown", onTabKey);
  }
  field("kind").addEventListener("change", updateKind);
  field("method").addEventListener("change", updateKind);
  field("cm_attention").addEventListener("change", updateCustomModel);
  field("cm_config").addEventListener("input", updateCustomModel);
  field("model").addEventListener("change", () => {
    state.modelChoice[state.kind] = field("model").value;
    updateCustomModel();
  });
  field("precision").addEventListener("change", () => {
    state.precisionChoice[state.kind] = field("precision").value;
  });
  form().addEventListener("submit", (event) => {
    event.preventDefault();
    let body;
    try {
      body = buildRequest();
    } catch (error) {
      if (!(error instanceof RequestError)) throw error;
      showError(error);
      return;
    }
    recommend(body, { reveal: true });
  });
  form().addEventListener("input", (event) => {
    event.target.removeAttribute?.("aria-invalid");
    if (event.target === field("train_tokens") || event.target === field("token_unit")) {
      field("train_tokens").dataset.edited = "true";
    }
  });
  $("#copy-link").addEventListener("click", copyLink);
  $("#export-options").addEventListener("click", exportOptions);
  $("#export-excluded").addEventListener("click", exportExcluded);
  $("#print").addEventListener("click", () => window.print());
  // A closed <details> prints closed: the exclusions are part of the answer on paper.
  window.addEventListener("beforeprint", () => {
    $("#excluded").open = true;
  });
  // The chart is drawn at its shown size: again when that changes (a phone turned, a window resized).
  let drawnWidth = 0;
  new ResizeObserver(() => {
    const width = chartWidth($("#chart"));
    if (width === drawnWidth || !state.recommendation) return;
    drawnWidth = width;
    const recommendation = state.recommendation;
    const kind = recommendation.workload?.kind ?? "inference";
    drawChart(recommendation.options ?? [], kind, recommendation.currency, chartContext);
  }).observe($("#chart-figure"));
  $("#compare-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const ids = chosenGpus();
    if (ids.length < 2) {
      showError(new RequestError(t("compare.tooFew")));
      return;
    }
    compare(ids);
  });
}

// The rent-or-buy tab: its own module, given what it needs from the page.
const tcoContext = {
  t: (key, values) => t(key, values),
  lang: () => state.lang,
  money: (value, currency) => money(value, currency),
  compactMoney: (value, currency) => formatCompactMoney(state.lang, value, currency),
  number: (value, digits) => number(value, digits),
  api: (path, options) => api(path, options),
  clearAlert: () => clearAlert(),
  showError: (error) => showError(error),
  gpus: () => state.gpus,
  relanguage: async () => {},
};

async function start() {
  const params = new URLSearchParams(location.search);
  const asked = params.get("lang");
  state.lang = LANGS.includes(asked) ? asked : (navigator.language ?? "").toLowerCase().startsWith("zh") ? "zh" : "en";
  wire();
  const sharedId = params.get("rec");
  const compareIds = (params.get("compare") ?? "").split(",").filter(Boolean).slice(0, 4);
  if (compareIds.length || params.get("view") === "compare") state.view = "compare";
  if (params.get("view") === "tco") state.view = "tco";
  // The address stays as it came until what it names is loaded.
  selectView(state.view, { keepUrl: true });
  setLoading("loading.catalog");
  try {
    await loadCatalog();
  } catch (error) {
    state.recLoading = null;
    setBusy($("#results"), false);
    applyLanguage();
    showError(error);
    return;
  }
  state.recLoading = null;
  setBusy($("#results"), false);
  const compareSelects = $$("#compare-form select");
  renderCompareOptions();
  const initial = compareIds.length >= 2 ? compareIds : ["h100-sxm", "h200"];
  initial.forEach((id, index) => {
    const gpu = state.gpus.find((item) => item.id === id || item.aliases?.includes(id));
    if (gpu && compareSelects[index]) compareSelects[index].value = gpu.id;
  });
  initTco(tcoContext);
  updateKind();
  applyLanguage();
  document.body.dataset.ready = "true";
  if (sharedId) await loadShared(sharedId);
  if (compareIds.length >= 2) await compare(chosenGpus());
}

start();
