/* test_append_file.c - core/append_file.c when writes fail part way: a
 * file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes the write that
 * crosses it short and the next one fail with EFBIG, as a full disk does.
 * After each failure the file holds exactly its good bytes, a rollback
 * to a mark restores the state at the mark, and later writes land right
 * after it: the file then equals what was accepted, byte for byte. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/stage.h"

#define KB ((size_t)1024)

static char tmp[64];
static int seq;

/* A new empty ds_afile in the test folder. */
static ds_afile *new_file(void) {
  ds_afile *f = calloc(1, sizeof *f);
  f->path = malloc(128);
  snprintf(f->path, 128, "%s/f%d", tmp, seq++);
  f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  return f;
}

static void free_file(ds_afile *f) {
  close(f->fd);
  free(f->buf);
  free(f->path);
  free(f);
}

/* Writes past `bytes` of a file fail (RLIM_INFINITY: as far as allowed). */
static void limit(rlim_t bytes) {
  struct rlimit r;
  getrlimit(RLIMIT_FSIZE, &r);
  r.rlim_cur = bytes == RLIM_INFINITY ||
                       (r.rlim_max != RLIM_INFINITY && bytes > r.rlim_max)
                   ? r.rlim_max : bytes;
  setrlimit(RLIMIT_FSIZE, &r);
}

/* n bytes of pattern `tag`. */
static uint8_t *bytes(size_t n, int tag) {
  uint8_t *p = malloc(n);
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(tag * 31 + i * 7 + (i >> 11));
  return p;
}

/* The file on disk equals the pieces given, in order. */
static int file_is(const char *path, const uint8_t *const *parts, const size_t *lens,
                   int n) {
  FILE *fp = fopen(path, "rb");
  if (!fp) return 0;
  int ok = 1;
  for (int i = 0; ok && i < n; i++) {
    uint8_t *got = malloc(lens[i] + 1);
    ok = fread(got, 1, lens[i], fp) == lens[i] && memcmp(got, parts[i], lens[i]) == 0;
    free(got);
  }
  ok = ok && fgetc(fp) == EOF;
  fclose(fp);
  return ok;
}

static uint64_t disk_size(const ds_afile *f) {
  struct stat st;
  return fstat(f->fd, &st) == 0 ? (uint64_t)st.st_size : (uint64_t)-1;
}

/* A buffered flush that fails part way; the statement's rollback to a
 * mark inside the buffer; more rows; everything flushed. */
static void test_flush_short(void) {
  ds_afile *f = new_file();
  char *err = NULL;
  size_t na = 700 * KB, nb = 600 * KB, nd = 300 * KB;
  uint8_t *a = bytes(na, 1), *b = bytes(nb, 2), *d = bytes(nd, 3);
  CHECK(ds_afile_write(f, a, na, &err) == 0);
  uint64_t mark = f->size; /* the failing statement starts here */
  limit(1000 * KB);        /* B flushed: 300 KB fit, then EFBIG */
  CHECK(ds_afile_write(f, b, nb, &err) == 0); /* flushes A, buffers B */
  CHECK(ds_afile_flush(f, &err) == -1);
  CHECK_CONTAINS(err, f->path);
  CHECK_MSG(disk_size(f) == na, "the file has %llu bytes, want %zu (A)",
            (unsigned long long)disk_size(f), na);
  CHECK(f->size == na + nb && f->nbuf == nb); /* B still buffered */
  limit(RLIM_INFINITY);
  CHECK(ds_afile_truncate(f, mark, &err) == 0);
  CHECK(ds_afile_write(f, d, nd, &err) == 0 && ds_afile_flush(f, &err) == 0);
  const uint8_t *parts[] = {a, d};
  size_t lens[] = {na, nd};
  CHECK_MSG(file_is(f->path, parts, lens, 2), "A then D (%llu bytes on disk)",
            (unsigned long long)disk_size(f));
  free(err);
  free(a), free(b), free(d);
  free_file(f);
}

/* A direct write (1 MiB and more) that fails part way: nothing of it
 * stays; the rollback goes below what was flushed. */
static void test_direct_short(void) {
  ds_afile *f = new_file();
  char *err = NULL;
  size_t na = 1200 * KB, nb = 1100 * KB, nd = 200 * KB;
  uint8_t *a = bytes(na, 4), *b = bytes(nb, 5), *d = bytes(nd, 6);
  CHECK(ds_afile_write(f, a, 100 * KB, &err) == 0);
  uint64_t mark = f->size;
  CHECK(ds_afile_write(f, a + 100 * KB, na - 100 * KB, &err) == 0); /* direct */
  limit(1500 * KB);
  CHECK(ds_afile_write(f, b, nb, &err) == -1);
  CHECK_MSG(disk_size(f) == na, "the file has %llu bytes, want %zu",
            (unsigned long long)disk_size(f), na);
  CHECK(f->size == na);
  limit(RLIM_INFINITY);
  CHECK(ds_afile_truncate(f, mark, &err) == 0); /* below the flushed bytes */
  CHECK(disk_size(f) == mark);
  CHECK(ds_afile_write(f, d, nd, &err) == 0 && ds_afile_flush(f, &err) == 0);
  const uint8_t *parts[] = {a, d};
  size_t lens[] = {100 * KB, nd};
  CHECK(file_is(f->path, parts, lens, 2));
  free(err);
  free(a), free(b), free(d);
  free_file(f);
}

/* ds_afile_copy_from that fails part way: the file is as it was. */
static void test_copy_short(void) {
  ds_afile *src = new_file(), *f = new_file();
  char *err = NULL;
  size_t ns = 900 * KB, na = 100 * KB, nd = 50 * KB;
  uint8_t *s = bytes(ns, 7), *a = bytes(na, 8), *d = bytes(nd, 9);
  CHECK(ds_afile_write(src, s, ns, &err) == 0 && ds_afile_flush(src, &err) == 0);
  CHECK(ds_afile_write(f, a, na, &err) == 0);
  limit(500 * KB);
  CHECK(ds_afile_copy_from(f, src->path, 0, ns, &err) == -1);
  CHECK_MSG(disk_size(f) == na && f->size == na, "%llu bytes on disk, size %llu",
            (unsigned long long)disk_size(f), (unsigned long long)f->size);
  limit(RLIM_INFINITY);
  CHECK(ds_afile_write(f, d, nd, &err) == 0 && ds_afile_flush(f, &err) == 0);
  const uint8_t *parts[] = {a, d};
  size_t lens[] = {na, nd};
  CHECK(file_is(f->path, parts, lens, 2));
  free(err);
  free(s), free(a), free(d);
  free_file(src);
  free_file(f);
}

/* ds_pwrite_all cuts back; ds_pread_all says "short read". */
static void test_pwrite_pread(void) {
  ds_afile *f = new_file();
  char *err = NULL;
  size_t n = 400 * KB;
  uint8_t *a = bytes(n, 10), back[16];
  CHECK(ds_pwrite_all(f->fd, a, 1000, 0, "x.tmp", &err) == 0);
  limit(200 * KB);
  CHECK(ds_pwrite_all(f->fd, a, n, 1000, "x.tmp", &err) == -1);
  CHECK_CONTAINS(err, "x.tmp");
  limit(RLIM_INFINITY);
  CHECK(disk_size(f) == 1000);
  CHECK(ds_pread_all(f->fd, back, 16, 990, "x.tmp", &err) == -1);
  CHECK_CONTAINS(err, "short read");
  CHECK(ds_pread_all(f->fd, back, 16, 0, "x.tmp", &err) == 0 && memcmp(back, a, 16) == 0);
  free(err);
  free(a);
  free_file(f);
}

/* sync_file_range, interposed (the executable's definition wins over
 * libc's for the library code linked into it): the calls are recorded,
 * nothing is written. */
#define MAX_SFR 64
static struct { int fd; off_t off, n; unsigned flags; } sfr[MAX_SFR];
static int nsfr;
int sync_file_range(int fd, off_t off, off_t n, unsigned int flags) {
  if (nsfr < MAX_SFR) {
    sfr[nsfr].fd = fd;
    sfr[nsfr].off = off;
    sfr[nsfr].n = n;
    sfr[nsfr].flags = flags;
  }
  nsfr++;
  return 0;
}

/* The disk writes started for fd: contiguous from 0, each of at least
 * DS_AFILE_WRITEBACK bytes, SYNC_FILE_RANGE_WRITE alone; their end, or
 * -1 when they are not so. */
static long long started_end(int fd) {
  long long end = 0;
  for (int i = 0; i < nsfr && i < MAX_SFR; i++) {
    if (sfr[i].fd != fd) continue;
    if (sfr[i].off != end || sfr[i].n < (off_t)DS_AFILE_WRITEBACK ||
        sfr[i].flags != SYNC_FILE_RANGE_WRITE)
      return -1;
    end += sfr[i].n;
  }
  return end;
}

/* A writeback file starts the disk write of every DS_AFILE_WRITEBACK bytes
 * written (buffered or direct), from where the last one ended, again
 * after a cut; a plain file never does. */
static void test_writeback(void) {
  char *err = NULL;
  size_t piece = 64 * KB, total = 2 * DS_AFILE_WRITEBACK + 3 * KB * KB;
  uint8_t *a = bytes(piece, 7);
  ds_afile *plain = new_file(), *f = new_file();
  f->writeback = 1;
  nsfr = 0;
  for (size_t at = 0; at < total; at += piece) {
    CHECK(ds_afile_write(plain, a, piece, &err) == 0);
    CHECK(ds_afile_write(f, a, piece, &err) == 0);
  }
  CHECK(ds_afile_flush(plain, &err) == 0 && ds_afile_flush(f, &err) == 0);
  CHECK_MSG(started_end(plain->fd) == 0, "%d calls for a plain file", nsfr);
  long long end = started_end(f->fd);
  CHECK_MSG(end >= (long long)(2 * DS_AFILE_WRITEBACK) && end <= (long long)f->size &&
                f->handed == (uint64_t)end,
            "writes started up to %lld of %llu bytes (handed %llu)", end,
            (unsigned long long)f->size, (unsigned long long)f->handed);
  /* a cut below what was started: the next starts from the cut */
  uint64_t cut = DS_AFILE_WRITEBACK / 2;
  CHECK(ds_afile_truncate(f, cut, &err) == 0 && f->handed == cut);
  nsfr = 0;
  uint8_t *big = bytes(DS_AFILE_WRITEBACK + KB, 9); /* written direct */
  CHECK(ds_afile_write(f, big, DS_AFILE_WRITEBACK + KB, &err) == 0);
  CHECK_MSG(nsfr == 1 && sfr[0].off == (off_t)cut &&
                sfr[0].n == (off_t)(DS_AFILE_WRITEBACK + KB),
            "%d calls, the first at %lld for %lld bytes", nsfr, (long long)sfr[0].off,
            (long long)sfr[0].n);
  free(big);
  free(a);
  free(err);
  free_file(plain);
  free_file(f);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_afile_XXXXXX");
  if (!mkdtemp(tmp)) {
    CHECK(0);
    return check_exit();
  }
  signal(SIGXFSZ, SIG_IGN); /* the limit then gives EFBIG, not a signal */
  test_flush_short();
  test_direct_short();
  test_copy_short();
  test_pwrite_pread();
  test_writeback();
  for (int i = 0; i < seq; i++) {
    char p[128];
    snprintf(p, sizeof p, "%s/f%d", tmp, i);
    unlink(p);
  }
  rmdir(tmp);
  return check_exit();
}
