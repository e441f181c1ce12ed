/* remote_url.c - parse s3://, gs://, http(s):// paths; build the URL,
 * Host and signed path of an S3 request. */
#include "remote/remote_url.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "remote/http_parse.h"

ds_remote_scheme ds_remote_scheme_of(const char *p) {
  if (!p) return DS_REMOTE_NONE;
  if (strncasecmp(p, "s3://", 5) == 0) return DS_REMOTE_S3;
  if (strncasecmp(p, "gs://", 5) == 0) return DS_REMOTE_GS;
  if (strncasecmp(p, "http://", 7) == 0 || strncasecmp(p, "https://", 8) == 0)
    return DS_REMOTE_HTTP;
  return DS_REMOTE_NONE;
}

/* A bucket name S3 and GCS accept: 3-222 of [a-z0-9.-_], starting and
 * ending with a letter or digit (GCS allows '_'; S3 legacy allows capitals:
 * both accepted, they decide the style only). */
static int bucket_ok(const char *b, size_t n) {
  if (n < 1 || n > 222) return 0;
  for (size_t i = 0; i < n; i++) {
    char c = b[i];
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
             (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!ok) return 0;
  }
  return 1;
}

int ds_remote_url_parse(const char *path, ds_remote_url *out, char **err) {
  memset(out, 0, sizeof *out);
  out->scheme = ds_remote_scheme_of(path);
  if (out->scheme == DS_REMOTE_NONE)
    return ds_err(err, "%s: not a remote path (s3://, gs://, http://, https://)",
                  path ? path : "(null)");
  if (out->scheme == DS_REMOTE_HTTP) {
    char shown[1024];
    ds_http_url_for_message(path, shown, sizeof shown);
    const char *host = strstr(path, "://") + 3;
    size_t hl = strcspn(host, "/?#");
    if (hl == 0) return ds_err(err, "%s: no host in the URL", shown);
    out->url = ds_strf("%s", path);
    return out->url ? 0 : ds_err(err, "out of memory");
  }
  const char *b = path + 5;
  size_t bl = strcspn(b, "/");
  if (!bucket_ok(b, bl))
    return ds_err(err, "%s: '%.*s' is not a bucket name", path, (int)(bl > 64 ? 64 : bl),
                  b);
  out->bucket = ds_strf("%.*s", (int)bl, b);
  out->key = ds_strf("%s", b[bl] == '/' ? b + bl + 1 : "");
  if (!out->bucket || !out->key) {
    ds_remote_url_free(out);
    return ds_err(err, "out of memory");
  }
  return 0;
}

void ds_remote_url_free(ds_remote_url *u) {
  free(u->bucket);
  free(u->key);
  free(u->url);
  memset(u, 0, sizeof *u);
}

/* A bucket usable as a host label: lowercase letters, digits, '-', no
 * dots (a dot breaks the TLS wildcard *.s3.amazonaws.com). */
static int dns_label(const char *b) {
  size_t n = strlen(b);
  if (n < 3 || n > 63 || b[0] == '-' || b[n - 1] == '-') return 0;
  for (size_t i = 0; i < n; i++)
    if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') ||
          b[i] == '-'))
      return 0;
  return 1;
}

int ds_s3_target_make(const char *endpoint, const char *region,
                      ds_url_style style, const char *bucket, const char *key,
                      const ds_kv *query, size_t nquery, ds_s3_target *t,
                      char **err) {
  memset(t, 0, sizeof *t);
  const char *scheme = "https";
  ds_buf host = {0}, base = {0};
  int rc = 0;
  if (!endpoint || !*endpoint) {
    int virt = style == DS_URL_STYLE_VIRTUAL ||
               (style == DS_URL_STYLE_AUTO && dns_label(bucket));
    if (style == DS_URL_STYLE_VIRTUAL && !dns_label(bucket))
      return ds_err(err, "bucket '%s' cannot be a host name: use url_style=path",
                    bucket);
    rc = ds_buf_printf(&host, "%s%ss3.%s.amazonaws.com", virt ? bucket : "",
                       virt ? "." : "", region && *region ? region : "us-east-1");
    style = virt ? DS_URL_STYLE_VIRTUAL : DS_URL_STYLE_PATH;
  } else {
    const char *p = strstr(endpoint, "://");
    if (!p || ds_remote_scheme_of(endpoint) != DS_REMOTE_HTTP)
      return ds_err(err, "endpoint '%s' is not an http:// or https:// URL", endpoint);
    scheme = strncasecmp(endpoint, "https", 5) == 0 ? "https" : "http";
    p += 3;
    size_t hl = strcspn(p, "/?#");
    if (hl == 0 || memchr(p, '@', hl))
      return ds_err(err, "endpoint: a host (and no user info) is needed");
    if (style == DS_URL_STYLE_VIRTUAL) {
      if (!dns_label(bucket))
        return ds_err(err, "bucket '%s' cannot be a host name: use url_style=path",
                      bucket);
      rc = ds_buf_printf(&host, "%s.", bucket);
    } else {
      style = DS_URL_STYLE_PATH;
    }
    if (!rc) rc = ds_buf_append(&host, p, hl);
    /* a base path of the endpoint ("http://h/s3"), without a final '/' */
    const char *bp = p + hl;
    size_t bpl = strcspn(bp, "?#");
    while (bpl > 0 && bp[bpl - 1] == '/') bpl--;
    if (!rc && bpl) rc = ds_buf_append(&base, bp, bpl);
  }
  if (!rc) rc = ds_buf_append(&host, "", 1);
  if (!rc) host.len--;
  if (!rc && base.len) rc = ds_buf_append(&t->path, base.data, base.len);
  if (!rc && style == DS_URL_STYLE_PATH)
    rc = ds_buf_puts(&t->path, "/") ||
         ds_uri_encode(&t->path, bucket, strlen(bucket), 0);
  if (!rc) rc = ds_buf_puts(&t->path, "/");
  if (!rc) rc = ds_uri_encode(&t->path, key, strlen(key), 1);
  if (!rc) rc = ds_buf_append(&t->path, "", 1);
  if (!rc) t->path.len--;
  if (!rc)
    rc = ds_buf_printf(&t->url, "%s://%s%s", scheme, (char *)host.data,
                       (char *)t->path.data);
  if (!rc && nquery) {
    rc = ds_buf_puts(&t->url, "?");
    if (!rc) rc = ds_sigv4_canonical_query(&t->url, query, nquery);
  }
  if (!rc) rc = ds_buf_append(&t->url, "", 1);
  if (!rc) t->url.len--;
  ds_buf_free(&base);
  if (rc) {
    ds_buf_free(&host);
    ds_s3_target_free(t);
    return ds_err(err, "out of memory");
  }
  t->host = host;
  return 0;
}

void ds_s3_target_free(ds_s3_target *t) {
  ds_buf_free(&t->url);
  ds_buf_free(&t->host);
  ds_buf_free(&t->path);
}
