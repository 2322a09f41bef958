"""The text report of bench/speed.py: the domain median, then one row per scenario with its ratio and targets."""

from __future__ import annotations

from typing import Any

from bench import figures


def text_report(document: dict[str, Any]) -> str:
    out = []
    domain = document.get("domain")
    if domain:
        verdict = "met" if domain["target_met"] else "NOT met"
        out += [
            f"domain.planning.recommend in-process, six workloads x {domain['calls_per_workload']} calls: median "
            f"{domain['median_ms_all']:.3f} ms (slowest workload {domain['slowest_workload_median_ms']:.3f} ms); "
            f"target < {domain['target_median_ms']:g} ms: {verdict}",
            "",
        ]
    http = document.get("http")
    if http:
        meta = http["meta"]
        generator = meta["load_generator"] + (f" ({meta['wrk_threads']} thread)" if meta["wrk_threads"] else "")
        out.append(
            f"gpu-advisor speed: {meta['workers']} worker(s), {meta['connections']} connections, "
            f"{meta['duration_s']:g} s per scenario after {meta['warmup_s']:g} s warm-up, "
            f"{meta.get('rounds', 1)} round(s) (the median round; ratios and p99 are medians over rounds), "
            "load generator "
            f"{generator} (database {meta['database']}, cache {meta['cache']}, catalog {meta['catalog_version']})"
        )
        headers = [
            "scenario",
            "requests",
            "req/s",
            "x hello",
            "median ms",
            "p99 ms",
            "max ms",
            "errors",
            "gen cores",
            "server cores",
            "cache lookups",
        ]
        several = meta.get("rounds", 1) > 1
        if several:
            headers += ["req/s range", "x hello range", "p99 ms range"]
        rows = []
        for r in http["results"]:
            ratio = http["ratios_to_hello_world"][r["scenario"]]
            p99 = r.get("p99_ms_median", r["p99_ms"])
            rows.append(
                [
                    r["label"],
                    str(r["requests"]),
                    f"{r['requests_per_s']:.0f}",
                    f"{ratio:.2f}" if ratio is not None else "",
                    f"{r['median_ms']:.2f}" if r["median_ms"] is not None else "",
                    f"{p99:.2f}" if p99 is not None else "",
                    f"{r['max_ms']:.2f}" if r["max_ms"] is not None else "",
                    str(r["non_2xx"] + r["transport_errors"]),
                    f"{r['generator_cpu_s'] / r['seconds']:.2f}" if r["seconds"] else "",
                    f"{r['server_cpu_s'] / r['seconds']:.2f}" if r["server_cpu_s"] is not None else "",
                    ", ".join(f"{k} {v:.0f}" for k, v in sorted(r["cache_lookups"].items())),
                ]
            )
            if several:
                low, high = r["requests_per_s_range"]
                rows[-1] += [
                    f"{low:.0f}-{high:.0f}",
                    "{:.2f}-{:.2f}".format(*r["ratio_range"]),
                    "{:.1f}-{:.1f}".format(*r["p99_ms_range"]),
                ]
        out += figures.render(headers, rows)
        for name, target in http["targets"].items():
            verdict = "met" if target["met"] else "NOT met"
            out.append(f"target {name} >= {target['min_ratio']:.2f} x hello-world: {target['ratio']} ({verdict})")
        for name, target in http.get("p99_targets", {}).items():
            verdict = "met" if target["met"] else "NOT met"
            out.append(f"target {name} p99 <= {target['max_p99_ms']:g} ms: {target['p99_ms']} ms ({verdict})")
        if meta["load_generator"] != "wrk":
            out.append(
                "note: the asyncio client costs far more per request than wrk: hello-world, and every ratio, are floors"
            )
        out.append(f"python {meta['python']} on {meta['platform']}")
    return "\n".join(out)
