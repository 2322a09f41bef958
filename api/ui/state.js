// The page's state, its constants and the translation and formatting bound to the page's language.

import { formatMoney, formatNumber, namedKey } from "./format.js";
import { translate } from "./i18n.js";

export const REC_ID = /^rec_[0-9a-f]{24}$/;
export const KINDS = ["inference", "training", "fine_tuning", "image_generation"];
export const PRECISIONS = {
  inference: ["", "bf16", "fp16", "fp8", "int8", "int4", "fp4", "fp32"],
  training: ["bf16", "fp16", "fp8", "fp32"],
  fine_tuning: ["bf16", "fp16", "fp8", "fp32"],
  image_generation: ["fp16", "bf16", "fp8", "int8", "fp32"],
};
export const DEFAULT_MODELS = {
  inference: "llama-3.1-70b",
  training: "llama-3.1-8b",
  fine_tuning: "llama-3.1-70b",
  image_generation: "sdxl",
};
// Training tokens are typed as a number and a unit: [value, unit] per kind.
export const TOKEN_DEFAULTS = { training: ["10", "1e9"], fine_tuning: ["100", "1e6"] };
export const TOKEN_UNITS = ["1e12", "1e9", "1e6", "1e3"];
export const REQUEST_TIMEOUT_MS = 30000;
// The model choice that opens the fields of a model that is not in the catalog.
export const CUSTOM = "__custom__";
export const CUSTOM_NUMBERS = ["params_b", "active_params_b", "layers", "hidden_size", "attention_heads", "kv_heads",
  "head_dim", "intermediate_size", "vocab_size", "max_context", "kv_lora_rank", "qk_rope_head_dim", "routed_experts",
  "experts_per_token", "shared_experts"];
export const ECOSYSTEMS = { cuda: "CUDA", rocm: "ROCm", gaudi: "Gaudi", cann: "CANN" };

export const state = {
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

export const t = (key, values) => translate(state.lang, key, values);
export const number = (value, digits) => formatNumber(state.lang, value, digits, t("spec.notAvailable"));
export const money = (value, currency) => formatMoney(state.lang, value, currency, t("spec.notAvailable"));
export const named = (prefix, key) => namedKey(t, prefix, key);
export const targetName = (target) => named("target", target);
export const gpuName = (id) => state.gpuNames.get(id) ?? id;
