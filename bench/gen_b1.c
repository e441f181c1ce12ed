/* gen_b1.c - deterministic generator for benchmark dataset B1 (bagz).
 *
 * Usage: gen_b1 OUTDIR COUNT [NAME]
 * Writes COUNT records as 4 shards NAME-0000S-of-00004.bagz in OUTDIR
 * (NAME defaults to "b1"), concatenated layout: shard s holds a contiguous
 * run of global indices. Record i is the JSON text
 *   {"id":i,"label":i%1000,"text":"<60-200 chars of words>"}
 * compressed alone as one zstd frame (level 3, content size in the header),
 * with the u64 little-endian end offsets appended at the tail (bagz TAIL
 * limits). The text depends only on i (a splitmix64 stream seeded from i),
 * so the output is the same on every run and machine. Each shard is written
 * to a temporary name and renamed when complete. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define NSHARDS 4
#define LEVEL 3
#define SEED UINT64_C(0x5EED0B1B1DA7A5E7)
#define RECORD_MAX 512

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
#define NVOCAB (sizeof VOCAB / sizeof VOCAB[0])

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* Words separated by spaces until at least `target` chars; the longest word
 * is 8 chars, so the result has target..target+8 chars. */
static size_t make_text(uint64_t *rng, size_t target, char *out) {
  size_t n = 0;
  while (n < target) {
    const char *w = VOCAB[splitmix64(rng) % NVOCAB];
    if (n > 0) out[n++] = ' ';
    size_t wl = strlen(w);
    memcpy(out + n, w, wl);
    n += wl;
  }
  return n;
}

/* Record i as JSON; returns its length (text is 60..198 chars). */
static size_t make_record(uint64_t i, char *out) {
  uint64_t rng = SEED ^ (i * UINT64_C(0xD1B54A32D192ED03));
  char text[256];
  size_t target = 60 + (size_t)(splitmix64(&rng) % 131);
  size_t tl = make_text(&rng, target, text);
  int n = snprintf(out, RECORD_MAX, "{\"id\":%llu,\"label\":%llu,\"text\":\"%.*s\"}",
                   (unsigned long long)i, (unsigned long long)(i % 1000),
                   (int)tl, text);
  return (size_t)n;
}

static void put_le64(uint8_t *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}

static int die(const char *what, const char *path) {
  fprintf(stderr, "gen_b1: %s: %s: %s\n", what, path, strerror(errno));
  return -1;
}

/* Compress records [first, first+n) into `f`, then append the limits. */
static int write_records(FILE *f, const char *path, ZSTD_CCtx *cctx,
                         uint64_t first, uint64_t n) {
  uint8_t *limits = malloc(n * 8 + 1);
  size_t cap = ZSTD_compressBound(RECORD_MAX);
  uint8_t *dst = malloc(cap);
  char rec[RECORD_MAX];
  uint64_t off = 0;
  int rc = 0;
  if (!limits || !dst) { fprintf(stderr, "gen_b1: out of memory\n"); rc = -1; }
  for (uint64_t k = 0; rc == 0 && k < n; k++) {
    size_t len = make_record(first + k, rec);
    size_t c = ZSTD_compressCCtx(cctx, dst, cap, rec, len, LEVEL);
    if (ZSTD_isError(c)) {
      fprintf(stderr, "gen_b1: zstd: %s\n", ZSTD_getErrorName(c));
      rc = -1;
    } else if (fwrite(dst, 1, c, f) != c) {
      rc = die("write", path);
    }
    off += c;
    put_le64(limits + 8 * k, off);
  }
  if (rc == 0 && fwrite(limits, 1, n * 8, f) != n * 8) rc = die("write", path);
  free(limits);
  free(dst);
  return rc;
}

/* Write one shard file atomically (temporary name, then rename). */
static int write_shard(const char *dir, const char *name, int s,
                       ZSTD_CCtx *cctx, uint64_t first, uint64_t n) {
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/%s-%05d-of-%05d.bagz", dir, name, s, NSHARDS);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  if (!f) return die("open", tmp);
  int rc = write_records(f, tmp, cctx, first, n);
  if (fclose(f) != 0 && rc == 0) rc = die("close", tmp);
  if (rc == 0 && rename(tmp, path) != 0) rc = die("rename", path);
  if (rc != 0) remove(tmp);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: gen_b1 OUTDIR COUNT [NAME]\n");
    return 2;
  }
  const char *dir = argv[1];
  uint64_t count = strtoull(argv[2], NULL, 10);
  const char *name = argc > 3 ? argv[3] : "b1";
  ZSTD_CCtx *cctx = ZSTD_createCCtx();
  if (!cctx) return 1;
  uint64_t first = 0;
  int rc = 0;
  for (int s = 0; rc == 0 && s < NSHARDS; s++) {
    uint64_t n = count / NSHARDS + ((uint64_t)s < count % NSHARDS);
    rc = write_shard(dir, name, s, cctx, first, n);
    first += n;
  }
  ZSTD_freeCCtx(cctx);
  if (rc == 0)
    printf("gen_b1: wrote %llu records to %s/%s@%d.bagz\n",
           (unsigned long long)count, dir, name, NSHARDS);
  return rc == 0 ? 0 : 1;
}
