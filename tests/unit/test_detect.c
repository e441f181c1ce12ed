/* test_detect.c - formats/detect.c over a list of formats, without SQLite:
 * detection knows no format of its own, so a list decides what is found
 * (a format left out is not detected, and the "not a dataset" message
 * names only the rules of the listed formats, "A, B and C"), the list's
 * order decides between two formats that claim a path, and the detail
 * word each format sets reaches its own code (bagz: limits.NAME beside). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "formats/atlas/atlas_format.h"
#include "formats/bagz/bagz_format.h"
#include "formats/bcolz/bcolz_format.h"
#include "formats/datadings/datadings_format.h"
#include "formats/tfrecord/tfrecord_format.h"
#include "formats/detect.h"
#include "formats/format_files.h"

#define FIX "tests/fixtures/upstream/"

/* A list as detection takes it: the NULL-terminated array `cur`. */
static const ds_format_bytes *const *cur;
static const ds_format_bytes *listed(size_t i) {
  size_t n = 0;
  while (cur[n]) n++;
  return i < n ? cur[i] : NULL;
}

/* A format of the test: any file whose name ends in .bagz, with a
 * file_rule naming it. */
static int any_bagz(const char *path, unsigned *detail) {
  *detail = 7;
  return ds_fmt_ends_with(path, ".bagz");
}
static const ds_format_bytes greedy = {.name = "greedy", .detect_file = any_bagz,
                                       .file_rule = "a .bagz name ({}: greedy)"};

/* Detect path with list l: the format's name, or NULL with *err. */
static const char *detect(const ds_format_bytes *const *l, const char *path,
                          unsigned *detail, char **err) {
  ds_detected d;
  cur = l;
  *err = NULL;
  if (ds_detect(path, listed, &d, err)) return NULL;
  *detail = d.detail;
  return d.format->name;
}

int main(void) {
  const ds_format_bytes *all[] = {&ds_bcolz_format, &ds_atlas_format, &ds_tfrecord_format,
                                  &ds_datadings_format, &ds_bagz_format, NULL};
  const ds_format_bytes *no_bagz[] = {&ds_bcolz_format, &ds_atlas_format,
                                      &ds_datadings_format, NULL};
  const ds_format_bytes *three[] = {&ds_datadings_format, &greedy, &ds_bagz_format, NULL};
  const ds_format_bytes *greedy_last[] = {&ds_bagz_format, &greedy, NULL};
  unsigned detail = 0;
  char *err = NULL;
  const char *f;

  /* every format of the table is found by its own rule */
  f = detect(all, FIX "bagz/concat@4.bagz", &detail, &err);
  CHECK_STR(f, "bagz");
  free(err);
  f = detect(all, FIX "bcolz/ctable_basic", &detail, &err);
  CHECK_STR(f, "bcolz");
  CHECK(detail == DS_BCOLZ_DETECT_CTABLE);
  free(err);
  f = detect(all, FIX "atlas/mid", &detail, &err);
  CHECK_STR(f, "atlas");
  free(err);
  f = detect(all, FIX "datadings/sharded/part-*.msgpack", &detail, &err);
  CHECK_STR(f, "datadings");
  free(err);

  /* tfrecord: by name (the empty file too), a glob and a comma list of
   * them, and by its first header under a name without an extension */
  f = detect(all, "tests/fixtures/tfrecord/examples.tfrecord", &detail, &err);
  CHECK_STR(f, "tfrecord");
  free(err);
  f = detect(all, "tests/fixtures/tfrecord/empty.tfrecord", &detail, &err);
  CHECK_STR(f, "tfrecord");
  free(err);
  f = detect(all, "tests/fixtures/tfrecord/examples.*.tfrecord", &detail, &err);
  CHECK_STR(f, "tfrecord");
  free(err);
  f = detect(all, "tests/fixtures/tfrecord/examples.tfrecord,tests/fixtures/tfrecord/"
                  "examples.gzip.tfrecord", &detail, &err);
  CHECK_STR(f, "tfrecord");
  free(err);
  {
    const char *srcs[] = {"tests/fixtures/tfrecord/examples.tfrecord",
                          "tests/fixtures/tfrecord/examples.gzip.tfrecord",
                          "tests/fixtures/upstream/bagz/concat-00000-of-00004.bagz"};
    const char *want[] = {"tfrecord", "tfrecord", "bagz"};
    for (size_t k = 0; k < 3; k++) {
      char tmp[] = "/tmp/ds_test_detect_tfr_XXXXXX";
      int tfd = mkstemp(tmp);
      FILE *in = fopen(srcs[k], "rb");
      if (!CHECK(tfd >= 0 && in)) continue;
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, in)) > 0) CHECK(write(tfd, buf, n) == (ssize_t)n);
      fclose(in);
      close(tfd);
      /* a bag under a name without extension: its tail, not a TFRecord header */
      f = detect(all, tmp, &detail, &err);
      if (!CHECK(f && strcmp(f, want[k]) == 0)) check_note("    %s: %s\n", srcs[k], err);
      free(err);
      unlink(tmp);
    }
  }

  /* the detail word: limits.NAME beside a bag */
  f = detect(all, FIX "bagz/separate.bagz", &detail, &err);
  CHECK(f && strcmp(f, "bagz") == 0 && detail == DS_BAGZ_DETECT_SEPARATE);
  free(err);

  /* a format not listed is not found: the message names only the listed
   * formats' rules */
  const char *one = FIX "bagz/concat-00000-of-00004.bagz";
  f = detect(no_bagz, one, &detail, &err);
  CHECK(f == NULL);
  CHECK_CONTAINS(err, "looked for concat-00000-of-00004.bagz.offsets or "
                      "concat-00000-of-00004.bagz.index beside it (datadings)");
  CHECK(err && strstr(err, "(bagz)") == NULL);
  free(err);
  f = detect(no_bagz, FIX "bagz/concat@4.bagz", &detail, &err);
  CHECK(f == NULL && err != NULL); /* no format takes a shard spec */
  free(err);

  /* three rules: "A, B and C", {} as the file's name */
  char path[] = "/tmp/ds_test_detect_XXXXXX";
  int fd = mkstemp(path);
  if (CHECK(fd >= 0)) {
    CHECK(write(fd, "hello", 5) == 5);
    close(fd);
    f = detect(three, path, &detail, &err);
    CHECK(f == NULL);
    const char *base = strrchr(path, '/') + 1;
    char want[512];
    snprintf(want, sizeof want,
             "looked for %s.offsets or %s.index beside it (datadings), a .bagz name "
             "(%s: greedy) and a .bag or .bagz name, limits.%s beside it, or a valid "
             "limits tail (bagz)",
             base, base, base, base);
    CHECK_CONTAINS(err, want);
    free(err);
    unlink(path);
  }

  /* the list's order decides between two formats claiming a path */
  f = detect(three, one, &detail, &err);
  CHECK(f && strcmp(f, "greedy") == 0 && detail == 7);
  free(err);
  f = detect(greedy_last, one, &detail, &err);
  CHECK_STR(f, "bagz");
  free(err);
  return check_exit();
}
