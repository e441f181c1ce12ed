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
- takes writes in folder mode: PUT and DELETE of an object, multipart
  uploads (create, upload part, complete, abort, ListMultipartUploads by
  prefix; open uploads held in memory, `uploads`), If-None-Match: * on
  PUT and complete (412 PreconditionFailed; `conditional = False` makes
  it ignore the header, as s3rver does); `s3_etags = True` gives a
  completed object S3's multipart ETag instead of its MD5;
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
        once since max_inflight was last set to 0 (overlapping requests).
    etag_memo=True (bench/bench_remote.py): each request reads only its
    range and the MD5 ETag is computed once per file (see size_etag)."""
    daemon_threads = True
    # listen(2)'s backlog: socketserver's default of 5 drops the SYNs of a
    # burst of new connections (16 parallel GETs), which the client then
    # sends again only after 1 s
    request_queue_size = 128
    allow_reuse_address = True
    # listen backlog: socketserver's default of 5 drops the SYNs of a client
    # opening dozens of connections at once (a 1 s retransmit each)
    request_queue_size = 128

    def __init__(self, root=None, upstream=None, keys=None, region=None, etag_memo=False):
        super().__init__(("127.0.0.1", 0), Handler)
        self.etag_memo = {} if etag_memo else None
        self.root = root
        self.upstream = upstream  # (host, port) or None
        self.keys = keys or {}
        self.region = region
        self.faults = []
        self.always = {}
        self.delayed = []  # (arrival, path, delay) of each request a delay held
        self.log = []
        self.inflight = 0
        self.max_inflight = 0
        self.lock = threading.Lock()
        self.thread = None
        self.uploads = {}  # upload id: {"key": "bucket/key", "parts": {n: bytes}}
        self.conditional = True
        # faults for the first request of a kind: [(method, query word, fault)]
        self.match_faults = []
        # s3_etags=True: an object a complete made has S3's multipart ETag
        # ("<MD5 of the parts' MD5s>-<parts>") while unchanged, not its MD5
        self.s3_etags = False
        self.mpu_etags = {}  # path: (size, mtime_ns, inode, etag)
        # called with "bucket/key" before a complete; a true answer drops
        # the request (the connection closed, nothing completed)
        self.before_complete = None

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

    def quiesce(self, timeout=10.0, still=0.2):
        """Wait (at most timeout s) until no request is being answered and
        none arrived for still s: a killed client's requests that the
        front had fully received still complete after the kill, as on S3,
        so a test reads what the bucket holds once they have."""
        end = time.monotonic() + timeout
        seen, since = -1, time.monotonic()
        while time.monotonic() < end:
            with self.lock:
                busy, n = self.inflight, len(self.log)
            if busy or n != seen:
                seen, since = n, time.monotonic()
            elif time.monotonic() - since >= still:
                return True
            time.sleep(0.02)
        return False

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

    def size_etag(self, path):
        """(size, ETag) of a served file, its MD5 remembered by (path, size,
        mtime, inode) (etag_memo: large files, each request reading only
        its range; an object replaced within one mtime tick with the same
        size would keep its old ETag, so the tests leave it off)."""
        st = os.stat(path)
        key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
        with self.lock:
            etag = self.etag_memo.get(key)
        if etag is None:
            h = hashlib.md5()
            with open(path, "rb") as f:
                for block in iter(lambda: f.read(1 << 20), b""):
                    h.update(block)
            etag = '"%s"' % h.hexdigest()
            with self.lock:
                self.etag_memo[key] = etag
        return st.st_size, etag

    def multipart_etag(self, path):
        """The multipart ETag of the object at path if a complete made it
        (s3_etags) and it has not changed since, else None."""
        if not self.mpu_etags:
            return None
        st = os.stat(path)
        with self.lock:
            m = self.mpu_etags.get(path)
        if m and m[:3] == (st.st_size, st.st_mtime_ns, st.st_ino):
            return m[3]
        return None

    def requests(self, method=None):
        with self.lock:
            return [tuple(r) for r in self.log if method is None or r[1] == method]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # TCP_NODELAY: the headers and the body go out in two writes, and with
    # Nagle the second waits for the client's delayed ACK (40 ms a request)
    disable_nagle_algorithm = True

    def log_message(self, *a):  # quiet: the tests read server.log
        pass

    def do_GET(self):
        self._serve("GET")

    def do_HEAD(self):
        self._serve("HEAD")

    def do_PUT(self):
        self._serve("PUT")

    def do_POST(self):
        self._serve("POST")

    def do_DELETE(self):
        self._serve("DELETE")

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
            self._write_body(body, fault["short"])
            self.wfile.flush()
            self.close_connection = True
            return
        self._write_body(body, len(body))

    def _write_body(self, body, count):
        """The first count bytes of body (bytes, a FileRange or an
        UpstreamBody) to the client."""
        count = min(count, len(body))
        if isinstance(body, (bytes, bytearray)):
            self.wfile.write(body[:count])
        else:
            body.send(self, count)

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
        n = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(n) if n else b""
        fault = srv.next_fault()
        with srv.lock:
            for k, (m, word, f) in enumerate(srv.match_faults):
                if m == self.command and word in self.path.split("?", 1)[-1]:
                    fault = dict(fault, **srv.match_faults.pop(k)[2])
                    break
        if "delay" in fault:
            with srv.lock:
                srv.delayed.append((self.entry[0], self.entry[2], float(fault["delay"])))
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
        if method in ("PUT", "POST", "DELETE") or "uploads" in query:
            return self._write(method, rel, query, fault)
        path = os.path.join(srv.root, rel)
        if "/" not in rel or not os.path.isfile(path) or ".." in rel.split("/"):
            return self._error(404, "NoSuchKey", "The specified key does not exist.", fault)
        mpu = srv.multipart_etag(path)
        if srv.etag_memo is not None:
            # an object a complete made has its ETag already (as on S3):
            # no MD5 of the whole object at its first read
            n, etag = (os.path.getsize(path), mpu) if mpu else srv.size_etag(path)
            data = None
        else:
            with open(path, "rb") as f:
                data = f.read()
            n, etag = len(data), '"%s"' % hashlib.md5(data).hexdigest()
        etag = mpu or etag

        def body(first, last):
            """Bytes first..last of the object (with etag_memo a FileRange
            that _send passes to the socket by sendfile)."""
            if data is not None:
                return data[first:last + 1]
            return FileRange(path, first, last + 1 - first)
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
            return self._send(200, base + [("Content-Length", str(n))]
                              if method == "HEAD" else base,
                              b"" if method == "HEAD" else body(0, n - 1), fault)
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
                          body(first, last), fault)

    def _write(self, method, rel, query, fault):
        """The write requests of folder mode (see the top)."""
        srv = self.server
        path = os.path.join(srv.root, rel)
        if ".." in rel.split("/"):
            return self._error(400, "InvalidArgument", "bad key", fault)
        xml = [("Content-Type", "application/xml")]
        if method == "GET":  # ListMultipartUploads of a bucket
            bucket = rel.rstrip("/")
            prefix = query.get("prefix", [""])[0]
            with srv.lock:
                ups = sorted((u["key"], i) for i, u in srv.uploads.items())
            body = ['<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult>'
                    '<Bucket>%s</Bucket><IsTruncated>false</IsTruncated>' % escape(bucket)]
            for key, i in ups:
                k = key.split("/", 1)[1]
                if key.split("/", 1)[0] == bucket and k.startswith(prefix):
                    body.append("<Upload><Key>%s</Key><UploadId>%s</UploadId></Upload>"
                                % (escape(k), i))
            body.append("</ListMultipartUploadsResult>")
            return self._send(200, xml, "".join(body).encode(), fault)
        if "/" not in rel.strip("/"):
            return self._error(400, "InvalidRequest", "no key", fault)
        if method == "POST" and "uploads" in query:
            i = hashlib.md5(os.urandom(16)).hexdigest()
            with srv.lock:
                srv.uploads[i] = {"key": rel, "parts": {}}
            return self._send(200, xml, ('<InitiateMultipartUploadResult><Key>%s</Key>'
                                         '<UploadId>%s</UploadId>'
                                         '</InitiateMultipartUploadResult>'
                                         % (escape(rel), i)).encode(), fault)
        if "uploadId" in query:
            i = query["uploadId"][0]
            with srv.lock:
                up = srv.uploads.get(i)
            if up is None or up["key"] != rel:
                return self._error(404, "NoSuchUpload", "no such upload", fault)
            if method == "PUT":
                n = int(query.get("partNumber", ["0"])[0])
                md5 = hashlib.md5(self.body)
                up["parts"][n] = (self.body, md5)  # the MD5 kept: completes stay cheap
                return self._send(200, [("ETag", '"%s"' % md5.hexdigest())], b"", fault)
            if method == "DELETE":
                with srv.lock:
                    srv.uploads.pop(i, None)
                return self._send(204, [], b"", fault)
            import re
            parts = re.findall(r"<PartNumber>(\d+)</PartNumber><ETag>([^<]*)</ETag>",
                               self.body.decode("utf-8", "replace"))
            chunks = []
            for n, etag in parts:
                got = up["parts"].get(int(n))
                if got is None or '"%s"' % got[1].hexdigest() != etag:
                    return self._error(400, "InvalidPart", "part %s" % n, fault)
                chunks.append(got[0])
            if not parts:
                return self._error(400, "MalformedXML", "no parts", fault)
            if srv.before_complete and srv.before_complete(rel):
                return self._send(500, [], b"", {"reset": True})  # dropped: not completed
            if srv.conditional and self.headers.get("If-None-Match") == "*" \
                    and os.path.exists(path):
                return self._error(412, "PreconditionFailed",
                                   "At least one of the pre-conditions you specified did not hold",
                                   fault)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".front-tmp", "wb") as f:
                f.writelines(chunks)  # part by part: no joined copy of the object
            os.replace(path + ".front-tmp", path)
            st = os.stat(path)
            # S3's ETag of a multipart object (also the answer's, as S3 gives it)
            mpu = '"%s-%d"' % (hashlib.md5(b"".join(
                up["parts"][int(n)][1].digest() for n, _ in parts)).hexdigest(), len(parts))
            with srv.lock:
                srv.uploads.pop(i, None)
                if srv.s3_etags:
                    srv.mpu_etags[path] = (st.st_size, st.st_mtime_ns, st.st_ino, mpu)
            return self._send(200, xml, ('<CompleteMultipartUploadResult><Key>%s</Key>'
                                         '<ETag>%s</ETag></CompleteMultipartUploadResult>'
                                         % (escape(rel), mpu)).encode(),
                              fault)
        if method == "PUT":
            if srv.conditional and self.headers.get("If-None-Match") == "*" \
                    and os.path.exists(path):
                return self._error(412, "PreconditionFailed", "exists", fault)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(self.body)
            return self._send(200, [("ETag", '"%s"' % hashlib.md5(self.body).hexdigest())],
                              b"", fault)
        if method == "DELETE":
            if os.path.isfile(path):
                os.remove(path)
            return self._send(204, [], b"", fault)
        return self._error(405, "MethodNotAllowed", method, fault)

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
        fault, back. The upstream connection is kept for the next request
        of this client connection (keep-alive, as a real proxy does) and
        the body streamed through; a connection the upstream closed while
        idle is opened again once."""
        hdrs = {k: v for k, v in self.headers.items() if k.lower() != "connection"}
        for attempt in (0, 1):
            conn = getattr(self, "upconn", None)
            reused = conn is not None
            if conn is None:
                host, port = self.server.upstream
                conn = self.upconn = http.client.HTTPConnection(host, port, timeout=30)
            try:
                conn.request(self.command, self.path, body=self.body or None, headers=hdrs)
                resp = conn.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError):
                self._drop_upstream()
                if not reused or attempt:
                    raise
        keep = False
        try:
            headers = [(k, v) for k, v in resp.getheaders()
                       if k.lower() not in ("connection", "transfer-encoding",
                                            "keep-alive", "content-length")]
            length = resp.getheader("Content-Length")
            if self.command == "HEAD":
                headers.append(("Content-Length", resp.getheader("Content-Length", "0")))
                body, keep = b"", True
                resp.read()
            elif length is not None and resp.getheader("Transfer-Encoding") is None:
                body = UpstreamBody(resp, int(length))
            else:
                body, keep = resp.read(), True
            self._send(resp.status, headers, body, fault)
            if isinstance(body, UpstreamBody):
                keep = body.done
            keep = keep and not resp.will_close
        finally:
            if not keep:
                self._drop_upstream()

    def _drop_upstream(self):
        conn = getattr(self, "upconn", None)
        self.upconn = None
        if conn is not None:
            conn.close()

    def finish(self):
        self._drop_upstream()
        super().finish()


class FileRange:
    """Bytes [offset, offset + count) of a file, sent by os.sendfile from
    the page cache to the socket (no copy through Python: the front's CPU
    per byte would otherwise be taken from the client it serves on the
    same machine)."""

    def __init__(self, path, offset, count):
        self.path, self.offset, self.count = path, offset, count

    def __len__(self):
        return self.count

    def send(self, handler, count):
        """Send the first count bytes; a file shorter than asked (changed
        since its stat) ends the answer early, as a read would have."""
        handler.wfile.flush()
        sock = handler.connection.fileno()
        with open(self.path, "rb") as f:
            off, left = self.offset, count
            while left > 0:
                n = os.sendfile(sock, f.fileno(), off, min(left, 1 << 24))
                if n == 0:
                    break
                off += n
                left -= n


class UpstreamBody:
    """The body of an upstream answer, streamed to the client in 1 MiB
    pieces as it arrives (never held whole); length from the upstream's
    Content-Length. `done` says the upstream answer was read to its end
    (its connection can serve the next request)."""

    CHUNK = 1 << 20

    def __init__(self, resp, length):
        self.resp, self.length, self.done = resp, length, length == 0

    def __len__(self):
        return self.length

    def send(self, handler, count):
        left = count
        while left > 0:
            piece = self.resp.read(min(left, self.CHUNK))
            if not piece:
                break
            handler.wfile.write(piece)
            left -= len(piece)
        self.done = count == self.length and left == 0


def utc_now_amz():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
