/* check.h - the tiny assertion layer of the C unit tests.
 *
 * Every CHECK prints one line, "PASS <file>:<line> <what>" or
 * "FAIL <file>:<line> <what>", which tests/run.sh counts. A test program
 * returns check_exit() from main: non-zero when anything failed.
 * Details follow their FAIL line, indented: those of CHECK_MSG, CHECK_STR
 * and CHECK_CONTAINS, and the notes a helper leaves with check_note()
 * before the check that judges its result (printed only if that check
 * fails, then forgotten), so the runner's summary, which shows the lines
 * after each FAIL, shows them. */
#ifndef DS_CHECK_H
#define DS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int check_failures_;
static char check_notes_[4096]; /* notes for the next check */
static size_t check_notes_len_;

/* check_note(fmt, ...): printf-like text for the next check, shown after
 * its line only when it fails (e.g. "    open x: no such file\n"). */
static inline void check_note(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), unused));
static inline void check_note(const char *fmt, ...) {
  size_t room = sizeof check_notes_ - check_notes_len_;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(check_notes_ + check_notes_len_, room, fmt, ap);
  va_end(ap);
  if (n > 0) check_notes_len_ += (size_t)n < room ? (size_t)n : room - 1;
}

static inline int check_report_(int ok, const char *file, int line,
                                const char *what) {
  printf("%s %s:%d %s\n", ok ? "PASS" : "FAIL", file, line, what);
  if (!ok) {
    check_failures_++;
    if (check_notes_len_) fputs(check_notes_, stdout);
  }
  check_notes_len_ = 0;
  check_notes_[0] = 0;
  fflush(stdout); /* keep every line even if a sanitizer ends the process */
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
      fflush(stdout);                                          \
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
    fflush(stdout);                                                         \
  } while (0)
/* CHECK_CONTAINS(haystack, needle): substring check, NULL-safe. */
#define CHECK_CONTAINS(h, n)                                                \
  do {                                                                      \
    const char *ch_ = (h), *cn_ = (n);                                      \
    int ok_ = ch_ && cn_ && strstr(ch_, cn_) != NULL;                       \
    if (!check_report_(ok_, __FILE__, __LINE__, #h " contains " #n))        \
      printf("    \"%s\" lacks \"%s\"\n", ch_ ? ch_ : "(null)", cn_);        \
    fflush(stdout);                                                         \
  } while (0)

static inline int check_exit(void) { return check_failures_ ? 1 : 0; }

#endif
