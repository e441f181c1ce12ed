/* gen_tb1.c - deterministic generator for benchmark dataset T-B1: a bag of
 * tf.train.Example records (bagz holding protocol buffers, issue 16).
 *
 * Usage: gen_tb1 OUTDIR COUNT [NAME]
 * Writes COUNT records as 4 uncompressed shards NAME-0000S-of-00004.bag in
 * OUTDIR (NAME defaults to "tb1"), concatenated layout, tail limits. Record
 * i is an Example with the features, in this order,
 *   label      int64 [i % 100]
 *   score      float [a value in [0, 1) from a splitmix64 stream seeded by i]
 *   embedding  float x 32 (packed)
 *   image      bytes [64 bytes from the same stream]
 * serialized by libprotobuf-c from proto/example.proto (the code protoc-c
 * generates into build/gen). Uncompressed, so the benchmark measures
 * decoding, not zstd. Each shard is written to a temporary name and renamed
 * when complete. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example.pb-c.h"

#define NSHARDS 4
#define SEED UINT64_C(0x7FE8A3B1C0DE5EED)
#define EMBED 32
#define IMAGE 64
#define RECORD_MAX 1024

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* A float in [0, 1) from the stream. */
static float unit_float(uint64_t *rng) {
  return (float)(splitmix64(rng) >> 40) / (float)(1 << 24);
}

/* Record i serialized into out (RECORD_MAX bytes); returns its length. */
static size_t make_record(uint64_t i, uint8_t *out) {
  uint64_t rng = SEED ^ (i * UINT64_C(0xD1B54A32D192ED03));
  int64_t label = (int64_t)(i % 100);
  float score = unit_float(&rng), embed[EMBED];
  uint8_t image[IMAGE];
  for (int k = 0; k < EMBED; k++) embed[k] = unit_float(&rng) * 2 - 1;
  for (int k = 0; k < IMAGE; k += 8) {
    uint64_t r = splitmix64(&rng);
    memcpy(image + k, &r, 8);
  }
  Tensorflow__Int64List il = TENSORFLOW__INT64_LIST__INIT;
  Tensorflow__FloatList sl = TENSORFLOW__FLOAT_LIST__INIT, el = TENSORFLOW__FLOAT_LIST__INIT;
  Tensorflow__BytesList bl = TENSORFLOW__BYTES_LIST__INIT;
  ProtobufCBinaryData img = {IMAGE, image};
  il.n_value = 1, il.value = &label;
  sl.n_value = 1, sl.value = &score;
  el.n_value = EMBED, el.value = embed;
  bl.n_value = 1, bl.value = &img;
  Tensorflow__Feature f[4] = {TENSORFLOW__FEATURE__INIT, TENSORFLOW__FEATURE__INIT,
                              TENSORFLOW__FEATURE__INIT, TENSORFLOW__FEATURE__INIT};
  f[0].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST, f[0].int64_list = &il;
  f[1].kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST, f[1].float_list = &sl;
  f[2].kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST, f[2].float_list = &el;
  f[3].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST, f[3].bytes_list = &bl;
  static const char *const names[4] = {"label", "score", "embedding", "image"};
  Tensorflow__Features__FeatureEntry e[4], *ep[4];
  for (int k = 0; k < 4; k++) {
    Tensorflow__Features__FeatureEntry init = TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
    e[k] = init;
    e[k].key.data = (uint8_t *)names[k];
    e[k].key.len = strlen(names[k]);
    e[k].value = &f[k];
    ep[k] = &e[k];
  }
  Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
  fs.n_feature = 4, fs.feature = ep;
  Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
  ex.features = &fs;
  return tensorflow__example__pack(&ex, out);
}

static void put_le64(uint8_t *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static int die(const char *what, const char *path) {
  fprintf(stderr, "gen_tb1: %s: %s: %s\n", what, path, strerror(errno));
  return -1;
}

/* Write records [first, first+n) into f, then the limits. */
static int write_records(FILE *f, const char *path, uint64_t first, uint64_t n) {
  uint8_t *limits = malloc(n * 8 + 1), rec[RECORD_MAX];
  uint64_t off = 0;
  int rc = limits ? 0 : -1;
  for (uint64_t k = 0; rc == 0 && k < n; k++) {
    size_t len = make_record(first + k, rec);
    if (fwrite(rec, 1, len, f) != len) rc = die("write", path);
    off += len;
    put_le64(limits + 8 * k, off);
  }
  if (rc == 0 && fwrite(limits, 1, n * 8, f) != n * 8) rc = die("write", path);
  free(limits);
  return rc;
}

/* Write one shard file atomically (temporary name, then rename). */
static int write_shard(const char *dir, const char *name, int s, uint64_t first,
                       uint64_t n) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s-%05d-of-%05d.bag", dir, name, s, NSHARDS);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return die("open", tmp);
  int rc = write_records(f, tmp, first, n);
  if (fclose(f) != 0 && rc == 0) rc = die("close", tmp);
  if (rc == 0 && rename(tmp, path) != 0) rc = die("rename", path);
  if (rc != 0) remove(tmp);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: gen_tb1 OUTDIR COUNT [NAME]\n");
    return 2;
  }
  const char *dir = argv[1];
  uint64_t count = strtoull(argv[2], NULL, 10);
  const char *name = argc > 3 ? argv[3] : "tb1";
  uint64_t first = 0;
  int rc = 0;
  for (int s = 0; rc == 0 && s < NSHARDS; s++) {
    uint64_t n = count / NSHARDS + ((uint64_t)s < count % NSHARDS);
    rc = write_shard(dir, name, s, first, n);
    first += n;
  }
  return rc == 0 ? 0 : 1;
}
