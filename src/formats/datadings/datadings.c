/* datadings.c - the datadings reader (see datadings.h; format notes in
 * docs/formats/datadings.md). Files are never mapped: the data file,
 * .offsets, .keys and .key_hashes are read with pread through windows
 * (ds_view: the caller's for samples, the shard's own for keys), the
 * legacy .index is loaded whole and the Bloom filter's bits on first use,
 * so a file that shrinks is an error, not a fault. Every
 * stored number is checked before it is used: counts against file sizes at
 * open, offsets lazily when a sample is read, msgpack headers of keys when
 * the key position table is built. Key lookups go Bloom filter (before the
 * table exists; after, only for a key the table finds) -> a table placed by the salted key hashes (or by
 * hashes of the keys), whose slots carry a fingerprint -> byte comparison
 * of the candidate's key (held in memory when short keys fit the budget),
 * so neither a filter false positive nor a hash collision ever returns a
 * wrong sample. */
#include "datadings.h"

#include <blake2.h>
#include <errno.h>
#include <math.h>
#include <md5.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <time.h>

#include "core/big_alloc.h"
#include "core/cancel.h"
#include "core/common.h"
#include "core/decimal.h"
#include "core/hash_index.h"
#include "core/mapped_file.h"
#include "core/open_stable.h"
#include "core/prefetch_rows.h"
#include "core/shard_spec.h"
#include "core/utf8.h"
#include "core/vfs.h"
#include "formats/datadings/key_hash_state.h"
#include "formats/datadings/simplebloom.h"

#define DD_MAX_N UINT32_MAX  /* samples a shard may hold: fewer than this */
#define DD_MAX_PROBE 256     /* longer probe runs mean a hostile file */
#define DD_MAX_HASHES 4096   /* Bloom hash count sanity limit */
#define DD_AHEAD 16          /* table build: prefetch distance */
#define DD_BLOCK 16384       /* table build: entries hashed per block */
#define DD_KEY_STRIDE 16     /* held keys: one position kept per 16 keys */
#define DD_KEY_BUDGET 24     /* bytes a sample the held keys, their positions
                                and the lookup table of a shard may take */

typedef enum dd_keysrc { DD_KEYS_NONE, DD_KEYS_FILE, DD_KEYS_INDEX } dd_keysrc;

/* One .msgpack file with its siblings. Optional files have path == NULL
 * when absent. */
typedef struct dd_shard {
  ds_file data, offsets, keys, hashes, filter, index; /* index: loaded */
  ds_file kheld;       /* .keys held in memory (keys_held): reads from kmem */
  uint8_t *kmem;       /* its bytes (ds_big_alloc of keys.size) */
  ds_view kview;       /* window on .keys (or the index) for key reads */
  uint8_t salt[8];     /* .key_hashes bytes 0..8 */
  uint8_t *bloom;      /* the filter's bits, loaded on first use, or NULL */
  uint8_t *offsets_mem; /* .offsets in memory once lookups jump around
                           (DS_VIEW_JUMPS_TO_LOAD), or NULL */
  uint64_t offsets_jumps; /* jumps of every cursor's .offsets window (each
                             lookup query has a new cursor) */
  uint64_t bloom_capacity; /* filter header: capacity and rate bits */
  uint64_t bloom_pbits;
  uint64_t n;          /* samples */
  dd_keysrc keysrc;    /* where keys come from */
  uint64_t keys_hdr;   /* bytes of the .keys array header */
  uint64_t *keypos;    /* offset of the str header of key j * kstride */
  uint64_t keypos_n;   /* keys walked (headers checked) so far */
  uint64_t keypos_cap; /* entries keypos has room for */
  uint64_t kwalk_off;  /* where the walk goes on: just after key keypos_n-1 */
  uint64_t kwalk_last; /* offset of key keypos_n-1 */
  uint64_t kstride;    /* 1, or DD_KEY_STRIDE once .keys is held in memory */
  uint64_t klast_i;    /* the last key located and its offset, so that */
  uint64_t klast_off;  /* keys read in order step on (UINT64_MAX: none) */
  int keys_held;       /* .keys read whole into memory (s->keys reads it) */
  int keypos_borrowed; /* keypos == idxpos (keys from the legacy index) */
  uint64_t *idxpos;    /* legacy .index: each entry's key position */
  uint64_t *idx_off;   /* n+1 offsets from the legacy .index, or NULL */
  uint64_t bloom_bits; /* filter: bit count and hash count */
  uint32_t bloom_k;
  uint32_t *table;     /* lookup table: slots of fingerprint << ibits |
                          (sample index + 1), or 0 when free; NULL until
                          built (ds_big_alloc of 4 * (table_mask + 1)) */
  uint64_t table_mask; /* slots - 1 */
  unsigned ibits;      /* bits of a slot for the sample index (2^ibits > n) */
  int table_hashed;    /* 1: slots placed by stored key hashes */
} dd_shard;

struct datadings_reader {
  dd_shard *shards;
  size_t nshards;
  ds_shard_map map;
  uint64_t seed; /* random: table placement cannot be predicted by a file */
};

/* ------------------------------------------------------------------ */
/* Small helpers                                                        */

/* Big-endian unsigned load of k (<= 8) bytes. */
static uint64_t be_n(const uint8_t *p, int k) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (k == 8) { /* offsets and hashes: one load, not a byte loop */
    uint64_t w;
    memcpy(&w, p, 8);
    return __builtin_bswap64(w);
  }
#endif
  uint64_t v = 0;
  for (int i = 0; i < k; i++) v = v << 8 | p[i];
  return v;
}

/* 1 when `path` contains a glob metacharacter. */
static int is_glob(const char *path) { return strpbrk(path, "*?[") != NULL; }

/* strcmp for qsort over char* elements (byte order = Python's str order
 * for UTF-8 names). */
static int cmp_path(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Expand `path` to the list of data files: a glob (sorted by name, at
 * least one match) or the path itself. */
int datadings_expand_paths(const char *path, ds_shard_list *out, char **err) {
  memset(out, 0, sizeof *out);
  if (!is_glob(path) || ds_vfs_exists(path)) { /* an existing file wins */
    out->paths = malloc(sizeof *out->paths);
    if (!out->paths || !(out->paths[0] = strdup(path))) {
      free(out->paths);
      out->paths = NULL;
      return ds_err(err, "out of memory");
    }
    out->n = 1;
    return 0;
  }
  ds_vfs_names g;
  int rc = ds_vfs_glob(path, DS_VFS_GLOB_NOSORT, &g);
  if (rc == DS_VFS_NOMATCH) return ds_err(err, "%s: no files match this pattern", path);
  if (rc != 0 && errno == ENOMEM) return ds_err(err, "out of memory");
  if (rc != 0 && errno == ENOTSUP && ds_vfs_detail())
    return ds_err(err, "%s: cannot expand the pattern: %s", path, ds_vfs_detail());
  if (rc != 0) return ds_err(err, "%s: cannot expand the pattern", path);
  out->paths = g.v; /* the list takes the names */
  out->n = g.n;
  qsort(out->paths, out->n, sizeof *out->paths, cmp_path);
  return 0;
}

/* Open `base``suffix` if it exists (load it whole when `load`); a missing
 * file leaves f zeroed. */
static int open_optional(ds_file *f, const char *base, const char *suffix,
                         int load, char **err) {
  memset(f, 0, sizeof *f);
  char *p = ds_strf("%s%s", base, suffix);
  if (!p) return ds_err(err, "out of memory");
  ds_vfs_info st;
  int rc = 0;
  if (ds_vfs_stat(p, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) rc = 0;
  else rc = load ? ds_file_load_index(f, p, err) : ds_file_open(f, p, err);
  if (rc == 0 && !load) ds_file_hint_index(f); /* a remote index: cached whole */
  free(p);
  return rc;
}

/* A bounds-checked pointer to `len` bytes at `off` of a loaded file (the
 * file was sized at open, so failures here mean a hostile number slipped
 * through). */
static int bytes_at(const ds_file *f, uint64_t off, uint64_t len,
                    const uint8_t **p, char **err) {
  return ds_file_slice(f, off, len, p, err);
}

/* ------------------------------------------------------------------ */
/* msgpack headers                                                      */

/* Parse a container header at byte 0 of f: array (want_map 0) or map.
 * *count = entries, *hdr = header bytes. */
static int container_header(const ds_file *f, int want_map, uint64_t *count,
                            uint64_t *hdr, char **err) {
  const char *what = want_map ? "map" : "array";
  if (f->size == 0)
    return ds_err(err, "%s: empty file, expected a msgpack %s header at byte 0",
                  f->path, what);
  uint8_t head[5];
  if (ds_file_read(f, 0, f->size < 5 ? f->size : 5, head, err)) return -1;
  uint8_t b = head[0];
  uint8_t fix = want_map ? 0x80 : 0x90, c16 = want_map ? 0xde : 0xdc;
  int k = 0;
  if ((b & 0xf0) == fix) {
    *count = b & 0x0f;
    *hdr = 1;
    return 0;
  }
  if (b == c16) k = 2;
  else if (b == c16 + 1) k = 4;
  else
    return ds_err(err, "%s: expected a msgpack %s header at byte 0, found 0x%02x",
                  f->path, what, b);
  if ((uint64_t)k >= f->size)
    return ds_err(err, "%s: %d bytes at offset 1 run past the end of the file "
                       "(%llu bytes)", f->path, k, (unsigned long long)f->size);
  *count = be_n(head + 1, k);
  *hdr = 1 + (uint64_t)k;
  return 0;
}

/* Parse the str header at `off` (read through v): *hdr header bytes, *len
 * payload bytes, checked to lie inside the file; *p (when not NULL) = the
 * payload, valid until the next read through v. `idx` is the key number
 * for errors. */
static int str_at(ds_view *v, const ds_file *f, uint64_t off, uint64_t idx,
                  uint64_t *hdr, uint64_t *len, const uint8_t **p, char **err) {
  if (off >= f->size)
    return ds_err(err, "%s: key %llu: expected a msgpack str at byte %llu, "
                       "but the file ends there",
                  f->path, (unsigned long long)idx, (unsigned long long)off);
  /* one read for the header and, usually, the key after it */
  uint64_t first = f->size - off < 64 ? f->size - off : 64;
  const uint8_t *h;
  if (ds_view_read(v, f, off, first, &h, err)) return -1;
  uint8_t b = h[0];
  int k;
  if ((b & 0xe0) == 0xa0) k = 0;
  else if (b == 0xd9) k = 1;
  else if (b == 0xda) k = 2;
  else if (b == 0xdb) k = 4;
  else
    return ds_err(err, "%s: key %llu at byte %llu: expected a msgpack str, "
                       "found 0x%02x",
                  f->path, (unsigned long long)idx, (unsigned long long)off, b);
  if (1 + (uint64_t)k > first)
    return ds_err(err, "%s: key %llu at byte %llu: str header runs past the end "
                       "of the file (%llu bytes)",
                  f->path, (unsigned long long)idx, (unsigned long long)off,
                  (unsigned long long)f->size);
  *hdr = 1 + (uint64_t)k;
  *len = k ? be_n(h + 1, k) : (uint64_t)(b & 0x1f);
  if (*len > f->size - off - *hdr)
    return ds_err(err, "%s: key %llu at byte %llu: str of %llu bytes runs past "
                       "the end of the file (%llu bytes)",
                  f->path, (unsigned long long)idx, (unsigned long long)off,
                  (unsigned long long)*len, (unsigned long long)f->size);
  if (!p) return 0;
  if (*hdr + *len <= first) {
    *p = h + *hdr;
    return 0;
  }
  return ds_view_read(v, f, off + *hdr, *len, p, err);
}

/* Parse the unsigned integer at `off` of the legacy index (entry idx). */
static int uint_at(const ds_file *f, uint64_t off, uint64_t idx, uint64_t *v,
                   uint64_t *used, char **err) {
  if (off >= f->size)
    return ds_err(err, "%s: entry %llu: expected an offset at byte %llu, but "
                       "the file ends there",
                  f->path, (unsigned long long)idx, (unsigned long long)off);
  uint8_t b = f->data[off];
  int k;
  if (b < 0x80) k = 0;
  else if (b >= 0xcc && b <= 0xcf) k = 1 << (b - 0xcc);
  else
    return ds_err(err, "%s: entry %llu at byte %llu: expected an unsigned "
                       "msgpack int (the sample offset), found 0x%02x",
                  f->path, (unsigned long long)idx, (unsigned long long)off, b);
  const uint8_t *p;
  if (bytes_at(f, off + 1, (uint64_t)k, &p, err)) return -1;
  *v = k ? be_n(p, k) : b;
  *used = 1 + (uint64_t)k;
  return 0;
}

/* ------------------------------------------------------------------ */
/* Hashes                                                               */

void datadings_key_hash_init(const uint8_t salt[8], blake2s_state *init) {
  blake2s_param P;
  memset(&P, 0, sizeof P);
  P.digest_length = BLAKE2S_OUTBYTES;
  P.fanout = 1;
  P.depth = 1;
  memcpy(P.salt, salt, BLAKE2S_SALTBYTES);
  blake2s_init_param(init, &P);
}

void datadings_key_hash_from(const blake2s_state *init, const uint8_t *key,
                             size_t n, uint8_t out[8]) {
  blake2s_state S = *init;
  uint8_t d[BLAKE2S_OUTBYTES];
  blake2s_update(&S, key ? key : (const uint8_t *)"", n);
  blake2s_final(&S, d, sizeof d);
  memcpy(out, d, 8);
}

void datadings_key_hash(const uint8_t salt[8], const uint8_t *key, size_t n,
                        uint8_t out[8]) {
  blake2s_state S;
  datadings_key_hash_init(salt, &S);
  datadings_key_hash_from(&S, key, n, out);
}

/* Unsalted 32-byte BLAKE2s (the Bloom filter's hash). */
static void blake2s_plain(const uint8_t *key, size_t n, uint8_t out[32]) {
  blake2s(out, key ? key : (const uint8_t *)"", NULL, BLAKE2S_OUTBYTES, n, 0);
}

void datadings_salt_for(uint64_t c, uint8_t out[8]) {
  uint8_t text[24];
  size_t len = sizeof text;
  do text[--len] = (uint8_t)('0' + c % 10); while ((c /= 10) != 0);
  uint8_t d[32];
  blake2s_plain(text + len, sizeof text - len, d);
  memcpy(out, d, 8);
}

/* Table slot of a 64-bit hash: keyed multiply-mix, so neither crafted
 * stored hashes nor crafted keys can aim at one slot. */
static inline uint64_t place(uint64_t h, uint64_t seed) {
  __uint128_t r = (__uint128_t)(h ^ seed) * 0x9e3779b97f4a7c15ull;
  return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* A per-reader random seed (getrandom, or time and address as fallback). */
static uint64_t random_seed(const void *salt) {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s) return s;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
         (uint64_t)(uintptr_t)salt;
}

/* ------------------------------------------------------------------ */
/* Opening one shard                                                    */

/* Check the simplebloom header and recompute its parameters (7.1, 7.2). */
static int check_filter(dd_shard *s, char **err) {
  const ds_file *f = &s->filter;
  if (f->size < 32)
    return ds_err(err, "%s: %llu bytes, too short for the 32-byte simplebloom "
                       "header",
                  f->path, (unsigned long long)f->size);
  uint8_t head[32];
  if (ds_file_read(f, 0, 32, head, err)) return -1;
  if (memcmp(head, "SIMPBLOO", 8) != 0)
    return ds_err(err, "%s: bad magic at byte 0 (expected \"SIMPBLOO\")", f->path);
  uint64_t total = be_n(head + 8, 8), m = be_n(head + 16, 8);
  uint64_t pbits = be_n(head + 24, 8);
  s->bloom_capacity = m;
  s->bloom_pbits = pbits;
  double p;
  memcpy(&p, &pbits, sizeof p);
  if (total != f->size)
    return ds_err(err, "%s: header at byte 8 says the filter has %llu bytes, "
                       "but the file has %llu",
                  f->path, (unsigned long long)total, (unsigned long long)f->size);
  char rate[40]; /* numbers in messages: '.' whatever the host's locale */
  ds_format_double(rate, sizeof rate, 'g', 17, p);
  if (m == 0 || !(p > 0.0 && p < 1.0))
    return ds_err(err, "%s: corrupt filter: capacity %llu (byte 16) and false "
                       "positive rate %s (byte 24) are not usable",
                  f->path, (unsigned long long)m, rate);
  double nbytes = (double)simplebloom_bytes(m, p);
  if (nbytes != (double)(f->size - 32)) {
    char want[40];
    ds_format_double(want, sizeof want, 'g', 20, nbytes);
    return ds_err(err, "%s: corrupt filter: capacity %llu and rate %s give "
                       "%s bytes of bits, but the file holds %llu after the "
                       "header",
                  f->path, (unsigned long long)m, rate, want,
                  (unsigned long long)(f->size - 32));
  }
  if (f->size == 32)
    return ds_err(err, "%s: corrupt filter: no bits after the header", f->path);
  s->bloom_bits = 8 * (f->size - 32);
  double k = simplebloom_hash_count(s->bloom_bits, m);
  if (!(k >= 0.0 && k <= DD_MAX_HASHES)) {
    ds_format_double(rate, sizeof rate, 'g', 20, k);
    return ds_err(err, "%s: corrupt filter: %s hash functions", f->path, rate);
  }
  s->bloom_k = (uint32_t)k;
  return 0;
}

/* Parse the legacy .index map: key positions and offsets (section 9). */
static int parse_index(dd_shard *s, uint64_t count, uint64_t hdr, char **err) {
  const ds_file *f = &s->index;
  if (count > (f->size - hdr) / 2)
    return ds_err(err, "%s: map header at byte 0 says %llu entries, more than "
                       "the %llu bytes after it can hold",
                  f->path, (unsigned long long)count,
                  (unsigned long long)(f->size - hdr));
  s->idxpos = malloc((count ? count : 1) * sizeof *s->idxpos);
  s->idx_off = malloc((count + 1) * sizeof *s->idx_off);
  if (!s->idxpos || !s->idx_off) return ds_err(err, "%s: out of memory", f->path);
  uint64_t pos = hdr, h = 0, len = 0, used = 0;
  for (uint64_t i = 0; i < count; i++) {
    if (str_at(&s->kview, f, pos, i, &h, &len, NULL, err)) return -1;
    if ((i & 1023) == 0 && ds_cancel_check()) return ds_err(err, DS_CANCEL_MSG);
    s->idxpos[i] = pos;
    pos += h + len;
    if (uint_at(f, pos, i, &s->idx_off[i], &used, err)) return -1;
    pos += used;
  }
  if (pos != f->size)
    return ds_err(err, "%s: %llu unexpected bytes after the last entry at byte %llu",
                  f->path, (unsigned long long)(f->size - pos),
                  (unsigned long long)pos);
  s->idx_off[count] = s->data.size;
  if (s->keysrc == DD_KEYS_INDEX) {
    s->keypos = s->idxpos;
    s->keypos_n = s->n;
    s->keypos_borrowed = 1;
  }
  return 0;
}

/* Work out n and the key source from .keys / .index / .offsets. */
static int shard_count(dd_shard *s, uint64_t *idx_count, uint64_t *idx_hdr,
                       char **err) {
  if (s->index.path && container_header(&s->index, 1, idx_count, idx_hdr, err))
    return -1;
  if (s->keys.path) {
    if (container_header(&s->keys, 0, &s->n, &s->keys_hdr, err)) return -1;
    if (s->n > s->keys.size - s->keys_hdr)
      return ds_err(err, "%s: array header at byte 0 says %llu keys, more than "
                         "the %llu bytes after it can hold",
                    s->keys.path, (unsigned long long)s->n,
                    (unsigned long long)(s->keys.size - s->keys_hdr));
    s->keysrc = DD_KEYS_FILE;
  } else if (s->index.path) {
    s->n = *idx_count;
    s->keysrc = DD_KEYS_INDEX;
  } else {
    if (s->offsets.size < 8 || s->offsets.size % 8 != 0)
      return ds_err(err, "%s: %llu bytes, not a whole number (>= 1) of 8-byte "
                         "offsets",
                    s->offsets.path, (unsigned long long)s->offsets.size);
    s->n = s->offsets.size / 8 - 1;
  }
  if (s->n >= DD_MAX_N)
    return ds_err(err, "%s: %llu samples, more than this reader supports",
                  s->data.path, (unsigned long long)s->n);
  return 0;
}

/* Check .offsets against n and the data file size (section 4). */
static int check_offsets(dd_shard *s, char **err) {
  const ds_file *f = &s->offsets;
  uint64_t want = 8 * (s->n + 1);
  if (f->size != want)
    return ds_err(err, "%s: %llu bytes, expected %llu (8 * (n + 1) for the "
                       "n = %llu samples counted in %s)",
                  f->path, (unsigned long long)f->size, (unsigned long long)want,
                  (unsigned long long)s->n,
                  s->keys.path ? s->keys.path
                               : s->index.path ? s->index.path : f->path);
  uint8_t b0[8], bn[8];
  if (ds_file_read(f, 0, 8, b0, err) || ds_file_read(f, 8 * s->n, 8, bn, err))
    return -1;
  uint64_t first = be_n(b0, 8), last = be_n(bn, 8);
  if (first != 0)
    return ds_err(err, "%s: the first offset (byte 0) is %llu, not 0", f->path,
                  (unsigned long long)first);
  if (last < s->data.size)
    return ds_err(err, "%s: data file has %llu bytes but the last offset (%s "
                       "at byte %llu) says %llu: extra bytes after the last sample",
                  s->data.path, (unsigned long long)s->data.size, f->path,
                  (unsigned long long)(8 * s->n), (unsigned long long)last);
  /* a data file cut short is not refused: the samples it still holds
   * read, the ones past its end fail (datadings_sample_range) */
  return 0;
}

/* Check the .key_hashes size (section 6) and read its salt. */
static int check_hashes(dd_shard *s, char **err) {
  uint64_t want = 8 + 8 * s->n;
  if (s->hashes.size != want)
    return ds_err(err, "%s: %llu bytes, expected %llu (8-byte salt + 8 bytes for "
                       "each of the %llu samples)",
                  s->hashes.path, (unsigned long long)s->hashes.size,
                  (unsigned long long)want, (unsigned long long)s->n);
  return ds_file_read(&s->hashes, 0, 8, s->salt, err);
}

/* The error for a directory given where a datadings file is expected: it
 * names the .msgpack files inside (the first few, sorted). Returns -1. */
static int directory_given(const char *path, char **err) {
  enum { SHOWN = 4 };
  char *names[SHOWN];
  size_t n = 0, total = 0;
  ds_vfs_list *d = ds_vfs_list_open(NULL, path);
  const char *name;
  while (d && (name = ds_vfs_list_next(d)) != NULL) {
    size_t len = strlen(name);
    if (len <= 8 || strcmp(name + len - 8, ".msgpack") != 0) continue;
    total++;
    /* keep the SHOWN first names in sorted order */
    if (n == SHOWN && strcmp(name, names[SHOWN - 1]) >= 0) continue;
    char *copy = strdup(name);
    if (!copy) continue;
    if (n == SHOWN) free(names[--n]);
    names[n++] = copy;
    qsort(names, n, sizeof *names, cmp_path);
  }
  ds_vfs_list_close(d);
  ds_buf list = {0};
  for (size_t i = 0; i < n; i++)
    ds_buf_printf(&list, "%s%s", i ? ", " : "", names[i]);
  if (total > n) ds_buf_printf(&list, ", ... (%zu in all)", total);
  ds_buf_append(&list, "", 1);
  if (total == 0 || !list.data)
    ds_err(err, "%s: a directory, with no .msgpack file inside: datadings "
                "reads a .msgpack file (or a glob of them)", path);
  else
    ds_err(err, "%s: a directory: datadings reads a .msgpack file; inside it: "
                "%s (a glob such as %s/*.msgpack opens them all)", path,
           (char *)list.data, path);
  ds_buf_free(&list);
  for (size_t i = 0; i < n; i++) free(names[i]);
  return -1;
}

/* Open every file of one shard and run the cheap checks. */
static int shard_open(dd_shard *s, const char *path, char **err) {
  s->kstride = 1;
  s->klast_i = UINT64_MAX;
  int is_dir = 0;
  if (ds_path_exists(path, &is_dir) && is_dir) return directory_given(path, err);
  if (ds_file_open(&s->data, path, err)) return -1;
  if (open_optional(&s->offsets, path, ".offsets", 0, err) ||
      open_optional(&s->keys, path, ".keys", 0, err) ||
      open_optional(&s->hashes, path, ".key_hashes", 0, err) ||
      open_optional(&s->filter, path, ".filter", 0, err))
    return -1;
  if ((!s->keys.path || !s->offsets.path) &&
      open_optional(&s->index, path, ".index", 1, err))
    return -1;
  if (!s->offsets.path && !s->index.path)
    return ds_err(err, "%s: neither %s.offsets nor %s.index exists (one of them "
                       "is needed to find the samples)",
                  path, ds_basename(path), ds_basename(path));
  uint64_t icount = 0, ihdr = 0;
  if (shard_count(s, &icount, &ihdr, err)) return -1;
  if (s->index.path) {
    if (icount != s->n)
      return ds_err(err, "%s: map has %llu entries, but %s has %llu keys",
                    s->index.path, (unsigned long long)icount, s->keys.path,
                    (unsigned long long)s->n);
    if (parse_index(s, icount, ihdr, err)) return -1;
  }
  if (s->offsets.path && check_offsets(s, err)) return -1;
  if (s->hashes.path && check_hashes(s, err)) return -1;
  if (s->filter.path && check_filter(s, err)) return -1;
  return 0;
}

/* Free everything of one shard. */
static void shard_close(dd_shard *s) {
  /* the big allocations first: their sizes are the files' */
  ds_big_free(s->kmem, (size_t)s->keys.size);
  if (s->bloom) ds_big_free(s->bloom, (size_t)(s->filter.size - 32));
  ds_big_free(s->offsets_mem, (size_t)s->offsets.size);
  if (s->table) ds_big_free(s->table, (size_t)(s->table_mask + 1) * sizeof *s->table);
  ds_file_close(&s->data);
  ds_file_close(&s->offsets);
  ds_file_close(&s->keys);
  ds_file_close(&s->hashes);
  ds_file_close(&s->filter);
  ds_file_close(&s->index);
  ds_file_close(&s->kheld);
  ds_view_free(&s->kview);
  if (!s->keypos_borrowed) free(s->keypos);
  free(s->idxpos);
  free(s->idx_off);
}

/* ds_files_steps.open: the data files `files` (and their side files) once. */
static int open_files(const char *path, const void *arg, const ds_shard_list *files,
                      void **out, char **err) {
  (void)path, (void)arg;
  *out = NULL;
  datadings_reader *r = calloc(1, sizeof *r);
  if (r) r->shards = calloc(files->n, sizeof *r->shards);
  if (!r || !r->shards) {
    free(r);
    return ds_err(err, "out of memory");
  }
  r->seed = random_seed(r);
  int rc = 0;
  for (size_t i = 0; i < files->n && rc == 0; i++) {
    r->nshards = i + 1;
    rc = shard_open(&r->shards[i], files->paths[i], err);
  }
  uint64_t *counts = rc ? NULL : malloc(r->nshards * sizeof *counts);
  if (rc == 0 && !counts) rc = ds_err(err, "out of memory");
  for (size_t i = 0; rc == 0 && i < r->nshards; i++) counts[i] = r->shards[i].n;
  if (rc == 0)
    rc = ds_shard_map_init(&r->map, DS_LAYOUT_CONCATENATED, counts, r->nshards, err);
  free(counts);
  if (rc) {
    datadings_close(r);
    return -1;
  }
  *out = r;
  return 0;
}

/* ds_files_steps.expand: the glob's files. */
static int opening_expand(const char *path, const void *arg, ds_shard_list *files,
                          char **err) {
  (void)arg;
  return datadings_expand_paths(path, files, err);
}

/* ds_files_steps.side: X.offsets, X.keys, X.key_hashes, X.filter, X.index
 * (opening_incomplete counts on this order). */
static int opening_side(const void *arg, const char *file, ds_path_set *set) {
  static const char *const side[] = {".offsets", ".keys", ".key_hashes", ".filter", ".index",
                                     NULL};
  (void)arg;
  for (const char *const *x = side; *x; x++) {
    char *p = ds_strf("%s%s", file, *x);
    int bad = !p || ds_path_set_add(set, p);
    free(p);
    if (bad) return -1;
  }
  return 0;
}

/* ds_files_steps.stale */
static int opening_stale(const void *r) { return datadings_stale(r); }

/* ds_files_steps.close */
static void opening_close(void *r) { datadings_close(r); }

/* ds_files_steps.incomplete: a data file missing beside its .offsets or
 * .keys (the writer moves the old data file away first and renames the
 * new one in last, its commit point); each data file is followed by its
 * five side files. */
static int opening_incomplete(const char *path, const void *arg, const ds_path_set *set) {
  (void)path, (void)arg;
  for (size_t i = 0; i + 2 < set->n; i += 6)
    if (set->ids[i].kind == 0 && (set->ids[i + 1].kind != 0 || set->ids[i + 2].kind != 0))
      return 1;
  return 0;
}

/* An open through ds_open_files_stable (core/open_stable.h): the data
 * files are expanded once per try; each with its side files is in the
 * set. */
int datadings_open(const char *path, datadings_reader **out, char **err) {
  static const ds_files_steps steps = {opening_expand, opening_side,  open_files,
                                       opening_stale,  opening_close, opening_incomplete};
  *out = ds_open_files_stable(path, &steps, NULL, err);
  return *out ? 0 : -1;
}

void datadings_close(datadings_reader *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nshards; i++) shard_close(&r->shards[i]);
  free(r->shards);
  ds_shard_map_free(&r->map);
  free(r);
}

uint64_t datadings_count(const datadings_reader *r) { return r->map.total; }

size_t datadings_nshards(const datadings_reader *r) { return r->nshards; }

const char *datadings_shard_path(const datadings_reader *r, size_t s) {
  return s < r->nshards ? r->shards[s].data.path : NULL;
}

uint64_t datadings_shard_count(const datadings_reader *r, size_t s) {
  return s < r->nshards ? r->shards[s].n : 0;
}

/* ------------------------------------------------------------------ */
/* Samples                                                              */

/* Global index -> shard and local index, or an out-of-range error. */
static int locate(const datadings_reader *r, uint64_t g, size_t *shard,
                  uint64_t *i, char **err) {
  if (g >= r->map.total)
    return ds_err(err, "sample %llu out of range [0, %llu)", (unsigned long long)g,
                  (unsigned long long)r->map.total);
  ds_shard_map_locate(&r->map, g, shard, i);
  return 0;
}

/* Start and end offsets of sample i: from .offsets (read through io) or
 * the legacy index. */
static int offsets_of(dd_shard *s, datadings_io *io, uint64_t i,
                      uint64_t *a, uint64_t *b, char **err) {
  if (!s->offsets.path) {
    *a = s->idx_off[i];
    *b = s->idx_off[i + 1];
    return 0;
  }
  const uint8_t *p;
  if (!s->offsets_mem && s->offsets_jumps >= DS_VIEW_JUMPS_TO_LOAD &&
      s->offsets.size <= ((uint64_t)1 << 29)) {
    char *e = NULL; /* unreadable now: read entry by entry, which reports it */
    uint8_t *mem = ds_big_alloc((size_t)s->offsets.size);
    if (mem && ds_file_read(&s->offsets, 0, s->offsets.size, mem, &e)) {
      ds_big_free(mem, (size_t)s->offsets.size);
      mem = NULL;
    }
    s->offsets_mem = mem;
    free(e);
  }
  if (s->offsets_mem) {
    p = s->offsets_mem + 8 * i;
  } else {
    uint64_t jumps = io->offsets.jumps; /* counted per shard: a lookup query */
    if (ds_view_read(&io->offsets, &s->offsets, 8 * i, 16, &p, err)) return -1;
    s->offsets_jumps += io->offsets.jumps - jumps; /* has a cursor of its own */
  }
  *a = be_n(p, 8);
  *b = be_n(p + 8, 8);
  return 0;
}

/* Byte position in the offsets source where offset i is stored (errors). */
static uint64_t offset_pos(dd_shard *s, uint64_t i) {
  if (s->offsets.path) return 8 * i;
  if (i >= s->n) return s->index.size;
  uint64_t h = 0, len = 0;
  char *e = NULL;
  if (str_at(&s->kview, &s->index, s->idxpos[i], i, &h, &len, NULL, &e)) free(e);
  return s->idxpos[i] + h + len;
}

void datadings_io_free(datadings_io *io) {
  ds_view_free(&io->offsets);
  ds_view_free(&io->data);
}

int datadings_sample_range(const datadings_reader *r, datadings_io *io, uint64_t g,
                           size_t *shard, uint64_t *start, uint64_t *end,
                           char **err) {
  uint64_t i;
  if (locate(r, g, shard, &i, err)) return -1;
  dd_shard *s = &r->shards[*shard];
  const char *src = s->offsets.path ? s->offsets.path : s->index.path;
  uint64_t a, b;
  if (offsets_of(s, io, i, &a, &b, err)) return -1;
  if (a > b)
    return ds_err(err, "%s: sample %llu: offsets at bytes %llu and %llu say "
                       "[%llu, %llu): not monotonic",
                  src, (unsigned long long)i, (unsigned long long)offset_pos(s, i),
                  (unsigned long long)offset_pos(s, i + 1), (unsigned long long)a,
                  (unsigned long long)b);
  if (b > s->data.size)
    return ds_err(err, "%s: sample %llu: offset at byte %llu says %llu, past the "
                       "end of %s (%llu bytes): the data file is cut short, or the "
                       "offsets are damaged (the sample starts at offset %llu)",
                  src, (unsigned long long)i, (unsigned long long)offset_pos(s, i + 1),
                  (unsigned long long)b, s->data.path, (unsigned long long)s->data.size,
                  (unsigned long long)a);
  *start = a;
  *end = b;
  return 0;
}

/* ds_prefetch_steps.prefetchable: its data file. */
static int shard_prefetchable(const void *ctx, size_t s) {
  return ds_file_prefetchable(&((const datadings_reader *)ctx)->shards[s].data);
}

/* ds_prefetch_steps.locate */
static void locate_row(const void *ctx, uint64_t g, size_t *shard, uint64_t *index) {
  const datadings_reader *r = ctx;
  *index = 0;
  *shard = r->nshards;
  if (g < r->map.total) ds_shard_map_locate(&r->map, g, shard, index);
}

/* ds_prefetch_steps.shard: the offsets, then the samples, of rows v[0..n)
 * of shard si. */
static void prefetch_shard(const void *ctx, size_t si, const ds_row_at *v, size_t n,
                           ds_vfs_range *rg) {
  const datadings_reader *r = ctx;
  dd_shard *s = &r->shards[si];
  if (!ds_file_prefetchable(&s->data)) return;
  if (s->offsets.path && !__atomic_load_n(&s->offsets_mem, __ATOMIC_ACQUIRE)) {
    for (size_t j = 0; j < n; j++) rg[j] = (ds_vfs_range){8 * v[j].index, 16};
    ds_file_prefetch(&s->offsets, rg, n);
  }
  datadings_io io = {0};
  io.offsets.max_ahead = DS_VIEW_EXACT;
  size_t k = 0;
  for (size_t j = 0; j < n; j++) {
    size_t sh;
    uint64_t a, b;
    char *e = NULL;
    if (datadings_sample_range(r, &io, v[j].row, &sh, &a, &b, &e) == 0 && b > a)
      rg[k++] = (ds_vfs_range){a, b - a};
    free(e);
  }
  datadings_io_free(&io);
  ds_file_prefetch(&s->data, rg, k);
}

void datadings_prefetch(const datadings_reader *r, const uint64_t *g, size_t n) {
  static const ds_prefetch_steps steps = {shard_prefetchable, locate_row, prefetch_shard, NULL};
  ds_prefetch_rows(&steps, r, r->nshards, g, n);
}

void datadings_read_ahead(const datadings_reader *r, datadings_io *io, uint64_t g,
                          uint64_t count) {
  size_t shard;
  uint64_t i, a, b;
  char *e = NULL;
  const uint8_t *p;
  if (count == 0 || locate(r, g, &shard, &i, &e)) {
    free(e);
    return;
  }
  const dd_shard *s = &r->shards[shard];
  if (count > s->n - i) count = s->n - i;
  if (!s->offsets.path || s->offsets_mem) return; /* offsets in memory */
  if (ds_view_read(&io->offsets, &s->offsets, 8 * i, 8 * (count + 1), &p, &e)) {
    free(e); /* the sample reads report it */
    return;
  }
  a = be_n(p, 8);
  b = be_n(p + 8 * count, 8);
  if (a <= b && b <= s->data.size && b - a <= DS_VIEW_AHEAD &&
      ds_view_read(&io->data, &s->data, a, b - a, &p, &e))
    free(e);
}

int datadings_sample(const datadings_reader *r, datadings_io *io, uint64_t g,
                     const uint8_t **p, size_t *n, char **err) {
  size_t shard;
  uint64_t a, b;
  if (datadings_sample_range(r, io, g, &shard, &a, &b, err)) return -1;
  if (ds_view_read(&io->data, &r->shards[shard].data, a, b - a, p, err)) return -1;
  *n = (size_t)(b - a);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Keys                                                                 */

/* The file holding the keys of a shard, or NULL. */
static const ds_file *key_file(const dd_shard *s) {
  if (s->keysrc == DD_KEYS_FILE) return s->keys_held ? &s->kheld : &s->keys;
  if (s->keysrc == DD_KEYS_INDEX) return &s->index;
  return NULL;
}

/* Positions of the .keys str headers, found on demand: make keys 0..upto
 * known (upto < n), continuing where the last call stopped, so reading
 * row 0's key costs one header and a full table costs one pass. Every
 * kstride-th position is kept, in an array that grows with the walk. */
static int ensure_keypos(dd_shard *s, uint64_t upto, char **err) {
  if (s->keypos_n > upto) return 0;
  const ds_file *f = key_file(s);
  if (!f)
    return ds_err(err, "%s: no .keys or .index file, so sample keys are not "
                       "available",
                  s->data.path);
  /* room for the positions up to upto: doubling from 1024, at most all */
  uint64_t slots = s->n ? (s->n - 1) / s->kstride + 1 : 1, want = upto / s->kstride + 1;
  if (want > s->keypos_cap) {
    uint64_t cap = s->keypos_cap ? s->keypos_cap : 1024;
    while (cap < want) cap *= 2;
    if (cap > slots) cap = slots;
    uint64_t *kp = realloc(s->keypos, cap * sizeof *kp);
    if (!kp)
      return ds_err(err, "%s: out of memory for %llu key positions", f->path,
                    (unsigned long long)s->n);
    s->keypos = kp;
    s->keypos_cap = cap;
  }
  uint64_t i = s->keypos_n, h = 0, len = 0;
  uint64_t off = i == 0 ? s->keys_hdr : s->kwalk_off;
  for (; i <= upto; i++) {
    uint8_t b; /* held keys: a fixstr header inside the file is checked here */
    if (s->keys_held && off < f->size && ((b = s->kmem[off]) & 0xe0) == 0xa0 &&
        (uint64_t)(b & 0x1f) < f->size - off) {
      h = 1;
      len = b & 0x1f;
    } else if (str_at(&s->kview, f, off, i, &h, &len, NULL, err)) {
      return -1;
    }
    /* every 1024 keys, not at the first (row 0's key stays one header) */
    if ((i & 1023) == 1023 && ds_cancel_check()) return ds_err(err, DS_CANCEL_MSG);
    if (i % s->kstride == 0) s->keypos[i / s->kstride] = off;
    s->keypos_n = i + 1;
    s->kwalk_last = off;
    off += h + len;
    s->kwalk_off = off;
  }
  if (s->keypos_n == s->n && off != f->size) {
    s->keypos_n = s->n - 1; /* the last key stays unconfirmed: fail every time */
    s->kwalk_off = s->kwalk_last;
    return ds_err(err, "%s: %llu unexpected bytes after the last of %llu keys, at "
                       "byte %llu",
                  f->path, (unsigned long long)(f->size - off),
                  (unsigned long long)s->n, (unsigned long long)off);
  }
  return 0;
}

/* Every key position (for the lookup table). */
static int build_keypos(dd_shard *s, char **err) {
  return s->n == 0 ? 0 : ensure_keypos(s, s->n - 1, err);
}

/* Header bytes of the str at p, and its length: for keys in memory that
 * ensure_keypos has already checked. */
static inline uint64_t held_str(const uint8_t *p, uint64_t *len) {
  uint8_t b = p[0];
  if ((b & 0xe0) == 0xa0) {
    *len = b & 0x1f;
    return 1;
  }
  int k = b == 0xd9 ? 1 : b == 0xda ? 2 : 4;
  *len = be_n(p + 1, k);
  return 1 + (uint64_t)k;
}

/* Key bytes of local sample i (walked by ensure_keypos): from the kept
 * position at or before it, or from the last key located when that is
 * nearer, stepping over the keys between (held keys: in memory, their
 * headers checked by the walk). Otherwise read through the shard's key
 * window: valid until its next read. */
static int key_bytes(dd_shard *s, uint64_t i, const uint8_t **p, size_t *n,
                     char **err) {
  uint64_t j = i - i % s->kstride, off = s->keypos[j / s->kstride], h, len;
  if (s->klast_i != UINT64_MAX && s->klast_i <= i && s->klast_i > j) {
    j = s->klast_i;
    off = s->klast_off;
  }
  if (s->keys_held) {
    for (; j < i; j++) {
      h = held_str(s->kmem + off, &len);
      off += h + len;
    }
    h = held_str(s->kmem + off, &len);
    *p = s->kmem + off + h;
  } else {
    const ds_file *f = key_file(s);
    for (; j < i; j++, off += h + len)
      if (str_at(&s->kview, f, off, j, &h, &len, NULL, err)) return -1;
    if (str_at(&s->kview, f, off, i, &h, &len, p, err)) return -1;
  }
  s->klast_i = i;
  s->klast_off = off;
  *n = (size_t)len;
  return 0;
}

/* Bytes of a lookup table for n samples: a power of two >= 2n slots. */
static uint64_t table_slots(uint64_t n) {
  uint64_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  return cap;
}

/* Read .keys whole into memory before the lookup table is built, when the
 * keys, one position per DD_KEY_STRIDE keys and the table fit in
 * DD_KEY_BUDGET bytes a sample: lookups then confirm keys without a system
 * call. Otherwise (or when it cannot be read now) keys stay streamed, one
 * position each. */
static void hold_keys(dd_shard *s) {
  if (s->keysrc != DD_KEYS_FILE || s->keys_held || s->table) return;
  uint64_t need = s->keys.size + 8 * (s->n / DD_KEY_STRIDE + 1) +
                  4 * table_slots(s->n);
  if (need > DD_KEY_BUDGET * s->n && need > ((uint64_t)1 << 16)) return;
  char *e = NULL;
  size_t size = (size_t)s->keys.size;
  uint8_t *mem = ds_big_alloc(size);
  if (!mem || ds_file_read(&s->keys, 0, size, mem, &e) ||
      ds_file_from_memory(&s->kheld, s->keys.path, mem, size, &e)) {
    free(e); /* read as before, which reports it */
    ds_big_free(mem, size);
    return;
  }
  s->kmem = mem;
  s->keys_held = 1;
  free(s->keypos); /* walk again, from memory, keeping fewer positions */
  s->keypos = NULL;
  s->keypos_cap = 0;
  s->keypos_n = 0;
  s->kstride = DD_KEY_STRIDE;
  s->klast_i = UINT64_MAX;
  ds_view_free(&s->kview);
}

int datadings_key(datadings_reader *r, uint64_t g, const uint8_t **p,
                  size_t *n, char **err) {
  size_t shard;
  uint64_t i;
  if (locate(r, g, &shard, &i, err)) return -1;
  dd_shard *s = &r->shards[shard];
  if (ensure_keypos(s, i, err)) return -1;
  return key_bytes(s, i, p, n, err);
}

/* ------------------------------------------------------------------ */
/* Lookup                                                               */

/* Load the filter's bits (once). */
static int load_bloom(dd_shard *s, char **err) {
  if (s->bloom) return 0;
  uint64_t n = s->filter.size - 32;
  uint8_t *b = n <= SIZE_MAX ? ds_big_alloc((size_t)n) : NULL;
  if (!b) return ds_err(err, "%s: out of memory for %llu bytes of filter bits",
                        s->filter.path, (unsigned long long)n);
  if (ds_file_read(&s->filter, 32, n, b, err)) {
    ds_big_free(b, (size_t)n);
    return -1;
  }
  s->bloom = b;
  return 0;
}

/* Bloom test with precomputed h1/h2 (section 7.3): 1 maybe, 0 absent
 * (bits loaded). */
static int bloom_test(const dd_shard *s, uint64_t h1, uint64_t h2) {
  return simplebloom_test(s->bloom, s->bloom_bits, s->bloom_k, h1, h2);
}

/* h1, h2 of the unsalted BLAKE2s digest of the key. */
static void bloom_hashes(const uint8_t *key, size_t n, uint64_t *h1,
                         uint64_t *h2) {
  simplebloom_hashes(key, n, h1, h2);
}

int datadings_filter_maybe(const datadings_reader *r, size_t s,
                           const uint8_t *key, size_t n) {
  if (s >= r->nshards || !r->shards[s].filter.path) return -1;
  char *err = NULL;
  if (load_bloom(&r->shards[s], &err)) { /* unreadable: cannot say absent */
    free(err);
    return 1;
  }
  uint64_t h1, h2;
  bloom_hashes(key, n, &h1, &h2);
  return bloom_test(&r->shards[s], h1, h2);
}

/* Hashes of local samples first..first+count-1 (count <= DD_BLOCK) for the
 * table build: the stored key hashes, read in one block (raw: room for
 * 8 * DD_BLOCK bytes), or a hash of each key's bytes. */
static int block_hashes(dd_shard *s, uint64_t first, uint64_t count, uint64_t *h,
                        uint8_t *raw, char **err) {
  if (s->table_hashed) {
    if (ds_file_read(&s->hashes, 8 + 8 * first, 8 * count, raw, err)) return -1;
    for (uint64_t k = 0; k < count; k++) h[k] = be_n(raw + 8 * k, 8);
    return 0;
  }
  const uint8_t *p;
  size_t n;
  if (s->keys_held) { /* the keys follow each other in memory, checked */
    if (key_bytes(s, first, &p, &n, err)) return -1;
    for (uint64_t k = 0;;) {
      h[k] = ds_hash64(p, n);
      if (++k == count) return 0;
      uint64_t len;
      p += n;
      p += held_str(p, &len);
      n = (size_t)len;
    }
  }
  for (uint64_t k = 0; k < count; k++) {
    if (key_bytes(s, first + k, &p, &n, err)) return -1;
    h[k] = ds_hash64(p, n);
  }
  return 0;
}

/* A table slot's fingerprint of placement m: bits of m the slot number
 * does not use, as many as the sample index leaves free. */
static inline uint32_t slot_fp(uint64_t m, unsigned ibits) {
  return ibits >= 32 ? 0 : (uint32_t)(m >> 40) & (uint32_t)((1ull << (32 - ibits)) - 1);
}

/* 1 when local samples i and j have the same key, 0 when not, -1 on a
 * read error. */
static int same_key(dd_shard *s, uint64_t i, uint64_t j, char **err) {
  const uint8_t *p;
  size_t n, m;
  if (key_bytes(s, i, &p, &n, err)) return -1;
  uint8_t *copy = malloc(n ? n : 1);
  if (!copy) return ds_err(err, "out of memory");
  memcpy(copy, p, n);
  int rc = key_bytes(s, j, &p, &m, err) ? -1 : m == n && memcmp(copy, p, n) == 0;
  free(copy);
  return rc;
}

/* "<keys file>: duplicate key 'K': samples i and j" (the key shown as
 * text, at most 80 bytes). */
static int duplicate_error(dd_shard *s, uint64_t i, uint64_t j, char **err) {
  const uint8_t *p;
  size_t n;
  if (key_bytes(s, i, &p, &n, err)) return -1;
  return ds_err(err, "%s: duplicate key '%.*s%s': samples %llu and %llu both have "
                     "it, so a key lookup cannot give one answer; the index is "
                     "damaged",
                key_file(s)->path, (int)(n > 80 ? 80 : n), (const char *)p,
                n > 80 ? "..." : "", (unsigned long long)j, (unsigned long long)i);
}

/* Insert samples 0..n-1 into the empty table t. Each slot holds the
 * sample index and, in the bits the index leaves free, a fingerprint of
 * its hash, so that a lookup reads only the keys whose fingerprint
 * matches. Equal keys are noticed while inserting (same fingerprint, then
 * hi: the hashes' upper 32 bits by sample, when the keys are not held, so
 * that few keys are read twice; then the key bytes). Returns 0; -1 with
 * *err on a read error, a duplicate key, a probe run longer than
 * DD_MAX_PROBE (a hostile file), or when a core/cancel.h scope asked to
 * stop. Hashes come in blocks; slots are prefetched DD_AHEAD entries
 * early: the table is far larger than the caches. */
static int fill_table(dd_shard *s, uint32_t *t, uint32_t *hi, uint64_t mask,
                      uint64_t seed, char **err) {
  uint64_t *h = malloc(DD_BLOCK * sizeof *h);
  uint8_t *raw = s->table_hashed ? malloc(8 * DD_BLOCK) : NULL;
  int rc = h && (raw || !s->table_hashed) ? 0 : ds_err(err, "out of memory");
  unsigned ib = s->ibits;
  uint32_t imask = ib >= 32 ? UINT32_MAX : (uint32_t)((1ull << ib) - 1);
  for (uint64_t first = 0; rc == 0 && first < s->n; first += DD_BLOCK) {
    uint64_t count = s->n - first < DD_BLOCK ? s->n - first : DD_BLOCK;
    if (first && ds_cancel_check()) rc = ds_err(err, DS_CANCEL_MSG);
    if (rc || (rc = block_hashes(s, first, count, h, raw, err))) break;
    for (uint64_t k = 0; k < count; k++) {
      if (hi) hi[first + k] = (uint32_t)(h[k] >> 32);
      h[k] = place(h[k], seed); /* from here on: the placement */
    }
    for (uint64_t k = 0; k < count && k < DD_AHEAD; k++)
      __builtin_prefetch(&t[h[k] & mask], 1);
    for (uint64_t k = 0; rc == 0 && k < count; k++) {
      if (k + DD_AHEAD < count) __builtin_prefetch(&t[h[k + DD_AHEAD] & mask], 1);
      uint64_t i = first + k, slot = h[k] & mask, probe = 0;
      uint32_t fp = slot_fp(h[k], ib), v;
      while ((v = t[slot]) != 0) {
        uint32_t j = (v & imask) - 1;
        if ((uint32_t)((uint64_t)v >> ib) == fp && (!hi || hi[j] == hi[i])) {
          int same = same_key(s, i, j, err); /* most likely the same key */
          if (same) {
            rc = same < 0 ? -1 : duplicate_error(s, i, j, err);
            break;
          }
        }
        if (++probe > DD_MAX_PROBE) {
          rc = ds_err(err, "%s: sample %llu: more than %d keys share a hash; the "
                           "file is corrupt or hostile",
                      s->table_hashed ? s->hashes.path : key_file(s)->path,
                      (unsigned long long)i, DD_MAX_PROBE);
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (rc == 0) t[slot] = (uint32_t)(((uint64_t)fp << ib) | (i + 1));
    }
  }
  free(h);
  free(raw);
  return rc;
}

/* Build the open-addressing table (load <= 1/2) of sample indices. */
static int build_table(dd_shard *s, uint64_t seed, char **err) {
  if (s->table) return 0;
  /* held keys are hashed here (one fast hash a key): a lookup then needs
   * no BLAKE2s, and the stored hashes are not read */
  s->table_hashed = s->hashes.path != NULL && !s->keys_held;
  uint64_t cap = table_slots(s->n);
  s->ibits = 1;
  while (s->ibits < 32 && (1ull << s->ibits) <= s->n) s->ibits++;
  size_t tbytes = (size_t)cap * sizeof(uint32_t), hbytes = (size_t)s->n * sizeof(uint32_t);
  uint32_t *t = ds_big_alloc(tbytes); /* zero: every slot free */
  uint32_t *hi = s->keys_held || s->n == 0 ? NULL : ds_big_alloc(hbytes);
  if (!t || (!hi && !s->keys_held && s->n)) {
    ds_big_free(t, tbytes);
    ds_big_free(hi, hbytes);
    return ds_err(err, "%s: out of memory for a key table of %llu slots",
                  s->data.path, (unsigned long long)cap);
  }
  int rc = fill_table(s, t, hi, cap - 1, seed, err);
  ds_big_free(hi, hbytes); /* only the build needs them */
  ds_view_reset(&s->kview);
  if (rc) {
    ds_big_free(t, tbytes);
    return -1;
  }
  s->table = t;
  s->table_mask = cap - 1;
  return 0;
}

/* 1 when local sample i's key equals key[0..n), 0 when not, -1 on a read
 * error. */
static int key_equals(dd_shard *s, uint64_t i, const uint8_t *key, size_t n,
                      char **err) {
  const uint8_t *p;
  size_t len;
  if (key_bytes(s, i, &p, &len, err)) return -1;
  return len == n && (n == 0 || memcmp(p, key, n) == 0);
}

/* A key's hash for the tables, computed once a lookup for every shard
 * with the same salt. */
typedef struct dd_qhash {
  const uint8_t *key;
  size_t n;
  int have_salted, have_plain;
  uint8_t salt[8];
  uint64_t salted, plain;
} dd_qhash;

/* The hash shard s's table is placed by. */
static uint64_t query_hash(const dd_shard *s, dd_qhash *q) {
  if (!s->table_hashed) {
    if (!q->have_plain) q->plain = ds_hash64(q->key, q->n);
    q->have_plain = 1;
    return q->plain;
  }
  if (!q->have_salted || memcmp(q->salt, s->salt, 8) != 0) {
    uint8_t qh[8];
    datadings_key_hash(s->salt, q->key, q->n, qh);
    memcpy(q->salt, s->salt, 8);
    q->salted = be_n(qh, 8);
    q->have_salted = 1;
  }
  return q->salted;
}

/* Probe the table for the key: 1 and *i when found, 0 when absent, -1 on
 * a read error. Only candidates whose fingerprint matches are read, and
 * they are confirmed by their key bytes. */
static int table_find(dd_shard *s, uint64_t seed, dd_qhash *q, uint64_t *out,
                      char **err) {
  uint64_t m = place(query_hash(s, q), seed);
  unsigned ib = s->ibits;
  uint32_t fp = slot_fp(m, ib), imask = ib >= 32 ? UINT32_MAX : (uint32_t)((1ull << ib) - 1);
  for (uint64_t slot = m & s->table_mask;; slot = (slot + 1) & s->table_mask) {
    uint32_t v = s->table[slot];
    if (v == 0) return 0;
    if ((uint32_t)((uint64_t)v >> ib) != fp) continue;
    int eq = key_equals(s, (v & imask) - 1, q->key, q->n, err);
    if (eq < 0) return -1;
    if (eq) {
      *out = (v & imask) - 1;
      return 1;
    }
  }
}

/* A key's Bloom filter hashes, computed on first need (BLAKE2s: the
 * costliest step of a lookup the table answers). */
typedef struct dd_bloomq {
  const uint8_t *key;
  size_t n;
  int have;
  uint64_t h1, h2;
} dd_bloomq;

/* 1 when the shard's filter may hold the key, 0 when it rejects it, -1 on
 * a read error. */
static int filter_admits(dd_shard *s, dd_bloomq *b, char **err) {
  if (load_bloom(s, err)) return -1;
  if (!b->have) {
    bloom_hashes(b->key, b->n, &b->h1, &b->h2);
    b->have = 1;
  }
  return bloom_test(s, b->h1, b->h2);
}

/* Look the key up in one shard: 1 found, 0, -1. Until the shard's table
 * is built its Bloom filter spares building it for a key it does not
 * hold; afterwards the table answers absent keys alone, and a key the
 * table finds is still put to the filter, so that a damaged filter that
 * rejects a key gives "absent" whatever lookups came before (never an
 * answer that depends on the order of queries). */
static int shard_find(dd_shard *s, uint64_t seed, dd_qhash *q, dd_bloomq *b,
                      uint64_t *i, char **err) {
  if (s->n == 0) return 0;
  int filtered = 0;
  if (!s->table && s->filter.path) {
    int ok = filter_admits(s, b, err);
    if (ok <= 0) return ok;
    filtered = 1;
  }
  if (!s->table) hold_keys(s);
  if (build_keypos(s, err) || build_table(s, seed, err)) return -1;
  int rc = table_find(s, seed, q, i, err);
  if (rc == 1 && s->filter.path && !filtered) return filter_admits(s, b, err);
  return rc;
}

static int find_key(datadings_reader *r, const uint8_t *key, size_t n, uint64_t *g,
                    char **err);

int datadings_find(datadings_reader *r, const uint8_t *key, size_t n,
                   uint64_t *g, char **err) {
  /* the key may be one datadings_key returned, in a window this lookup
   * reads through: work on a copy */
  uint8_t small[256], *copy = n <= sizeof small ? small : malloc(n);
  if (!copy) return ds_err(err, "out of memory");
  if (n) memcpy(copy, key, n);
  int rc = find_key(r, copy, n, g, err);
  if (copy != small) free(copy);
  return rc;
}

/* datadings_find on a key that no window holds. */
static int find_key(datadings_reader *r, const uint8_t *key, size_t n, uint64_t *g,
                    char **err) {
  dd_qhash q = {.key = key, .n = n};
  dd_bloomq b = {.key = key, .n = n};
  for (size_t k = 0; k < r->nshards; k++) {
    uint64_t i = 0;
    int rc = shard_find(&r->shards[k], r->seed, &q, &b, &i, err);
    if (rc < 0) return -1;
    if (rc == 1) {
      *g = ds_shard_map_global(&r->map, k, i);
      return 1;
    }
  }
  return 0;
}

const char *datadings_lookup_method(const datadings_reader *r) {
  if (r->nshards == 0) return "keys";
  const dd_shard *s = &r->shards[0];
  if (s->hashes.path) return s->filter.path ? "filter+key_hashes" : "key_hashes";
  if (s->keysrc == DD_KEYS_INDEX) return "index";
  return "keys";
}

size_t datadings_key_table_bytes(const datadings_reader *r) {
  size_t total = 0;
  for (size_t k = 0; k < r->nshards; k++) {
    const dd_shard *s = &r->shards[k];
    if (s->keypos && !s->keypos_borrowed)
      total += (size_t)(s->n ? (s->n - 1) / s->kstride + 1 : 1) * sizeof *s->keypos;
    if (s->keys_held) total += (size_t)s->keys.size;
    if (s->idxpos) total += (size_t)s->n * sizeof *s->idxpos;
    if (s->table) total += (size_t)(s->table_mask + 1) * sizeof *s->table;
  }
  return total;
}

/* ------------------------------------------------------------------ */
/* md5 verification                                                     */

/* Growable list of md5 rows. */
typedef struct md5_rows {
  datadings_md5_row *v;
  size_t n, cap;
} md5_rows;

/* md5 of a whole file as 32 lowercase hex; 0 ok, -1 if unreadable, -2
 * when a core/cancel.h scope asked to stop. */
static int md5_of_file(const char *path, char hex[33]) {
  ds_file f;
  char *e = NULL;
  if (ds_file_open(&f, path, &e)) {
    free(e);
    return -1;
  }
  MD5_CTX c;
  MD5Init(&c);
  const uint64_t chunk = 1u << 20;
  uint8_t *buf = malloc(chunk);
  if (!buf) {
    ds_file_close(&f);
    return -1;
  }
  for (uint64_t off = 0; off < f.size; off += chunk) {
    uint64_t len = f.size - off < chunk ? f.size - off : chunk;
    int cancel = ds_cancel_check();
    if (cancel || ds_file_read(&f, off, len, buf, &e)) { /* cut short: its md5 is not known */
      free(e);
      free(buf);
      ds_file_close(&f);
      return cancel ? -2 : -1;
    }
    MD5Update(&c, buf, (size_t)len);
  }
  free(buf);
  uint8_t d[MD5_DIGEST_LENGTH];
  MD5Final(d, &c);
  ds_file_close(&f);
  static const char digits[] = "0123456789abcdef";
  for (int i = 0; i < 16; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[32] = 0;
  return 0;
}

/* 1 for a space-like byte that Python's str.strip() removes. */
static int is_space(uint8_t c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* 1 when the listed name is a plain file name (no directory parts). */
static int plain_name(const uint8_t *p, size_t n) {
  if (n == 0 || memchr(p, '/', n) || memchr(p, 0, n)) return 0;
  return !(n == 1 && p[0] == '.') && !(n == 2 && p[0] == '.' && p[1] == '.');
}

/* Parse one stripped line into a new row (expected lowercased). */
static int add_row(md5_rows *rows, const ds_file *f, size_t lineno,
                   const uint8_t *p, size_t n, char **err) {
  int ok = n > 34 && p[32] == ' ' && p[33] == ' ' && plain_name(p + 34, n - 34);
  for (int i = 0; ok && i < 32; i++)
    ok = (p[i] >= '0' && p[i] <= '9') || ((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f');
  if (!ok) {
    char *q = ds_escape(p, n > 80 ? 80 : n); /* file contents: any bytes */
    ds_err(err, "%s: line %zu: expected \"<32 hex digits>  <file name>\", "
                "found \"%s\"", f->path, lineno, q ? q : "");
    free(q);
    return -1;
  }
  datadings_md5_row *v = ds_grow_cap(rows->v, &rows->cap, rows->n, sizeof *v, 8);
  if (!v) return ds_err(err, "out of memory");
  rows->v = v;
  char *text = malloc(33 + (n - 34) + 1);
  if (!text) return ds_err(err, "out of memory");
  for (int i = 0; i < 32; i++) text[i] = (char)(p[i] >= 'A' && p[i] <= 'F' ? p[i] | 0x20 : p[i]);
  text[32] = 0;
  memcpy(text + 33, p + 34, n - 34);
  text[33 + n - 34] = 0;
  datadings_md5_row *row = &rows->v[rows->n++];
  memset(row, 0, sizeof *row);
  row->expected = text;
  row->file = text + 33;
  return 0;
}

/* Read `<data>.md5` and check every listed file beside it. */
static int verify_one(const char *data_path, md5_rows *rows, char **err) {
  char *mp = ds_strf("%s.md5", data_path);
  if (!mp) return ds_err(err, "out of memory");
  ds_file f;
  int rc = ds_file_load(&f, mp, err);
  free(mp);
  if (rc) return -1;
  size_t first = rows->n, lineno = 0;
  for (uint64_t off = 0; off < f.size && rc == 0;) {
    const uint8_t *line = f.data + off, *nl = memchr(line, '\n', (size_t)(f.size - off));
    size_t len = nl ? (size_t)(nl - line) : (size_t)(f.size - off);
    off += len + 1;
    lineno++;
    while (len && is_space(line[len - 1])) len--;
    while (len && is_space(line[0])) line++, len--;
    if (len) rc = add_row(rows, &f, lineno, line, len, err);
  }
  ds_file_close(&f);
  const char *base = ds_basename(data_path);
  for (size_t i = first; rc == 0 && i < rows->n; i++) {
    datadings_md5_row *row = &rows->v[i];
    char *path = ds_strf("%.*s%s", (int)(base - data_path), data_path, row->file);
    if (!path) return ds_err(err, "out of memory");
    int m = md5_of_file(path, row->actual);
    free(path);
    if (m == -2) return ds_err(err, DS_CANCEL_MSG);
    if (m) row->actual[0] = 0;
    row->ok = row->actual[0] && strcmp(row->actual, row->expected) == 0;
  }
  return rc;
}

int datadings_verify(const char *path, datadings_md5_row **rows, size_t *n,
                     char **err) {
  *rows = NULL;
  *n = 0;
  ds_shard_list files;
  if (datadings_expand_paths(path, &files, err)) return -1;
  md5_rows acc = {0};
  int rc = 0;
  for (size_t i = 0; i < files.n && rc == 0; i++)
    rc = verify_one(files.paths[i], &acc, err);
  ds_shard_list_free(&files);
  if (rc) {
    datadings_md5_free(acc.v, acc.n);
    return -1;
  }
  *rows = acc.v;
  *n = acc.n;
  return 0;
}

void datadings_md5_free(datadings_md5_row *rows, size_t n) {
  if (!rows) return;
  for (size_t i = 0; i < n; i++) free((char *)rows[i].expected);
  free(rows);
}

int datadings_stale(const datadings_reader *r) {
  if (!r) return 0;
  for (size_t k = 0; k < r->nshards; k++) {
    const dd_shard *s = &r->shards[k];
    if (ds_file_stale(&s->data) || ds_file_stale(&s->offsets) ||
        ds_file_stale(&s->keys) || ds_file_stale(&s->hashes) ||
        ds_file_stale(&s->filter) || ds_file_stale(&s->index))
      return 1;
  }
  return 0;
}

int datadings_shard_facts_get(const datadings_reader *r, size_t s,
                              datadings_shard_facts *f) {
  memset(f, 0, sizeof *f);
  if (s >= r->nshards) return -1;
  const dd_shard *d = &r->shards[s];
  f->has_offsets = d->offsets.path != NULL;
  f->has_keys = d->keys.path != NULL;
  f->has_key_hashes = d->hashes.path != NULL && d->hashes.size >= 8;
  f->has_filter = d->filter.path != NULL && d->filter.size >= 32;
  f->has_index = d->index.path != NULL;
  if (f->has_key_hashes) memcpy(f->salt, d->salt, 8);
  if (f->has_filter) {
    f->filter_bits = d->bloom_bits;
    f->filter_hashes = d->bloom_k;
    f->filter_capacity = d->bloom_capacity;
    memcpy(&f->filter_fp_rate, &d->bloom_pbits, sizeof d->bloom_pbits);
  }
  return 0;
}
