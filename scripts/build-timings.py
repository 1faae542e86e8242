#!/usr/bin/env python3
"""Summarizes the newest `cargo build --timings` report: the build's wall time, how
much of it each kind of crate took (the workspace's own, its heaviest dependencies), and
the longest units, so that where CI's build time goes is measured, not guessed.

    python3 scripts/build-timings.py TARGET_DIR
"""
import glob
import json
import os
import re
import sys

target = sys.argv[1] if len(sys.argv) > 1 else "target"
reports = sorted(glob.glob(os.path.join(target, "cargo-timings", "cargo-timing-*.html")), key=os.path.getmtime)
if not reports:
    print("build-timings: no cargo-timings report in", target)
    sys.exit(0)
html = open(reports[-1], encoding="utf-8").read()
match = re.search(r"const UNIT_DATA = (\[.*?\]);\n", html, re.S)
if not match:
    print("build-timings: the report holds no unit data")
    sys.exit(0)
units = json.loads(match.group(1))
own = {unit["name"] for unit in units if unit["name"] == "handoff" or unit["name"].startswith("handoff-")}
wall = max((unit["start"] + unit["duration"] for unit in units), default=0.0)
total = sum(unit["duration"] for unit in units)
own_time = sum(unit["duration"] for unit in units if unit["name"] in own)
print(f"build-timings: {len(units)} units, {wall:.0f} s of wall time, {total:.0f} s of compile time on all cores")
print(f"build-timings: the workspace's own crates (libraries, binaries, tests): {own_time:.0f} s")
print("build-timings: the ten longest units:")
for unit in sorted(units, key=lambda unit: unit["duration"], reverse=True)[:10]:
    kind = unit.get("target", "").strip() or "lib"
    print(f"  {unit['duration']:6.1f} s  {unit['name']} {unit['version']} ({kind})")
