// The address (share links, the open view, the language) and the tabs.

import { $$ } from "./dom.js";
import { state } from "./state.js";

export function updateUrl() {
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

export function shareUrl(id) {
  return `${location.origin}/ui?rec=${encodeURIComponent(id)}`;
}

export function selectView(view, { focus = false, keepUrl = false } = {}) {
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

export function onTabKey(event) {
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
