#!/usr/bin/env python3
"""Writes otava_reference.json: change points that Apache Otava's own code
finds on synthetic series, for changepoint's reference test.

Run with Otava's source on the path (numpy and scipy installed):

    git -C OTAVA archive HEAD otava | tar x -C /tmp/otava-src
    PYTHONPATH=/tmp/otava-src python3 otava_reference.py > otava_reference.json

Otava is Apache-2.0 (https://github.com/apache/otava); only its outputs
are kept here, not its code. The commit used is in the file.
"""
import json
import random
import sys

from otava.analysis import compute_change_points

COMMIT = sys.argv[1] if len(sys.argv) > 1 else "unknown"


def series_cases():
    r = random.Random(20260601)
    cases = []
    # Otava's own test (tests/analysis_test.py, test_single_series).
    cases.append(dict(name="otava_single_series", window=10, max_p=0.0001, min_magnitude=0.0, series=[
        1.02, 0.95, 0.99, 1.00, 1.12, 1.00, 1.01, 0.98, 1.01, 0.96,
        0.50, 0.51, 0.48, 0.48, 0.55, 0.50, 0.49, 0.51, 0.50, 0.49]))
    for i in range(12):
        n = r.choice([20, 40, 60, 90, 150])
        steps = sorted(r.sample(range(5, n - 5), r.randint(0, 3)))
        level, noise = 100.0, r.choice([0.01, 0.03, 0.05])
        s = []
        for j in range(n):
            if j in steps:
                level *= 1 + r.choice([-1, 1]) * r.choice([0.03, 0.05, 0.2])
            s.append(round(level * (1 + noise * r.gauss(0, 1)), 4))
        for window, max_p, mag in [(50, 0.001, 0.0), (30, 0.01, 0.0), (20, 0.001, 0.02)]:
            cases.append(dict(name="random_%d_w%d_p%g_m%g" % (i, window, max_p, mag), window=window,
                              max_p=max_p, min_magnitude=mag, series=s, true_steps=steps))
    return cases


out = {"otava_commit": COMMIT, "cases": []}
for c in series_cases():
    cps, _ = compute_change_points(list(c["series"]), window_len=c["window"], max_pvalue=c["max_p"],
                                      min_magnitude=c["min_magnitude"])
    c["change_points"] = [dict(index=int(p.index), qhat=float(p.qhat), p_value=float(p.stats.pvalue),
                               mean_before=float(p.stats.mean_1), mean_after=float(p.stats.mean_2)) for p in cps]
    out["cases"].append(c)
json.dump(out, sys.stdout, indent=1)
sys.stdout.write("\n")
