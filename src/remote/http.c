/* http.c - the HTTP range client: one try of a request (an easy handle
 * with its headers and callbacks) and the batch loop with retries, backoff
 * and cancellation (http.h). Sessions are http_pool.c's, the meaning of a
 * response http_judge.c's. */
#include "remote/http.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/cancel.h"
#include "core/remote_stats.h"
#include "remote/curl_api.h"
#include "remote/http_pool.h"
#include "remote/http_judge.h"

static uint64_t stat_requests, stat_retries, stat_bytes, stat_failures;

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

/* Forget what a response's headers said (a new response begins: the
 * request's first, or the next after a redirect or a 100). */
static void forget_response(ds_http_xfer *x) {
  x->have_range = x->range_bad = 0;
  x->retry_after_ms = -1;
  x->content_length = DS_HTTP_SIZE_UNKNOWN;
  x->etag[0] = 0;
  x->version_id[0] = 0;
  x->body.len = 0;
}

/* libcurl's header callback: one header line (a status line starts a new
 * response: after a redirect or a 100). */
static size_t on_header(char *p, size_t size, size_t nitems, void *u) {
  ds_http_xfer *x = u;
  size_t n = size * nitems, vl;
  const char *v;
  if (n >= 5 && strncmp(p, "HTTP/", 5) == 0) {
    const char *sp = memchr(p, ' ', n);
    x->status = sp ? strtol(sp + 1, NULL, 10) : 0;
    forget_response(x);
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
  ds_http_xfer *x = u;
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
    /* the answer's length is known (its Content-Range, else its
     * Content-Length; shorter than asked at the object's end: a small
     * file read ahead whole by a range of 4 MiB): one buffer of exactly
     * that size at its first bytes (not grown by doubling: no copy of
     * what came, no room over; a read-ahead block of 2 MiB was copied
     * ~once more) */
    uint64_t want = 0;
    if (x->have_range && !x->range_bad && x->cr_last >= x->cr_first)
      want = x->cr_last - x->cr_first + 1;
    else if (x->content_length != DS_HTTP_SIZE_UNKNOWN)
      want = x->content_length;
    if (want > limit) want = limit;
    if (x->body.len == 0 && x->body.cap < want && want >= n &&
        (!x->body.max || want <= x->body.max)) {
      uint8_t *d = realloc(x->body.data, (size_t)want);
      if (!d) return 0;
      x->body.data = d;
      x->body.cap = (size_t)want;
    }
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
static int start_try(const ds_curl_api *c, CURLM *multi, CURLSH *sh, ds_http_xfer *x,
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
  forget_response(x);
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
static void end_try(const ds_curl_api *c, CURLM *multi, ds_http_xfer *x) {
  if (x->easy) {
    c->multi_remove_handle(multi, x->easy);
    c->easy_cleanup(x->easy);
    x->easy = NULL;
  }
  c->slist_free_all(x->hdrs);
  x->hdrs = NULL;
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
static void fail(ds_http_xfer *x, char *msg) {
  free(x->r->err);
  x->r->err = msg;
  x->done = 1;
  __atomic_add_fetch(&stat_failures, 1, __ATOMIC_RELAXED);
}

/* Add a finished batch to the per-endpoint counters (core/remote_stats.h):
 * each request's tries, retries, failure and body bytes; the batch's wall
 * time once to each endpoint it asked (the first 8 endpoints). */
static void count_batch(const ds_http_req *reqs, size_t n, int64_t ns) {
  char seen[8][128];
  int nseen = 0;
  for (size_t i = 0; i < n; i++) {
    const ds_http_req *r = &reqs[i];
    uint64_t v[DS_RSTAT_NFIELDS] = {0};
    v[DS_RSTAT_REQUESTS] = (uint64_t)r->tries;
    v[DS_RSTAT_RETRIES] = r->tries > 1 ? (uint64_t)r->tries - 1 : 0;
    v[DS_RSTAT_FAILURES] = r->err != NULL;
    v[DS_RSTAT_BYTES] = r->body.len;
    char e[128];
    ds_rstats_endpoint(r->url, e);
    int first = nseen < 8;
    for (int j = 0; j < nseen && first; j++) first = strcmp(seen[j], e) != 0;
    if (first) {
      memcpy(seen[nseen++], e, sizeof e);
      v[DS_RSTAT_WAIT_US] = ns > 0 ? (uint64_t)ns / 1000 : 0;
    }
    ds_rstats_add_row(e, v);
  }
}

/* Fail x when its request cannot be sent (a scheme other than http(s),
 * a range of 0 bytes): 1 when it failed (done), else 0. */
static int check_req(ds_http_xfer *x) {
  ds_http_req *r = x->r;
  if (!r->url || !scheme_ok(r->url)) {
    char u[1024];
    ds_http_url_for_message(r->url ? r->url : "", u, sizeof u);
    fail(x, ds_strf("%s: only http:// and https:// URLs are fetched", u));
    return 1;
  }
  if ((r->kind == DS_HTTP_RANGE || r->kind == DS_HTTP_SUFFIX) && r->length == 0) {
    fail(x, ds_strf("a range of 0 bytes"));
    return 1;
  }
  return 0;
}

/* Clear what a request's last run answered (before it runs). */
static void reset_answer(ds_http_req *r) {
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

/* A run that goes on (o->refill): count the requests that ended since
 * the last turn, then offer every idle slot to the callback; the slots
 * refilled. */
static size_t refill_idle(ds_http_xfer *xs, size_t n, const ds_http_opts *o) {
  size_t again = 0;
  for (size_t i = 0; i < n; i++) {
    ds_http_xfer *x = &xs[i];
    if (!x->done) continue;
    if (!x->counted) count_batch(x->r, 1, 0);
    x->counted = 1;
    if (!o->refill(o->refill_ctx, i)) continue;
    ds_http_req *r = x->r;
    reset_answer(r);
    x->done = x->counted = 0;
    x->start_at_ns = 0;
    if (check_req(x)) continue; /* failed at once: offered again next turn */
    again++;
  }
  return again;
}

/* The wall time of a run that goes on, once, to the endpoint of its
 * first slot (its requests were counted one by one). */
static void count_wait(const ds_http_req *reqs, size_t n, int64_t ns) {
  if (!n || !reqs[0].url) return;
  uint64_t v[DS_RSTAT_NFIELDS] = {0};
  char e[128];
  ds_rstats_endpoint(reqs[0].url, e);
  v[DS_RSTAT_WAIT_US] = ns > 0 ? (uint64_t)ns / 1000 : 0;
  ds_rstats_add_row(e, v);
}

int ds_http_run(ds_http_req *reqs, size_t n, const ds_http_opts *opts) {
  ds_http_opts o;
  if (opts)
    o = *opts;
  else
    ds_http_opts_default(&o);
  if (o.max_parallel < 1) o.max_parallel = 1;
  if (o.retries < 0) o.retries = 0;
  for (size_t i = 0; i < n && !o.refill; i++) reset_answer(&reqs[i]);
  if (n == 0) return 0;
  int64_t t0 = now_ns();
  char *err = NULL;
  const ds_curl_api *c = ds_curl_get(&err);
  CURLSH *sh = NULL;
  ds_http_session *s = c ? ds_http_session_get(c, o.max_parallel, &sh, &err) : NULL;
  ds_http_xfer *xs = s ? calloc(n, sizeof *xs) : NULL;
  if (!xs) {
    if (s) ds_http_session_put(c, s);
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
    if (o.refill) { /* a slot: idle until refilled */
      xs[i].done = xs[i].counted = 1;
      left--;
    } else if (check_req(&xs[i])) {
      left--;
    }
  }
  int cancelled = 0;
  for (;;) {
    if (ds_cancel_check()) {
      cancelled = 1;
      break;
    }
    if (o.refill) left += refill_idle(xs, n, &o);
    if (left == 0) break;
    /* start what may start */
    int64_t t = now_ns(), next = INT64_MAX;
    int inflight = 0;
    for (size_t i = 0; i < n; i++) inflight += xs[i].easy != NULL;
    for (size_t i = 0; i < n && inflight < o.max_parallel; i++) {
      ds_http_xfer *x = &xs[i];
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
    int q, ended = 0;
    while ((m = c->multi_info_read(s->multi, &q))) {
      if (m->msg != CURLMSG_DONE) continue;
      ended++;
      ds_http_xfer *x = NULL;
      c->easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&x);
      CURLcode rc = m->data.result;
      if (!x) continue;
      char *msg = NULL;
      int verdict = ds_http_judge(c, x, rc, &o, &msg);
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
    if (left == 0 && !o.refill) break;
    if (o.refill && ended) continue; /* their slots are refilled at once */
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
    ds_http_xfer *x = &xs[i];
    end_try(c, s->multi, x);
    ds_buf_free(&x->body);
    if (cancelled && !x->done) fail(x, ds_strf("%s", DS_CANCEL_MSG));
    failed |= reqs[i].err != NULL;
    if (reqs[i].err) ds_buf_free(&reqs[i].body);
  }
  if (o.refill) { /* the answers were counted as they ended */
    for (size_t i = 0; i < n; i++)
      if (!xs[i].counted) count_batch(&reqs[i], 1, 0);
    count_wait(reqs, n, now_ns() - t0);
  } else {
    count_batch(reqs, n, now_ns() - t0);
  }
  free(xs);
  ds_http_session_put(c, s);
  return failed ? -1 : 0;
}
