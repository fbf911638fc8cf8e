#!/usr/bin/env python3
"""Per-day figures of a recorded export, computed from its files alone (no Sensorium code).

    python3 scripts/export-daily-figures.py mdh-json|mhc ROOT

Prints CSV: participant,day,sensor,device,samples,mean,hours — the columns of the `daily`
table of protocols/first_export_review — for every day (UTC), sensor and device that holds
samples, so that a test can compare Sensorium's import and replay with an independent reading
of the same files. It reads gzip with Python's gzip module and zstd with the `zstd` command,
parses JSON and CSV with the standard library, drops exact duplicates (the same item or row
in two files), and takes each sample's time by the producers' rules
(shared/reference/recorded-formats.md): MyDataHelps items in milliseconds (or seconds, decided
per file by the first item), heart rate by its item's timestamp, arrays by each element's
startDate; MyHeartCounts by the first column, wrist temperature by the session's first reading,
on-wrist Observations by the end of their effective period (or their instant).
"""
import csv
import gzip
import io
import json
import math
import os
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timezone

MEASURE = {"ambientLightSensor": "lux", "heartRate": "heartRate", "pedometerData": "numberOfSteps",
           "accelerometer": "magnitude", "wristTemperature": "duration", "onWristState": None}


def read_bytes(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return subprocess.run(["zstd", "-q", "-d", "-c"], input=data, stdout=subprocess.PIPE, check=True).stdout
    return data


def iso(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def files(root):
    for folder, _, names in sorted(os.walk(root)):
        for n in sorted(names):
            yield os.path.join(folder, n)


# (participant, sensor, device) -> set of (time, value, identity) — a set drops exact duplicates
samples = defaultdict(set)


def mdh(root):
    folders = {"sensorkit-ambient-light-sensor": "ambientLightSensor", "sensorkit-heart-rate": "heartRate",
               "sensorkit-pedometer": "pedometerData", "sensorkit-accelerometer": "accelerometer"}
    for path in files(root):
        parts = os.path.relpath(path, root).split(os.sep)
        sensor, participant = folders[parts[0]], parts[2]
        doc = json.loads(read_bytes(path))
        dev = doc["device"]
        device = dev["model"] + " " + dev["productType"]
        divisor = None
        for item in doc["samples"]:
            stamp = item["timestamp"]
            if divisor is None:
                divisor = 1000 if stamp > 1e11 else 1
            t_item = stamp / divisor
            s = item["sample"]
            key = (participant, sensor, device)
            identity = json.dumps(item, sort_keys=True)
            if sensor == "accelerometer":
                for e in s:
                    a = e["acceleration"]
                    samples[key].add((iso(e["startDate"]), math.sqrt(a["x"] ** 2 + a["y"] ** 2 + a["z"] ** 2), json.dumps(e, sort_keys=True)))
            elif sensor == "pedometerData":
                samples[key].add((iso(s["startDate"]), s["numberOfSteps"], identity))
            elif sensor == "heartRate":
                samples[key].add((iso(s["date"]) if "date" in s else t_item, s["heartRate"], identity))
            else:
                samples[key].add((t_item, s["lux"], identity))


def mhc_device(text):
    fields = dict(p.strip().split("=", 1) for p in text.split(";"))
    return fields["model"] + " " + fields["productType"]


def mhc(root):
    folders = {"com.apple.SensorKit.als": "ambientLightSensor", "com.apple.SensorKit.heart.rate": "heartRate",
               "com.apple.SensorKit.pedometer.data": "pedometerData", "com.apple.SensorKit.motion.accelerometer": "accelerometer",
               "com.apple.SensorKit.wristTemperature": "wristTemperature"}
    watch = {}
    wrist = []
    for path in files(os.path.join(root, "users")):
        parts = os.path.relpath(path, os.path.join(root, "users")).split(os.sep)
        participant = parts[0]
        if parts[1] == "liveHealthSamples" and parts[2].startswith("com.apple.SensorKit.onWristState_"):
            # FHIR on-wrist Observations: timed by effectivePeriod.end or effectiveInstant (the
            # latest change of wear), the device from the sourceDevice extension.
            for obs in json.loads(read_bytes(path)):
                time = obs.get("effectivePeriod", {}).get("end") or obs.get("effectiveInstant")
                if time is None:
                    continue
                ext = next(e for e in obs["extension"] if e["url"].endswith("/SensorKit/sourceDevice"))
                fields = {e["url"].rsplit("/", 1)[1]: e["valueString"] for e in ext["extension"]}
                device = fields["model"] + " " + fields["productType"]
                samples[(participant, "onWristState", device)].add((iso(time), None, obs["id"]))
            continue
        if parts[1] != "SensorKit":
            continue
        sensor = folders[parts[2]]
        rows = list(csv.reader(io.StringIO(read_bytes(path).decode())))[1:]
        if sensor == "wristTemperature":
            times = [float(r[0]) for r in rows]
            wrist.append((participant, min(times), max(times) - min(times), path))
            continue
        for r in rows:
            device = mhc_device(r[-1])
            if device.startswith("Watch"):
                watch[participant] = device
            key = (participant, sensor, device)
            if sensor == "accelerometer":
                value = math.sqrt(float(r[2]) ** 2 + float(r[3]) ** 2 + float(r[4]) ** 2)
            elif sensor == "pedometerData":
                value = float(r[2])
            else:
                value = float(r[1])
            samples[key].add((float(r[0]), value, ",".join(r)))
    for participant, first, duration, path in wrist:
        samples[(participant, "wristTemperature", watch[participant])].add((first, duration, path))


def main():
    fmt, root = sys.argv[1], sys.argv[2]
    (mdh if fmt == "mdh-json" else mhc)(root)
    days = defaultdict(list)
    for (participant, sensor, device), rows in samples.items():
        for t, value, _ in rows:
            day = datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%d")
            days[(participant, day, sensor, device)].append((t, value))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["participant", "day", "sensor", "device", "samples", "mean", "hours"])
    for key in sorted(days):
        rows = days[key]
        hours = len({int(t // 3600) for t, _ in rows})
        mean = sum(v for _, v in rows) / len(rows) if MEASURE[key[2]] else None
        out.writerow(list(key) + [len(rows), "" if mean is None else "%.3f" % mean, hours])


if __name__ == "__main__":
    main()
