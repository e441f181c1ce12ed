/* utf8.c - UTF-8 validation, encoding, decoding and escaping (see
 * utf8.h). */
#include "utf8.h"

#include <stdlib.h>

/* One sequence checked by the Unicode table of well-formed UTF-8. */
size_t ds_utf8_seq(const uint8_t *p, size_t n, size_t *skip) {
  uint8_t c = p[0];
  if (c < 0x80) return 1;
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c == 0xE0) { need = 2; lo = 0xA0; }
  else if (c >= 0xE1 && c <= 0xEC) need = 2;
  else if (c == 0xED) { need = 2; hi = 0x9F; }
  else if (c >= 0xEE && c <= 0xEF) need = 2;
  else if (c == 0xF0) { need = 3; lo = 0x90; }
  else if (c >= 0xF1 && c <= 0xF3) need = 3;
  else if (c == 0xF4) { need = 3; hi = 0x8F; }
  else { *skip = 1; return 0; }
  for (size_t k = 1; k <= need; k++) {
    uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (k >= n || p[k] < l || p[k] > h) { *skip = k; return 0; }
  }
  return need + 1;
}

/* 1 when p[0..n) is all ASCII: the words ORed together, one test at the
 * end (the common case, with no branch per word). */
static int all_ascii(const uint8_t *p, size_t n) {
  uint64_t acc = 0, w[4];
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    memcpy(w, p + i, 32);
    acc |= w[0] | w[1] | w[2] | w[3];
  }
  for (; i + 8 <= n; i += 8) {
    memcpy(w, p + i, 8);
    acc |= w[0];
  }
  if (n >= 8) {
    memcpy(w, p + n - 8, 8); /* the tail: the last 8 bytes at once */
    acc |= w[0];
  } else {
    for (; i < n; i++) acc |= p[i];
  }
  return !(acc & 0x8080808080808080ull);
}

/* Whole-text check: all-ASCII text at once, else ASCII runs skipped a
 * word at a time. */
int ds_utf8_valid(const uint8_t *p, size_t n) {
  if (all_ascii(p, n)) return 1;
  size_t i = 0, skip;
  while (i < n) {
    /* ASCII runs 32, then 8 bytes at a time (most text is ASCII) */
    while (i + 32 <= n) {
      uint64_t w[4];
      memcpy(w, p + i, 32);
      if ((w[0] | w[1] | w[2] | w[3]) & 0x8080808080808080ull) break;
      i += 32;
    }
    while (i + 8 <= n) {
      uint64_t w;
      memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i < n && n >= 8 && n - i < 8) { /* the tail: the last 8 bytes at once */
      uint64_t w;
      memcpy(&w, p + n - 8, 8);
      if (!(w & 0x8080808080808080ull)) break;
    }
    if (i >= n) break;
    if (p[i] < 0x80) { i++; continue; }
    size_t k = ds_utf8_seq(p + i, n - i, &skip);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/* Decode one code point of valid UTF-8. */
uint32_t ds_utf8_next(const uint8_t *s, size_t n, size_t *i) {
  uint8_t c = s[*i];
  size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  if (len > n - *i) len = n - *i;
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1Fu) : len == 3 ? (c & 0x0Fu) : (c & 0x07u);
  for (size_t k = 1; k < len; k++) cp = cp << 6 | (s[*i + k] & 0x3Fu);
  *i += len;
  return cp;
}

/* Encode one scalar value (0 for surrogates and above U+10FFFF). */
size_t ds_utf8_encode(uint32_t cp, uint8_t b[4]) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  if (cp < 0x80) {
    b[0] = (uint8_t)cp;
    return 1;
  }
  if (cp < 0x800) {
    b[0] = (uint8_t)(0xC0 | cp >> 6);
    b[1] = (uint8_t)(0x80 | (cp & 63));
    return 2;
  }
  if (cp < 0x10000) {
    b[0] = (uint8_t)(0xE0 | cp >> 12);
    b[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
    b[2] = (uint8_t)(0x80 | (cp & 63));
    return 3;
  }
  b[0] = (uint8_t)(0xF0 | cp >> 18);
  b[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
  b[2] = (uint8_t)(0x80 | ((cp >> 6) & 63));
  b[3] = (uint8_t)(0x80 | (cp & 63));
  return 4;
}

/* Printable UTF-8 as is, any other byte as \xNN. */
int ds_buf_put_escaped(ds_buf *out, const uint8_t *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  size_t i = 0, skip;
  while (i < n) {
    size_t k = 0;
    if (p[i] >= 0x20 && p[i] < 0x7F && p[i] != '\\') k = 1;
    else if (p[i] >= 0x80) k = ds_utf8_seq(p + i, n - i, &skip);
    if (k) {
      if (ds_buf_append(out, p + i, k)) return -1;
      i += k;
      continue;
    }
    char e[4] = {'\\', 'x', hex[p[i] >> 4], hex[p[i] & 15]};
    if (ds_buf_append(out, e, 4)) return -1;
    i++;
  }
  return 0;
}

/* ds_buf_put_escaped into a new string. */
char *ds_escape(const void *p, size_t n) {
  ds_buf b = {0};
  if (ds_buf_put_escaped(&b, p, n) || ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* s with every byte of an invalid UTF-8 sequence written \xNN; valid
 * text, newlines and backslashes stay as they are. */
char *ds_utf8_fix(const char *s) {
  const uint8_t *p = (const uint8_t *)s;
  size_t n = strlen(s);
  ds_buf b = {0};
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0;) {
    size_t skip = 0, len = ds_utf8_seq(p + i, n - i, &skip);
    if (len) {
      rc = ds_buf_append(&b, p + i, len);
      i += len;
      continue;
    }
    for (size_t k = 0; k < skip && rc == 0; k++) rc = ds_buf_printf(&b, "\\x%02X", p[i + k]);
    i += skip;
  }
  if (rc || ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}

/* An error quoting file bytes, escaped. */
int ds_err_quoted(char **err, const char *fmt, const void *p, size_t n) {
  char *q = ds_escape(p, n);
  if (!q) return ds_err(err, "out of memory");
  ds_err(err, fmt, q);
  free(q);
  return -1;
}
