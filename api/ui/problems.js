// A rejected request in words a person uses: each field by its label on the form, each limit as a sentence.
// The service's messages are for programs ("Expected `int` >= 1"); the page says what to change instead.

// msgspec's words: "Expected `int` >= 1", "Expected `int | null`, got `float`", "Expected `str` of length <= 100".
const TYPE = "`(int|float)(?: \\| null)?`";
const LIMITS = [
  [new RegExp(`^Expected ${TYPE} >= (-?[\\d.e+]+)$`), "problem.atLeast"],
  [new RegExp(`^Expected ${TYPE} > (-?[\\d.e+]+)$`), "problem.above"],
  [new RegExp(`^Expected ${TYPE} <= (-?[\\d.e+]+)$`), "problem.atMost"],
  [new RegExp(`^Expected ${TYPE} < (-?[\\d.e+]+)$`), "problem.below"],
];

/**
 * One sentence for one `errors[]` item.
 * `label(field)` names a field as the form does (or null); `t` translates; `number` formats a figure.
 */
export function fieldMessage(item, { label, t, number }) {
  const message = String(item.message ?? "");
  const name = label(item.field) ?? t("problem.field");
  for (const [pattern, key] of LIMITS) {
    const match = pattern.exec(message);
    if (match) return t(key, { field: name, n: number(Number(match[2])) });
  }
  if (/^Expected `int(?: \| null)?`/.test(message)) return t("problem.whole", { field: name });
  if (/^Expected `float(?: \| null)?`/.test(message)) return t("problem.number", { field: name });
  if (/^Invalid enum value|^Expected `str` matching/.test(message)) return t("problem.choice", { field: name });
  const length = /^Expected `str` of length <= (\d+)$/.exec(message);
  if (length) return t("problem.tooLong", { field: name, n: number(Number(length[1])) });
  if (/^Expected `str`/.test(message)) return t("problem.text", { field: name });
  if (/^Expected `array`/.test(message)) return t("problem.list", { field: name });
  const missing = /^Object missing required field `(\w+)`$/.exec(message);
  if (missing) {
    const inner = label(`${item.field}.${missing[1]}`) ?? missing[1];
    return t("problem.missing", { field: inner });
  }
  // Any other type check: not the program's words either.
  if (/^Expected `/.test(message)) return t("problem.invalid", { field: name });
  // The service's own sentences (an unknown model, a configuration that cannot be built) read as they are.
  return t("problem.other", { field: name, message });
}
