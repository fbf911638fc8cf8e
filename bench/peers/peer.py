"""One peer of `make bench-peers`: the benchmark workload in polars or pandas.

usage: peer.py ENGINE FILE TIMEZONE
       (ENGINE: polars-parquet, polars-csv, pandas-csv, duckdb-parquet, duckdb-csv)

Reads FILE (columns time, x, y, z; time in wall seconds since 1970), computes the
workload and prints one JSON object: seconds (read + compute), peakBytes (the
process's peak resident memory) and the figures:
  hourly: [label, mean magnitude] per local clock hour,
  daily:  [label, samples, samples with magnitude > 1.1, p05, p50, p95] per local day
(R type 7 / linear quantiles). Local hours and days are computed the way Sensorium
does: local = time + UTC offset at that instant; key = floor(local / 3600 or 86400).
"""
import json
import resource
import sys
import time


def polars_run(path, tz, fmt):
    import polars as pl
    t0 = time.perf_counter()
    df = pl.read_parquet(path) if fmt == "parquet" else pl.read_csv(path)
    x, y, z, t = pl.col("x"), pl.col("y"), pl.col("z"), pl.col("time")
    utc = (t * 1e6).floor().cast(pl.Int64).cast(pl.Datetime("us", "UTC")).dt.convert_time_zone(tz)
    offset = (utc.dt.base_utc_offset() + utc.dt.dst_offset()).dt.total_seconds()
    local = t + offset.cast(pl.Float64)
    df = df.select(
        mag=(x * x + y * y + z * z).sqrt(),
        hour=(local / 3600).floor().cast(pl.Int64),
        day=(local / 86400).floor().cast(pl.Int64),
    )
    hourly = df.group_by("hour").agg(pl.col("mag").mean()).sort("hour")
    m = pl.col("mag")
    daily = df.group_by("day").agg(
        pl.len().alias("n"), (m > 1.1).sum().alias("active"),
        m.quantile(0.05, "linear").alias("p05"), m.quantile(0.5, "linear").alias("p50"),
        m.quantile(0.95, "linear").alias("p95"),
    ).sort("day")
    seconds = time.perf_counter() - t0
    return seconds, hourly.rows(), daily.rows()


def pandas_run(path, tz):
    import numpy as np
    import pandas as pd
    t0 = time.perf_counter()
    df = pd.read_csv(path, dtype={"time": "float64", "x": "float64", "y": "float64", "z": "float64"})
    utc = pd.to_datetime(np.floor(df["time"].to_numpy() * 1e6).astype("int64"), unit="us", utc=True)
    local_dt = utc.tz_convert(tz)
    offset = (local_dt.tz_localize(None) - utc.tz_localize(None)).total_seconds().to_numpy()
    local = df["time"].to_numpy() + offset
    mag = np.sqrt(df["x"].to_numpy() * df["x"].to_numpy() + df["y"].to_numpy() * df["y"].to_numpy()
                  + df["z"].to_numpy() * df["z"].to_numpy())
    frame = pd.DataFrame({"mag": mag, "hour": np.floor(local / 3600).astype("int64"),
                          "day": np.floor(local / 86400).astype("int64")})
    hourly = frame.groupby("hour")["mag"].mean().sort_index()
    g = frame.groupby("day")["mag"]
    daily = pd.DataFrame({
        "n": g.size(), "active": frame.assign(a=frame["mag"] > 1.1).groupby("day")["a"].sum(),
        "p05": g.quantile(0.05), "p50": g.quantile(0.5), "p95": g.quantile(0.95),
    }).sort_index()
    seconds = time.perf_counter() - t0
    return (seconds, [(int(k), float(v)) for k, v in hourly.items()],
            [(int(k), int(r.n), int(r.active), float(r.p05), float(r.p50), float(r.p95)) for k, r in daily.iterrows()])


def duckdb_run(path, tz, fmt):
    """The workload as one DuckDB query per result, in DuckDB's own engine (all threads):
    the local offset of each instant from DuckDB's ICU time zones, quantile_cont (linear)."""
    import duckdb
    t0 = time.perf_counter()
    con = duckdb.connect()
    source = "read_parquet(?)" if fmt == "parquet" else "read_csv(?, columns = {'time': 'DOUBLE', 'x': 'DOUBLE', 'y': 'DOUBLE', 'z': 'DOUBLE'}, header = true)"
    con.execute(f"""
        CREATE TEMP TABLE m AS
        SELECT sqrt(x * x + y * y + z * z) AS mag,
               floor(local / 3600)::BIGINT AS hour, floor(local / 86400)::BIGINT AS day
        FROM (SELECT x, y, z, time + (epoch(timezone(?, ts)) - epoch(ts)) AS local
              FROM (SELECT x, y, z, time, to_timestamp(floor(time * 1e6) / 1e6) AS ts FROM {source}))""", [tz, path])
    hourly = con.execute("SELECT hour, avg(mag) FROM m GROUP BY hour ORDER BY hour").fetchall()
    daily = con.execute("""
        SELECT day, count(*), count(*) FILTER (WHERE mag > 1.1),
               quantile_cont(mag, 0.05), quantile_cont(mag, 0.5), quantile_cont(mag, 0.95)
        FROM m GROUP BY day ORDER BY day""").fetchall()
    seconds = time.perf_counter() - t0
    return seconds, hourly, daily


def peak_resident_bytes():
    """This process's peak resident memory: VmHWM (ru_maxrss would carry over the peak
    of the process that forked this one)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def label(key, seconds, fmt):
    return time.strftime(fmt, time.gmtime(key * seconds))


def main():
    engine, path, tz = sys.argv[1:4]
    if engine == "polars-parquet":
        seconds, hourly, daily = polars_run(path, tz, "parquet")
    elif engine == "polars-csv":
        seconds, hourly, daily = polars_run(path, tz, "csv")
    elif engine == "pandas-csv":
        seconds, hourly, daily = pandas_run(path, tz)
    elif engine == "duckdb-parquet":
        seconds, hourly, daily = duckdb_run(path, tz, "parquet")
    elif engine == "duckdb-csv":
        seconds, hourly, daily = duckdb_run(path, tz, "csv")
    else:
        sys.exit(f"peer.py: unknown engine {engine!r} (polars-parquet, polars-csv, pandas-csv, duckdb-parquet, duckdb-csv)")
    peak = peak_resident_bytes()
    print(json.dumps({
        "seconds": seconds, "peakBytes": peak,
        "hourly": [[label(h, 3600, "%Y-%m-%d %H:00"), float(m)] for h, m in hourly],
        "daily": [[label(d, 86400, "%Y-%m-%d"), int(n), int(a), float(p05), float(p50), float(p95)]
                  for d, n, a, p05, p50, p95 in daily],
    }))


if __name__ == "__main__":
    main()
