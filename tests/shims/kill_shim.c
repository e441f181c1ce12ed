/* kill_shim.c - an LD_PRELOAD library for the kill-point test
 * (tests/conformance/test_write_killed.py): it SIGKILLs the process just
 * before the Nth file-system step under a test folder, so every state a
 * writer passes through at COMMIT can be left behind by a dead writer.
 *
 *   DS_KILL_DIR  the folder (an absolute path); steps elsewhere pass
 *   DS_KILL_AT   N: the step that is never done (0 or unset: count only)
 *   DS_KILL_LOG  optional file: each counted step appends "N call path\n"
 *   DS_FAIL_CALL, DS_FAIL_END  instead of a kill: the first call named
 *                DS_FAIL_CALL whose path (a rename's or link's target)
 *                ends with DS_FAIL_END fails with EIO, once
 *
 * Steps: rename, renameat, renameat2, link, linkat, unlink, unlinkat,
 * rmdir, mkdir, mkdirat, fsync, fdatasync, ftruncate (the descriptor's
 * path read from /proc/self/fd). Test code only: it is never linked into
 * the extension. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long counted;

/* The absolute form of `path` seen from dirfd (AT_FDCWD or a descriptor). */
static void absolute(int dirfd, const char *path, char *out, size_t n) {
  char base[4096] = "";
  if (path && path[0] == '/') {
    snprintf(out, n, "%s", path);
    return;
  }
  if (dirfd == AT_FDCWD) {
    if (!getcwd(base, sizeof base)) base[0] = 0;
  } else {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t k = readlink(link, base, sizeof base - 1);
    base[k > 0 ? k : 0] = 0;
  }
  snprintf(out, n, "%s/%s", base, path ? path : "");
}

/* Count a step on `path` (from dirfd); the Nth one under the folder kills. */
static void step(const char *call, int dirfd, const char *path) {
  const char *dir = getenv("DS_KILL_DIR");
  if (!dir || !*dir) return;
  char abs[8192];
  absolute(dirfd, path, abs, sizeof abs);
  size_t dn = strlen(dir);
  if (strncmp(abs, dir, dn) != 0 || (abs[dn] != '/' && abs[dn] != 0)) return;
  counted++;
  const char *log = getenv("DS_KILL_LOG");
  if (log && *log) {
    FILE *f = fopen(log, "a");
    if (f) {
      fprintf(f, "%ld %s %s\n", counted, call, abs);
      fclose(f);
    }
  }
  const char *at = getenv("DS_KILL_AT");
  if (at && atol(at) == counted) kill(getpid(), SIGKILL);
}

/* A step on an open descriptor: its path from /proc/self/fd. */
static void fd_step(const char *call, int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t k = readlink(link, path, sizeof path - 1);
  if (k <= 0) return;
  path[k] = 0;
  step(call, AT_FDCWD, path);
}

/* 1 (errno EIO) when this call on `path` is the one to fail. */
static int fail_here(const char *call, int dirfd, const char *path) {
  static int failed;
  const char *want = getenv("DS_FAIL_CALL"), *end = getenv("DS_FAIL_END");
  if (failed || !want || !end || strcmp(want, call) != 0) return 0;
  char abs[8192];
  absolute(dirfd, path, abs, sizeof abs);
  size_t n = strlen(abs), k = strlen(end);
  if (n < k || strcmp(abs + n - k, end) != 0) return 0;
  failed = 1;
  errno = EIO;
  return 1;
}

/* fail_here for a descriptor's path. */
static int fd_fail_here(const char *call, int fd) {
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t k = readlink(link, path, sizeof path - 1);
  if (k <= 0) return 0;
  path[k] = 0;
  return fail_here(call, AT_FDCWD, path);
}

/* The interposed calls below: count the step (maybe die), maybe fail,
 * else do the real call (REAL: the next definition, libc's). */
#define REAL(ret, name, ...) \
  static ret (*real)(__VA_ARGS__); \
  if (!real) real = (ret(*)(__VA_ARGS__))dlsym(RTLD_NEXT, name)

int rename(const char *a, const char *b) {
  REAL(int, "rename", const char *, const char *);
  step("rename", AT_FDCWD, a);
  if (fail_here("rename", AT_FDCWD, b)) return -1;
  return real(a, b);
}
int renameat(int da, const char *a, int db, const char *b) {
  REAL(int, "renameat", int, const char *, int, const char *);
  step("renameat", da, a);
  return real(da, a, db, b);
}
int renameat2(int da, const char *a, int db, const char *b, unsigned flags) {
  REAL(int, "renameat2", int, const char *, int, const char *, unsigned);
  step("renameat2", da, a);
  if (fail_here("renameat2", db, b)) return -1;
  return real(da, a, db, b, flags);
}
int link(const char *a, const char *b) {
  REAL(int, "link", const char *, const char *);
  step("link", AT_FDCWD, b);
  return real(a, b);
}
int linkat(int da, const char *a, int db, const char *b, int flags) {
  REAL(int, "linkat", int, const char *, int, const char *, int);
  step("linkat", db, b);
  return real(da, a, db, b, flags);
}
int unlink(const char *a) {
  REAL(int, "unlink", const char *);
  step("unlink", AT_FDCWD, a);
  return real(a);
}
int unlinkat(int d, const char *a, int flags) {
  REAL(int, "unlinkat", int, const char *, int);
  step("unlinkat", d, a);
  return real(d, a, flags);
}
int rmdir(const char *a) {
  REAL(int, "rmdir", const char *);
  step("rmdir", AT_FDCWD, a);
  return real(a);
}
int mkdir(const char *a, mode_t m) {
  REAL(int, "mkdir", const char *, mode_t);
  step("mkdir", AT_FDCWD, a);
  return real(a, m);
}
int mkdirat(int d, const char *a, mode_t m) {
  REAL(int, "mkdirat", int, const char *, mode_t);
  step("mkdirat", d, a);
  return real(d, a, m);
}
int fsync(int fd) {
  REAL(int, "fsync", int);
  fd_step("fsync", fd);
  if (fd_fail_here("fsync", fd)) return -1;
  return real(fd);
}
int fdatasync(int fd) {
  REAL(int, "fdatasync", int);
  fd_step("fdatasync", fd);
  return real(fd);
}
int ftruncate(int fd, off_t n) {
  REAL(int, "ftruncate", int, off_t);
  fd_step("ftruncate", fd);
  return real(fd, n);
}
