// DOM helpers shared by the page's modules: element builders and selectors.

// An XML namespace name (what createElementNS needs), not an address anything is loaded from.
export const SVG_NS = "http://www.w3.org/2000/svg";

export const $ = (selector, root = document) => root.querySelector(selector);
export const $$ = (selector, root = document) => Array.from(root.querySelectorAll(selector));

/** An element with attributes (`class`, `text`, others as attributes) and children (nodes or strings). */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  setAttributes(element, attrs);
  element.append(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
  return element;
}

/** An SVG element, likewise. */
export function s(tag, attrs = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  setAttributes(element, attrs);
  element.append(...children.flat().filter((child) => child !== null && child !== undefined));
  return element;
}

function setAttributes(element, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") element.textContent = value;
    else if (name === "class") element.setAttribute("class", value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
}

/** The pixel width an SVG chart is drawn at: its box's, so 12px text stays 12px on a phone. */
export function chartWidth(svg, fallback = 720) {
  const width = Math.round(svg.parentElement?.getBoundingClientRect().width ?? 0);
  return width > 0 ? Math.min(Math.max(width, 280), 960) : fallback;
}

/** Scroll an element into view unless it is already on the screen (focus stays where it is). */
export function reveal(element) {
  const box = element.getBoundingClientRect();
  if (box.top >= 0 && box.top < window.innerHeight * 0.6) return;
  const smooth = window.matchMedia("(prefers-reduced-motion: no-preference)").matches;
  element.scrollIntoView({ block: "start", behavior: smooth ? "smooth" : "auto" });
}

/** Offer text as a file download (no request leaves the page). */
export function download(name, text, type = "text/csv;charset=utf-8") {
  // A byte-order mark, so spreadsheet programs read the Chinese in the file as UTF-8.
  const blob = new Blob(["\ufeff", text], { type });
  const url = URL.createObjectURL(blob);
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Rows as CSV (RFC 4180): fields with commas, quotes or line breaks are quoted. */
export function csv(rows) {
  const field = (value) => {
    const text = value === null || value === undefined ? "" : String(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  };
  return rows.map((row) => row.map(field).join(",")).join("\r\n") + "\r\n";
}

/** Mark a region as loading (or done) for assistive technology. */
export function setBusy(region, busy) {
  region.setAttribute("aria-busy", String(busy));
}
