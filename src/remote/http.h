/* http.h - the HTTP range client of remote paths (issue 23), over libcurl
 * (loaded on first use: curl_api.h). Knows no SQLite and no S3 beyond an
 * optional signing callback and the error code of XML error bodies.
 *
 * ds_http_run() runs a batch of requests in parallel on the calling thread
 * (libcurl's multi interface) and returns when each has its bytes or its
 * error. Every response is checked: a range GET must answer 206 with a
 * Content-Range equal to the range asked (clipped at the object's end) and
 * exactly that many bytes; a 200 to a range request (a server ignoring
 * Range) is refused unless the whole object is at most opts.small_whole
 * bytes, then the range is cut from it. With if_match set, the request
 * sends If-Match and a 412 or a different ETag is "changed" (for servers
 * that ignore If-Match). Retries: connection errors, timeouts, short
 * bodies, 408/429/500/502/503/504, with exponential backoff and jitter
 * (at least Retry-After), at most opts.retries more tries; the batch polls
 * ds_cancel_check() (core/cancel.h) between and during tries and stops
 * with DS_CANCEL_MSG. Other 4xx/5xx fail at once: "GET <url>: HTTP 404
 * NoSuchKey" (the URL without user info or query string). Only http and
 * https; redirects at most opts.max_redirects and only to the same
 * scheme; TLS verified, CA bundle from CURL_CA_BUNDLE or SSL_CERT_FILE
 * when set.
 *
 * Connections are reused across calls: a process-wide pool of sessions
 * (each a multi handle with its connection cache, used by one thread at a
 * time), with DNS and TLS sessions shared between them under locks. Any
 * number of threads may call ds_http_run at once. */
#ifndef DS_HTTP_H
#define DS_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "remote/http_parse.h"

typedef enum ds_http_kind {
  DS_HTTP_RANGE,  /* GET bytes [offset, offset + length) (length > 0) */
  DS_HTTP_SUFFIX, /* GET the last `length` bytes (gives the size too) */
  DS_HTTP_WHOLE,  /* GET the whole object (at most max_bytes) */
  DS_HTTP_HEAD    /* HEAD: size and ETag */
} ds_http_kind;

/* Signs one try: append "Name: value\n" header lines to out. method is
 * "GET"/"HEAD", range and if_match the values that will be sent (NULL
 * when not). 0 ok, -1 with *err (without secrets). */
typedef int (*ds_http_sign_fn)(void *ctx, const char *method, const char *url,
                               const char *range, const char *if_match,
                               ds_buf *out, char **err);

/* Settings of a batch; ds_http_opts_default() fills the defaults. */
typedef struct ds_http_opts {
  int retries;             /* more tries after the first (4) */
  long timeout_ms;         /* one try, connect to last byte (30000) */
  long connect_timeout_ms; /* (10000) */
  uint64_t small_whole;    /* a 200 to a range taken up to this size (65536) */
  int max_redirects;       /* (4) */
  long backoff_base_ms;    /* first backoff (100); doubles per try */
  long backoff_max_ms;     /* (5000) */
  long retry_after_max_ms; /* Retry-After honoured up to this (30000) */
  int max_parallel;        /* transfers in flight at once (16) */
  const char *ca_file;     /* NULL: CURL_CA_BUNDLE, SSL_CERT_FILE, system */
} ds_http_opts;

void ds_http_opts_default(ds_http_opts *o);

/* One request and, after ds_http_run, its answer. Zero it, then set the
 * inputs. */
typedef struct ds_http_req {
  /* in */
  ds_http_kind kind;
  const char *url;
  uint64_t offset, length; /* RANGE / SUFFIX */
  uint64_t max_bytes;      /* WHOLE: more is an error (0: 1 GiB) */
  const char *if_match;    /* an ETag the object must still have, or NULL */
  ds_http_sign_fn sign;    /* NULL: unsigned */
  void *sign_ctx;
  /* out */
  ds_buf body;   /* the bytes asked for (caller frees: ds_http_req_free) */
  uint64_t size; /* the object's size, DS_HTTP_SIZE_UNKNOWN when not told */
  char etag[200];
  char version_id[128]; /* S3's x-amz-version-id, "" when none */
  long status;   /* last HTTP status (0: none) */
  int tries;     /* tries made */
  int changed;   /* the object is not the one if_match named */
  char *err;     /* NULL ok, else the error (malloc'd) */
} ds_http_req;

/* Run n requests in parallel; 0 when all succeeded, -1 when any failed
 * (each has its own err). */
int ds_http_run(ds_http_req *reqs, size_t n, const ds_http_opts *opts);
/* Free a request's answer (body, err); its inputs are the caller's. */
void ds_http_req_free(ds_http_req *r);

/* Process-wide counters (since load), for datasets_remote_stats() and
 * the tests. */
typedef struct ds_http_stats {
  uint64_t requests;  /* tries sent */
  uint64_t retries;   /* tries that were retries */
  uint64_t bytes;     /* body bytes received */
  uint64_t failures;  /* requests that ended in an error */
} ds_http_stats;
void ds_http_get_stats(ds_http_stats *out);

#endif
