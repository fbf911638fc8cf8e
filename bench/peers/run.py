"""`make bench-peers`: Sensorium beside polars, DuckDB and pandas on one participant-week of
50 Hz phone accelerometer, in one run.

usage: run.py --sensorium BIN [--days 7] [--work DIR]

1. `sensorium bench study --json --csv` runs the workload simulated, from a store (in a
   process of its own, as `run --recording` would: its peak memory is its own) and
   as a streaming Swift loop, and writes the week's samples (time, x, y, z) as CSV.
2. pyarrow converts the CSV to parquet (float64 columns).
3. Each peer (peer.py) runs in its own process: polars and DuckDB from parquet and from
   CSV, pandas from CSV; each reports its read + compute time and its peak memory.
4. Prints one table (wall time, peak memory) and checks that every peer's figures
   equal Sensorium's: same hours and days, equal counts, every number within 1e-9.
Exits 1 when a figure disagrees.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def disagreement(ours, theirs):
    """None when the figures agree (labels and counts exactly, numbers to 1e-9)."""
    def close(a, b):
        return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-9)
    if [h[0] for h in ours["hourly"]] != [h[0] for h in theirs["hourly"]]:
        return f"hours differ ({len(ours['hourly'])} vs {len(theirs['hourly'])})"
    if [d[0] for d in ours["daily"]] != [d[0] for d in theirs["daily"]]:
        return f"days differ: {[d[0] for d in ours['daily']]} vs {[d[0] for d in theirs['daily']]}"
    for a, b in zip(ours["hourly"], theirs["hourly"]):
        if not close(a[1], b[1]):
            return f"hour {a[0]}: mean {a[1]!r} vs {b[1]!r}"
    for a, b in zip(ours["daily"], theirs["daily"]):
        if a[1:3] != b[1:3]:
            return f"day {a[0]}: counts {a[1:3]} vs {b[1:3]}"
        for x, y in zip(a[3:], b[3:]):
            if not close(x, y):
                return f"day {a[0]}: percentiles {a[3:]} vs {b[3:]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sensorium", required=True, help="the sensorium binary (release build)")
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--work", help="keep the CSV, parquet and JSON files in this folder")
    args = ap.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="sensorium-peers-")
    os.makedirs(work, exist_ok=True)
    csv, parquet, figures = (os.path.join(work, n) for n in ("week.csv", "week.parquet", "sensorium.json"))

    print(f"bench-peers: {args.days} day(s) of 50 Hz phone accelerometer; work folder {work}", flush=True)
    subprocess.run([args.sensorium, "bench", "study", "--days", str(args.days), "--json", figures, "--csv", csv], check=True)
    with open(figures) as f:
        ours = json.load(f)

    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq
    t0 = time.perf_counter()
    pq.write_table(pacsv.read_csv(csv), parquet)
    print(f"  parquet written in {time.perf_counter() - t0:.1f} s: CSV {os.path.getsize(csv) / 1e6:.0f} MB, "
          f"parquet {os.path.getsize(parquet) / 1e6:.0f} MB", flush=True)

    rows = [(p["name"], p["seconds"], p["peakBytes"], None) for p in ours["paths"]]
    failed = False
    names = {"polars-parquet": "polars, from parquet", "polars-csv": "polars, from CSV",
             "duckdb-parquet": "DuckDB, from parquet", "duckdb-csv": "DuckDB, from CSV", "pandas-csv": "pandas, from CSV"}
    for engine, path in (("polars-parquet", parquet), ("polars-csv", csv), ("duckdb-parquet", parquet),
                         ("duckdb-csv", csv), ("pandas-csv", csv)):
        out = subprocess.run([sys.executable, os.path.join(HERE, "peer.py"), engine, path, ours["timeZone"]],
                             check=True, capture_output=True, text=True)
        theirs = json.loads(out.stdout)
        problem = disagreement(ours, theirs)
        failed = failed or problem is not None
        name = names[engine]
        rows.append((name, theirs["seconds"], theirs["peakBytes"], problem or "agrees"))

    print(f"\n  {ours['samples']} samples, {len(ours['hourly'])} hours, {len(ours['daily'])} days")
    print(f"  {'path':<26} {'wall (s)':>9} {'peak (MB)':>10}  figures vs Sensorium simulated")
    for name, secs, peak, check in rows:
        print(f"  {name:<26} {secs:>9.3f} {peak / 1e6:>10.0f}  {check or ('(checked in bench study)' if name != rows[0][0] else 'reference')}")
    by_name = {r[0]: r[1] for r in rows}
    ours_paths = [r[0] for r in rows if r[0].startswith("Sensorium")]
    for peer in ("polars, from parquet", "DuckDB, from parquet"):
        for path in ours_paths:
            if peer in by_name:
                print(f"  ratio {peer} / {path}: {by_name[peer] / by_name[path]:.2f} (> 1: Sensorium faster)")
    print("  Sensorium's times: the protocol's summary (reading, simulating or decoding, and computing); "
          "peers: reading the file and computing")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
