"""test_remote_s3rver.py - the client on s3:// paths against s3rver (npm,
pinned; tools/deps.sh), resolved as the backend will resolve them
(AWS_ENDPOINT_URL, keys from the environment, path style, Signature V4 by
remote_sign.c): objects with spaces, unicode, '=' and '+' in their keys read
by range, HEAD and whole; ListObjectsV2 with a prefix and
truncated listings followed by continuation token, and ds_s3_list
(s3_list.c: all pages, sizes, delimiter '/'); a missing key gives
404 NoSuchKey at once. What s3rver gets wrong is checked to be refused,
never taken as data: its answer to a suffix range. And through the S3
front as a proxy in front of s3rver: signatures verified by botocore,
503s retried, request counts."""
import hashlib
import os
import random
import re
import sys

import dstest
from remote_servers import S3rver, run_client
from s3_front import Front

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
BUILD = os.path.join(dstest.ROOT, BUILD) if not os.path.isabs(BUILD) else BUILD


def sha(b):
    return hashlib.sha256(b).hexdigest()


def keys_of(xml):
    return [k for k in re.findall(r"<Key>([^<]*)</Key>", xml)]


def main():
    t = dstest.Checker()
    rng = random.Random(11)
    objs = {
        "train@00000-of-00002.bagz": bytes(rng.getrandbits(8) for _ in range(70_000)),
        "train@00001-of-00002.bagz": bytes(rng.getrandbits(8) for _ in range(1_000)),
        "dir/a b=c+d.bin": b"spaces and equals" * 100,
        "dir/\u00e9t\u00e9/\u4e2d.bin": b"unicode key",
        "dir/sub/x.bin": b"x" * 10,
    }
    with S3rver("bkt") as srv:
        cl = srv.client()
        for k, v in objs.items():
            cl.put_object(Bucket="bkt", Key=k, Body=v)
        env = dict(os.environ, AWS_ENDPOINT_URL=srv.endpoint, AWS_ACCESS_KEY_ID="S3RVER",
                   AWS_SECRET_ACCESS_KEY="S3RVER", AWS_REGION="us-east-1")
        env.pop("AWS_SESSION_TOKEN", None)
        env.pop("AWS_PROFILE", None)
        for k, v in objs.items():
            u = "s3://bkt/" + k
            res, _ = run_client(BUILD, "range", u, 1, min(len(v) - 1, 5000), "head", u,
                                "whole", u, env=env)
            t.check(all(r["ok"] for r in res), "s3rver: %r read" % k, [r["err"] for r in res])
            t.eq(res[0]["sha256"], sha(v[1:1 + min(len(v) - 1, 5000)]), "s3rver: %r range" % k)
            t.eq(res[1]["size"], len(v), "s3rver: %r HEAD size" % k)
            t.eq(res[2]["sha256"], sha(v), "s3rver: %r whole" % k)
        # listings: prefix, delimiter, truncation and continuation tokens
        xml = fetch_list(t, env, "s3://bkt/train@", 1000, "-")
        t.eq(sorted(keys_of(xml)), sorted(k for k in objs if k.startswith("train@")),
             "list by prefix")
        got, token, pages = [], "-", 0
        while pages < 10:  # bounded: 5 keys at 2 a page
            xml = fetch_list(t, env, "s3://bkt/", 2, token)
            got += keys_of(xml)
            pages += 1
            m = re.search(r"<NextContinuationToken>([^<]*)</NextContinuationToken>", xml)
            if "<IsTruncated>true</IsTruncated>" not in xml or not m:
                break
            token = m.group(1).replace("&amp;", "&").replace("&#x2B;", "+")
        t.eq(sorted(got), sorted(objs), "truncated listing followed by continuation token")
        t.eq(pages, 3, "5 keys at 2 a page: 3 pages")
        # ds_s3_list (src/remote/s3_list.c): every page followed, one level
        # with delimiter "/"
        out = list_all(env, "s3://bkt/", 2, "-")
        t.eq((out.get("err"), sorted(out["keys"])), (None, sorted(objs)),
             "ds_s3_list: every key over 3 pages of 2")
        t.eq(dict(zip(out["keys"], out["sizes"])), {k: len(v) for k, v in objs.items()},
             "ds_s3_list: sizes")
        t.eq(out["requests"], 3, "ds_s3_list: 3 requests for 5 keys at 2 a page")
        out = list_all(env, "s3://bkt/dir/", 1000, "/")
        t.eq((out.get("err"), out["keys"], sorted(out["prefixes"])),
             (None, ["dir/a b=c+d.bin"], sorted(["dir/sub/", "dir/\u00e9t\u00e9/"])),
             "ds_s3_list with delimiter '/': one level, sub-levels as prefixes")
        out = list_all(env, "s3://nobucket/", 1000, "-")
        t.check("HTTP 404 NoSuchBucket" in (out.get("err") or ""),
                "ds_s3_list of a missing bucket: 404 NoSuchBucket", out.get("err"))
        # missing key: 404 NoSuchKey at once
        res, _ = run_client(BUILD, "range", "s3://bkt/none.bin", 0, 5, env=env)
        t.check(not res[0]["ok"] and "HTTP 404 NoSuchKey" in res[0]["err"] and
                res[0]["tries"] == 1, "s3rver: 404 NoSuchKey at once", res[0])
        t.check("/bkt/none.bin" in res[0]["err"], "the message names the object", res[0]["err"])
        # what s3rver gets wrong: a suffix range (it answers the first n+1
        # bytes) is refused, never data
        v = objs["train@00000-of-00002.bagz"]
        res, _ = run_client(BUILD, "suffix", "s3://bkt/train@00000-of-00002.bagz", 64, env=env)
        r = res[0]
        t.check(r["ok"] == (r["sha256"] == sha(v[-64:])) and
                (r["ok"] or "answered bytes 0-64/70000" in r["err"]),
                "s3rver's suffix answer is refused (or right), never wrong data", r)
        # ... bytes=0-0 (s3rver answers the whole object), a range of an
        # empty object (a 206 whose one byte never comes): refused at once
        cl.put_object(Bucket="bkt", Key="empty.bin", Body=b"")
        res, _ = run_client(BUILD, "range", "s3://bkt/train@00001-of-00002.bagz", 0, 1,
                            "range", "s3://bkt/empty.bin", 0, 8, env=env)
        r = res[0]
        t.check(r["ok"] == (r["sha256"] == sha(objs["train@00001-of-00002.bagz"][:1])) and
                (r["ok"] or "answered bytes 0-999/1000 to a request for bytes=0-0" in r["err"]),
                "s3rver's answer to bytes=0-0 refused (or right)", r)
        t.check(not res[1]["ok"] and res[1]["len"] == 0 and res[1]["tries"] == 1,
                "s3rver's 206 for an empty object: refused at once", res[1])
        # s3rver ignores If-Match: the ETag check says changed
        res, _ = run_client(BUILD, "--if-match", '"0123"', "range",
                            "s3://bkt/dir/sub/x.bin", 0, 4, env=env)
        t.check(not res[0]["ok"] and res[0]["changed"] and res[0]["len"] == 0,
                "s3rver ignores If-Match: the ETag says changed", res[0])
        # the S3 front as a proxy before s3rver: botocore checks signatures,
        # faults on the way back
        with Front(upstream=("127.0.0.1", srv.port), keys={"S3RVER": ("S3RVER", None)},
                   region="us-east-1") as px:
            env2 = dict(env, AWS_ENDPOINT_URL=px.url("").rstrip("/"))
            px.faults = [{"status": 503, "retry_after": 0}]
            res, cnt = run_client(BUILD, "--backoff-ms", 20, "range",
                                  "s3://bkt/dir/a b=c+d.bin", 3, 40, env=env2)
            t.check(res[0]["ok"] and res[0]["sha256"] == sha(objs["dir/a b=c+d.bin"][3:43]),
                    "through the proxy: signed, retried, right bytes", res[0])
            t.eq((res[0]["tries"], len(px.requests())), (2, 2), "proxy saw 2 requests")
            env3 = dict(env2, AWS_SECRET_ACCESS_KEY="wrong")
            res, _ = run_client(BUILD, "range", "s3://bkt/dir/a b=c+d.bin", 0, 4, env=env3)
            t.check("HTTP 403 SignatureDoesNotMatch" in (res[0]["err"] or ""),
                    "through the proxy: a bad signature refused", res[0]["err"])
    sys.exit(1 if t.failed else 0)


def list_all(env, url, maxkeys, delim):
    """ds_s3_list through the tool: {keys, sizes, prefixes, err, requests}."""
    import json
    import subprocess
    tool = os.path.join(BUILD, "tools", "remote_http")
    p = subprocess.run([tool, "--list-all", url, str(maxkeys), delim], capture_output=True,
                       timeout=120, env=env, text=True)
    return json.loads(p.stdout)


def fetch_list(t, env, url, maxkeys, token):
    """One ListObjectsV2 page (XML text) through the tool."""
    import subprocess
    tool = os.path.join(BUILD, "tools", "remote_http")
    # --dump: the tool prints the body of its (one) request
    p = subprocess.run([tool, "--dump", "list", url, str(maxkeys), token], capture_output=True,
                       timeout=60, env=env)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode()[-500:])
    return p.stdout.decode()


if __name__ == "__main__":
    main()
