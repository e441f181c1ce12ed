"""test_remote_sigv4.py - Signature V4 of our S3 signer (src/remote/s3_sign.c,
driven through build/tools/remote_sign) against botocore's S3SigV4Auth
(Debian's python3-botocore) on randomized requests: keys with spaces,
unicode, '=', '&', '+', '%', '?', '#', '~' and slashes; ListObjectsV2-style
query strings with such values; GET/HEAD/PUT; ranges (from-to and suffix);
If-Match; session tokens; UNSIGNED-PAYLOAD or a payload hash; path-style
and virtual-host-style hosts. Each request must give the same encoded
target (path and query) and the same x-amz-* and Authorization headers.
The seed is printed (DS_SIGV4_SEED=N repeats a run)."""
import datetime
import hashlib
import json
import os
import random
import subprocess
import sys

import dstest

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
TOOL = os.path.join(dstest.ROOT, BUILD, "tools", "remote_sign")
CASES = 400
ALPHABET = ("abcXYZ019-_.~ /=&+%?#:;,@!$'()*[]\"<>\\^`{|}"
            "\u00e9\u00fc\u4e2d\u6587\U0001f600\u0416")


def rand_text(rng, lo, hi):
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(lo, hi)))


def make_case(rng):
    virtual = rng.random() < 0.5
    bucket = rng.choice(["b", "my-bucket", "data.sets"])
    case = {
        "method": rng.choice(["GET", "GET", "HEAD", "PUT"]),
        "host": (bucket + ".s3.us-west-2.amazonaws.com") if virtual
        else rng.choice(["127.0.0.1:9000", "s3.example.org", "[::1]:8443"]),
        "path_prefix": "" if virtual else "/" + bucket,
        "key": rand_text(rng, 1, 24),
        "query": [],
        "region": rng.choice(["us-east-1", "us-west-2", "auto", "eu-central-1"]),
        "now": rng.randint(1_000_000_000, 2_000_000_000),
        "access_key": rng.choice(["AKIDEXAMPLE", "GOOG1EXAMPLE", "minio"]),
        "secret_key": rand_text(rng, 8, 40),
        "payload_hash": None,
    }
    if rng.random() < 0.3:  # a listing
        case["key"] = ""
        case["method"] = "GET"
        q = [["list-type", "2"], ["prefix", rand_text(rng, 0, 12)]]
        if rng.random() < 0.5:
            q.append(["delimiter", "/"])
        if rng.random() < 0.5:
            q.append(["continuation-token", rand_text(rng, 4, 30)])
        if rng.random() < 0.3:
            q.append(["start-after", rand_text(rng, 1, 10)])
        rng.shuffle(q)
        case["query"] = q
    elif rng.random() < 0.2:
        case["query"] = [["versionId", rand_text(rng, 1, 10)]]
    if case["method"] == "GET" and not case["query"] and rng.random() < 0.7:
        a = rng.randint(0, 1 << 40)
        case["range"] = rng.choice(["bytes=%d-%d" % (a, a + rng.randint(0, 1 << 20)),
                                    "bytes=-%d" % rng.randint(1, 1 << 16)])
    if case["method"] != "PUT" and rng.random() < 0.5:
        case["if_match"] = '"%032x"' % rng.getrandbits(128)
    if rng.random() < 0.4:
        case["session_token"] = rand_text(rng, 10, 60)
    if case["method"] == "PUT" or rng.random() < 0.3:
        body = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 64)))
        case["payload_hash"] = hashlib.sha256(body).hexdigest()
    return case


def botocore_sign(case):
    """What botocore sends for the case: target and signed headers."""
    path = case["path_prefix"] + "/" + percent_encode(case["key"], safe="/~")
    query = "&".join("%s=%s" % (percent_encode(k), percent_encode(v))
                     for k, v in case["query"])
    url = "https://" + case["host"] + path + ("?" + query if query else "")
    headers = {}
    if case.get("range"):
        headers["Range"] = case["range"]
    if case.get("if_match"):
        headers["If-Match"] = case["if_match"]
    req = AWSRequest(method=case["method"], url=url, headers=headers)
    creds = Credentials(case["access_key"], case["secret_key"], case.get("session_token"))
    auth = S3SigV4Auth(creds, "s3", case["region"])
    req.context["timestamp"] = datetime.datetime.fromtimestamp(
        case["now"], datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    auth._modify_request_before_signing(req)
    del req.headers["X-Amz-Content-SHA256"]  # (setting a header adds one)
    req.headers["X-Amz-Content-SHA256"] = case["payload_hash"] or "UNSIGNED-PAYLOAD"
    creq = auth.canonical_request(req)
    sts = auth.string_to_sign(req, creq)
    auth._inject_signature_to_request(req, auth.signature(sts, req))
    want = {k.lower(): v for k, v in req.headers.items()
            if k.lower() not in ("range", "if-match")}
    return path + ("?" + _sorted_query(case) if case["query"] else ""), want


def _sorted_query(case):
    pairs = sorted((percent_encode(k), percent_encode(v)) for k, v in case["query"])
    return "&".join("%s=%s" % p for p in pairs)


def main():
    t = dstest.Checker()
    seed = int(os.environ.get("DS_SIGV4_SEED", "0")) or random.SystemRandom().randint(1, 1 << 30)
    print("seed", seed)
    rng = random.Random(seed)
    cases = [make_case(rng) for _ in range(CASES)]
    proc = subprocess.run([TOOL], input="".join(json.dumps(c) + "\n" for c in cases),
                          capture_output=True, text=True, timeout=120)
    outs = [json.loads(line) for line in proc.stdout.splitlines()]
    t.eq(len(outs), CASES, "remote_sign answers every request")
    bad = []
    for case, out in zip(cases, outs):
        target, want = botocore_sign(case)
        got = {k.lower(): v for k, v in out.get("headers", {}).items()}
        if out.get("target") != target or got != want:
            bad.append((case, out, target, want))
    t.check(not bad, "%d randomized S3 requests signed as botocore signs them (seed %d)"
            % (CASES, seed), "first mismatch: %r" % (bad[0],) if bad else "")
    # the random cases covered what they are meant to cover
    t.check(sum(1 for c in cases if c.get("session_token")) > 50, "cases with session tokens")
    t.check(sum(1 for c in cases if c["query"]) > 50, "cases with query strings")
    t.check(sum(1 for c in cases if (c.get("range") or "").startswith("bytes=-")) > 20,
            "cases with suffix ranges")
    t.check(sum(1 for c in cases if c["payload_hash"] is None) > 50, "unsigned payloads")
    # a changed secret changes the signature (the comparison can fail)
    c = dict(cases[0], secret_key=cases[0]["secret_key"] + "x")
    out = json.loads(subprocess.run([TOOL], input=json.dumps(c) + "\n", capture_output=True,
                                    text=True, timeout=60).stdout)
    t.check(out["headers"]["Authorization"] != botocore_sign(cases[0])[1]["authorization"],
            "a different secret gives a different Authorization")
    sys.exit(1 if t.failed else 0)


if __name__ == "__main__":
    main()
