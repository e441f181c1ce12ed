/* fuzz_common.h - what every fuzz harness shares: reporting a broken
 * contract (fuzz_fail: "<harness>: contract violated: ..." on stderr, then
 * abort, so libFuzzer keeps the input as a crash), reading every byte of a
 * range so ASan checks all of it (fuzz_touch), and an error return that
 * must carry a message (fuzz_expect_err). A harness defines FUZZ_HARNESS,
 * its name, before including this, and may wrap these with the context it
 * reports (a record or sample number). */
#ifndef DS_FUZZ_COMMON_H
#define DS_FUZZ_COMMON_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_HARNESS
#error "define FUZZ_HARNESS (the harness's name) before including fuzz_common.h"
#endif

/* Report the broken contract (printf-style, from a va_list) and abort. */
__attribute__((noreturn, unused, format(printf, 1, 0)))
static void fuzz_vfail(const char *fmt, va_list ap) {
  fprintf(stderr, "%s: contract violated: ", FUZZ_HARNESS);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  abort();
}

/* Report the broken contract (printf-style) and abort. */
__attribute__((noreturn, unused, format(printf, 1, 2)))
static void fuzz_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fuzz_vfail(fmt, ap);
}

/* Read every byte of p[0..n) so ASan checks the whole range. */
static volatile uint8_t fuzz_sink;
__attribute__((unused)) static void fuzz_touch(const void *p, size_t n) {
  const uint8_t *b = p;
  uint8_t x = 0;
  for (size_t i = 0; i < n; i++) x ^= b[i];
  fuzz_sink = x;
}

/* A failed call must leave a non-empty message in *err: it is freed and
 * cleared here; without one, fuzz_fail with the text fmt (printf-style). */
__attribute__((unused, format(printf, 2, 3)))
static void fuzz_expect_err(char **err, const char *fmt, ...) {
  if (!*err || !**err) {
    va_list ap;
    va_start(ap, fmt);
    fuzz_vfail(fmt, ap);
  }
  free(*err);
  *err = NULL;
}

#endif
