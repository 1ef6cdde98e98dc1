#!/usr/bin/env python3
"""A markdown table from `tp-bench --json` output: one row per case, per
contender its median time with the range of round medians, and stax's time
over it (below 1: stax is faster).

    tp-bench --peers --json > run.jsonl; bench/ratio_table.py run.jsonl
"""
import json
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
    cases = [r for r in rows if "results" in r]
    names = []
    for case in cases:
        for result in case["results"]:
            if result["name"] not in names:
                names.append(result["name"])
    print("| case | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for case in cases:
        by_name = {r["name"]: r for r in case["results"]}
        cells = []
        for name in names:
            r = by_name.get(name)
            if r is None:
                cells.append("-")
                continue
            cell = f"{r['median_ms']:.3g} ms [{r['min_ms']:.3g}..{r['max_ms']:.3g}]"
            if "stax_ratio" in r:
                cell += f" **{r['stax_ratio']:.2f}**"
            check = r.get("check")
            if check and check.get("oracle") != "none":
                cell += " ok" if check.get("pass") else " WRONG"
            cells.append(cell)
        print(f"| {case['case']} | " + " | ".join(cells) + " |")
    compiles = [(case["case"], r) for case in cases for r in case["results"]
                if "compile_cold_ms" in r]
    if compiles:
        print("\n| case | backend | compile cold | compile from disk cache |")
        print("|---|---|---|---|")
        for name, r in compiles:
            print(f"| {name} | {r['name']} | {r['compile_cold_ms']:.3g} ms | "
                  f"{r['compile_disk_cache_ms']:.3g} ms |")
    for row in rows:
        if "skipped" in row:
            print(f"\n{row['case']}: skipped: {row['skipped'].splitlines()[0]}")
        elif row.get("case") == "stream-triad" and "threads" in row:
            print(f"\nSTREAM triad: {row['gb_per_s']} GB/s on {row['threads']} threads, "
                  f"{row['one_thread_gb_per_s']} GB/s on 1 ({row['c_flags']})")
        elif row.get("case") == "openblas-core":
            chooser = {"tp-bench": f"set by tp-bench (OpenBLAS picked {row.get('openblas_picked')})",
                       "user": "OPENBLAS_CORETYPE set by the user"}.get(row["chosen_by"],
                                                                         "OpenBLAS's own choice")
            print(f"\nOpenBLAS {row['version']}: {row['core']} kernels, {chooser}")
        elif row.get("case") == "compile-latency":
            print(f"\ncompile latency: cold {row['cold_ms']} ms, disk cache {row['disk_cache_ms']} ms, "
                  f"call overhead {row['call_overhead_us']} us")
    print("\nbold: stax's median over that column's (below 1: stax faster); ok/WRONG: output vs its oracle")


if __name__ == "__main__":
    main()
