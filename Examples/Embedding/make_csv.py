#!/usr/bin/env python3
"""Writes heart_rate.csv, the example's data: two participants' watch heart rate, one
reading every 20 minutes over three days, in the app's own layout
(who;local time;bpm;quality). Deterministic: run it again for the same file."""
import math

rows = ["who;local time;bpm;quality"]
for who, base in (("ana", 62), ("ben", 70)):
    for day in (2, 3, 4):
        for i in range(0, 24 * 3, 1):
            minute = i * 20
            hour = minute / 60
            # resting at night, a walk in the morning, a run for ana in the evening
            bpm = base + 18 * math.sin(math.pi * (hour - 6) / 12) ** 2 * (hour > 6)
            if 7.5 <= hour < 8.5: bpm += 35
            if who == "ana" and 18 <= hour < 19 and day != 3: bpm += 80
            quality = "high" if i % 7 else "medium"
            rows.append(f"{who};2026-03-{day:02d} {minute // 60:02d}:{minute % 60:02d};{bpm:.0f};{quality}")
open("heart_rate.csv", "w").write("\n".join(rows) + "\n")
