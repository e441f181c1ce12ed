/* json.c - the small JSON writers every decoder shares (see json.h). */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "utf8.h"

/* A JSON string literal; plain ASCII runs copied in one append. */
int ds_json_string(ds_buf *out, const uint8_t *p, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (n == 0) return ds_buf_append(out, "\"\"", 2); /* p may be NULL */
  if (n > SIZE_MAX - 2 - out->len || ds_buf_reserve(out, out->len + n + 2))
    return -1;
  if (ds_buf_append(out, "\"", 1)) return -1;
  size_t i = 0, run = 0; /* p[run..i) is pending plain text */
  while (i < n) {
    uint8_t c = p[i];
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) { i++; continue; }
    size_t skip = 1, k = c < 0x80 ? 1 : ds_utf8_seq(p + i, n - i, &skip);
    if (c >= 0x80 && k) { i += k; continue; } /* valid multi-byte: keep */
    if (ds_buf_append(out, p + run, i - run)) return -1;
    char esc[8];
    const char *e = esc;
    size_t elen = 2;
    if (c >= 0x80) { e = "\xEF\xBF\xBD"; elen = 3; i += skip; }
    else {
      esc[0] = '\\';
      switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
          memcpy(esc + 1, "u00", 3);
          esc[4] = hex[c >> 4];
          esc[5] = hex[c & 15];
          elen = 6;
      }
      i++;
    }
    if (ds_buf_append(out, e, elen)) return -1;
    run = i;
  }
  if (ds_buf_append(out, p + run, n - run)) return -1;
  return ds_buf_append(out, "\"", 1);
}

/* Standard base64 with padding, as a JSON string. */
int ds_json_base64(ds_buf *out, const uint8_t *p, size_t n) {
  static const char tab[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t groups = n / 3 + (n % 3 != 0);
  if (groups > (SIZE_MAX - 2 - out->len) / 4) return -1;
  if (ds_buf_reserve(out, out->len + groups * 4 + 2)) return -1;
  char *o = (char *)out->data + out->len;
  *o++ = '"';
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    *o++ = tab[v >> 18];
    *o++ = tab[(v >> 12) & 63];
    *o++ = tab[(v >> 6) & 63];
    *o++ = tab[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)p[i] << 16;
    *o++ = tab[v >> 18];
    *o++ = tab[(v >> 12) & 63];
    *o++ = '=';
    *o++ = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
    *o++ = tab[v >> 18];
    *o++ = tab[(v >> 12) & 63];
    *o++ = tab[(v >> 6) & 63];
    *o++ = '=';
  }
  *o++ = '"';
  out->len = (size_t)(o - (char *)out->data);
  return 0;
}

/* Append number text s from ds_format_double (a '.' decimal point in any
 * locale); an integral value gets ".0", as Python prints floats. */
static int put_number(ds_buf *out, const char *s) {
  int plain = 1; /* no '.', no exponent: integral */
  for (const char *c = s; *c; c++)
    if (*c == '.' || *c == 'e') plain = 0;
  if (ds_buf_puts(out, s)) return -1;
  return plain ? ds_buf_puts(out, ".0") : 0;
}

/* Shortest round-trip text of a double, Python style. */
int ds_json_double(ds_buf *out, double d) {
  if (!isfinite(d)) return ds_buf_puts(out, "null");
  char s[40];
  /* the shortest of 15, 16, 17 significant digits that reads back exactly */
  for (int prec = 15; prec <= 17; prec++) {
    ds_format_double(s, sizeof s, 'g', prec, d);
    if (prec == 17 || ds_strtod(s, NULL) == d) break;
  }
  return put_number(out, s);
}

/* Shortest round-trip text of a float32 (0.1f is "0.1"). */
int ds_json_float(ds_buf *out, float f) {
  if (!isfinite(f)) return ds_buf_puts(out, "null");
  char s[40];
  /* the shortest of 1..9 significant digits that reads back exactly */
  for (int prec = 1; prec <= 9; prec++) {
    ds_format_double(s, sizeof s, 'g', prec, (double)f);
    if (prec == 9 || ds_strtof(s, NULL) == f) break;
  }
  return put_number(out, s);
}
