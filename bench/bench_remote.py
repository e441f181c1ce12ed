#!/usr/bin/python3
"""bench_remote.py - the remote workloads of `make bench` (R-*: issues 23
and 24, "Speed"; shared/BENCHMARK.md, "Remote and TFRecord workloads").

    /usr/bin/python3 bench/bench_remote.py BENCH_DIR EXT RUNS [ROW]

Starts the tests' servers (tests/conformance/remote_servers.py,
s3_front.py) on 127.0.0.1, every one stopped on exit:
  - HTTP: nginx serving BENCH_DIR, behind the S3 front used as a
    forwarding proxy (the fault proxy of test_remote_faults.py) that adds
    25 ms to every request and logs each one (time, Range, status);
    nginx's own log gives the bytes of each answer;
  - S3: the S3 front serving BENCH_DIR as bucket `bench` (path style,
    AWS_ENDPOINT_URL; ranges, ETags, If-Match and ListObjectsV2 as S3
    documents them; signatures not verified, to keep botocore's cost off
    the clock), 25 ms added to every request.
Each measurement is a fresh process of build/bench/bench_rq (one query:
CREATE VIRTUAL TABLE temp.t, an untimed PRE query, the timed query; peak
RSS), the remote and local variants interleaved, each figure the minimum of
RUNS timed runs after a warm-up. Rows (ROW picks one; default all):
  rb1scan  B1 scan over HTTP / the same scan of the local files, threads=1
           and 2: throughput ratio; bytes fetched (nginx's log) / the
           bytes of the 4 shards (what a scan needs)
  rb1point 1,000 random rowids in one rowid IN (...) over HTTP (the table
           opened by a count(*) first): seconds, requests made
  rb1open  count(*) over 1,000 bagz shards over HTTP (BENCH_DIR/fb1many,
           10 records each): cold (a new XDG_CACHE_HOME) and warm (the same
           folder again): seconds, GETs
  rd1key   1,000 random present keys in one key IN (...) over S3 (the
           table opened by a count(*) first): seconds, requests
  ra1scan  A1 scan over S3 / local (threads=2, the default)
  rc1scan  C1 scan over S3 / local
  rw1      RW-B1 (issue 26): copy B1 to s3:// (the S3 front, a bucket of
           its own, 25 ms added) / copy B1 to local files: time ratio,
           INSERT INTO t(record) SELECT record FROM bagz(B1) autocommitted
           into a writer table out@4.bagz (mode=create, level=3, threads=2,
           rows_per_shard=250000: the 4 shards named from the start, so
           parts go up during the INSERT; the staging folder on the same
           disk as the local copy); requests
           made; peak RSS at full and 1/10 size (b1small)
and peak RSS of every remote scan at 1/10 and full size (b1small, a1small,
c1small). Under each scan row a line gives the CPU seconds (medians) of
the remote client, the S3 front / fault proxy (threads of this process),
nginx, and the local client: the servers share the scan's CPUs here. Prints one table; each row gives the target of issue 24 (part 2)
and issue 23's (part 1) where it had one, and met/MISSED."""
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "conformance"))
from remote_servers import Nginx  # noqa: E402
from s3_front import Front  # noqa: E402

DELAY = 0.025  # seconds added to every request
SLOW_S = 15.0  # a variant slower than this runs once (see Bench.measure)
CAP_S = 180  # a run is stopped after this many seconds (its figure: "> CAP_S")
OPEN_CAP_S = 60  # the same for each R-B1 open run (1,000 shards)
ROWS = ("rb1scan", "rb1point", "rb1open", "rd1key", "ra1scan", "rc1scan", "rw1")
# rows_per_shard: B1's 4 shards of 250,000 records named from the start,
# so a remote writer sends their parts while the INSERT runs (without it
# name@4 is split evenly at the end, and everything goes up at COMMIT)
RW1_SLOW_S = 60.0  # RW-B1: a variant slower than this runs once
RW1_OPTS = "mode=create, level=3, compression=zstd, threads=2, rows_per_shard=%d"
B1_SCAN = "SELECT count(*), sum(length(record)) FROM t"
A1_SCAN = "SELECT count(*), sum(length(text)) FROM t"
C1_SCAN = ("SELECT count(*), sum(id) + sum(label) + sum(flag) + sum(length(name)) + "
           "CAST(sum(score) * 1024 AS INTEGER) FROM t")
# columns at least two spaces apart (results_md.py splits rows on 2+ spaces)
ROW_FMT = "%-46s  %10s  %10s  %7s  %17s  %17s  %7s  %s"
MEM_FMT = "%-30s  %12s  %12s  %7s  %s"


class Failed(Exception):
    pass


class Stopped(Failed):
    """A run stopped at its time limit (its figure: more than the limit)."""

    def __init__(self, limit, what):
        super().__init__("%s: stopped after %d s" % (what, limit))
        self.limit = limit


def rq(ext, module, spec, opts, pre, sql, env=None, limit=CAP_S):
    """One bench_rq run: dict of its numbers (r0, r1, ms, all_ms, t0, t1,
    maxrss_kib); Failed with its stderr when it fails, Stopped when it
    takes over `limit` seconds."""
    tool = os.path.join(ROOT, "build", "bench", "bench_rq")
    cpu0 = cpu_now()
    try:
        p = subprocess.run([tool, ext, module, spec, opts, pre, sql], capture_output=True,
                           text=True, timeout=limit, env=env)
    except subprocess.TimeoutExpired:
        raise Stopped(limit, "%s %s" % (module, spec))
    cpu = {k: cpu_now()[k] - v for k, v in cpu0.items()}
    line = next((x for x in p.stdout.splitlines() if x.startswith("rq ")), None)
    if p.returncode != 0 or line is None:
        raise Failed("%s %s: %s" % (module, spec, (p.stderr or p.stdout).strip()[-600:]))
    out = {}
    for item in line.split()[1:]:
        k, _, v = item.partition("=")
        out[k] = float(v) if "." in v else int(v)
    out.update(("cpu_" + k, v) for k, v in cpu.items())
    return out


NGINX_PID = []  # the bench's nginx, whose CPU time cpu_now reads


def cpu_now():
    """CPU seconds (user + system) so far of: the bench_rq children reaped
    (client), this process (the S3 front and the fault proxy are threads of
    it; its main thread only waits), and nginx (from /proc/PID/stat)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = {"client": ru.ru_utime + ru.ru_stime, "front": time.process_time(), "nginx": 0.0}
    for pid in NGINX_PID:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out["nginx"] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return out


class Series:
    """The timed runs of one variant (the warm-up is not kept)."""

    def __init__(self, name):
        self.name, self.ms, self.runs, self.error = name, [], [], None
        self.slow = False
        self.stopped = None  # the time limit (s) a run was stopped at

    def add(self, res, value):
        self.runs.append(res)
        self.ms.append(value)

    def ok(self):
        return self.error is None and bool(self.ms)

    def best(self):
        return min(self.ms)

    def spread(self):
        s = sorted(self.ms)
        n = len(s)
        med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
        return med, s[-1]

    def min_of(self, key):
        return min(r[key] for r in self.runs)


def stopped_value(series, value):
    """value, or "> N" (N its limit in s) when every run of series was
    stopped at its time limit."""
    if series.ok() and all(r.get("stopped") for r in series.runs):
        return "> %d" % (series.best() / 1e3)
    return value


def verdict(value, limit, at_least=False):
    if value is None:
        return "n/a"
    good = value >= limit if at_least else value <= limit
    return "met" if good else "MISSED"


class Bench:
    def __init__(self, bench_dir, ext, runs):
        self.dir, self.ext, self.runs = bench_dir, ext, runs
        self.lines = []
        self.mem = []
        self.http = self.proxy = self.s3 = None
        self.s3root = tempfile.mkdtemp(prefix="ds-bench-s3-")
        os.symlink(os.path.abspath(bench_dir), os.path.join(self.s3root, "bench"))
        self.cache = tempfile.mkdtemp(prefix="ds-bench-cache-")
        env = dict(os.environ, XDG_CACHE_HOME=self.cache)
        for k in ("AWS_SESSION_TOKEN", "AWS_PROFILE", "HTTP_PROXY", "http_proxy"):
            env.pop(k, None)
        self.env = env
        self.bad = 0

    # -- servers ---------------------------------------------------------
    def __enter__(self):
        self.http = Nginx(self.dir).__enter__()
        NGINX_PID[:] = [self.http.proc.pid]
        self.proxy = Front(upstream=("127.0.0.1", self.http.port)).__enter__()
        self.proxy.always = {"delay": DELAY}
        self.s3 = Front(root=self.s3root, etag_memo=True).__enter__()
        self.s3.always = {"delay": DELAY}
        # RW-B1's objects keep the ETag their complete gave them, as on S3
        # (not an MD5 of the whole object computed at its first read)
        self.s3.s3_etags = True
        self.env.update(AWS_ENDPOINT_URL=self.s3.url("").rstrip("/"), AWS_ACCESS_KEY_ID="bench",
                        AWS_SECRET_ACCESS_KEY="bench", AWS_REGION="us-east-1")
        return self

    def __exit__(self, *exc):
        for srv in (self.s3, self.proxy):
            if srv is not None:
                srv.__exit__(None, None, None)
        if self.http is not None:
            self.http.__exit__(None, None, None)
        shutil.rmtree(self.s3root, ignore_errors=True)
        shutil.rmtree(self.cache, ignore_errors=True)

    def http_url(self, name):
        return self.proxy.url(name)

    def s3_url(self, name):
        return "s3://bench/" + name

    def clear_logs(self):
        self.http.clear_log()
        for srv in (self.proxy, self.s3):
            with srv.lock:
                srv.log.clear()

    def window(self, srv, res):
        """Requests srv saw while the timed query ran."""
        t0, t1 = res["t0"] / 1e3, res["t1"] / 1e3
        return [r for r in srv.requests() if t0 <= r[0] <= t1]

    # -- measuring ---------------------------------------------------------
    def measure(self, variants, runs=None, slow_s=SLOW_S):
        """variants: [(Series, callable returning (res, value_ms))]; a warm-up
        round, then `runs` rounds, each running every variant once, in order.
        A variant whose warm-up took over slow_s seconds is not run again:
        that run is its one timed run (the time bound of the whole bench)."""
        for r in range((runs or self.runs) + 1):
            for s, fn in variants:
                if s.error is not None or s.slow:
                    continue
                t = time.monotonic()
                try:
                    res, value = fn()
                except Stopped as e:
                    s.stopped, s.error = e.limit, str(e)
                    self.note("%s: stopped after %d s: its figure is > %d s"
                              % (s.name, e.limit, e.limit))
                    continue
                except Failed as e:
                    s.error = str(e)
                    print("bench_remote: %s failed: %s" % (s.name, e), file=sys.stderr)
                    continue
                if r == 0 and time.monotonic() - t > slow_s:
                    s.slow = True
                    self.note("%s: its first run took %.0f s: that one run is its figure"
                              % (s.name, time.monotonic() - t))
                if r > 0 or s.slow:
                    s.add(res, value)

    def check(self, what, a, b):
        if a.ok() and b.ok():
            x, y = a.runs[-1], b.runs[-1]
            if x["r0"] is not None and (x["r0"], x["r1"]) != (y["r0"], y["r1"]):
                self.lines.append("!!!!!!!! MISMATCH: %s: %s gave (%d, %d), %s (%d, %d)" % (
                    what, a.name, x["r0"], x["r1"], b.name, y["r0"], y["r1"]))
                self.bad += 1

    def row(self, workload, ours, yard, value, target, time_ratio=False):
        """A table row: times of ours and the yardstick (ms), the value
        judged and the target text; the ratio of the medians is
        yardstick/ours (a throughput ratio), or ours/yardstick with
        time_ratio (a row whose value is a time ratio)."""
        o = "%.1f" % ours.best() if ours is not None and ours.ok() else "n/a"
        if ours is not None and not ours.ok() and ours.stopped:
            o = ">%d000" % ours.stopped
        y = "%.1f" % yard.best() if yard is not None and yard.ok() else "-"
        v = ("n/a" if value is None else value if isinstance(value, str)
             else "%d" % value if isinstance(value, int) else "%.2f" % value)
        sp = ["-/-", "-/-", "-"]
        if ours is not None and ours.ok():
            sp[0] = "%.1f/%.1f" % ours.spread()
            if all(r.get("stopped") for r in ours.runs):
                o, sp[0] = ">%.0f" % ours.best(), "-/-"
        if yard is not None and yard.ok():
            sp[1] = "%.1f/%.1f" % yard.spread()
            if ours is not None and ours.ok():
                a, b = yard.spread()[0], ours.spread()[0]
                sp[2] = "%.2f" % (b / a if time_ratio else a / b)
        self.lines.append(ROW_FMT % (workload, o, y, v, sp[0], sp[1], sp[2], target))

    def note(self, text):
        self.lines.append("  " + text)

    # -- the rows ----------------------------------------------------------
    def scan_pair(self, label, module, local, remote, opts, sql):
        loc, rem = Series(label + " local"), Series(label + " remote")
        self.measure([
            (loc, lambda: self._time(module, local, opts, "", sql)),
            (rem, lambda: self._time(module, remote, opts, "", sql, clear=True))])
        self.check(label, rem, loc)
        return loc, rem

    def _time(self, module, spec, opts, pre, sql, clear=False, env=None):
        if clear:
            self.clear_logs()
        res = rq(self.ext, module, spec, opts, pre, sql, env or self.env)
        if clear:
            res["requests"] = len(self.proxy.requests()) + len(self.s3.requests())
            res["nginx_bytes"] = sum(r[5] for r in self.http.requests())
        return res, res["ms"]

    def cpu_note(self, label, loc, rem):
        """Where the 2 CPUs went (median of the timed runs, CPU seconds):
        our client, the S3 front / fault proxy (threads of this process),
        nginx, against the local scan's client."""
        if not (loc.ok() and rem.ok()):
            return

        def med(series, key):
            v = sorted(r[key] for r in series.runs)
            return v[len(v) // 2]
        self.note("%s CPU s (median): remote client %.2f, front %.2f, nginx %.2f "
                  "(servers %.2f); local client %.2f; remote wall %.2f, local wall %.2f"
                  % (label, med(rem, "cpu_client"), med(rem, "cpu_front"),
                     med(rem, "cpu_nginx"), med(rem, "cpu_front") + med(rem, "cpu_nginx"),
                     med(loc, "cpu_client"), rem.spread()[0] / 1e3, loc.spread()[0] / 1e3))

    def throughput(self, loc, rem):
        return loc.best() / rem.best() if loc.ok() and rem.ok() else None

    def rb1scan(self):
        needed = sum(os.path.getsize(os.path.join(self.dir, "b1-%05d-of-00004.bagz" % i))
                     for i in range(4))
        for threads in (1, 2):
            opts = "threads=%d" % threads
            loc, rem = self.scan_pair("R-B1 scan %s" % opts, "bagz",
                                      os.path.join(self.dir, "b1@4.bagz"),
                                      self.http_url("b1@4.bagz"), opts, B1_SCAN)
            tp = self.throughput(loc, rem)
            self.row("R-B1 scan http %s: local/remote time" % opts, rem, loc, tp,
                     ">= 0.90 %s (issue 23: >= 0.60 %s)" % (verdict(tp, 0.90, True),
                                                             verdict(tp, 0.60, True)))
            fetched = max(r["nginx_bytes"] for r in rem.runs) if rem.ok() else None
            ratio = fetched / needed if fetched is not None else None
            self.row("R-B1 scan http %s: bytes fetched/needed" % opts, None, None, ratio,
                     "<= 1.02 %s (issue 23: <= 1.05 %s)" % (verdict(ratio, 1.02),
                                                             verdict(ratio, 1.05)))
            if rem.ok():
                self.note("threads=%d: %d requests, %d bytes fetched, %d needed (the 4 shards)"
                          % (threads, min(r["requests"] for r in rem.runs), fetched, needed))
                self.mem.append(("b1", threads, rem.min_of("maxrss_kib")))
            self.cpu_note("threads=%d" % threads, loc, rem)

    def rb1point(self):
        rng = random.Random(0xB1B1)
        ids = sorted(rng.sample(range(1000000), 1000))
        sql = ("SELECT count(*), sum(length(record)) FROM t WHERE rowid IN (%s)"
               % ",".join(map(str, ids)))
        pre = "SELECT count(*) FROM t"
        loc, rem = Series("R-B1 point local"), Series("R-B1 point remote")

        def remote():
            res, ms = self._time("bagz", self.http_url("b1@4.bagz"), "", pre, sql)
            res["requests"] = len(self.window(self.proxy, res))
            return res, ms
        self.measure([(loc, lambda: self._time("bagz", os.path.join(self.dir, "b1@4.bagz"),
                                                "", pre, sql)),
                      (rem, remote)])
        self.check("R-B1 point", rem, loc)
        s = rem.best() / 1e3 if rem.ok() else None
        self.row("R-B1 point 1,000 rowid IN (...) http: s", rem, loc, s,
                 "<= 0.5 s %s (issue 23: <= 1.5 s %s)" % (verdict(s, 0.5), verdict(s, 1.5)))
        if rem.ok():
            self.note("requests during the query: %d (fewest of the runs), %d (most)" % (
                min(r["requests"] for r in rem.runs), max(r["requests"] for r in rem.runs)))

    def rb1open(self):
        spec = many_shards(self.dir)
        url = self.http_url("fb1many/m@1000.bag")
        cold, warm = Series("R-B1 open cold"), Series("R-B1 open warm")
        state = {}

        def one(series_cold):
            if series_cold:
                state["cache"] = tempfile.mkdtemp(prefix="cache-", dir=self.cache)
            env = dict(self.env, XDG_CACHE_HOME=state["cache"])
            self.clear_logs()
            try:
                res = rq(self.ext, "bagz", url, "", "", "SELECT count(*) FROM t", env,
                         limit=OPEN_CAP_S)
            except Stopped:  # its figure: more than the limit
                res = {"r0": None, "r1": None, "all_ms": OPEN_CAP_S * 1e3, "stopped": True}
            # GETs of bytes (2xx; a 404 GET, the open's look for a file
            # named literally m@1000.bag, carries none), as
            # test_remote_cache.py's index_gets counts them
            gets = [r for r in self.proxy.requests() if r[1] == "GET" and r[5] in (200, 206)]
            res["gets"] = len(gets)
            res["requests"] = len(self.proxy.requests())
            return res, res["all_ms"]
        loc = Series("R-B1 open local")
        self.measure([(cold, lambda: one(True)), (warm, lambda: one(False)),
                      (loc, lambda: self._all("bagz", spec, "", "", "SELECT count(*) FROM t"))])
        self.check("R-B1 open cold", cold, loc)
        self.check("R-B1 open warm", warm, loc)
        s = cold.best() / 1e3 if cold.ok() else None
        self.row("R-B1 open 1,000 shards http cold: s", cold, None, stopped_value(cold, s),
                 "<= 1 s %s (issue 23: <= 2 s %s)" % (verdict(s, 1.0), verdict(s, 2.0)))
        s = warm.best() / 1e3 if warm.ok() else None
        self.row("R-B1 open 1,000 shards http warm: s", warm, None, stopped_value(warm, s),
                 "<= 0.2 s %s" % verdict(s, 0.2))
        g = min(r["gets"] for r in warm.runs) if warm.ok() else None
        if warm.ok() and all(r.get("stopped") for r in warm.runs):
            g = ">=%d" % g  # counted until the run was stopped
        self.row("R-B1 open warm: GETs of index bytes", None, None, g,
                 "0 %s" % ("n/a" if g is None else "met" if g == 0 else "MISSED"))
        if cold.ok() and any(r.get("stopped") for r in cold.runs):
            self.note("runs stopped after %d s (the bound of the bench): counts are those "
                      "until then" % OPEN_CAP_S)
        if cold.ok():
            self.note("cold: %d GETs, %d requests; warm (XDG_CACHE_HOME of the cold run): "
                      "%d GETs, %d requests; local open + count(*): %.1f ms" % (
                          min(r["gets"] for r in cold.runs),
                          min(r["requests"] for r in cold.runs),
                          -1 if g is None else g if isinstance(g, int) else int(g[2:]),
                          min(r["requests"] for r in warm.runs) if warm.ok() else -1,
                          loc.best() if loc.ok() else -1))

    def _all(self, module, spec, opts, pre, sql):
        res = rq(self.ext, module, spec, opts, pre, sql, self.env)
        return res, res["all_ms"]

    def rd1key(self):
        rng = random.Random(0xD1D1)
        keys = sorted(rng.sample(range(1000000), 1000))
        sql = ("SELECT count(*), sum(label) FROM t WHERE key IN (%s)"
               % ",".join("'s%07d'" % k for k in keys))
        pre = "SELECT count(*) FROM t"
        loc, rem = Series("R-D1 key local"), Series("R-D1 key remote")

        def remote():
            res, ms = self._time("datadings", self.s3_url("d1.msgpack"), "", pre, sql)
            res["requests"] = len(self.window(self.s3, res))
            return res, ms
        self.measure([(loc, lambda: self._time("datadings", os.path.join(self.dir, "d1.msgpack"),
                                                "", pre, sql)),
                      (rem, remote)])
        self.check("R-D1 key", rem, loc)
        if rem.ok() and rem.runs[-1]["r0"] != 1000:
            self.lines.append("!!!!!!!! MISMATCH: R-D1 key found %d of 1000 keys"
                              % rem.runs[-1]["r0"])
            self.bad += 1
        s = rem.best() / 1e3 if rem.ok() else None
        self.row("R-D1 key 1,000 key IN (...) s3: s", rem, loc, s,
                 "<= 0.5 s %s (issue 23: <= 2 s %s)" % (verdict(s, 0.5), verdict(s, 2.0)))
        if rem.ok():
            self.note("requests during the query: %d (fewest of the runs)"
                      % min(r["requests"] for r in rem.runs))

    def folder_scan(self, label, module, name, sql):
        loc, rem = self.scan_pair(label, module, os.path.join(self.dir, name),
                                  self.s3_url(name), "", sql)
        tp = self.throughput(loc, rem)
        self.row("%s s3: local/remote time" % label, rem, loc, tp,
                 ">= 0.85 %s" % verdict(tp, 0.85, True))
        if rem.ok():
            self.note("%s: %d requests (fewest of the runs)"
                      % (label, min(r["requests"] for r in rem.runs)))
            self.mem.append((name, 0, rem.min_of("maxrss_kib")))
        self.cpu_note(label, loc, rem)

    def ra1scan(self):
        self.folder_scan("R-A1 scan", "atlas", "a1", A1_SCAN)

    def rc1scan(self):
        self.folder_scan("R-C1 scan", "bcolz", "c1", C1_SCAN)

    def copy_b1(self, src, remote, env=None, rows_per_shard=250000):
        """One copy of the bag src (a shard spec) to a fresh target: the S3
        front's bucket rw1 (remote) or a local folder; (res, ms)."""
        out_local = os.path.join(self.s3root, "rw1local")
        bucket = os.path.join(self.s3root, "rw1")
        for d in (out_local, bucket):
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(bucket)
        os.makedirs(out_local)
        target = "s3://rw1/out@4.bagz" if remote else os.path.join(out_local, "out@4.bagz")
        sql = "INSERT INTO t(record) SELECT record FROM bagz('%s')" % src
        if remote:
            self.clear_logs()
        res = rq(self.ext, "bagz", target, RW1_OPTS % rows_per_shard, "", sql, env or self.env)
        if remote:
            res["requests"] = len(self.s3.requests())
            res["uploaded"] = sum(os.path.getsize(os.path.join(bucket, f))
                                  for f in os.listdir(bucket))
        res["out_bytes"] = sum(os.path.getsize(os.path.join(d, f))
                               for d in (out_local, bucket) for f in os.listdir(d))
        return res, res["ms"]

    def rw1(self):
        src = os.path.join(self.dir, "b1@4.bagz")
        # the writers stage next to the local copy (same disk)
        env = dict(self.env, TMPDIR=self.s3root)
        loc, rem = Series("RW-B1 copy local"), Series("RW-B1 copy s3")
        # both sides get every run (a copy takes ~15-25 s here: ~3 min in all)
        self.measure([(loc, lambda: self.copy_b1(src, False, env)),
                      (rem, lambda: self.copy_b1(src, True, env))], slow_s=RW1_SLOW_S)
        if loc.ok() and rem.ok() and loc.runs[-1]["out_bytes"] != rem.runs[-1]["out_bytes"]:
            self.lines.append("!!!!!!!! MISMATCH: RW-B1: %d bytes written locally, %d to s3"
                              % (loc.runs[-1]["out_bytes"], rem.runs[-1]["out_bytes"]))
            self.bad += 1
        ratio = rem.best() / loc.best() if loc.ok() and rem.ok() else None
        self.row("RW-B1 copy to s3 threads=2: remote/local time", rem, loc, ratio,
                 "<= 1.3 %s" % verdict(ratio, 1.3), time_ratio=True)
        if rem.ok():
            self.note("RW-B1: %d requests, %d bytes uploaded (fewest of the runs)" % (
                min(r["requests"] for r in rem.runs), rem.runs[-1]["uploaded"]))
            self.mem.append(("rw1", 2, rem.min_of("maxrss_kib")))

    def mem_rows(self):
        """Peak RSS of the remote scans at 1/10 size (fewest of 2 fresh
        processes) against the full size's (fewest of the timed runs)."""
        out = []
        for name, threads, full in self.mem:
            small = name + "small"
            if name == "rw1":
                label = "RW-B1 copy to s3 threads=2"
                env = dict(self.env, TMPDIR=self.s3root)
                try:
                    kib = min(self.copy_b1(os.path.join(self.dir, "b1small@4.bagz"), True,
                                           env, 25000)[0]["maxrss_kib"] for _ in range(2))
                except Failed as e:
                    out.append(MEM_FMT % (label, "n/a", full, "n/a", "copy failed: %s" % e))
                    continue
                r = full / kib
                out.append(MEM_FMT % (label, kib, full, "%.2f" % r,
                                      "~1.0 (flat) %s" % ("met" if r <= 1.25 else "MISSED")))
                continue
            if name == "b1":
                module, spec, opts, sql = ("bagz", self.http_url("b1small@4.bagz"),
                                           "threads=%d" % threads, B1_SCAN)
                label = "R-B1 scan http threads=%d" % threads
            else:
                module, sql = ("atlas", A1_SCAN) if name == "a1" else ("bcolz", C1_SCAN)
                spec, opts, label = self.s3_url(small), "", "R-%s scan s3" % name[:2].upper()
            try:
                kib = min(rq(self.ext, module, spec, opts, "", sql, self.env)["maxrss_kib"]
                          for _ in range(2))
            except Failed as e:
                out.append(MEM_FMT % (label, "n/a", full, "n/a", "scan failed: %s" % e))
                continue
            r = full / kib
            if name == "c1":
                out.append(MEM_FMT % (label, kib, full, "%.2f" % r,
                                      "~1.0 (flat) %s" % ("met" if r <= 1.25 else "MISSED")))
                continue
            # B1 and A1: the 1/10 shards (3.3 MB, 600 KB) are smaller than
            # the read-ahead window's fixed bound, so full / (1/10) shows
            # the window filling up; twice the full size shows growth
            out.append(MEM_FMT % (label, kib, full, "%.2f" % r,
                                  "(info: 1/10's shards are smaller than the window's bound)"))
            spec2 = (",".join([self.http_url("b1-%05d-of-00004.bagz" % i)
                               for i in range(4)] * 2) if name == "b1" else self.a1x2())
            try:
                kib2 = min(rq(self.ext, module, spec2, opts, "", sql, self.env)["maxrss_kib"]
                           for _ in range(2))
            except Failed as e:
                out.append(MEM_FMT % (label + " 2x", full, "n/a", "n/a", "scan failed: %s" % e))
                continue
            r = kib2 / full
            out.append(MEM_FMT % (label + " 2x", full, kib2, "%.2f" % r,
                                  "~1.0 (flat) %s" % ("met" if r <= 1.25 else "MISSED")))
        return out

    def a1x2(self):
        """s3:// URL of A1 twice over: a 16-shard atlas folder whose shards
        are links to A1's 8 (made once in the S3 front's root)."""
        src = os.path.join(os.path.abspath(self.dir), "a1")
        dst = os.path.join(self.s3root, "x2", "a1x2")
        if not os.path.isdir(dst):
            with open(os.path.join(src, "meta.json"), encoding="utf-8") as f:
                meta = json.load(f)
            n = len(meta["shard_sizes"])
            os.makedirs(dst)
            for i in range(2 * n):
                os.mkdir(os.path.join(dst, str(i)))
                for fn in os.listdir(os.path.join(src, str(i % n))):
                    os.symlink(os.path.join(src, str(i % n), fn), os.path.join(dst, str(i), fn))
            for fn in os.listdir(src):
                if not fn.isdigit() and fn != "meta.json":
                    os.symlink(os.path.join(src, fn), os.path.join(dst, fn))
            meta["shard_sizes"] = meta["shard_sizes"] * 2
            with open(os.path.join(dst, "meta.json"), "w", encoding="utf-8") as f:
                json.dump(meta, f, indent=4)
        return "s3://x2/a1x2"

    def report(self, head):
        print(head)
        print(ROW_FMT % ("workload", "ours ms", "local ms", "value", "ours med/max",
                         "local med/max", "med r.", "target"))
        print(ROW_FMT % ("--------", "-------", "--------", "-----", "------------",
                         "-------------", "------", "------"))
        for line in self.lines:
            print(line)
        mem = self.mem_rows()
        if mem:
            print()
            print("mem: peak RSS of one remote scan (or copy) in a fresh process (KiB), "
                  "1/10 vs full size (rows ending in 2x: full vs twice the full size):")
            print(MEM_FMT % ("workload", "smaller KiB", "larger KiB", "ratio", "target"))
            for line in mem:
                print(line)


def many_shards(bench_dir):
    """BENCH_DIR/fb1many/m@1000.bag (1,000 bagz files of 10 records: F-B1's,
    written by bench_fb1.py's generator)."""
    sys.path.insert(0, HERE)
    from bench_fb1 import many_shards as make
    return make(bench_dir)


def load_line(start):
    with open("/proc/loadavg") as f:
        now = " ".join(f.read().split()[:3])
    return "load average (1/5/15 min) %s at start, %s at end" % (start, now)


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit("usage: bench_remote.py BENCH_DIR EXT RUNS [ROW]")
    bench_dir, ext, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
    only = sys.argv[4] if len(sys.argv) == 5 else ""
    if only and only not in ROWS:
        sys.exit("bench_remote: ROW must be one of " + ", ".join(ROWS))
    with open("/proc/loadavg") as f:
        start = " ".join(f.read().split()[:3])
    t_start = time.monotonic()
    with Bench(bench_dir, ext, runs) as b:
        for name in ROWS:
            if not only or only == name:
                getattr(b, name)()
        head = ("R remote reading benchmark, %s, %s: HTTP (nginx behind the fault proxy) "
                "and S3 (the S3 front), %d ms added per request; min of %d runs after a "
                "warm-up, fresh process each, remote and local interleaved"
                % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.uname().nodename,
                   DELAY * 1000, runs))
        b.report(head + "\n" + load_line(start))
        print("\n(%.0f s for the remote rows)" % (time.monotonic() - t_start))
        if b.bad:
            print("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above" % b.bad)
    sys.exit(3 if b.bad else 0)


if __name__ == "__main__":
    main()
