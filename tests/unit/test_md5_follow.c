/* test_md5_follow.c - core/md5_follow.c: the md5 a second thread computes
 * while a file grows equals MD5 of the finished file, also after the file
 * is cut back (a savepoint rollback: before and after the thread hashed
 * past the cut) and when it starts from a context holding a prefix. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/md5_follow.h"

/* The finished digest of a context as 32 hex digits. */
static void hex_of_ctx(MD5_CTX c, char out[33]) {
  uint8_t d[16];
  MD5Final(d, &c);
  for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* MD5 of p[0..n) as 32 hex digits. */
static void hex_of(const uint8_t *p, size_t n, char out[33]) {
  MD5_CTX c;
  MD5Init(&c);
  MD5Update(&c, p, n);
  hex_of_ctx(c, out);
}

int main(void) {
  char path[] = "/tmp/test_md5_follow_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  size_t total = (5u << 20) + 12345;
  uint8_t *data = malloc(total);
  for (size_t i = 0; i < total; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
  char want[33], got[33];
  char *err = NULL;
  MD5_CTX c;

  /* grows in pieces, fed as it goes */
  MD5_CTX zero;
  MD5Init(&zero);
  ds_md5_follow *m = ds_md5_follow_start(fd, &zero, 0);
  CHECK(m != NULL);
  int wrote = 1;
  for (size_t off = 0; off < total; off += 300007) {
    size_t n = total - off < 300007 ? total - off : 300007;
    wrote = wrote && pwrite(fd, data + off, n, (off_t)off) == (ssize_t)n;
    ds_md5_follow_feed(m, off + n);
  }
  CHECK(wrote);
  CHECK(ds_md5_follow_finish(m, total, &c, path, &err) == 0);
  hex_of_ctx(c, got);
  hex_of(data, total, want);
  CHECK_STR(got, want);

  /* cut back to 1 MB + 7 (the thread has hashed past it), different bytes
   * written after the cut */
  ds_md5_follow_cut(m, (1u << 20) + 7);
  CHECK(ftruncate(fd, (1u << 20) + 7) == 0);
  for (size_t i = (1u << 20) + 7; i < total; i++) data[i] ^= 0x5a;
  CHECK(pwrite(fd, data + (1u << 20) + 7, total - (1u << 20) - 7, (1u << 20) + 7) ==
        (ssize_t)(total - (1u << 20) - 7));
  ds_md5_follow_feed(m, total);
  CHECK(ds_md5_follow_finish(m, total, &c, path, &err) == 0);
  hex_of_ctx(c, got);
  hex_of(data, total, want);
  CHECK_STR(got, want);
  /* a cut with nothing hashed past it keeps the context */
  ds_md5_follow_cut(m, total);
  CHECK(ds_md5_follow_finish(m, total, &c, path, &err) == 0);
  hex_of_ctx(c, got);
  CHECK_STR(got, want);
  ds_md5_follow_stop(m);

  /* a start from a context that holds the first 1000 bytes */
  MD5_CTX pre;
  MD5Init(&pre);
  MD5Update(&pre, data, 1000);
  m = ds_md5_follow_start(fd, &pre, 1000);
  CHECK(ds_md5_follow_finish(m, total, &c, path, &err) == 0);
  hex_of_ctx(c, got);
  CHECK_STR(got, want);
  /* finish past the end of the file: a read error naming the file */
  CHECK(ds_md5_follow_finish(m, total + 10, &c, path, &err) == -1 && err &&
        strstr(err, path) != NULL);
  CHECK_CONTAINS(err, "short read"); /* the file ended: no errno to show */
  ds_md5_follow_stop(m);
  free(err);
  close(fd);
  unlink(path);
  free(data);
  return check_exit();
}
