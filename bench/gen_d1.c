/* gen_d1.c - deterministic generator for benchmark dataset D1 (datadings).
 *
 * Usage: gen_d1 OUTDIR COUNT [NAME]
 *        gen_d1 --keys-file FILE OUTDIR NAME
 *
 * The first form writes COUNT samples as OUTDIR/NAME.msgpack (NAME defaults
 * to "d1") plus the new-style index files, in the on-disk format of
 * docs/formats/datadings.md (sections 1-8), as datadings' FileWriter
 * would: `.offsets` (n+1 BE u64), `.keys` (one msgpack array of str),
 * `.key_hashes` (salt + salted BLAKE2s prefixes), `.filter` (simplebloom,
 * m = max(2, n), p = 1/m) and `.md5` (md5sum-style lines, written last).
 * Sample i is the msgpack map, in this order,
 *   {"key": "s%07d" % i, "label": i % 1000, "score": float64,
 *    "text": "<60-200 chars of words>", "emb": float32 ndarray [16]}
 * with `emb` in the msgpack-numpy form (section 3.1: 5-entry map with bin
 * keys nd/type/kind/shape/data). score is a multiple of 1/1024 in [0, 1024),
 * so sums of scores are exact in double whatever the summation order. All
 * values come from a splitmix64 stream seeded from i, so the bytes are the
 * same on every run and machine.
 *
 * The second form writes a dataset whose keys are the lines of FILE (sample
 * i = {"key": line i}); it exists to check the index writer against the
 * upstream fixtures (e.g. keys r0..r5 of fixture `raw` must give byte-
 * identical `.key_hashes` and `.filter`).
 *
 * Every file is written under a temporary name and renamed when complete;
 * the `.md5` file is renamed last, so its presence means a whole dataset. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <blake2.h>
#include <md5.h>
#include <msgpack.h>

#define GEN_NAME "gen_d1"
#include "gen_common.h"

#define SEED UINT64_C(0x5EED0D1D1DA7A5E7)
#define EMB_DIM 16
#define MAX_SALT_TRIES 1000

/* The index suffixes in the order the writer lists them in `.md5`. */
static const char *const SUFFIXES[] = {"", ".offsets", ".keys", ".key_hashes",
                                       ".filter"};
#define NSUFFIXES (sizeof SUFFIXES / sizeof SUFFIXES[0])

/* Keys of the dataset: either generated ("s%07d") or read from a file. */
typedef struct keyset {
  uint64_t n;
  char **list; /* NULL: generated keys */
} keyset;

/* Key i into buf (at least 32 bytes unless from a file); returns it. */
static const char *key_of(const keyset *ks, uint64_t i, char *buf) {
  if (ks->list) return ks->list[i];
  snprintf(buf, 32, "s%07llu", (unsigned long long)i);
  return buf;
}

static void put_be64(uint8_t *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (56 - 8 * k));
}

static uint64_t get_be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 0; k < 8; k++) v = v << 8 | p[k];
  return v;
}

/* ---- hashing (datadings.md sections 6 and 7.3) ---- */

/* BLAKE2s-256 of msg with the 8-byte salt in the parameter block (salt
 * NULL: no salt), no key, no personalisation. */
static void blake2s_salted(const void *msg, size_t len, const uint8_t *salt,
                           uint8_t out[32]) {
  blake2s_param p;
  blake2s_state st;
  memset(&p, 0, sizeof p);
  p.digest_length = 32;
  p.fanout = 1;
  p.depth = 1;
  if (salt) memcpy(p.salt, salt, 8);
  blake2s_init_param(&st, &p);
  blake2s_update(&st, msg, len);
  blake2s_final(&st, out, 32);
}

/* salt_for(c): first 8 bytes of the unsalted BLAKE2s of decimal c. */
static void salt_for(int c, uint8_t salt[8]) {
  char txt[16];
  uint8_t d[32];
  int n = snprintf(txt, sizeof txt, "%d", c);
  blake2s_salted(txt, (size_t)n, NULL, d);
  memcpy(salt, d, 8);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The salted hashes of all keys (as BE u64 values) with the writer's salt
 * search: the first salt_for(c) giving n distinct hashes. */
static int key_hashes(const keyset *ks, uint8_t salt[8], uint64_t *h) {
  uint64_t *sorted = malloc(sizeof *sorted * (ks->n + 1));
  char buf[32];
  if (!sorted) return -1;
  for (int c = 0; c < MAX_SALT_TRIES; c++) {
    salt_for(c, salt);
    for (uint64_t i = 0; i < ks->n; i++) {
      const char *k = key_of(ks, i, buf);
      uint8_t d[32];
      blake2s_salted(k, strlen(k), salt, d);
      h[i] = get_be64(d);
    }
    memcpy(sorted, h, sizeof *h * ks->n);
    qsort(sorted, ks->n, sizeof *sorted, cmp_u64);
    uint64_t i = 1;
    while (i < ks->n && sorted[i] != sorted[i - 1]) i++;
    if (i >= ks->n) {
      free(sorted);
      return 0;
    }
  }
  free(sorted);
  fprintf(stderr, "gen_d1: no salt gives distinct key hashes\n");
  return -1;
}

/* ---- output files ---- */

typedef struct outfile {
  char path[4096], tmp[4200];
  FILE *f;
} outfile;

static int out_open(outfile *o, const char *dir, const char *name,
                    const char *suffix) {
  snprintf(o->path, sizeof o->path, "%s/%s.msgpack%s", dir, name, suffix);
  snprintf(o->tmp, sizeof o->tmp, "%s.tmp", o->path);
  o->f = fopen(o->tmp, "wb");
  return o->f ? 0 : die("open", o->tmp);
}

static int out_write(outfile *o, const void *p, size_t n) {
  return n == 0 || fwrite(p, 1, n, o->f) == n ? 0 : die("write", o->tmp);
}

/* Close (rc == 0: keep under the temporary name; else remove). */
static int out_close(outfile *o, int rc) {
  if (o->f && fclose(o->f) != 0 && rc == 0) rc = die("close", o->tmp);
  o->f = NULL;
  if (rc != 0) remove(o->tmp);
  return rc;
}

static int out_commit(outfile *o) {
  return rename(o->tmp, o->path) == 0 ? 0 : die("rename", o->path);
}

/* ---- samples ---- */

static void pack_str(msgpack_packer *pk, const char *s, size_t n) {
  msgpack_pack_str(pk, n);
  msgpack_pack_str_body(pk, s, n);
}

static void pack_bin(msgpack_packer *pk, const char *s, size_t n) {
  msgpack_pack_bin(pk, n);
  msgpack_pack_bin_body(pk, s, n);
}

/* The msgpack-numpy form of a float32[EMB_DIM] array (little-endian). */
static void pack_emb(msgpack_packer *pk, uint64_t *rng) {
  uint8_t data[EMB_DIM * 4];
  for (int j = 0; j < EMB_DIM; j++) {
    /* a multiple of 2^-23 in [-1, 1): exact in float32 */
    float f = (float)((double)(splitmix64(rng) >> 40) / 8388608.0 - 1.0);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    for (int b = 0; b < 4; b++) data[4 * j + b] = (uint8_t)(bits >> (8 * b));
  }
  msgpack_pack_map(pk, 5);
  pack_bin(pk, "nd", 2);
  msgpack_pack_true(pk);
  pack_bin(pk, "type", 4);
  pack_str(pk, "<f4", 3);
  pack_bin(pk, "kind", 4);
  pack_bin(pk, "", 0);
  pack_bin(pk, "shape", 5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_int(pk, EMB_DIM);
  pack_bin(pk, "data", 4);
  pack_bin(pk, (const char *)data, sizeof data);
}

/* Sample i into pk: the D1 map, or just {"key": k} for a key file. */
static void pack_sample(msgpack_packer *pk, const keyset *ks, uint64_t i) {
  char kbuf[32];
  const char *key = key_of(ks, i, kbuf);
  if (ks->list) {
    msgpack_pack_map(pk, 1);
    pack_str(pk, "key", 3);
    pack_str(pk, key, strlen(key));
    return;
  }
  uint64_t rng = SEED ^ (i * UINT64_C(0xD1B54A32D192ED03));
  char text[256];
  size_t target = 60 + (size_t)(splitmix64(&rng) % 131);
  size_t tl = make_text(&rng, target, text);
  double score = (double)(splitmix64(&rng) >> 44) / 1024.0;
  msgpack_pack_map(pk, 5);
  pack_str(pk, "key", 3);
  pack_str(pk, key, strlen(key));
  pack_str(pk, "label", 5);
  msgpack_pack_uint64(pk, i % 1000);
  pack_str(pk, "score", 5);
  msgpack_pack_double(pk, score);
  pack_str(pk, "text", 4);
  pack_str(pk, text, tl);
  pack_str(pk, "emb", 3);
  pack_emb(pk, &rng);
}

/* X.msgpack and X.msgpack.offsets. */
static int write_data(const char *dir, const char *name, const keyset *ks) {
  outfile data = {0}, offs = {0};
  msgpack_sbuffer sb;
  msgpack_packer pk;
  uint8_t be[8];
  uint64_t off = 0;
  int rc = out_open(&data, dir, name, SUFFIXES[0]);
  if (rc == 0) rc = out_open(&offs, dir, name, ".offsets");
  msgpack_sbuffer_init(&sb);
  msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
  for (uint64_t i = 0; rc == 0 && i <= ks->n; i++) {
    put_be64(be, off);
    rc = out_write(&offs, be, 8);
    if (rc != 0 || i == ks->n) break;
    msgpack_sbuffer_clear(&sb);
    pack_sample(&pk, ks, i);
    rc = out_write(&data, sb.data, sb.size);
    off += sb.size;
  }
  msgpack_sbuffer_destroy(&sb);
  rc = out_close(&data, rc);
  rc = out_close(&offs, rc);
  return rc;
}

/* X.msgpack.keys: one msgpack array of str. */
static int write_keys(const char *dir, const char *name, const keyset *ks) {
  outfile o = {0};
  msgpack_sbuffer sb;
  msgpack_packer pk;
  char buf[32];
  int rc = out_open(&o, dir, name, ".keys");
  msgpack_sbuffer_init(&sb);
  msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
  msgpack_pack_array(&pk, (size_t)ks->n);
  for (uint64_t i = 0; rc == 0 && i < ks->n; i++) {
    const char *k = key_of(ks, i, buf);
    pack_str(&pk, k, strlen(k));
  }
  if (rc == 0) rc = out_write(&o, sb.data, sb.size);
  msgpack_sbuffer_destroy(&sb);
  return out_close(&o, rc);
}

/* X.msgpack.key_hashes: salt, then the n salted 8-byte prefixes. */
static int write_key_hashes(const char *dir, const char *name,
                            const keyset *ks) {
  outfile o = {0};
  uint8_t salt[8], be[8];
  uint64_t *h = malloc(sizeof *h * (ks->n + 1));
  int rc = h ? key_hashes(ks, salt, h) : -1;
  if (rc == 0) rc = out_open(&o, dir, name, ".key_hashes");
  if (rc == 0) rc = out_write(&o, salt, 8);
  for (uint64_t i = 0; rc == 0 && i < ks->n; i++) {
    put_be64(be, h[i]);
    rc = out_write(&o, be, 8);
  }
  free(h);
  return o.f ? out_close(&o, rc) : rc;
}

/* X.msgpack.filter: simplebloom with m = max(2, n), p = 1/m (section 7). */
static int write_filter(const char *dir, const char *name, const keyset *ks) {
  double m = ks->n > 2 ? (double)ks->n : 2.0;
  double p = 1.0 / m;
  double bits_d = ceil((m * log(p) / -0.4804530139182015) / 8) * 8;
  uint64_t num_bits = (uint64_t)bits_d;
  uint64_t num_hashes = (uint64_t)nearbyint((bits_d / m) * 0.6931471805599453);
  uint64_t bytes = num_bits / 8;
  uint8_t *f = calloc(32 + bytes, 1);
  if (!f) return -1;
  memcpy(f, "SIMPBLOO", 8);
  put_be64(f + 8, 32 + bytes);
  put_be64(f + 16, (uint64_t)m);
  uint64_t pbits;
  memcpy(&pbits, &p, 8);
  put_be64(f + 24, pbits);
  uint8_t *arr = f + 32;
  char buf[32];
  for (uint64_t i = 0; i < ks->n; i++) {
    const char *k = key_of(ks, i, buf);
    uint8_t d[32];
    blake2s_salted(k, strlen(k), NULL, d);
    uint64_t h1 = get_be64(d), h2 = get_be64(d + 8);
    for (uint64_t j = 0; j < num_hashes; j++) {
      uint64_t pos = (h1 + j * h2) % num_bits;
      arr[pos >> 3] |= (uint8_t)(1u << (pos & 7));
    }
  }
  outfile o = {0};
  int rc = out_open(&o, dir, name, ".filter");
  if (rc == 0) rc = out_write(&o, f, 32 + bytes);
  free(f);
  return o.f ? out_close(&o, rc) : rc;
}

/* X.msgpack.md5 over the renamed files, in the writer's order. */
static int write_md5(const char *dir, const char *name) {
  outfile o = {0};
  int rc = out_open(&o, dir, name, ".md5");
  for (size_t s = 0; rc == 0 && s < NSUFFIXES; s++) {
    char path[4200], hex[MD5_DIGEST_STRING_LENGTH];
    snprintf(path, sizeof path, "%s/%s.msgpack%s", dir, name, SUFFIXES[s]);
    if (!MD5File(path, hex)) {
      rc = die("md5", path);
      break;
    }
    if (fprintf(o.f, "%s  %s.msgpack%s\n", hex, name, SUFFIXES[s]) < 0)
      rc = die("write", o.tmp);
  }
  if (o.f) rc = out_close(&o, rc);
  return rc == 0 ? out_commit(&o) : rc;
}

static int commit_all(const char *dir, const char *name) {
  for (size_t s = 0; s < NSUFFIXES; s++) {
    outfile o;
    snprintf(o.path, sizeof o.path, "%s/%s.msgpack%s", dir, name, SUFFIXES[s]);
    snprintf(o.tmp, sizeof o.tmp, "%s.tmp", o.path);
    if (out_commit(&o) != 0) return -1;
  }
  return 0;
}

static int generate(const char *dir, const char *name, const keyset *ks) {
  char md5[4200];
  snprintf(md5, sizeof md5, "%s/%s.msgpack.md5", dir, name);
  remove(md5); /* a partial rewrite must not look complete */
  if (write_data(dir, name, ks) != 0 || write_keys(dir, name, ks) != 0 ||
      write_key_hashes(dir, name, ks) != 0 || write_filter(dir, name, ks) != 0 ||
      commit_all(dir, name) != 0 || write_md5(dir, name) != 0)
    return 1;
  printf("gen_d1: wrote %s/%s.msgpack (%llu samples)\n", dir, name,
         (unsigned long long)ks->n);
  return 0;
}

/* Keys from FILE, one per line (the newline is not part of the key). */
static int read_keys(const char *path, keyset *ks) {
  FILE *f = fopen(path, "r");
  if (!f) return die("open", path);
  char *line = NULL;
  size_t cap = 0, alloc = 0;
  ssize_t len;
  while ((len = getline(&line, &cap, f)) >= 0) {
    if (len > 0 && line[len - 1] == '\n') line[--len] = '\0';
    if (ks->n == alloc) {
      alloc = alloc ? 2 * alloc : 64;
      char **nl = realloc(ks->list, sizeof *nl * alloc);
      if (!nl) break;
      ks->list = nl;
    }
    if (!(ks->list[ks->n] = strdup(line))) break;
    ks->n++;
  }
  int rc = ferror(f) || !feof(f) ? -1 : 0;
  free(line);
  fclose(f);
  if (!ks->list) ks->list = calloc(1, sizeof *ks->list);
  if (rc != 0 || !ks->list) fprintf(stderr, "gen_d1: cannot read %s\n", path);
  return rc != 0 || !ks->list ? -1 : 0;
}

int main(int argc, char **argv) {
  keyset ks = {0};
  int rc;
  if (argc == 5 && strcmp(argv[1], "--keys-file") == 0) {
    if (read_keys(argv[2], &ks) != 0) return 1;
    rc = generate(argv[3], argv[4], &ks);
    for (uint64_t i = 0; i < ks.n; i++) free(ks.list[i]);
    free(ks.list);
    return rc;
  }
  if (argc < 3 || argc > 4 || argv[1][0] == '-') {
    fprintf(stderr, "usage: gen_d1 OUTDIR COUNT [NAME]\n"
                    "       gen_d1 --keys-file FILE OUTDIR NAME\n");
    return 2;
  }
  char *end;
  ks.n = strtoull(argv[2], &end, 10);
  if (*end || ks.n > 9999999) {
    fprintf(stderr, "gen_d1: COUNT must be 0..9999999\n");
    return 2;
  }
  return generate(argv[1], argc == 4 ? argv[3] : "d1", &ks);
}
