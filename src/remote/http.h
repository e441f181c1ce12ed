/* http.h - the HTTP range client of remote paths (issue 23), over libcurl
 * (loaded on first use: curl_api.h). Knows no SQLite and no S3 beyond an
 * optional signing callback and the error code of XML error bodies.
 *
 * ds_http_run() runs a batch of requests in parallel on the calling thread
 * (libcurl's multi interface) and returns when each has its bytes or its
 * error; or, with opts.refill, a run that goes on: its requests are slots
 * a callback fills again as they end (a read-ahead window). Every response is checked: a range GET must answer 206 with a
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

#include "remote/http_types.h"

/* The defaults of ds_http_opts (in its comments). */
void ds_http_opts_default(ds_http_opts *o);

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
