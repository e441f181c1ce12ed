/* bcolz_writer.c - the bcolz writer of bcolz_writer.h.
 *
 * Each column keeps the rows of its open chunk uncompressed (upstream's
 * "leftover" buffer); when it holds chunklen rows it is compressed with
 * blosc_compress_ctx and written as data/__<k>.blp, as upstream's
 * append() does, but on the helper thread of bcolz_chunk_writer.h while
 * the column fills a second buffer (the files are the same). Object
 * columns write one chunk file per row. TEXT / BLOB columns whose width
 * is not declared append each value (u32 length + bytes) to .values.tmp
 * and become chunks at the end. */
#include "formats/bcolz/bcolz_writer.h"

#include <blosc.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/codec.h"
#include "core/mapped_file.h"
#include "core/stage.h"
#include "core/vfs.h"
#include "formats/bcolz/bcolz_cell_fast.h"
#include "formats/bcolz/bcolz_chunk_writer.h"
#include "formats/format_files.h"

#define BW_SPILL ".values.tmp"
#define BW_HEADER 16  /* "blpk", version 1, 3 reserved, int64 nchunks = 1 */

typedef struct bw_col {
  char *name;
  char *dir;           /* the column's carray folder */
  bcolz_dtype dt;      /* final once the width is known */
  bcolz_fast fast;     /* the common cells' shortcut (bcolz_cell_fast.h) */
  int width_unknown;   /* values wait in the spill file */
  uint64_t chunklen;   /* 0 until known */
  uint8_t *chunk;      /* chunklen * atom bytes: the open chunk */
  uint8_t *spare;      /* the other buffer: the chunk in flight, or free */
  uint64_t slot;       /* the next row's place in the open chunk: rows % chunklen */
  uint64_t nchunks;    /* chunk files written (object: one per row) */
  uint32_t *cbytes;    /* Blosc size of each chunk file written */
  size_t cap_cbytes;
  uint64_t obj_nbytes; /* object: sum of the pickles' sizes */
  int spill_fd;
  uint64_t spill_size;
  uint64_t width;      /* longest spilled value (bytes for S, chars for U) */
} bw_col;

struct bcolz_writer {
  char *dir;
  int carray;
  bcolz_write_options o;
  bw_col *cols;
  size_t ncols;
  uint64_t rows;
  int all_fast;          /* every column takes the shortcut of bcolz_cell_fast.h */
  bcolz_window win;      /* all_fast: the shortcut rows' window (bcolz_writer_window);
                            its lag: rows added since the slots were last moved on */
  bcolz_chunk_writer *cw; /* compresses and writes the chunk files */
  ds_buf obj, val;       /* one pickle, one spilled value */
  int finished;
};

/* ------------------------------------------------------------ options */

void bcolz_write_defaults(bcolz_write_options *o) {
  memset(o, 0, sizeof *o);
  o->expectedlen = 1000000;
  snprintf(o->cname, sizeof o->cname, "lz4");
  o->clevel = 5;
  o->shuffle = 1;
  o->sync = 1;
}

int bcolz_write_check(const bcolz_write_options *o, char **err) {
  if (o->clevel < 0 || o->clevel > 9)
    return ds_err(err, "clevel must be 0..9 (got %d)", o->clevel);
  if (o->shuffle < 0 || o->shuffle > 2)
    return ds_err(err, "shuffle must be 0, 1 or 2 (got %d)", o->shuffle);
  if (blosc_compname_to_compcode(o->cname) < 0)
    return ds_err(err, "cname '%s' is not a codec of this c-blosc (%s)",
                  o->cname, blosc_list_compressors());
  return 0;
}

/* upstream's utils.calc_chunksize rule: chunklen for `expectedlen` rows
 * of `atom` bytes. */
static uint64_t default_chunklen(uint64_t expectedlen, uint64_t atom) {
  double mb = (double)expectedlen * (double)atom / (1024.0 * 1024.0);
  if (mb < 1e-4) mb = 1e-4;
  if (mb > 1e4) mb = 1e4;
  int zone = (int)log10(mb);  /* truncated toward zero, as Python's int() */
  uint64_t chunksize = (uint64_t)4096 << (zone + 6);
  chunksize = chunksize / atom * atom;
  if (chunksize < atom) chunksize = atom;
  return chunksize / atom;
}

/* ------------------------------------------------------------ files */

static int io_err(char **err, const char *what, const char *path) {
  return ds_err(err, "%s %s: %s", what, path, strerror(errno));
}

/* A whole file from two pieces (either may be empty). */
static int write_file2(const char *path, const void *a, size_t na,
                       const void *b, size_t nb, int sync, char **err) {
  int fd = ds_vfs_open_fd(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return io_err(err, "cannot create", path);
  int rc = ds_write_all(fd, a, na, path, err) || ds_write_all(fd, b, nb, path, err);
  if (!rc && sync && ds_vfs_fsync_fd(fd)) rc = io_err(err, "cannot fsync", path);
  close(fd);
  return rc ? -1 : 0;
}

static int write_text(const char *path, const ds_buf *b, int sync, char **err) {
  return write_file2(path, b->data, b->len, "", 0, sync, err);
}

static int make_dir(const char *path, char **err) {
  return ds_vfs_mkdir(path) && errno != EEXIST ? io_err(err, "cannot create", path)
                                              : 0;
}

static char *chunk_path(const bw_col *c, uint64_t k) {
  return ds_strf("%s/data/__%llu.blp", c->dir, (unsigned long long)k);
}

/* ------------------------------------------------------------ chunks */

/* Blosc typesize, upstream's rule: S 1, U 4, object 1, else the item. */
static size_t typesize(const bcolz_dtype *dt) {
  return dt->kind == 'S' || dt->kind == 'O' ? 1 : dt->kind == 'U' ? 4
                                                                 : dt->itemsize;
}

/* Room in c->cbytes for chunk k (none of c's chunks in flight). */
static int cbytes_room(bw_col *c, uint64_t k, char **err) {
  if (k < c->cap_cbytes) return 0;
  size_t nc = c->cap_cbytes ? c->cap_cbytes * 2 : 16;
  while (nc <= k) nc *= 2;
  uint32_t *v = realloc(c->cbytes, nc * sizeof *v);
  if (!v) return ds_err(err, "out of memory");
  c->cbytes = v;
  c->cap_cbytes = nc;
  return 0;
}

/* Compress n bytes and write them as chunk file k of column c, now. */
static int write_chunk(bcolz_writer *w, bw_col *c, uint64_t k,
                       const uint8_t *src, size_t n, char **err) {
  if (cbytes_room(c, k, err)) return -1;
  char *path = chunk_path(c, k);
  if (!path) return ds_err(err, "out of memory");
  int rc = bcolz_chunk_write(w->cw, path, typesize(&c->dt), src, n, &c->cbytes[k], err);
  free(path);
  return rc;
}

/* SQLite's default longest value (SQLITE_MAX_LENGTH): readers hold their
 * max_value_bytes to the connection's limit, so a larger chunk would not
 * read back with SQLite's defaults. */
#define BW_READ_LIMIT ((uint64_t)1000000000)

/* The most bytes one chunk may hold (bcolz_write_options.max_value_bytes). */
static uint64_t chunk_limit(const bcolz_write_options *o) {
  uint64_t lim = o->max_value_bytes ? o->max_value_bytes : DS_MAX_VALUE_BYTES;
  if (lim > BW_READ_LIMIT) lim = BW_READ_LIMIT;
  return lim < (uint64_t)BLOSC_MAX_BUFFERSIZE ? lim : (uint64_t)BLOSC_MAX_BUFFERSIZE;
}

/* A chunk of `rows` cells of `cell` bytes must fit chunk_limit: else an
 * error saying so (the readers could not read it back; c-blosc could not
 * compress it), before anything that large is allocated. */
static int check_chunk(const bcolz_writer *w, uint64_t rows, uint64_t cell, char **err) {
  uint64_t lim = chunk_limit(&w->o);
  if (cell <= lim && rows <= lim / cell) return 0;
  return ds_err(err, "a chunk of %llu row%s of %llu-byte cells is more than "
                     "max_value_bytes=%llu, the most one chunk may hold (a smaller "
                     "type or chunklen; larger chunks could not be read back)",
                (unsigned long long)rows, rows == 1 ? "" : "s", (unsigned long long)cell,
                (unsigned long long)lim);
}

/* The chunk buffer of a column whose width and chunklen are known. */
static int alloc_chunk(bcolz_writer *w, bw_col *c, char **err) {
  if (!c->chunklen)
    c->chunklen = w->o.chunklen ? w->o.chunklen
                  : default_chunklen(w->o.expectedlen,
                                     c->dt.kind == 'O' ? 8 : c->dt.atom);
  if (c->dt.kind == 'O') return 0;
  if (check_chunk(w, c->chunklen, c->dt.atom, err)) {
    char pre[300];
    snprintf(pre, sizeof pre, "column '%.200s'", c->name);
    ds_err_prefix(err, pre);
    return -1;
  }
  bcolz_fast_for(&c->dt, &c->fast);
  if (c->chunklen > SIZE_MAX / c->dt.atom ||
      !(c->chunk = calloc((size_t)(c->chunklen * c->dt.atom), 1)))
    return ds_err(err, "out of memory for a chunk of %llu rows",
                  (unsigned long long)c->chunklen);
  return 0;
}

/* ------------------------------------------------------------ open */

static void free_col(bw_col *c) {
  if (c->spill_fd >= 0) close(c->spill_fd);
  free(c->name);
  free(c->dir);
  free(c->chunk);
  free(c->spare);
  free(c->cbytes);
}

void bcolz_writer_free(bcolz_writer *w) {
  if (!w) return;
  bcolz_chunk_writer_free(w->cw); /* first: it may hold the columns' buffers */
  for (size_t i = 0; i < w->ncols; i++) free_col(&w->cols[i]);
  free(w->cols);
  free(w->win.cols);
  ds_buf_free(&w->obj);
  ds_buf_free(&w->val);
  free(w->dir);
  free(w);
}

/* The folders of one column and its spill file. */
static int open_col(bcolz_writer *w, bw_col *c, char **err) {
  char *data = ds_strf("%s/data", c->dir), *meta = ds_strf("%s/meta", c->dir);
  int rc = !data || !meta ? ds_err(err, "out of memory")
           : (w->carray ? 0 : make_dir(c->dir, err)) || make_dir(data, err) ||
                   make_dir(meta, err) ? -1 : 0;
  free(data);
  free(meta);
  if (rc) return -1;
  if (!c->width_unknown) return alloc_chunk(w, c, err);
  char *sp = ds_strf("%s/" BW_SPILL, c->dir);
  if (!sp) return ds_err(err, "out of memory");
  c->spill_fd = ds_vfs_open_fd(sp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC);
  rc = c->spill_fd < 0 ? io_err(err, "cannot create", sp) : 0;
  free(sp);
  return rc;
}

int bcolz_writer_open(const char *dir, int carray, size_t ncols,
                      const char *const *names, const bcolz_wtype *types,
                      const bcolz_write_options *o, bcolz_writer **out,
                      char **err) {
  *out = NULL;
  if (bcolz_write_check(o, err)) return -1;
  if (ncols == 0) return ds_err(err, "a table needs at least one column");
  if (carray && ncols != 1) return ds_err(err, "a carray has one column");
  for (size_t i = 0; !carray && i < ncols; i++) {
    if (bcolz_write_check_name(names[i], err)) return -1;
    for (size_t j = 0; j < i; j++)
      if (strcmp(names[i], names[j]) == 0)
        return ds_err(err, "column '%s' is named twice", names[i]);
  }
  bcolz_writer *w = calloc(1, sizeof *w);
  if (!w) return ds_err(err, "out of memory");
  w->carray = carray;
  w->o = *o;
  w->ncols = ncols;
  if (!(w->dir = strdup(dir)) || !(w->cols = calloc(ncols, sizeof *w->cols))) {
    bcolz_writer_free(w);
    return ds_err(err, "out of memory");
  }
  for (size_t i = 0; i < ncols; i++) w->cols[i].spill_fd = -1;
  int rc = bcolz_chunk_writer_new(o, ncols, &w->cw, err);
  for (size_t i = 0; !rc && i < ncols; i++) {
    bw_col *c = &w->cols[i];
    c->dt = types[i].dt;
    c->width_unknown = types[i].width_unknown;
    c->chunklen = types[i].chunklen;
    c->name = strdup(names[i]);
    c->dir = carray ? strdup(dir) : ds_strf("%s/%s", dir, names[i]);
    rc = !c->name || !c->dir ? ds_err(err, "out of memory")
                             : open_col(w, c, err);
  }
  if (rc) {
    bcolz_writer_free(w);
    return -1;
  }
  w->all_fast = 1;
  for (size_t i = 0; i < ncols; i++)
    if (!w->cols[i].fast.put || w->cols[i].width_unknown ||
        w->cols[i].fast.size != w->cols[i].dt.atom) /* scalar cells only */
      w->all_fast = 0;
  w->win.rows = &w->rows;
  w->win.ncols = ncols;
  if (w->all_fast && (w->win.cols = calloc(ncols, sizeof *w->win.cols)))
    for (size_t i = 0; i < ncols; i++) w->win.cols[i].fast = w->cols[i].fast;
  *out = w;
  return 0;
}

/* ------------------------------------------------------------ rows */

/* Characters of valid UTF-8 (U width) or bytes (S width) of a value. */
static int spill_width(const bw_col *c, const ds_value *v, uint64_t *width,
                       char **err) {
  if (bcolz_cell_text_check(&c->dt, v, err)) return -1;
  if (c->dt.kind == 'S') {
    *width = v->u.s.n;
    return 0;
  }
  if (v->type != DS_V_TEXT || !ds_utf8_valid(v->u.s.p, v->u.s.n))
    return ds_err(err, "not valid UTF-8 text");
  uint64_t n = 0;
  for (size_t i = 0; i < v->u.s.n; i++) n += (v->u.s.p[i] & 0xc0) != 0x80;
  *width = n;
  return 0;
}

/* A full open chunk goes to the helper thread; the column goes on in its
 * other buffer. */
static int flush_full(bcolz_writer *w, bw_col *c, char **err) {
  size_t slot = (size_t)(c - w->cols), n = (size_t)(c->chunklen * c->dt.atom);
  uint64_t k = c->nchunks;
  if (k >= c->cap_cbytes && (bcolz_chunk_wait(w->cw, slot, err) || cbytes_room(c, k, err)))
    return -1;
  if (!c->spare && !(c->spare = malloc(n))) return ds_err(err, "out of memory");
  char *path = chunk_path(c, k);
  if (!path) return ds_err(err, "out of memory");
  if (bcolz_chunk_submit(w->cw, slot, path, typesize(&c->dt), c->chunk, n, &c->cbytes[k], err))
    return -1;
  uint8_t *t = c->chunk; /* the spare is free: its chunk was done before the submit */
  c->chunk = c->spare;
  c->spare = t;
  c->nchunks++;
  return 0;
}

/* Every fixed-width column's place for row w->rows (after a truncation,
 * or a chunk that could not be written). */
static void resync_slots(bcolz_writer *w) {
  for (size_t i = 0; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    if (c->chunklen) c->slot = w->rows % c->chunklen;
  }
}

/* The row whose cells are in place is added: each fixed-width column from
 * column `first` on moves to its next slot, and writes its chunk when that
 * is full. */
static int advance_fixed(bcolz_writer *w, size_t first, char **err) {
  for (size_t i = first; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    if (c->dt.kind == 'O' || c->width_unknown || ++c->slot < c->chunklen) continue;
    if (flush_full(w, c, err)) {
      resync_slots(w);
      return -1;
    }
    c->slot = 0;
  }
  w->rows++;
  return 0;
}

/* "row R, column 'C': " before an error about one cell. */
static int cell_error(const bcolz_writer *w, const bw_col *c, char **err) {
  char pre[300];
  snprintf(pre, sizeof pre, "row %llu, column '%.200s'", (unsigned long long)w->rows,
           c->name);
  ds_err_prefix(err, pre);
  return -1;
}

/* The rows bcolz_writer_add_placed added without moving the slots: the
 * slots moved on by them, and the cells to be worked out again (before
 * anything else reads a slot). */
static void catch_up(bcolz_writer *w) {
  if (w->win.lag)
    for (size_t i = 0; i < w->ncols; i++) w->cols[i].slot += w->win.lag;
  w->win.lag = 0;
  w->win.room = 0;
}

int bcolz_writer_add(bcolz_writer *w, const ds_value *row, char **err) {
  if (w->finished) return ds_err(err, "the table is already finished");
  catch_up(w); /* bcolz_writer_window works the cells out again */
  size_t i = 0;
  if (w->all_fast) { /* the common row: every cell through its shortcut */
    for (; i < w->ncols; i++) {
      bw_col *c = &w->cols[i];
      if (!bcolz_fast_put(&c->fast, &row[i], c->chunk + c->slot * c->dt.atom)) break;
    }
    if (i == w->ncols) return bcolz_writer_add_placed(w, err);
  }
  /* check and place every (other) cell first: a refused row changes nothing */
  for (; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    int rc;
    uint64_t width = 0;
    if (c->width_unknown) rc = spill_width(c, &row[i], &width, err);
    else if (c->dt.kind == 'O') /* pickled again below, once all fit */
      rc = bcolz_cell_encode(&c->dt, &row[i], NULL, &w->obj, err);
    else if (bcolz_fast_put(&c->fast, &row[i], c->chunk + c->slot * c->dt.atom))
      rc = 0;
    else
      rc = bcolz_cell_encode(&c->dt, &row[i], c->chunk + c->slot * c->dt.atom, NULL, err);
    if (!rc && c->width_unknown && c->dt.kind == 'S' && width > UINT32_MAX)
      rc = ds_err(err, "value too long");
    if (!rc && c->width_unknown && width > c->width) /* the widest cell yet: fits a chunk? */
      rc = check_chunk(w, c->chunklen ? c->chunklen : w->o.chunklen ? w->o.chunklen : 1,
                       c->dt.kind == 'U' ? 4 * width : width, err);
    if (rc) return cell_error(w, c, err);
  }
  for (i = 0; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    if (c->dt.kind == 'O' && !c->width_unknown) {
      if (bcolz_cell_encode(&c->dt, &row[i], NULL, &w->obj, err)) return cell_error(w, c, err);
      if (write_chunk(w, c, c->nchunks, w->obj.data, w->obj.len, err))
        return -1;
      c->nchunks++;
      c->obj_nbytes += w->obj.len;
    } else if (c->width_unknown) {
      uint64_t width = 0;
      spill_width(c, &row[i], &width, err);
      uint8_t len[4];
      uint32_t n = (uint32_t)row[i].u.s.n;
      for (int b = 0; b < 4; b++) len[b] = (uint8_t)(n >> (8 * b));
      /* at the logical end: a failed write leaves the file as it was */
      if (ds_pwrite_all(c->spill_fd, len, 4, c->spill_size, BW_SPILL, err) ||
          ds_pwrite_all(c->spill_fd, row[i].u.s.p, n, c->spill_size + 4, BW_SPILL, err))
        return -1;
      c->spill_size += 4 + (uint64_t)n;
      if (width > c->width) c->width = width;
    }
  }
  return advance_fixed(w, 0, err);
}

uint64_t bcolz_writer_count(const bcolz_writer *w) { return w->rows; }

bcolz_window *bcolz_writer_window(bcolz_writer *w) {
  if (!w->win.cols || w->finished) return NULL;
  if (!w->win.room) {
    catch_up(w);
    w->win.room = UINT64_MAX;
    for (size_t i = 0; i < w->ncols; i++) {
      const bw_col *c = &w->cols[i];
      w->win.cols[i].cell0 = c->chunk + c->slot * c->dt.atom;
      if (c->chunklen - c->slot < w->win.room) w->win.room = c->chunklen - c->slot;
    }
  }
  return &w->win;
}

int bcolz_writer_add_placed(bcolz_writer *w, char **err) {
  if (bcolz_window_add(&w->win)) return 0; /* no column fills up: only the cells move */
  catch_up(w);
  /* advance each column; the first to fill up flushes */
  size_t i;
  for (i = 0; i < w->ncols && ++w->cols[i].slot < w->cols[i].chunklen; i++) continue;
  if (i == w->ncols) {
    w->rows++;
    return 0;
  }
  w->cols[i].slot--; /* advance_fixed moves it again */
  return advance_fixed(w, i, err);
}

/* ------------------------------------------------------------ truncate */

/* Read chunk file k of c back into the open chunk buffer. */
static int reload_chunk(bw_col *c, uint64_t k, char **err) {
  char *path = chunk_path(c, k);
  if (!path) return ds_err(err, "out of memory");
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC), rc = 0;
  ds_vfs_info st;
  uint8_t *buf = NULL;
  if (fd < 0 || ds_vfs_stat_fd(fd, &st)) {
    rc = io_err(err, "cannot read", path);
  } else if (!(buf = malloc((size_t)st.size + 1))) {
    rc = ds_err(err, "out of memory");
  } else if (ds_pread_all(fd, buf, (size_t)st.size, 0, path, err)) {
    rc = -1;
  } else {
    size_t n = (size_t)(c->chunklen * c->dt.atom);
    int r = st.size > BW_HEADER
                ? blosc_decompress_ctx(buf + BW_HEADER, c->chunk, n, 1) : -1;
    if (r != (int)n) rc = ds_err(err, "%s: cannot decompress", path);
  }
  if (fd >= 0) close(fd);
  free(buf);
  free(path);
  return rc;
}

/* Cut the spill file after its first `rows` values; the width is that of
 * the values kept. */
static int cut_spill(bw_col *c, uint64_t rows, char **err) {
  uint64_t at = 0, width = 0;
  ds_buf v = {0};
  int rc = 0;
  for (uint64_t r = 0; !rc && r < rows; r++) {
    uint8_t len[4];
    if (ds_pread_all(c->spill_fd, len, 4, at, BW_SPILL, err)) {
      rc = -1;
      break;
    }
    uint32_t n = (uint32_t)len[0] | (uint32_t)len[1] << 8 |
                 (uint32_t)len[2] << 16 | (uint32_t)len[3] << 24;
    if (ds_buf_reserve(&v, n + 1)) {
      rc = ds_err(err, "out of memory");
      break;
    }
    if (ds_pread_all(c->spill_fd, v.data, n, at + 4, BW_SPILL, err)) {
      rc = -1;
      break;
    }
    uint64_t wd = n;
    if (c->dt.kind == 'U') {
      wd = 0;
      for (uint32_t i = 0; i < n; i++) wd += (v.data[i] & 0xc0) != 0x80;
    }
    if (wd > width) width = wd;
    at += 4 + (uint64_t)n;
  }
  ds_buf_free(&v);
  if (rc) return -1;
  if (ftruncate(c->spill_fd, (off_t)at))
    return io_err(err, "cannot truncate", BW_SPILL);
  c->spill_size = at;
  c->width = width;
  return 0;
}

int bcolz_writer_truncate(bcolz_writer *w, uint64_t rows, char **err) {
  if (w->finished) return ds_err(err, "the table is already finished");
  if (rows > w->rows)
    return ds_err(err, "cannot truncate to %llu rows, there are %llu",
                  (unsigned long long)rows, (unsigned long long)w->rows);
  catch_up(w); /* the slots current (resync_slots sets them again) */
  if (bcolz_chunk_drain(w->cw, err)) return -1;
  for (size_t i = 0; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    if (c->width_unknown) {
      if (cut_spill(c, rows, err)) return -1;
      continue;
    }
    uint64_t keep = c->dt.kind == 'O' ? rows : rows / c->chunklen;
    if (c->dt.kind != 'O' && keep < c->nchunks &&
        reload_chunk(c, keep, err))
      return -1;
    while (c->nchunks > keep) {
      char *path = chunk_path(c, --c->nchunks);
      if (path) ds_vfs_remove(path);
      free(path);
    }
    if (c->dt.kind == 'O') { /* pickle sizes of the rows kept */
      c->obj_nbytes = 0;
      for (uint64_t k = 0; k < c->nchunks; k++) {
        char *path = chunk_path(c, k);
        int fd = path ? ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC) : -1;
        uint8_t h[BW_HEADER + 16];
        if (fd >= 0 && ds_vfs_pread_fd(fd, h, sizeof h, 0) == (ssize_t)sizeof h)
          c->obj_nbytes += (uint64_t)h[20] | (uint64_t)h[21] << 8 |
                           (uint64_t)h[22] << 16 | (uint64_t)h[23] << 24;
        if (fd >= 0) close(fd);
        free(path);
      }
    }
  }
  w->rows = rows;
  resync_slots(w);
  return 0;
}

/* ------------------------------------------------------------ finish */

/* Spilled values become chunks now that the width is known. */
static int finish_spill(bcolz_writer *w, bw_col *c, char **err) {
  uint64_t width = c->width ? c->width : 1;
  c->dt.itemsize = (uint32_t)(c->dt.kind == 'U' ? width * 4 : width);
  c->dt.atom = c->dt.itemsize * c->dt.nelem;
  snprintf(c->dt.str, sizeof c->dt.str, "%c%c%llu", c->dt.kind == 'U' ? '<' : '|',
           c->dt.kind, (unsigned long long)width);
  if (alloc_chunk(w, c, err)) return -1;
  uint64_t at = 0;
  for (uint64_t r = 0; r < w->rows; r++) {
    uint8_t len[4];
    if (ds_pread_all(c->spill_fd, len, 4, at, BW_SPILL, err)) return -1;
    uint32_t n = (uint32_t)len[0] | (uint32_t)len[1] << 8 |
                 (uint32_t)len[2] << 16 | (uint32_t)len[3] << 24;
    if (ds_buf_reserve(&w->val, n + 1)) return ds_err(err, "out of memory");
    if (ds_pread_all(c->spill_fd, w->val.data, n, at + 4, BW_SPILL, err)) return -1;
    at += 4 + (uint64_t)n;
    ds_value v = {c->dt.kind == 'U' ? DS_V_TEXT : DS_V_BYTES,
                  {.s = {w->val.data, n}}};
    if (bcolz_cell_encode(&c->dt, &v,
                          c->chunk + (r % c->chunklen) * c->dt.atom, NULL, err))
      return -1;
    if ((r + 1) % c->chunklen == 0 && flush_full(w, c, err)) return -1;
  }
  close(c->spill_fd);
  c->spill_fd = -1;
  char *sp = ds_strf("%s/" BW_SPILL, c->dir);
  if (sp) ds_vfs_remove(sp);
  free(sp);
  c->width_unknown = 0;
  return 0;
}

/* The dtype text of meta/storage: numpy's str(dtype) of one element. */
static void storage_dtype(const bcolz_dtype *dt, char *out, size_t n) {
  static const char *const units[] = {"Y", "M", "W", "D", "h", "m", "s",
                                      "ms", "us", "ns", "ps", "fs", "as"};
  if (dt->kind == 'O') { snprintf(out, n, "object"); return; }
  if (dt->byteorder == '>' || dt->kind == 'S' || dt->kind == 'U') {
    snprintf(out, n, "%s", dt->str);
    return;
  }
  if (dt->kind == 'M' || dt->kind == 'm') {
    char mult[24] = "";
    if (dt->mult != 1) snprintf(mult, sizeof mult, "%lld", (long long)dt->mult);
    snprintf(out, n, "%s[%s%s]", dt->kind == 'M' ? "datetime64" : "timedelta64",
             mult, units[dt->unit]);
    return;
  }
  if (dt->kind == 'b') { snprintf(out, n, "bool"); return; }
  snprintf(out, n, "%s%u", dt->kind == 'i' ? "int" : dt->kind == 'u' ? "uint"
                                                                   : "float",
           dt->itemsize * 8);
}

/* meta/storage, meta/sizes and __attrs__ of one column. */
static int write_meta(bcolz_writer *w, bw_col *c, char **err) {
  char dtype[48];
  storage_dtype(&c->dt, dtype, sizeof dtype);
  const char *dflt = c->dt.kind == 'S' || c->dt.kind == 'U' ? "\"\""
                     : c->dt.kind == 'b' ? "false"
                     : c->dt.kind == 'f' ? "0.0" : "0";
  ds_buf st = {0}, sz = {0};
  int rc = ds_buf_printf(&st,
                         "{\"dtype\": \"%s\", \"cparams\": {\"clevel\": %d, "
                         "\"shuffle\": %d, \"cname\": \"%s\", \"quantize\": 0}, "
                         "\"chunklen\": %llu, \"expectedlen\": %llu, "
                         "\"dflt\": %s}\n",
                         dtype, w->o.clevel, w->o.shuffle, w->o.cname,
                         (unsigned long long)c->chunklen,
                         (unsigned long long)w->o.expectedlen, dflt);
  uint64_t cb = 0;
  for (uint64_t k = 0; k < c->nchunks; k++) cb += c->cbytes[k];
  /* upstream counts the open chunk as chunklen uncompressed rows */
  uint64_t nbytes = c->dt.kind == 'O' ? c->obj_nbytes : w->rows * c->dt.atom;
  if (c->dt.kind != 'O') cb += c->chunklen * c->dt.atom;
  rc = rc || ds_buf_printf(&sz, "{\"shape\": [%llu", (unsigned long long)w->rows);
  for (int i = 0; !rc && i < c->dt.ndim; i++)
    rc = ds_buf_printf(&sz, ", %llu", (unsigned long long)c->dt.shape[i]);
  rc = rc || ds_buf_printf(&sz, "], \"nbytes\": %llu, \"cbytes\": %llu}\n",
                           (unsigned long long)nbytes, (unsigned long long)cb);
  char *sp = ds_strf("%s/meta/storage", c->dir),
       *zp = ds_strf("%s/meta/sizes", c->dir),
       *ap = ds_strf("%s/__attrs__", c->dir);
  ds_buf attrs = {(uint8_t *)"{}\n", 3, 3, 0, 0};
  if (rc || !sp || !zp || !ap) rc = ds_err(err, "out of memory");
  else rc = write_text(sp, &st, w->o.sync, err) ||
            write_text(zp, &sz, w->o.sync, err) ||
            write_text(ap, &attrs, w->o.sync, err) ? -1 : 0;
  free(sp);
  free(zp);
  free(ap);
  ds_buf_free(&st);
  ds_buf_free(&sz);
  return rc;
}

/* A string as JSON with ensure_ascii (\uXXXX for non-ASCII, surrogate
 * pairs beyond the BMP), as Python's json.dumps writes names. */
static int json_ascii(ds_buf *b, const char *s) {
  const uint8_t *p = (const uint8_t *)s, *e = p + strlen(s);
  if (ds_buf_puts(b, "\"")) return -1;
  while (p < e) {
    uint32_t c = *p;
    int n = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (n > 1) {
      c &= 0x3f >> (n - 1);
      for (int i = 1; i < n; i++) c = c << 6 | (p[i] & 0x3f);
    }
    p += n;
    int rc;
    if (c == '"' || c == '\\') rc = ds_buf_printf(b, "\\%c", (char)c);
    else if (c >= 0x20 && c < 0x7f) rc = ds_buf_printf(b, "%c", (char)c);
    else if (c < 0x10000) rc = ds_buf_printf(b, "\\u%04x", c);
    else rc = ds_buf_printf(b, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
                            0xdc00 + ((c - 0x10000) & 0x3ff));
    if (rc) return -1;
  }
  return ds_buf_puts(b, "\"");
}

int bcolz_writer_finish(bcolz_writer *w, char **err) {
  if (w->finished) return 0;
  catch_up(w);
  for (size_t i = 0; i < w->ncols; i++)
    if (w->cols[i].width_unknown && finish_spill(w, &w->cols[i], err)) return -1;
  if (bcolz_chunk_drain(w->cw, err)) return -1; /* every chunk's cbytes */
  for (size_t i = 0; i < w->ncols; i++) {
    bw_col *c = &w->cols[i];
    uint64_t left = c->dt.kind == 'O' ? 0 : w->rows % c->chunklen;
    if (left && write_chunk(w, c, c->nchunks, c->chunk,
                            (size_t)(left * c->dt.atom), err))
      return -1;
    if (write_meta(w, c, err)) return -1;
    if (w->o.sync) {
      char *d = ds_strf("%s/data", c->dir), *m = ds_strf("%s/meta", c->dir);
      int rc = !d || !m ? ds_err(err, "out of memory")
               : ds_fsync_path(d, err) || ds_fsync_path(m, err) || ds_fsync_path(c->dir, err);
      free(d);
      free(m);
      if (rc) return -1;
    }
  }
  if (!w->carray) {
    ds_buf rd = {0};
    int rc = ds_buf_puts(&rd, "{\"names\": [");
    for (size_t i = 0; !rc && i < w->ncols; i++)
      rc = (i && ds_buf_puts(&rd, ", ")) || json_ascii(&rd, w->cols[i].name);
    rc = rc || ds_buf_puts(&rd, "]}\n");
    char *rp = ds_strf("%s/__rootdirs__", w->dir),
         *ap = ds_strf("%s/__attrs__", w->dir);
    ds_buf attrs = {(uint8_t *)"{}\n", 3, 3, 0, 0};
    if (rc || !rp || !ap) rc = ds_err(err, "out of memory");
    else rc = write_text(ap, &attrs, w->o.sync, err) ||
              write_text(rp, &rd, w->o.sync, err) ? -1 : 0;
    free(rp);
    free(ap);
    ds_buf_free(&rd);
    if (rc || (w->o.sync && ds_fsync_path(w->dir, err))) return -1;
  }
  w->finished = 1;
  return 0;
}

int bcolz_write_is_own(const char *path, char **err) {
  int dir = ds_fmt_replace_dir(path, "a bcolz ctable or carray", err);
  if (dir != 1) return dir;
  ds_vfs_info st;
  char *rd = ds_path_join(path, "__rootdirs__"), *ms = ds_strf("%s/meta/storage", path);
  ds_vfs_list *d = ds_vfs_list_open(NULL, path);
  int entries = 0;
  while (d && ds_vfs_list_next(d) != NULL) entries++;
  ds_vfs_list_close(d);
  int own = !entries || (rd && ds_vfs_lstat(rd, &st) == 0 && st.kind == DS_VFS_FILE) ||
            (ms && ds_vfs_lstat(ms, &st) == 0 && st.kind == DS_VFS_FILE);
  free(rd);
  free(ms);
  if (!d) return ds_err(err, "%s: cannot list: %s", path, strerror(errno));
  if (own) return 0;
  return ds_err(err, "%s: a directory that is not a bcolz ctable or carray (no "
                     "__rootdirs__ or meta/storage; mode=replace replaces only "
                     "those; move it away first)",
                path);
}
