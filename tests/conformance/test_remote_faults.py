"""test_remote_faults.py - the HTTP range client (build/tools/remote_http)
against the fault-injecting S3 front (tests/conformance/s3_front.py):
retries on 503/429/500 (honouring Retry-After), connection resets, short
bodies and timeouts, bounded by --retries, counted in the front's request
log; 403/404 fail at once with the status and S3's error code; Signature V4
verified by botocore on the server side (right keys, a wrong secret, a
session token); an object replaced between reads gives "changed" (through
If-Match, and through the ETag when the server ignores If-Match); a
Content-Range other than the one asked (s3rver's suffix answer) is an
error, never data; a cancel flag ends a batch waiting on Retry-After."""
import hashlib
import os
import random
import shutil
import sys
import tempfile

import dstest
from remote_servers import run_client
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD
FAST = ["--backoff-ms", 20]


def sha(b):
    return hashlib.sha256(b).hexdigest()


def main():
    t = dstest.Checker()
    rng = random.Random(7)
    root = tempfile.mkdtemp(prefix="ds-s3front-")
    data = bytes(rng.getrandbits(8) for _ in range(100_000))
    os.makedirs(os.path.join(root, "bkt", "dir"))
    with open(os.path.join(root, "bkt", "dir", "obj.bin"), "wb") as f:
        f.write(data)
    env = dict(os.environ)
    try:
        with Front(root) as s3:
            u = s3.url("bkt/dir/obj.bin")

            def run(*args, faults=(), always=None):
                s3.faults = list(faults)
                s3.always = always or {}
                s3.log.clear()
                return run_client(BUILD, *FAST, *args, env=env)

            res, cnt = run("range", u, 10, 100)
            t.check(res[0]["ok"] and res[0]["sha256"] == sha(data[10:110]), "a plain range")
            t.eq(len(s3.requests()), 1, "one request")
            # a 206's length is known: its body is one buffer of that size
            # (not grown by doubling to 131072, copying what came each time)
            res, _ = run("range", u, 1000, 70000, "range", u, 0, 100000)
            t.check(all(r["ok"] for r in res) and res[0]["sha256"] == sha(data[1000:71000]),
                    "a 70,000-byte range", res[0])
            t.eq([(r["len"], r["cap"]) for r in res], [(70000, 70000), (100000, 100000)],
                 "range answers kept in buffers of exactly their length")
            # a range past the object's end (how a small file is read
            # ahead whole): the buffer has the answer's length, not the
            # asked one (a 4 MiB buffer per small bcolz chunk file before)
            res, _ = run("range", u, 50000, 4 << 20)
            t.check(res[0]["ok"] and res[0]["sha256"] == sha(data[50000:]),
                    "a range past the end: the object's last bytes", res[0])
            t.eq((res[0]["len"], res[0]["cap"]), (50000, 50000),
                 "... kept in a buffer of the answer's length, not the range's")
            s3.log.clear()
            t.eq(res[0]["version_id"], "v" + hashlib.md5(data).hexdigest()[:8],
                 "S3's x-amz-version-id kept")
            # 503 with Retry-After: 1, then fine
            res, cnt = run("range", u, 10, 100, faults=[{"status": 503, "retry_after": 1}])
            t.check(res[0]["ok"] and res[0]["sha256"] == sha(data[10:110]),
                    "503 then the bytes", res[0])
            t.eq((res[0]["tries"], cnt["retries"], len(s3.requests())), (2, 1, 2),
                 "503: two tries, one retry, two requests seen")
            log = s3.requests()
            t.check(log[1][0] - log[0][0] >= 0.95, "Retry-After: 1 waited (at least 1 s)",
                    log[1][0] - log[0][0])
            # 429 twice, 500 once
            res, _ = run("range", u, 0, 5, faults=[{"status": 429}, {"status": 429},
                                                   {"status": 500}])
            t.check(res[0]["ok"] and res[0]["tries"] == 4, "429, 429, 500, then the bytes",
                    res[0])
            # a reset connection and a short body
            res, _ = run("range", u, 0, 5000, "suffix", u, 3000,
                         faults=[{"reset": True}, {"short": 100}])
            t.check(all(r["ok"] for r in res), "reset and short body: retried", res)
            t.eq((res[0]["sha256"], res[1]["sha256"]), (sha(data[:5000]), sha(data[-3000:])),
                 "reset and short body: the right bytes after")
            t.eq(sum(r["tries"] for r in res), 4, "two faults, four tries")
            # bounded: 503 forever with --retries 2
            res, cnt = run("--retries", 2, "range", u, 0, 5, always={"status": 503})
            e = res[0]["err"] or ""
            t.check(not res[0]["ok"] and "HTTP 503 SlowDown" in e and "after 3 tries" in e,
                    "503 forever: fails after 3 tries", e)
            t.eq(len(s3.requests()), 3, "503 forever: 3 requests, no more")
            # timeouts: a server slower than timeout_ms, retried then failed
            res, _ = run("--retries", 1, "--timeout-ms", 300, "range", u, 0, 5,
                         always={"delay": 1.0})
            t.check(not res[0]["ok"] and res[0]["tries"] == 2 and
                    "imed out" in (res[0]["err"] or ""), "timeouts: retried, bounded", res[0])
            # 404 / 403 at once
            res, _ = run("range", s3.url("bkt/none.bin?X-Amz-Signature=abc"), 0, 5)
            e = res[0]["err"] or ""
            t.check("HTTP 404 NoSuchKey" in e and res[0]["tries"] == 1 and "abc" not in e,
                    "404 NoSuchKey at once, no query string", e)
            # the object replaced between two reads: If-Match
            res, _ = run("head", u)
            etag = res[0]["etag"]
            new = bytes(reversed(data))
            # replaced before the batch, atomically (a replace fault on the
            # first request raced the second, which the front served from
            # the old file in parallel: seen once under ASan)
            path = os.path.join(root, "bkt", "dir", "obj.bin")
            with open(path + ".new", "wb") as f:
                f.write(new)
            os.replace(path + ".new", path)
            res, _ = run("--if-match", etag, "range", u, 0, 10, "range", u, 50, 10)
            t.check(all(not r["ok"] and r["changed"] for r in res),
                    "replaced: both reads say changed", res)
            t.check(all(r["status"] == 412 for r in res), "replaced: 412 from If-Match")
            t.check(all("changed while it was read" in (r["err"] or "") for r in res),
                    "replaced: the message", res[0]["err"])
            # ... and when the server ignores If-Match: the ETag tells
            res, _ = run("--if-match", etag, "range", u, 0, 10, always={"ignore_if_match": True})
            t.check(not res[0]["ok"] and res[0]["changed"] and res[0]["status"] == 206,
                    "If-Match ignored: the ETag says changed, no bytes", res[0])
            t.eq(res[0]["len"], 0, "If-Match ignored: no bytes kept")
            with open(os.path.join(root, "bkt", "dir", "obj.bin"), "wb") as f:
                f.write(data)
            # a wrong Content-Range (s3rver's answer to a suffix)
            res, _ = run("suffix", u, 64, always={"bad_range": True})
            e = res[0]["err"] or ""
            t.check(not res[0]["ok"] and "answered bytes 0-64/100000" in e and
                    res[0]["len"] == 0 and res[0]["tries"] == 1,
                    "a Content-Range not asked for is an error, never data", e)
            # cancel while waiting on Retry-After
            res, _ = run("--cancel-after-ms", 300, "range", u, 0, 5,
                         faults=[{"status": 503, "retry_after": 30}])
            t.check(not res[0]["ok"] and res[0]["err"] == "interrupted" and res[0]["tries"] == 1,
                    "cancel ends a batch waiting 30 s on Retry-After", res[0])
            # parallel with added latency: every range right, one request each
            offs = [rng.randrange(0, len(data) - 500) for _ in range(30)]
            args = []
            for o in offs:
                args += ["range", u, o, 500]
            res, cnt = run(*args, always={"delay": 0.025})
            t.check(all(r["ok"] and r["sha256"] == sha(data[o:o + 500])
                        for r, o in zip(res, offs)), "30 ranges with 25 ms added: right bytes")
            t.eq((len(s3.requests()), cnt["retries"]), (30, 0), "30 ranges: 30 requests")

        # signatures checked by botocore on the server
        keys = {"AKIDTEST": ("secret with spaces/+=", None),
                "AKIDTOKEN": ("tok-secret", "FwoGZXIvYXdzE//token+=")}
        with Front(root, keys=keys, region="eu-west-1") as s3:
            u = s3.url("bkt/dir/obj.bin")

            def signed(ak, secret, token=None, *args):
                e = dict(os.environ, AWS_ACCESS_KEY_ID=ak, AWS_SECRET_ACCESS_KEY=secret)
                e.pop("AWS_SESSION_TOKEN", None)
                if token:
                    e["AWS_SESSION_TOKEN"] = token
                s3.log.clear()
                return run_client(BUILD, *FAST, "--sign-s3", "eu-west-1", *args, env=e)[0]

            res = signed("AKIDTEST", "secret with spaces/+=", None, "range", u, 5, 50,
                         "suffix", u, 7, "head", u, "whole", u)
            t.check(all(r["ok"] for r in res), "signed GET/suffix/HEAD/whole accepted by botocore",
                    [r["err"] for r in res])
            t.eq(res[0]["sha256"], sha(data[5:55]), "signed range: bytes")
            res = signed("AKIDTEST", "wrong", None, "range", u, 5, 50)
            e = res[0]["err"] or ""
            t.check("HTTP 403 SignatureDoesNotMatch" in e and res[0]["tries"] == 1,
                    "a wrong secret: 403 SignatureDoesNotMatch at once", e)
            t.check("wrong" not in e, "the secret is not in the message", e)
            res = signed("AKIDTOKEN", "tok-secret", "FwoGZXIvYXdzE//token+=", "range", u, 0, 9)
            t.check(res[0]["ok"], "a session token sent and signed", res[0]["err"])
            res = signed("AKIDTOKEN", "tok-secret", None, "range", u, 0, 9)
            t.check("HTTP 403 InvalidToken" in (res[0]["err"] or ""), "no token: refused",
                    res[0]["err"])
            s3.log.clear()
            res, _ = run_client(BUILD, "range", u, 0, 9, env=env)
            t.check("HTTP 403 AccessDenied" in (res[0]["err"] or ""), "unsigned: AccessDenied")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if t.failed else 0)


if __name__ == "__main__":
    main()
