"""s3_front.py - a small S3 front and fault-injecting server of the remote
tests, run in a thread of the test (127.0.0.1, a free port):

- serves objects from a folder, path style (/bucket/key = folder/bucket/key),
  or forwards every request to an upstream server (nginx, s3rver) and adds
  its faults on the way back;
- answers ranges as S3 documents them (bytes=a-b, a-, -n; 206 with
  Content-Range; 416 "bytes */N"), ETags (MD5), If-Match (412
  PreconditionFailed), 404 NoSuchKey, HEAD, and ListObjectsV2 (prefix,
  delimiter, max-keys, continuation-token);
- verifies each request's Signature V4 with botocore when given keys
  (403 SignatureDoesNotMatch / InvalidAccessKeyId / AccessDenied);
- injects faults from a queue, one per request, or for every request:
  added latency, 503/429/500 with Retry-After, connection resets, short
  bodies, a wrong Content-Range (as s3rver answers suffix ranges), an
  ignored If-Match, and an object replaced between requests;
- logs every request (time, method, path, Range, If-Match, status) so the
  tests count them.
Every handler is bounded: no loop waits on anything but its own request."""
import datetime
import hashlib
import http.server
import os
import socket
import socketserver
import threading
import time
import urllib.parse
import http.client
from xml.sax.saxutils import escape

try:
    from botocore.auth import S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials
except ImportError:  # the signature check needs botocore (tools/deps.sh)
    S3SigV4Auth = None


def _xml_error(code, message, resource=""):
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>%s</Code>'
            '<Message>%s</Message><Resource>%s</Resource></Error>'
            % (code, escape(message), escape(resource))).encode()


class Front(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """The server. Attributes the tests set:
    faults: a list of per-request faults, taken first in, e.g.
        {"status": 503, "retry_after": 1}, {"reset": True},
        {"short": 10} (send only 10 bytes of the body),
        {"bad_range": True} (answer a suffix with the first n+1 bytes),
        {"ignore_if_match": True}, {"delay": 0.2},
        {"replace": ("bucket/key", b"new bytes")} (before answering);
    always: one fault applied to every request (after the queue);
    keys: {access_key: (secret, token or None)}: verify signatures;
    log: [[t, method, path, range, if_match, status]] (status None until
        answered; requests() gives tuples);
    inflight, max_inflight: requests being answered now, and the most at
        once since max_inflight was last set to 0 (overlapping requests)."""
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root=None, upstream=None, keys=None, region=None):
        super().__init__(("127.0.0.1", 0), Handler)
        self.root = root
        self.upstream = upstream  # (host, port) or None
        self.keys = keys or {}
        self.region = region
        self.faults = []
        self.always = {}
        self.log = []
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        self.thread = None

    @property
    def port(self):
        return self.server_address[1]

    def url(self, path):
        return "http://127.0.0.1:%d/%s" % (self.port, path.lstrip("/"))

    def __enter__(self):
        self.thread = threading.Thread(target=self.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=10)

    def next_fault(self):
        with self.lock:
            f = self.faults.pop(0) if self.faults else {}
        return dict(self.always, **f)

    def record(self, *row):
        """Log a request as it arrives; its status is set when answered."""
        entry = [time.monotonic()] + list(row) + [None]
        with self.lock:
            self.log.append(entry)
        return entry

    def handle_error(self, request, client_address):
        pass  # a client gone mid-answer (timeouts, resets) is expected here

    def requests(self, method=None):
        with self.lock:
            return [tuple(r) for r in self.log if method is None or r[1] == method]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):  # quiet: the tests read server.log
        pass

    def do_GET(self):
        self._serve("GET")

    def do_HEAD(self):
        self._serve("HEAD")

    # -- helpers ---------------------------------------------------------
    def _send(self, status, headers, body, fault):
        self.entry[-1] = status
        if fault.get("reset"):
            # close without an answer: a reset for the client
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       b"\x01\x00\x00\x00\x00\x00\x00\x00")
            self.close_connection = True
            return
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if not any(k.lower() == "content-length" for k, _ in headers):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command == "HEAD":
            return
        if "short" in fault:
            self.wfile.write(body[:fault["short"]])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def _error(self, status, code, message, fault, extra=()):
        self._send(status, [("Content-Type", "application/xml")] + list(extra),
                   _xml_error(code, message, self.path.split("?")[0]), fault)

    def _check_signature(self):
        """None when fine (or not checked), else (code, message)."""
        srv = self.server
        if not srv.keys:
            return None
        auth = self.headers.get("Authorization")
        if not auth:
            return ("AccessDenied", "Access Denied")
        try:
            parts = dict(p.strip().split("=", 1) for p in auth.split(" ", 1)[1].split(","))
            ak, date, region, service, _ = parts["Credential"].split("/")
            signed = parts["SignedHeaders"].split(";")
            sig = parts["Signature"]
        except (ValueError, KeyError, IndexError):
            return ("AuthorizationHeaderMalformed", "malformed Authorization")
        if ak not in srv.keys:
            return ("InvalidAccessKeyId", "unknown access key")
        secret, token = srv.keys[ak]
        if token is not None and self.headers.get("x-amz-security-token") != token:
            return ("InvalidToken", "bad session token")
        if srv.region and region != srv.region:
            return ("AuthorizationHeaderMalformed", "wrong region " + region)
        url = "http://%s%s" % (self.headers.get("Host"), self.path)
        hdrs = {h: self.headers.get(h) for h in signed if h != "host"}
        if any(v is None for v in hdrs.values()):
            return ("SignatureDoesNotMatch", "a signed header is missing")
        req = AWSRequest(method=self.command, url=url, headers=hdrs)
        req.context["timestamp"] = self.headers.get("x-amz-date") or ""
        signer = S3SigV4Auth(Credentials(ak, secret, token), service, region)
        creq = signer.canonical_request(req)
        want = signer.signature(signer.string_to_sign(req, creq), req)
        if want != sig:
            return ("SignatureDoesNotMatch", "The request signature we calculated "
                    "does not match the signature you provided.")
        return None

    # -- the request -----------------------------------------------------
    def _serve(self, method):
        srv = self.server
        with srv.lock:
            srv.inflight += 1
            srv.max_inflight = max(srv.max_inflight, srv.inflight)
        try:
            self._serve1(method)
        finally:
            with srv.lock:
                srv.inflight -= 1

    def _serve1(self, method):
        srv = self.server
        self.entry = srv.record(self.command, self.path.split("?")[0],
                                self.headers.get("Range"), self.headers.get("If-Match"))
        fault = srv.next_fault()
        if "delay" in fault:
            time.sleep(min(float(fault["delay"]), 30.0))
        bad = self._check_signature()
        if bad:
            return self._error(403, bad[0], bad[1], fault)
        if "replace" in fault and srv.root:
            rel, data = fault["replace"]
            with open(os.path.join(srv.root, rel), "wb") as f:
                f.write(data)
        if "status" in fault:
            extra = [("Retry-After", str(fault["retry_after"]))] if "retry_after" in fault else []
            codes = {503: "SlowDown", 500: "InternalError", 429: "TooManyRequests",
                     502: "BadGateway", 504: "GatewayTimeout", 408: "RequestTimeout"}
            return self._error(fault["status"], codes.get(fault["status"], "Error"),
                               "injected", fault, extra)
        if srv.upstream:
            return self._forward(fault)
        parsed = urllib.parse.urlsplit(self.path)
        rel = urllib.parse.unquote(parsed.path).lstrip("/")
        query = urllib.parse.parse_qs(parsed.query, keep_blank_values=True)
        if query.get("list-type") == ["2"]:
            return self._list(rel, query, fault)
        path = os.path.join(srv.root, rel)
        if "/" not in rel or not os.path.isfile(path) or ".." in rel.split("/"):
            return self._error(404, "NoSuchKey", "The specified key does not exist.", fault)
        with open(path, "rb") as f:
            data = f.read()
        etag = '"%s"' % hashlib.md5(data).hexdigest()
        im = self.headers.get("If-Match")
        if im is not None and im != etag and not fault.get("ignore_if_match"):
            return self._error(412, "PreconditionFailed",
                               "At least one of the pre-conditions you specified did not hold",
                               fault)
        base = [("ETag", etag), ("x-amz-version-id", "v" + etag[1:9]),
                ("Accept-Ranges", "bytes"),
                ("Content-Type", "application/octet-stream")]
        rng = self.headers.get("Range")
        if rng is None or method == "HEAD":
            return self._send(200, base + [("Content-Length", str(len(data)))]
                              if method == "HEAD" else base, data, fault)
        n = len(data)
        spec = rng[len("bytes="):] if rng.startswith("bytes=") else ""
        a, _, b = spec.partition("-")
        try:
            if a == "":
                k = int(b)
                first, last = max(0, n - k), n - 1
                if fault.get("bad_range"):
                    first, last = 0, min(k, n - 1)  # s3rver's answer
                if k == 0 or n == 0:
                    raise ValueError
            else:
                first = int(a)
                last = min(int(b), n - 1) if b else n - 1
                if first >= n or int(b or n) < first:
                    raise ValueError
        except ValueError:
            return self._error(416, "InvalidRange", "The requested range is not satisfiable",
                               fault, [("Content-Range", "bytes */%d" % n)])
        return self._send(206, base + [("Content-Range", "bytes %d-%d/%d" % (first, last, n))],
                          data[first:last + 1], fault)

    def _list(self, bucket, query, fault):
        """ListObjectsV2 over the folder root/bucket."""
        srv = self.server
        bucket = bucket.rstrip("/")
        broot = os.path.join(srv.root, bucket)
        if "/" in bucket or not os.path.isdir(broot):
            return self._error(404, "NoSuchBucket", "The specified bucket does not exist", fault)
        prefix = query.get("prefix", [""])[0]
        delim = query.get("delimiter", [""])[0]
        maxk = int(query.get("max-keys", ["1000"])[0])
        after = query.get("continuation-token", query.get("start-after", [""]))[0]
        keys = []
        for dp, _, fs in os.walk(broot):
            for f in fs:
                keys.append(os.path.relpath(os.path.join(dp, f), broot).replace(os.sep, "/"))
        keys = sorted(k for k in keys if k.startswith(prefix) and k > after)
        contents, prefixes = [], []
        for k in keys:
            if delim and delim in k[len(prefix):]:
                p = prefix + k[len(prefix):].split(delim)[0] + delim
                if p not in prefixes:
                    prefixes.append(p)
                continue
            contents.append(k)
        items = [("c", k) for k in contents] + [("p", p) for p in prefixes]
        items.sort(key=lambda x: x[1])
        truncated = len(items) > maxk
        items = items[:maxk]
        body = ['<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult>'
                '<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount>'
                '<MaxKeys>%d</MaxKeys><IsTruncated>%s</IsTruncated>'
                % (escape(bucket), escape(prefix), len(items), maxk,
                   "true" if truncated else "false")]
        for kind, k in items:
            if kind == "c":
                size = os.path.getsize(os.path.join(broot, k))
                body.append("<Contents><Key>%s</Key><Size>%d</Size></Contents>"
                            % (escape(k), size))
            else:
                body.append("<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>" % escape(k))
        if truncated:
            body.append("<NextContinuationToken>%s</NextContinuationToken>"
                        % escape(items[-1][1]))
        body.append("</ListBucketResult>")
        return self._send(200, [("Content-Type", "application/xml")],
                          "".join(body).encode(), fault)

    def _forward(self, fault):
        """Pass the request to the upstream server; its answer, with the
        fault, back."""
        host, port = self.server.upstream
        conn = http.client.HTTPConnection(host, port, timeout=30)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        try:
            conn.request(self.command, self.path, headers=hdrs)
            resp = conn.getresponse()
            body = resp.read()
            headers = [(k, v) for k, v in resp.getheaders()
                       if k.lower() not in ("connection", "transfer-encoding",
                                            "keep-alive", "content-length")]
            if self.command == "HEAD":
                headers.append(("Content-Length", resp.getheader("Content-Length", "0")))
            self._send(resp.status, headers, body, fault)
        finally:
            conn.close()


def utc_now_amz():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
