/* gen_common.h - what the benchmark generators share (header-only; define
 * GEN_NAME, the program's name, before including it): the splitmix64
 * stream, the word vocabulary and text made of it, error reports, and for
 * the bag generators (gen_b1, gen_tb1) the argument parsing and the shard
 * files with tail limits. Every dataset depends on these bytes: a change
 * here changes what `make bench` generates. */
#ifndef GEN_COMMON_H
#define GEN_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The next value of a splitmix64 stream. */
static inline uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Word r % 64 of the vocabulary (at most 8 chars). */
static inline const char *gen_word(uint64_t r) {
  static const char *const VOCAB[] = {
      "alpha",   "bravo",  "charlie", "delta",   "echo",    "foxtrot", "golf",
      "hotel",   "india",  "juliet",  "kilo",    "lima",    "mike",    "november",
      "oscar",   "papa",   "quebec",  "romeo",   "sierra",  "tango",   "uniform",
      "victor",  "whiskey", "xray",   "yankee",  "zulu",    "data",    "set",
      "record",  "shard",  "query",   "table",   "index",   "sample",  "label",
      "train",   "test",   "model",   "vector",  "token",   "the",     "a",
      "of",      "and",    "to",      "in",      "is",      "it",      "on",
      "with",    "for",    "as",      "by",      "at",      "from",    "this",
      "that",    "be",     "or",      "an",      "are",     "was",     "not",
      "image"};
  return VOCAB[r % (sizeof VOCAB / sizeof VOCAB[0])];
}

/* Words separated by spaces until at least `target` chars; the longest word
 * is 8 chars, so the result has target..target+8 chars. */
static inline size_t make_text(uint64_t *rng, size_t target, char *out) {
  size_t n = 0;
  while (n < target) {
    const char *w = gen_word(splitmix64(rng));
    if (n > 0) out[n++] = ' ';
    size_t wl = strlen(w);
    memcpy(out + n, w, wl);
    n += wl;
  }
  return n;
}

/* "<GEN_NAME>: what: path: <errno text>" on stderr; returns -1. */
static inline int die(const char *what, const char *path) {
  fprintf(stderr, GEN_NAME ": %s: %s: %s\n", what, path, strerror(errno));
  return -1;
}

static inline void put_le64(uint8_t *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* ---- bags: NAME-0000S-of-00004.EXT, concatenated layout, tail limits ---- */

#define GEN_BAG_SHARDS 4

/* The stored bytes of record i into out (room for the generator's
 * maximum); 0 or -1 (reported). */
typedef int (*gen_record_fn)(void *ctx, uint64_t i, uint8_t *out, size_t *len);

/* "gen_x OUTDIR COUNT [NAME]": 0, or 2 after the usage line. */
static inline int gen_bag_args(int argc, char **argv, const char *dflt, const char **dir,
                               uint64_t *count, const char **name) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: " GEN_NAME " OUTDIR COUNT [NAME]\n");
    return 2;
  }
  *dir = argv[1];
  *count = strtoull(argv[2], NULL, 10);
  *name = argc > 3 ? argv[3] : dflt;
  return 0;
}

/* Records [first, first+n) into f (each at most max bytes), then the u64
 * little-endian end offsets. */
static inline int gen_bag_records(FILE *f, const char *path, uint64_t first, uint64_t n,
                                  size_t max, gen_record_fn record, void *ctx) {
  uint8_t *limits = malloc(n * 8 + 1), *rec = malloc(max);
  uint64_t off = 0;
  int rc = 0;
  if (!limits || !rec) { fprintf(stderr, GEN_NAME ": out of memory\n"); rc = -1; }
  for (uint64_t k = 0; rc == 0 && k < n; k++) {
    size_t len;
    if ((rc = record(ctx, first + k, rec, &len)) != 0) break;
    if (fwrite(rec, 1, len, f) != len) rc = die("write", path);
    off += len;
    put_le64(limits + 8 * k, off);
  }
  if (rc == 0 && fwrite(limits, 1, n * 8, f) != n * 8) rc = die("write", path);
  free(limits);
  free(rec);
  return rc;
}

/* Shard s of the bag, written to a temporary name and renamed when
 * complete. */
static inline int gen_bag_shard(const char *dir, const char *name, const char *ext, int s,
                                uint64_t first, uint64_t n, size_t max,
                                gen_record_fn record, void *ctx) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s-%05d-of-%05d.%s", dir, name, s, GEN_BAG_SHARDS, ext);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return die("open", tmp);
  int rc = gen_bag_records(f, tmp, first, n, max, record, ctx);
  if (fclose(f) != 0 && rc == 0) rc = die("close", tmp);
  if (rc == 0 && rename(tmp, path) != 0) rc = die("rename", path);
  if (rc != 0) remove(tmp);
  return rc;
}

/* The count records of the bag in GEN_BAG_SHARDS shards, shard s holding a
 * contiguous run of global indices. */
static inline int gen_bag(const char *dir, const char *name, const char *ext, uint64_t count,
                          size_t max, gen_record_fn record, void *ctx) {
  uint64_t first = 0;
  int rc = 0;
  for (int s = 0; rc == 0 && s < GEN_BAG_SHARDS; s++) {
    uint64_t n = count / GEN_BAG_SHARDS + ((uint64_t)s < count % GEN_BAG_SHARDS);
    rc = gen_bag_shard(dir, name, ext, s, first, n, max, record, ctx);
    first += n;
  }
  return rc;
}

#endif
