"""test_remote_cache.py - the persistent cache of remote index bytes
(src/remote/remote_cache.c) and datasets_remote_stats(), against nginx
over http, each open in a fresh process (the cache is on disk; the
in-process answers last 2 s). Requests are counted from nginx's access log.
  - warm: a second open of datadings (mid: .offsets/.keys/.key_hashes/
    .filter), a bagz (tail limits), atlas and bcolz folders in a fresh
    process costs no 2xx GET of index bytes (only HEADs); answers equal
    the local read;
  - staleness: the dataset replaced on the server (new ETags): the new
    bytes are read; also with the same sizes (only the ETags tell), and
    with whole entries of the old ETags left behind;
  - two processes filling one cache at once: both right, every entry
    whole and valid, no temporary file left, then warm;
  - size bound (DATASETS_REMOTE_CACHE_MAX): the folder stays under it,
    the least recently used dataset's entries go, the newest stay;
  - corruption: a flipped byte and a cut entry are detected, refetched
    (GETs in the log), rewritten valid, the answer right;
  - off: remote_cache=off and DATASETS_REMOTE_CACHE=off write no file and
    read none; a folder that cannot be made: answers from the network,
    nothing printed;
  - datasets_remote_stats(): requests, bytes, failures match the log,
    cache hits/misses, 'reset';
  - s3:// through the S3 front (signatures checked by botocore): warm
    opens are signed HEADs, no GET of index bytes.
Usage: test_remote_cache.py BUILD_DIR"""
import hashlib
import json
import os
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import dstest
from remote_servers import Nginx
from s3_front import Front, S3SigV4Auth

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
UP = dstest.FIXTURES

# one fresh process: load, run the queries, print answers and stats
CHILD = r'''
import json, sqlite3, sys
c = sqlite3.connect(":memory:")
c.enable_load_extension(True)
c.load_extension(sys.argv[1])
out = {"answers": [], "stats": None}
for q in json.loads(sys.argv[2]):
    try:
        out["answers"].append([list(r) for r in c.execute(q).fetchall()])
    except sqlite3.Error as e:
        out["answers"].append("error: " + str(e))
out["stats"] = [list(r) for r in c.execute("SELECT * FROM datasets_remote_stats()")]
print(json.dumps(out))
'''

STATS_COLS = ["endpoint", "requests", "retries", "failures", "bytes", "wait_ms",
              "cache_hits", "cache_misses", "cache_bytes"]


def child_cmd(queries):
    return ["/usr/bin/python3", "-c", CHILD, os.path.join(BUILD, "datasets"),
            json.dumps(queries)]


def run(env, queries):
    """Answers and stats rows (dicts) of queries run in a fresh process."""
    p = subprocess.run(child_cmd(queries), env=env, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise RuntimeError("child failed: " + p.stderr[-2000:])
    out = json.loads(p.stdout.splitlines()[-1])
    return out["answers"], [dict(zip(STATS_COLS, r)) for r in out["stats"]]


def queries(url, opts=None):
    """The queries of each dataset under url(name) (with options)."""
    o = (", " + dstest.sql_quote(opts)) if opts else ""
    mid = dstest.sql_quote(url("mid/mid.msgpack"))
    bag = dstest.sql_quote(url("a.bag"))
    return [
        "SELECT count(*) FROM datadings(%s%s)" % (mid, o),
        "SELECT key, hex(raw) FROM datadings(%s%s) WHERE rowid IN (77, 19999)" % (mid, o),
        "SELECT rowid FROM datadings(%s%s) WHERE key = 'm01234'" % (mid, o),
        "SELECT count(*), sum(length(record)) FROM bagz(%s%s)" % (bag, o),
        "SELECT hex(record) FROM bagz(%s%s) WHERE rowid = 3" % (bag, o),
        "SELECT count(*) FROM atlas(%s%s)" % (dstest.sql_quote(url("standard")), o),
        "SELECT count(*) FROM bcolz(%s%s)" % (dstest.sql_quote(url("carray_int32")), o),
    ]


def local_answers(www):
    conn = dstest.connect(BUILD)
    out = []
    for q in queries(lambda n: os.path.join(www, n)):
        out.append([list(r) for r in conn.execute(q).fetchall()])
    conn.close()
    return out


INDEX_NAMES = (".offsets", ".keys", ".key_hashes", ".filter", "meta.json", "index.npy",
               "/meta/sizes", "/meta/storage", "__attrs__")


def index_gets(log):
    """2xx GETs of index bytes: an index file's, or any open's suffix range."""
    return [r for r in log if r[0] == "GET" and 200 <= r[4] < 300 and
            (r[1].endswith(INDEX_NAMES) or r[2].startswith("bytes=-"))]


def entries(cache):
    """{name: bytes} of the cache folder's entry files."""
    if not os.path.isdir(cache):
        return {}
    out = {}
    for n in os.listdir(cache):
        with open(os.path.join(cache, n), "rb") as f:
            out[n] = f.read()
    return out


def parse_entry(b):
    """(kind, size, etag, payload offset, payload length) of a valid entry
    (remote_cache.c's layout), else None."""
    if len(b) < 8 + 48 + 32 + 4 or b[:8] != b"DSRCACH2":
        return None
    kind, _conf, size, el, vl, pl = struct.unpack("<6Q", b[8:56])
    start = 56 + 32 + el + vl
    if start + pl + 4 != len(b) or struct.pack("<I", zlib.crc32(b[:-4])) != b[-4:]:
        return None
    return chr(kind), size, b[88:88 + el], start, pl


def entry_name(url, kind):
    return hashlib.sha256(url.encode()).hexdigest() + "." + kind


def make_www(rng):
    www = tempfile.mkdtemp(prefix="ds-www-cache-")
    shutil.copytree(os.path.join(UP, "datadings", "mid"), os.path.join(www, "mid"))
    shutil.copytree(os.path.join(UP, "atlas", "standard"), os.path.join(www, "standard"))
    shutil.copytree(os.path.join(UP, "bcolz", "carray_int32"),
                    os.path.join(www, "carray_int32"))
    recs = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 40))) for _ in range(9000)]
    dstest.write_tail_bag(os.path.join(www, "a.bag"), recs)  # 72 KB of limits
    os.makedirs(os.path.join(www, "big"))
    rewrite_same_size(www, "big", "ASC")
    return www


def replace_dataset(www, rng):
    """Put other datasets at the same URLs (new bytes, new ETags)."""
    tmp = tempfile.mkdtemp(prefix="ds-new-")
    conn = dstest.connect(BUILD)
    newmid = os.path.join(tmp, "mid.msgpack")
    conn.execute("CREATE VIRTUAL TABLE temp.w USING datadings(%s, mode=create)"
                 % dstest.sql_quote(newmid))
    conn.execute("BEGIN")
    conn.execute("INSERT INTO w(key, raw) SELECT key, raw FROM datadings(%s) "
                 "WHERE rowid %% 3 = 0 ORDER BY rowid DESC"
                 % dstest.sql_quote(os.path.join(UP, "datadings", "mid", "mid.msgpack")))
    conn.execute("COMMIT")
    conn.close()
    later = time.time() + 1000
    for n in os.listdir(tmp):
        if n.startswith("mid.msgpack"):
            dst = os.path.join(www, "mid", n)
            shutil.copy(os.path.join(tmp, n), dst)
            os.utime(dst, (later, later))
    recs = [bytes(rng.getrandbits(8) for _ in range(rng.randrange(1, 40))) for _ in range(8000)]
    dstest.write_tail_bag(os.path.join(www, "a.bag"), recs)
    os.utime(os.path.join(www, "a.bag"), (later, later))
    shutil.rmtree(tmp)


def rewrite_same_size(www, folder, order):
    """Rewrite www/folder/mid.msgpack* from the mid fixture with its samples
    in `order` of rowid (the same sizes, other bytes, a new mtime)."""
    tmp = tempfile.mkdtemp(prefix="ds-same-")
    conn = dstest.connect(BUILD)
    dst = os.path.join(tmp, "mid.msgpack")
    conn.execute("CREATE VIRTUAL TABLE temp.w USING datadings(%s, mode=create)"
                 % dstest.sql_quote(dst))
    conn.execute("BEGIN")
    conn.execute("INSERT INTO w(key, raw) SELECT key, raw FROM datadings(%s) ORDER BY rowid %s"
                 % (dstest.sql_quote(os.path.join(UP, "datadings", "mid", "mid.msgpack")), order))
    conn.execute("COMMIT")
    conn.close()
    rewrite_same_size.t = getattr(rewrite_same_size, "t", time.time() + 2000) + 100
    for n in os.listdir(tmp):
        p = os.path.join(www, folder, n)
        shutil.copy(os.path.join(tmp, n), p)
        os.utime(p, (rewrite_same_size.t, rewrite_same_size.t))
    shutil.rmtree(tmp)


def main():
    t = dstest.Checker()
    rng = random.Random(24)
    www = make_www(rng)
    caches = tempfile.mkdtemp(prefix="ds-rcache-")
    base = dict(os.environ)
    base.pop("DATASETS_REMOTE_CACHE", None)
    base.pop("DATASETS_REMOTE_CACHE_MAX", None)
    base["DATASETS_REMOTE_CACHE_FRESH_MS"] = "0"  # no window (test_remote_fresh.py has it)

    def env_with(cache, **more):
        e = dict(base, DATASETS_REMOTE_CACHE_DIR=os.path.join(caches, cache))
        e.update(more)
        return e

    with Nginx(www) as ng:
        url = ng.url
        want = local_answers(www)
        qs = queries(url)
        main_env = env_with("main")
        main_dir = main_env["DATASETS_REMOTE_CACHE_DIR"]

        # -- cold, then warm in a fresh process --
        ng.clear_log()
        got, _ = run(main_env, qs)
        t.eq(got, want, "cold: answers equal the local read")
        cold = index_gets(ng.requests())
        t.check(len(cold) >= 9, "cold: index bytes are fetched (%d GETs)" % len(cold))
        ents = entries(main_dir)
        t.check(all(parse_entry(b) for b in ents.values()) and len(ents) >= 9,
                "cold: %d valid entries written" % len(ents))
        offs_url = url("mid/mid.msgpack.offsets")
        t.check(entry_name(offs_url, "w") in ents,
                "cold: .offsets kept whole under the hash of its URL")
        ng.clear_log()
        got, _ = run(main_env, qs)
        t.eq(got, want, "warm: answers equal the local read")
        log = ng.requests()
        t.eq(index_gets(log), [], "warm: no GET of index bytes (fresh process)")
        heads = [r for r in log if r[0] == "HEAD" and r[4] == 200]
        t.check(len(heads) >= 9, "warm: objects confirmed by HEAD (%d)" % len(heads))

        # -- freshness window: no request at all for a confirmed entry --
        ng.clear_log()
        got, _ = run(dict(main_env, DATASETS_REMOTE_CACHE_FRESH_MS="600000"), qs[:1])
        log = ng.requests()
        got2, _ = run(dict(main_env, DATASETS_REMOTE_CACHE_FRESH_MS="600000"), qs[:1])
        log2 = ng.requests()[len(log):]
        t.eq(got2, want[:1], "fresh window: answer")
        mid_reqs = [r for r in log2 if r[1].startswith("/mid/mid.msgpack.") and
                    not r[1].endswith(".index") and not r[1].endswith(".index/")]
        t.eq(mid_reqs, [], "fresh window: no request for confirmed index files")

        # -- datasets_remote_stats() against the log (files only: no redirects) --
        stats_qs = qs[:5]
        stats_dir = os.path.join(caches, "stats")
        for label in ("cold", "warm"):
            ng.clear_log()
            got, rows = run(dict(main_env, DATASETS_REMOTE_CACHE_DIR=stats_dir), stats_qs)
            log = ng.requests()
            ep = "http://127.0.0.1:%d" % ng.port
            row = [r for r in rows if r["endpoint"] == ep]
            t.eq(len(rows), 1, "stats %s: one endpoint row" % label)
            if not row:
                continue
            row = row[0]
            t.eq(row["requests"], len(log), "stats %s: requests = the log's lines" % label)
            t.eq(row["bytes"], sum(r[5] for r in log if r[4] < 300),
                 "stats %s: bytes = the log's 2xx body bytes" % label)
            t.eq(row["failures"], sum(1 for r in log if r[4] >= 400),
                 "stats %s: failures = the log's 4xx" % label)
            t.eq(row["retries"], 0, "stats %s: no retries" % label)
            t.check(isinstance(row["wait_ms"], int) and row["wait_ms"] >= 0,
                    "stats %s: wait_ms a count" % label)
            if label == "cold":
                t.check(row["cache_hits"] == 0 and row["cache_misses"] >= 5,
                        "stats cold: misses, no hits", row)
            else:
                whole = sum(1 for r in log if r[0] == "HEAD")
                t.check(row["cache_hits"] >= whole and row["cache_bytes"] >= 3 * 140000,
                        "stats warm: a hit per object, the index bytes served", row)
        conn = dstest.connect(BUILD)
        conn.execute("SELECT count(*) FROM bagz(%s)" % dstest.sql_quote(url("a.bag")))
        before = conn.execute("SELECT sum(requests) FROM datasets_remote_stats('reset')").fetchone()
        after = conn.execute("SELECT count(*) FROM datasets_remote_stats()").fetchone()
        t.check(before[0] and before[0] >= 1 and after == (0,),
                "stats: 'reset' gives the counts, then zeroes them", (before, after))
        t.raises(lambda: conn.execute("SELECT * FROM datasets_remote_stats('nope')").fetchall(),
                 "stats: an unknown action is refused", "unknown action 'nope'")
        conn.close()

        # -- cache off --
        off_dir = os.path.join(caches, "off")
        ng.clear_log()
        got, _ = run(env_with("off"), queries(url, "remote_cache=off"))
        t.eq(got, want, "remote_cache=off: answers")
        t.eq(entries(off_dir), {}, "remote_cache=off: no cache file written")
        got, _ = run(env_with("off", DATASETS_REMOTE_CACHE="off"), qs)
        t.eq(entries(off_dir), {}, "DATASETS_REMOTE_CACHE=off: no cache file written")
        ng.clear_log()
        got, _ = run(main_env, queries(url, "remote_cache=off"))
        t.check(len(index_gets(ng.requests())) >= 9,
                "remote_cache=off: a warm cache is not read either")
        got, _ = run(env_with("off"), qs[:1])
        t.check(len(entries(off_dir)) >= 1, "on again: files written (the check can see them)")

        # -- a cache that cannot be written: the network, silently --
        blocker = os.path.join(caches, "a-file")
        open(blocker, "w").close()
        p = subprocess.run(child_cmd(qs), env=dict(base, DATASETS_REMOTE_CACHE_DIR=
                                                    os.path.join(blocker, "sub")),
                           capture_output=True, text=True, timeout=120)
        ans = json.loads(p.stdout.splitlines()[-1])["answers"] if p.returncode == 0 else None
        t.eq(ans, want, "unwritable cache folder: answers from the network")
        t.eq(p.stderr, "", "unwritable cache folder: nothing printed")

        # -- corruption: a flipped byte, a cut file --
        ents = entries(main_dir)
        wname = entry_name(offs_url, "w")
        pname = entry_name(url("a.bag"), "p")
        ok = wname in ents and pname in ents
        t.check(ok, "corruption: the entries to damage are there")
        if ok:
            _, _, _, start, plen = parse_entry(ents[wname])
            b = bytearray(ents[wname])
            b[start + 77 * 8 + 1] ^= 0x5A  # the offset of sample 77
            with open(os.path.join(main_dir, wname), "wb") as f:
                f.write(bytes(b))
            with open(os.path.join(main_dir, pname), "wb") as f:
                f.write(ents[pname][:len(ents[pname]) // 2])
            ng.clear_log()
            got, _ = run(main_env, qs)
            t.eq(got, want, "corruption: answers equal the local read")
            log = ng.requests()
            t.check(any(r[0] == "GET" and r[1] == "/mid/mid.msgpack.offsets" and r[4] == 206
                        for r in log), "corruption: the damaged .offsets is fetched again")
            t.check(any(r[0] == "GET" and r[1] == "/a.bag" and r[2].startswith("bytes=-")
                        for r in log), "corruption: the cut bagz entry is fetched again")
            ents = entries(main_dir)
            t.check(parse_entry(ents.get(wname, b"")) is not None and
                    parse_entry(ents.get(pname, b"")) is not None,
                    "corruption: both entries rewritten valid")

        # -- staleness: the objects replaced (new ETags) --
        replace_dataset(www, rng)
        want_new = local_answers(www)
        t.check(want_new[0] != want[0] and want_new[3] != want[3],
                "staleness: the new datasets differ from the old")
        ng.clear_log()
        got, _ = run(main_env, qs)
        t.eq(got, want_new, "staleness: a replaced object's new bytes are read")
        log = ng.requests()
        t.check(any(r[1] == "/mid/mid.msgpack.offsets" and r[0] == "GET" for r in log),
                "staleness: the new .offsets fetched")
        new_etag = [r for r in log if r[1] == "/a.bag" and r[0] == "GET"]
        ent = parse_entry(entries(main_dir).get(entry_name(url("a.bag"), "p"), b""))
        t.check(ent and new_etag and new_etag[-1][3] not in ("-", "") and
                ent[2].decode() == new_etag[-1][3].replace("\\x22", '"'),
                "staleness: the entry names the new ETag", (ent and ent[2], new_etag[-1:]))

        # -- staleness with the same sizes: only the ETags tell --
        big_q = ["SELECT count(*), min(key) FROM datadings(%s)" % dstest.sql_quote(url("big/mid.msgpack")),
                 "SELECT key, hex(raw) FROM datadings(%s) WHERE rowid IN (0, 77, 12345)"
                 % dstest.sql_quote(url("big/mid.msgpack")),
                 "SELECT rowid FROM datadings(%s) WHERE key = 'm01234'"
                 % dstest.sql_quote(url("big/mid.msgpack"))]
        conn = dstest.connect(BUILD)
        big_local = [q.replace(url("big/mid.msgpack"), os.path.join(www, "big", "mid.msgpack"))
                     for q in big_q]
        want_fwd = [[list(r) for r in conn.execute(q).fetchall()] for q in big_local]
        got, _ = run(main_env, big_q)
        t.eq(got, want_fwd, "same sizes: first read")
        sizes = {n: os.path.getsize(os.path.join(www, "big", n)) for n in os.listdir(os.path.join(www, "big"))}
        rewrite_same_size(www, "big", "DESC")
        t.eq({n: os.path.getsize(os.path.join(www, "big", n)) for n in sizes}, sizes,
             "same sizes: the replacement has the same sizes")
        # the truth from a fresh connection: `conn`'s table-valued calls
        # look for changed files at most every 100 ms, and this in-place
        # rewrite of the same sizes may come sooner
        fresh = dstest.connect(BUILD)
        want_rev = [[list(r) for r in fresh.execute(q).fetchall()] for q in big_local]
        fresh.close()
        t.check(want_rev[1] != want_fwd[1], "same sizes: the replacement's answers differ")
        got, _ = run(main_env, big_q)
        t.eq(got, want_rev, "same sizes: the new ETags are seen, the new bytes read")
        # whole entries checked on their own: the probe entries gone (as
        # eviction may take them), the whole ones of the old ETags left
        ws = {entry_name(url("big/" + n), "w") for n in sizes}
        olds = {n: b for n, b in entries(main_dir).items() if n in ws}
        rewrite_same_size(www, "big", "ASC")
        for n in sizes:
            pe = os.path.join(main_dir, entry_name(url("big/" + n), "p"))
            if os.path.exists(pe):
                os.remove(pe)
        got, _ = run(main_env, big_q)
        t.check(len(olds) >= 3, "same sizes: whole entries of the old ETags were there (%d)"
                % len(olds))
        t.eq(got, want_fwd, "same sizes: whole entries of an old ETag are not served")
        conn.close()

        # -- two processes filling one cache at once --
        both_dir = os.path.join(caches, "both")
        both_env = env_with("both")
        procs = [subprocess.Popen(child_cmd(qs), env=both_env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
        for i, p in enumerate(procs):
            out, err = p.communicate(timeout=120)
            ans = json.loads(out.splitlines()[-1])["answers"] if p.returncode == 0 else err
            t.eq(ans, want_new, "concurrent: process %d answers" % i)
        names = os.listdir(both_dir)
        t.eq([n for n in names if not parse_entry(open(os.path.join(both_dir, n), "rb").read())],
             [], "concurrent: every file a whole valid entry (no temp file left)")
        ng.clear_log()
        got, _ = run(both_env, qs)
        t.eq(got, want_new, "concurrent: then warm answers")
        t.eq(index_gets(ng.requests()), [], "concurrent: then warm, no GET of index bytes")

        # -- size bound and eviction: three copies of mid (about 235K of
        # entries each) under a 400K bound: eviction goes down to 3/4 of it
        # (300K), so the newest copy fits whole and the oldest must go (a
        # 300K bound left the newest copy's own first entries to chance) --
        for k in (1, 2, 3):
            shutil.copytree(os.path.join(www, "mid"), os.path.join(www, "mid%d" % k))
        lru_env = env_with("lru", DATASETS_REMOTE_CACHE_MAX="400K")
        lru_dir = lru_env["DATASETS_REMOTE_CACHE_DIR"]
        mid_files = [n for n in os.listdir(os.path.join(www, "mid")) if n != "mid.msgpack.md5"]
        names_of = {k: {entry_name(url("mid%d/%s" % (k, n)), s) for n in mid_files
                        for s in "pw"} for k in (1, 2, 3)}
        for k in (1, 2, 3):
            q = "SELECT count(*), sum(length(key)) FROM datadings(%s) WHERE key > 'm0'" \
                % dstest.sql_quote(url("mid%d/mid.msgpack" % k))
            got, _ = run(lru_env, [q])
            t.eq(got[0][0][0], want_new[0][0][0], "lru: mid%d answers" % k)
            total = sum(len(b) for b in entries(lru_dir).values())
            t.check(total <= 400 << 10, "lru: after mid%d the folder holds %d <= 400K"
                    % (k, total))
            if k == 1:
                t.check(names_of[1] & set(entries(lru_dir)),
                        "lru: mid1's entries are written")
        have = set(entries(lru_dir))
        t.eq(sorted(names_of[1] & have), [], "lru: the least recently used (mid1) went")
        kept3 = names_of[3] & have
        t.check(len(kept3) >= 5, "lru: the newest (mid3) stays (%d entries)" % len(kept3))

    # -- S3 (the S3 front, signatures checked when botocore is there): warm
    # opens are signed HEADs, no GET of index bytes --
    root = tempfile.mkdtemp(prefix="ds-s3f-cache-")
    os.makedirs(os.path.join(root, "bkt"))
    for n in ("mid", "a.bag", "standard"):
        src = os.path.join(www, n)
        (shutil.copytree if os.path.isdir(src) else shutil.copy)(src, os.path.join(root, "bkt", n))
    keys = {"AKCACHE": ("cache-secret", None)} if S3SigV4Auth else None
    with Front(root, keys=keys, region="us-east-1") as s3:
        s3_env = env_with("s3", AWS_ENDPOINT_URL=s3.url("").rstrip("/"),
                          AWS_ACCESS_KEY_ID="AKCACHE", AWS_SECRET_ACCESS_KEY="cache-secret",
                          AWS_REGION="us-east-1")
        s3_env.pop("AWS_SESSION_TOKEN", None)
        s3_env.pop("AWS_PROFILE", None)
        s3_qs = queries(lambda n: "s3://bkt/" + n)[:6]
        want_s3 = local_answers(www)[:6]
        got, _ = run(s3_env, s3_qs)
        t.eq(got, want_s3, "s3 cold: answers")
        n0 = len(s3.requests())
        got, rows = run(s3_env, s3_qs)
        t.eq(got, want_s3, "s3 warm: answers")
        log = [(r[1], r[2], r[3] or "", r[4], r[5]) for r in s3.requests()[n0:]]
        gets = [r for r in log if r[0] == "GET" and r[4] and 200 <= r[4] < 300 and
                (r[1].endswith(INDEX_NAMES) or r[2].startswith("bytes=-"))]
        t.eq(gets, [], "s3 warm: no GET of index bytes")
        t.check(sum(1 for r in log if r[0] == "HEAD" and r[4] == 200) >= 6,
                "s3 warm: signed HEADs confirm the entries")
        t.check(sum(r["cache_hits"] for r in rows) >= 6, "s3 warm: cache hits counted", rows)
    shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(www, ignore_errors=True)
    shutil.rmtree(caches, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
