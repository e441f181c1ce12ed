/* common.c - growable byte buffers and heap-allocated error messages
 * (see common.h for the error convention). */
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ds_buf_reserve(ds_buf *b, size_t cap) {
  if (cap <= b->cap) return 0;
  if (b->max && cap > b->max) {
    b->over = 1;
    return -1;
  }
  size_t n = b->cap ? b->cap : 64;
  while (n < cap) {
    if (n > SIZE_MAX / 2) { n = cap; break; }
    n *= 2;
  }
  if (b->max && n > b->max) n = b->max;
  uint8_t *p = realloc(b->data, n);
  if (!p) return -1;
  b->data = p;
  b->cap = n;
  return 0;
}

void *ds_grow(void *arr, size_t n, size_t size) {
  if (arr && n && (n & (n - 1)) != 0) return arr; /* room up to the next power of two */
  size_t cap = n ? 2 * n : 1;
  if (size && cap > SIZE_MAX / size) return NULL;
  return realloc(arr, cap * size);
}

void *ds_grow_cap(void *arr, size_t *cap, size_t n, size_t size, size_t first) {
  if (arr && n < *cap) return arr;
  size_t want = *cap ? 2 * *cap : first;
  if (want <= n) want = n + 1;
  if (size && want > SIZE_MAX / size) return NULL;
  void *p = realloc(arr, want * size);
  if (p) *cap = want;
  return p;
}

int ds_buf_append(ds_buf *b, const void *p, size_t n) {
  if (n == 0) return 0;
  if (n > SIZE_MAX - b->len || ds_buf_reserve(b, b->len + n)) return -1;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

int ds_buf_puts(ds_buf *b, const char *s) { return ds_buf_append(b, s, strlen(s)); }

int ds_buf_printf(ds_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[256];
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  if ((size_t)n < sizeof small) return ds_buf_append(b, small, (size_t)n);
  if (ds_buf_reserve(b, b->len + (size_t)n + 1)) return -1;
  va_start(ap, fmt);
  vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

void ds_buf_free(ds_buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
  b->over = 0;
}

int ds_err_too_big(char **err, const char *what, uint64_t n, uint64_t max) {
  return ds_err(err, "%s of %llu bytes is more than max_value_bytes=%llu", what,
                (unsigned long long)n, (unsigned long long)max);
}

char *ds_vstrf(const char *fmt, va_list ap) {
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return NULL;
  char *s = malloc((size_t)n + 1);
  if (s) vsnprintf(s, (size_t)n + 1, fmt, ap);
  return s;
}

char *ds_strf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = ds_vstrf(fmt, ap);
  va_end(ap);
  return s;
}

int ds_err(char **err, const char *fmt, ...) {
  if (!err) return -1;
  va_list ap;
  va_start(ap, fmt);
  char *s = ds_vstrf(fmt, ap);
  va_end(ap);
  free(*err);
  *err = s;
  return -1;
}

void ds_err_prefix(char **err, const char *prefix) {
  if (!err) return;
  char *s = ds_strf("%s: %s", prefix, *err ? *err : "unknown error");
  free(*err);
  *err = s;
}
