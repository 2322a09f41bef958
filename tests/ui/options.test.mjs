// The ranked options as figures and rows: run by `node --test`.

import assert from "node:assert/strict";
import { test } from "node:test";

import { csv } from "../../api/ui/dom.js";
import { MESSAGES } from "../../api/ui/i18n.js";
import { atLoadCost, optionColumns, sortedOptions, throughputOf } from "../../api/ui/options.js";

const option = (rank, hourly, tokens) => ({
  rank,
  gpu: { name: `GPU ${rank}` },
  cost: hourly === null ? null : { hourly, monthly: hourly * 730 },
  performance: tokens === null ? null : { tokens_per_second: { expected: tokens, low: tokens / 2, high: tokens } },
});

test("a load below capacity costs more per token than the capacity figure", () => {
  const workload = { kind: "inference", requests_per_second: 1, output_tokens: 100 };
  // 100 tokens/s asked of 1,000: the hour's $36 buys 360,000 tokens.
  assert.equal(atLoadCost(option(1, 36, 1000), workload), 100);
  assert.equal(atLoadCost(option(1, 36, 100), workload), null, "at capacity the unit cost already says it");
  assert.equal(atLoadCost(option(1, 36, 1000), { kind: "inference" }), null, "no rate asked");
});

test("options sort by a column, missing figures last, ties by rank", () => {
  const options = [option(1, 10, 5), option(2, null, 5), option(3, 30, 5), option(4, 10, 5)];
  const ranks = (sort) => sortedOptions(options, "inference", {}, sort, "en").map((item) => item.rank);
  assert.deepEqual(ranks({ key: "hourly", descending: false }), [1, 4, 3, 2]);
  assert.deepEqual(ranks({ key: "hourly", descending: true }), [3, 1, 4, 2]);
  assert.deepEqual(ranks({ key: "unknown", descending: false }), [1, 2, 3, 4]);
});

test("the at-load column is there only when some option has a figure for it", () => {
  const ids = (withLoad) => optionColumns("image_generation", withLoad).map(([id]) => id);
  assert.ok(!ids(false).includes("atLoad"));
  assert.ok(ids(true).includes("atLoad"));
  assert.equal(optionColumns("training", false).find(([id]) => id === "unit")[1], "col.perRun");
});

test("throughput comes with its unit in the page's words", () => {
  const unit = (key) => MESSAGES.zh[key];
  assert.deepEqual(throughputOf(option(1, 1, 50), "inference", unit).unit, "token/秒");
  assert.equal(throughputOf(option(1, 1, null), "inference", unit), null);
});

test("CSV quotes fields with commas, quotes and line breaks", () => {
  assert.equal(csv([["a", "b,c", 'say "hi"', null], [1, "x\ny"]]), 'a,"b,c","say ""hi""",\r\n1,"x\ny"\r\n');
});

test("every label the page has in English it has in Chinese, and no other", () => {
  assert.deepEqual(Object.keys(MESSAGES.zh).sort(), Object.keys(MESSAGES.en).sort());
});
