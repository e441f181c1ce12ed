/* decimal.h - decimal text of floating-point numbers in the C locale's
 * spelling (a '.' decimal point), whatever locale the host process set
 * with setlocale: libc's strtod and printf("%g") follow LC_NUMERIC, so in
 * de_DE they read "2.5" as 2 and print "2,5". Every number parsed or
 * printed as text in src/ goes through these; none of them touches the
 * process or thread locale. */
#ifndef DS_DECIMAL_H
#define DS_DECIMAL_H

#include <stddef.h>

/* strtod / strtof reading '.' as the decimal point (C locale rules). */
double ds_strtod(const char *s, char **end);
float ds_strtof(const char *s, char **end);

/* snprintf(buf, size, "%.*<conv>", prec, d) with conv 'g' or 'e', the
 * decimal point always '.'; a non-finite d prints "inf", "-inf" or "nan".
 * Returns the length of the text, or -1 when it did not fit. */
int ds_format_double(char *buf, size_t size, char conv, int prec, double d);

#endif
