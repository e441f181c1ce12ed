#!/usr/bin/python3
"""results_md.py - assemble bench/RESULTS.md from the drivers' result files.

    /usr/bin/python3 bench/results_md.py [build/bench] > bench/RESULTS.md

Reads RESULTS-b1.txt, -d1, -a1, -c1, -w, -fb1, -tb1, -tf1 and -r (what bench/run.sh
writes; a missing one is listed as not run) and prints one Markdown table of every
comparison: dataset, workload, our time, the yardstick's time, the ratio,
the target and PASS/MISS, the spread (median and maximum of each side's
timed runs, the ratio of the medians), plus the mem rows (peak RSS, full / 1/10 size),
the machine (CPUs, CPU model, RAM, kernel) and the date. run.sh calls it
after a run of all workloads (`make bench`)."""
import datetime
import os
import platform
import re
import sys

SETS = [("b1", "B1", "bagz"), ("d1", "D1", "datadings"),
        ("a1", "A1", "atlas"), ("c1", "C1", "bcolz"),
        ("w", "W", "writing: bagz, datadings, atlas, bcolz"),
        ("fb1", "F-B1", "B1 fanned out on Dask: read_sql on a 2-worker LocalCluster"),
        ("tb1", "T-B1", "bagz of tf.Example records read with records=tfexample"),
        ("tf1", "TF-1", "TFRecord: T-B1's records as a 1M-record uncompressed TFRecord"),
        ("r", "R", "remote reading: HTTP (nginx) and S3 (the tests' S3 front), 25 ms added "
         "per request, and RW-B1 (writing: B1 copied to s3:// through the same front); the "
         "ratio column is the row's value (a throughput ratio, a time ratio for RW-B1, "
         "seconds, bytes or requests), remote against local")]
SPREAD = re.compile(r"^(-|[\d.]+)/(-|[\d.]+)$")  # "median/max" ms
VERDICT = re.compile(r"^(.*?)\s*\b(PASS|MISS|MISSED|met|NOT FLAT|n/a)\b\s*(.*)$")


def split_target(text):
    """'<= 1.10 MISS' -> ('≤ 1.10', 'MISS'); '(info)' -> ('—', 'info')."""
    text = text.strip()
    if text.startswith("(info"):
        return "—", "info"
    m = VERDICT.match(text)
    if not m:
        return text.replace("<=", "≤"), ""
    target, verdict, extra = m.groups()
    if extra:
        verdict += " " + extra
    return target.replace("<=", "≤") or "—", verdict


def parse(path):
    """(first line, sub-header lines, rows) of one RESULTS-*.txt; a row is
    (workload, ours, yardstick, ratio, target, verdict, ours median/max,
    yardstick median/max, ratio of the medians) (the last three "" for
    rows without a spread)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    head = lines[0] if lines else ""
    m = re.search(r"min of (\d+) runs", "\n".join(lines))
    if m:
        head += "; %s timed run%s per variant" % (
            m.group(1), "" if m.group(1) == "1" else "s")
    info = [l for l in lines[1:4] if re.match(r"^[A-Z]\d: ", l)]
    info += [l for l in lines if l.startswith("load average")]
    rows, mode = [], None
    for line in lines:
        if line.startswith("--------"):
            mode = "main"
            continue
        if line.startswith("mem: peak RSS"):
            mode = "memhead"
            continue
        if mode == "memhead":  # the mem table's header line
            mode = "mem"
            continue
        if not line.strip():
            mode = None
            continue
        if mode is None or line.startswith("  "):
            continue
        f = re.split(r"\s{2,}", line.strip())
        if len(f) < 5:
            continue
        spread = ("", "", "")
        if len(f) >= 8 and SPREAD.match(f[4]) and SPREAD.match(f[5]):
            spread = (f[4], f[5], f[6])  # bench_table_row's median/max columns
            f = f[:4] + f[7:]
        target, verdict = split_target(" ".join(f[4:]))
        if mode == "mem":
            what = (": peak RSS 2x / full size" if f[0].endswith(" 2x")
                    else ": peak RSS full / 1/10 size")
            name = f[0][:-3] if f[0].endswith(" 2x") else f[0]
            rows.append((name + what, kib(f[2]), kib(f[1]), f[3], target, verdict) + spread)
        else:
            rows.append((f[0], f[1], f[2], f[3], target, verdict) + spread)
    return head, info, rows


def kib(v):
    return v + " KiB" if re.match(r"^\d+$", v) else v


def machine():
    model, mem = "?", "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = "%.1f GiB" % (int(line.split()[1]) / 1048576)
                    break
    except OSError:
        pass
    return "%d CPUs (%s), %s RAM, Linux %s" % (
        os.cpu_count() or 0, model, mem, platform.release())


def dash(v):
    """An empty or "-" spread cell as —."""
    return "—" if v.strip() in ("", "-", "- / -") else v


def cell(v):
    return v.replace("|", "\\|")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "build/bench"
    files = [os.path.join(d, "RESULTS-%s.txt" % k) for k, _, _ in SETS]
    stamps = [os.path.getmtime(f) for f in files if os.path.exists(f)]
    now = datetime.datetime.fromtimestamp(  # when the last workload ended
        max(stamps) if stamps else 0, datetime.timezone.utc)
    out = ["# Benchmark results", "",
           "Written by `make bench` (`bench/run.sh`, then "
           "`bench/results_md.py`) on %s. Machine: %s." % (
               now.strftime("%Y-%m-%d %H:%M UTC"), machine()), "",
           "Each time is the minimum of the timed runs after a warm-up, "
           "with the variants of a workload interleaved in one process and "
           "the yardstick measured in the same run (shared, noisy machine: "
           "read the ratio). ratio = ours / yardstick (of the minima, what "
           "the target judges); below 1 we are faster. The spread columns "
           "give the median / maximum of the same timed runs and the ratio "
           "of the medians (— where a figure is not a series of runs); each "
           "set's load average at its start and end is under Runs. "
           "Single-threaded variants of B1, A1 and C1 run pinned to one "
           "CPU, the same for both sides in a round, the next CPU in the "
           "next round (one vCPU of these VMs has run 30% slower than the "
           "other for minutes). Lookups run inside one `BEGIN … COMMIT`. Rows without "
           "a target are for information. Workloads and method: "
           "`shared/BENCHMARK.md`; details: `bench/README.md`.", ""]
    table = ["| set | workload | ours | yardstick | ratio | target | result "
             "| ours med / max | yardstick med / max | ratio of medians |",
             "| --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    heads, npass, nmiss = [], 0, 0
    for key, name, fmt in SETS:
        path = os.path.join(d, "RESULTS-%s.txt" % key)
        if not os.path.exists(path):
            heads.append("- **%s** (%s): not run" % (name, fmt))
            continue
        head, info, rows = parse(path)
        heads.append("- **%s** (%s): %s" % (name, fmt, head))
        heads.extend("  - %s" % l for l in info)
        for w, o, y, r, t, v, os_, ys, mr in rows:
            npass += v.startswith(("PASS", "met"))
            nmiss += v.startswith(("MISS", "NOT FLAT"))
            table.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                name, cell(w), o, y, r, cell(t), "**%s**" % v
                if v.startswith(("MISS", "NOT FLAT")) else v,
                dash(os_.replace("/", " / ")), dash(ys.replace("/", " / ")),
                dash(mr)))
    out += table
    out += ["", "Targets met: %d, missed: %d." % (npass, nmiss), "",
            "Runs:", ""] + heads
    print("\n".join(out))


if __name__ == "__main__":
    main()
