/* remote_object.h - one remote path as the seam's remote backends use
 * it: the URL requests go to, the name messages show (no user info, no
 * query string), the resolved S3/GCS config that signs them, and the
 * HTTP settings (retries, timeout) of this process. Also the guard that
 * keeps paths inside a remote dataset (no "." or ".." segment). */
#ifndef DS_REMOTE_OBJECT_H
#define DS_REMOTE_OBJECT_H

#include "remote/http.h"
#include "remote/remote_creds.h"
#include "remote/remote_url.h"

typedef struct ds_robj {
  ds_remote_scheme scheme;
  char *path;  /* as given (s3://b/k, https://h/p) */
  char *url;   /* what requests go to */
  char *shown; /* for messages */
  char *bucket, *key; /* s3/gs; NULL for http(s) */
  ds_remote_config cfg; /* s3/gs */
  int has_cfg;
  int retries;     /* retries= when given, else -1 */
  long timeout_ms; /* timeout_ms= when given, else -1 */
  int cache;       /* remote_cache=: -1 not given, 0 on, 1 off */
} ds_robj;

/* Make the object of `path` with the settings current on this thread
 * (ds_vfs_remote_current: endpoint=, region=, url_style=, anonymous=,
 * retries=, timeout_ms=, remote_cache=, kept for the object's requests); 0 ok, -1 with *err (naming the path). */
int ds_robj_make(const char *path, ds_robj *o, char **err);
void ds_robj_free(ds_robj *o);
/* Zero r and point it at o (url, signer). */
void ds_robj_req(const ds_robj *o, ds_http_req *r, ds_http_kind kind);

/* The HTTP settings of remote reads: ds_http_opts_default with retries
 * and timeout_ms from DATASETS_REMOTE_RETRIES / DATASETS_REMOTE_TIMEOUT_MS
 * when set. */
void ds_remote_http_opts(ds_http_opts *o);
/* ds_remote_http_opts with o's retries= and timeout_ms= when given. */
void ds_robj_http_opts(const ds_robj *o, ds_http_opts *h);

/* 0 when path has no "." or ".." segment after its host or bucket (a
 * remote dataset's files stay inside it), else -1. */
int ds_remote_path_confined(const char *path);

#endif
