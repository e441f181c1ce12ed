/* sigv4.c - AWS Signature Version 4: canonical request (method, path,
 * sorted encoded query, sorted lowercase headers with trimmed values,
 * signed header list, payload hash), string to sign, signing key and the
 * Authorization header. */
#include "remote/sigv4.h"

#include <stdlib.h>
#include <string.h>

/* AWS UriEncode: unreserved bytes kept, the rest %XX. */
int ds_uri_encode(ds_buf *b, const char *s, size_t n, int keep_slash) {
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    int keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
               (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
               c == '~' || (c == '/' && keep_slash);
    if (keep) {
      if (ds_buf_append(b, &c, 1)) return -1;
    } else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      if (ds_buf_append(b, e, 3)) return -1;
    }
  }
  return 0;
}

/* An encoded pair or header line kept for sorting. */
typedef struct item {
  char *a; /* encoded name / lowercase header name */
  char *b; /* encoded value / trimmed header value */
} item;

/* Order by name, then value (byte order, as AWS sorts). */
static int item_cmp(const void *x, const void *y) {
  const item *p = x, *q = y;
  int c = strcmp(p->a, q->a);
  return c ? c : strcmp(p->b, q->b);
}

static void items_free(item *it, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(it[i].a);
    free(it[i].b);
  }
  free(it);
}

/* Encode s into a fresh malloc'd string. */
static char *encode_dup(const char *s) {
  ds_buf b = {0};
  if (ds_uri_encode(&b, s, strlen(s), 0) || ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

int ds_sigv4_canonical_query(ds_buf *b, const ds_kv *q, size_t n) {
  if (n == 0) return 0;
  item *it = calloc(n, sizeof *it);
  if (!it) return -1;
  for (size_t i = 0; i < n; i++) {
    it[i].a = encode_dup(q[i].name);
    it[i].b = encode_dup(q[i].value ? q[i].value : "");
    if (!it[i].a || !it[i].b) {
      items_free(it, n);
      return -1;
    }
  }
  qsort(it, n, sizeof *it, item_cmp);
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    rc = ds_buf_printf(b, "%s%s=%s", i ? "&" : "", it[i].a, it[i].b);
  items_free(it, n);
  return rc;
}

/* Trimall: no leading or trailing blanks, each run of blanks one space. */
static char *trim_all(const char *v) {
  size_t n = strlen(v), o = 0;
  char *out = malloc(n + 1);
  if (!out) return NULL;
  int space = 0;
  for (size_t i = 0; i < n; i++) {
    char c = v[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
        c == '\f') {
      space = o > 0;
      continue;
    }
    if (space) out[o++] = ' ';
    space = 0;
    out[o++] = c;
  }
  out[o] = 0;
  return out;
}

/* Lowercase copy of a header name. */
static char *lower_dup(const char *s) {
  size_t n = strlen(s);
  char *out = malloc(n + 1);
  if (!out) return NULL;
  for (size_t i = 0; i <= n; i++)
    out[i] = (s[i] >= 'A' && s[i] <= 'Z') ? (char)(s[i] + 32) : s[i];
  return out;
}

int ds_sigv4_canonical_request(const ds_sigv4_req *r, ds_buf *out,
                               ds_buf *signed_headers, char **err) {
  item *h = calloc(r->nheaders ? r->nheaders : 1, sizeof *h);
  if (!h) return ds_err(err, "out of memory");
  for (size_t i = 0; i < r->nheaders; i++) {
    h[i].a = lower_dup(r->headers[i].name);
    h[i].b = trim_all(r->headers[i].value ? r->headers[i].value : "");
    if (!h[i].a || !h[i].b) {
      items_free(h, r->nheaders);
      return ds_err(err, "out of memory");
    }
  }
  /* a stable order of names; repeated names join their values with ','
   * in the order given, as SigV4 says */
  for (size_t i = 1; i < r->nheaders; i++)
    for (size_t j = i; j > 0 && strcmp(h[j - 1].a, h[j].a) > 0; j--) {
      item t = h[j];
      h[j] = h[j - 1];
      h[j - 1] = t;
    }
  int rc = ds_buf_printf(out, "%s\n%s\n", r->method,
                         r->path && *r->path ? r->path : "/");
  if (!rc) rc = ds_sigv4_canonical_query(out, r->query, r->nquery);
  if (!rc) rc = ds_buf_puts(out, "\n");
  for (size_t i = 0; i < r->nheaders && !rc; i++) {
    int same = i > 0 && strcmp(h[i - 1].a, h[i].a) == 0;
    if (same)
      rc = ds_buf_printf(out, ",%s", h[i].b);
    else
      rc = ds_buf_printf(out, "%s%s:%s", i ? "\n" : "", h[i].a, h[i].b);
    if (!rc && !same)
      rc = ds_buf_printf(signed_headers, "%s%s", i ? ";" : "", h[i].a);
  }
  if (!rc)
    rc = ds_buf_printf(out, "\n\n%.*s\n%s", (int)signed_headers->len,
                       signed_headers->data ? (char *)signed_headers->data : "",
                       r->payload_hash ? r->payload_hash : DS_SIGV4_UNSIGNED);
  if (!rc) rc = ds_buf_append(out, "", 1);
  if (!rc) rc = ds_buf_append(signed_headers, "", 1);
  items_free(h, r->nheaders);
  if (rc) return ds_err(err, "out of memory");
  out->len--; /* the NUL stays, out of the length */
  signed_headers->len--;
  return 0;
}

int ds_sigv4_string_to_sign(const ds_sigv4_scope *s, const char *canonical,
                            ds_buf *out) {
  char hex[DS_SHA256_HEX_LEN];
  ds_sha256_hex(canonical, strlen(canonical), hex);
  if (ds_buf_printf(out, "AWS4-HMAC-SHA256\n%s\n%.8s/%s/%s/aws4_request\n%s",
                    s->amz_date, s->amz_date, s->region, s->service, hex) ||
      ds_buf_append(out, "", 1))
    return -1;
  out->len--;
  return 0;
}

void ds_sigv4_signing_key(const ds_sigv4_scope *s, uint8_t key[DS_SHA256_LEN]) {
  size_t n = strlen(s->secret_key);
  char *k = malloc(n + 5);
  uint8_t a[DS_SHA256_LEN];
  if (k) {
    memcpy(k, "AWS4", 4);
    memcpy(k + 4, s->secret_key, n + 1);
    ds_hmac_sha256(k, n + 4, s->amz_date, 8, a);
    /* the secret is not left on the heap */
    memset(k, 0, n + 4);
    __asm__ __volatile__("" : : "r"(k) : "memory");
    free(k);
  } else {
    /* out of memory: a key that never verifies (the request then fails) */
    memset(a, 0, sizeof a);
  }
  ds_hmac_sha256(a, sizeof a, s->region, strlen(s->region), key);
  ds_hmac_sha256(key, DS_SHA256_LEN, s->service, strlen(s->service), a);
  ds_hmac_sha256(a, sizeof a, "aws4_request", 12, key);
}

int ds_sigv4_authorization(const ds_sigv4_req *r, const ds_sigv4_scope *s,
                           ds_buf *out, char signature[DS_SHA256_HEX_LEN],
                           char **err) {
  ds_buf creq = {0}, sh = {0}, sts = {0};
  if (ds_sigv4_canonical_request(r, &creq, &sh, err)) {
    ds_buf_free(&creq);
    ds_buf_free(&sh);
    return -1;
  }
  int rc = ds_sigv4_string_to_sign(s, (char *)creq.data, &sts);
  char hex[DS_SHA256_HEX_LEN];
  if (!rc) {
    uint8_t key[DS_SHA256_LEN], sig[DS_SHA256_LEN];
    ds_sigv4_signing_key(s, key);
    ds_hmac_sha256(key, sizeof key, sts.data, sts.len, sig);
    ds_hex_lower(sig, sizeof sig, hex);
    rc = ds_buf_printf(out,
                       "AWS4-HMAC-SHA256 Credential=%s/%.8s/%s/%s/aws4_request, "
                       "SignedHeaders=%s, Signature=%s",
                       s->access_key, s->amz_date, s->region, s->service,
                       (char *)sh.data, hex);
    if (!rc && signature) memcpy(signature, hex, sizeof hex);
  }
  ds_buf_free(&creq);
  ds_buf_free(&sh);
  ds_buf_free(&sts);
  return rc ? ds_err(err, "out of memory") : 0;
}

void ds_sigv4_amz_date(time_t t, char out[17]) {
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}
