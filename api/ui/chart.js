// The ranked options' chart: cost per hour against throughput, drawn as SVG at the size it is shown.

import { $, chartWidth, s } from "./dom.js";

/** A scale from data to pixels: linear from zero, or logarithmic when the values span more than 25x. */
function scale(values, [from, to]) {
  const low = Math.min(...values);
  const high = Math.max(...values);
  if (low > 0 && high / low > 25) {
    const lo = Math.floor(Math.log10(low));
    const hi = Math.ceil(Math.log10(high));
    const ticks = [];
    for (let exponent = lo; exponent <= hi; exponent += 1) {
      for (const step of hi - lo > 4 ? [1] : [1, 2, 5]) {
        const tick = step * 10 ** exponent;
        if (tick >= 10 ** lo && tick <= 10 ** hi) ticks.push(tick);
      }
    }
    const map = (value) => from + ((Math.log10(value) - lo) / (hi - lo || 1)) * (to - from);
    return { map, ticks, log: true };
  }
  const rough = (high * 1.1 || 1) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((candidate) => candidate >= rough);
  const top = Math.ceil((high * 1.05 || 1) / step) * step;
  const ticks = [];
  for (let tick = 0; tick <= top + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)));
  const map = (value) => from + (value / top) * (to - from);
  return { map, ticks, log: false };
}

/** Cost per hour against throughput, one labelled point per option; `page` gives translation and formatting. */
export function drawChart(options, kind, currency, page) {
  const { t, money, number, throughputOf, shortGpuName } = page;
  const svg = $("#chart");
  // Drawn at the pixel size it is shown at, so its text is as large on a phone as on a laptop.
  const width = chartWidth(svg);
  const height = width < 600 ? 320 : 380;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  const margin = { left: width < 600 ? 64 : 82, right: 20, top: 18, bottom: 62 };
  const unit = kind === "image_generation" ? t("unit.imagesPerHour") : t("unit.tokensPerSecond");
  const costUnit = t("unit.perHour", { currency });
  $("#chart-title").textContent = t("chart.title");
  $("#chart-desc").textContent = t("chart.desc");
  for (const child of Array.from(svg.children)) {
    if (child.id !== "chart-title" && child.id !== "chart-desc") child.remove();
  }
  const points = [];
  for (const option of options) {
    const throughput = throughputOf(option, kind);
    const cost = option.cost?.hourly;
    if (throughput && cost > 0 && throughput.range.expected > 0) {
      points.push({ option, x: cost, y: throughput.range.expected, throughput });
    }
  }
  const missing = options.length - points.length;
  $("#chart-note").textContent = missing ? t("chart.missing", { n: missing }) : "";
  $("#chart-figure").hidden = points.length === 0;
  if (!points.length) return;

  const x = scale(points.map((p) => p.x), [margin.left, width - margin.right]);
  const y = scale(points.map((p) => p.y), [height - margin.bottom, margin.top]);
  const grid = s("g", { class: "grid" });
  const axes = s("g", { class: "axes" });
  for (const tick of x.ticks) {
    const px = x.map(tick);
    grid.append(s("line", { x1: px, x2: px, y1: margin.top, y2: height - margin.bottom }));
    axes.append(s("text", { x: px, y: height - margin.bottom + 18, "text-anchor": "middle" }, number(tick)));
  }
  for (const tick of y.ticks) {
    const py = y.map(tick);
    grid.append(s("line", { x1: margin.left, x2: width - margin.right, y1: py, y2: py }));
    axes.append(s("text", { x: margin.left - 8, y: py + 4, "text-anchor": "end" }, number(tick)));
  }
  axes.append(
    s("line", { class: "axis", x1: margin.left, x2: width - margin.right, y1: height - margin.bottom, y2: height - margin.bottom }),
    s("line", { class: "axis", x1: margin.left, x2: margin.left, y1: margin.top, y2: height - margin.bottom }),
    s(
      "text",
      { class: "axis-title", x: (margin.left + width - margin.right) / 2, y: height - 14, "text-anchor": "middle" },
      t("chart.x", { unit: costUnit }) + (x.log ? ` · ${t("chart.log")}` : ""),
    ),
    s(
      "text",
      {
        class: "axis-title",
        x: -(margin.top + height - margin.bottom) / 2,
        y: 18,
        transform: "rotate(-90)",
        "text-anchor": "middle",
      },
      t("chart.y", { unit }) + (y.log ? ` · ${t("chart.log")}` : ""),
    ),
  );
  // Labels keep clear of every point and of each other.
  const placed = points.map((point) => ({ left: x.map(point.x) - 7, top: y.map(point.y) - 7, width: 14, height: 14 }));
  const marks = s("g", { class: "marks" });
  // Draw the best option last so it sits on top.
  for (const point of [...points].reverse()) {
    const px = x.map(point.x);
    const py = y.map(point.y);
    const label = `#${point.option.rank} ${shortGpuName(point.option.gpu.name)}`;
    const box = labelBox(label, px, py, placed, { left: margin.left, right: width - margin.right, top: margin.top, bottom: height - margin.bottom });
    placed.push(box);
    const description = t("chart.point", {
      rank: point.option.rank,
      gpu: point.option.gpu.name,
      cost: money(point.x, point.option.cost.currency ?? currency),
      throughput: `${number(point.y)} ${point.throughput.unit}`,
    });
    marks.append(
      s(
        "g",
        { class: point.option.rank === 1 ? "point best" : "point", "data-rank": point.option.rank },
        s("title", {}, description),
        box.top > py + 2 || box.top + box.height < py - 2
          ? s("line", {
              class: "leader",
              x1: px,
              y1: py,
              x2: box.anchor === "start" ? box.left : box.left + box.width,
              y2: box.top + box.height / 2,
            })
          : null,
        s("circle", { cx: px, cy: py, r: point.option.rank === 1 ? 7 : 5.5 }),
        s("text", { x: box.textX, y: box.textY, "text-anchor": box.anchor }, label),
      ),
    );
  }
  svg.append(grid, axes, marks);
}

/** Where a point's label goes: right of it, else left, moved up or down to miss the labels already placed. */
function labelBox(label, px, py, placed, bounds) {
  const width = label.length * 7.2 + 4;
  const heightPx = 14;
  const gap = 6;
  const candidates = [];
  for (const dy of [0, -14, 14, -28, 28, -42, 42]) {
    candidates.push({ anchor: "start", left: px + 9, dy }, { anchor: "end", left: px - 9 - width, dy });
  }
  const fits = (box) =>
    box.left >= bounds.left &&
    box.left + width <= bounds.right + 20 &&
    box.top >= bounds.top - 10 &&
    box.top + heightPx <= bounds.bottom + 4 &&
    !placed.some(
      (other) =>
        box.left < other.left + other.width + gap &&
        other.left < box.left + width + gap &&
        box.top < other.top + other.height &&
        other.top < box.top + heightPx,
    );
  for (const candidate of candidates) {
    const box = { left: candidate.left, top: py - 10 + candidate.dy, width, height: heightPx };
    if (fits(box)) {
      return { ...box, anchor: candidate.anchor, textX: candidate.anchor === "start" ? box.left : box.left + width, textY: box.top + 11 };
    }
  }
  const left = px + 9 + width <= bounds.right + 20 ? px + 9 : px - 9 - width;
  const anchor = left > px ? "start" : "end";
  return { left, top: py - 10, width, height: heightPx, anchor, textX: anchor === "start" ? left : left + width, textY: py + 1 };
}
