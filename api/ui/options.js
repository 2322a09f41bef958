// The ranked options as figures and rows: pure functions (no DOM, no page state), so `node --test` runs them.

import { locale } from "./i18n.js";

/** The option's throughput range and its unit's words (`unit` names a unit key), or null. */
export function throughputOf(option, kind, unit) {
  const performance = option.performance;
  if (!performance) return null;
  if (kind === "image_generation") {
    return performance.images_per_hour ? { range: performance.images_per_hour, unit: unit("unit.imagesPerHour") } : null;
  }
  return performance.tokens_per_second ? { range: performance.tokens_per_second, unit: unit("unit.tokensPerSecond") } : null;
}

export const KIND_COST = {
  inference: ["per_million_tokens", "col.perMillion"],
  training: ["per_run", "col.perRun"],
  fine_tuning: ["per_run", "col.perRun"],
  image_generation: ["per_1000_images", "col.per1000"],
};

/** What the asked load costs per unit when it is below what the configuration can do (idle capacity is paid too). */
export function atLoadCost(option, workload) {
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
  throughput: (option, kind) => throughputOf(option, kind, String)?.range.expected ?? null,
  hourly: (option) => option.cost?.hourly ?? null,
  monthly: (option) => option.cost?.monthly ?? null,
  unit: (option, kind) => option.cost?.[(KIND_COST[kind] ?? KIND_COST.inference)[0]] ?? null,
  atLoad: (option, kind, workload) => atLoadCost(option, workload),
  priceAge: (option) => option.offer?.age_days ?? null,
};

/** The options in the order of `sort` ({key, descending}), ties and missing figures by rank. */
export function sortedOptions(options, kind, workload, sort, lang) {
  const { key, descending } = sort;
  const value = SORTS[key] ?? SORTS.rank;
  const order = (a, b) => {
    const x = value(a, kind, workload);
    const y = value(b, kind, workload);
    if (x === null || y === null) return x === null ? (y === null ? a.rank - b.rank : 1) : -1;
    const compared = typeof x === "string" ? x.localeCompare(y, locale(lang)) : x - y;
    return (descending ? -compared : compared) || a.rank - b.rank;
  };
  return [...options].sort(order);
}

/** The columns of the ranked table: [id, heading key, sort key or null]. */
export function optionColumns(kind, withLoad) {
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
