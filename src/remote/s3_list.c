/* s3_list.c - ListObjectsV2 pages parsed and followed (s3_list.h). The XML
 * is read by hand for the few elements a listing has: S3's answers are
 * flat and their text is escaped with the five XML entities and
 * character references. */
#include "remote/s3_list.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/remote_sign.h"

/* The first <tag>...</tag> in [p, end): its text's start and length. */
static const char *element(const char *p, const char *end, const char *tag,
                           size_t *len) {
  char open[48], close[48];
  snprintf(open, sizeof open, "<%s>", tag);
  snprintf(close, sizeof close, "</%s>", tag);
  size_t ol = strlen(open), cl = strlen(close);
  for (const char *q = p; q + ol <= end; q++) {
    if (memcmp(q, open, ol) != 0) continue;
    const char *t = q + ol;
    for (const char *e = t; e + cl <= end; e++)
      if (memcmp(e, close, cl) == 0) {
        *len = (size_t)(e - t);
        return t;
      }
    return NULL;
  }
  return NULL;
}

/* Append the UTF-8 bytes of code point cp. */
static int put_utf8(ds_buf *b, unsigned long cp) {
  uint8_t u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (uint8_t)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (uint8_t)(0xc0 | cp >> 6);
    u[1] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (uint8_t)(0xe0 | cp >> 12);
    u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 3;
  } else if (cp < 0x110000) {
    u[0] = (uint8_t)(0xf0 | cp >> 18);
    u[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (uint8_t)(0x80 | (cp & 0x3f));
    n = 4;
  } else {
    return -1;
  }
  return ds_buf_append(b, u, n);
}

/* XML text with entities decoded, malloc'd; NULL when out of memory or
 * an entity is unknown. */
static char *xml_text(const char *t, size_t n) {
  static const struct { const char *e; char c; } ents[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  ds_buf b = {0};
  for (size_t i = 0; i < n; i++) {
    int rc = 0;
    if (t[i] != '&') {
      rc = ds_buf_append(&b, t + i, 1);
    } else {
      const char *semi = memchr(t + i, ';', n - i);
      size_t el = semi ? (size_t)(semi - (t + i)) + 1 : 0;
      int done = 0;
      for (size_t k = 0; semi && k < sizeof ents / sizeof *ents && !done; k++)
        if (el == strlen(ents[k].e) && memcmp(t + i, ents[k].e, el) == 0) {
          rc = ds_buf_append(&b, &ents[k].c, 1);
          done = 1;
        }
      if (!done && semi && el > 3 && t[i + 1] == '#') {
        char *endp;
        int hex = t[i + 2] == 'x' || t[i + 2] == 'X';
        char num[16];
        size_t nl = el - (hex ? 4 : 3);
        if (nl > 0 && nl < sizeof num) {
          memcpy(num, t + i + (hex ? 3 : 2), nl);
          num[nl] = 0;
          unsigned long cp = strtoul(num, &endp, hex ? 16 : 10);
          if (!*endp) {
            rc = put_utf8(&b, cp);
            done = 1;
          }
        }
      }
      if (!done) rc = -1;
      i += el ? el - 1 : 0;
    }
    if (rc) {
      ds_buf_free(&b);
      return NULL;
    }
  }
  if (ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

int ds_s3_list_parse(const char *xml, size_t n, ds_s3_listing *out,
                     char **next, char **err) {
  *next = NULL;
  if (!xml || !memmem(xml, n, "<ListBucketResult", 17))
    return ds_err(err, "the listing is not a ListBucketResult");
  const char *end = xml + n, *p = xml;
  size_t len;
  const char *c;
  while ((c = element(p, end, "Contents", &len))) {
    size_t kl, sl;
    const char *k = element(c, c + len, "Key", &kl);
    const char *s = element(c, c + len, "Size", &sl);
    if (!k) return ds_err(err, "a listing entry without a Key");
    ds_s3_object *o = ds_grow_cap(out->objects, &out->cap, out->n, sizeof *o, 64);
    if (!o) return ds_err(err, "out of memory");
    out->objects = o;
    o[out->n].key = xml_text(k, kl);
    if (!o[out->n].key) return ds_err(err, "a listing Key that is not XML text");
    o[out->n].size = s ? strtoull(s, NULL, 10) : 0;
    out->n++;
    p = c + len;
  }
  p = xml;
  while ((c = element(p, end, "CommonPrefixes", &len))) {
    size_t pl;
    const char *pre = element(c, c + len, "Prefix", &pl);
    if (pre) {
      char **a = ds_grow_cap(out->prefixes, &out->pcap, out->nprefixes, sizeof *a, 16);
      if (!a) return ds_err(err, "out of memory");
      out->prefixes = a;
      a[out->nprefixes] = xml_text(pre, pl);
      if (!a[out->nprefixes]) return ds_err(err, "a listing Prefix that is not XML text");
      out->nprefixes++;
    }
    p = c + len;
  }
  const char *tr = element(xml, end, "IsTruncated", &len);
  if (tr && len == 4 && memcmp(tr, "true", 4) == 0) {
    const char *tok = element(xml, end, "NextContinuationToken", &len);
    if (!tok || !len) return ds_err(err, "a truncated listing without a continuation token");
    *next = xml_text(tok, len);
    if (!*next) return ds_err(err, "out of memory");
  }
  return 0;
}

int ds_s3_list(const ds_remote_config *c, const char *bucket,
               const char *prefix, const char *delimiter, int max_keys,
               int max_pages, const ds_http_opts *o, ds_s3_listing *out,
               char **err) {
  char *token = NULL, mk[16];
  snprintf(mk, sizeof mk, "%d", max_keys);
  if (max_pages <= 0) max_pages = 10000;
  int rc = 0, page;
  for (page = 0; page < max_pages && rc == 0; page++) {
    ds_kv q[5];
    size_t nq = 0;
    q[nq++] = (ds_kv){"list-type", "2"};
    q[nq++] = (ds_kv){"prefix", prefix ? prefix : ""};
    if (delimiter && *delimiter) q[nq++] = (ds_kv){"delimiter", delimiter};
    if (max_keys > 0) q[nq++] = (ds_kv){"max-keys", mk};
    if (token) q[nq++] = (ds_kv){"continuation-token", token};
    ds_s3_target t;
    if (ds_s3_target_make(c->endpoint, c->region, c->url_style, bucket, "", q, nq,
                          &t, err)) {
      rc = -1;
      break;
    }
    ds_http_req r = {0};
    r.kind = DS_HTTP_WHOLE;
    r.url = (char *)t.url.data;
    r.max_bytes = 64u << 20;
    if (c->access_key || c->bearer_token) {
      r.sign = ds_remote_sign;
      r.sign_ctx = (void *)c;
    }
    if (ds_http_run(&r, 1, o)) {
      ds_err(err, "listing s3://%s/%s: %s", bucket, prefix ? prefix : "", r.err);
      rc = -1;
    } else {
      free(token);
      token = NULL;
      rc = ds_s3_list_parse((char *)r.body.data, r.body.len, out, &token, err);
    }
    ds_http_req_free(&r);
    ds_s3_target_free(&t);
    if (!rc && !token) break;
  }
  if (!rc && token)
    rc = ds_err(err, "listing s3://%s/%s: more than %d pages", bucket,
                prefix ? prefix : "", max_pages);
  free(token);
  return rc;
}

void ds_s3_listing_free(ds_s3_listing *l) {
  for (size_t i = 0; i < l->n; i++) free(l->objects[i].key);
  for (size_t i = 0; i < l->nprefixes; i++) free(l->prefixes[i]);
  free(l->objects);
  free(l->prefixes);
  memset(l, 0, sizeof *l);
}
