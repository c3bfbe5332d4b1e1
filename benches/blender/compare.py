#!/usr/bin/env python3
"""weft against Blender's own cloth on the drop sheet, side by side in one run.

    python3 benches/blender/compare.py --weft target/release/weft --threads 2 --rounds 3

Bakes benches/blender/drop_sheet.toml with weft at its defaults and builds and bakes the same
scene in Blender (blender_cloth.py, Debian's `blender`, headless), in interleaved rounds with the
same thread count, and prints for each: milliseconds per frame (medians over the rounds; weft's
from its summary.toml, Blender's from its simulation loop), the largest stretch of a grid edge
from t = 1 s and in the last frame (compression aside), and the most triangle pairs that cross in
any frame. The quality figures come from one more run of each that measures every frame (weft
with `--stats full`; Blender reading its cache back), outside the timed rounds. The speed ratio is
Blender's time over weft's, the median of the rounds' ratios.
"""

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
SCENE = os.path.join(HERE, "drop_sheet.toml")
BLENDER_SCRIPT = os.path.join(HERE, "blender_cloth.py")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def weft_bake(weft, out, threads, stats="light"):
    shutil.rmtree(out, ignore_errors=True)
    run([weft, "bake", SCENE, "--out", out, "-j", str(threads), "-q", "--stats", stats, "--checkpoint-every", "0"])
    with open(os.path.join(out, "summary.toml"), "rb") as f:
        return tomllib.load(f)


def blender_bake(blender, out, threads, measure=False):
    cmd = [blender, "-b", "--factory-startup", "-t", str(threads), "--python", BLENDER_SCRIPT, "--", "--out", out]
    if not measure:
        cmd.append("--no-measure")
    run(cmd)
    with open(out) as f:
        return json.load(f)


def weft_quality(weft, work, threads):
    out = os.path.join(work, "weft-full")
    weft_bake(weft, out, threads, stats="full")
    with open(os.path.join(out, "stats.csv")) as f:
        rows = list(csv.DictReader(f))
    frames = [(float(r["time_s"]), float(r["max_stretch"]), int(r["intersecting_triangle_pairs"] or 0)) for r in rows]
    return quality(frames)


def blender_quality(blender, work, threads):
    r = blender_bake(blender, os.path.join(work, "blender-full.json"), threads, measure=True)
    frames = [(f["time"], f["max_stretch"], f["crossing_pairs"]) for f in r["per_frame"] if f["frame"] > 0]
    return quality(frames)


def quality(frames):
    """(largest stretch from t = 1 s, stretch of the last frame, most crossing pairs)."""
    late = [s for t, s, _ in frames if t >= 1.0 - 1e-9]
    return max(late), frames[-1][1], max(c for _, _, c in frames)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--weft", default="target/release/weft", help="the weft binary")
    p.add_argument("--blender", default="blender", help="the blender binary")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    if shutil.which(args.blender) is None:
        sys.exit(f"no `{args.blender}` on the PATH: install Blender (Debian: apt-get install blender)")
    work = tempfile.mkdtemp(prefix="weft-vs-blender-")
    try:
        times = {"weft": [], "blender": []}
        for r in range(args.rounds):
            s = weft_bake(args.weft, os.path.join(work, "weft"), args.threads)
            times["weft"].append(s["ms_per_frame"])
            b = blender_bake(args.blender, os.path.join(work, "blender.json"), args.threads)
            times["blender"].append(b["ms_per_frame"])
            print(f"round {r + 1}: weft {times['weft'][-1]:.1f} ms/frame, blender {times['blender'][-1]:.1f} ms/frame",
                  file=sys.stderr)
        wq = weft_quality(args.weft, work, args.threads)
        bq = blender_quality(args.blender, work, args.threads)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    ratio = statistics.median(b / w for w, b in zip(times["weft"], times["blender"]))
    print(f"drop sheet, 64², 90 frames at 30 fps, {args.threads} threads, medians of {args.rounds} interleaved rounds")
    print(f"{'solver':<28} {'ms/frame':>9} {'stretch from 1 s':>17} {'last frame':>11} {'crossing pairs':>15}")
    for name, t, q in [("weft (defaults)", times["weft"], wq), ("Blender 3.4 cloth (quality 5)", times["blender"], bq)]:
        print(f"{name:<28} {statistics.median(t):>9.1f} {100 * q[0]:>16.2f}% {100 * q[1]:>10.2f}% {q[2]:>15}")
    print(f"weft is {ratio:.2f}× Blender's speed")


if __name__ == "__main__":
    main()
