/* sigv4.h - AWS Signature Version 4 at the bytes level: URI encoding,
 * canonical request, string to sign, signing key, Authorization header
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv.html).
 * Knows no HTTP library and no SQLite: a request is described by its
 * method, encoded path, decoded query pairs, the headers to sign and the
 * payload hash; what comes out are strings to send. */
#ifndef DS_SIGV4_H
#define DS_SIGV4_H

#include <stddef.h>
#include <time.h>

#include "core/common.h"
#include "remote/sha256_hmac.h"

/* One name/value pair (a query parameter or a header). */
typedef struct ds_kv {
  const char *name;
  const char *value;
} ds_kv;

/* The payload hash that says "not signed". */
#define DS_SIGV4_UNSIGNED "UNSIGNED-PAYLOAD"
/* The hex SHA-256 of no bytes (a GET's body). */
#define DS_SIGV4_EMPTY_SHA256 \
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* A request to sign. path is the URI path as sent, already encoded (S3
 * does not encode it twice: "/bucket/a%20b"); query holds decoded names and
 * values (encoded and sorted here); headers are every header to sign,
 * Host included, names in any case, values as sent; payload_hash is the
 * body's hex SHA-256 or DS_SIGV4_UNSIGNED. */
typedef struct ds_sigv4_req {
  const char *method;
  const char *path;
  const ds_kv *query;
  size_t nquery;
  const ds_kv *headers;
  size_t nheaders;
  const char *payload_hash;
} ds_sigv4_req;

/* Who signs, where and when: amz_date is "YYYYMMDDTHHMMSSZ". */
typedef struct ds_sigv4_scope {
  const char *access_key;
  const char *secret_key;
  const char *region;
  const char *service;
  const char *amz_date;
} ds_sigv4_scope;

/* AWS UriEncode of n bytes: A-Z a-z 0-9 - _ . ~ kept, every other byte
 * %XX (uppercase hex); '/' kept when keep_slash. 0 ok, -1 out of memory. */
int ds_uri_encode(ds_buf *b, const char *s, size_t n, int keep_slash);
/* The canonical query string of decoded pairs ("" when none). */
int ds_sigv4_canonical_query(ds_buf *b, const ds_kv *q, size_t n);
/* The canonical request; signed_headers gets "host;range;..." (both
 * NUL-terminated). 0 ok, -1 with *err. */
int ds_sigv4_canonical_request(const ds_sigv4_req *r, ds_buf *out,
                               ds_buf *signed_headers, char **err);
/* "AWS4-HMAC-SHA256\n<date>\n<scope>\n<hex sha256 of canonical>". */
int ds_sigv4_string_to_sign(const ds_sigv4_scope *s, const char *canonical,
                            ds_buf *out);
/* The signing key: HMAC chain over "AWS4"+secret, date, region, service,
 * "aws4_request". */
void ds_sigv4_signing_key(const ds_sigv4_scope *s, uint8_t key[DS_SHA256_LEN]);
/* The Authorization header value, in botocore's form:
 * "AWS4-HMAC-SHA256 Credential=AK/date/region/service/aws4_request,
 * SignedHeaders=..., Signature=<hex>". signature (65 bytes) may be NULL. */
int ds_sigv4_authorization(const ds_sigv4_req *r, const ds_sigv4_scope *s,
                           ds_buf *out, char signature[DS_SHA256_HEX_LEN],
                           char **err);
/* amz_date ("YYYYMMDDTHHMMSSZ", 17 bytes with the NUL) of a UTC time. */
void ds_sigv4_amz_date(time_t t, char out[17]);

#endif
