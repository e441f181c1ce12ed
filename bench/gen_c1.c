/* gen_c1.c - deterministic generator for benchmark dataset C1 (bcolz).
 *
 * Usage: gen_c1 OUTDIR COUNT [NAME [EXPECTEDLEN]]
 * Writes the bcolz ctable OUTDIR/NAME (NAME defaults to "c1") of COUNT rows
 * the way upstream bcolz 1.x writes `bcolz.ctable([arrays], names,
 * rootdir=...)` with default parameters (docs/formats/bcolz.md): columns
 *   id int64 (= i), label int32 (i % 1000), score float64, flag bool,
 *   name |S16
 * each a carray directory under the root (`__rootdirs__` order), with
 * `meta/sizes`, `meta/storage` (cparams lz4, clevel 5, shuffle 1, quantize
 * 0; chunklen from upstream's calc_chunksize for expectedlen = COUNT, or
 * EXPECTEDLEN as upstream's `expectedlen=` argument gives it),
 * `__attrs__` `{}` and `data/__<k>.blp` = the 16-byte blpk header + one
 * Blosc chunk from blosc_compress_ctx(5, 1, typesize, ..., "lz4",
 * blocksize 0 (automatic), 1 thread), the leftover chunk stored short.
 *
 * Row values depend only on i: v = splitmix64 seeded from i; score =
 * (v >> 44) / 1024 (a multiple of 1/1024 in [0, 1024), so every sum of
 * scores is exact in double), flag = v & 1, name = "<word>-<i>" (a word of
 * the B1 vocabulary picked by v, cut to 16 bytes, NUL-padded). `score >
 * 1013.76` selects about 1% of the rows.
 *
 * The table is written to NAME.tmp and renamed, so an existing
 * NAME/__rootdirs__ means a whole dataset (a leftover NAME.tmp is the
 * caller's to remove). */
#include <blosc.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define GEN_NAME "gen_c1"
#include "gen_common.h"

#define SEED UINT64_C(0x5EEDC1C1C1C1C1C1)
#define NAME_BYTES 16


/* One column as upstream stores it. */
typedef struct column {
  const char *name;
  const char *dtype; /* meta/storage spelling */
  const char *dflt;  /* meta/storage "dflt" JSON */
  size_t atom;       /* bytes per row */
  size_t typesize;   /* Blosc typesize (1 for S) */
} column;

static const column COLS[] = {
    {"id", "int64", "0", 8, 8},          {"label", "int32", "0", 4, 4},
    {"score", "float64", "0.0", 8, 8},   {"flag", "bool", "false", 1, 1},
    {"name", "|S16", "\"\"", NAME_BYTES, 1},
};
#define NCOLS (sizeof COLS / sizeof COLS[0])

/* The random word of row i. */
static uint64_t row_random(uint64_t i) {
  uint64_t rng = SEED ^ (i * UINT64_C(0xD1B54A32D192ED03));
  return splitmix64(&rng);
}

/* Row i of column c, atom bytes little-endian, into out. */
static void make_cell(size_t c, uint64_t i, uint8_t *out) {
  uint64_t v = row_random(i), u;
  double d;
  char name[32];
  switch (c) {
    case 0: u = i; memcpy(out, &u, 8); break;
    case 1: { int32_t l = (int32_t)(i % 1000); memcpy(out, &l, 4); break; }
    case 2: d = (double)(v >> 44) / 1024.0; memcpy(out, &d, 8); break;
    case 3: out[0] = (uint8_t)(v & 1); break;
    default:
      snprintf(name, sizeof name, "%s-%llu", gen_word(v >> 8),
               (unsigned long long)i);
      memset(out, 0, NAME_BYTES);
      memcpy(out, name, strnlen(name, NAME_BYTES));
  }
}

/* utils.calc_chunksize: rows per chunk for `expectedlen` rows of `atom`
 * bytes (docs/formats/bcolz.md section 3). */
static uint64_t calc_chunklen(uint64_t expectedlen, size_t atom) {
  double mb = (double)expectedlen * (double)atom / 1048576.0;
  if (mb < 1e-4) mb = 1e-4;
  else if (mb > 1e4) mb = 1e4;
  int zone = (int)log10(mb); /* truncated toward zero, like Python int() */
  uint64_t bytes = 4096 * (uint64_t)pow(2.0, zone + 6);
  uint64_t cl = bytes / atom;
  return cl ? cl : 1;
}

/* Write `len` bytes of text to path. */
static int write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return die("open", path);
  size_t n = strlen(text);
  int rc = fwrite(text, 1, n, f) == n ? 0 : -1;
  if (fclose(f) != 0) rc = -1;
  return rc ? die("write", path) : 0;
}

/* data/__k.blp: the blpk header (version 1, nchunks 1) + the Blosc chunk. */
static int write_chunk(const char *dir, uint64_t k, const uint8_t *blosc,
                       size_t cbytes) {
  char path[4300];
  uint8_t hdr[16] = {'b', 'l', 'p', 'k', 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
  snprintf(path, sizeof path, "%s/data/__%llu.blp", dir, (unsigned long long)k);
  FILE *f = fopen(path, "wb");
  if (!f) return die("open", path);
  int rc = fwrite(hdr, 1, 16, f) == 16 && fwrite(blosc, 1, cbytes, f) == cbytes
               ? 0 : -1;
  if (fclose(f) != 0) rc = -1;
  return rc ? die("write", path) : 0;
}

/* One carray directory root/<name> of n rows, chunklen for expectedlen. */
static int write_column(const char *root, size_t c, uint64_t n,
                        uint64_t expectedlen) {
  const column *col = &COLS[c];
  char dir[4200], path[4300], text[512];
  uint64_t cl = calc_chunklen(expectedlen, col->atom);
  size_t cap = (size_t)cl * col->atom;
  uint8_t *raw = malloc(cap), *out = malloc(cap + BLOSC_MAX_OVERHEAD);
  uint64_t full = n / cl, chunks = full + (n % cl != 0), cfull = 0;
  int rc = raw && out ? 0 : -1;
  if (rc) fprintf(stderr, "gen_c1: out of memory\n");
  snprintf(dir, sizeof dir, "%s/%s", root, col->name);
  if (rc == 0 && mkdir(dir, 0777) != 0) rc = die("mkdir", dir);
  snprintf(path, sizeof path, "%s/meta", dir);
  if (rc == 0 && mkdir(path, 0777) != 0) rc = die("mkdir", path);
  snprintf(path, sizeof path, "%s/data", dir);
  if (rc == 0 && mkdir(path, 0777) != 0) rc = die("mkdir", path);
  for (uint64_t k = 0; rc == 0 && k < chunks; k++) {
    uint64_t first = k * cl, rows = k < full ? cl : n - first;
    for (uint64_t r = 0; r < rows; r++)
      make_cell(c, first + r, raw + r * col->atom);
    size_t nbytes = (size_t)rows * col->atom;
    int cb = blosc_compress_ctx(5, BLOSC_SHUFFLE, col->typesize, nbytes, raw,
                                out, nbytes + BLOSC_MAX_OVERHEAD, "lz4", 0, 1);
    if (cb <= 0) {
      fprintf(stderr, "gen_c1: blosc_compress_ctx failed (%d)\n", cb);
      rc = -1;
      break;
    }
    if (k < full) cfull += (uint64_t)cb;
    rc = write_chunk(dir, k, out, (size_t)cb);
  }
  /* upstream's cbytes counts the leftover buffer as a whole chunk */
  snprintf(text, sizeof text,
           "{\"shape\": [%llu], \"nbytes\": %llu, \"cbytes\": %llu}\n",
           (unsigned long long)n, (unsigned long long)(n * col->atom),
           (unsigned long long)(cfull + cap));
  snprintf(path, sizeof path, "%s/meta/sizes", dir);
  if (rc == 0) rc = write_text(path, text);
  snprintf(text, sizeof text,
           "{\"dtype\": \"%s\", \"cparams\": {\"clevel\": 5, \"shuffle\": 1, "
           "\"cname\": \"lz4\", \"quantize\": 0}, \"chunklen\": %llu, "
           "\"expectedlen\": %llu, \"dflt\": %s}\n",
           col->dtype, (unsigned long long)cl, (unsigned long long)expectedlen,
           col->dflt);
  snprintf(path, sizeof path, "%s/meta/storage", dir);
  if (rc == 0) rc = write_text(path, text);
  snprintf(path, sizeof path, "%s/__attrs__", dir);
  if (rc == 0) rc = write_text(path, "{}\n");
  if (rc == 0)
    printf("gen_c1:   %-5s %-7s chunklen %7llu, %llu chunk files\n", col->name,
           col->dtype, (unsigned long long)cl, (unsigned long long)chunks);
  free(raw);
  free(out);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 5) {
    fprintf(stderr, "usage: gen_c1 OUTDIR COUNT [NAME [EXPECTEDLEN]]\n");
    return 2;
  }
  const char *outdir = argv[1], *name = argc > 3 ? argv[3] : "c1";
  uint64_t n = strtoull(argv[2], NULL, 10);
  uint64_t expectedlen = argc > 4 ? strtoull(argv[4], NULL, 10) : n;
  char root[4000], tmp[4100], path[4200];
  if (snprintf(root, sizeof root, "%s/%s", outdir, name) >= (int)sizeof root) {
    fprintf(stderr, "gen_c1: path too long\n");
    return 2;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp", root);
  if (mkdir(tmp, 0777) != 0) {
    die("mkdir", tmp);
    return 1;
  }
  blosc_init();
  int rc = 0;
  snprintf(path, sizeof path, "%s/__rootdirs__", tmp);
  rc = write_text(path, "{\"names\": [\"id\", \"label\", \"score\", \"flag\", "
                        "\"name\"]}\n");
  snprintf(path, sizeof path, "%s/__attrs__", tmp);
  if (rc == 0) rc = write_text(path, "{}\n");
  for (size_t c = 0; rc == 0 && c < NCOLS; c++) rc = write_column(tmp, c, n, expectedlen);
  blosc_destroy();
  if (rc == 0 && rename(tmp, root) != 0) rc = die("rename", root);
  if (rc == 0)
    printf("gen_c1: wrote %llu rows to %s\n", (unsigned long long)n, root);
  return rc == 0 ? 0 : 1;
}
