/* atlas.c - the torch-atlas-ds reader (see atlas.h). Opening reads every
 * meta.json (jansson), maps each shard's index.npy and data.bin, checks
 * the index against the meta and data.bin (upstream checks none of it) and
 * loads each dictionary once; a block is then a bounds-checked slice of
 * data.bin, decompressed with the shard's dictionary when its strategy
 * says so. Errors name the file (and the block) at fault.
 * Format notes: docs/formats/atlas.md sections 1-6. */
#include "atlas.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "core/json_file.h"
#include "core/mapped_file.h"
#include "core/npy.h"
#include "core/open_stable.h"
#include "core/prefetch_rows.h"
#include "core/vfs.h"

/* A dictionary file, loaded: the dictionary, its file and its
 * dictionary ID (0: raw content). What a shard's own dictionary and the
 * reader's shared one both are. */
typedef struct atlas_dict {
  ds_zstd_dict *zd;
  char *path;
  unsigned id;
} atlas_dict;

/* One shard directory, opened and checked. */
typedef struct atlas_shard {
  char *dir;                /* directory path, for messages */
  char *name;               /* name as listed ("." for a bare shard) */
  atlas_meta meta;
  uint64_t num_blocks;      /* ceil(stored_examples / block_size) */
  uint64_t first;           /* global index of the shard's first example */
  ds_file index;            /* index.npy, loaded */
  const uint8_t *entries;   /* its num_blocks + 1 offsets */
  unsigned width;           /* bytes per entry: 1, 2, 4 or 8 */
  int big_endian;           /* entries are stored '>' */
  char dtype[8];            /* "|u1", "<u2", ... */
  ds_file data;             /* data.bin, streamed (size 0 when absent) */
  int has_data;
  atlas_dict own;           /* strategy 3: <shard>/zstd_dict.bin */
  const atlas_dict *dict;   /* what blocks decode with (own or the reader's
                             * shared one), NULL when none */
  uint64_t *checked;        /* a bit per block: checked whole (atomic) */
} atlas_shard;

struct atlas_reader {
  char *path;               /* as given, without trailing slashes */
  int bare;
  int root_strategy;        /* -1 for a bare shard */
  atlas_shard *shards;
  size_t nshards;
  uint64_t count;
  atlas_dict shared;        /* ROOT/zstd_dict.bin (or the given file) */
};

/* ----------------------------------------------------------- helpers */


/* 1 when the name is a non-empty run of ASCII digits. */
static int all_digits(const char *s) {
  if (!*s) return 0;
  for (; *s; s++)
    if (*s < '0' || *s > '9') return 0;
  return 1;
}

/* Compare two digit strings by numeric value (any length, no overflow). */
static int cmp_numeric(const char *a, const char *b) {
  while (*a == '0' && a[1]) a++;
  while (*b == '0' && b[1]) b++;
  size_t la = strlen(a), lb = strlen(b);
  if (la != lb) return la < lb ? -1 : 1;
  return strcmp(a, b);
}

/* qsort adaptor for cmp_numeric over char * elements. */
static int cmp_names(const void *x, const void *y) {
  return cmp_numeric(*(char *const *)x, *(char *const *)y);
}

/* ------------------------------------------------------- meta.json */

/* Integer member `key` of `o`, required to lie in [lo, hi]. */
static int meta_int(json_t *o, const char *path, const char *key, int64_t lo,
                    int64_t hi, int64_t *out, char **err) {
  json_t *v = json_object_get(o, key);
  if (!v) return ds_err(err, "%s: \"%s\" is missing", path, key);
  if (!json_is_integer(v))
    return ds_err(err, "%s: \"%s\" is not an integer", path, key);
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi) {
    if (hi == INT64_MAX)
      return ds_err(err, "%s: \"%s\" is %lld, must be at least %lld", path, key,
                    (long long)x, (long long)lo);
    return ds_err(err, "%s: \"%s\" is %lld, outside [%lld, %lld]", path, key,
                  (long long)x, (long long)lo, (long long)hi);
  }
  *out = (int64_t)x;
  return 0;
}

/* "version" must be 1, as upstream requires. */
static int meta_version(json_t *o, const char *path, char **err) {
  int64_t v = 0;
  if (meta_int(o, path, "version", INT64_MIN, INT64_MAX, &v, err)) return -1;
  if (v != 1)
    return ds_err(err, "%s: format version %lld is not supported (only 1)", path,
                  (long long)v);
  return 0;
}

/* Optional numeric member: absent is fine, another type is an error. */
static int meta_number(json_t *o, const char *path, const char *key,
                       double *out, char **err) {
  json_t *v = json_object_get(o, key);
  *out = 0;
  if (!v) return 0;
  if (!json_is_number(v))
    return ds_err(err, "%s: \"%s\" is not a number", path, key);
  *out = json_number_value(v);
  return 0;
}

/* Read and check <shard>/meta.json into s->meta. */
static int read_shard_meta(atlas_shard *s, char **err) {
  char *path = ds_path_join(s->dir, "meta.json");
  if (!path) return ds_err(err, "out of memory");
  json_t *j = ds_json_load_object(path, err);
  int64_t bs = 0, n = 0, st = 0, level = 0;
  double dsize = 0, lv = 0;
  int rc = !j || meta_version(j, path, err) ||
           meta_int(j, path, "block_size", 1, INT64_MAX, &bs, err) ||
           meta_int(j, path, "stored_examples", 0, INT64_MAX, &n, err) ||
           meta_int(j, path, "compression_strategy", 0, 3, &st, err) ||
           meta_number(j, path, "compression_level", &lv, err) ||
           meta_number(j, path, "compression_dict_size", &dsize, err);
  if (!rc && json_is_integer(json_object_get(j, "compression_level")))
    level = json_integer_value(json_object_get(j, "compression_level"));
  json_decref(j);
  free(path);
  if (rc) return -1;
  s->meta = (atlas_meta){1, (uint64_t)bs, (uint64_t)n, (int)st, level, dsize};
  s->num_blocks = s->meta.stored_examples / s->meta.block_size +
                  (s->meta.stored_examples % s->meta.block_size != 0);
  return 0;
}

/* Read and check ROOT/meta.json: strategy and the shard_sizes array. */
static int read_root_meta(atlas_reader *r, json_t **sizes, json_t **root,
                          char **err) {
  char *path = ds_path_join(r->path, "meta.json");
  if (!path) return ds_err(err, "out of memory");
  json_t *j = ds_json_load_object(path, err);
  int64_t st = 0;
  int rc = !j || meta_version(j, path, err) ||
           meta_int(j, path, "compression_strategy", 0, 3, &st, err);
  json_t *a = rc ? NULL : json_object_get(j, "shard_sizes");
  if (!rc && !json_is_array(a))
    rc = ds_err(err, "%s: \"shard_sizes\" is %s", path,
                a ? "not an array" : "missing");
  for (size_t i = 0; !rc && i < json_array_size(a); i++) {
    json_t *v = json_array_get(a, i);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
      rc = ds_err(err, "%s: shard_sizes[%zu] is not a non-negative integer",
                  path, i);
  }
  free(path);
  if (rc) {
    json_decref(j);
    return -1;
  }
  r->root_strategy = (int)st;
  *root = j;
  *sizes = a;
  return 0;
}

/* ------------------------------------------------------- index.npy */

/* Entry i of a shard's index, widened to 64 bits. */
static uint64_t entry(const atlas_shard *s, uint64_t i) {
  const uint8_t *p = s->entries + i * s->width;
  uint64_t v = 0;
  for (unsigned k = 0; k < s->width; k++)
    v = s->big_endian ? v << 8 | p[k] : v | (uint64_t)p[k] << (8 * k);
  return v;
}

/* Load index.npy and check its header: 1-D unsigned, num_blocks + 1 long. */
static int map_index(atlas_shard *s, char **err) {
  char *path = ds_path_join(s->dir, "index.npy");
  if (!path) return ds_err(err, "out of memory");
  int rc = ds_file_load_index(&s->index, path, err);
  free(path);
  if (rc) return -1;
  ds_npy a;
  const uint8_t *p = s->index.data ? s->index.data : (const uint8_t *)"";
  if (ds_npy_parse(p, (size_t)s->index.size, &a, err)) {
    ds_err_prefix(err, s->index.path);
    return -1;
  }
  if (a.kind != 'u' || a.structured || a.ndim != 1)
    return ds_err(err, "%s: dtype %s with %d dimension(s): expected a 1-D array "
                       "of unsigned integers (|u1, <u2, <u4, <u8)",
                  s->index.path, a.descr, a.ndim);
  if (a.shape[0] != s->num_blocks + 1)
    return ds_err(err, "%s: %llu entries, but %s/meta.json says %llu examples in "
                       "blocks of %llu, which needs %llu blocks (%llu entries)",
                  s->index.path, (unsigned long long)a.shape[0], s->dir,
                  (unsigned long long)s->meta.stored_examples,
                  (unsigned long long)s->meta.block_size,
                  (unsigned long long)s->num_blocks,
                  (unsigned long long)s->num_blocks + 1);
  s->entries = a.data;
  s->width = a.itemsize;
  s->big_endian = a.byteorder == '>';
  snprintf(s->dtype, sizeof s->dtype, "%s", a.descr);
  return 0;
}

/* Open data.bin (read block by block); only an empty shard may lack it. */
static int map_data(atlas_shard *s, char **err) {
  char *path = ds_path_join(s->dir, "data.bin");
  if (!path) return ds_err(err, "out of memory");
  int rc = 0;
  if (!ds_path_exists(path, NULL) && errno == ENOENT) {
    if (s->meta.stored_examples > 0)
      rc = ds_err(err, "%s: missing, but %s/meta.json says %llu examples", path,
                  s->dir, (unsigned long long)s->meta.stored_examples);
  } else {
    rc = ds_file_open(&s->data, path, err);
    s->has_data = rc == 0;
  }
  free(path);
  return rc;
}

/* Offsets start at 0, never decrease, and end at the size of data.bin. */
/* meta.json's block_size must be a count the blocks can hold: a pickled
 * example takes at least one byte, and a block of n stored bytes holds at
 * most n bytes of pickle (uncompressed) or what a zstd frame of n bytes
 * can expand to (128 KiB per 3-byte block header). A claim no block can
 * hold (10^15 examples over a block of a few bytes) is refused at open,
 * rather than have count(*) walk rows that cannot exist. */
static int check_claims(const atlas_shard *s, char **err) {
  uint64_t largest = 0;
  for (uint64_t b = 0; b < s->num_blocks; b++) {
    uint64_t a = entry(s, b), e = entry(s, b + 1);
    if (e - a > largest) largest = e - a;
  }
  if (s->num_blocks == 0) return 0;
  uint64_t cap = s->meta.compression_strategy == ATLAS_NO_COMPRESSION
                     ? largest
                     : (largest / 3 + 1) * (uint64_t)ZSTD_BLOCKSIZE_MAX;
  uint64_t want = s->meta.block_size < s->meta.stored_examples ? s->meta.block_size
                                                               : s->meta.stored_examples;
  if (want > cap)
    return ds_err(err, "%s/meta.json: block_size %llu and stored_examples %llu "
                       "cannot be right: the largest block of %s has %llu bytes, "
                       "room for at most %llu examples",
                  s->dir, (unsigned long long)s->meta.block_size,
                  (unsigned long long)s->meta.stored_examples,
                  s->has_data ? s->data.path : "data.bin",
                  (unsigned long long)largest, (unsigned long long)cap);
  return 0;
}

static int check_offsets(const atlas_shard *s, char **err) {
  uint64_t prev = entry(s, 0);
  if (prev != 0)
    return ds_err(err, "%s: entry 0 is %llu, expected 0 (the first block starts "
                       "data.bin)",
                  s->index.path, (unsigned long long)prev);
  for (uint64_t b = 1; b <= s->num_blocks; b++) {
    uint64_t e = entry(s, b);
    if (e < prev)
      return ds_err(err, "%s: entry %llu is %llu, less than entry %llu (%llu): "
                         "offsets must not decrease",
                    s->index.path, (unsigned long long)b, (unsigned long long)e,
                    (unsigned long long)b - 1, (unsigned long long)prev);
    prev = e;
  }
  if (prev != s->data.size) {
    if (!s->has_data)
      return ds_err(err, "%s: last entry (entry %llu) is %llu, but %s/data.bin "
                         "does not exist",
                    s->index.path, (unsigned long long)s->num_blocks,
                    (unsigned long long)prev, s->dir);
    /* a data.bin cut short opens: its intact blocks read, the ones past
     * its end fail naming the file and offset (stored_range) */
    if (prev < s->data.size)
      return ds_err(err, "%s: last entry (entry %llu) is %llu, but %s has %llu "
                         "bytes",
                    s->index.path, (unsigned long long)s->num_blocks,
                    (unsigned long long)prev, s->data.path,
                    (unsigned long long)s->data.size);
  }
  return check_claims(s, err);
}

/* ---------------------------------------------------- dictionaries */

/* Load the dictionary file d->path into d (zd, id). */
static int load_dict(atlas_dict *d, char **err) {
  ds_file f;
  if (ds_file_load_index(&f, d->path, err)) return -1;
  int rc = 0;
  if (f.size == 0) rc = ds_err(err, "%s: empty dictionary file", d->path);
  else if (ds_zstd_dict_new(f.data, (size_t)f.size, &d->zd, err) == 0)
    d->id = ZSTD_getDictID_fromDict(f.data, (size_t)f.size);
  else {
    ds_err_prefix(err, d->path);
    rc = -1;
  }
  ds_file_close(&f);
  return rc;
}

/* Free what d holds (not d itself). */
static void free_dict(atlas_dict *d) {
  ds_zstd_dict_free(d->zd);
  free(d->path);
}

/* Strategy 3: the shard's own zstd_dict.bin. */
static int load_shard_dict(atlas_shard *s, char **err) {
  s->own.path = ds_path_join(s->dir, "zstd_dict.bin");
  if (!s->own.path) return ds_err(err, "out of memory");
  if (!ds_path_exists(s->own.path, NULL))
    return ds_err(err, "%s: missing, but %s/meta.json says compression_strategy "
                       "3 (this shard's own dictionary)",
                  s->own.path, s->dir);
  if (load_dict(&s->own, err)) return -1;
  s->dict = &s->own;
  return 0;
}

/* Strategy 2: the shared dictionary, loaded on first need. `why` is the
 * meta.json that asks for it. */
static int load_shared_dict(atlas_reader *r, const char *given,
                            const char *why, char **err) {
  if (r->shared.zd) return 0;
  if (!given && r->bare)
    return ds_err(err, "%s/meta.json: compression_strategy 2 needs the dataset's "
                       "shared dictionary (zstd_dict.bin in the dataset root), "
                       "which a bare shard directory does not have: open the "
                       "dataset root, or name the dictionary file",
                  r->path);
  r->shared.path = given ? strdup(given) : ds_path_join(r->path, "zstd_dict.bin");
  if (!r->shared.path) return ds_err(err, "out of memory");
  if (!given && !ds_path_exists(r->shared.path, NULL))
    return ds_err(err, "%s: missing, but %s says compression_strategy 2 (shared "
                       "dictionary)",
                  r->shared.path, why);
  return load_dict(&r->shared, err);
}

/* Give every strategy-2 shard the shared dictionary. */
static int attach_shared(atlas_reader *r, const char *given, char **err) {
  if (r->root_strategy == ATLAS_SHARED_DICTIONARY) {
    char *why = ds_path_join(r->path, "meta.json");
    int rc = why ? load_shared_dict(r, given, why, err) : ds_err(err, "out of memory");
    free(why);
    if (rc) return -1;
  }
  for (size_t k = 0; k < r->nshards; k++) {
    atlas_shard *s = &r->shards[k];
    if (s->meta.compression_strategy != ATLAS_SHARED_DICTIONARY) continue;
    char *why = ds_path_join(s->dir, "meta.json");
    int rc = why ? load_shared_dict(r, given, why, err) : ds_err(err, "out of memory");
    free(why);
    if (rc) return -1;
    s->dict = &r->shared;
  }
  return 0;
}

/* ---------------------------------------------------------- shards */

/* Open one shard directory: meta, index, data.bin, own dictionary. */
static int open_shard(atlas_shard *s, char **err) {
  if (read_shard_meta(s, err) || map_index(s, err) || map_data(s, err) ||
      check_offsets(s, err))
    return -1;
  if (!(s->checked = calloc(s->num_blocks / 64 + 1, sizeof *s->checked)))
    return ds_err(err, "out of memory");
  if (s->meta.compression_strategy == ATLAS_SHARD_DICTIONARY)
    return load_shard_dict(s, err);
  return 0;
}

/* Release what one shard holds. */
static void close_shard(atlas_shard *s) {
  ds_file_close(&s->index);
  ds_file_close(&s->data);
  free_dict(&s->own);
  free(s->checked);
  free(s->dir);
  free(s->name);
}

/* Free a list of names. */
static void free_names(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Classify one directory entry: 1 shard, 0 skip, -1 error. */
static int classify_entry(const char *root, const char *name, char **err) {
  if (name[0] == '.') return 0; /* ".", "..", hidden (.ipynb_checkpoints) */
  char *p = ds_path_join(root, name);
  if (!p) return ds_err(err, "out of memory");
  int is_dir = 0, exists = ds_path_exists(p, &is_dir);
  free(p);
  if (!exists || !is_dir) return 0; /* files: meta.json, zstd_dict.bin, ... */
  if (!all_digits(name))
    return ds_err(err, "%s/%s: not a shard directory (shard directories are "
                       "named with digits only; hidden ones are ignored)",
                  root, name);
  return 1;
}

/* The shard directory names of a root, in numeric order; 1 when the
 * file system cannot list (http(s)): then the names come from meta.json. */
static int list_shards(const char *root, char ***out, size_t *n, char **err) {
  ds_vfs_list *d = ds_vfs_list_open(NULL, root);
  if (!d && errno == ENOTSUP) return 1;
  if (!d) return ds_err(err, "%s: cannot list: %s", root, strerror(errno));
  char **names = NULL;
  size_t cnt = 0, cap = 0;
  int rc = 0;
  const char *name;
  while (rc == 0 && (name = ds_vfs_list_next(d)) != NULL) {
    int c = classify_entry(root, name, err);
    if (c <= 0) {
      rc = c;
      continue;
    }
    if (cnt == cap) {
      cap = cap ? 2 * cap : 16;
      char **nn = realloc(names, cap * sizeof *nn);
      if (!nn) { rc = ds_err(err, "out of memory"); break; }
      names = nn;
    }
    if (!(names[cnt] = strdup(name))) rc = ds_err(err, "out of memory");
    else cnt++;
  }
  ds_vfs_list_close(d);
  if (rc == 0 && cnt) qsort(names, cnt, sizeof *names, cmp_names);
  for (size_t i = 1; rc == 0 && i < cnt; i++)
    if (cmp_numeric(names[i - 1], names[i]) == 0)
      rc = ds_err(err, "%s: shard directories '%s' and '%s' have the same number",
                  root, names[i - 1], names[i]);
  if (rc) {
    free_names(names, cnt);
    return -1;
  }
  *out = names;
  *n = cnt;
  return 0;
}

/* Root shard_sizes: one per shard directory, each equal to that shard's
 * stored_examples. */
static int check_shard_sizes(const atlas_reader *r, json_t *sizes, char **err) {
  for (size_t k = 0; k < r->nshards; k++) {
    const atlas_shard *s = &r->shards[k];
    uint64_t want = (uint64_t)json_integer_value(json_array_get(sizes, k));
    if (want != s->meta.stored_examples)
      return ds_err(err, "%s/meta.json: shard_sizes[%zu] is %llu, but %s/meta.json "
                         "says stored_examples %llu",
                    r->path, k, (unsigned long long)want, s->dir,
                    (unsigned long long)s->meta.stored_examples);
  }
  return 0;
}

/* Allocate the shard array with directory paths and names. */
static int make_shards(atlas_reader *r, char **names, size_t n, char **err) {
  r->shards = calloc(n ? n : 1, sizeof *r->shards);
  if (!r->shards) return ds_err(err, "out of memory");
  r->nshards = n;
  for (size_t k = 0; k < n; k++) {
    atlas_shard *s = &r->shards[k];
    s->name = strdup(names ? names[k] : ".");
    s->dir = names ? ds_path_join(r->path, names[k]) : strdup(r->path);
    if (!s->name || !s->dir) return ds_err(err, "out of memory");
  }
  return 0;
}

/* The shard names of a root that cannot be listed (a dataset over
 * http(s)): one per shard_sizes entry of meta.json, "0".."count-1"
 * zero-padded to the width of the last, as the writers name them at
 * close (docs/formats/atlas.md section 3: 12 shards are 00..11). */
static int shards_by_meta(size_t count, char ***out, size_t *n, char **err) {
  char **names = calloc(count ? count : 1, sizeof *names);
  if (!names) return ds_err(err, "out of memory");
  int width = snprintf(NULL, 0, "%zu", count ? count - 1 : 0);
  for (size_t k = 0; k < count; k++)
    if (!(names[k] = ds_strf("%0*zu", width, k))) {
      free_names(names, k);
      return ds_err(err, "out of memory");
    }
  *out = names;
  *n = count;
  return 0;
}

/* A dataset root: root meta, shard list, every shard, size cross-check. */
static int open_root(atlas_reader *r, char **err) {
  json_t *root = NULL, *sizes = NULL;
  char *meta = ds_path_join(r->path, "meta.json");
  int exists = meta && ds_path_exists(meta, NULL);
  free(meta);
  if (!exists)
    return ds_err(err, "%s: neither an atlas dataset root (no meta.json) nor a "
                       "shard directory (no index.npy)", r->path);
  if (read_root_meta(r, &sizes, &root, err)) return -1;
  char **names = NULL;
  size_t n = 0;
  int rc = list_shards(r->path, &names, &n, err);
  if (rc == 1) rc = shards_by_meta(json_array_size(sizes), &names, &n, err);
  if (rc == 0 && n != json_array_size(sizes))
    rc = ds_err(err, "%s/meta.json: shard_sizes lists %zu shards, but %s has %zu "
                     "shard directories",
                r->path, json_array_size(sizes), r->path, n);
  if (rc == 0) rc = make_shards(r, names, n, err);
  for (size_t k = 0; rc == 0 && k < n; k++) rc = open_shard(&r->shards[k], err);
  if (rc == 0) rc = check_shard_sizes(r, sizes, err);
  free_names(names, n);
  json_decref(root);
  return rc;
}

/* A bare shard directory: one shard named ".". */
static int open_bare(atlas_reader *r, char **err) {
  r->bare = 1;
  r->root_strategy = -1;
  if (make_shards(r, NULL, 1, err)) return -1;
  return open_shard(&r->shards[0], err);
}

/* First global index of every shard, and the total (overflow-checked). */
static int sum_counts(atlas_reader *r, char **err) {
  uint64_t total = 0;
  for (size_t k = 0; k < r->nshards; k++) {
    r->shards[k].first = total;
    uint64_t n = r->shards[k].meta.stored_examples;
    if (n > (uint64_t)INT64_MAX - total) /* rowids are signed 64-bit in SQL */
      return ds_err(err, "%s: more than 2^63-1 examples in total", r->path);
    total += n;
  }
  r->count = total;
  return 0;
}

/* ------------------------------------------------------------- API */

/* Open the dataset at path once. */
static int open_once(const char *path, const char *dict_path, atlas_reader **out,
                     char **err) {
  *out = NULL;
  atlas_reader *r = calloc(1, sizeof *r);
  if (!r || !(r->path = strdup(path))) {
    free(r);
    return ds_err(err, "out of memory");
  }
  for (size_t n = strlen(r->path); n > 1 && r->path[n - 1] == '/'; n--)
    r->path[n - 1] = 0;
  int is_dir = 0;
  char *idx = ds_path_join(r->path, "index.npy");
  int rc = 0;
  if (!idx) rc = ds_err(err, "out of memory");
  else if (!ds_path_exists(r->path, &is_dir))
    rc = ds_err(err, "%s: cannot open: %s", r->path, strerror(errno));
  else if (!is_dir)
    rc = ds_err(err, "%s: not a directory (expected an atlas dataset root or "
                     "shard directory)", r->path);
  else
    rc = ds_path_exists(idx, NULL) ? open_bare(r, err) : open_root(r, err);
  free(idx);
  if (rc == 0) rc = attach_shared(r, dict_path, err);
  if (rc == 0) rc = sum_counts(r, err);
  if (rc) {
    atlas_close(r);
    return -1;
  }
  *out = r;
  return 0;
}

/* An open through ds_open_stable (core/open_stable.h): the set is the
 * root folder (a writer exchanges it whole) and its meta.json; the files
 * held are checked by atlas_stale. */
typedef struct atlas_opening {
  const char *path, *dict_path;
  atlas_reader *r;
} atlas_opening;

/* ds_open_steps.paths */
static int opening_paths(void *ctx, ds_path_set *set, char **err) {
  atlas_opening *o = ctx;
  char *meta = ds_path_join(o->path, "meta.json");
  int bad = !meta || ds_path_set_add(set, o->path) || ds_path_set_add(set, meta);
  free(meta);
  return bad ? ds_err(err, "out of memory") : 0;
}

/* ds_open_steps.open */
static int opening_open(void *ctx, char **err) {
  atlas_opening *o = ctx;
  return open_once(o->path, o->dict_path, &o->r, err);
}

/* ds_open_steps.stale */
static int opening_stale(void *ctx) { return atlas_stale(((atlas_opening *)ctx)->r); }

/* ds_open_steps.close */
static void opening_close(void *ctx) {
  atlas_opening *o = ctx;
  atlas_close(o->r);
  o->r = NULL;
}

int atlas_open_dict(const char *path, const char *dict_path, atlas_reader **out,
                    char **err) {
  static const ds_open_steps steps = {opening_paths, opening_open, opening_stale,
                                      opening_close, NULL};
  atlas_opening o = {path, dict_path, NULL};
  int rc = ds_open_stable(path, &steps, &o, err);
  *out = rc ? NULL : o.r;
  return rc;
}

int atlas_open(const char *path, atlas_reader **out, char **err) {
  return atlas_open_dict(path, NULL, out, err);
}

void atlas_close(atlas_reader *r) {
  if (!r) return;
  for (size_t k = 0; k < r->nshards; k++) close_shard(&r->shards[k]);
  free(r->shards);
  free_dict(&r->shared);
  free(r->path);
  free(r);
}

uint64_t atlas_count(const atlas_reader *r) { return r->count; }
/* ds_prefetch_steps.prefetchable: its data.bin. */
static int shard_prefetchable(const void *ctx, size_t s) {
  return ds_file_prefetchable(&((const atlas_reader *)ctx)->shards[s].data);
}

/* ds_prefetch_steps.locate: the index a row is sorted by is its block. */
static void locate_block(const void *ctx, uint64_t g, size_t *shard, uint64_t *block) {
  uint64_t pos;
  atlas_locate(ctx, g, shard, block, &pos);
}

/* ds_prefetch_steps.shard: the blocks of rows v[0..n) of shard s, each
 * once. */
static void prefetch_blocks(const void *ctx, size_t s, const ds_row_at *v, size_t n,
                            ds_vfs_range *rg) {
  const atlas_reader *r = ctx;
  if (!ds_file_prefetchable(&r->shards[s].data)) return;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    ds_vfs_range b;
    char *e = NULL;
    if (atlas_block_range(r, s, v[i].index, &b.off, &b.len, &e) == 0 && b.len > 0 &&
        (k == 0 || b.off != rg[k - 1].off))
      rg[k++] = b;
    free(e);
  }
  if (k) ds_file_prefetch(&r->shards[s].data, rg, k);
}

void atlas_read_ahead(const atlas_reader *r, size_t shard, uint64_t off, uint64_t len) {
  if (shard < r->nshards) ds_file_read_ahead(&r->shards[shard].data, off, len);
}

void atlas_prefetch(const atlas_reader *r, const uint64_t *g, size_t n) {
  static const ds_prefetch_steps steps = {shard_prefetchable, locate_block, prefetch_blocks, NULL};
  ds_prefetch_rows(&steps, r, r->nshards, g, n);
}

size_t atlas_nshards(const atlas_reader *r) { return r->nshards; }
int atlas_is_bare_shard(const atlas_reader *r) { return r->bare; }
int atlas_root_strategy(const atlas_reader *r) { return r->root_strategy; }

uint64_t atlas_shard_count(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].meta.stored_examples : 0;
}

const char *atlas_shard_path(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].dir : NULL;
}

const char *atlas_shard_name(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].name : NULL;
}

const atlas_meta *atlas_shard_meta(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? &r->shards[shard].meta : NULL;
}

uint64_t atlas_block_size(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].meta.block_size : 0;
}

uint64_t atlas_num_blocks(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].num_blocks : 0;
}

int atlas_shard_strategy(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].meta.compression_strategy : -1;
}

int atlas_has_data(const atlas_reader *r, size_t shard) {
  return shard < r->nshards && r->shards[shard].has_data;
}

uint64_t atlas_data_size(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].data.size : 0;
}

const char *atlas_index_dtype(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].dtype : NULL;
}

uint64_t atlas_index_entry(const atlas_reader *r, size_t shard, uint64_t i) {
  if (shard >= r->nshards || i > r->shards[shard].num_blocks) return 0;
  return entry(&r->shards[shard], i);
}

const char *atlas_dict_path(const atlas_reader *r, size_t shard) {
  return shard < r->nshards && r->shards[shard].dict ? r->shards[shard].dict->path : NULL;
}

unsigned atlas_dict_id(const atlas_reader *r, size_t shard) {
  return shard < r->nshards && r->shards[shard].dict ? r->shards[shard].dict->id : 0;
}

uint64_t atlas_shard_first(const atlas_reader *r, size_t shard) {
  return shard < r->nshards ? r->shards[shard].first : r->count;
}

void atlas_locate(const atlas_reader *r, uint64_t g, size_t *shard,
                  uint64_t *block, uint64_t *pos) {
  *block = *pos = 0;
  if (g >= r->count) {
    *shard = r->nshards;
    return;
  }
  /* the first shard whose end (first + count) lies past g */
  size_t lo = 0, hi = r->nshards - 1;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    const atlas_shard *s = &r->shards[mid];
    if (s->first + s->meta.stored_examples > g) hi = mid;
    else lo = mid + 1;
  }
  const atlas_shard *s = &r->shards[lo];
  uint64_t j = g - s->first;
  *shard = lo;
  *block = j / s->meta.block_size;
  *pos = j % s->meta.block_size;
}

uint64_t atlas_block_examples(const atlas_reader *r, size_t shard,
                              uint64_t block) {
  if (shard >= r->nshards || block >= r->shards[shard].num_blocks) return 0;
  const atlas_shard *s = &r->shards[shard];
  if (block + 1 < s->num_blocks) return s->meta.block_size;
  return s->meta.stored_examples - block * s->meta.block_size;
}

int atlas_block_range(const atlas_reader *r, size_t shard, uint64_t block,
                      uint64_t *offset, uint64_t *length, char **err) {
  if (shard >= r->nshards)
    return ds_err(err, "%s: shard %zu does not exist (%zu shards)", r->path,
                  shard, r->nshards);
  const atlas_shard *s = &r->shards[shard];
  if (block >= s->num_blocks)
    return ds_err(err, "%s: block %llu does not exist (%llu blocks)", s->dir,
                  (unsigned long long)block, (unsigned long long)s->num_blocks);
  *offset = entry(s, block);
  *length = entry(s, block + 1) - *offset; /* non-decreasing: checked */
  return 0;
}

/* A frame naming another dictionary than the shard's: say which. */
static int check_frame_dict(const atlas_shard *s, uint64_t block,
                            const uint8_t *src, size_t n, char **err) {
  unsigned fid = ds_zstd_frame_dict_id(src, n);
  if (fid == 0 || (s->dict && fid == s->dict->id))
    return 0; /* none named, or the right one */
  if (!s->dict)
    return ds_err(err, "%s: block %llu was compressed with dictionary %u, but "
                       "%s/meta.json says compression_strategy %d (no dictionary)",
                  s->data.path, (unsigned long long)block, fid, s->dir,
                  s->meta.compression_strategy);
  return ds_err(err, "%s: block %llu was compressed with dictionary %u, but %s "
                     "has dictionary %u%s",
                s->data.path, (unsigned long long)block, fid, s->dict->path,
                s->dict->id, s->dict->id ? "" : " (raw content, no ID)");
}

/* The block's range in data.bin, refusing an empty block. */
static int stored_range(const atlas_reader *r, size_t shard, uint64_t block,
                        uint64_t *off, uint64_t *len, char **err) {
  if (atlas_block_range(r, shard, block, off, len, err)) return -1;
  const atlas_shard *s = &r->shards[shard];
  if (*off > s->data.size || *len > s->data.size - *off)
    return ds_err(err, "%s: block %llu: %llu bytes at offset %llu run past the end "
                       "of the file (%llu bytes)",
                  s->data.path, (unsigned long long)block, (unsigned long long)*len,
                  (unsigned long long)*off, (unsigned long long)s->data.size);
  if (*len == 0)
    return ds_err(err, "%s: block %llu is empty (0 bytes at offset %llu)",
                  s->data.path, (unsigned long long)block, (unsigned long long)*off);
  return 0;
}

/* Bytes [off, off + len) of the shard's data.bin through the window v,
 * its read-ahead capped at ATLAS_VIEW_AHEAD unless its owner set a cap. */
static int read_data(const atlas_shard *s, ds_view *v, uint64_t off, uint64_t len,
                     const uint8_t **p, char **err) {
  if (!v->max_ahead) v->max_ahead = ATLAS_VIEW_AHEAD;
  return ds_view_read(v, &s->data, off, len, p, err);
}

int atlas_block_stored(const atlas_reader *r, ds_view *v, size_t shard,
                       uint64_t block, const uint8_t **p, size_t *n, char **err) {
  uint64_t off, len;
  if (stored_range(r, shard, block, &off, &len, err)) return -1;
  if (read_data(&r->shards[shard], v, off, len, p, err)) return -1;
  *n = (size_t)len;
  return 0;
}

/* Prefix *err with "<data.bin>: block B (N bytes at offset O): ". */
static int block_error(const atlas_shard *s, uint64_t block, uint64_t len,
                       uint64_t off, char **err) {
  char *why = *err;
  *err = NULL;
  ds_err(err, "%s: block %llu (%llu bytes at offset %llu): %s", s->data.path,
         (unsigned long long)block, (unsigned long long)len, (unsigned long long)off,
         why ? why : "?");
  free(why);
  return -1;
}

int atlas_block(const atlas_reader *r, ds_zstd_ctx *z, ds_view *v, size_t shard,
                uint64_t block, ds_buf *buf, const uint8_t **p, size_t *n,
                char **err) {
  uint64_t off, len;
  if (stored_range(r, shard, block, &off, &len, err)) return -1;
  const atlas_shard *s = &r->shards[shard];
  if (s->meta.compression_strategy == ATLAS_NO_COMPRESSION) {
    /* the pickle itself: read into buf, which the decoded values may
     * point into for as long as the block is kept */
    if ((buf->max && len > buf->max) || len > SIZE_MAX)
      return ds_err_too_big(err, "block", len, buf->max), block_error(s, block, len, off, err);
    if (ds_buf_reserve(buf, (size_t)len))
      return ds_err(err, "%s: block %llu: out of memory for %llu bytes", s->data.path,
                    (unsigned long long)block, (unsigned long long)len);
    if (ds_file_read(&s->data, off, len, buf->data, err)) return -1;
    buf->len = (size_t)len;
    *p = buf->data;
    *n = buf->len;
    return 0;
  }
  const uint8_t *src;
  if (read_data(s, v, off, len, &src, err)) return -1;
  if (check_frame_dict(s, block, src, (size_t)len, err)) return -1;
  z->dict = s->dict ? s->dict->zd : NULL;
  if (!buf->cap) { /* a fresh buffer: exactly the size the frame declares
                    * (when plausible and within max_value_bytes: codec.c
                    * refuses the rest) */
    uint64_t want = ds_zstd_content_size(src, (size_t)len);
    if (want && want <= z->max_out && (!buf->max || want <= buf->max) &&
        want / ZSTD_BLOCKSIZE_MAX <= len / 3 + 1 && (buf->data = malloc((size_t)want)) != NULL)
      buf->cap = (size_t)want;
  }
  if (ds_zstd_decompress(z, src, (size_t)len, buf, err))
    return block_error(s, block, len, off, err);
  *p = buf->data;
  *n = buf->len;
  return 0;
}

int atlas_stale(const atlas_reader *r) {
  if (!r) return 0;
  for (size_t k = 0; k < r->nshards; k++)
    if (ds_file_stale(&r->shards[k].index) || ds_file_stale(&r->shards[k].data)) return 1;
  return 0;
}

int atlas_block_checked(const atlas_reader *r, size_t shard, uint64_t block) {
  if (shard >= r->nshards || block >= r->shards[shard].num_blocks) return 0;
  uint64_t w = __atomic_load_n(&r->shards[shard].checked[block / 64], __ATOMIC_RELAXED);
  return (int)(w >> (block % 64) & 1);
}

void atlas_block_set_checked(const atlas_reader *r, size_t shard, uint64_t block) {
  if (shard >= r->nshards || block >= r->shards[shard].num_blocks) return;
  __atomic_fetch_or(&r->shards[shard].checked[block / 64], (uint64_t)1 << (block % 64),
                    __ATOMIC_RELAXED);
}
