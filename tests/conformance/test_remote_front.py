"""test_remote_front.py - the test servers themselves (s3_front.py), as
the bench uses them: the S3 front with etag_memo (each range sent from
the file by os.sendfile) answers byte for byte as the front that reads
the object into memory (status, headers, body; ETag; 416; the "short",
"reset" and "bad_range" faults); the forwarding proxy in front of nginx
answers as nginx does, streams large bodies, keeps one upstream
connection for the requests of one client connection, and its "short"
and "reset" faults behave as before (a short body then a closed
connection; no answer). Every request has a timeout."""
import http.client
import os
import random
import shutil
import tempfile

import dstest
from remote_servers import Nginx
from s3_front import Front

SKIP = ("date", "server", "last-modified", "connection", "keep-alive")


def ask(port, path, rng=None, conn=None, method="GET"):
    """(status, headers without Date/Server, body) of one request; body is
    ("short", bytes) when the connection closed early, ("error", name) when
    no answer came. conn: an open HTTPConnection to reuse."""
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        c.request(method, path, headers={"Range": rng} if rng else {})
        r = c.getresponse()
        hdrs = sorted((k.lower(), v) for k, v in r.getheaders() if k.lower() not in SKIP)
        try:
            body = r.read()
        except http.client.IncompleteRead as e:
            body = ("short", e.partial)
        return r.status, hdrs, body
    except (http.client.RemoteDisconnected, ConnectionError) as e:
        return None, [], ("error", type(e).__name__)
    finally:
        if conn is None:
            c.close()


def s3_checks(t, root, data):
    with Front(root) as plain, Front(root, etag_memo=True) as memo:
        cases = [None, "bytes=0-99", "bytes=100-", "bytes=-5000", "bytes=5-5",
                 "bytes=0-%d" % (10 * len(data)), "bytes=%d-" % len(data), "bytes=-0",
                 "bytes=%d-%d" % (len(data) - 10, len(data) + 10)]
        for rng in cases:
            want = ask(plain.port, "/bkt/obj.bin", rng)
            got = ask(memo.port, "/bkt/obj.bin", rng)
            t.eq(got, want, "s3 front sendfile: %s as read into memory" % rng)
        t.eq(ask(memo.port, "/bkt/obj.bin", method="HEAD"),
             ask(plain.port, "/bkt/obj.bin", method="HEAD"), "s3 front sendfile: HEAD")
        body = ask(memo.port, "/bkt/obj.bin", "bytes=1000-2999")[2]
        t.eq(body, data[1000:3000], "s3 front sendfile: the file's bytes")
        for fault, rng in (({"short": 10}, "bytes=0-99"), ({"short": 5000}, None),
                           ({"reset": True}, "bytes=0-99"), ({"bad_range": True}, "bytes=-100"),
                           ({"short": 7, "bad_range": True}, "bytes=-100")):
            plain.faults, memo.faults = [dict(fault)], [dict(fault)]
            want = ask(plain.port, "/bkt/obj.bin", rng)
            got = ask(memo.port, "/bkt/obj.bin", rng)
            t.eq(got, want, "s3 front sendfile: fault %r on %s as before" % (fault, rng))
        plain.faults, memo.faults = [{"short": 10}], [{"short": 10}]
        got = ask(memo.port, "/bkt/obj.bin", "bytes=0-99")
        t.eq(got[2], ("short", data[:10]), "short: 10 bytes, then the connection closed")


def proxy_checks(t, root, data):
    with Nginx(root) as ng, Front(upstream=("127.0.0.1", ng.port)) as px:
        for rng in (None, "bytes=0-99", "bytes=-5000", "bytes=%d-" % (len(data) + 5)):
            want = ask(ng.port, "/bkt/obj.bin", rng)
            got = ask(px.port, "/bkt/obj.bin", rng)
            t.eq((got[0], got[2]), (want[0], want[2]), "proxy: %s as nginx answers" % rng)
            t.eq(dict(got[1]).get("content-length"), dict(want[1]).get("content-length"),
                 "proxy: %s Content-Length as nginx's" % rng)
        t.eq(ask(px.port, "/bkt/none.bin")[0], 404, "proxy: nginx's 404 passed on")
        t.eq(ask(px.port, "/bkt/obj.bin", method="HEAD")[:2],
             ask(ng.port, "/bkt/obj.bin", method="HEAD")[:2], "proxy: HEAD as nginx")
        # several requests of one client connection: one upstream connection
        ng.clear_log()
        c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=20)
        try:
            got = [ask(px.port, "/bkt/obj.bin", "bytes=%d-%d" % (i * 1000, i * 1000 + 999),
                       conn=c)[2] for i in range(5)]
        finally:
            c.close()
        t.eq(got, [data[i * 1000:i * 1000 + 1000] for i in range(5)],
             "proxy keep-alive: five ranges on one connection")
        # only the five ranges count: nginx writes a request's log line after
        # its answer, so the HEAD above may be logged after clear_log()
        ranges = {"bytes=%d-%d" % (i * 1000, i * 1000 + 999) for i in range(5)}
        seen = [r for r in ng.requests() if r[2] in ranges]
        t.eq((len(seen), len({r[6] for r in seen})), (5, 1),
             "proxy keep-alive: nginx saw 5 requests on 1 connection")
        # faults: a short body closes the connection, a reset answers nothing;
        # the next request (a new connection) is whole
        px.faults = [{"short": 100}]
        t.eq(ask(px.port, "/bkt/obj.bin")[2], ("short", data[:100]),
             "proxy short: 100 bytes, then closed")
        px.faults = [{"reset": True}]
        got = ask(px.port, "/bkt/obj.bin", "bytes=0-99")
        t.check(got[0] is None and got[2][0] == "error", "proxy reset: no answer", got)
        t.eq(ask(px.port, "/bkt/obj.bin")[2], data, "proxy: whole again after the faults")
        # a fault in the middle of a keep-alive connection: the upstream
        # answer is not left half read for the next request
        c = http.client.HTTPConnection("127.0.0.1", px.port, timeout=20)
        try:
            first = ask(px.port, "/bkt/obj.bin", "bytes=0-9", conn=c)[2]
            px.faults = [{"short": 3}]
            mid = ask(px.port, "/bkt/obj.bin", conn=c)[2]
        finally:
            c.close()
        t.eq((first, mid), (data[:10], ("short", data[:3])),
             "proxy: a short answer on a kept connection")
        t.eq(ask(px.port, "/bkt/obj.bin", "bytes=5-14")[2], data[5:15],
             "proxy: the next connection's answer is its own")


def main():
    t = dstest.Checker()
    root = tempfile.mkdtemp(prefix="ds-front-")
    rng = random.Random(24)
    # larger than the proxy's 1 MiB pieces and sendfile's first write
    data = bytes(rng.getrandbits(8) for _ in range(3 * (1 << 20) + 12345))
    os.makedirs(os.path.join(root, "bkt"))
    with open(os.path.join(root, "bkt", "obj.bin"), "wb") as f:
        f.write(data)
    try:
        t.run(s3_checks, t, root, data)
        t.run(proxy_checks, t, root, data)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    t.exit()


if __name__ == "__main__":
    main()
