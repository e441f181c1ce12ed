/* s3_sign.h - the Signature V4 headers of one S3 request: x-amz-date,
 * x-amz-content-sha256, x-amz-security-token (with a session token) and
 * Authorization, signing Host, Range and If-Match when sent, as botocore's
 * S3SigV4Auth does. Called once per try (the date is part of the
 * signature). */
#ifndef DS_S3_SIGN_H
#define DS_S3_SIGN_H

#include <time.h>

#include "remote/sigv4.h"

/* Credentials of a signer; session_token NULL or "" when none. */
typedef struct ds_s3_keys {
  const char *access_key;
  const char *secret_key;
  const char *session_token;
} ds_s3_keys;

/* One request: host is the Host header ("bucket.s3.amazonaws.com",
 * "127.0.0.1:9000"); path the encoded path as sent; query decoded pairs;
 * range and if_match the header values or NULL; payload_hash NULL for
 * UNSIGNED-PAYLOAD; service NULL for "s3". */
typedef struct ds_s3_sign_in {
  const char *method;
  const char *host;
  const char *path;
  const ds_kv *query;
  size_t nquery;
  const char *range;
  const char *if_match;
  const char *payload_hash;
  const char *region;
  const char *service;
  time_t now;
} ds_s3_sign_in;

/* Append the headers to send as "Name: value\n" lines to out. 0 ok, -1
 * with *err (no secret in it). */
int ds_s3_sign_headers(const ds_s3_sign_in *in, const ds_s3_keys *keys,
                       ds_buf *out, char **err);

#endif
