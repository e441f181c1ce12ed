"""test_remote_http.py - the HTTP range client (src/remote/http.c, through
build/tools/remote_http) against nginx over http and https (a CA made at
test time): range, suffix, whole and HEAD requests give the file's bytes,
size and ETag; the access log shows one request per read and parallel
batches; If-Match; a server ignoring Range (nginx max_ranges 0) is refused
above small_whole and cut below it; 404 fails at once naming the URL
without its query string; TLS is verified (CURL_CA_BUNDLE honoured);
redirects bounded and never to another scheme or to file://; many threads
at once; connections reused across batches; libcurl is not loaded until
the first request, nor by the extension at .load and a local query."""
import hashlib
import os
import random
import sqlite3
import subprocess
import sys
import tempfile

import dstest
from remote_servers import Nginx, run_client

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD


def sha(b):
    return hashlib.sha256(b).hexdigest()


def main():
    t = dstest.Checker()
    rng = random.Random(23)
    root = tempfile.mkdtemp(prefix="ds-www-")
    big = bytes(rng.getrandbits(8) for _ in range(300_000))
    small = b"0123456789"
    files = {"big.bin": big, "small.bin": small, "empty.bin": b"",
             "dir/with space.bin": big[:5000]}
    for name, data in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    env = dict(os.environ)
    with Nginx(root) as ng:
        env["CURL_CA_BUNDLE"] = ng.ca
        for tls in (False, True):
            tag = "https" if tls else "http"
            u = ng.url("big.bin", tls)
            ng.clear_log()
            res, cnt = run_client(BUILD, "--maps", "range", u, 1000, 4096, "suffix", u, 777,
                                  "whole", ng.url("small.bin", tls), "head", u,
                                  "range", u, len(big) - 10, 100, env=env)
            t.check(all(r["ok"] for r in res), tag + ": five requests succeed",
                    [r["err"] for r in res])
            t.eq(res[0]["sha256"], sha(big[1000:5096]), tag + ": range bytes")
            t.eq(res[0]["size"], len(big), tag + ": range gives the size")
            t.eq(res[1]["sha256"], sha(big[-777:]), tag + ": suffix bytes")
            t.eq(res[1]["size"], len(big), tag + ": suffix gives the size")
            t.eq(res[2]["sha256"], sha(small), tag + ": whole object")
            t.eq((res[3]["size"], res[3]["len"]), (len(big), 0), tag + ": HEAD size, no body")
            t.check(res[3]["etag"] and res[3]["etag"] == res[0]["etag"], tag + ": ETag")
            t.eq(res[4]["sha256"], sha(big[-10:]), tag + ": a range past the end is clipped")
            t.eq(cnt["requests"], 5, tag + ": five requests made")
            t.eq(len(ng.requests()), 5, tag + ": nginx saw five requests")
            t.eq(sorted(r[2] for r in ng.requests() if r[0] == "GET" and r[2] != "-"),
                 sorted(["bytes=1000-5095", "bytes=-777",
                         "bytes=%d-%d" % (len(big) - 10, len(big) + 89)]),
                 tag + ": Range headers sent")
            t.eq((cnt["curl_before"], cnt["curl_after"]), (False, True),
                 tag + ": libcurl loaded at the first request, not before")
        # a parallel batch, and the same batch on 4 threads at once
        offs = [rng.randrange(0, len(big) - 1) for _ in range(40)]
        args = []
        for o in offs:
            args += ["range", ng.url("big.bin", True), o, 2000]
        ng.clear_log()
        res, cnt = run_client(BUILD, "--threads", 4, *args, env=env)
        t.eq(len(res), 160, "4 threads x 40 ranges answered")
        t.check(all(r["ok"] and r["sha256"] == sha(big[o:o + 2000])
                    for r, o in zip(res, offs * 4)), "every range of 4 threads has its bytes")
        t.eq(cnt["requests"], 160, "160 requests, no retry")
        t.eq(len(ng.requests()), 160, "nginx saw 160 requests")
        # connections reused from one batch to the next (the session pool)
        for tls in (False, True):
            ng.clear_log()
            run_client(BUILD, "--repeat", 3, "range", ng.url("small.bin", tls), 0, 4, env=env)
            conns = [r[6] for r in ng.requests()]
            t.check(len(conns) == 3 and len(set(conns)) == 1,
                    "%s: 3 batches in a row, one connection" % ("https" if tls else "http"),
                    conns)
        # If-Match
        etag = res[0]["etag"]
        u = ng.url("big.bin")
        res, _ = run_client(BUILD, "--if-match", etag, "range", u, 0, 10, env=env)
        t.check(res[0]["ok"] and res[0]["sha256"] == sha(big[:10]), "If-Match with the ETag reads")
        res, _ = run_client(BUILD, "--if-match", '"0-0"', "range", u, 0, 10, env=env)
        t.check(not res[0]["ok"] and res[0]["changed"] and res[0]["tries"] == 1,
                "If-Match with another ETag: changed, at once", res[0])
        t.check("changed while it was read" in (res[0]["err"] or ""), "changed: the message",
                res[0]["err"])
        # a server that ignores Range
        res, _ = run_client(BUILD, "range", ng.url("norange/big.bin"), 10, 10, env=env)
        t.check(not res[0]["ok"] and "ignored the Range header" in res[0]["err"],
                "Range ignored on a large object: refused", res[0]["err"])
        t.eq(res[0]["tries"], 1, "Range ignored: not retried")
        res, _ = run_client(BUILD, "range", ng.url("norange/small.bin"), 3, 4,
                            "suffix", ng.url("norange/small.bin"), 5, env=env)
        t.check(res[0]["ok"] and res[0]["sha256"] == sha(small[3:7]) and res[0]["size"] == 10,
                "Range ignored on a small object: the range cut from it", res[0])
        t.check(res[1]["ok"] and res[1]["sha256"] == sha(small[-5:]),
                "Range ignored, suffix cut from a small object", res[1])
        res, _ = run_client(BUILD, "--small-whole", 5, "range", ng.url("norange/small.bin"), 3, 4,
                            env=env)
        t.check(not res[0]["ok"] and "over 5 bytes" in res[0]["err"],
                "small_whole is the stated size", res[0]["err"])
        # an empty object
        res, _ = run_client(BUILD, "suffix", ng.url("empty.bin"), 64, "whole",
                            ng.url("empty.bin"), "range", ng.url("empty.bin"), 0, 8, env=env)
        t.check(res[0]["ok"] and res[0]["size"] == 0 and res[0]["len"] == 0,
                "suffix of an empty object: size 0", res[0])
        t.check(res[1]["ok"] and res[1]["len"] == 0, "whole empty object", res[1])
        t.check(not res[2]["ok"] and "beyond the end" in res[2]["err"],
                "range of an empty object: beyond the end", res[2])
        # encoded paths
        res, _ = run_client(BUILD, "range", ng.url("dir/with%20space.bin"), 0, 100, env=env)
        t.check(res[0]["ok"] and res[0]["sha256"] == sha(big[:100]), "an encoded path")
        # 404: at once, URL named without query or user info
        res, _ = run_client(BUILD, "range",
                            ng.url("nope.bin?X-Amz-Signature=SECRETSIG&token=T0K"), 0, 10,
                            "range", ng.url("nope.bin").replace("http://", "http://user:PASSWD@"),
                            0, 10, env=env)
        e = res[0]["err"] or ""
        t.check(not res[0]["ok"] and "HTTP 404" in e and ng.url("nope.bin") in e,
                "404 names the URL and the status", e)
        t.check("SECRETSIG" not in e and "T0K" not in e and "?" not in e,
                "404: no query string in the message", e)
        t.check("PASSWD" not in (res[1]["err"] or "") and "HTTP 404" in (res[1]["err"] or ""),
                "404: no user info in the message", res[1]["err"])
        t.eq((res[0]["tries"], res[0]["status"]), (1, 404), "404: one try")
        # TLS verified: without our CA the certificate is refused, once
        env2 = dict(env)
        env2.pop("CURL_CA_BUNDLE")
        env2.pop("SSL_CERT_FILE", None)
        res, _ = run_client(BUILD, "range", ng.url("small.bin", True), 0, 4, env=env2)
        t.check(not res[0]["ok"] and res[0]["tries"] == 1 and "certificate" in res[0]["err"],
                "https without the CA: refused, not retried", res[0])
        env2["SSL_CERT_FILE"] = ng.ca
        res, _ = run_client(BUILD, "range", ng.url("small.bin", True), 0, 4, env=env2)
        t.check(res[0]["ok"], "SSL_CERT_FILE honoured", res[0]["err"])
        # redirects: same scheme followed, other schemes and loops refused
        res, _ = run_client(BUILD, "range", ng.url("moved/small.bin"), 0, 4,
                            "range", ng.url("to-https/small.bin"), 0, 4,
                            "range", ng.url("to-http/small.bin", True), 0, 4,
                            "range", ng.url("to-file/x"), 0, 4,
                            "range", ng.url("loop/x"), 0, 4, env=env)
        t.check(res[0]["ok"] and res[0]["sha256"] == sha(small[:4]), "a same-scheme redirect")
        refused = "a redirect to another scheme is refused"
        t.check(not res[1]["ok"] and res[1]["tries"] == 1 and refused in res[1]["err"],
                "http to https redirect refused", res[1])
        t.check(not res[2]["ok"] and res[2]["tries"] == 1 and refused in res[2]["err"],
                "https to http redirect refused", res[2])
        t.check(not res[3]["ok"] and res[3]["tries"] == 1 and refused in res[3]["err"],
                "redirect to file:// refused", res[3])
        t.check(not res[4]["ok"] and res[4]["tries"] == 1 and "redirects" in res[4]["err"],
                "a redirect loop is bounded", res[4])
        # other schemes are never fetched
        res, _ = run_client(BUILD, "range", "file:///etc/passwd", 0, 4,
                            "range", "ftp://127.0.0.1/x", 0, 4, env=env)
        t.check(not res[0]["ok"] and "only http" in res[0]["err"] and res[0]["tries"] == 0,
                "file:// refused", res[0])
        t.check(not res[1]["ok"] and res[1]["tries"] == 0, "ftp:// refused", res[1])
    # the extension loads no libcurl at .load and for a local query
    code = ("import sqlite3,sys\n"
            "c=sqlite3.connect(':memory:'); c.enable_load_extension(True)\n"
            "c.load_extension(sys.argv[1])\n"
            "c.execute(\"select count(*) from bagz(?)\", (sys.argv[2],)).fetchall()\n"
            "print('libcurl' in open('/proc/self/maps').read())\n")
    fixture = [os.path.join(dp, f) for dp, _, fs in os.walk(dstest.FIXTURES)
               for f in fs if f.endswith(".bagz")][0]
    p = subprocess.run(dstest_preload([sys.executable, "-c", code,
                                       os.path.join(BUILD, "datasets"), fixture]),
                       capture_output=True, text=True, timeout=60)
    t.eq(p.stdout.strip(), "False", "no libcurl after .load and a local query " + p.stderr[-300:])
    nd = subprocess.run(["readelf", "-d", os.path.join(BUILD, "datasets.so")],
                        capture_output=True, text=True, timeout=60).stdout
    t.check("libcurl" not in nd and "NEEDED" in nd, "datasets.so does not link libcurl")
    sys.exit(1 if t.failed else 0)


def dstest_preload(cmd):
    """Under make asan the stock python needs libasan first (tests/run.sh)."""
    pre = os.environ.get("DS_PRELOAD")
    return (["env", "LD_PRELOAD=" + pre] + cmd) if pre else cmd


if __name__ == "__main__":
    main()
