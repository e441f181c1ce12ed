/* common.h - small shared helpers for every layer: growable byte buffers and
 * heap-allocated error messages.
 *
 * Error convention used across sqlite-datasets: a function that can fail
 * returns 0 on success and -1 on failure, and on failure stores a malloc'd,
 * NUL-terminated message in *err (freeing whatever was there). The caller
 * owns the message and frees it with free(). Readers never print, exit or
 * abort; the virtual-table glue prefixes the module name and hands the text
 * to SQLite. */
#ifndef DS_COMMON_H
#define DS_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer. Zero-initialise ({0}) before first use.
 * `max` (0: none) caps its size: growing past it fails and sets `over`.
 * Readers treat a buffer's max as the max_value_bytes of what they put in
 * it (see DS_MAX_VALUE_BYTES in codec.h). */
typedef struct ds_buf {
  uint8_t *data;
  size_t len;
  size_t cap;
  size_t max;
  int over;
} ds_buf;

/* "<what> of N bytes is more than max_value_bytes=M": the error for a
 * value, record, block or chunk over the cap. Returns -1. */
int ds_err_too_big(char **err, const char *what, uint64_t n, uint64_t max);

/* Ensure room for at least `cap` bytes in total. 0 ok, -1 out of memory
 * or past b->max (then b->over = 1). */
int ds_buf_reserve(ds_buf *b, size_t cap);
/* Append n bytes. 0 ok, -1 out of memory. */
int ds_buf_append(ds_buf *b, const void *p, size_t n);
/* Append a NUL-terminated string (without the NUL). */
int ds_buf_puts(ds_buf *b, const char *s);
/* Append printf-formatted text (without a trailing NUL). */
int ds_buf_printf(ds_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Free the bytes (max stays). */
void ds_buf_free(ds_buf *b);

/* Room for one more element in an array of n elements of `size` bytes
 * whose capacity is implied by n (the next power of two): returns arr when
 * there is room, a larger copy (twice n) when n is a power of two, or NULL
 * when out of memory (arr is then unchanged). Appending n elements costs
 * O(n), not O(n^2). */
void *ds_grow(void *arr, size_t n, size_t size);
/* Room for element n of an array arr whose capacity *cap is kept beside it:
 * returns arr while n < *cap, else a copy with twice the room (`first`
 * elements when *cap is 0) and *cap updated, or NULL when out of memory
 * (arr and *cap are then unchanged). */
void *ds_grow_cap(void *arr, size_t *cap, size_t n, size_t size, size_t first);

/* malloc'd printf; NULL only when out of memory. */
char *ds_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *ds_vstrf(const char *fmt, va_list ap);
/* Replace *err with a formatted message; always returns -1 so that
 * `return ds_err(err, "...")` reads naturally. err may be NULL. */
int ds_err(char **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Replace *err with "<prefix>: <old message>". */
void ds_err_prefix(char **err, const char *prefix);

/* Little-endian loads from a byte pointer (no alignment required). */
static inline uint64_t ds_le64(const uint8_t *p) {
  return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
         (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
         (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}
static inline uint32_t ds_le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

#endif
