// The portal's figures: run by `node --test` (tests/unit/test_portal_modules.py runs it from pytest).

import assert from "node:assert/strict";
import { test } from "node:test";

import { formatCompactMoney, formatMoney, formatNumber, namedKey, shortGpuName } from "../../api/ui/format.js";

test("figures get as many decimals as their size deserves", () => {
  assert.equal(formatNumber("en", 1234.567, undefined, "—"), "1,235");
  assert.equal(formatNumber("en", 12.345, undefined, "—"), "12.3");
  assert.equal(formatNumber("en", 1.2345, undefined, "—"), "1.23");
  assert.equal(formatNumber("en", 1.2345, 0, "—"), "1");
});

test("a missing figure is said, not shown as NaN", () => {
  for (const value of [null, undefined, Number.NaN, Infinity]) {
    assert.equal(formatNumber("en", value, undefined, "—"), "—");
    assert.equal(formatMoney("zh", value, "USD", "n/a"), "n/a");
  }
});

test("money in both currencies writes $ and ¥, whole above a thousand", () => {
  assert.equal(formatMoney("en", 12.5, "USD", "—"), "$12.50");
  assert.equal(formatMoney("en", 12345.6, "USD", "—"), "$12,346");
  assert.equal(formatMoney("zh", 12.5, "CNY", "—"), "¥12.50");
  assert.equal(formatCompactMoney("en", 478625, "USD"), "$478.6K");
});

test("GPU names lose the vendor and the bracketed detail", () => {
  assert.equal(shortGpuName("NVIDIA H100 SXM (80 GB)"), "H100 SXM");
  assert.equal(shortGpuName("AMD Instinct MI300X"), "MI300X");
  assert.equal(shortGpuName("Huawei Ascend 910B"), "Ascend 910B");
});

test("a key without the page's words reads as words", () => {
  const words = { "target.max_ttft_ms": "time to first token" };
  const translate = (key) => words[key] ?? key;
  assert.equal(namedKey(translate, "target", "max_ttft_ms"), "time to first token");
  assert.equal(namedKey(translate, "target", "max_tpot_ms"), "max tpot ms");
});
