"""remote_servers.py - test servers of the remote-path tests, started and
stopped by the tests, on 127.0.0.1 only, every wait bounded:
- make_ca(folder): a CA and a certificate for 127.0.0.1 made with openssl;
- Nginx(root, ca): nginx serving a folder over http and https (a
  location that ignores Range, redirects to another scheme and to file://),
  its access log readable as (method, uri, range, status, bytes) rows;
- run_client(build, *args): build/tools/remote_http, its JSON lines.
Used with `with`: the server stops (and its folder goes) on exit."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

NGINX = "/usr/sbin/nginx"


def free_port():
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, seconds=10.0):
    """Wait (at most `seconds`) until 127.0.0.1:port accepts; False if not."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def make_ca(folder):
    """ca.pem, server.pem, server.key in folder (a fresh CA each time)."""
    def ossl(*args):
        subprocess.run(["openssl"] + list(args), cwd=folder, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    ossl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
         "-out", "ca.pem", "-days", "2", "-subj", "/CN=sqlite-datasets test CA")
    ossl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
         "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(folder, "ext.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    ossl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    return os.path.join(folder, "ca.pem")


class Nginx:
    """nginx on two free ports (http, https) serving `root`."""

    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.dir = tempfile.mkdtemp(prefix="ds-nginx-")
        self.ca = make_ca(self.dir)
        self.port = free_port()
        self.tls_port = free_port()
        self.log = os.path.join(self.dir, "access.log")
        self.proc = None

    def url(self, path, tls=False):
        if tls:
            return "https://127.0.0.1:%d/%s" % (self.tls_port, path.lstrip("/"))
        return "http://127.0.0.1:%d/%s" % (self.port, path.lstrip("/"))

    def __enter__(self):
        d = self.dir
        conf = os.path.join(d, "nginx.conf")
        with open(conf, "w") as f:
            f.write("""
pid %(d)s/nginx.pid;
error_log %(d)s/error.log warn;
master_process off;
daemon off;
events { worker_connections 256; }
http {
  log_format ds '$request_method $uri "$http_range" "$http_if_match" $status $body_bytes_sent $connection';
  access_log %(d)s/access.log ds;
  client_body_temp_path %(d)s/body; proxy_temp_path %(d)s/proxy;
  fastcgi_temp_path %(d)s/fcgi; uwsgi_temp_path %(d)s/uwsgi; scgi_temp_path %(d)s/scgi;
  types { application/octet-stream bin; }
  default_type application/octet-stream;
  keepalive_requests 10000;
  server {
    listen 127.0.0.1:%(port)d;
    listen 127.0.0.1:%(tls)d ssl;
    ssl_certificate %(d)s/server.pem;
    ssl_certificate_key %(d)s/server.key;
    root %(root)s;
    location /norange/ { alias %(root)s/; max_ranges 0; }
    location ~ ^/to-https/(.*)$ { return 301 https://127.0.0.1:%(tls)d/$1; }
    location ~ ^/to-http/(.*)$ { return 301 http://127.0.0.1:%(port)d/$1; }
    location /to-file/ { return 301 file:///etc/passwd; }
    location /loop/ { return 302 /loop/; }
    location /moved/ { rewrite ^/moved/(.*)$ /$1 redirect; }
  }
}
""" % {"d": d, "port": self.port, "tls": self.tls_port, "root": self.root})
        self.proc = subprocess.Popen([NGINX, "-c", conf, "-p", d],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if not (wait_port(self.port, self.proc) and wait_port(self.tls_port, self.proc)):
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
            self.__exit__(None, None, None)
            raise RuntimeError("nginx did not start: " + err)
        return self

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)

    def requests(self):
        """The access log so far: (method, uri, range, if_match, status,
        bytes, connection number)."""
        rows = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                for line in f:
                    p = line.split('"')
                    m, uri = p[0].split()[:2]
                    st, nb, conn = p[4].split()
                    rows.append((m, uri, p[1], p[3], int(st), int(nb), int(conn)))
        return rows

    def clear_log(self):
        open(self.log, "w").close()


def run_client(build, *args, env=None, timeout=120):
    """build/tools/remote_http with args: (results, counters)."""
    tool = os.path.join(build, "tools", "remote_http")
    p = subprocess.run([tool] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout, env=env)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError("remote_http failed (%d): %s" % (p.returncode, p.stderr[-2000:]))
    return lines[:-1], lines[-1]


# s3rver: the S3 server of the npm registry, pinned, installed by
# tools/deps.sh outside the tree (S3RVER_HOME, else ~/.cache/sqlite-datasets).
S3RVER_VERSION = "3.7.1"


def s3rver_bin():
    """The s3rver script tools/deps.sh installs, or None."""
    home = os.environ.get("S3RVER_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache", "sqlite-datasets", "s3rver-" + S3RVER_VERSION)
    p = os.path.join(home, "node_modules", "s3rver", "bin", "s3rver.js")
    return p if os.path.exists(p) else None


class S3rver:
    """s3rver on a free port with bucket `bucket`, run with node
    --openssl-legacy-provider (its continuation tokens use DES, which
    Node's OpenSSL 3 refuses otherwise). Keys: S3RVER / S3RVER."""

    def __init__(self, bucket="bkt"):
        self.bucket = bucket
        self.dir = tempfile.mkdtemp(prefix="ds-s3rver-")
        self.port = free_port()
        self.proc = None
        self.endpoint = "http://127.0.0.1:%d" % self.port

    def __enter__(self):
        script = s3rver_bin()
        if not script:
            raise RuntimeError("s3rver %s is not installed (tools/deps.sh test)"
                               % S3RVER_VERSION)
        self.proc = subprocess.Popen(
            ["node", "--openssl-legacy-provider", script, "-d", self.dir, "-a", "127.0.0.1",
             "-p", str(self.port), "--silent", "--configure-bucket", self.bucket],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if not wait_port(self.port, self.proc, seconds=30):
            err = self.proc.stderr.read().decode() if self.proc.poll() is not None else ""
            self.__exit__(None, None, None)
            raise RuntimeError("s3rver did not start: " + err[-1000:])
        return self

    def client(self):
        """A botocore S3 client of this server (to put the objects)."""
        import botocore.session
        from botocore.config import Config
        return botocore.session.get_session().create_client(
            "s3", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id="S3RVER", aws_secret_access_key="S3RVER",
            config=Config(s3={"addressing_style": "path"}))

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)
