/* utf8.h - UTF-8 checks, encoding and decoding shared by every decoder
 * (value JSON, npy, pickle, bcolz), and the escaping of raw bytes that an
 * error message quotes (so error text is always valid UTF-8). */
#ifndef DS_UTF8_H
#define DS_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

/* 1 when p[0..n) is plain ASCII (checked 8 bytes at a time). */
static inline int ds_ascii(const uint8_t *p, size_t n) {
  size_t i = 0;
  uint64_t acc = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; i++) acc |= p[i];
  return (acc & 0x8080808080808080ull) == 0;
}

/* Length of the valid UTF-8 sequence at p[0..n) (1 to 4; n >= 1), or 0
 * when it is invalid; then *skip is the length of the maximal invalid
 * subpart (>= 1), the unit Python's errors='replace' replaces. */
size_t ds_utf8_seq(const uint8_t *p, size_t n, size_t *skip);

/* 1 when p[0..n) is valid UTF-8 (no surrogates, no overlongs), else 0. */
int ds_utf8_valid(const uint8_t *p, size_t n);

/* The code point of the valid sequence at s[*i..n), advancing *i past it
 * (s must be valid UTF-8 there, e.g. checked by ds_utf8_seq). */
uint32_t ds_utf8_next(const uint8_t *s, size_t n, size_t *i);

/* UTF-8 bytes of code point cp in b; their count (1 to 4), or 0 when cp is
 * not a Unicode scalar value (a surrogate or above U+10FFFF). */
size_t ds_utf8_encode(uint32_t cp, uint8_t b[4]);

/* Append p[0..n) for an error message: valid UTF-8 printable text as it
 * is, every other byte (invalid UTF-8, control characters, backslash) as
 * \xNN. 0, or -1 when out of memory. */
int ds_buf_put_escaped(ds_buf *out, const uint8_t *p, size_t n);

/* ds_buf_put_escaped into a new malloc'd NUL-terminated string; NULL when
 * out of memory. */
char *ds_escape(const void *p, size_t n);

/* A copy of the NUL-terminated s that is valid UTF-8: the bytes of an
 * invalid sequence (a file name in Latin-1, say) as \xNN, the rest as is
 * (malloc'd; NULL when out of memory). Error messages pass through it. */
char *ds_utf8_fix(const char *s);

/* Set *err to `fmt` with its one "%s" replaced by p[0..n) escaped as by
 * ds_buf_put_escaped (for errors that quote file contents). Returns -1. */
int ds_err_quoted(char **err, const char *fmt, const void *p, size_t n);

#endif
