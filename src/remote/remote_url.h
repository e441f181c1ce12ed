/* remote_url.h - remote paths as users type them, and the HTTP URLs of S3
 * objects. s3://bucket/key and gs://bucket/key (the key taken literally,
 * as AWS's tools take it: "a%20b" is a key with a '%'); http:// and
 * https:// URLs pass as given. An S3 object's URL follows the endpoint
 * and the url_style: AWS's own endpoint defaults to virtual-host style
 * (bucket.s3.<region>.amazonaws.com) except for buckets that are not DNS
 * labels (dots, capitals: path style); a custom endpoint (AWS_ENDPOINT_URL,
 * endpoint=) and GCS default to path style (host/bucket/key). */
#ifndef DS_REMOTE_URL_H
#define DS_REMOTE_URL_H

#include "core/common.h"
#include "remote/sigv4.h"

typedef enum ds_remote_scheme {
  DS_REMOTE_NONE = 0, /* a local path */
  DS_REMOTE_HTTP,     /* http:// or https:// */
  DS_REMOTE_S3,
  DS_REMOTE_GS
} ds_remote_scheme;

/* The scheme of a path ("S3://" and "HTTPS://" too); NONE for local. */
ds_remote_scheme ds_remote_scheme_of(const char *path);

/* A parsed remote path. bucket and key are NULL for http(s). */
typedef struct ds_remote_url {
  ds_remote_scheme scheme;
  char *bucket;
  char *key; /* "" for the bucket itself */
  char *url; /* http(s): the URL as given */
} ds_remote_url;

/* Parse; 0 ok, -1 with *err naming the path (a URL's user info and query
 * string never appear in it). */
int ds_remote_url_parse(const char *path, ds_remote_url *out, char **err);
void ds_remote_url_free(ds_remote_url *u);

typedef enum ds_url_style {
  DS_URL_STYLE_AUTO = 0,
  DS_URL_STYLE_PATH,
  DS_URL_STYLE_VIRTUAL
} ds_url_style;

/* Where an object lives: what a request to it sends. */
typedef struct ds_s3_target {
  ds_buf url;  /* scheme://host[:port]/path[?query] */
  ds_buf host; /* the Host header */
  ds_buf path; /* the encoded path (what SigV4 signs) */
} ds_s3_target;

/* The target of bucket/key with the query pairs (decoded; NULL/0: none).
 * endpoint NULL: AWS's for the region; else "http[s]://host[:port][/base]".
 * 0 ok, -1 with *err. */
int ds_s3_target_make(const char *endpoint, const char *region,
                      ds_url_style style, const char *bucket, const char *key,
                      const ds_kv *query, size_t nquery, ds_s3_target *t,
                      char **err);
void ds_s3_target_free(ds_s3_target *t);

#endif
