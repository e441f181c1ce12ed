/* remote_sign.h - the ds_http_sign_fn of s3:// and gs:// requests: with a
 * config's access keys, Signature V4 (s3_sign.c) over the request's Host,
 * path and query taken from its URL; with an OAuth token,
 * "Authorization: Bearer"; with neither, nothing (anonymous). */
#ifndef DS_REMOTE_SIGN_H
#define DS_REMOTE_SIGN_H

#include "remote/http.h"
#include "remote/remote_creds.h"

/* A ds_http_sign_fn; ctx is a const ds_remote_config *. */
int ds_remote_sign(void *ctx, const char *method, const char *url,
                   const char *range, const char *if_match, ds_buf *out,
                   char **err);

/* Percent-decode n bytes into b (NUL-terminated; "+" stays "+"). */
int ds_percent_decode(ds_buf *b, const char *s, size_t n);

#endif
