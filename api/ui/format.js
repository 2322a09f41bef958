// Figures as the page writes them: pure functions of a language (no DOM), so `node --test` runs them.

import { locale } from "./i18n.js";

/** A figure with as many decimals as its size deserves (or `digits`); `missing` when there is none. */
export function formatNumber(lang, value, digits, missing) {
  if (value === null || value === undefined || !Number.isFinite(value)) return missing;
  const fraction = digits ?? (Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
  return new Intl.NumberFormat(locale(lang), { maximumFractionDigits: fraction }).format(value);
}

/** An amount of money; `missing` when there is none. */
export function formatMoney(lang, value, currency, missing) {
  if (value === null || value === undefined || !Number.isFinite(value)) return missing;
  const fraction = Math.abs(value) >= 1000 ? 0 : 2;
  return new Intl.NumberFormat(locale(lang), {
    style: "currency",
    currency,
    // "$" and "¥" in both languages, as the service's own sentences write them (not "US$").
    currencyDisplay: "narrowSymbol",
    minimumFractionDigits: fraction,
    maximumFractionDigits: fraction,
  }).format(value);
}

/** Axis figures: "$480K" rather than a cut-off "$478,625". */
export function formatCompactMoney(lang, value, currency) {
  return new Intl.NumberFormat(locale(lang), {
    style: "currency",
    currency,
    currencyDisplay: "narrowSymbol",
    notation: "compact",
    maximumFractionDigits: 1,
  }).format(value);
}

export function shortGpuName(name) {
  return name
    .replace(/\s*\([^)]*\)/g, "")
    .replace(/^(NVIDIA|AMD Instinct|AMD Radeon|AMD|Intel|Huawei)\s+/, "")
    .trim();
}

/** A name for a key the service sends (a target, an assumption), in the page's words when it has them. */
export function namedKey(translate, prefix, key) {
  const text = translate(`${prefix}.${key}`);
  return text === `${prefix}.${key}` ? key.replaceAll("_", " ") : text;
}
