/* value_from_json.c - JSON text into the shared value model (the reverse
 * of ds_value_json): objects become MAPs with TEXT keys in their written
 * order, arrays LISTs, integers INT (UINT up to 2^64-1, BIGINT decimal
 * beyond: what our readers print for big integers reads back), other
 * numbers FLOAT, strings TEXT (\u0000 allowed), true/false BOOL, null
 * NULL. A repeated object key is an error. Writers use it for JSON columns.
 * A small recursive-descent parser of our own: jansson refuses integers
 * outside int64, which our readers produce (uint64 values). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decimal.h"
#include "value.h"

typedef struct jp {
  const char *p, *start, *end;
  ds_arena *a;
  char **err;
} jp;

static int fail(jp *j, const char *what) {
  return ds_err(j->err, "invalid JSON at character %ld: %s", (long)(j->p - j->start), what);
}

static void skip_ws(jp *j) {
  while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
    j->p++;
}

/* Four hex digits of a \u escape. */
static int hex4(jp *j, unsigned *out) {
  if (j->end - j->p < 4) return -1;
  unsigned v = 0;
  for (int i = 0; i < 4; i++) {
    char c = j->p[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + (unsigned)d;
  }
  j->p += 4;
  *out = v;
  return 0;
}

/* Append code point cp as UTF-8. */
static size_t utf8_put(uint8_t *o, unsigned cp) {
  if (cp < 0x80) { o[0] = (uint8_t)cp; return 1; }
  if (cp < 0x800) { o[0] = (uint8_t)(0xc0 | cp >> 6); o[1] = (uint8_t)(0x80 | (cp & 63)); return 2; }
  if (cp < 0x10000) {
    o[0] = (uint8_t)(0xe0 | cp >> 12); o[1] = (uint8_t)(0x80 | (cp >> 6 & 63));
    o[2] = (uint8_t)(0x80 | (cp & 63));
    return 3;
  }
  o[0] = (uint8_t)(0xf0 | cp >> 18); o[1] = (uint8_t)(0x80 | (cp >> 12 & 63));
  o[2] = (uint8_t)(0x80 | (cp >> 6 & 63)); o[3] = (uint8_t)(0x80 | (cp & 63));
  return 4;
}

/* A string literal (j->p at the opening quote) into TEXT. */
static int parse_string(jp *j, ds_value *v) {
  const char *q = ++j->p;
  while (q < j->end && *q != '"') q += *q == '\\' ? 2 : 1;
  if (q >= j->end) return fail(j, "unterminated string");
  uint8_t *o = ds_arena_alloc(j->a, (size_t)(q - j->p) + 1); /* escapes only shrink */
  if (!o) return ds_arena_fail(j->a, j->err);
  size_t n = 0;
  while (*j->p != '"') {
    unsigned char c = (unsigned char)*j->p++;
    if (c < 0x20) return fail(j, "control character in a string");
    if (c != '\\') { o[n++] = c; continue; }
    char e = *j->p++;
    unsigned cp, lo;
    switch (e) {
      case '"': case '\\': case '/': o[n++] = (uint8_t)e; break;
      case 'b': o[n++] = '\b'; break;
      case 'f': o[n++] = '\f'; break;
      case 'n': o[n++] = '\n'; break;
      case 'r': o[n++] = '\r'; break;
      case 't': o[n++] = '\t'; break;
      case 'u':
        if (hex4(j, &cp)) return fail(j, "bad \\u escape");
        if (cp >= 0xd800 && cp < 0xdc00 && j->end - j->p >= 6 && j->p[0] == '\\' &&
            j->p[1] == 'u') {
          j->p += 2;
          if (hex4(j, &lo) || lo < 0xdc00 || lo > 0xdfff) return fail(j, "bad surrogate pair");
          cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
        } else if (cp >= 0xd800 && cp < 0xe000) {
          return fail(j, "lone surrogate");
        }
        n += utf8_put(o + n, cp);
        break;
      default: return fail(j, "bad escape");
    }
  }
  j->p++;
  if (!ds_utf8_valid(o, n)) return fail(j, "string is not valid UTF-8");
  v->type = DS_V_TEXT;
  v->u.s.p = o;
  v->u.s.n = n;
  return 0;
}

/* A number: INT, UINT or BIGINT for integers, FLOAT otherwise. */
static int parse_number(jp *j, ds_value *v) {
  const char *s = j->p, *q = s;
  if (q < j->end && *q == '-') q++;
  if (q >= j->end || *q < '0' || *q > '9') return fail(j, "unexpected character");
  while (q < j->end && *q >= '0' && *q <= '9') q++;
  int integral = !(q < j->end && (*q == '.' || *q == 'e' || *q == 'E'));
  while (q < j->end && *q && strchr("0123456789.eE+-", *q)) q++;
  size_t n = (size_t)(q - s);
  char buf[64];
  char *text = n < sizeof buf ? buf : ds_arena_alloc(j->a, n + 1);
  if (!text) return ds_arena_fail(j->a, j->err);
  memcpy(text, s, n);
  text[n] = 0;
  char *end;
  errno = 0;
  if (integral) {
    long long i = strtoll(text, &end, 10);
    if (errno == 0 && *end == 0) {
      v->type = DS_V_INT;
      v->u.i = i;
    } else if (text[0] != '-' && (errno = 0, v->u.u = strtoull(text, &end, 10), errno == 0)) {
      v->type = DS_V_UINT;
    } else { /* exact decimal */
      uint8_t *d = ds_arena_alloc(j->a, n);
      if (!d) return ds_arena_fail(j->a, j->err);
      memcpy(d, text, n);
      v->type = DS_V_BIGINT;
      v->u.s.p = d;
      v->u.s.n = n;
    }
  } else {
    v->type = DS_V_FLOAT;
    v->u.f = ds_strtod(text, &end);
    if (*end) return fail(j, "bad number");
  }
  j->p = q;
  return 0;
}

static int parse_value(jp *j, ds_value *v, int depth);

/* Room for `need` items in an arena array holding n; NULL when out of
 * memory. */
static ds_value *grow(jp *j, ds_value *items, size_t n, size_t need, size_t *cap) {
  if (need <= *cap) return items;
  size_t c = *cap ? 2 * *cap : 8;
  ds_value *x = ds_arena_alloc(j->a, c * sizeof *x);
  if (!x) return NULL;
  if (n) memcpy(x, items, n * sizeof *x);
  *cap = c;
  return x;
}

/* An array or object (j->p at '[' or '{'). */
static int parse_container(jp *j, ds_value *v, int depth) {
  int obj = *j->p++ == '{';
  char close = obj ? '}' : ']';
  ds_value *items = NULL;
  size_t n = 0, cap = 0;
  skip_ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
  } else {
    for (;;) {
      if (!(items = grow(j, items, n, n + 2, &cap))) return ds_arena_fail(j->a, j->err);
      skip_ws(j);
      if (obj) {
        if (j->p >= j->end || *j->p != '"') return fail(j, "expected a string key");
        if (parse_string(j, &items[n])) return -1;
        for (size_t k = 0; k < n; k += 2)
          if (items[k].u.s.n == items[n].u.s.n &&
              memcmp(items[k].u.s.p, items[n].u.s.p, items[n].u.s.n) == 0)
            return fail(j, "duplicate object key");
        skip_ws(j);
        if (j->p >= j->end || *j->p++ != ':') return fail(j, "expected ':'");
        n++;
      }
      if (parse_value(j, &items[n++], depth + 1)) return -1;
      skip_ws(j);
      if (j->p < j->end && *j->p == ',') { j->p++; continue; }
      if (j->p < j->end && *j->p == close) { j->p++; break; }
      return fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
  }
  v->type = obj ? DS_V_MAP : DS_V_LIST;
  v->u.list.items = items;
  v->u.list.n = obj ? n / 2 : n;
  return 0;
}

/* Any JSON value. */
static int parse_value(jp *j, ds_value *v, int depth) {
  if (depth > DS_VALUE_MAX_DEPTH) return fail(j, "nested too deeply");
  memset(v, 0, sizeof *v);
  skip_ws(j);
  if (j->p >= j->end) return fail(j, "unexpected end of text");
  static const struct { const char *w; ds_vtype t; int b; } words[] = {
      {"null", DS_V_NULL, 0}, {"true", DS_V_BOOL, 1}, {"false", DS_V_BOOL, 0}};
  for (size_t i = 0; i < 3; i++) {
    size_t len = strlen(words[i].w);
    if ((size_t)(j->end - j->p) >= len && memcmp(j->p, words[i].w, len) == 0) {
      j->p += len;
      v->type = words[i].t;
      v->u.i = words[i].b;
      return 0;
    }
  }
  if (*j->p == '"') return parse_string(j, v);
  if (*j->p == '[' || *j->p == '{') return parse_container(j, v, depth);
  return parse_number(j, v);
}

int ds_value_from_json(const char *text, size_t n, ds_arena *a, ds_value *out,
                       char **err) {
  jp j = {text, text, text + n, a, err};
  if (parse_value(&j, out, 0)) return -1;
  skip_ws(&j);
  if (j.p != j.end) return fail(&j, "text after the JSON value");
  return 0;
}
