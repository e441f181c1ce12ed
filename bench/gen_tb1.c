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

#define GEN_NAME "gen_tb1"
#include "gen_common.h"

#define SEED UINT64_C(0x7FE8A3B1C0DE5EED)
#define EMBED 32
#define IMAGE 64
#define RECORD_MAX 1024

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

/* gen_record_fn: record i, stored as it is (uncompressed). */
static int record(void *ctx, uint64_t i, uint8_t *out, size_t *len) {
  (void)ctx;
  *len = make_record(i, out);
  return 0;
}

int main(int argc, char **argv) {
  const char *dir, *name;
  uint64_t count;
  if (gen_bag_args(argc, argv, "tb1", &dir, &count, &name)) return 2;
  return gen_bag(dir, name, "bag", count, RECORD_MAX, record, NULL) == 0 ? 0 : 1;
}
