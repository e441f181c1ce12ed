/* s3_sign.c - the headers that sign one S3 request with Signature V4. */
#include "remote/s3_sign.h"

int ds_s3_sign_headers(const ds_s3_sign_in *in, const ds_s3_keys *keys,
                       ds_buf *out, char **err) {
  char date[17];
  ds_sigv4_amz_date(in->now, date);
  const char *payload = in->payload_hash ? in->payload_hash : DS_SIGV4_UNSIGNED;
  int token = keys->session_token && *keys->session_token;
  ds_kv h[6];
  size_t n = 0;
  h[n++] = (ds_kv){"host", in->host};
  if (in->range) h[n++] = (ds_kv){"range", in->range};
  if (in->if_match) h[n++] = (ds_kv){"if-match", in->if_match};
  h[n++] = (ds_kv){"x-amz-content-sha256", payload};
  h[n++] = (ds_kv){"x-amz-date", date};
  if (token) h[n++] = (ds_kv){"x-amz-security-token", keys->session_token};
  ds_sigv4_req r = {in->method, in->path, in->query, in->nquery, h, n, payload};
  ds_sigv4_scope s = {keys->access_key, keys->secret_key, in->region,
                      in->service ? in->service : "s3", date};
  ds_buf auth = {0};
  if (ds_sigv4_authorization(&r, &s, &auth, NULL, err)) return -1;
  int rc = ds_buf_printf(out, "x-amz-date: %s\nx-amz-content-sha256: %s\n",
                         date, payload);
  if (!rc && token)
    rc = ds_buf_printf(out, "x-amz-security-token: %s\n", keys->session_token);
  if (!rc)
    rc = ds_buf_printf(out, "Authorization: %.*s\n", (int)auth.len,
                       (char *)auth.data);
  ds_buf_free(&auth);
  return rc ? ds_err(err, "out of memory") : 0;
}
