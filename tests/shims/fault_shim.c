/* fault_shim.c - an LD_PRELOAD library for tests/conformance/test_write_faults.py:
 * makes the Nth write to a file under $DS_FAULT_DIR short, or fail with
 * ENOSPC or EIO, as a full or failing disk would.
 *
 * Control file $DS_FAULT_CTL (read and rewritten at every call that
 * writes under the folder, so the test arms it between statements):
 *   "N KIND SEEN [MATCH]"  armed: this is call SEEN + 1 since arming
 *                  (only calls on paths containing MATCH, when given);
 *                  call N faults.
 *                  KIND: short (writes half, returns the count; the next
 *                  call fails with ENOSPC), enospc, eio (fail outright),
 *                  fsync (counts fsync/fdatasync calls only; the Nth fails
 *                  with ENOSPC), count (never faults: counts the calls).
 *   "next PATH"    after a short write: the next call fails with ENOSPC.
 *   "fired KIND PATH"  done; later calls pass (space came back).
 *   anything else: every call passes.
 * Calls: write, pwrite, pwrite64, writev, copy_file_range, fallocate
 * (fsync, fdatasync for KIND fsync). Under ASan it goes after libasan in
 * LD_PRELOAD: the sanitizer's wrappers call on into these. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec *, int);
typedef ssize_t (*cfr_fn)(int, loff_t *, int, loff_t *, size_t, unsigned);
typedef int (*falloc_fn)(int, int, off_t, off_t);
typedef int (*fsync_fn)(int);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

/* The next definition of a symbol (libc's, or libasan's wrapper's next). */
static void *next_sym(const char *name) { return dlsym(RTLD_NEXT, name); }

enum { PASS, SHORT, FAIL };

/* Rewrite the control file with `text` (libc's write: not counted). */
static void put_ctl(const char *ctl, const char *text) {
  static pwrite_fn real;
  if (!real) real = (pwrite_fn)next_sym("pwrite");
  int fd = open(ctl, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return;
  (void)real(fd, text, strlen(text), 0);
  close(fd);
}

/* What to do with a call on fd (is_sync: fsync/fdatasync). SHORT: write
 * half; FAIL: *e is the errno. */
static int decide(int fd, int is_sync, int *e) {
  const char *ctl = getenv("DS_FAULT_CTL"), *dir = getenv("DS_FAULT_DIR");
  if (!ctl || !dir || !*dir) return PASS;
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  size_t dn = strlen(dir);
  if (n <= 0) return PASS;
  path[n] = 0;
  if (strncmp(path, dir, dn) != 0 || path[dn] != '/') return PASS;
  int rc = PASS;
  pthread_mutex_lock(&mu);
  char text[PATH_MAX + 64] = "", out[PATH_MAX + 64];
  int cfd = open(ctl, O_RDONLY | O_CLOEXEC);
  if (cfd >= 0) {
    ssize_t r = read(cfd, text, sizeof text - 1);
    text[r > 0 ? r : 0] = 0;
    close(cfd);
  }
  long want = 0, seen = 0;
  char kind[16] = "", match[256] = "";
  if (strncmp(text, "next ", 5) == 0 && !is_sync) {
    snprintf(out, sizeof out, "fired short %s", path);
    put_ctl(ctl, out);
    *e = ENOSPC;
    rc = FAIL;
  } else if (sscanf(text, "%ld %15s %ld %255s", &want, kind, &seen, match) >= 3 &&
             (strcmp(kind, "fsync") == 0) == is_sync && strstr(path, match)) {
    seen++;
    if (seen != want || strcmp(kind, "count") == 0) {
      snprintf(out, sizeof out, "%ld %s %ld %s", want, kind, seen, match);
    } else if (strcmp(kind, "short") == 0) {
      snprintf(out, sizeof out, "next %s", path);
      rc = SHORT;
    } else {
      snprintf(out, sizeof out, "fired %s %s", kind, path);
      *e = strcmp(kind, "eio") == 0 ? EIO : ENOSPC;
      rc = FAIL;
    }
    put_ctl(ctl, out);
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

ssize_t write(int fd, const void *p, size_t n) {
  static write_fn real;
  if (!real) real = (write_fn)next_sym("write");
  int e = 0, d = decide(fd, 0, &e);
  if (d == FAIL || (d == SHORT && n < 2)) {
    errno = e ? e : ENOSPC;
    return -1;
  }
  return real(fd, p, d == SHORT ? n / 2 : n);
}

/* pwrite and pwrite64 (the same call on 64-bit systems). */
static ssize_t do_pwrite(const char *name, int fd, const void *p, size_t n, off_t off) {
  pwrite_fn real = (pwrite_fn)next_sym(name);
  int e = 0, d = decide(fd, 0, &e);
  if (d == FAIL || (d == SHORT && n < 2)) {
    errno = e ? e : ENOSPC;
    return -1;
  }
  return real(fd, p, d == SHORT ? n / 2 : n, off);
}

ssize_t pwrite(int fd, const void *p, size_t n, off_t off) {
  return do_pwrite("pwrite", fd, p, n, off);
}

ssize_t pwrite64(int fd, const void *p, size_t n, off_t off) {
  return do_pwrite("pwrite64", fd, p, n, off);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  static writev_fn real;
  if (!real) real = (writev_fn)next_sym("writev");
  int e = 0, d = decide(fd, 0, &e);
  if (d == FAIL) {
    errno = e;
    return -1;
  }
  if (d == SHORT) { /* half of the first piece */
    static write_fn w;
    if (!w) w = (write_fn)next_sym("write");
    if (cnt < 1 || iov[0].iov_len < 2) {
      errno = ENOSPC;
      return -1;
    }
    return w(fd, iov[0].iov_base, iov[0].iov_len / 2);
  }
  return real(fd, iov, cnt);
}

ssize_t copy_file_range(int in, loff_t *ioff, int out, loff_t *ooff, size_t n,
                        unsigned flags) {
  static cfr_fn real;
  if (!real) real = (cfr_fn)next_sym("copy_file_range");
  int e = 0, d = decide(out, 0, &e);
  if (d == FAIL || (d == SHORT && n < 2)) {
    errno = e ? e : ENOSPC;
    return -1;
  }
  return real(in, ioff, out, ooff, d == SHORT ? n / 2 : n, flags);
}

int fallocate(int fd, int mode, off_t off, off_t len) {
  static falloc_fn real;
  if (!real) real = (falloc_fn)next_sym("fallocate");
  int e = 0;
  if (decide(fd, 0, &e) != PASS) {
    errno = e ? e : ENOSPC;
    return -1;
  }
  return real(fd, mode, off, len);
}

int fsync(int fd) {
  static fsync_fn real;
  if (!real) real = (fsync_fn)next_sym("fsync");
  int e = 0;
  if (decide(fd, 1, &e) == FAIL) {
    errno = e;
    return -1;
  }
  return real(fd);
}

int fdatasync(int fd) {
  static fsync_fn real;
  if (!real) real = (fsync_fn)next_sym("fdatasync");
  int e = 0;
  if (decide(fd, 1, &e) == FAIL) {
    errno = e;
    return -1;
  }
  return real(fd);
}
