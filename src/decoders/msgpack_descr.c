/* msgpack_descr.c - a numpy descr literal into msgpack (see
 * msgpack_descr.h): a recursive descent over the literal; an array's
 * length is counted by a scan to its closing bracket before its items are
 * packed. */
#include "decoders/msgpack_descr.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/utf8.h"

#define DESCR_MAX_DEPTH 64

/* Skip spaces. */
static const char *skip_ws(const char *p) {
  while (*p == ' ' || *p == '\t' || *p == '\n') p++;
  return p;
}

/* The end of the str literal starting at p (its opening quote), just past
 * the closing quote; NULL when it never closes. */
static const char *str_end(const char *p) {
  char q = *p++;
  for (; *p; p++) {
    if (*p == '\\') {
      if (!*++p) return NULL;
    } else if (*p == q) {
      return p + 1;
    }
  }
  return NULL;
}

/* The items of the list or tuple opened at p (its '[' or '('), as Python
 * counts them ("(2,)" one, "()" none); -1 when it never closes. */
static long count_items(const char *p) {
  int depth = 0;
  long items = 0;
  int pending = 0; /* an item started since the last comma */
  for (; *p; p++) {
    if (*p == '\'' || *p == '"') {
      const char *e = str_end(p);
      if (!e) return -1;
      p = e - 1;
      if (depth == 1) pending = 1;
    } else if (*p == '[' || *p == '(') {
      if (depth++ == 1) pending = 1;
    } else if (*p == ']' || *p == ')') {
      if (--depth == 0) return items + pending;
    } else if (*p == ',' && depth == 1) {
      items += pending;
      pending = 0;
    } else if (depth == 1 && *p != ' ' && *p != '\t' && *p != '\n') {
      pending = 1;
    }
  }
  return -1;
}

/* The value of hex digits p[0..n), or -1. */
static long hex_value(const char *p, int n) {
  long v = 0;
  for (int i = 0; i < n; i++) {
    char c = p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/* Decode the str literal at *pp into UTF-8 and pack it as a msgpack str;
 * *pp moves past it. */
static int pack_str(msgpack_packer *pk, const char **pp, char **err) {
  const char *p = *pp, *end = str_end(p);
  if (!end) return ds_err(err, "dtype description: a string never ends");
  ds_buf b = {0};
  int oom = 0, bad = 0;
  for (p++; p < end - 1 && !oom && !bad; p++) {
    if (*p != '\\') {
      oom = ds_buf_append(&b, p, 1) != 0;
      continue;
    }
    char c = *++p;
    static const char from[] = "\\'\"nrt", to[] = "\\'\"\n\r\t";
    const char *simple = c ? strchr(from, c) : NULL;
    if (simple) {
      oom = ds_buf_append(&b, &to[simple - from], 1) != 0;
      continue;
    }
    int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
    long cp = digits && end - 1 - (p + 1) >= digits ? hex_value(p + 1, digits) : -1;
    uint8_t u[4];
    size_t n = cp >= 0 ? ds_utf8_encode((uint32_t)cp, u) : 0;
    if (n == 0) {
      bad = ds_err(err, "dtype description: unsupported escape \\%c in a string", c);
      break;
    }
    oom = ds_buf_append(&b, u, n) != 0;
    p += digits;
  }
  if (!oom && !bad)
    oom = msgpack_pack_str(pk, b.len) || msgpack_pack_str_body(pk, b.data, b.len);
  ds_buf_free(&b);
  *pp = end;
  if (oom) return ds_err(err, "out of memory");
  return bad ? -1 : 0;
}

static int pack_value(msgpack_packer *pk, const char **pp, int depth, char **err);

/* Pack the list or tuple at *pp as a msgpack array. */
static int pack_seq(msgpack_packer *pk, const char **pp, int depth, char **err) {
  if (depth > DESCR_MAX_DEPTH) return ds_err(err, "dtype description nested too deeply");
  const char *p = *pp;
  char close = *p == '[' ? ']' : ')';
  long n = count_items(p);
  if (n < 0) return ds_err(err, "dtype description: a %c is never closed", *p);
  if (msgpack_pack_array(pk, (size_t)n)) return ds_err(err, "out of memory");
  p = skip_ws(p + 1);
  for (long i = 0; i < n; i++) {
    if (pack_value(pk, &p, depth + 1, err)) return -1;
    p = skip_ws(p);
    if (*p == ',') p = skip_ws(p + 1);
    else if (*p != close) return ds_err(err, "dtype description: expected ',' or '%c'", close);
  }
  if (*p != close) return ds_err(err, "dtype description: expected '%c'", close);
  *pp = p + 1;
  return 0;
}

/* Pack one value at *pp: a list, tuple, str or non-negative int. */
static int pack_value(msgpack_packer *pk, const char **pp, int depth, char **err) {
  const char *p = skip_ws(*pp);
  *pp = p;
  if (*p == '[' || *p == '(') return pack_seq(pk, pp, depth, err);
  if (*p == '\'' || *p == '"') return pack_str(pk, pp, err);
  if (*p >= '0' && *p <= '9') {
    uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
      if (v > (UINT64_MAX - 9) / 10) return ds_err(err, "dtype description: a number too large");
      v = v * 10 + (uint64_t)(*p - '0');
    }
    *pp = p;
    return msgpack_pack_uint64(pk, v) ? ds_err(err, "out of memory") : 0;
  }
  return ds_err(err, "dtype description: unexpected '%.10s'", p);
}

int ds_msgpack_pack_descr(msgpack_packer *pk, const char *descr, char **err) {
  const char *p = descr;
  if (pack_value(pk, &p, 0, err)) return -1;
  if (*skip_ws(p)) return ds_err(err, "dtype description: text after its end");
  return 0;
}
