/* check.h - the tiny assertion layer of the C unit tests.
 *
 * Every CHECK prints one line, "PASS <file>:<line> <what>" or
 * "FAIL <file>:<line> <what>", which tests/run.sh counts. A test program
 * returns check_exit() from main: non-zero when anything failed. */
#ifndef DS_CHECK_H
#define DS_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures_;

static inline int check_report_(int ok, const char *file, int line,
                                const char *what) {
  printf("%s %s:%d %s\n", ok ? "PASS" : "FAIL", file, line, what);
  fflush(stdout); /* keep every line even if a sanitizer ends the process */
  if (!ok) check_failures_++;
  return ok;
}

/* CHECK(cond): one assertion. */
#define CHECK(cond) check_report_(!!(cond), __FILE__, __LINE__, #cond)
/* CHECK_MSG(cond, fmt, ...): an assertion with extra detail on failure. */
#define CHECK_MSG(cond, ...)                                   \
  do {                                                         \
    if (!check_report_(!!(cond), __FILE__, __LINE__, #cond)) { \
      printf("    ");                                          \
      printf(__VA_ARGS__);                                     \
      printf("\n");                                            \
    }                                                          \
  } while (0)
/* CHECK_STR(a, b): two C strings equal (NULL-safe). */
#define CHECK_STR(a, b)                                                     \
  do {                                                                      \
    const char *ca_ = (a), *cb_ = (b);                                      \
    int ok_ = ca_ && cb_ ? strcmp(ca_, cb_) == 0 : ca_ == cb_;              \
    if (!check_report_(ok_, __FILE__, __LINE__, #a " == " #b))              \
      printf("    got \"%s\", want \"%s\"\n", ca_ ? ca_ : "(null)",         \
             cb_ ? cb_ : "(null)");                                         \
  } while (0)
/* CHECK_CONTAINS(haystack, needle): substring check, NULL-safe. */
#define CHECK_CONTAINS(h, n)                                                \
  do {                                                                      \
    const char *ch_ = (h), *cn_ = (n);                                      \
    int ok_ = ch_ && cn_ && strstr(ch_, cn_) != NULL;                       \
    if (!check_report_(ok_, __FILE__, __LINE__, #h " contains " #n))        \
      printf("    \"%s\" lacks \"%s\"\n", ch_ ? ch_ : "(null)", cn_);        \
  } while (0)

static inline int check_exit(void) { return check_failures_ ? 1 : 0; }

#endif
