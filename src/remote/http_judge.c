/* http_judge.c - what one try's response means: the bytes asked for,
 * a retry (connection errors, timeouts, short bodies, 408/429/5xx) or an
 * error at once (403/404 with S3's code, a Content-Range not asked for, a
 * server ignoring Range above small_whole, a changed object). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/http_judge.h"


/* "<METHOD> <url>" for messages (no user info, no query). */
static void what(const ds_http_req *r, char *out, size_t cap) {
  char u[1024];
  ds_http_url_for_message(r->url, u, sizeof u);
  snprintf(out, cap, "%s %s", r->kind == DS_HTTP_HEAD ? "HEAD" : "GET", u);
}

/* Move the bytes [from, from + n) of x->body into r->body: the buffer
 * itself when they are all of it (no copy of a range's answer), else a
 * copy. */
static int take_body(ds_http_xfer *x, uint64_t from, uint64_t n) {
  ds_http_req *r = x->r;
  r->body.len = 0;
  if (from == 0 && n == x->body.len && n && (!r->body.max || n <= r->body.max)) {
    size_t max = r->body.max;
    ds_buf_free(&r->body);
    r->body = x->body;
    r->body.max = max;
    memset(&x->body, 0, sizeof x->body);
    return 0;
  }
  if (n && ds_buf_append(&r->body, x->body.data + from, n))
    return ds_err(&r->err, "out of memory");
  return 0;
}

/* Judge a 2xx/412/416 response of a try that completed. */
static int judge_response(ds_http_xfer *x, const ds_http_opts *o, char **msg) {
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
int ds_http_judge(const ds_curl_api *c, ds_http_xfer *x, CURLcode rc,
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
