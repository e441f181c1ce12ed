/* s3_upload.c - signed S3 write requests with retries, and the multipart
 * upload on them (s3_upload.h). One request runs on its own easy handle
 * driven by a pooled session's multi handle (http_pool.h: connections are
 * reused from one request to the next; the loaded libcurl table has no
 * easy_perform), polling ds_cancel_check() while it waits. */
#include "remote/s3_upload.h"

#include <errno.h>
#include <fcntl.h>
#include <md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "core/cancel.h"
#include "core/vfs.h"
#include "remote/curl_api.h"
#include "remote/http_parse.h"
#include "remote/http_pool.h"
#include "remote/remote_probe.h"
#include "remote/s3_sign.h"

/* The state of one try. */
typedef struct try_state {
  ds_s3_call *c;
  uint64_t sent;        /* body bytes handed to libcurl */
  long retry_after_ms;
  int read_failed;
} try_state;

/* libcurl's read callback: the next body bytes, from memory or the file. */
static size_t on_read(char *p, size_t size, size_t nitems, void *u) {
  try_state *t = u;
  ds_s3_call *c = t->c;
  uint64_t total = c->fd >= 0 ? c->len : c->body_len;
  size_t n = size * nitems;
  if (t->sent >= total) return 0;
  if (n > total - t->sent) n = (size_t)(total - t->sent);
  if (c->fd < 0) {
    memcpy(p, (const char *)c->body + t->sent, n);
  } else {
    ssize_t got = ds_vfs_pread_fd(c->fd, p, n, c->off + t->sent);
    if (got <= 0) {
      t->read_failed = 1;
      return CURL_READFUNC_ABORT;
    }
    n = (size_t)got;
  }
  t->sent += n;
  return n;
}

/* libcurl's header callback: status line, ETag, Retry-After. */
static size_t on_header(char *p, size_t size, size_t nitems, void *u) {
  try_state *t = u;
  size_t n = size * nitems;
  if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
    const char *sp = memchr(p, ' ', n);
    t->c->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    t->c->etag[0] = 0;
    t->c->resp.len = 0;
    t->retry_after_ms = -1;
    return n;
  }
  const char *colon = memchr(p, ':', n);
  if (!colon) return n;
  size_t k = (size_t)(colon - p);
  const char *v = colon + 1;
  size_t vl = n - k - 1;
  while (vl && (*v == ' ' || *v == '\t')) v++, vl--;
  while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ')) vl--;
  if (k == 4 && strncasecmp(p, "ETag", 4) == 0 && vl < sizeof t->c->etag) {
    memcpy(t->c->etag, v, vl);
    t->c->etag[vl] = 0;
  } else if (k == 11 && strncasecmp(p, "Retry-After", 11) == 0) {
    t->retry_after_ms = ds_http_parse_retry_after(v, vl);
  }
  return n;
}

/* libcurl's write callback: the response body (at most 1 MiB: XML). */
static size_t on_body(char *p, size_t size, size_t nmemb, void *u) {
  try_state *t = u;
  size_t n = size * nmemb;
  size_t keep = t->c->resp.len >= (1u << 20) ? 0 : (1u << 20) - t->c->resp.len;
  if (keep > n) keep = n;
  if (keep && ds_buf_append(&t->c->resp, p, keep)) return 0;
  return n;
}

/* The CA bundle from the environment (as the reads take it). */
static const char *ca_file(void) {
  const char *e = getenv("CURL_CA_BUNDLE");
  if (e && *e) return e;
  e = getenv("SSL_CERT_FILE");
  return e && *e ? e : NULL;
}

/* The signing headers of one try ("Name: value\n" lines) into b. */
static int sign_try(const ds_robj *o, const ds_s3_call *c, const ds_s3_target *t,
                    ds_buf *b, char **err) {
  const ds_remote_config *cfg = &o->cfg;
  if (cfg->bearer_token && !cfg->access_key)
    return ds_buf_printf(b, "Authorization: Bearer %s\n", cfg->bearer_token)
               ? ds_err(err, "out of memory") : 0;
  if (!cfg->access_key || !cfg->secret_key) return 0;
  ds_s3_sign_in in = {0};
  in.method = c->method;
  in.host = (const char *)t->host.data;
  in.path = (const char *)t->path.data;
  in.query = c->query;
  in.nquery = c->nquery;
  in.region = cfg->region;
  in.now = time(NULL);
  ds_s3_keys k = {cfg->access_key, cfg->secret_key, cfg->session_token};
  return ds_s3_sign_headers(&in, &k, b, err);
}

/* Run one try to its end: 0 with c->status, or -1 with a transport
 * error in msg (curl's words). */
static int one_try(const ds_curl_api *api, const ds_robj *o, ds_s3_call *c,
                   const ds_s3_target *t, const ds_http_opts *ho, try_state *ts,
                   char *msg, size_t cap, int *cancelled) {
  ds_buf lines = {0};
  char *serr = NULL;
  if (sign_try(o, c, t, &lines, &serr)) {
    snprintf(msg, cap, "%s", serr ? serr : "cannot sign");
    free(serr);
    ds_buf_free(&lines);
    return -1;
  }
  if (c->if_none_match) ds_buf_printf(&lines, "If-None-Match: %s\n", c->if_none_match);
  ds_buf_printf(&lines, "Expect:\n"); /* no 100-continue round trip */
  struct curl_slist *hdrs = NULL;
  for (size_t i = 0; i < lines.len;) {
    char *nl = memchr(lines.data + i, '\n', lines.len - i);
    size_t e = nl ? (size_t)((uint8_t *)nl - lines.data) : lines.len;
    lines.data[e] = 0;
    struct curl_slist *h = api->slist_append(hdrs, (char *)lines.data + i);
    if (h) hdrs = h;
    i = e + 1;
  }
  ds_buf_free(&lines);
  CURL *e = api->easy_init();
  CURLSH *sh = NULL;
  char *perr = NULL;
  /* a pooled session: its connections are reused by the next request */
  ds_http_session *sess = e ? ds_http_session_get(api, 1, &sh, &perr) : NULL;
  free(perr);
  CURLM *m = sess ? sess->multi : NULL;
  if (!e || !m) {
    if (e) api->easy_cleanup(e);
    api->slist_free_all(hdrs);
    snprintf(msg, cap, "out of memory");
    return -1;
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  int https = strncmp((const char *)t->url.data, "https:", 6) == 0;
  api->easy_setopt(e, CURLOPT_URL, (const char *)t->url.data);
  api->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  api->easy_setopt(e, CURLOPT_HTTPHEADER, hdrs);
  api->easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf);
  api->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  api->easy_setopt(e, CURLOPT_HEADERDATA, ts);
  api->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  api->easy_setopt(e, CURLOPT_WRITEDATA, ts);
  api->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, ho->connect_timeout_ms);
  api->easy_setopt(e, CURLOPT_USERAGENT, "sqlite-datasets");
  if (api->easy_setopt(e, CURLOPT_PROTOCOLS_STR, https ? "https" : "http") != CURLE_OK)
    api->easy_setopt(e, CURLOPT_PROTOCOLS, (long)(https ? CURLPROTO_HTTPS : CURLPROTO_HTTP));
  api->easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  api->easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  const char *ca = ca_file();
  if (ca) api->easy_setopt(e, CURLOPT_CAINFO, ca);
  if (sh) api->easy_setopt(e, CURLOPT_SHARE, sh);
  /* a part's bytes may take longer than a read's timeout: bound by
   * stalls (under 1 KiB/s for the timeout's seconds) instead */
  long secs = ho->timeout_ms / 1000 > 0 ? ho->timeout_ms / 1000 : 1;
  api->easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1024L);
  api->easy_setopt(e, CURLOPT_LOW_SPEED_TIME, secs);
  int has_body = c->fd >= 0 || c->body;
  if (has_body || strcmp(c->method, "PUT") == 0 || strcmp(c->method, "POST") == 0) {
    api->easy_setopt(e, CURLOPT_UPLOAD, 1L);
    api->easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    api->easy_setopt(e, CURLOPT_READDATA, ts);
    api->easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
                     (curl_off_t)(c->fd >= 0 ? c->len : c->body_len));
  }
  if (strcmp(c->method, "GET") != 0 && strcmp(c->method, "PUT") != 0)
    api->easy_setopt(e, CURLOPT_CUSTOMREQUEST, c->method);
  api->multi_add_handle(m, e);
  int running = 1, rc = 0;
  CURLcode res = CURLE_OK;
  while (running) {
    if (ds_cancel_check()) {
      *cancelled = 1;
      break;
    }
    api->multi_perform(m, &running);
    int q;
    CURLMsg *cm;
    while ((cm = api->multi_info_read(m, &q)))
      if (cm->msg == CURLMSG_DONE) res = cm->data.result;
    if (!running) break;
    int nfds;
    if (api->multi_poll) api->multi_poll(m, NULL, 0, 50, &nfds);
    else api->multi_wait(m, NULL, 0, 50, &nfds);
  }
  if (*cancelled) {
    snprintf(msg, cap, "%s", DS_CANCEL_MSG);
    rc = -1;
  } else if (res != CURLE_OK) {
    snprintf(msg, cap, "%s", ts->read_failed ? "cannot read the local file"
                             : errbuf[0] ? errbuf : api->easy_strerror(res));
    rc = -1;
  }
  api->multi_remove_handle(m, e);
  api->easy_cleanup(e);
  ds_http_session_put(api, sess);
  api->slist_free_all(hdrs);
  return rc;
}

/* Statuses worth another try. */
static int retryable(long s) {
  return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504;
}

/* Sleep ms milliseconds in 50 ms steps, polling cancel; 1 when cancelled. */
static int pause_ms(long ms) {
  while (ms > 0) {
    if (ds_cancel_check()) return 1;
    long step = ms > 50 ? 50 : ms;
    struct timespec ts = {0, step * 1000000L};
    nanosleep(&ts, NULL);
    ms -= step;
  }
  return 0;
}

void ds_s3_call_init(ds_s3_call *c, const char *method, const ds_kv *query, size_t nquery,
                     const char *what) {
  memset(c, 0, sizeof *c);
  c->method = method;
  c->query = query;
  c->nquery = nquery;
  c->fd = -1;
  c->what = what;
}

int ds_s3_run(const ds_robj *o, ds_s3_call *c, char **err) {
  const ds_curl_api *api = ds_curl_get(err);
  if (!api) return -1;
  ds_http_opts ho;
  ds_robj_http_opts(o, &ho);
  ds_s3_target t;
  if (ds_s3_target_make(o->cfg.endpoint, o->cfg.region, o->cfg.url_style, o->bucket,
                        c->bucket_only ? "" : o->key, c->query, c->nquery, &t, err)) {
    ds_err_prefix(err, o->shown);
    return -1;
  }
  const char *what = c->what ? c->what : "";
  char msg[CURL_ERROR_SIZE + 64];
  int rc = -1;
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  /* the jitter's own generator (rand() is the host's) */
  uint64_t rng = ((uint64_t)now.tv_nsec << 20) ^ (uint64_t)(uintptr_t)c ^ 0x9e3779b97f4a7c15u;
  for (int k = 0;; k++) {
    try_state ts = {c, 0, -1, 0};
    int cancelled = 0;
    c->status = 0;
    c->code[0] = 0;
    c->resp.len = 0;
    msg[0] = 0;
    int tr = one_try(api, o, c, &t, &ho, &ts, msg, sizeof msg, &cancelled);
    if (cancelled) {
      ds_err(err, "%s %s%s: %s", c->method, o->shown, what, DS_CANCEL_MSG);
      break;
    }
    int again = 0;
    if (tr == 0) {
      ds_http_xml_error_code((const char *)c->resp.data, c->resp.len, c->code,
                             sizeof c->code);
      int ok = c->status >= 200 && c->status < 300 &&
               !(c->resp.len && memmem(c->resp.data, c->resp.len, "<Error>", 7));
      if (ok) {
        rc = 0;
        break;
      }
      /* a 200 carrying <Error> (CompleteMultipartUpload's way) with a
       * server-side code worth retrying, or a retryable status */
      again = retryable(c->status) || strcmp(c->code, "InternalError") == 0 ||
              strcmp(c->code, "SlowDown") == 0;
      snprintf(msg, sizeof msg, "HTTP %ld%s%s", c->status, c->code[0] ? " " : "", c->code);
    } else {
      again = !ts.read_failed;
    }
    if (!again || k >= ho.retries) {
      ds_err(err, "%s %s%s: %s%s", c->method, o->shown, what, msg,
             again ? " (after retries)" : "");
      break;
    }
    long b = ho.backoff_base_ms;
    for (int i = 0; i < k && b < ho.backoff_max_ms; i++) b *= 2;
    if (b > ho.backoff_max_ms) b = ho.backoff_max_ms;
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    b = b / 2 + (long)(rng % (uint64_t)(b / 2 + 1));
    if (ts.retry_after_ms > b)
      b = ts.retry_after_ms < ho.retry_after_max_ms ? ts.retry_after_ms : ho.retry_after_max_ms;
    if (pause_ms(b)) {
      ds_err(err, "%s %s%s: %s", c->method, o->shown, what, DS_CANCEL_MSG);
      break;
    }
  }
  ds_s3_target_free(&t);
  return rc;
}

/* The text of the first <tag>...</tag> of xml (malloc'd), NULL when none. */
static char *xml_first(const ds_buf *b, const char *tag) {
  char open[64], close[64];
  snprintf(open, sizeof open, "<%s>", tag);
  snprintf(close, sizeof close, "</%s>", tag);
  const char *s = b->data ? memmem(b->data, b->len, open, strlen(open)) : NULL;
  if (!s) return NULL;
  s += strlen(open);
  const char *e = memmem(s, b->len - (size_t)((const uint8_t *)s - b->data), close,
                         strlen(close));
  if (!e) return NULL;
  return strndup(s, (size_t)(e - s));
}

int ds_s3_mpu_create(const ds_robj *o, char **upload_id, char **err) {
  *upload_id = NULL;
  ds_kv q[] = {{"uploads", ""}};
  ds_s3_call c;
  ds_s3_call_init(&c, "POST", q, 1, " (create a multipart upload)");
  int rc = ds_s3_run(o, &c, err);
  if (rc == 0 && !(*upload_id = xml_first(&c.resp, "UploadId")))
    rc = ds_err(err, "POST %s: the answer has no UploadId", o->shown);
  ds_buf_free(&c.resp);
  return rc;
}

/* An ETag's value without its quotes (and a weak "W/") into out. */
static void etag_bare(const char *e, char *out, size_t cap) {
  if (strncmp(e, "W/", 2) == 0) e += 2;
  size_t n = strlen(e);
  if (n >= 2 && e[0] == '"' && e[n - 1] == '"') e++, n -= 2;
  if (n >= cap) n = cap - 1;
  memcpy(out, e, n);
  out[n] = 0;
}

/* The value of 16 hex digits pairs in h into b; -1 when h is not 32 hex. */
static int hex16(const char *h, uint8_t b[16]) {
  if (strlen(h) != 32) return -1;
  for (int i = 0; i < 16; i++) {
    unsigned v;
    if (sscanf(h + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", h[2 * i]) ||
        !strchr("0123456789abcdefABCDEF", h[2 * i + 1]))
      return -1;
    b[i] = (uint8_t)v;
  }
  return 0;
}

/* S3's ETag of a completed multipart upload: the MD5 of the parts' binary
 * MD5s, "-", the number of parts (into out; "" when a part's ETag is not
 * an MD5). */
static void multipart_etag(const ds_s3_mpu *u, char *out, size_t cap) {
  MD5_CTX m;
  MD5Init(&m);
  out[0] = 0;
  for (size_t i = 0; i < u->nparts; i++) {
    char bare[200];
    uint8_t b[16];
    etag_bare(u->etags[i], bare, sizeof bare);
    if (hex16(bare, b)) return;
    MD5Update(&m, b, 16);
  }
  char hex[MD5_DIGEST_STRING_LENGTH];
  MD5End(&m, hex);
  snprintf(out, cap, "%s-%zu", hex, u->nparts);
}

/* The MD5 of the staged file u->local (hex into out; "" when unreadable). */
static void staged_md5(const ds_s3_mpu *u, char *out) {
  out[0] = 0;
  int fd = u->local ? ds_vfs_open_fd(u->local, O_RDONLY | O_CLOEXEC) : -1;
  if (fd < 0) return;
  MD5_CTX m;
  MD5Init(&m);
  static const size_t step = 1 << 20;
  uint8_t *buf = malloc(step);
  uint64_t off = 0;
  while (buf && off < u->size) {
    size_t want = u->size - off < step ? (size_t)(u->size - off) : step;
    ssize_t got = ds_vfs_pread_fd(fd, buf, want, off);
    if (got <= 0) break;
    MD5Update(&m, buf, (size_t)got);
    off += (uint64_t)got;
  }
  if (buf && off == u->size) MD5End(&m, out);
  free(buf);
  ds_vfs_close_fd(fd);
}

/* 1 when the object now at o is the one u's upload made (checked after a
 * complete answered NoSuchUpload): its size is u's, and its ETag S3's
 * multipart ETag of u's parts or the MD5 of the staged bytes. */
static int upload_landed(const ds_robj *o, const ds_s3_mpu *u) {
  ds_probe p;
  int eno = 0;
  ds_probe_forget(o->url);
  if (ds_probe_get(o, 1, &p, &eno, NULL)) return 0;
  int ok = 0;
  if (p.kind == DS_PROBE_FILE && p.size == u->size && p.etag[0]) {
    char got[200], want[200];
    etag_bare(p.etag, got, sizeof got);
    multipart_etag(u, want, sizeof want);
    ok = want[0] && strcasecmp(got, want) == 0;
    if (!ok && !strchr(got, '-')) {
      staged_md5(u, want);
      ok = want[0] && strcasecmp(got, want) == 0;
    }
  }
  ds_probe_free(&p);
  ds_probe_forget(o->url);
  return ok;
}

int ds_s3_mpu_complete(const ds_robj *o, ds_s3_mpu *u, const char *if_none_match,
                       char **err) {
  ds_buf b = {0};
  int bad = ds_buf_printf(&b, "<CompleteMultipartUpload>");
  for (size_t i = 0; i < u->nparts && !bad; i++)
    bad = ds_buf_printf(&b, "<Part><PartNumber>%zu</PartNumber><ETag>%s</ETag></Part>",
                        i + 1, u->etags[i]);
  if (bad || ds_buf_printf(&b, "</CompleteMultipartUpload>")) {
    ds_buf_free(&b);
    return ds_err(err, "out of memory");
  }
  ds_kv q[] = {{"uploadId", u->upload_id}};
  ds_s3_call c;
  ds_s3_call_init(&c, "POST", q, 1, " (complete the multipart upload)");
  c.body = b.data;
  c.body_len = b.len;
  c.if_none_match = if_none_match;
  int rc = ds_s3_run(o, &c, err);
  /* a try whose answer was lost completed the upload: the retry finds
   * it gone; the object there says whether it was ours */
  if (rc && (c.status == 404 || strcmp(c.code, "NoSuchUpload") == 0) && upload_landed(o, u))
    rc = 0;
  if (rc && (c.status == 412 || strcmp(c.code, "PreconditionFailed") == 0))
    ds_err_prefix(err, "the object appeared since CREATE (mode=create never overwrites)");
  ds_buf_free(&c.resp);
  ds_buf_free(&b);
  return rc;
}

int ds_s3_mpu_abort(const ds_robj *o, const char *upload_id, char **err) {
  ds_kv q[] = {{"uploadId", upload_id}};
  ds_s3_call c;
  ds_s3_call_init(&c, "DELETE", q, 1, " (abort the multipart upload)");
  char *e = NULL;
  int rc = ds_s3_run(o, &c, &e);
  if (rc && (c.status == 404 || strcmp(c.code, "NoSuchUpload") == 0)) rc = 0;
  if (rc && err) {
    *err = e;
    e = NULL;
  }
  free(e);
  ds_buf_free(&c.resp);
  return rc;
}

void ds_s3_mpu_free(ds_s3_mpu *u) {
  free(u->upload_id);
  free(u->local);
  free(u->etags);
  memset(u, 0, sizeof *u);
}

int ds_s3_delete(const ds_robj *o, char **err) {
  ds_s3_call c;
  ds_s3_call_init(&c, "DELETE", NULL, 0, NULL);
  char *e = NULL;
  int rc = ds_s3_run(o, &c, &e);
  if (rc && c.status == 404) rc = 0; /* not there: fine */
  if (rc && err) {
    *err = e;
    e = NULL;
  }
  free(e);
  ds_buf_free(&c.resp);
  return rc;
}

int ds_s3_abort_open(const ds_robj *o, const char *keep, size_t *n, char **err) {
  *n = 0;
  ds_kv q[] = {{"prefix", o->key}, {"uploads", ""}};
  ds_s3_call c;
  ds_s3_call_init(&c, "GET", q, 2, " (list open multipart uploads)");
  c.bucket_only = 1;
  char *e = NULL;
  int rc = ds_s3_run(o, &c, &e);
  /* a server without the call, or keys without the right to list
   * uploads: nothing to abort that we can see */
  if (rc && (c.status == 501 || strcmp(c.code, "NotImplemented") == 0 ||
             c.status == 403)) {
    free(e);
    ds_buf_free(&c.resp);
    return 1;
  }
  if (rc) {
    if (err) *err = e;
    else free(e);
    ds_buf_free(&c.resp);
    return -1;
  }
  /* each <Upload> with exactly our key: abort it */
  const uint8_t *p = c.resp.data, *end = c.resp.data + c.resp.len;
  while (rc == 0 && p && p < end) {
    const uint8_t *s = memmem(p, (size_t)(end - p), "<Upload>", 8);
    const uint8_t *f = s ? memmem(s, (size_t)(end - s), "</Upload>", 9) : NULL;
    if (!s || !f) break;
    ds_buf one = {0};
    one.data = (uint8_t *)s;
    one.len = (size_t)(f - s);
    char *key = xml_first(&one, "Key"), *id = xml_first(&one, "UploadId");
    if (key && id && strcmp(key, o->key) == 0 && !(keep && strcmp(id, keep) == 0)) {
      rc = ds_s3_mpu_abort(o, id, err);
      if (rc == 0) (*n)++;
    }
    free(key);
    free(id);
    p = f + 9;
  }
  ds_buf_free(&c.resp);
  return rc;
}
