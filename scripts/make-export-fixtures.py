#!/usr/bin/env python3
"""Writes the recorded-export fixtures in Tests/Fixtures/exports/ (deterministic).

Two small study exports laid out and written as their producers write them, from the
facts in shared/reference/recorded-formats.md (each form below names its section); nothing
is copied from anyone's data:

  mdh/  a MyDataHelps SensorKit export tree (§2): RK.<org>.<project>_<start>-<end>/
        <sample type>/<iPhone|AppleWatch>/<participant>/<device id>/<query window>.json.gz,
        items {timestamp: integer milliseconds, sample: {...}} with capitalised
        enumerations, watch ambient light (chromaticity 0), heart rate without a date,
        neighbouring query windows that repeat samples, and one file re-written in seconds
        by a tool (uncompressed .json).
  mhc/  a MyHeartCounts upload tree (§1): users/<uid>/SensorKit/<SRSensor raw value>/
        <UUID>.csv.zstd (CSV as CSVWriter writes it, the device description column),
        wrist temperature one file per session, a re-upload under a new name (duplicates),
        users/<uid>/liveHealthSamples/<sensor id>_<UUID>.json.zstd FHIR Observation arrays
        (on-wrist), and a HealthKit upload the importer must name as not read.

Run:  python3 scripts/make-export-fixtures.py [OUT]   (needs the `zstd` command)
The files are small (a few hundred KB); CI reads the committed copies.
"""
import gzip
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "exports")
START = datetime(2023, 11, 6, tzinfo=timezone.utc)   # three study days: 6, 7 and 8 November 2023 (UTC)
DAYS = 3
CST = timezone(timedelta(hours=-6))                     # the query windows' offset in MyDataHelps file names

rng = random.Random(20231106)


def ts(dt):
    return dt.timestamp()


def at(day, hour, minute=0, second=0):
    return START + timedelta(days=day, hours=hour, minutes=minute, seconds=second)


def iso(dt):
    """ISO 8601 with milliseconds and offset, as Foundation's ISO8601DateFormatter writes it."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def gzip_bytes(data):
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
        f.write(data)
    return buf.getvalue()


def zstd_bytes(data):
    # The zstd command writes a content checksum by default, as the producer's library does.
    return subprocess.run(["zstd", "-q", "-c", "-19", "--check"], input=data, stdout=subprocess.PIPE, check=True).stdout


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def uid():
    return str(uuid.UUID(int=rng.getrandbits(128), version=4)).upper()


# ---------------------------------------------------------------- the participants' days

def light_lux(dt, watch):
    """Daylight-shaped illuminance, dim at night; the wrist sees less (sleeves)."""
    h = dt.hour + dt.minute / 60
    day = max(0.0, math.sin(math.pi * (h - 6.5) / 11)) if 6.5 < h < 17.5 else 0.0
    lux = 20 + 900 * day ** 1.5 if 7 <= h < 23 else 0.5
    lux *= 0.6 if watch else 1.0
    return round(lux * (0.85 + 0.3 * rng.random()), 2)


def awake(dt):
    return 7 <= dt.hour < 23


# ---------------------------------------------------------------- MyDataHelps (§2)

MDH_ROOT = "RK.4F2A9C.Sleep and Light Pilot_20231106-20231109"
MDH_PHONE = {"name": "iPhone", "model": "iPhone", "systemName": "iOS", "systemVersion": "17.1", "productType": "iPhone15,2"}
MDH_WATCH = {"name": "Apple Watch", "model": "Watch", "systemName": "watchOS", "systemVersion": "10.1", "productType": "Watch6,14"}


def windows():
    """Daily query windows, each from 09:51:31 (CST) to the next day's 09:25:27, overlapping
    the next by design (the fetch anchor moved back): neighbouring files repeat samples."""
    out = []
    for d in range(-1, DAYS):
        a = at(d, 15, 51, 31)
        b = at(d + 1, 15, 25, 27)
        if d >= 0:
            a -= timedelta(minutes=40)   # 40 minutes back into the previous window
        out.append((a, b))
    return out


def window_name(a, b):
    f = lambda dt: dt.astimezone(CST).strftime("%Y-%m-%dT%H%M%S%z")
    return f"{f(a)}_{f(b)}"


def mdh_file(sensor_folder, device_type, participant, device_id, device, items, compress=True, seconds=False):
    """One export file per query window, holding the items whose timestamp falls inside it."""
    for a, b in windows():
        chosen = [it for it in items if ts(a) < it[0] <= ts(b)]
        if not chosen:
            continue
        samples = []
        for t, sample in chosen:
            stamp = t if seconds else int(round(t * 1000))
            samples.append({"timestamp": stamp, "sample": sample})
        doc = json.dumps({"device": device, "samples": samples}, separators=(",", ":")).encode()
        name = window_name(a, b) + (".json.gz" if compress else ".json")
        path = os.path.join(OUT, "mdh", MDH_ROOT, sensor_folder, device_type, participant, device_id, name)
        write(path, gzip_bytes(doc) if compress else doc)


def mdh():
    for participant, has_watch in (("MDH-P1", True), ("MDH-P2", False)):
        phone_id, watch_id = f"{participant}-phone-1", f"{participant}-watch-1"
        # Ambient light on the phone: every 10 minutes while awake, placement capitalised.
        items = []
        t = at(0, 0)
        while t < at(DAYS, 0):
            if awake(t):
                items.append((ts(t), {"lux": light_lux(t, False), "chromaticity": {"x": round(0.31 + 0.02 * rng.random(), 4), "y": round(0.32 + 0.02 * rng.random(), 4)}, "placement": "FrontTop"}))
            t += timedelta(minutes=10)
        mdh_file("sensorkit-ambient-light-sensor", "iPhone", participant, phone_id, MDH_PHONE, items)
        # Pedometer bins while walking: a copy re-written by a tool in seconds, uncompressed.
        items = []
        for d in range(DAYS):
            for h in (8, 12, 18):
                s = at(d, h, 5)
                e = s + timedelta(minutes=4)
                steps = 300 + rng.randrange(200)
                items.append((ts(e), {"startDate": iso(s), "endDate": iso(e), "numberOfSteps": steps, "distance": round(steps * 0.72, 1),
                                      "floorsAscended": rng.randrange(3), "floorsDescended": rng.randrange(3), "currentPace": 0.75, "currentCadence": 1.7, "averageActivePace": 0.74}))
        mdh_file("sensorkit-pedometer", "iPhone", participant, phone_id, MDH_PHONE, items, compress=(participant != "MDH-P1"), seconds=(participant == "MDH-P1"))
        # Accelerometer: one batch of 25 elements a minute for ten minutes a day (arrays of
        # {acceleration, timestamp (uptime), startDate (text), identifier}).
        items = []
        batch = 1000
        for d in range(DAYS):
            for m in range(10):
                first = at(d, 10, m)
                elements = []
                for k in range(25):
                    dt = first + timedelta(seconds=k * 2.4)
                    elements.append({"acceleration": {"x": round(0.02 * math.sin(k), 5), "y": round(-0.98 + 0.01 * rng.random(), 5), "z": round(0.1 * math.cos(k), 5)},
                                     "timestamp": round(50_000 + ts(dt) - ts(START), 3), "startDate": iso(dt), "identifier": batch})
                batch += 1
                items.append((ts(first + timedelta(seconds=60)), elements))
        mdh_file("sensorkit-accelerometer", "iPhone", participant, phone_id, MDH_PHONE, items)
        if not has_watch:
            continue
        # Ambient light on the watch: every 15 minutes while worn; no colour (chromaticity 0).
        items = []
        t = at(0, 0)
        while t < at(DAYS, 0):
            items.append((ts(t), {"lux": light_lux(t, True), "chromaticity": {"x": 0, "y": 0}, "placement": "FrontTopRight"}))
            t += timedelta(minutes=15)
        mdh_file("sensorkit-ambient-light-sensor", "AppleWatch", participant, watch_id, MDH_WATCH, items)
        # Heart rate: every 5 minutes; heartRate, confidence and an uptime timestamp, no date.
        items = []
        t = at(0, 0)
        while t < at(DAYS, 0):
            bpm = (58 if not awake(t) else 72) + rng.randrange(12)
            items.append((ts(t), {"heartRate": bpm, "confidence": rng.choice(["High", "High", "Medium", "Highest"]), "timestamp": round(80_000 + ts(t) - ts(START), 2)}))
            t += timedelta(minutes=5)
        mdh_file("sensorkit-heart-rate", "AppleWatch", participant, watch_id, MDH_WATCH, items)


# ---------------------------------------------------------------- MyHeartCounts (§1)

def mhc_device(kind, product, version):
    name = "iPhone" if kind == "phone" else "Apple Watch"
    model = "iPhone" if kind == "phone" else "Watch"
    system = "iOS" if kind == "phone" else "watchOS"
    return f"model={model}; name={name}; systemName={system}; systemVersion={version}; productType={product}"


def csv_field(v):
    """CSVWriter: quoted only when it holds a comma, a quote or a newline; quotes doubled."""
    if v is None:
        return ""
    if isinstance(v, float):
        s = repr(v)
        return s[:-2] if s.endswith(".0") else s
    s = str(v)
    if any(c in s for c in ',"\n'):
        return '"' + s.replace('"', '""') + '"'
    return s


def csv_text(header, rows):
    lines = [",".join(header)] + [",".join(csv_field(v) for v in r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def mhc_upload(user, sensor_id, header, rows):
    path = os.path.join(OUT, "mhc", "users", user, "SensorKit", sensor_id, uid() + ".csv.zstd")
    data = zstd_bytes(csv_text(header, rows))
    write(path, data)
    return path


def mhc():
    for user, phone_product, watch_product in (("u7Qm2Lx", "iPhone16,1", "Watch7,2"), ("k9Xr4Tb", "iPhone14,5", "Watch6,1")):
        phone = mhc_device("phone", phone_product, "17.4")
        watch = mhc_device("watch", watch_product, "10.4")
        for d in range(DAYS):
            # Ambient light: phone and watch rows in one upload (every device is fetched).
            rows = []
            t = at(d, 0)
            while t < at(d + 1, 0):
                if awake(t):
                    rows.append([ts(t), light_lux(t, False), "frontTop", round(0.31 + 0.02 * rng.random(), 4), round(0.32 + 0.02 * rng.random(), 4), phone])
                rows.append([ts(t) + 7.5, light_lux(t, True), "frontTopRight", 0.0, 0.0, watch])
                t += timedelta(minutes=15)
            first = mhc_upload(user, "com.apple.SensorKit.als", ["timestamp", "lux", "placement", "chromacityX", "chromacityY", "device"], rows)
            if d == 1:
                # Logging out reset the anchors: the same day uploaded again under a new name.
                again = os.path.join(os.path.dirname(first), uid() + ".csv.zstd")
                shutil.copyfile(first, again)
            # Heart rate: every 5 minutes; confidence as its raw value 0–3.
            rows = []
            t = at(d, 0)
            while t < at(d + 1, 0):
                rows.append([ts(t), float((57 if not awake(t) else 70) + rng.randrange(14)), rng.choice([2, 3, 3, 1]), watch])
                t += timedelta(minutes=5)
            mhc_upload(user, "com.apple.SensorKit.heart.rate", ["timestamp", "value", "confidence", "device"], rows)
            # Pedometer: three walks a day; optional columns sometimes empty.
            rows = []
            for h in (9, 13, 19):
                s = at(d, h, 10)
                e = s + timedelta(minutes=5)
                steps = 400 + rng.randrange(300)
                rows.append([ts(s), ts(e), steps, round(steps * 0.7, 1), rng.randrange(4), rng.randrange(4), None if h == 13 else 0.8, 1.6, 0.79, phone])
            mhc_upload(user, "com.apple.SensorKit.pedometer.data",
                       ["start", "end", "steps", "distance", "floorsUp", "floorsDown", "currentPace", "currentCadence", "avgActivePace", "device"], rows)
            # Accelerometer: write batches of 20 samples sharing an identifier.
            rows = []
            for m in range(6):
                for k in range(20):
                    t = at(d, 11, m, k * 3)
                    rows.append([ts(t), 500 + 6 * d + m, round(0.01 * k, 4), round(-1.0 + 0.002 * k, 4), round(0.05, 4), phone])
            mhc_upload(user, "com.apple.SensorKit.motion.accelerometer", ["timestamp", "identifier", "x", "y", "z", "device"], rows)
            # Wrist temperature: one file per night's session, no device column.
            rows = []
            t = at(d, 1)
            while t < at(d, 6):
                rows.append([ts(t), round(34.2 + 0.4 * rng.random(), 3), 0.12, "" if t.minute else "inMotion"])
                t += timedelta(minutes=10)
            mhc_upload(user, "com.apple.SensorKit.wristTemperature", ["timestamp", "value", "errorEstimate", "condition"], rows)
        # On-wrist state as FHIR Observations (a batch of 100 or more goes to a file).
        events = []
        t = at(0, 0)
        on = True
        while t < at(DAYS, 0):
            events.append((t, on))
            t += timedelta(minutes=40 if on else 5)
            on = not on
        write(os.path.join(OUT, "mhc", "users", user, "liveHealthSamples", f"com.apple.SensorKit.onWristState_{uid()}.json.zstd"),
              zstd_bytes(json.dumps(mhc_fhir_on_wrist(events, watch_product), separators=(",", ":")).encode()))
        # A HealthKit upload beside them: not SensorKit data, named as not read.
        write(os.path.join(OUT, "mhc", "users", user, "liveHealthSamples", f"HKQuantityTypeIdentifierStepCount_{uid()}.json.zstd"),
              zstd_bytes(b"[]"))


def fhir_time(dt):
    """FHIR DateTime/Instant as FHIRModels writes it: the phone's local offset, fraction
    digits only when the time has them (spec: FHIRTime.swift L198-216)."""
    local = dt.astimezone(CST)
    text = local.strftime("%Y-%m-%dT%H:%M:%S")
    if local.microsecond:
        text += ("." + "%06d" % local.microsecond).rstrip("0")
    return text + local.strftime("%z")[:3] + ":" + local.strftime("%z")[3:]


def mhc_fhir_on_wrist(events, product):
    """On-wrist Observations as MyHeartCounts writes them (OnWristEvent+FHIR.swift L15-102):
    valueBoolean, components watchWristLocation / watchCrownOrientation ("left"/"right"),
    effectivePeriod from the earlier to the later of onWristDate and offWristDate, the
    sourceDevice extension naming the watch: the same device info as the CSV uploads' device
    column (SensorKitFHIRExtensions.swift writes deviceInfo.model, .name, … as they are), so
    model "Watch", name "Apple Watch": one watch, not two."""
    out = []
    previous = None
    for t, on in events:
        ident = uid()
        obs = {
            "resourceType": "Observation", "id": ident, "identifier": [{"id": ident}], "status": "final",
            "code": {"coding": [{"code": "com.apple.SensorKit.onWristState", "system": "https://developer.apple.com/documentation/sensorkit", "display": "On-Wrist State"}]},
            "issued": fhir_time(t + timedelta(hours=26)),
            "valueBoolean": on,
            "component": [
                {"code": {"coding": [{"code": "watchWristLocation", "system": "https://spezi.stanford.edu"}]}, "valueString": "left"},
                {"code": {"coding": [{"code": "watchCrownOrientation", "system": "https://spezi.stanford.edu"}]}, "valueString": "right"},
            ],
            "extension": [
                {"valueString": "America/Chicago", "url": "https://bdh.stanford.edu/fhir/defs/sampleUploadTimeZone"},
                {"extension": [
                    {"valueString": "Watch", "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice/model"},
                    {"valueString": "Apple Watch", "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice/name"},
                    {"valueString": "watchOS", "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice/systemName"},
                    {"valueString": "10.4", "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice/systemVersion"},
                    {"valueString": product, "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice/productType"},
                ], "url": "https://bdh.stanford.edu/fhir/defs/SensorKit/sourceDevice"},
            ],
        }
        if previous is None:
            obs["effectiveInstant"] = fhir_time(t)
        else:
            obs["effectivePeriod"] = {"start": fhir_time(previous), "end": fhir_time(t)}
        previous = t
        out.append(obs)
    return out


if __name__ == "__main__":
    for sub in ("mdh", "mhc"):
        shutil.rmtree(os.path.join(OUT, sub), ignore_errors=True)
    mdh()
    mhc()
    print("fixtures written to", os.path.normpath(OUT))
