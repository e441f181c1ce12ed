/* bagz.c - the bagz reader (see bagz.h). Opening reads only each file's
 * last 8 bytes (tail) or sizes (separate); limits are checked when a
 * record is read, and every read is bounds-checked, so a corrupt file
 * gives an error naming the file, record and byte offset. Limits and
 * records are read with pread through the caller's bagz_io windows, so a
 * file that shrinks meanwhile is an error, not a fault. */
#include "bagz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/big_alloc.h"
#include "core/common.h"
#include "core/mapped_file.h"
#include "core/open_stable.h"
#include "formats/bagz/bagz_tail.h"
#include "formats/file_kind.h"

/* "dir/x.bagz" -> "dir/limits.x.bagz" */
static char *limits_path(const char *path) {
  const char *base = ds_basename(path);
  return ds_strf("%.*slimits.%s", (int)(base - path), path, base);
}

static int ends_with(const char *s, const char *suffix) {
  size_t a = strlen(s), b = strlen(suffix);
  return a >= b && memcmp(s + a - b, suffix, b) == 0;
}

/* The error for a file whose last 8 bytes are no limits tail: "not a bagz
 * file (no valid limits tail)", with the likely cause when limits.NAME
 * lies beside it, the file looks like a bag cut short (bagz_tail.h), or
 * it is of another kind (file_kind.h: "it looks like a tar archive"),
 * then `why`. Returns -1. */
static int not_a_tail(const bagz_shard *s, const char *why, char **err) {
  char *lp = limits_path(s->data.path);
  char cut[400];
  const char *kind;
  if (lp && ds_path_exists(lp, NULL))
    ds_err(err, "%s: not a bagz file (no valid limits tail): %s exists beside "
                "it: add limits=separate (%s)", s->data.path, ds_basename(lp),
           why);
  else if (bagz_tail_cut(&s->data, cut, sizeof cut))
    ds_err(err, "%s: %s (no valid limits tail: %s)", s->data.path, cut, why);
  else if ((kind = ds_file_kind_of(s->data.path)) != NULL)
    ds_err(err, "%s: not a bagz file: it looks like %s (no valid limits tail: %s)",
           s->data.path, kind, why);
  else
    ds_err(err, "%s: not a bagz file (no valid limits tail): %s", s->data.path,
           why);
  free(lp);
  return -1;
}

/* Work out the records section and count of a tail-limits shard. A tail is
 * taken only when consistent as far as opening can see without reading
 * every limit: the last limit (where the records end) lies inside the file,
 * leaves a whole number of limits after it, and the first limit is not
 * beyond it. */
static int locate_tail(bagz_shard *s, char **err) {
  uint64_t size = s->data.size;
  s->limits = &s->data;
  if (size == 0) return 0; /* an empty bag is an empty file */
  if (size < 8)
    return ds_err(err, "%s: file has %llu bytes, too few for a limits section "
                       "(8 bytes per record)",
                  s->data.path, (unsigned long long)size);
  uint64_t end, first;
  char why[200];
  if (ds_file_u64le(&s->data, size - 8, &end, err)) return -1;
  if (end > size - 8) {
    snprintf(why, sizeof why, "limits end at byte %llu but the file has %llu "
             "bytes (last limit, at offset %llu)", (unsigned long long)end,
             (unsigned long long)size, (unsigned long long)(size - 8));
    return not_a_tail(s, why, err);
  }
  if ((size - end) % 8 != 0) {
    snprintf(why, sizeof why, "limits section from byte %llu to %llu is not a "
             "multiple of 8 bytes", (unsigned long long)end,
             (unsigned long long)size);
    return not_a_tail(s, why, err);
  }
  if (ds_file_u64le(&s->data, end, &first, err)) return -1;
  if (first > end) {
    snprintf(why, sizeof why, "the first limit (byte %llu) says %llu, past "
             "the last (%llu)", (unsigned long long)end,
             (unsigned long long)first, (unsigned long long)end);
    return not_a_tail(s, why, err);
  }
  s->records_size = end;
  s->limits_off = end;
  s->count = (size - end) / 8;
  return 0;
}

/* Open the `limits.<name>` file of a separate-limits shard. */
static int locate_separate(bagz_shard *s, char **err) {
  char *lp = limits_path(s->data.path);
  if (!lp) return ds_err(err, "out of memory");
  int rc = ds_file_open(&s->limits_file, lp, err);
  free(lp);
  if (rc) return -1;
  ds_file_hint_index(&s->limits_file); /* a remote limits file: cached whole */
  if (s->limits_file.size % 8 != 0)
    return ds_err(err, "%s: size %llu is not a multiple of 8 (one u64 limit per "
                       "record)",
                  s->limits_file.path, (unsigned long long)s->limits_file.size);
  s->limits = &s->limits_file;
  s->limits_off = 0;
  s->records_size = s->data.size;
  s->count = s->limits_file.size / 8;
  /* the last limit is where the records end: short of the data file's end,
   * limits are missing and nothing says how many records there were (past
   * it, the data file is cut: those records fail when read) */
  uint64_t last = 0;
  if (s->count && ds_file_u64le(&s->limits_file, s->limits_file.size - 8, &last, err))
    return -1;
  if (last < s->data.size)
    return ds_err(err, "%s: its %llu limits end at byte %llu but %s has %llu bytes: "
                       "the limits file is cut short (or the data file has bytes "
                       "after its records), so the records after byte %llu cannot "
                       "be located",
                  s->limits_file.path, (unsigned long long)s->count,
                  (unsigned long long)last, s->data.path,
                  (unsigned long long)s->data.size, (unsigned long long)last);
  return 0;
}

/* Decide compression for one shard from the options and its name. */
static int shard_is_zstd(const bagz_options *o, const char *path) {
  if (o->compression == BAGZ_COMPRESSION_AUTO) return ends_with(path, ".bagz");
  return o->compression == BAGZ_COMPRESSION_ZSTD;
}

/* Load the dictionary file named in the options, if any. */
static int load_dictionary(bagz_reader *r, char **err) {
  if (!r->opts.dictionary_path) return 0;
  ds_file f;
  if (ds_file_load_index(&f, r->opts.dictionary_path, err)) return -1;
  int rc = ds_zstd_dict_new(f.data ? f.data : (const uint8_t *)"", (size_t)f.size,
                            &r->dict, err);
  if (rc) ds_err_prefix(err, r->opts.dictionary_path);
  ds_file_close(&f);
  return rc;
}

/* Common tail of both open functions: sizes, map, dictionary. `spec`
 * names the bag in errors about the set as a whole. */
static int finish_open(bagz_reader *r, const char *spec, char **err) {
  uint64_t *counts = malloc((r->nshards ? r->nshards : 1) * sizeof *counts);
  if (!counts) return ds_err(err, "out of memory");
  for (size_t i = 0; i < r->nshards; i++) counts[i] = r->shards[i].count;
  int rc = ds_shard_map_init(&r->map, r->opts.layout, counts, r->nshards, err);
  free(counts);
  if (rc) {
    ds_err_prefix(err, spec);
    return -1;
  }
  return load_dictionary(r, err);
}

static bagz_reader *reader_new(const bagz_options *opts, size_t nshards) {
  bagz_reader *r = calloc(1, sizeof *r);
  if (!r) return NULL;
  r->shards = calloc(nshards ? nshards : 1, sizeof *r->shards);
  if (!r->shards) {
    free(r);
    return NULL;
  }
  r->opts = *opts;
  r->opts.dictionary_path = NULL;
  if (opts->dictionary_path) {
    r->opts.dictionary_path = strdup(opts->dictionary_path);
    if (!r->opts.dictionary_path) {
      free(r->shards);
      free(r);
      return NULL;
    }
  }
  return r;
}

/* Shards [0, n) of r opened with tail limits: the first limit of each,
 * which locate_tail reads and which lies outside the tail a remote open
 * fetched when the limits are long, fetched for all of them in one round
 * (ds_vfs_prefetch_many) instead of one round trip per shard. Local files
 * take no hint; a read that fails here is reported by locate_tail. */
static void prefetch_first_limits(bagz_reader *r, size_t n) {
  ds_vfs_prefetch_set *sets = calloc(n + 1, sizeof *sets);
  ds_vfs_range *rg = calloc(n + 1, sizeof *rg);
  size_t ns = 0;
  for (size_t i = 0; sets && rg && i < n; i++) {
    const ds_file *f = &r->shards[i].data;
    uint64_t end;
    char *err = NULL;
    if (f->size >= 16 && ds_file_u64le(f, f->size - 8, &end, &err) == 0 && end <= f->size - 16) {
      rg[ns] = (ds_vfs_range){end, 8};
      ns += (size_t)ds_file_prefetch_set(f, &rg[ns], 1, &sets[ns]);
    }
    free(err);
  }
  if (ns > 1) ds_vfs_prefetch_many(sets, ns);
  free(sets);
  free(rg);
}

/* ds_files_steps.open (arg: the bagz_options): the files of a bag
 * (expanded from spec) once. */
static int open_files(const char *spec, const void *arg, const ds_shard_list *files,
                      void **out, char **err) {
  const bagz_options *opts = arg;
  *out = NULL;
  bagz_reader *r = reader_new(opts, files->n);
  if (!r) return ds_err(err, "out of memory");
  int rc = 0;
  int tail = opts->limits != BAGZ_LIMITS_SEPARATE && files->n > 1;
  /* with tail limits and several shards: every file opened first, then
   * their first limits fetched at once, then each located */
  for (size_t i = 0; i < files->n && rc == 0; i++) {
    bagz_shard *s = &r->shards[i];
    r->nshards = i + 1;
    rc = ds_file_open(&s->data, files->paths[i], err);
    if (rc == 0 && !tail)
      rc = opts->limits == BAGZ_LIMITS_SEPARATE ? locate_separate(s, err)
                                                : locate_tail(s, err);
    s->zstd = shard_is_zstd(opts, files->paths[i]);
  }
  if (rc == 0 && tail) prefetch_first_limits(r, files->n);
  for (size_t i = 0; i < files->n && rc == 0 && tail; i++) rc = locate_tail(&r->shards[i], err);
  if (rc == 0) rc = finish_open(r, spec, err);
  if (rc) {
    bagz_close(r);
    return -1;
  }
  *out = r;
  return 0;
}

/* ds_files_steps.side: with separate limits, the data file's limits file. */
static int opening_side(const void *arg, const char *file, ds_path_set *set) {
  if (((const bagz_options *)arg)->limits != BAGZ_LIMITS_SEPARATE) return 0;
  char *lp = limits_path(file);
  int bad = !lp || ds_path_set_add(set, lp);
  free(lp);
  return bad ? -1 : 0;
}

/* ds_files_steps.stale */
static int opening_stale(const void *r) { return bagz_stale(r); }

/* ds_files_steps.close */
static void opening_close(void *r) { bagz_close(r); }

/* ds_files_steps.incomplete: the shard set's rule; with separate limits
 * each data file is followed by its limits file. */
static int opening_incomplete(const char *spec, const void *arg, const ds_path_set *set) {
  return ds_shard_set_incomplete(
      set, ((const bagz_options *)arg)->limits == BAGZ_LIMITS_SEPARATE ? 2 : 1, spec);
}

/* An open of a bag through ds_open_files_stable (core/open_stable.h): the
 * files are expanded from the spec once per try; shard 0, the one a
 * sharded writer publishes last, is opened first. */
int bagz_open(const char *spec, const bagz_options *opts, bagz_reader **out,
              char **err) {
  static const ds_files_steps steps = {ds_files_expand_spec, opening_side,  open_files,
                                       opening_stale,        opening_close, opening_incomplete};
  *out = ds_open_files_stable(spec, &steps, opts, err);
  return *out ? 0 : -1;
}

int bagz_open_memory(const char *name, const uint8_t *data, size_t n,
                     const bagz_options *opts, bagz_reader **out, char **err) {
  *out = NULL;
  bagz_reader *r = reader_new(opts, 1);
  if (!r) return ds_err(err, "out of memory");
  r->nshards = 1;
  bagz_shard *s = &r->shards[0];
  int rc = ds_file_from_memory(&s->data, name, data, n, err);
  if (rc == 0) rc = locate_tail(s, err);
  s->zstd = shard_is_zstd(opts, name);
  if (rc == 0) rc = finish_open(r, name, err);
  if (rc) {
    bagz_close(r);
    return -1;
  }
  *out = r;
  return 0;
}

void bagz_close(bagz_reader *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nshards; i++) {
    ds_file_close(&r->shards[i].data);
    ds_file_close(&r->shards[i].limits_file);
    ds_big_free(r->shards[i].limits_mem, (size_t)(8 * r->shards[i].count));
  }
  free(r->shards);
  ds_shard_map_free(&r->map);
  ds_zstd_dict_free(r->dict);
  free((char *)r->opts.dictionary_path);
  free(r);
}

void bagz_io_free(bagz_io *io) {
  ds_view_free(&io->limits);
  ds_view_free(&io->data);
}

void bagz_io_idle(bagz_io *io) {
  ds_view *v[2] = {&io->limits, &io->data};
  for (int i = 0; i < 2; i++) {
    ds_view_reset(v[i]);
    if (v[i]->buf.cap > ((size_t)256 << 10)) ds_buf_free(&v[i]->buf);
  }
}

/* The shard's limits in memory once lookups jump around (the first thread
 * to get there reads them; NULL until then, or when they cannot be read:
 * the caller reads them entry by entry). The jumps are the shard's, not
 * io's: a cursor often serves a single lookup. */
static const uint8_t *limits_in_memory(bagz_shard *s) {
  const uint8_t *mem = __atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE);
  if (mem || __atomic_load_n(&s->limit_jumps, __ATOMIC_RELAXED) < DS_VIEW_JUMPS_TO_LOAD)
    return mem;
  return bagz_limits_load(s);
}

const uint8_t *bagz_limits_load(bagz_shard *s) {
  const uint8_t *mem = __atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE);
  if (mem || s->count > ((uint64_t)1 << 26)) return mem;
  char *err = NULL;
  /* huge pages where allowed: random lookups touch one limit each, and
   * with 4 KiB pages every one also missed the TLB (a page walk) */
  size_t size = (size_t)(8 * s->count);
  uint8_t *copy = ds_big_alloc(size);
  if (!copy) return NULL;
  if (ds_file_read(s->limits, s->limits_off, size, copy, &err)) {
    free(err);
    ds_big_free(copy, size);
    return NULL;
  }
  uint8_t *none = NULL;
  if (!__atomic_compare_exchange_n(&s->limits_mem, &none, copy, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    ds_big_free(copy, size); /* another thread was first */
    return none;
  }
  return copy;
}

/* Read-ahead of a limits window: 8 bytes a record, so this covers the
 * records of several data windows, and a scan's memory does not grow with
 * the size of the limits section. */
#define LIMITS_AHEAD ((uint64_t)64 << 10)

/* The limits [off, off + len) of shard s through io's limits window; a
 * read that jumps counts towards loading the shard's limits. */
static int read_limits(bagz_shard *s, bagz_io *io, uint64_t off, uint64_t len,
                       const uint8_t **lp, char **err) {
  uint64_t jumps = io->limits.jumps;
  io->limits.max_ahead = LIMITS_AHEAD;
  int rc = ds_view_read(&io->limits, s->limits, off, len, lp, err);
  if (io->limits.jumps != jumps) __atomic_fetch_add(&s->limit_jumps, 1, __ATOMIC_RELAXED);
  return rc;
}

/* Where record `index` of shard `shard` lies in its file: [*start, *end),
 * from its limits (read through io->limits), checked against the records
 * section. */
static inline int stored_range(const bagz_reader *r, bagz_io *io, size_t shard,
                               uint64_t index, uint64_t *start, uint64_t *end,
                               char **err) {
  if (shard >= r->nshards || index >= r->shards[shard].count)
    return ds_err(err, "record %llu of shard %zu does not exist",
                  (unsigned long long)index, shard);
  bagz_shard *s = &r->shards[shard];
  uint64_t off = s->limits_off + 8 * index;
  /* the limit before it (the record's start) and its own (its end): from
   * io's window when it holds them (a scan), else from the limits in
   * memory, else read */
  const uint8_t *lp = ds_view_held(&io->limits, s->limits, index ? off - 8 : off,
                                   index ? 16 : 8);
  const uint8_t *mem = lp ? NULL : limits_in_memory(s);
  if (mem) lp = mem + 8 * index - (index ? 8 : 0);
  else if (!lp && read_limits(s, io, index ? off - 8 : off, index ? 16 : 8, &lp, err))
    return -1;
  *start = index ? ds_le64(lp) : 0;
  *end = ds_le64(index ? lp + 8 : lp);
  if (*start > *end)
    return ds_err(err, "%s: record %llu: limits are not monotonic (the record "
                       "would start at byte %llu and end at byte %llu; limit at "
                       "offset %llu)",
                  s->data.path, (unsigned long long)index,
                  (unsigned long long)*start, (unsigned long long)*end,
                  (unsigned long long)off);
  if (*end > s->records_size) /* separate limits: the data file is cut short */
    return ds_err(err, "%s: record %llu: limit at offset %llu says byte %llu, "
                       "past the end of the records section (%llu bytes)%s%s%s",
                  s->data.path, (unsigned long long)index,
                  (unsigned long long)off, (unsigned long long)*end,
                  (unsigned long long)s->records_size,
                  s->limits != &s->data ? "; that limit is in " : "",
                  s->limits != &s->data ? s->limits->path : "",
                  s->limits != &s->data ? ": the data file is shorter than its limits say" : "");
  return 0;
}

int bagz_stored_range(const bagz_reader *r, bagz_io *io, size_t shard,
                      uint64_t index, uint64_t *start, uint64_t *end,
                      char **err) {
  return stored_range(r, io, shard, index, start, end, err);
}

int bagz_stored(const bagz_reader *r, bagz_io *io, size_t shard, uint64_t index,
                const uint8_t **p, size_t *n, char **err) {
  uint64_t start, end;
  if (bagz_stored_range(r, io, shard, index, &start, &end, err)) return -1;
  if (ds_view_read(&io->data, &r->shards[shard].data, start, end - start, p, err))
    return -1;
  *n = (size_t)(end - start);
  return 0;
}

/* Prefix *err (why record `index`, row g, could not be read) with where
 * the record is: "<file>: record N (row G, L stored bytes at offset O): ".
 * Returns -1. */
static int record_error(const bagz_shard *s, uint64_t index, uint64_t g, size_t len,
                        uint64_t start, char **err) {
  char *why = *err;
  *err = NULL;
  ds_err(err, "%s: record %llu (row %llu, %zu stored bytes at offset %llu): %s",
         s->data.path, (unsigned long long)index, (unsigned long long)g, len,
         (unsigned long long)start, why ? why : "?");
  free(why);
  return -1;
}

static inline int decode(const bagz_reader *r, ds_zstd_ctx *z, size_t shard,
                         uint64_t index, uint64_t g, uint64_t start,
                         const uint8_t *stored, size_t len, ds_buf *scratch,
                         const uint8_t **p, size_t *n, char **err) {
  const bagz_shard *s = &r->shards[shard];
  if (!s->zstd || len == 0) {
    if (scratch->max && len > scratch->max) {
      ds_err_too_big(err, "record", len, scratch->max);
      return record_error(s, index, g, len, start, err);
    }
    *p = stored;
    *n = len;
    return 0;
  }
  z->dict = r->dict;
  if (ds_zstd_decompress(z, stored, len, scratch, err))
    return record_error(s, index, g, len, start, err);
  *p = scratch->data;
  *n = scratch->len;
  return 0;
}

int bagz_decode(const bagz_reader *r, ds_zstd_ctx *z, size_t shard, uint64_t index,
                uint64_t g, uint64_t start, const uint8_t *stored, size_t len,
                ds_buf *scratch, const uint8_t **p, size_t *n, char **err) {
  return decode(r, z, shard, index, g, start, stored, len, scratch, p, n, err);
}

int bagz_read_span(const bagz_reader *r, bagz_io *io, size_t shard, uint64_t index,
                   uint64_t g, uint64_t start, uint64_t end, const uint8_t **p,
                   char **err) {
  if (shard >= r->nshards || start > end)
    return ds_err(err, "bytes [%llu, %llu) of shard %zu are no span",
                  (unsigned long long)start, (unsigned long long)end, shard);
  io->data.max_ahead = DS_VIEW_EXACT;
  if (ds_view_read(&io->data, &r->shards[shard].data, start, end - start, p, err))
    return record_error(&r->shards[shard], index, g, (size_t)(end - start), start, err);
  return 0;
}

int bagz_read_at(const bagz_reader *r, ds_zstd_ctx *z, bagz_io *io, size_t shard,
                 uint64_t index, uint64_t g, ds_buf *scratch,
                 const uint8_t **p, size_t *n, char **err) {
  uint64_t start, end;
  if (stored_range(r, io, shard, index, &start, &end, err)) return -1;
  const bagz_shard *s = &r->shards[shard];
  size_t len = (size_t)(end - start);
  /* a raw record too big for max_value_bytes is refused before reading */
  if ((!s->zstd || len == 0) && scratch->max && len > scratch->max) {
    ds_err_too_big(err, "record", len, scratch->max);
    return record_error(s, index, g, len, start, err);
  }
  const uint8_t *stored = ds_view_held(&io->data, &s->data, start, len);
  if (!stored && ds_view_read(&io->data, &s->data, start, len, &stored, err))
    return record_error(s, index, g, len, start, err);
  return decode(r, z, shard, index, g, start, stored, len, scratch, p, n, err);
}

int bagz_read(const bagz_reader *r, ds_zstd_ctx *z, bagz_io *io, uint64_t g,
              ds_buf *scratch, const uint8_t **p, size_t *n, char **err) {
  if (g >= r->map.total)
    return ds_err(err, "row %llu out of range [0, %llu)", (unsigned long long)g,
                  (unsigned long long)r->map.total);
  size_t shard;
  uint64_t index;
  ds_shard_map_locate(&r->map, g, &shard, &index);
  return bagz_read_at(r, z, io, shard, index, g, scratch, p, n, err);
}

int bagz_stale(const bagz_reader *r) {
  for (size_t i = 0; i < r->nshards; i++)
    if (ds_file_stale(&r->shards[i].data) || ds_file_stale(&r->shards[i].limits_file))
      return 1;
  return 0;
}
