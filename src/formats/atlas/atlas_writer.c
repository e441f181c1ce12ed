/* atlas_writer.c - the atlas dataset writer of atlas_writer.h.
 *
 * State: the shards written so far (each remembers its block offsets in
 * data.bin, or, while it trains a dictionary, the sizes of the raw blocks
 * in its .blocks.tmp), the open shard's files, and the open block: a list
 * pickle that grows one example at a time. A shard whose blocks wait for a
 * dictionary keeps .blocks.tmp until atlas_writer_finish, so a truncation
 * back into it can reopen it. */
#define ZDICT_STATIC_LINKING_ONLY
#include "formats/atlas/atlas_writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zdict.h>
#include <zstd.h>

#include "core/npy.h"
#include "core/stage.h"
#include "core/vfs.h"
#include "core/vfs_each.h"
#include "formats/atlas/atlas.h"
#include "formats/format_files.h"
#include "formats/bagz/bagz_compress.h"
#include "decoders/pickle.h"
#include "decoders/pickle_write.h"

#define AW_MIN_TRAIN_BLOCKS 7  /* upstream: fewer blocks crash its trainer */
#define AW_MIN_DICT 1024       /* upstream's smallest dictionary request */
#define AW_SPILL ".blocks.tmp"
#define AW_TRAIN_THREADS 4     /* at most, for the trainer's search over k */

/* How the open shard stores its blocks. */
enum { AW_RAW, AW_ZSTD, AW_SHARED, AW_TRAIN };

typedef struct aw_shard {
  int mode;            /* AW_* while writing */
  int strategy;        /* what its meta.json says (set when finished) */
  int finished;        /* index.npy and meta.json written */
  uint64_t examples;
  uint64_t *off;       /* data.bin: block b at off[b]; n_off = blocks + 1 */
  size_t n_off, cap_off;
  uint64_t *raw;       /* AW_TRAIN: sizes of the raw blocks in .blocks.tmp */
  size_t n_raw, cap_raw;
  uint64_t raw_bytes;
} aw_shard;

struct atlas_writer {
  char *dir;
  atlas_write_options o;
  int strategy;        /* dataset strategy (2 may become 1) */
  aw_shard *shards;
  size_t nshards;      /* the last one is open (unless finished) */
  int data_fd, spill_fd; /* of the open shard; -1 when not open */
  uint64_t count;
  ds_pickler pk;
  ds_buf block, zbuf;
  uint64_t in_block;   /* examples in the open block (0: none open) */
  int block_closed;    /* the open block's list is ended but it could not
                        * be stored yet (a write failed): a retry stores
                        * it, a truncation reads it back */
  char *broken;        /* a write failed where the state cannot be
                        * restored (a queued frame, a shard being closed):
                        * every later call fails with this, so the
                        * transaction cannot commit */
  ZSTD_CCtx *cctx;
  ds_buf shared_dict;  /* strategy 2 after shard 0: the shared dictionary
                        * (to read blocks back in a truncation) */
  bagz_compressor *zc; /* the last trained dictionary's ordered compressor
                        * (frames made on a helper thread with threads=2);
                        * its frames go to the open shard's data.bin */
  int finished;
};

/* ------------------------------------------------------------ files */

/* "<dir>/<shard>/<name>" (name may be NULL for the folder). */
static char *shard_path(const atlas_writer *w, size_t k, const char *name) {
  return name ? ds_strf("%s/%zu/%s", w->dir, k, name)
              : ds_strf("%s/%zu", w->dir, k);
}

static int io_err(char **err, const char *what, const char *path) {
  return ds_err(err, "%s %s: %s", what, path, strerror(errno));
}

/* A whole small file, replacing what was there. */
static int write_file(const char *path, const void *p, size_t n, int sync,
                      char **err) {
  int fd = ds_vfs_open_fd(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return io_err(err, "cannot create", path);
  int rc = ds_write_all(fd, p, n, path, err);
  if (!rc && sync && ds_vfs_fsync_fd(fd)) rc = io_err(err, "cannot fsync", path);
  close(fd);
  return rc;
}

/* Open (creating) a file of the open shard for appending at `size`. */
static int open_at(atlas_writer *w, const char *name, uint64_t size, int *fd,
                   char **err) {
  char *path = shard_path(w, w->nshards - 1, name);
  if (!path) return ds_err(err, "out of memory");
  int rc = 0;
  *fd = ds_vfs_open_fd(path, O_RDWR | O_CREAT | O_CLOEXEC);
  if (*fd < 0) rc = io_err(err, "cannot create", path);
  else if (ftruncate(*fd, (off_t)size) || lseek(*fd, (off_t)size, SEEK_SET) < 0)
    rc = io_err(err, "cannot truncate", path);
  free(path);
  return rc;
}

static void close_fd(int *fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Remove a shard folder and everything in it. */
static void remove_shard_dir(const atlas_writer *w, size_t k) {
  static const char *const names[] = {"data.bin", "index.npy", "meta.json",
                                      "zstd_dict.bin", AW_SPILL};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *p = shard_path(w, k, names[i]);
    if (p) ds_vfs_remove(p);
    free(p);
  }
  char *d = shard_path(w, k, NULL);
  if (d) ds_vfs_rmdir(d);
  free(d);
}

/* ------------------------------------------------------------ vectors */

static int push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    uint64_t *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) return -1;
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = x;
  return 0;
}

/* ------------------------------------------------------------ options */

void atlas_write_defaults(atlas_write_options *o) {
  o->block_size = 64;
  o->shard_size = 100000;
  o->strategy = ATLAS_SHARED_DICTIONARY;
  o->level = 3;
  o->dict_size = 0.01;
  o->sync = 1;
  o->threads = 2;
}

int atlas_write_check(const atlas_write_options *o, char **err) {
  if (o->block_size == 0) return ds_err(err, "block_size must be > 0");
  if (o->shard_size == 0) return ds_err(err, "shard_size must be > 0");
  if (o->strategy < 0 || o->strategy > 3)
    return ds_err(err, "strategy must be 0, 1, 2 or 3 (got %d)", o->strategy);
  if (o->level < ZSTD_minCLevel() || o->level > ZSTD_maxCLevel())
    return ds_err(err, "level must be between %d and %d (got %d)",
                  ZSTD_minCLevel(), ZSTD_maxCLevel(), o->level);
  if (!(o->dict_size >= 0.0 && o->dict_size <= 1.0))
    return ds_err(err, "dict_size must be between 0 and 1");
  if (o->threads < 1 || o->threads > 2)
    return ds_err(err, "threads must be 1 or 2 (got %d)", o->threads);
  return 0;
}

/* ------------------------------------------------------------ shards */

/* Start shard number w->nshards. Strategy 3, and shard 0 of strategy 2,
 * train a dictionary; strategy 2 afterwards uses the shared one. */
static int open_shard(atlas_writer *w, char **err) {
  aw_shard *ns = realloc(w->shards, (w->nshards + 1) * sizeof *ns);
  if (!ns) return ds_err(err, "out of memory");
  w->shards = ns;
  aw_shard *s = &ns[w->nshards++];
  memset(s, 0, sizeof *s);
  switch (w->strategy) {
    case ATLAS_NO_COMPRESSION: s->mode = AW_RAW; break;
    case ATLAS_STANDARD_COMPRESSION: s->mode = AW_ZSTD; break;
    case ATLAS_SHARED_DICTIONARY:
      s->mode = w->nshards == 1 ? AW_TRAIN : AW_SHARED;
      break;
    default: s->mode = AW_TRAIN;
  }
  if (push_u64(&s->off, &s->n_off, &s->cap_off, 0))
    return ds_err(err, "out of memory");
  char *d = shard_path(w, w->nshards - 1, NULL);
  if (!d) return ds_err(err, "out of memory");
  int rc = ds_vfs_mkdir(d) && errno != EEXIST ? io_err(err, "cannot create", d)
                                             : 0;
  free(d);
  return rc;
}

/* Append stored bytes of one block to the open shard's data.bin (created
 * on the first block, as upstream: an empty shard has none). */
static int put_block(atlas_writer *w, const uint8_t *p, size_t n, char **err) {
  aw_shard *s = &w->shards[w->nshards - 1];
  uint64_t end = s->off[s->n_off - 1];
  if (w->data_fd < 0 && open_at(w, "data.bin", end, &w->data_fd, err))
    return -1;
  /* at its logical end: a failed write leaves the file as it was */
  if (ds_pwrite_all(w->data_fd, p, n, end, "data.bin", err)) return -1;
  if (push_u64(&s->off, &s->n_off, &s->cap_off, end + n))
    return ds_err(err, "out of memory");
  return 0;
}

/* The writer cannot go on: remember why (the first reason). */
static int set_broken(atlas_writer *w, char **err) {
  if (!w->broken)
    w->broken = ds_strf("an earlier write failed (%s); the transaction cannot "
                        "be committed", err && *err ? *err : "?");
  return -1;
}

/* The error of a broken writer, or 0. */
static int check_broken(const atlas_writer *w, char **err) {
  return w->broken ? ds_err(err, "%s", w->broken) : 0;
}

/* The compressor's emit: one frame, in order, to the open shard. A frame
 * that cannot be written may hold examples of statements already done,
 * and the frames after it are dropped: the writer is broken. */
static int emit_block(void *ctx, const uint8_t *p, size_t n, char **err) {
  atlas_writer *w = ctx;
  return put_block(w, p, n, err) ? set_broken(w, err) : 0;
}

/* Every block still queued in the compressor into data.bin. */
static int drain(atlas_writer *w, char **err) {
  return w->zc ? bagz_compressor_drain(w->zc, err) : 0;
}

/* Compress src with the writer's context, no dictionary (blocks with one
 * go through w->zc). */
static int compress(atlas_writer *w, const uint8_t *src, size_t n, char **err) {
  size_t cap = ZSTD_compressBound(n);
  if (ds_buf_reserve(&w->zbuf, cap)) return ds_err(err, "out of memory");
  if (!w->cctx && !(w->cctx = ZSTD_createCCtx()))
    return ds_err(err, "out of memory");
  size_t r = ZSTD_compressCCtx(w->cctx, w->zbuf.data, cap, src, n, w->o.level);
  if (ZSTD_isError(r)) return ds_err(err, "zstd: %s", ZSTD_getErrorName(r));
  w->zbuf.len = r;
  return 0;
}

/* Store the finished pickle of a block as the shard's mode says. */
static int store_block(atlas_writer *w, const uint8_t *p, size_t n,
                       char **err) {
  aw_shard *s = &w->shards[w->nshards - 1];
  switch (s->mode) {
    case AW_RAW: return put_block(w, p, n, err);
    case AW_SHARED: /* queued: the frame comes out in order, maybe later */
      return bagz_compressor_add(w->zc, s->n_off + s->n_raw, p, n, err);
    case AW_ZSTD:
      if (compress(w, p, n, err)) return -1;
      return put_block(w, w->zbuf.data, w->zbuf.len, err);
    default:
      if (w->spill_fd < 0 &&
          open_at(w, AW_SPILL, s->raw_bytes, &w->spill_fd, err))
        return -1;
      if (ds_pwrite_all(w->spill_fd, p, n, s->raw_bytes, AW_SPILL, err)) return -1;
      if (push_u64(&s->raw, &s->n_raw, &s->cap_raw, n))
        return ds_err(err, "out of memory");
      s->raw_bytes += n;
      return 0;
  }
}

/* Close the open block (if any) and store it. When the store fails the
 * block stays open, closed (block_closed), its examples counted. */
static int flush_block(atlas_writer *w, char **err) {
  if (!w->in_block) return 0;
  if (!w->block_closed) {
    if (ds_pickle_list_end(&w->pk, err)) return -1;
    w->block_closed = 1;
  }
  if (store_block(w, w->block.data, w->block.len, err)) return -1;
  w->in_block = 0;
  w->block_closed = 0;
  return 0;
}

/* The dtype numpy's bisect in upstream's _save_index picks for `last`. */
static const char *index_dtype(uint64_t last, unsigned *size) {
  if (last <= 0xff) { *size = 1; return "|u1"; }
  if (last <= 0xffff) { *size = 2; return "<u2"; }
  if (last <= 0xffffffffu) { *size = 4; return "<u4"; }
  *size = 8;
  return "<u8";
}

/* index.npy of the shard's offsets. */
static int write_index(atlas_writer *w, size_t k, char **err) {
  aw_shard *s = &w->shards[k];
  unsigned size;
  const char *descr = index_dtype(s->off[s->n_off - 1], &size);
  uint64_t shape[1] = {s->n_off};
  ds_buf b = {0};
  int rc = ds_npy_write_header(&b, descr, 0, 1, shape, err);
  for (size_t i = 0; !rc && i < s->n_off; i++) {
    uint8_t le[8];
    for (unsigned j = 0; j < size; j++) le[j] = (uint8_t)(s->off[i] >> (8 * j));
    if (ds_buf_append(&b, le, size)) rc = ds_err(err, "out of memory");
  }
  char *path = shard_path(w, k, "index.npy");
  if (!rc) rc = path ? write_file(path, b.data, b.len, w->o.sync, err)
                     : ds_err(err, "out of memory");
  free(path);
  ds_buf_free(&b);
  return rc;
}

/* A float as Python's repr writes it in json.dumps. */
static int put_py_float(ds_buf *b, double d) { return ds_json_double(b, d); }

/* <shard>/meta.json as json.dumps(meta, indent=4) writes it. */
static int write_shard_meta(atlas_writer *w, size_t k, char **err) {
  aw_shard *s = &w->shards[k];
  ds_buf b = {0};
  int rc = ds_buf_printf(&b,
                         "{\n    \"version\": 1,\n    \"block_size\": %llu,\n"
                         "    \"stored_examples\": %llu,\n"
                         "    \"compression_strategy\": %d,\n"
                         "    \"compression_level\": %d,\n"
                         "    \"compression_dict_size\": ",
                         (unsigned long long)w->o.block_size,
                         (unsigned long long)s->examples, s->strategy,
                         w->o.level) ||
           put_py_float(&b, w->o.dict_size) || ds_buf_puts(&b, "\n}");
  char *path = shard_path(w, k, "meta.json");
  rc = rc || !path ? ds_err(err, "out of memory")
                   : write_file(path, b.data, b.len, w->o.sync, err);
  free(path);
  ds_buf_free(&b);
  return rc;
}

/* Map .blocks.tmp of shard k (n bytes); *map is NULL when n is 0. */
static int map_spill(atlas_writer *w, size_t k, uint64_t n, uint8_t **map,
                     char **err) {
  *map = NULL;
  if (!n) return 0;
  char *path = shard_path(w, k, AW_SPILL);
  if (!path) return ds_err(err, "out of memory");
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC), rc = 0;
  if (fd < 0) {
    rc = io_err(err, "cannot open", path);
  } else {
    void *m = mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) rc = io_err(err, "cannot map", path);
    else *map = m;
    close(fd);
  }
  free(path);
  return rc;
}

/* Threads for the trainer's search: the CPUs online, 1 to
 * AW_TRAIN_THREADS. */
static unsigned train_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > AW_TRAIN_THREADS ? AW_TRAIN_THREADS : (unsigned)n;
}

/* Train a dictionary on the raw blocks (map[0..bytes), sizes raw[0..n))
 * as upstream does: python-zstandard's train_dictionary(size, blocks,
 * level=level) is ZDICT_optimizeTrainFromBuffer_fastCover with d=8,
 * steps=4 and the writer's level (ZDICT_trainFromBuffer's parameters but
 * for the level). The search over k tries its candidates on several
 * threads (zstd's nbThreads): the same candidates, the smallest
 * compressed size wins. Returns 0 with the dictionary in *dict (NULL when
 * zstd refused). */
static int train(atlas_writer *w, const uint8_t *map, const aw_shard *s,
                 ds_buf *dict, char **err) {
  size_t cap = (size_t)(w->o.dict_size * (double)s->raw_bytes) + 1;
  if (cap < AW_MIN_DICT) cap = AW_MIN_DICT;
  size_t *sizes = malloc(s->n_raw * sizeof *sizes);
  if (!sizes || ds_buf_reserve(dict, cap)) {
    free(sizes);
    return ds_err(err, "out of memory");
  }
  for (size_t i = 0; i < s->n_raw; i++) sizes[i] = (size_t)s->raw[i];
  ZDICT_fastCover_params_t fp;
  memset(&fp, 0, sizeof fp);
  fp.d = 8;
  fp.steps = 4;
  fp.nbThreads = w->o.threads > 1 ? train_threads() : 0;
  fp.zParams.compressionLevel = w->o.level ? w->o.level : 3; /* as level or 3 */
  size_t r = ZDICT_optimizeTrainFromBuffer_fastCover(dict->data, cap, map, sizes,
                                                     (unsigned)s->n_raw, &fp);
  free(sizes);
  dict->len = ZDICT_isError(r) ? 0 : r;
  return 0;
}

/* Compress every raw block of a training shard into data.bin: with the
 * dictionary's compressor (w->zc) when `dict`, else plain zstd. */
static int compress_spill(atlas_writer *w, const uint8_t *map, aw_shard *s,
                          int dict, char **err) {
  uint64_t at = 0;
  for (size_t i = 0; i < s->n_raw; i++) {
    if (dict ? bagz_compressor_add(w->zc, i, map + at, (size_t)s->raw[i], err)
             : compress(w, map + at, (size_t)s->raw[i], err) ||
                   put_block(w, w->zbuf.data, w->zbuf.len, err))
      return -1;
    at += s->raw[i];
  }
  return dict ? drain(w, err) : 0;
}

/* Finish a training shard: dictionary (or the fallback), data.bin. When it
 * is shard 0 of a strategy-2 dataset its dictionary becomes the shared one
 * (ROOT/zstd_dict.bin), or the whole dataset falls back to strategy 1. */
static int finish_training(atlas_writer *w, size_t k, char **err) {
  aw_shard *s = &w->shards[k];
  uint8_t *map;
  if (map_spill(w, k, s->raw_bytes, &map, err)) return -1;
  ds_buf dict = {0};
  int rc = 0;
  if (s->n_raw >= AW_MIN_TRAIN_BLOCKS) rc = train(w, map, s, &dict, err);
  int have = !rc && dict.len, shared = w->strategy == ATLAS_SHARED_DICTIONARY && k == 0;
  if (have) { /* the dictionary's compressor replaces the last one */
    bagz_compressor_free(w->zc);
    w->zc = NULL;
    rc = bagz_compressor_new(w->o.level, dict.data, dict.len, w->o.threads,
                             emit_block, w, &w->zc, err);
  }
  if (!rc) {
    s->strategy = !have ? ATLAS_STANDARD_COMPRESSION
                        : shared ? ATLAS_SHARED_DICTIONARY : ATLAS_SHARD_DICTIONARY;
    rc = compress_spill(w, map, s, have, err);
  }
  if (!rc && have) {
    char *path = shared ? ds_strf("%s/zstd_dict.bin", w->dir)
                        : shard_path(w, k, "zstd_dict.bin");
    rc = path ? write_file(path, dict.data, dict.len, w->o.sync, err)
              : ds_err(err, "out of memory");
    free(path);
  }
  if (!rc && shared) {
    if (have) {
      w->shared_dict.len = 0;
      if (ds_buf_append(&w->shared_dict, dict.data, dict.len))
        rc = ds_err(err, "out of memory");
    }
    else w->strategy = ATLAS_STANDARD_COMPRESSION;
  }
  ds_buf_free(&dict);
  if (map) munmap(map, s->raw_bytes);
  return rc;
}

/* Finish the open shard: last block, dictionary, index.npy, meta.json. */
static int close_shard(atlas_writer *w, char **err) {
  size_t k = w->nshards - 1;
  aw_shard *s = &w->shards[k];
  if (flush_block(w, err) || drain(w, err)) return -1;
  close_fd(&w->spill_fd);
  if (s->mode == AW_TRAIN) {
    if (finish_training(w, k, err)) return -1;
  } else {
    s->strategy = s->mode == AW_RAW ? ATLAS_NO_COMPRESSION
                  : s->mode == AW_ZSTD ? ATLAS_STANDARD_COMPRESSION
                                       : ATLAS_SHARED_DICTIONARY;
  }
  if (w->data_fd >= 0 && w->o.sync && ds_vfs_fsync_fd(w->data_fd))
    return io_err(err, "cannot fsync", "data.bin");
  close_fd(&w->data_fd);
  if (write_index(w, k, err) || write_shard_meta(w, k, err)) return -1;
  s->finished = 1;
  return 0;
}

/* ------------------------------------------------------------ public */

int atlas_writer_open(const char *dir, const atlas_write_options *o,
                      atlas_writer **out, char **err) {
  *out = NULL;
  if (atlas_write_check(o, err)) return -1;
  atlas_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->dir = strdup(dir))) {
    free(w);
    return ds_err(err, "out of memory");
  }
  w->o = *o;
  w->strategy = o->strategy;
  w->data_fd = w->spill_fd = -1;
  *out = w;
  return 0;
}

int atlas_writer_add(atlas_writer *w, const ds_value *example, char **err) {
  if (w->finished) return ds_err(err, "the dataset is already finished");
  if (check_broken(w, err)) return -1;
  if (!w->nshards && open_shard(w, err)) return -1;
  if (w->block_closed && flush_block(w, err)) return -1; /* store it first */
  /* a full shard is closed only once the new example pickled fine, so a
   * refused example never leaves an empty shard behind */
  int full = w->shards[w->nshards - 1].examples == w->o.shard_size;
  if (full && flush_block(w, err)) return -1;
  if (!w->in_block) {
    w->block.len = 0;
    if (ds_pickle_list_begin(&w->pk, &w->block, err)) return -1;
  }
  if (ds_pickle_list_add(&w->pk, example, err)) return -1;
  if (full && (close_shard(w, err) || open_shard(w, err))) return set_broken(w, err);
  w->in_block++;
  w->shards[w->nshards - 1].examples++;
  w->count++;
  if (w->in_block == w->o.block_size && flush_block(w, err)) return -1;
  return 0;
}

uint64_t atlas_writer_count(const atlas_writer *w) { return w->count; }

/* ------------------------------------------------------------ truncate */

/* Cut a file of shard k to `size` bytes (nothing when it does not exist). */
static int cut_file(const atlas_writer *w, size_t k, const char *name,
                    uint64_t size, char **err) {
  char *path = shard_path(w, k, name);
  if (!path) return ds_err(err, "out of memory");
  int rc = ds_vfs_truncate(path, size) && errno != ENOENT
               ? io_err(err, "cannot truncate", path) : 0;
  free(path);
  return rc;
}

/* Read n bytes at `off` of a file of shard k into buf. */
static int read_at(const atlas_writer *w, size_t k, const char *name,
                   uint64_t off, size_t n, ds_buf *buf, char **err) {
  char *path = shard_path(w, k, name);
  if (!path) return ds_err(err, "out of memory");
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC), rc = 0;
  buf->len = 0;
  if (fd < 0) rc = io_err(err, "cannot open", path);
  else if (ds_buf_reserve(buf, n ? n : 1)) rc = ds_err(err, "out of memory");
  else if (ds_pread_all(fd, buf->data, n, off, path, err)) rc = -1;
  else buf->len = n;
  if (fd >= 0) close(fd);
  free(path);
  return rc;
}

/* The pickle of block b of shard k (stored, waiting in .blocks.tmp, or the
 * open block) into out. */
static int block_pickle(atlas_writer *w, size_t k, uint64_t b, ds_buf *out,
                        char **err) {
  aw_shard *s = &w->shards[k];
  int open_block = k == w->nshards - 1 && w->in_block &&
                   b == (s->mode == AW_TRAIN ? s->n_raw : s->n_off - 1);
  if (open_block) {
    if (!w->block_closed && ds_pickle_list_end(&w->pk, err)) return -1;
    w->in_block = 0;
    w->block_closed = 0;
    out->len = 0;
    return ds_buf_append(out, w->block.data, w->block.len)
               ? ds_err(err, "out of memory") : 0;
  }
  if (s->mode == AW_TRAIN) {
    uint64_t at = 0;
    for (uint64_t i = 0; i < b; i++) at += s->raw[i];
    return read_at(w, k, AW_SPILL, at, (size_t)s->raw[b], out, err);
  }
  ds_buf stored = {0};
  int rc = read_at(w, k, "data.bin", s->off[b],
                   (size_t)(s->off[b + 1] - s->off[b]), &stored, err);
  if (!rc && s->mode == AW_RAW) {
    ds_buf t = *out;
    *out = stored;
    stored = t;
  } else if (!rc) {
    unsigned long long n = ZSTD_getFrameContentSize(stored.data, stored.len);
    ZSTD_DCtx *d = ZSTD_createDCtx();
    size_t r = 0;
    if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN)
      rc = ds_err(err, "block %llu of shard %zu: bad zstd frame",
                  (unsigned long long)b, k);
    else if (!d || ds_buf_reserve(out, n ? n : 1))
      rc = ds_err(err, "out of memory");
    else if (ZSTD_isError(r = ZSTD_decompress_usingDict(
                 d, out->data, n, stored.data, stored.len,
                 s->mode == AW_SHARED ? w->shared_dict.data : NULL,
                 s->mode == AW_SHARED ? w->shared_dict.len : 0)))
      rc = ds_err(err, "zstd: %s", ZSTD_getErrorName(r));
    else out->len = r;
    ZSTD_freeDCtx(d);
  }
  ds_buf_free(&stored);
  return rc;
}

/* Shard k becomes the open shard again, holding its first `blocks`
 * blocks; every later shard is removed. */
static int reopen_shard(atlas_writer *w, size_t k, uint64_t blocks,
                        char **err) {
  close_fd(&w->data_fd);
  close_fd(&w->spill_fd);
  w->in_block = 0;
  w->block_closed = 0;
  while (w->nshards > k + 1) {
    remove_shard_dir(w, --w->nshards);
    free(w->shards[w->nshards].off);
    free(w->shards[w->nshards].raw);
  }
  aw_shard *s = &w->shards[k];
  if (k == 0 && w->o.strategy == ATLAS_SHARED_DICTIONARY) {
    /* shard 0 decides the shared dictionary again when it closes */
    char *path = ds_strf("%s/zstd_dict.bin", w->dir);
    if (path) ds_vfs_remove(path);
    free(path);
    bagz_compressor_free(w->zc);
    w->zc = NULL;
    w->strategy = ATLAS_SHARED_DICTIONARY;
  }
  if (s->finished) {
    static const char *const names[] = {"index.npy", "meta.json",
                                        "zstd_dict.bin"};
    for (size_t i = 0; i < 3; i++) {
      char *p = shard_path(w, k, names[i]);
      if (p) ds_vfs_remove(p);
      free(p);
    }
    s->finished = 0;
  }
  if (s->mode == AW_TRAIN) { /* data.bin is rewritten from the raw blocks */
    s->n_off = 1;
    if (cut_file(w, k, "data.bin", 0, err)) return -1;
    s->n_raw = (size_t)blocks;
    s->raw_bytes = 0;
    for (size_t i = 0; i < s->n_raw; i++) s->raw_bytes += s->raw[i];
    return cut_file(w, k, AW_SPILL, s->raw_bytes, err);
  }
  s->n_off = (size_t)blocks + 1;
  return cut_file(w, k, "data.bin", s->off[blocks], err);
}

int atlas_writer_truncate(atlas_writer *w, uint64_t count, char **err) {
  if (w->finished) return ds_err(err, "the dataset is already finished");
  if (count > w->count)
    return ds_err(err, "cannot truncate to %llu examples, there are %llu",
                  (unsigned long long)count, (unsigned long long)w->count);
  if (check_broken(w, err)) return -1;
  if (count == w->count) return 0;
  if (drain(w, err)) return -1; /* every stored block in data.bin */
  size_t k = count ? (size_t)((count - 1) / w->o.shard_size) : 0;
  uint64_t j = count - k * w->o.shard_size;
  uint64_t b = j / w->o.block_size, e = j % w->o.block_size;
  ds_buf pk = {0};
  ds_arena a = {0};
  ds_value blk = {DS_V_NULL, {0}};
  int rc = 0;
  if (e) { /* the examples of block b that stay, decoded before any cut */
    rc = block_pickle(w, k, b, &pk, err) ||
         ds_pickle_decode(pk.data, pk.len, NULL, &a, &blk, err);
    if (!rc && (blk.type != DS_V_LIST || blk.u.list.n < e))
      rc = ds_err(err, "block %llu of shard %zu reads back short",
                  (unsigned long long)b, k);
  }
  if (!rc) rc = reopen_shard(w, k, b, err);
  if (!rc) {
    w->shards[k].examples = b * w->o.block_size;
    w->count = k * w->o.shard_size + b * w->o.block_size;
    for (uint64_t i = 0; !rc && i < e; i++)
      rc = atlas_writer_add(w, &blk.u.list.items[i], err);
  }
  ds_arena_free(&a);
  ds_buf_free(&pk);
  return rc;
}

/* ROOT/meta.json: json.dumps(meta, indent=4). */
static int write_root_meta(atlas_writer *w, char **err) {
  ds_buf b = {0};
  int rc = ds_buf_puts(&b, "{\n    \"version\": 1,\n    \"shard_sizes\": [");
  for (size_t k = 0; !rc && k < w->nshards; k++)
    rc = ds_buf_printf(&b, "%s\n        %llu", k ? "," : "",
                       (unsigned long long)w->shards[k].examples);
  if (!rc)
    rc = ds_buf_printf(&b, "%s],\n    \"compression_strategy\": %d\n}",
                       w->nshards ? "\n    " : "", w->strategy);
  char *path = ds_strf("%s/meta.json", w->dir);
  rc = rc || !path ? ds_err(err, "out of memory")
                   : write_file(path, b.data, b.len, w->o.sync, err);
  free(path);
  ds_buf_free(&b);
  return rc;
}

/* Rename shard folders to the width of the last one's name, zero-padded,
 * as upstream's close() does; drop the .blocks.tmp files. */
static int rename_shards(atlas_writer *w, char **err) {
  int width = snprintf(NULL, 0, "%zu", w->nshards - 1);
  for (size_t k = 0; k < w->nshards; k++) {
    char *spill = shard_path(w, k, AW_SPILL);
    if (spill) ds_vfs_remove(spill);
    free(spill);
    char *from = shard_path(w, k, NULL);
    char *to = ds_strf("%s/%0*zu", w->dir, width, k);
    int rc = !from || !to ? ds_err(err, "out of memory")
             : strcmp(from, to) && ds_vfs_rename(from, to, DS_VFS_REPLACE)
                 ? io_err(err, "cannot rename", from)
                 : w->o.sync ? ds_fsync_path(to, err) : 0;
    free(from);
    free(to);
    if (rc) return -1;
  }
  return w->o.sync ? ds_fsync_path(w->dir, err) : 0;
}

int atlas_writer_finish(atlas_writer *w, char **err) {
  if (w->finished) return 0;
  if (check_broken(w, err)) return -1;
  if (!w->nshards && open_shard(w, err)) return -1;
  if (close_shard(w, err) || write_root_meta(w, err) || rename_shards(w, err))
    return -1;
  w->finished = 1;
  return 0;
}

void atlas_writer_free(atlas_writer *w) {
  if (!w) return;
  close_fd(&w->data_fd);
  close_fd(&w->spill_fd);
  for (size_t k = 0; k < w->nshards; k++) {
    free(w->shards[k].off);
    free(w->shards[k].raw);
  }
  free(w->shards);
  bagz_compressor_free(w->zc);
  ds_pickler_free(&w->pk);
  ds_buf_free(&w->block);
  ds_buf_free(&w->zbuf);
  ZSTD_freeCCtx(w->cctx);
  ds_buf_free(&w->shared_dict);
  free(w->broken);
  free(w->dir);
  free(w);
}

/* 1 when name is all digits (a shard folder's name). */
static int all_digits(const char *name) {
  if (!*name) return 0;
  for (; *name; name++)
    if (*name < '0' || *name > '9') return 0;
  return 1;
}

/* An error naming `path`/`name` when it is not one of the files an atlas
 * directory (or shard) holds: data.bin, index.npy, meta.json,
 * zstd_dict.bin, and in the root, shard folders with numeric names. */
static int own_entries(const char *path, int root, char **err);

/* ds_vfs_entry_fn of own_entries (ctx: 1 in the root). */
static int own_entry(void *ctx, const char *p, const char *name, const ds_vfs_info *st,
                     char **err) {
  static const char *const files[] = {"data.bin", "index.npy", "meta.json",
                                      "zstd_dict.bin", NULL};
  int root = *(const int *)ctx, known = 0;
  if (!st) return ds_err(err, "%s: cannot stat: %s", p, strerror(errno));
  for (int i = 0; files[i] && !known; i++) known = !strcmp(name, files[i]);
  if (known && st->kind == DS_VFS_FILE) return 0;
  if (root && all_digits(name) && st->kind == DS_VFS_DIR) return own_entries(p, 0, err);
  return ds_err(err, "%s: not part of an atlas dataset (mode=replace replaces only a "
                     "directory of meta.json, zstd_dict.bin, data.bin, index.npy and "
                     "numbered shard folders; move it away first)",
                p);
}

static int own_entries(const char *path, int root, char **err) {
  return ds_vfs_each(path, own_entry, &root, err);
}

int atlas_write_is_own(const char *path, char **err) {
  int rc = ds_fmt_replace_dir(path, "an atlas dataset", err);
  return rc == 1 ? own_entries(path, 1, err) : rc;
}
