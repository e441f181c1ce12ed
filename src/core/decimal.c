/* decimal.c - locale-independent number text (see decimal.h). Parsing uses
 * strtod_l with a C locale object made once (pthread_once) and kept for
 * the life of the process; printing uses snprintf and then puts '.' where
 * the current locale's decimal point (one or more bytes) landed, since
 * libc has no snprintf_l. Neither sets a process or thread locale. */
#include "decimal.h"

#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t c_once = PTHREAD_ONCE_INIT;
static locale_t c_locale; /* (locale_t)0 only if newlocale failed */

/* Make the C locale object (run once by pthread_once). */
static void make_c_locale(void) { c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0); }

/* The C locale object, or (locale_t)0 when it could not be made. */
static locale_t c_numeric(void) {
  pthread_once(&c_once, make_c_locale);
  return c_locale;
}

double ds_strtod(const char *s, char **end) {
  locale_t c = c_numeric();
  /* glibc's "C" object is static and never fails; plain strtod is a
   * last resort that is still right in every locale with a '.' point */
  return c ? strtod_l(s, end, c) : strtod(s, end);
}

float ds_strtof(const char *s, char **end) {
  locale_t c = c_numeric();
  return c ? strtof_l(s, end, c) : strtof(s, end);
}

/* Is c a byte printf uses in a finite %e or %g number (anything else is
 * the locale's decimal point)? */
static int number_byte(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e';
}

int ds_format_double(char *buf, size_t size, char conv, int prec, double d) {
  if (!isfinite(d)) {
    const char *t = isnan(d) ? "nan" : d < 0 ? "-inf" : "inf";
    size_t n = strlen(t);
    if (n >= size) return -1;
    memcpy(buf, t, n + 1);
    return (int)n;
  }
  int n = conv == 'e' ? snprintf(buf, size, "%.*e", prec, d)
                      : snprintf(buf, size, "%.*g", prec, d);
  if (n < 0 || (size_t)n >= size) return -1;
  /* the decimal point, however many bytes the locale spells it with,
   * becomes one '.'; the text only shrinks */
  size_t o = 0;
  for (size_t i = 0; i < (size_t)n;) {
    if (number_byte(buf[i])) {
      buf[o++] = buf[i++];
      continue;
    }
    while (i < (size_t)n && !number_byte(buf[i])) i++;
    buf[o++] = '.';
  }
  buf[o] = 0;
  return (int)o;
}
