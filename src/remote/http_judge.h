/* http_judge.h - one request of a batch and the response of its try in
 * flight (private to http.c and http_judge.c). */
#ifndef DS_HTTP_JUDGE_H
#define DS_HTTP_JUDGE_H

#include <stdint.h>

#include "remote/curl_api.h"
#include "remote/http_types.h"

typedef struct ds_http_xfer {
  ds_http_req *r;
  CURL *easy;             /* the try in flight, or NULL */
  struct curl_slist *hdrs;
  char errbuf[CURL_ERROR_SIZE];
  int64_t start_at_ns;    /* next try not before (0: now) */
  int done;
  int counted;            /* its answer is in the stats (a run that goes on) */
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
} ds_http_xfer;

enum { ABORT_NONE, ABORT_TOO_BIG, ABORT_IGNORED_RANGE, ABORT_TOO_LONG };

/* Outcome of one try. */
enum { TRY_OK, TRY_RETRY, TRY_FAIL };

/* Judge a try libcurl finished with result rc: TRY_OK (r->body, size, etag
 * set), TRY_RETRY or TRY_FAIL, with *msg saying why. */
int ds_http_judge(const ds_curl_api *c, ds_http_xfer *x, CURLcode rc,
                  const ds_http_opts *o, char **msg);

#endif
