// The portal page: a workload form posted to /v1/recommendations, the ranked answer as a table and a chart,
// share links (/ui?rec=<id>) and a GPU comparison. Plain DOM, no dependencies; all requests go to this origin.

import { drawChart } from "./chart.js";
import { $, $$, chartWidth, csv, download, h, reveal as bringIntoView } from "./dom.js";
import { LANGS, locale, translate } from "./i18n.js";
import { fieldMessage } from "./problems.js";
import { initTco, renderTco } from "./tco.js";
const REC_ID = /^rec_[0-9a-f]{24}$/;
const KINDS = ["inference", "training", "fine_tuning", "image_generation"];
const PRECISIONS = {
  inference: ["", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "fp32"],
  training: ["bf16", "fp16", "fp8", "fp32"],
  fine_tuning: ["bf16", "fp16", "fp8", "fp32"],
  image_generation: ["fp16", "bf16", "fp8", "int8", "fp32"],
};
const DEFAULT_MODELS = {
  inference: "llama-3.1-70b",
  training: "llama-3.1-8b",
  fine_tuning: "llama-3.1-70b",
  image_generation: "sdxl",
};
// Training tokens are typed as a number and a unit: [value, unit] per kind.
const TOKEN_DEFAULTS = { training: ["10", "1e9"], fine_tuning: ["100", "1e6"] };
const TOKEN_UNITS = ["1e12", "1e9", "1e6", "1e3"];
const REQUEST_TIMEOUT_MS = 30000;
// The model choice that opens the fields of a model that is not in the catalog.
const CUSTOM = "__custom__";
const CUSTOM_NUMBERS = ["params_b", "active_params_b", "layers", "hidden_size", "attention_heads", "kv_heads",
  "head_dim", "intermediate_size", "vocab_size", "max_context", "kv_lora_rank", "qk_rope_head_dim", "routed_experts",
  "experts_per_token", "shared_experts"];
const ECOSYSTEMS = { cuda: "CUDA", rocm: "ROCm", gaudi: "Gaudi", cann: "CANN" };

const state = {
  lang: "en",
  models: [],
  gpus: [],
  gpuNames: new Map(),
  kind: "inference",
  modelChoice: { ...DEFAULT_MODELS },
  // Each kind keeps its own precision: an image model's FP16 must not size a language model at FP16.
  precisionChoice: {},
  sort: { key: "rank", descending: false },
  chosen: [],
  recommendation: null,
  lastBody: null,
  recController: null,
  recLoading: null,
  comparison: null,
  compareIds: null,
  compareController: null,
  compareLoading: false,
  error: null,
  view: "size",
};

// ---------------------------------------------------------------------------------------------- small helpers

const t = (key, values) => translate(state.lang, key, values);

function number(value, digits) {
  if (value === null || value === undefined || !Number.isFinite(value)) return t("spec.notAvailable");
  const fraction = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return new Intl.NumberFormat(locale(state.lang), { maximumFractionDigits: fraction }).format(value);
}

function money(value, currency) {
  if (value === null || value === undefined || !Number.isFinite(value)) return t("spec.notAvailable");
  const fraction = Math.abs(value) >= 1000 ? 0 : 2;
  return new Intl.NumberFormat(locale(state.lang), {
    style: "currency",
    currency,
    // "$" and "¥" in both languages, as the service's own sentences write them (not "US$").
    currencyDisplay: "narrowSymbol",
    minimumFractionDigits: fraction,
    maximumFractionDigits: fraction,
  }).format(value);
}

function shortGpuName(name) {
  return name
    .replace(/\s*\([^)]*\)/g, "")
    .replace(/^(NVIDIA|AMD Instinct|AMD Radeon|AMD|Intel|Huawei)\s+/, "")
    .trim();
}

/** A name for a key the service sends (a target, an assumption), in the page's words when it has them. */
function named(prefix, key) {
  const text = t(`${prefix}.${key}`);
  return text === `${prefix}.${key}` ? key.replaceAll("_", " ") : text;
}

const targetName = (target) => named("target", target);

function gpuName(id) {
  return state.gpuNames.get(id) ?? id;
}

// ---------------------------------------------------------------------------------------------- requests

class RequestError extends Error {
  constructor(message, { status = 0, problem = null, requestId = null, network = false } = {}) {
    super(message);
    this.status = status;
    this.problem = problem;
    this.requestId = requestId;
    this.network = network;
  }
}

/** A JSON request to this service; problems (RFC 9457) and network failures become RequestErrors. */
async function api(path, { method = "GET", body, signal } = {}) {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  signal?.addEventListener("abort", () => timeout.abort(), { once: true });
  const headers = { Accept: "application/json, application/problem+json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: timeout.signal,
      credentials: "same-origin",
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new RequestError(t("error.network"), { network: true });
  } finally {
    clearTimeout(timer);
  }
  const type = response.headers.get("content-type") ?? "";
  let data = null;
  if (type.includes("json")) {
    try {
      data = await response.json();
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const problem = data && typeof data === "object" ? data : null;
    throw new RequestError(problem?.detail ?? t("error.unexpected", { status: response.status }), {
      status: response.status,
      problem,
      requestId: response.headers.get("x-request-id"),
    });
  }
  return data;
}

// ---------------------------------------------------------------------------------------------- alert region

function clearAlert() {
  state.error = null;
  $("#alert").replaceChildren();
  for (const element of $$("[aria-invalid]")) element.removeAttribute("aria-invalid");
}

function showError(error, titleKey = "error.title") {
  state.error = { error, titleKey };
  renderError();
}

function renderError() {
  const alert = $("#alert");
  if (!state.error) {
    alert.replaceChildren();
    return;
  }
  const { error, titleKey } = state.error;
  const problem = error.problem;
  const parts = [];
  if (error.network) {
    parts.push(h("p", { class: "alert-title", text: t("error.network") }));
  }
  const fieldErrors = Array.isArray(problem?.errors) ? problem.errors : [];
  if (!error.network) {
    parts.push(h("p", { class: "alert-title", text: t(titleKey) }));
    // With field errors the detail only repeats them in a program's words; each is said below instead.
    parts.push(h("p", { class: "alert-detail", text: fieldErrors.length ? t("problem.check") : error.message }));
  }
  if (fieldErrors.length) {
    const context = { label: fieldLabel, t, number: (value) => number(value, 6) };
    parts.push(
      h(
        "ul",
        { class: "alert-errors" },
        fieldErrors.map((item) => h("li", { "data-field": item.field, text: fieldMessage(item, context) })),
      ),
    );
  }
  if (Array.isArray(problem?.suggestions) && problem.suggestions.length) {
    parts.push(h("p", { text: t("error.suggestions", { names: problem.suggestions.join(", ") }) }));
  }
  if (error.requestId) {
    parts.push(h("p", { class: "alert-id", text: t("error.requestId", { id: error.requestId }) }));
  }
  alert.replaceChildren(...parts);
  for (const item of fieldErrors) markInvalid(item.field);
}

function markInvalid(field) {
  const target = $(`form [data-field="${CSS.escape(field)}"]`);
  if (target && !target.closest("[hidden]")) target.setAttribute("aria-invalid", "true");
}

/** A request field as the form names it: the text of the label of the control that sets it. */
function fieldLabel(field) {
  const control = $(`form [data-field="${CSS.escape(field)}"]`);
  if (!control) return null;
  const own = control.labels?.[0] ?? (control.id ? $(`label[for="${CSS.escape(control.id)}"]`) : null);
  const text = own?.textContent ?? control.querySelector("legend")?.textContent ?? null;
  return text ? text.trim() : null;
}

// ---------------------------------------------------------------------------------------------- language

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

// ---------------------------------------------------------------------------------------------- URL

function updateUrl() {
  const params = new URLSearchParams();
  if (state.view === "compare" && state.compareIds) {
    params.set("compare", state.compareIds.join(","));
  } else if (state.view === "size" && state.recommendation) {
    params.set("rec", state.recommendation.id);
  } else if (state.view !== "size") {
    params.set("view", state.view);
  }
  // A recommendation carries its language; elsewhere the choice is kept in the address.
  if (!params.has("rec") && state.lang !== "en") params.set("lang", state.lang);
  // Commas between GPU ids read better unescaped (and are allowed in a query).
  const query = params.toString().replaceAll("%2C", ",");
  history.replaceState(null, "", query ? `/ui?${query}` : "/ui");
}

function shareUrl(id) {
  return `${location.origin}/ui?rec=${encodeURIComponent(id)}`;
}

// ---------------------------------------------------------------------------------------------- tabs

function selectView(view, { focus = false, keepUrl = false } = {}) {
  state.view = view;
  for (const tab of $$('[role="tab"]')) {
    const selected = tab.getAttribute("aria-controls") === `panel-${view}`;
    tab.setAttribute("aria-selected", String(selected));
    tab.tabIndex = selected ? 0 : -1;
    if (selected && focus) tab.focus();
  }
  for (const panel of $$('[role="tabpanel"]')) panel.hidden = panel.id !== `panel-${view}`;
  if (!keepUrl) updateUrl();
}

function onTabKey(event) {
  const tabs = $$('[role="tab"]');
  const index = tabs.indexOf(event.currentTarget);
  let next = null;
  if (event.key === "ArrowRight") next = tabs[(index + 1) % tabs.length];
  else if (event.key === "ArrowLeft") next = tabs[(index - 1 + tabs.length) % tabs.length];
  else if (event.key === "Home") next = tabs[0];
  else if (event.key === "End") next = tabs[tabs.length - 1];
  if (!next) return;
  event.preventDefault();
  selectView(next.getAttribute("aria-controls").replace("panel-", ""), { focus: true });
}

// ---------------------------------------------------------------------------------------------- the form

const form = () => $("#workload-form");
const field = (name) => form().elements.namedItem(name);

function renderPrecisionOptions() {
  const select = $("#f-precision");
  const choices = PRECISIONS[state.kind];
  const wanted = state.precisionChoice[state.kind];
  select.replaceChildren(
    ...choices.map((value) =>
      h("option", { value, text: value ? value.toUpperCase() : t("form.precision.auto") }),
    ),
  );
  select.value = choices.includes(wanted) ? wanted : choices[0];
}

function modelLabel(model) {
  if (model.kind !== "llm") return model.name;
  const size = `${number(model.params_b, model.params_b >= 100 ? 0 : 1)}B`;
  return model.moe ? `${model.name} · ${size} MoE` : `${model.name} · ${size}`;
}

function renderModelOptions() {
  const select = $("#f-model");
  const wanted = state.modelChoice[state.kind];
  const family = state.kind === "image_generation" ? "diffusion" : "llm";
  const models = state.models.filter((model) => model.kind === family);
  const group = h("optgroup", { label: t(family === "llm" ? "form.model.llm" : "form.model.diffusion") });
  group.append(...models.map((model) => h("option", { value: model.id, text: modelLabel(model) })));
  const known = wanted === CUSTOM || models.some((model) => model.id === wanted);
  const extra = wanted && !known ? h("option", { value: wanted, text: wanted }) : null;
  // Only language models can be described by their architecture.
  const own = family === "llm" ? h("option", { value: CUSTOM, text: t("form.model.custom") }) : null;
  select.replaceChildren(...[extra, group, own].filter(Boolean));
  if (wanted) select.value = wanted;
  if (!select.value && models.length) select.value = models[0].id;
}

function updateKind() {
  const kind = field("kind").value;
  const previous = state.kind;
  state.kind = kind;
  const method = field("method").value;
  for (const element of $$("#workload-form [data-kinds]")) {
    const shown = element.dataset.kinds.split(" ").includes(kind);
    element.hidden = !shown;
    setDisabled(element, !shown);
  }
  for (const element of $$("#workload-form [data-methods]")) {
    const shown = !element.closest("[hidden]") && element.dataset.methods.split(" ").includes(method);
    element.hidden = !shown;
    setDisabled(element, !shown);
  }
  const tokens = TOKEN_DEFAULTS[kind];
  if (tokens && previous !== kind && !field("train_tokens").dataset.edited) {
    // Pre-training and fine-tuning runs differ in size by orders of magnitude: each kind starts from its own.
    field("train_tokens").value = tokens[0];
    field("token_unit").value = tokens[1];
  }
  renderPrecisionOptions();
  renderModelOptions();
  updateCustomModel();
}

/** The custom model's fields: shown (and sent) only while "your own model" is chosen. */
function updateCustomModel() {
  const section = $("#custom-model");
  const shown = field("model").value === CUSTOM && state.kind !== "image_generation";
  section.hidden = !shown;
  setDisabled(section, !shown);
  const attention = field("cm_attention").value;
  for (const element of $$("[data-attention]", section)) {
    const on = shown && element.dataset.attention.split(" ").includes(attention);
    element.hidden = !on;
    setDisabled(element, !on);
  }
  // A pasted config.json says everything the figures would: they are neither needed nor sent.
  if (shown && field("cm_config").value.trim() !== "") {
    for (const control of $$("input, select", section)) if (control !== field("cm_name")) control.disabled = true;
  }
}

/** The pasted config.json as an object; a RequestError in the page's words when it is not one. */
function pastedConfig() {
  const text = field("cm_config").value.trim();
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
  } catch {
    // fall through to the message below
  }
  throw new RequestError(t("custom.configInvalid"));
}

function customModel() {
  const name = field("cm_name").value.trim() || "custom model";
  const config = pastedConfig();
  if (config) return { name, hf_config: config };
  const model = { name, attention: field("cm_attention").value };
  for (const name of CUSTOM_NUMBERS) {
    const value = numberOf(`cm_${name}`);
    if (value !== undefined) model[name] = value;
  }
  return model;
}

function setDisabled(element, disabled) {
  if (element instanceof HTMLFieldSetElement) element.disabled = disabled;
  else for (const control of $$("input, select, textarea", element)) control.disabled = disabled;
}

const numberOf = (name) => {
  const input = field(name);
  if (!input || input.disabled || input.value.trim() === "") return undefined;
  const value = Number(input.value);
  return Number.isFinite(value) ? value : undefined;
};

function checked(name) {
  return $$(`#workload-form input[name="${name}"]:checked`).map((input) => input.value);
}

/** The request body the form describes (empty fields left out so the service's defaults apply). */
function buildRequest() {
  const kind = field("kind").value;
  const workload = { kind };
  if (field("model").value === CUSTOM && kind !== "image_generation") workload.custom_model = customModel();
  else workload.model = field("model").value;
  const precision = field("precision").value;
  if (precision) workload.precision = precision;
  const put = (name, value = numberOf(name)) => {
    if (value !== undefined) workload[name] = value;
  };
  if (kind === "inference") {
    const kv = field("kv_cache_precision").value;
    if (kv) workload.kv_cache_precision = kv;
    for (const name of ["concurrency", "requests_per_second", "input_tokens", "output_tokens"]) put(name);
    for (const name of ["max_ttft_ms", "max_tpot_ms"]) put(name);
    workload.use_case = field("use_case").value;
  } else if (kind === "training" || kind === "fine_tuning") {
    if (kind === "fine_tuning") {
      workload.method = field("method").value;
      if (workload.method !== "full") put("lora_rank");
    }
    const tokens = numberOf("train_tokens");
    if (tokens !== undefined) workload.train_tokens = Math.round(tokens * Number(field("token_unit").value));
    put("sequence_length");
    workload.optimizer = field("optimizer").value;
    put(kind === "training" ? "target_days" : "target_hours");
  } else {
    for (const name of ["images_per_hour", "width", "height", "steps"]) put(name);
  }
  const constraints = {};
  const vendors = checked("vendors");
  if (vendors.length) constraints.vendors = vendors;
  const pricing = checked("pricing");
  if (pricing.length) constraints.pricing = pricing;
  const budget = numberOf("max_usd_per_hour");
  if (budget !== undefined) constraints.max_usd_per_hour = budget;
  const maxGpus = numberOf("max_gpus");
  if (maxGpus !== undefined) constraints.max_gpus = maxGpus;
  if (field("single_node").checked) constraints.single_node = true;
  const body = {
    workload,
    objective: checked("objective")[0] ?? "balanced",
    currency: checked("currency")[0] ?? "USD",
    lang: state.lang,
  };
  if (Object.keys(constraints).length) body.constraints = constraints;
  const limit = numberOf("limit");
  if (limit !== undefined) body.limit = limit;
  return body;
}

function setValue(name, value) {
  const input = field(name);
  if (input && value !== undefined) input.value = value === null ? "" : String(value);
}

/** Put what a stored recommendation says about its request back into the form. */
function fillForm(recommendation) {
  const workload = recommendation.workload ?? {};
  if (KINDS.includes(workload.kind)) field("kind").value = workload.kind;
  if (workload.model) state.modelChoice[workload.kind] = workload.model;
  if (workload.custom_model) {
    state.modelChoice[workload.kind] = CUSTOM;
    const custom = workload.custom_model;
    setValue("cm_name", custom.name ?? "");
    if (custom.attention) field("cm_attention").value = custom.attention;
    for (const name of CUSTOM_NUMBERS) setValue(`cm_${name}`, custom[name] ?? null);
  }
  if (workload.method) field("method").value = workload.method;
  if (workload.use_case) field("use_case").value = workload.use_case;
  updateKind();
  if (workload.precision && PRECISIONS[state.kind].includes(workload.precision)) {
    state.precisionChoice[state.kind] = workload.precision;
    field("precision").value = workload.precision;
  }
  const names = [
    "kv_cache_precision", "concurrency", "requests_per_second", "input_tokens", "output_tokens", "max_ttft_ms",
    "max_tpot_ms", "lora_rank", "sequence_length", "optimizer", "target_days", "target_hours", "images_per_hour",
    "width", "height", "steps",
  ];
  for (const name of names) if (name in workload) setValue(name, workload[name]);
  if (typeof workload.train_tokens === "number") {
    const unit = TOKEN_UNITS.find((candidate) => workload.train_tokens >= Number(candidate)) ?? "1e3";
    field("token_unit").value = unit;
    field("train_tokens").value = String(Number((workload.train_tokens / Number(unit)).toPrecision(6)));
    field("train_tokens").dataset.edited = "true";
  }
  const constraints = recommendation.constraints ?? {};
  for (const input of $$('#workload-form input[name="vendors"]')) {
    input.checked = (constraints.vendors ?? []).includes(input.value);
  }
  if (Array.isArray(constraints.pricing)) {
    for (const input of $$('#workload-form input[name="pricing"]')) {
      input.checked = constraints.pricing.includes(input.value);
    }
  }
  setValue("max_usd_per_hour", constraints.max_usd_per_hour ?? null);
  if (constraints.max_gpus) setValue("max_gpus", constraints.max_gpus);
  field("single_node").checked = Boolean(constraints.single_node);
  for (const input of $$('#workload-form input[name="objective"]')) input.checked = input.value === recommendation.objective;
  for (const input of $$('#workload-form input[name="currency"]')) input.checked = input.value === recommendation.currency;
  const shown = recommendation.options?.length ?? 0;
  if (shown > Number(field("limit").value)) setValue("limit", shown);
  updateKind();
}

// ---------------------------------------------------------------------------------------------- recommendations

function setBusy(region, busy) {
  region.setAttribute("aria-busy", String(busy));
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

/** Say what is being loaded (or, with null, show what there is). */
function setLoading(key) {
  state.recLoading = key;
  setBusy($("#results"), Boolean(key));
  renderRecommendation();
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

function throughputOf(option, kind) {
  const performance = option.performance;
  if (!performance) return null;
  if (kind === "image_generation") {
    return performance.images_per_hour ? { range: performance.images_per_hour, unit: t("unit.imagesPerHour") } : null;
  }
  return performance.tokens_per_second ? { range: performance.tokens_per_second, unit: t("unit.tokensPerSecond") } : null;
}

const KIND_COST = {
  inference: ["per_million_tokens", "col.perMillion"],
  training: ["per_run", "col.perRun"],
  fine_tuning: ["per_run", "col.perRun"],
  image_generation: ["per_1000_images", "col.per1000"],
};

function renderRecommendation() {
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

/** What the asked load costs per unit when it is below what the configuration can do (idle capacity is paid too). */
function atLoadCost(option, workload) {
  const cost = option.cost;
  const performance = option.performance;
  if (!cost || !performance) return null;
  if (workload.kind === "inference" && workload.requests_per_second && performance.tokens_per_second) {
    const capacity = performance.tokens_per_second.expected;
    const asked = Math.min(capacity, workload.requests_per_second * (workload.output_tokens ?? 256));
    if (asked > 0 && asked < capacity * 0.99) return (cost.hourly * 1e6) / (asked * 3600);
  }
  if (workload.kind === "image_generation" && workload.images_per_hour && performance.images_per_hour) {
    const capacity = performance.images_per_hour.expected;
    const asked = Math.min(capacity, workload.images_per_hour);
    if (asked > 0 && asked < capacity * 0.99) return (cost.hourly * 1000) / asked;
  }
  return null;
}

// Sortable columns: how each orders the options (missing figures last).
const SORTS = {
  rank: (option) => option.rank,
  gpu: (option) => option.gpu.name,
  throughput: (option, kind) => throughputOf(option, kind)?.range.expected ?? null,
  hourly: (option) => option.cost?.hourly ?? null,
  monthly: (option) => option.cost?.monthly ?? null,
  unit: (option, kind) => option.cost?.[(KIND_COST[kind] ?? KIND_COST.inference)[0]] ?? null,
  atLoad: (option, kind, workload) => atLoadCost(option, workload),
  priceAge: (option) => option.offer?.age_days ?? null,
};

function sortedOptions(options, kind, workload) {
  const { key, descending } = state.sort;
  const value = SORTS[key] ?? SORTS.rank;
  const order = (a, b) => {
    const x = value(a, kind, workload);
    const y = value(b, kind, workload);
    if (x === null || y === null) return x === null ? (y === null ? a.rank - b.rank : 1) : -1;
    const compared = typeof x === "string" ? x.localeCompare(y, locale(state.lang)) : x - y;
    return (descending ? -compared : compared) || a.rank - b.rank;
  };
  return [...options].sort(order);
}

function sortBy(key) {
  state.sort = state.sort.key === key ? { key, descending: !state.sort.descending } : { key, descending: false };
  renderRecommendation();
  $(`#options thead button[data-sort="${key}"]`)?.focus();
}

/** The columns of the ranked table: [id, heading key, sort key or null]. */
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

function optionColumns(kind, withLoad) {
  const [, costLabel] = KIND_COST[kind] ?? KIND_COST.inference;
  return [
    ["rank", "col.rank", "rank"],
    ["gpu", "col.gpu", "gpu"],
    ["config", "col.config", null],
    ["fits", "col.fits", null],
    ["throughput", "col.throughput", "throughput"],
    ["hourly", "col.hourly", "hourly"],
    ["monthly", "col.monthly", "monthly"],
    ["unit", costLabel, "unit"],
    ...(withLoad ? [["atLoad", kind === "image_generation" ? "col.atLoadImages" : "col.atLoadTokens", "atLoad"]] : []),
    ["pricing", "col.pricing", null],
    ["priceAge", "col.priceAge", "priceAge"],
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
  const rows = sortedOptions(options, kind, workload).flatMap((option) => {
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

function exportOptions() {
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

function exportExcluded() {
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

async function copyLink() {
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

// ---------------------------------------------------------------------------------------------- comparison

function renderCompareOptions() {
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

function chosenGpus() {
  return [...new Set($$("#compare-form select").map((select) => select.value).filter(Boolean))];
}

async function compare(ids) {
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

function renderComparison() {
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

// ---------------------------------------------------------------------------------------------- start

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

// The chart's module, given the page's translation and formatting.
const chartContext = {
  t: (key, values) => t(key, values),
  money: (value, currency) => money(value, currency),
  number: (value, digits) => number(value, digits),
  throughputOf: (option, kind) => throughputOf(option, kind),
  shortGpuName: (name) => shortGpuName(name),
};

// The rent-or-buy tab: its own module, given what it needs from the page.
const tcoContext = {
  t: (key, values) => t(key, values),
  lang: () => state.lang,
  money: (value, currency) => money(value, currency),
  // Axis figures: "$480K" rather than a cut-off "$478,625".
  compactMoney: (value, currency) =>
    new Intl.NumberFormat(locale(state.lang), {
      style: "currency",
      currency,
      currencyDisplay: "narrowSymbol",
      notation: "compact",
      maximumFractionDigits: 1,
    }).format(value),
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
