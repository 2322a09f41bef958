// The alert region: a problem the service answered (with each field's message next to its control), or a network
// failure.

import { $, $$, h } from "./dom.js";
import { fieldMessage } from "./problems.js";
import { number, state, t } from "./state.js";

export function clearAlert() {
  state.error = null;
  $("#alert").replaceChildren();
  for (const element of $$("[aria-invalid]")) element.removeAttribute("aria-invalid");
}

export function showError(error, titleKey = "error.title") {
  state.error = { error, titleKey };
  renderError();
}

export function renderError() {
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
