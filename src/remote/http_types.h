/* http_types.h - the requests and settings of the HTTP range client
 * (http.h explains them); apart so that http_judge.c shares them without
 * an include circle. */
#ifndef DS_HTTP_TYPES_H
#define DS_HTTP_TYPES_H

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
  /* Optional (NULL: a plain batch): a run that goes on. The n requests
   * are slots, all idle at first (their inputs unread); on every turn of
   * the loop (each wake-up: traffic, or 50 ms) refill(refill_ctx, i) is
   * called on the calling thread for each idle slot i, right after its
   * request ended (its answer final: the callback takes body and err)
   * and again while it idles; it returns 1 when it has set new inputs in
   * reqs[i] (answer fields cleared; the slot runs again), else 0. The run
   * returns when no slot runs and none was refilled in a turn. */
  int (*refill)(void *ctx, size_t i);
  void *refill_ctx;
} ds_http_opts;

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

#endif
