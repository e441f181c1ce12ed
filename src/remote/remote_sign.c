/* remote_sign.c - sign one try of an s3:// or gs:// request from its URL
 * and the resolved config. */
#include "remote/remote_sign.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "remote/s3_sign.h"

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int ds_percent_decode(ds_buf *b, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int h, l;
    if (c == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 && (l = hexval(s[i + 2])) >= 0) {
      c = (char)(h * 16 + l);
      i += 2;
    }
    if (ds_buf_append(b, &c, 1)) return -1;
  }
  if (ds_buf_append(b, "", 1)) return -1;
  b->len--; /* the NUL stays, out of the length */
  return 0;
}

/* The query of url as decoded pairs (names and values pointing into
 * *store); 0 ok, -1 out of memory. */
static int split_query(const char *q, ds_kv **out, size_t *n, char ***store) {
  *out = NULL;
  *n = 0;
  *store = NULL;
  if (!q || !*q) return 0;
  size_t cap = 1;
  for (const char *p = q; *p; p++) cap += *p == '&';
  ds_kv *kv = calloc(cap, sizeof *kv);
  char **st = calloc(cap * 2 + 1, sizeof *st);
  if (!kv || !st) {
    free(kv);
    free(st);
    return -1;
  }
  size_t k = 0, s = 0;
  const char *p = q;
  while (*p) {
    size_t len = strcspn(p, "&");
    const char *eq = memchr(p, '=', len);
    size_t nl = eq ? (size_t)(eq - p) : len;
    ds_buf name = {0}, val = {0};
    if (ds_percent_decode(&name, p, nl) ||
        ds_percent_decode(&val, eq ? eq + 1 : "", eq ? len - nl - 1 : 0)) {
      ds_buf_free(&name);
      ds_buf_free(&val);
      break;
    }
    st[s++] = (char *)(name.data ? name.data : (uint8_t *)calloc(1, 1));
    st[s++] = (char *)(val.data ? val.data : (uint8_t *)calloc(1, 1));
    kv[k].name = st[s - 2];
    kv[k].value = st[s - 1];
    k++;
    p += len;
    if (*p == '&') p++;
  }
  *out = kv;
  *n = k;
  *store = st;
  return 0;
}

int ds_remote_sign(void *ctx, const char *method, const char *url,
                   const char *range, const char *if_match, ds_buf *out,
                   char **err) {
  const ds_remote_config *c = ctx;
  if (c->bearer_token && !c->access_key)
    return ds_buf_printf(out, "Authorization: Bearer %s\n", c->bearer_token)
               ? ds_err(err, "out of memory")
               : 0;
  if (!c->access_key || !c->secret_key) return 0; /* anonymous */
  const char *h = strstr(url, "://");
  if (!h) return ds_err(err, "not a URL");
  h += 3;
  size_t hl = strcspn(h, "/?#");
  const char *path = h + hl;
  size_t pl = strcspn(path, "?#");
  char *host = malloc(hl + 1), *p = malloc(pl + 2);
  if (!host || !p) {
    free(host);
    free(p);
    return ds_err(err, "out of memory");
  }
  memcpy(host, h, hl);
  host[hl] = 0;
  if (pl) {
    memcpy(p, path, pl);
    p[pl] = 0;
  } else {
    strcpy(p, "/");
  }
  ds_kv *q = NULL;
  size_t nq = 0;
  char **store = NULL;
  int rc = split_query(path[pl] == '?' ? path + pl + 1 : NULL, &q, &nq, &store);
  if (rc) {
    rc = ds_err(err, "out of memory");
  } else {
    ds_s3_sign_in in = {0};
    in.method = method;
    in.host = host;
    in.path = p;
    in.query = q;
    in.nquery = nq;
    in.range = range;
    in.if_match = if_match;
    in.region = c->region;
    in.now = time(NULL);
    ds_s3_keys k = {c->access_key, c->secret_key, c->session_token};
    rc = ds_s3_sign_headers(&in, &k, out, err);
  }
  if (store)
    for (size_t i = 0; store[i]; i++) free(store[i]);
  free(store);
  free(q);
  free(host);
  free(p);
  return rc;
}
