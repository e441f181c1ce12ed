/* wd1_index.c - the second part of W-D1's yardstick (bench_w wd1-index):
 * build a datadings dataset's five index files from its data file alone,
 * in plain single-threaded C with the tree's format functions and no
 * SQLite, the work a writer must do beyond copying bytes. The samples are
 * split at the copied .offsets (a writer is handed them one by one), then
 *   .offsets     rebuilt from the samples' lengths, after the check the
 *                writer makes (one map whose "key" is a str)
 *   .keys        one msgpack array of the keys
 *   .key_hashes  salt_for(0) and each key's salted hash, sorted to check
 *                for a repeat (the writer retries the next salt then; here
 *                a repeat is an error)
 *   .filter      simplebloom, capacity n, rate 1/n
 *   .md5         md5sum lines of the data file and the four others
 * Files are written and fsynced as the writer's are. Linked into bench_w
 * (bench/run.sh). */
#include <fcntl.h>
#include <md5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_common.h"
#include "core/common.h"
#include "core/stage.h"
#include "formats/datadings/datadings.h"
#include "decoders/msgpack_encode.h"
#include "decoders/msgpack_value.h"
#include "formats/datadings/simplebloom.h"



/* Write b to `path` + suffix and fsync it; its md5 line goes to md5s. */
static int put_file(const char *path, const char *suffix, const void *p, size_t n,
                    ds_buf *md5s) {
  char name[1024];
  snprintf(name, sizeof name, "%s%s", path, suffix);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char *err = NULL;
  if (fd < 0 || ds_write_all(fd, p, n, name, &err) || fsync(fd)) {
    fprintf(stderr, "bench_w: %s: %s\n", name, err ? err : "cannot write");
    return -1;
  }
  close(fd);
  char hex[33];
  MD5Data(p, n, hex);
  const char *base = strrchr(name, '/');
  return ds_buf_printf(md5s, "%s  %s\n", hex, base ? base + 1 : name);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* A whole file, mapped read-only (*size 0: NULL). */
static const uint8_t *map_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st)) {
    fprintf(stderr, "bench_w: cannot open %s\n", path);
    exit(1);
  }
  *size = (size_t)st.st_size;
  const uint8_t *d = *size ? mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
  close(fd);
  if (d == MAP_FAILED) exit(1);
  return d;
}

/* Build every index file of data_path; prints "ms=... rows=n". */
int wd1_index(const char *data_path) {
  char op[1024];
  snprintf(op, sizeof op, "%s.offsets", data_path);
  double t0 = bench_now_ms();
  size_t size, osize;
  const uint8_t *d = map_file(data_path, &size), *given = map_file(op, &osize);
  uint64_t count = osize >= 8 ? osize / 8 - 1 : 0;
  ds_buf offsets = {0}, keys = {0}, md5s = {0};
  ds_msgpack_doc doc;
  ds_msgpack_doc_init(&doc);
  char *err = NULL;
  uint64_t n = 0, cap = 1 << 16;
  uint64_t *h = malloc(cap * sizeof *h);
  uint8_t salt[8], be[8] = {0};
  datadings_salt_for(0, salt);
  ds_buf_append(&offsets, be, 8);
  /* .offsets, .keys (after its header) and the salted hashes, sample by sample */
  ds_buf keybody = {0};
  ds_buf spill = {0}; /* h1, h2 of every key, for the filter */
  for (size_t pos = 0; n < count; n++) {
    size_t end = 0;
    for (int i = 0; i < 8; i++) end = end << 8 | given[8 * (n + 1) + i];
    if (end < pos || end > size) {
      fprintf(stderr, "bench_w: %s: bad offset %llu\n", op, (unsigned long long)n + 1);
      return 1;
    }
    size_t off = end - pos;
    const msgpack_object *k = NULL;
    if (ds_msgpack_scan(&doc, d + pos, off, &err) ||
        ds_msgpack_get_field(&doc, "key", 3, &k, &err) < 0 || !k ||
        k->type != MSGPACK_OBJECT_STR) {
      fprintf(stderr, "bench_w: %s: sample %llu: %s\n", data_path, (unsigned long long)n,
              err ? err : "no str key");
      return 1;
    }
    const uint8_t *kp = (const uint8_t *)k->via.str.ptr;
    size_t kn = k->via.str.size;
    pos += off;
    for (int i = 7, v = 0; i >= 0; i--, v += 8) be[i] = (uint8_t)((uint64_t)pos >> v);
    ds_buf_append(&offsets, be, 8);
    ds_msgpack_pack_str(&keybody, kp, kn, &err);
    if (n == cap) h = realloc(h, (cap *= 2) * sizeof *h);
    datadings_key_hash(salt, kp, kn, (uint8_t *)&h[n]);
    uint64_t hh[2];
    simplebloom_hashes(kp, kn, &hh[0], &hh[1]);
    ds_buf_append(&spill, hh, sizeof hh);
  }
  ds_msgpack_pack_array_header(&keys, n, &err);
  ds_buf_append(&keys, keybody.data, keybody.len);
  /* .key_hashes: salt, hashes in key order; a sorted copy checks for a repeat */
  ds_buf kh = {0};
  ds_buf_append(&kh, salt, 8);
  ds_buf_append(&kh, h, 8 * n);
  qsort(h, n, sizeof *h, cmp_u64);
  for (uint64_t i = 1; i < n; i++)
    if (h[i] == h[i - 1]) {
      fprintf(stderr, "bench_w: a repeated key hash with salt_for(0)\n");
      return 1;
    }
  /* .filter */
  uint64_t m = n > 2 ? n : 2, nbytes = simplebloom_bytes(m, 1.0 / (double)m);
  uint32_t kf = (uint32_t)simplebloom_hash_count(8 * nbytes, m);
  uint8_t *filter = calloc(SIMPLEBLOOM_HEADER + nbytes, 1);
  simplebloom_header(filter, SIMPLEBLOOM_HEADER + nbytes, m, 1.0 / (double)m);
  const uint64_t *hs = (const uint64_t *)spill.data;
  for (uint64_t i = 0; i < n; i++)
    simplebloom_add(filter + SIMPLEBLOOM_HEADER, 8 * nbytes, kf, hs[2 * i], hs[2 * i + 1]);
  /* .md5: the data file's (read back, as it would be after a cp), then the others' */
  char hex[33];
  MD5Data(d, size, hex);
  const char *base = strrchr(data_path, '/');
  ds_buf_printf(&md5s, "%s  %s\n", hex, base ? base + 1 : data_path);
  int rc = put_file(data_path, ".offsets", offsets.data, offsets.len, &md5s) ||
           put_file(data_path, ".keys", keys.data, keys.len, &md5s) ||
           put_file(data_path, ".key_hashes", kh.data, kh.len, &md5s) ||
           put_file(data_path, ".filter", filter, SIMPLEBLOOM_HEADER + nbytes, &md5s);
  ds_buf scratch = {0};
  if (rc == 0) rc = put_file(data_path, ".md5", md5s.data, md5s.len, &scratch);
  double t1 = bench_now_ms();
  if (rc) return 1;
  printf("ms=%.1f rows=%llu\n", t1 - t0, (unsigned long long)n);
  return 0;
}
