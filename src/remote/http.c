/* http.c - the HTTP range client: a session pool, one try of a request
 * (an easy handle with its headers and callbacks), the checks of each
 * response, and the batch loop with retries and cancellation (http.h). */
#include "remote/http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "remote/curl_api.h"

/* ---- sessions: a multi handle (its connection cache) per user ------- */

typedef struct session {
  CURLM *multi;
  struct session *next;
} session;

#define POOL_KEEP 8 /* idle sessions kept (their connections stay open) */

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static session *pool_idle;
static int pool_nidle;
static CURLSH *share;             /* DNS cache and TLS sessions */
static pthread_mutex_t share_mu[CURL_LOCK_DATA_LAST];

static uint64_t stat_requests, stat_retries, stat_bytes, stat_failures;

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *u) {
  (void)h, (void)a, (void)u;
  pthread_mutex_lock(&share_mu[d]);
}
static void share_unlock(CURL *h, curl_lock_data d, void *u) {
  (void)h, (void)u;
  pthread_mutex_unlock(&share_mu[d]);
}

/* The share handle, made once (under pool_mu). NULL when it cannot be:
 * then nothing is shared (still correct). */
static CURLSH *get_share(const ds_curl_api *c) {
  if (share) return share;
  CURLSH *s = c->share_init();
  if (!s) return NULL;
  for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
    pthread_mutex_init(&share_mu[i], NULL);
  c->share_setopt(s, CURLSHOPT_LOCKFUNC, share_lock);
  c->share_setopt(s, CURLSHOPT_UNLOCKFUNC, share_unlock);
  c->share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  c->share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  share = s;
  return share;
}

/* A session for this call: an idle one, or a new one. */
static session *session_get(const ds_curl_api *c, int max_parallel,
                            CURLSH **sh, char **err) {
  pthread_mutex_lock(&pool_mu);
  session *s = pool_idle;
  if (s) {
    pool_idle = s->next;
    pool_nidle--;
  }
  *sh = get_share(c);
  pthread_mutex_unlock(&pool_mu);
  if (!s) {
    s = calloc(1, sizeof *s);
    if (s) s->multi = c->multi_init();
    if (!s || !s->multi) {
      free(s);
      ds_err(err, "out of memory (HTTP session)");
      return NULL;
    }
  }
  c->multi_setopt(s->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)max_parallel);
  c->multi_setopt(s->multi, CURLMOPT_MAXCONNECTS, (long)max_parallel * 2);
  return s;
}

/* Give a session back (kept idle, or closed when enough are). */
static void session_put(const ds_curl_api *c, session *s) {
  pthread_mutex_lock(&pool_mu);
  if (pool_nidle < POOL_KEEP) {
    s->next = pool_idle;
    pool_idle = s;
    pool_nidle++;
    s = NULL;
  }
  pthread_mutex_unlock(&pool_mu);
  if (s) {
    c->multi_cleanup(s->multi);
    free(s);
  }
}

/* ---- one request and its tries ------------------------------------- */

typedef struct xfer {
  ds_http_req *r;
  CURL *easy;             /* the try in flight, or NULL */
  struct curl_slist *hdrs;
  char errbuf[CURL_ERROR_SIZE];
  int64_t start_at_ns;    /* next try not before (0: now) */
  int done;
  /* the response of the try in flight (reset on each status line) */
  long status;
  int have_range;
  uint64_t cr_first, cr_last, cr_total;
  int range_bad;          /* a Content-Range we could not read */
  long retry_after_ms;
  uint64_t content_length;
  char etag[200];
  char version_id[128];
  ds_buf body;
  uint64_t body_cap;      /* more than this aborts the try */
  int abort_reason;       /* ABORT_* when we ended it from the callback */
  char range_hdr[64];
} xfer;

enum { ABORT_NONE, ABORT_TOO_BIG, ABORT_IGNORED_RANGE, ABORT_TOO_LONG };

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Case-insensitive "Name:" prefix of a header line; the value's start. */
static const char *header_value(const char *line, size_t n, const char *name,
                                size_t *vlen) {
  size_t k = strlen(name);
  if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0) return NULL;
  size_t i = k + 1;
  while (i < n && (line[i] == ' ' || line[i] == '\t')) i++;
  size_t e = n;
  while (e > i && (line[e - 1] == '\r' || line[e - 1] == '\n' ||
                   line[e - 1] == ' ' || line[e - 1] == '\t'))
    e--;
  *vlen = e - i;
  return line + i;
}

/* libcurl's header callback: one header line (a status line starts a new
 * response: after a redirect or a 100). */
static size_t on_header(char *p, size_t size, size_t nitems, void *u) {
  xfer *x = u;
  size_t n = size * nitems, vl;
  const char *v;
  if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
    const char *sp = memchr(p, ' ', n);
    x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    x->have_range = x->range_bad = 0;
    x->retry_after_ms = -1;
    x->content_length = DS_HTTP_SIZE_UNKNOWN;
    x->etag[0] = 0;
    x->version_id[0] = 0;
    x->body.len = 0;
  } else if ((v = header_value(p, n, "Content-Range", &vl))) {
    x->have_range = 1;
    x->range_bad = ds_http_parse_content_range(v, vl, &x->cr_first,
                                               &x->cr_last, &x->cr_total) != 0;
  } else if ((v = header_value(p, n, "Retry-After", &vl))) {
    x->retry_after_ms = ds_http_parse_retry_after(v, vl);
  } else if ((v = header_value(p, n, "Content-Length", &vl))) {
    char tmp[24];
    if (vl < sizeof tmp) {
      memcpy(tmp, v, vl);
      tmp[vl] = 0;
      char *end;
      unsigned long long c = strtoull(tmp, &end, 10);
      if (end != tmp && !*end) x->content_length = c;
    }
  } else if ((v = header_value(p, n, "x-amz-version-id", &vl))) {
    if (vl < sizeof x->version_id) {
      memcpy(x->version_id, v, vl);
      x->version_id[vl] = 0;
    }
  } else if ((v = header_value(p, n, "ETag", &vl))) {
    if (vl < sizeof x->etag) {
      memcpy(x->etag, v, vl);
      x->etag[vl] = 0;
    }
  }
  return n;
}

/* libcurl's write callback: keep the body, within what this response may
 * carry (returning less than n ends the try). */
static size_t on_body(char *p, size_t size, size_t nmemb, void *u) {
  xfer *x = u;
  size_t n = size * nmemb;
  ds_http_kind k = x->r->kind;
  int ranged = k == DS_HTTP_RANGE || k == DS_HTTP_SUFFIX;
  if (x->status >= 300 || x->status < 200) {
    /* an error body: its first 64 KiB are enough for its XML */
    size_t keep = x->body.len >= 65536 ? 0 : 65536 - x->body.len;
    if (keep > n) keep = n;
    if (keep && ds_buf_append(&x->body, p, keep)) return 0;
    return n;
  }
  uint64_t limit = x->body_cap;
  int reason = k == DS_HTTP_WHOLE ? ABORT_TOO_BIG : ABORT_TOO_LONG;
  if (ranged && x->status == 206) {
    limit = x->r->length;
  } else if (ranged) {
    limit = x->body_cap; /* small_whole: the whole object instead */
    reason = ABORT_IGNORED_RANGE;
  }
  if (x->body.len + n > limit) {
    x->abort_reason = reason;
    return 0;
  }
  if (ds_buf_append(&x->body, p, n)) return 0;
  __atomic_add_fetch(&stat_bytes, n, __ATOMIC_RELAXED);
  return n;
}

/* The CA bundle: the option, else CURL_CA_BUNDLE, else SSL_CERT_FILE. */
static const char *ca_file(const ds_http_opts *o) {
  if (o->ca_file && *o->ca_file) return o->ca_file;
  const char *e = getenv("CURL_CA_BUNDLE");
  if (e && *e) return e;
  e = getenv("SSL_CERT_FILE");
  return e && *e ? e : NULL;
}

/* Start one try of x: a new easy handle, signed headers, added to multi. */
static int start_try(const ds_curl_api *c, CURLM *multi, CURLSH *sh, xfer *x,
                     const ds_http_opts *o) {
  ds_http_req *r = x->r;
  const char *range = NULL;
  if (r->kind == DS_HTTP_RANGE) {
    snprintf(x->range_hdr, sizeof x->range_hdr, "bytes=%llu-%llu",
             (unsigned long long)r->offset,
             (unsigned long long)(r->offset + r->length - 1));
    range = x->range_hdr;
  } else if (r->kind == DS_HTTP_SUFFIX) {
    snprintf(x->range_hdr, sizeof x->range_hdr, "bytes=-%llu",
             (unsigned long long)r->length);
    range = x->range_hdr;
  }
  const char *method = r->kind == DS_HTTP_HEAD ? "HEAD" : "GET";
  ds_buf lines = {0};
  if (range) ds_buf_printf(&lines, "Range: %s\n", range);
  if (r->if_match) ds_buf_printf(&lines, "If-Match: %s\n", r->if_match);
  if (r->sign &&
      r->sign(r->sign_ctx, method, r->url, range, r->if_match, &lines, &r->err)) {
    ds_buf_free(&lines);
    return -1;
  }
  if (ds_buf_append(&lines, "", 1)) {
    ds_buf_free(&lines);
    return ds_err(&r->err, "out of memory");
  }
  char *save = NULL;
  for (char *l = strtok_r((char *)lines.data, "\n", &save); l;
       l = strtok_r(NULL, "\n", &save))
    x->hdrs = c->slist_append(x->hdrs, l);
  /* no "Expect: 100-continue", no Accept-Encoding (ranges are of the raw
   * bytes) */
  x->hdrs = c->slist_append(x->hdrs, "Expect:");
  memset(lines.data, 0, lines.len); /* signed headers hold a token */
  ds_buf_free(&lines);

  CURL *e = c->easy_init();
  if (!e) return ds_err(&r->err, "out of memory (HTTP request)");
  x->easy = e;
  x->errbuf[0] = 0;
  x->status = 0;
  x->have_range = x->range_bad = 0;
  x->retry_after_ms = -1;
  x->content_length = DS_HTTP_SIZE_UNKNOWN;
  x->etag[0] = 0;
  x->version_id[0] = 0;
  x->body.len = 0;
  x->abort_reason = ABORT_NONE;
  /* what a 200 may carry: the object asked whole, or (for a range) the
   * whole object when it is small; a 206 carries at most `length` */
  x->body_cap = r->kind == DS_HTTP_WHOLE
                    ? (r->max_bytes ? r->max_bytes : (uint64_t)1 << 30)
                : r->kind == DS_HTTP_HEAD ? 0
                                          : o->small_whole;
  int https = strncasecmp(r->url, "https://", 8) == 0;
  c->easy_setopt(e, CURLOPT_URL, r->url);
  c->easy_setopt(e, CURLOPT_PRIVATE, (char *)x);
  c->easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  c->easy_setopt(e, CURLOPT_HTTPHEADER, x->hdrs);
  c->easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
  c->easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
  c->easy_setopt(e, CURLOPT_HEADERDATA, x);
  c->easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
  c->easy_setopt(e, CURLOPT_WRITEDATA, x);
  c->easy_setopt(e, CURLOPT_TIMEOUT_MS, o->timeout_ms);
  c->easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, o->connect_timeout_ms);
  c->easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
  c->easy_setopt(e, CURLOPT_USERAGENT, "sqlite-datasets");
  c->easy_setopt(e, CURLOPT_FOLLOWLOCATION, o->max_redirects > 0 ? 1L : 0L);
  c->easy_setopt(e, CURLOPT_MAXREDIRS, (long)o->max_redirects);
  if (c->easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK)
    c->easy_setopt(e, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  if (c->easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, https ? "https" : "http") !=
      CURLE_OK)
    c->easy_setopt(e, CURLOPT_REDIR_PROTOCOLS,
                   (long)(https ? CURLPROTO_HTTPS : CURLPROTO_HTTP));
  c->easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
  c->easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
  const char *ca = ca_file(o);
  if (ca) c->easy_setopt(e, CURLOPT_CAINFO, ca);
  if (sh) c->easy_setopt(e, CURLOPT_SHARE, sh);
  if (r->kind == DS_HTTP_HEAD) c->easy_setopt(e, CURLOPT_NOBODY, 1L);
  if (c->multi_add_handle(multi, e) != CURLM_OK)
    return ds_err(&r->err, "could not start an HTTP request");
  r->tries++;
  __atomic_add_fetch(&stat_requests, 1, __ATOMIC_RELAXED);
  if (r->tries > 1) __atomic_add_fetch(&stat_retries, 1, __ATOMIC_RELAXED);
  return 0;
}

/* End the try in flight (handle removed and freed). */
static void end_try(const ds_curl_api *c, CURLM *multi, xfer *x) {
  if (x->easy) {
    c->multi_remove_handle(multi, x->easy);
    c->easy_cleanup(x->easy);
    x->easy = NULL;
  }
  c->slist_free_all(x->hdrs);
  x->hdrs = NULL;
}

/* Outcome of one try. */
enum { TRY_OK, TRY_RETRY, TRY_FAIL };

/* "<METHOD> <url>" for messages (no user info, no query). */
static void what(const ds_http_req *r, char *out, size_t cap) {
  char u[1024];
  ds_http_url_for_message(r->url, u, sizeof u);
  snprintf(out, cap, "%s %s", r->kind == DS_HTTP_HEAD ? "HEAD" : "GET", u);
}

/* Move the bytes [from, from + n) of x->body into r->body. */
static int take_body(xfer *x, uint64_t from, uint64_t n) {
  ds_http_req *r = x->r;
  r->body.len = 0;
  if (n && ds_buf_append(&r->body, x->body.data + from, n))
    return ds_err(&r->err, "out of memory");
  return 0;
}

/* Judge a 2xx/412/416 response of a try that completed. */
static int judge_response(xfer *x, const ds_http_opts *o, char **msg) {
  ds_http_req *r = x->r;
  char w[1100];
  what(r, w, sizeof w);
  r->status = x->status;
  if (x->etag[0]) snprintf(r->etag, sizeof r->etag, "%s", x->etag);
  if (x->version_id[0])
    snprintf(r->version_id, sizeof r->version_id, "%s", x->version_id);
  if (x->status == 412 && r->if_match) {
    r->changed = 1;
    ds_err(msg, "%s: the object changed while it was read (If-Match %s failed)",
           w, r->if_match);
    return TRY_FAIL;
  }
  if (x->status >= 200 && x->status < 300 && r->if_match && x->etag[0] &&
      strcmp(x->etag, r->if_match) != 0) {
    r->changed = 1;
    ds_err(msg, "%s: the object changed while it was read (ETag %s, was %s)",
           w, x->etag, r->if_match);
    return TRY_FAIL;
  }
  int ranged = r->kind == DS_HTTP_RANGE || r->kind == DS_HTTP_SUFFIX;
  if (x->status == 416 && ranged) {
    if (x->have_range && !x->range_bad && x->cr_first == DS_HTTP_SIZE_UNKNOWN &&
        x->cr_total != DS_HTTP_SIZE_UNKNOWN) {
      r->size = x->cr_total;
      if (r->kind == DS_HTTP_SUFFIX && x->cr_total == 0) {
        r->body.len = 0; /* the last n bytes of an empty object: none */
        return TRY_OK;
      }
      ds_err(msg, "%s: %s is beyond the end of the object (%llu bytes)",
             w, x->range_hdr, (unsigned long long)x->cr_total);
    } else {
      ds_err(msg, "%s: HTTP 416 for %s", w, x->range_hdr);
    }
    return TRY_FAIL;
  }
  if (x->status == 206 && ranged) {
    uint64_t f, l;
    if (!x->have_range || x->range_bad) {
      ds_err(msg, "%s: HTTP 206 without a readable Content-Range", w);
      return TRY_FAIL;
    }
    if (x->cr_first == DS_HTTP_SIZE_UNKNOWN ||
        (x->cr_total == DS_HTTP_SIZE_UNKNOWN && r->kind == DS_HTTP_SUFFIX) ||
        ds_http_expected_range(r->kind == DS_HTTP_SUFFIX, r->offset, r->length,
                               x->cr_total == DS_HTTP_SIZE_UNKNOWN
                                   ? r->offset + r->length
                                   : x->cr_total,
                               &f, &l) ||
        f != x->cr_first || l != x->cr_last) {
      ds_err(msg, "%s: the server answered bytes %llu-%llu/%llu to a request "
                  "for %s",
             w, (unsigned long long)x->cr_first, (unsigned long long)x->cr_last,
             (unsigned long long)x->cr_total, x->range_hdr);
      return TRY_FAIL;
    }
    if (x->body.len != l - f + 1) {
      ds_err(msg, "%s: %zu bytes received of %llu", w, x->body.len,
             (unsigned long long)(l - f + 1));
      return TRY_RETRY; /* a short body */
    }
    r->size = x->cr_total;
    return take_body(x, 0, x->body.len) ? TRY_FAIL : TRY_OK;
  }
  if (x->status == 200) {
    uint64_t got = x->body.len;
    if (r->kind != DS_HTTP_HEAD && x->content_length != DS_HTTP_SIZE_UNKNOWN &&
        got != x->content_length) {
      ds_err(msg, "%s: %llu bytes received of %llu", w, (unsigned long long)got,
             (unsigned long long)x->content_length);
      return TRY_RETRY;
    }
    if (r->kind == DS_HTTP_HEAD) {
      r->size = x->content_length;
      return TRY_OK;
    }
    r->size = got;
    if (r->kind == DS_HTTP_WHOLE) return take_body(x, 0, got) ? TRY_FAIL : TRY_OK;
    /* a range answered with the whole object (small enough: on_body
     * stopped larger ones) */
    uint64_t f, l;
    if (got == 0 && r->kind == DS_HTTP_SUFFIX) {
      r->body.len = 0;
      return TRY_OK;
    }
    if (ds_http_expected_range(r->kind == DS_HTTP_SUFFIX, r->offset, r->length,
                               got, &f, &l)) {
      ds_err(msg, "%s: %s is beyond the end of the object (%llu bytes)",
             w, x->range_hdr, (unsigned long long)got);
      return TRY_FAIL;
    }
    (void)o;
    return take_body(x, f, l - f + 1) ? TRY_FAIL : TRY_OK;
  }
  ds_err(msg, "%s: unexpected HTTP %ld", w, x->status);
  return TRY_FAIL;
}

/* Judge a try libcurl finished with result rc. */
static int judge(const ds_curl_api *c, xfer *x, CURLcode rc,
                 const ds_http_opts *o, char **msg) {
  ds_http_req *r = x->r;
  char w[1100];
  what(r, w, sizeof w);
  if (x->abort_reason == ABORT_IGNORED_RANGE) {
    ds_err(msg, "%s: the server ignored the Range header (HTTP 200 for %s); "
                "objects over %llu bytes need a server that answers range requests",
           w, x->range_hdr, (unsigned long long)o->small_whole);
    return TRY_FAIL;
  }
  if (x->abort_reason == ABORT_TOO_BIG) {
    ds_err(msg, "%s: the object is over %llu bytes", w,
           (unsigned long long)x->body_cap);
    return TRY_FAIL;
  }
  if (x->abort_reason == ABORT_TOO_LONG) {
    /* a 206 longer than asked: its Content-Range says why (s3rver answers
     * bytes=-64 with 0-64/N) */
    if (x->status == 206 && judge_response(x, o, msg) == TRY_FAIL) return TRY_FAIL;
    ds_err(msg, "%s: the server sent more bytes than the range %s", w,
           x->range_hdr);
    return TRY_FAIL;
  }
  if (rc == CURLE_PARTIAL_FILE && x->status == 206) {
    /* a short 206: retried, unless its Content-Range is already wrong
     * (s3rver answers a range of an empty object with a 206 whose
     * Content-Length 1 never comes) */
    char *m = NULL;
    if (judge_response(x, o, &m) == TRY_FAIL) {
      free(*msg);
      *msg = m;
      return TRY_FAIL;
    }
    free(m);
  }
  if (rc != CURLE_OK) {
    const char *detail = x->errbuf[0] ? x->errbuf : c->easy_strerror(rc);
    if (rc == CURLE_UNSUPPORTED_PROTOCOL) /* the first URL was http(s) */
      ds_err(msg, "%s: a redirect to another scheme is refused (%s)", w, detail);
    else
      ds_err(msg, "%s: %s", w, detail);
    switch (rc) {
      case CURLE_COULDNT_RESOLVE_HOST:
      case CURLE_COULDNT_CONNECT:
      case CURLE_OPERATION_TIMEDOUT:
      case CURLE_PARTIAL_FILE:
      case CURLE_RECV_ERROR:
      case CURLE_SEND_ERROR:
      case CURLE_GOT_NOTHING:
      case CURLE_HTTP2:
      case CURLE_HTTP2_STREAM:
      case CURLE_SSL_CONNECT_ERROR:
        return TRY_RETRY;
      default:
        return TRY_FAIL; /* TLS verification, redirects, protocols, ... */
    }
  }
  long st = x->status;
  r->status = st;
  if (st == 408 || st == 429 || st == 500 || st == 502 || st == 503 || st == 504) {
    char code[64];
    ds_http_xml_error_code((char *)x->body.data, x->body.len, code, sizeof code);
    ds_err(msg, "%s: HTTP %ld%s%s", w, st, code[0] ? " " : "", code);
    return TRY_RETRY;
  }
  if ((st >= 200 && st < 300) || st == 412 || st == 416)
    return judge_response(x, o, msg);
  char code[64];
  ds_http_xml_error_code((char *)x->body.data, x->body.len, code, sizeof code);
  ds_err(msg, "%s: HTTP %ld%s%s", w, st, code[0] ? " " : "", code);
  return TRY_FAIL;
}

/* Backoff before try k+1 (k tries made): equal jitter on base * 2^(k-1),
 * capped; at least Retry-After (capped). */
static long backoff_ms(const ds_http_opts *o, int k, long retry_after,
                       uint64_t *rng) {
  long b = o->backoff_base_ms;
  for (int i = 1; i < k && b < o->backoff_max_ms; i++) b *= 2;
  if (b > o->backoff_max_ms) b = o->backoff_max_ms;
  *rng ^= *rng << 13;
  *rng ^= *rng >> 7;
  *rng ^= *rng << 17;
  long d = b / 2 + (long)(*rng % (uint64_t)(b / 2 + 1));
  if (retry_after >= 0) {
    long ra = retry_after < o->retry_after_max_ms ? retry_after
                                                  : o->retry_after_max_ms;
    if (ra > d) d = ra;
  }
  return d;
}

void ds_http_opts_default(ds_http_opts *o) {
  memset(o, 0, sizeof *o);
  o->retries = 4;
  o->timeout_ms = 30000;
  o->connect_timeout_ms = 10000;
  o->small_whole = 65536;
  o->max_redirects = 4;
  o->backoff_base_ms = 100;
  o->backoff_max_ms = 5000;
  o->retry_after_max_ms = 30000;
  o->max_parallel = 16;
}

void ds_http_req_free(ds_http_req *r) {
  ds_buf_free(&r->body);
  free(r->err);
  r->err = NULL;
}

void ds_http_get_stats(ds_http_stats *out) {
  out->requests = __atomic_load_n(&stat_requests, __ATOMIC_RELAXED);
  out->retries = __atomic_load_n(&stat_retries, __ATOMIC_RELAXED);
  out->bytes = __atomic_load_n(&stat_bytes, __ATOMIC_RELAXED);
  out->failures = __atomic_load_n(&stat_failures, __ATOMIC_RELAXED);
}

/* Only http:// and https:// URLs are fetched. */
static int scheme_ok(const char *url) {
  return strncasecmp(url, "http://", 7) == 0 ||
         strncasecmp(url, "https://", 8) == 0;
}

/* Fail x with msg (taken). */
static void fail(xfer *x, char *msg) {
  free(x->r->err);
  x->r->err = msg;
  x->done = 1;
  __atomic_add_fetch(&stat_failures, 1, __ATOMIC_RELAXED);
}

int ds_http_run(ds_http_req *reqs, size_t n, const ds_http_opts *opts) {
  ds_http_opts o;
  if (opts)
    o = *opts;
  else
    ds_http_opts_default(&o);
  if (o.max_parallel < 1) o.max_parallel = 1;
  if (o.retries < 0) o.retries = 0;
  for (size_t i = 0; i < n; i++) {
    ds_http_req *r = &reqs[i];
    ds_buf_free(&r->body);
    free(r->err);
    r->err = NULL;
    r->size = DS_HTTP_SIZE_UNKNOWN;
    r->etag[0] = 0;
    r->version_id[0] = 0;
    r->status = 0;
    r->tries = 0;
    r->changed = 0;
  }
  if (n == 0) return 0;
  char *err = NULL;
  const ds_curl_api *c = ds_curl_get(&err);
  CURLSH *sh = NULL;
  session *s = c ? session_get(c, o.max_parallel, &sh, &err) : NULL;
  xfer *xs = s ? calloc(n, sizeof *xs) : NULL;
  if (!xs) {
    if (s) session_put(c, s);
    for (size_t i = 0; i < n; i++)
      reqs[i].err = ds_strf("%s", err ? err : "out of memory");
    free(err);
    return -1;
  }
  uint64_t rng = (uint64_t)now_ns() ^ (uint64_t)(uintptr_t)xs;
  if (!rng) rng = 1;
  size_t left = n;
  for (size_t i = 0; i < n; i++) {
    xs[i].r = &reqs[i];
    xs[i].body.max = 0;
    if (!reqs[i].url || !scheme_ok(reqs[i].url)) {
      char u[1024];
      ds_http_url_for_message(reqs[i].url ? reqs[i].url : "", u, sizeof u);
      fail(&xs[i], ds_strf("%s: only http:// and https:// URLs are fetched", u));
      left--;
    } else if ((reqs[i].kind == DS_HTTP_RANGE || reqs[i].kind == DS_HTTP_SUFFIX) &&
               reqs[i].length == 0) {
      fail(&xs[i], ds_strf("a range of 0 bytes"));
      left--;
    }
  }
  int cancelled = 0;
  while (left > 0) {
    if (ds_cancel_check()) {
      cancelled = 1;
      break;
    }
    /* start what may start */
    int64_t t = now_ns(), next = INT64_MAX;
    int inflight = 0;
    for (size_t i = 0; i < n; i++) inflight += xs[i].easy != NULL;
    for (size_t i = 0; i < n && inflight < o.max_parallel; i++) {
      xfer *x = &xs[i];
      if (x->done || x->easy) continue;
      if (x->start_at_ns > t) {
        if (x->start_at_ns < next) next = x->start_at_ns;
        continue;
      }
      if (start_try(c, s->multi, sh, x, &o)) {
        end_try(c, s->multi, x);
        char *m = x->r->err;
        x->r->err = NULL;
        fail(x, m ? m : ds_strf("out of memory"));
        left--;
        continue;
      }
      inflight++;
    }
    int running = 0;
    c->multi_perform(s->multi, &running);
    CURLMsg *m;
    int q;
    while ((m = c->multi_info_read(s->multi, &q))) {
      if (m->msg != CURLMSG_DONE) continue;
      xfer *x = NULL;
      c->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
      CURLcode rc = m->data.result;
      if (!x) continue;
      char *msg = NULL;
      int verdict = judge(c, x, rc, &o, &msg);
      end_try(c, s->multi, x);
      if (verdict == TRY_OK) {
        free(msg);
        x->done = 1;
        left--;
      } else if (verdict == TRY_RETRY && x->r->tries <= o.retries) {
        free(msg);
        x->start_at_ns = now_ns() + (int64_t)backoff_ms(&o, x->r->tries,
                                                        x->retry_after_ms, &rng) *
                                        1000000;
      } else {
        if (verdict == TRY_RETRY && msg) {
          char *m2 = ds_strf("%s (after %d tries)", msg, x->r->tries);
          if (m2) {
            free(msg);
            msg = m2;
          }
        }
        fail(x, msg ? msg : ds_strf("out of memory"));
        left--;
      }
      ds_buf_free(&x->body);
    }
    if (left == 0) break;
    /* wait for traffic, a retry's time, or 50 ms (then poll cancel) */
    long wait_ms = 50;
    if (next != INT64_MAX) {
      int64_t d = (next - now_ns()) / 1000000;
      if (d < wait_ms) wait_ms = d < 0 ? 0 : (long)d;
    }
    int nfds;
    if (c->multi_poll)
      c->multi_poll(s->multi, NULL, 0, (int)wait_ms, &nfds);
    else
      c->multi_wait(s->multi, NULL, 0, (int)wait_ms, &nfds);
  }
  int failed = 0;
  for (size_t i = 0; i < n; i++) {
    xfer *x = &xs[i];
    end_try(c, s->multi, x);
    ds_buf_free(&x->body);
    if (cancelled && !x->done) fail(x, ds_strf("%s", DS_CANCEL_MSG));
    failed |= reqs[i].err != NULL;
    if (reqs[i].err) ds_buf_free(&reqs[i].body);
  }
  free(xs);
  session_put(c, s);
  return failed ? -1 : 0;
}
