// The workload form: its choices per kind, the request body it describes, and a stored request put back into it.

import { $, $$, h } from "./dom.js";
import { RequestError } from "./request.js";
import { CUSTOM, CUSTOM_NUMBERS, KINDS, PRECISIONS, TOKEN_DEFAULTS, TOKEN_UNITS, number, state, t } from "./state.js";

export const form = () => $("#workload-form");
export const field = (name) => form().elements.namedItem(name);

export function renderPrecisionOptions() {
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

export function renderModelOptions() {
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

export function updateKind() {
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
export function updateCustomModel() {
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
export function buildRequest() {
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
export function fillForm(recommendation) {
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
