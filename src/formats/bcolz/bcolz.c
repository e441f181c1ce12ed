/* bcolz.c - reader for bcolz 1.x carrays and ctables (see bcolz.h and
 * docs/formats/bcolz.md). Metadata is read at open; chunk files are
 * read whole on demand (never mapped), checked (blpk header, Blosc header against the file
 * size, uncompressed size against the rows the chunk must hold) and
 * decompressed with c-blosc 1.x: blosc_decompress_ctx (one thread) for a
 * whole chunk, blosc_getitem for one row's items. Cells become values here;
 * column statistics are bcolz_stats.c's. */
#include "bcolz.h"
#include "core/lib_versions.h"

#include <blosc.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cancel.h"
#include "core/codec.h"
#include "core/json_file.h"
#include "core/mapped_file.h"
#include "core/npy.h"
#include "core/numbers.h"
#include "core/open_stable.h"
#include "core/utf8.h"
#include "core/vfs.h"
#include "decoders/pickle.h"

/* Chunk files kept loaded per column for row lookups (a scan decompresses
 * a chunk whole and lets its file go at once). Files are read, never
 * mapped: one that shrinks is an error, not a fault. */
#define MAP_SLOTS 32
typedef struct chunk_map {
  ds_file f;
  uint64_t k;
  int open; /* 1: f loaded; 2: only its identity kept (for bcolz_stale) */
} chunk_map;

typedef struct bcolz_col {
  struct bcolz_table *t; /* the table: its folder's descriptor */
  char *name;
  char *path;        /* column directory */
  char *rel;         /* the same under the table's folder: "" or "name/" */
  char *meta_dtype;
  char *attrs;       /* compact JSON */
  bcolz_dtype dt;
  uint64_t len, chunklen, nfull, leftover, nchunks;
  /* cache: up to MAP_SLOTS loaded chunk files (chunk k in slot k %
   * MAP_SLOTS), so random row reads do not read a file each; cf is the one
   * map_chunk returned last */
  chunk_map maps[MAP_SLOTS];
  ds_file *cf;
  uint64_t last_whole; /* the chunk bcolz_chunk decompressed last (+1 = a scan) */
  uint64_t hinted_to;  /* a scan announced the chunk files before it (hint_chunks) */
  uint64_t scan_first; /* a scan begins at chunk scan_first - 1 (0: none; bcolz_scan_from) */
  uint64_t *decodes; /* this column directory's counter (see below) */
} bcolz_col;

/* Every file is read through the table's open folder (ds_vfs_dir:
 * openat on the local file system), never by its path: a table keeps reading the tree it opened
 * while another program exchanges a new one into place (README "Files that
 * change under a query"); a file gone from that tree then fails as a
 * changed dataset. */
struct bcolz_table {
  char *path;
  ds_vfs_dir dir;     /* the table's folder, opened once */
  uint64_t dev, ino;  /* its identity */
  int moved;          /* a read found the folder replaced (bcolz_saw_change) */
  int is_ctable;
  uint64_t nrows;
  size_t ncols;
  bcolz_col *cols;
  char *attrs;
};

/* ------------------------------------------------------------ helpers */

/* 1 when the table's folder is no longer the one at its path (another
 * program replaced or removed it). */
static int root_moved(const bcolz_table *t) {
  ds_vfs_info st;
  return ds_vfs_stat(t->path, &st) != 0 || st.dev != t->dev || st.ino != t->ino;
}

/* 1 when `rel` exists under the table's folder; *is_dir (when not NULL)
 * tells a directory. */
static int exists_at(const bcolz_table *t, const char *rel, int *is_dir) {
  ds_vfs_info st;
  if (ds_vfs_stat_at(&t->dir, rel, &st) != 0) return 0;
  if (is_dir) *is_dir = st.kind == DS_VFS_DIR;
  return 1;
}

/* "<table>/<rel>" (malloc'd; NULL when out of memory). */
static char *full_path(const bcolz_table *t, const char *rel) {
  return *rel ? ds_path_join(t->path, rel) : strdup(t->path);
}

/* Load `rel` (under the table's folder) whole into f; errors name it by
 * its full path. `meta`: a metadata file (meta/sizes, meta/storage,
 * __attrs__), hinted as an index (core/mapped_file.h: a remote one is kept
 * in the disk cache). */
static int load_at(const bcolz_table *t, const char *rel, int meta, ds_file *f, char **err) {
  char *p = full_path(t, rel);
  if (!p) return ds_err(err, "out of memory");
  int rc = meta ? ds_file_load_index_at(f, &t->dir, rel, p, err)
                : ds_file_load_at(f, &t->dir, rel, p, err);
  free(p);
  return rc;
}

/* The JSON file `rel` under the table's folder, parsed (NULL with *err). */
static json_t *json_at(const bcolz_table *t, const char *rel, char **err) {
  ds_file f;
  if (load_at(t, rel, 1, &f, err)) return NULL;
  json_t *j = ds_json_parse(f.data, (size_t)f.size, f.path, err);
  ds_file_close(&f);
  return j;
}

/* Compact JSON text of an object (owned, malloc'd). */
static char *dump_json(json_t *j) {
  return ds_json_dumps(j);
}

/* Read the __attrs__ file of the folder `rel` ("" or "name/") under the
 * table's: missing -> "{}", invalid -> error. */
static int read_attrs(const bcolz_table *t, const char *rel, char **out, char **err) {
  char *p = ds_strf("%s__attrs__", rel);
  if (!p) return ds_err(err, "out of memory");
  int rc = -1;
  if (!exists_at(t, p, NULL)) {
    *out = strdup("{}");
    rc = *out ? 0 : ds_err(err, "out of memory");
  } else {
    json_t *j = json_at(t, p, err);
    if (j) {
      if (!json_is_object(j))
        ds_err(err, "%s/%s: not a JSON object", t->path, p);
      else if (!(*out = dump_json(j)))
        ds_err(err, "out of memory");
      else
        rc = 0;
      json_decref(j);
    }
  }
  free(p);
  return rc;
}

/* ----------------------------------------------------------- dtypes */

static const char *const unit_names[] = {"Y",  "M",  "W",  "D",  "h",
                                         "m",  "s",  "ms", "us", "ns",
                                         "ps", "fs", "as"};

/* "[<mult>?<unit>]" at s, the rest of the string. */
static int parse_unit(const char *s, int *unit, int64_t *mult) {
  if (*s != '[') return -1;
  s++;
  int64_t m = 0;
  int digits = 0;
  while (*s >= '0' && *s <= '9') {
    if (m > 1000000000) return -1;
    m = m * 10 + (*s++ - '0');
    digits = 1;
  }
  if (!digits) m = 1;
  if (m < 1) return -1;
  const char *close = strchr(s, ']');
  if (!close || close[1]) return -1;
  size_t n = (size_t)(close - s);
  for (int i = 0; i < 13; i++)
    if (strlen(unit_names[i]) == n && memcmp(unit_names[i], s, n) == 0) {
      *unit = i;
      *mult = m;
      return 0;
    }
  return -1;
}

/* Parse the meta/storage dtype string (§4). 0, or -1 when unsupported. */
static int parse_dtype(const char *s, bcolz_dtype *dt) {
  memset(dt, 0, sizeof *dt);
  dt->unit = -1;
  dt->mult = 1;
  char order = 0, kind = 0;
  uint64_t size = 0;
  static const struct { const char *name; char kind; uint32_t size; } names[] = {
      {"bool", 'b', 1},    {"int8", 'i', 1},    {"int16", 'i', 2},
      {"int32", 'i', 4},   {"int64", 'i', 8},   {"uint8", 'u', 1},
      {"uint16", 'u', 2},  {"uint32", 'u', 4},  {"uint64", 'u', 8},
      {"float16", 'f', 2}, {"float32", 'f', 4}, {"float64", 'f', 8},
      {"object", 'O', 0},  {"?", 'b', 1},       {"O", 'O', 0},
      {"|O", 'O', 0},      {"O8", 'O', 0},      {"|O8", 'O', 0}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(s, names[i].name) == 0) {
      kind = names[i].kind;
      size = names[i].size;
      order = '<';
      break;
    }
  const char *rest = NULL;
  if (!kind) {
    if (strncmp(s, "datetime64", 10) == 0) {
      kind = 'M', size = 8, order = '<', rest = s + 10;
    } else if (strncmp(s, "timedelta64", 11) == 0) {
      kind = 'm', size = 8, order = '<', rest = s + 11;
    } else {
      const char *q = s;
      if (*q == '<' || *q == '>' || *q == '=' || *q == '|') order = *q++;
      if (order == '=') order = '<';
      if (!order) order = '<';
      if (*q == '?') {
        kind = 'b', size = 1, q++;
      } else {
        kind = *q;
        if (kind == 'a') kind = 'S';
        if (!strchr("biufSUMmO", kind) || !kind) return -1;
        q++;
        if (*q < '0' || *q > '9') {
          if (kind != 'O') return -1;
        }
        while (*q >= '0' && *q <= '9') {
          if (size > 100000000) return -1;
          size = size * 10 + (uint64_t)(*q++ - '0');
        }
        if (kind == 'O') size = 0;
        if (kind == 'U') {
          if (size == 0) return -1;
          size *= 4;
        }
      }
      if (kind == 'M' || kind == 'm') {
        if (size != 8) return -1;
        rest = q;
      } else if (*q) {
        return -1;
      }
    }
  }
  if (rest && parse_unit(rest, &dt->unit, &dt->mult)) return -1;
  switch (kind) {
  case 'b': if (size != 1) return -1; break;
  case 'i': case 'u':
    if (size != 1 && size != 2 && size != 4 && size != 8) return -1;
    break;
  case 'f': if (size != 2 && size != 4 && size != 8) return -1; break;
  case 'S': if (size == 0) return -1; break;
  default: break;
  }
  if (size <= 1 || kind == 'S' || kind == 'O') order = '|';
  if (kind == 'U' && order == '|') order = '<';
  dt->kind = kind;
  dt->byteorder = order;
  dt->itemsize = (uint32_t)size;
  if (kind == 'U')
    snprintf(dt->str, sizeof dt->str, "%cU%u", order, (unsigned)(size / 4));
  else if (kind == 'O')
    snprintf(dt->str, sizeof dt->str, "|O");
  else if (kind == 'M' || kind == 'm') {
    if (dt->mult != 1)
      snprintf(dt->str, sizeof dt->str, "%c%c8[%lld%s]", order, kind,
               (long long)dt->mult, unit_names[dt->unit]);
    else
      snprintf(dt->str, sizeof dt->str, "%c%c8[%s]", order, kind,
               unit_names[dt->unit]);
  } else
    snprintf(dt->str, sizeof dt->str, "%c%c%u", order, kind, (unsigned)size);
  return 0;
}

/* ---------------------------------------------------------- columns */

/* A non-negative JSON integer into *out; -1 for anything else. */
static int json_uint(json_t *v, uint64_t *out) {
  if (!json_is_integer(v) || json_integer_value(v) < 0) return -1;
  *out = (uint64_t)json_integer_value(v);
  return 0;
}

/* Parse meta/storage (tp: its name, tb[0..tn)) and meta/sizes (sp,
 * sb[0..sn)) into c. */
static int parse_meta(bcolz_col *c, const char *tp, const uint8_t *tb,
                      size_t tn, const char *sp, const uint8_t *sb, size_t sn,
                      char **err) {
  int rc = -1;
  json_t *sizes = NULL, *storage = NULL;
  if (!(storage = ds_json_parse(tb, tn, tp, err))) goto done;
  if (!json_is_object(storage)) {
    ds_err(err, "%s: invalid meta/storage: not a JSON object", tp);
    goto done;
  }
  json_t *jd = json_object_get(storage, "dtype");
  if (!json_is_string(jd) ||
      strlen(json_string_value(jd)) != json_string_length(jd)) {
    ds_err(err, "%s: invalid meta/storage: no \"dtype\" string", tp);
    goto done;
  }
  if (!(c->meta_dtype = strdup(json_string_value(jd)))) {
    ds_err(err, "out of memory");
    goto done;
  }
  if (parse_dtype(c->meta_dtype, &c->dt)) {
    ds_err(err, "%s: column '%s': unsupported dtype '%s'", tp, c->name,
           c->meta_dtype);
    goto done;
  }
  if (json_uint(json_object_get(storage, "chunklen"), &c->chunklen) ||
      c->chunklen == 0) {
    ds_err(err, "%s: invalid meta/storage: \"chunklen\" must be an integer >= 1",
           tp);
    goto done;
  }
  json_t *cp = json_object_get(storage, "cparams");
  if (cp && !json_is_object(cp)) {
    ds_err(err, "%s: invalid meta/storage: \"cparams\" is not an object", tp);
    goto done;
  }
  if (!(sizes = ds_json_parse(sb, sn, sp, err))) goto done;
  json_t *shape = json_is_object(sizes) ? json_object_get(sizes, "shape") : NULL;
  if (!json_is_array(shape) || json_array_size(shape) < 1 ||
      json_array_size(shape) > BCOLZ_MAX_DIMS + 1) {
    ds_err(err, "%s: invalid meta/sizes: \"shape\" must be a list of 1 to %d "
           "integers", sp, BCOLZ_MAX_DIMS + 1);
    goto done;
  }
  if (json_uint(json_array_get(shape, 0), &c->len)) {
    ds_err(err, "%s: invalid meta/sizes: shape[0] is not a non-negative integer",
           sp);
    goto done;
  }
  c->dt.ndim = (int)json_array_size(shape) - 1;
  c->dt.nelem = 1;
  for (int i = 0; i < c->dt.ndim; i++) {
    uint64_t d;
    if (json_uint(json_array_get(shape, (size_t)i + 1), &d)) {
      ds_err(err, "%s: invalid meta/sizes: shape[%d] is not a non-negative "
             "integer", sp, i + 1);
      goto done;
    }
    c->dt.shape[i] = d;
    if (d && c->dt.nelem > (UINT64_C(1) << 40) / d) {
      ds_err(err, "%s: invalid meta/sizes: cell shape too large", sp);
      goto done;
    }
    c->dt.nelem *= d;
  }
  if (c->dt.kind == 'O' && c->dt.ndim) {
    ds_err(err, "%s: object column '%s' with a cell shape is not supported", sp,
           c->name);
    goto done;
  }
  c->dt.atom = (uint64_t)c->dt.itemsize * c->dt.nelem;
  if (c->dt.kind != 'O' && c->dt.atom == 0) {
    ds_err(err, "%s: column '%s' has empty cells (shape with a 0 dimension)",
           sp, c->name);
    goto done;
  }
  if (c->dt.kind == 'O') {
    c->nfull = c->len;
    c->leftover = 0;
    c->nchunks = c->len;
  } else {
    if (c->chunklen > UINT32_MAX / c->dt.atom) {
      ds_err(err, "%s: chunklen %llu x %llu bytes per row exceeds a Blosc "
             "chunk", tp, (unsigned long long)c->chunklen,
             (unsigned long long)c->dt.atom);
      goto done;
    }
    c->nfull = c->len / c->chunklen;
    c->leftover = c->len % c->chunklen;
    c->nchunks = c->nfull + (c->leftover > 0);
  }
  rc = 0;
done:
  json_decref(sizes);
  json_decref(storage);
  return rc;
}

/* meta/sizes must claim rows the chunk files can hold. When the last
 * chunk file it implies is missing, the chunk files present are counted:
 * a claim that needs more than twice as many (2^60 rows over two files) is
 * refused at open, rather than have count(*) walk rows that cannot exist;
 * a few missing files are damage, and fail the rows they held. */
static int check_chunk_claim(const bcolz_col *c, char **err) {
  if (c->nchunks == 0) return 0;
  char *last = ds_strf("%sdata/__%llu.blp", c->rel, (unsigned long long)(c->nchunks - 1));
  char *rdir = ds_strf("%sdata", c->rel);
  char *dir = ds_strf("%s/data", c->path);
  int rc = 0;
  if (!last || !dir || !rdir) {
    rc = ds_err(err, "out of memory");
  } else if (!exists_at(c->t, last, NULL)) {
    uint64_t present = 0;
    ds_vfs_list *d = ds_vfs_list_open(&c->t->dir, rdir);
    for (const char *name; d && (name = ds_vfs_list_next(d)) != NULL;) {
      unsigned long long k;
      char tail[8];
      if (sscanf(name, "__%llu.bl%7s", &k, tail) == 2 && strcmp(tail, "p") == 0 &&
          k < c->nchunks)
        present++;
    }
    ds_vfs_list_close(d);
    if (present < c->nchunks / 2)
      rc = ds_err(err, "%s/meta/sizes: %llu rows in chunks of %llu need %llu chunk "
                       "files, but %s holds %llu of them: the sizes cannot be right",
                  c->path, (unsigned long long)c->len, (unsigned long long)c->chunklen,
                  (unsigned long long)c->nchunks, dir, (unsigned long long)present);
  }
  free(last);
  free(dir);
  free(rdir);
  return rc;
}

/* Read meta/sizes, meta/storage and __attrs__ of the carray at c->path. */
static int open_carray(bcolz_col *c, char **err) {
  int rc = -1;
  char *sp = ds_strf("%smeta/sizes", c->rel);
  char *tp = ds_strf("%smeta/storage", c->rel);
  ds_file tf = {0}, sf = {0};
  int topen = 0, sopen = 0;
  if (!sp || !tp) {
    ds_err(err, "out of memory");
    goto done;
  }
  if (!exists_at(c->t, tp, NULL)) {
    ds_err(err, "%s: not a bcolz directory (no __rootdirs__ or meta/storage)",
           c->path);
    goto done;
  }
  if (load_at(c->t, tp, 1, &tf, err)) goto done;
  topen = 1;
  if (!exists_at(c->t, sp, NULL)) {
    ds_err(err, "%s: missing meta/sizes", c->path);
    goto done;
  }
  if (load_at(c->t, sp, 1, &sf, err)) goto done;
  sopen = 1;
  if (parse_meta(c, tf.path, tf.data, (size_t)tf.size, sf.path, sf.data, (size_t)sf.size,
                 err))
    goto done;
  if (check_chunk_claim(c, err)) goto done;
  if (read_attrs(c->t, c->rel, &c->attrs, err)) goto done;
  rc = 0;
done:
  if (topen) ds_file_close(&tf);
  if (sopen) ds_file_close(&sf);
  free(sp);
  free(tp);
  return rc;
}

/* The metadata checks of bcolz_open on texts in memory (the fuzzer's entry). */
int bcolz_parse_meta(const uint8_t *storage, size_t storage_len,
                     const uint8_t *sizes, size_t sizes_len, bcolz_dtype *dt,
                     uint64_t *len, uint64_t *chunklen, char **err) {
  bcolz_col c;
  memset(&c, 0, sizeof c);
  c.name = (char *)"value";
  int rc = parse_meta(&c, "meta/storage", storage, storage_len, "meta/sizes",
                      sizes, sizes_len, err);
  if (rc == 0) {
    *dt = c.dt;
    *len = c.len;
    *chunklen = c.chunklen;
  }
  free(c.meta_dtype);
  return rc;
}

/* Unmap a column's chunk files and free its names (not c itself). */
static void close_col(bcolz_col *c) {
  for (int i = 0; i < MAP_SLOTS; i++)
    if (c->maps[i].open) ds_file_close(&c->maps[i].f);
  free(c->name);
  free(c->path);
  free(c->rel);
  free(c->meta_dtype);
  free(c->attrs);
}

/* Close every column and free the table (NULL is fine). */
void bcolz_close(bcolz_table *t) {
  if (!t) return;
  for (size_t i = 0; i < t->ncols; i++) close_col(&t->cols[i]);
  free(t->cols);
  free(t->attrs);
  free(t->path);
  ds_vfs_dir_close(&t->dir);
  free(t);
}

/* A column name usable as a directory name under the root. */
static int safe_name(const char *s, size_t n) {
  if (n == 0 || strlen(s) != n) return 0;
  if (strcmp(s, ".") == 0 || strcmp(s, "..") == 0) return 0;
  return strchr(s, '/') == NULL;
}

/* Open the ctable whose __rootdirs__ is `rd`: one carray per listed name,
 * each a directory under the root, all of the same length; then the root's
 * __attrs__. */
static int open_ctable(bcolz_table *t, const char *rd, char **err) {
  json_t *j = json_at(t, "__rootdirs__", err);
  if (!j) return -1;
  int rc = -1;
  json_t *names = json_is_object(j) ? json_object_get(j, "names") : NULL;
  if (!json_is_array(names) || json_array_size(names) == 0) {
    ds_err(err, "%s: invalid __rootdirs__: \"names\" must be a non-empty list",
           rd);
    goto done;
  }
  size_t n = json_array_size(names);
  if (!(t->cols = calloc(n, sizeof *t->cols))) {
    ds_err(err, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    json_t *v = json_array_get(names, i);
    if (!json_is_string(v) ||
        !safe_name(json_string_value(v), json_string_length(v))) {
      ds_err(err, "%s: invalid __rootdirs__: name %zu is not a valid column "
             "name", rd, i);
      goto done;
    }
    for (size_t k = 0; k < i; k++)
      if (strcmp(t->cols[k].name, json_string_value(v)) == 0) {
        ds_err(err, "%s: invalid __rootdirs__: column '%s' listed twice", rd,
               t->cols[k].name);
        goto done;
      }
    bcolz_col *c = &t->cols[t->ncols++];
    c->t = t;
    c->name = strdup(json_string_value(v));
    c->path = c->name ? ds_path_join(t->path, c->name) : NULL;
    c->rel = c->name ? ds_strf("%s/", c->name) : NULL;
    if (!c->path || !c->rel) {
      ds_err(err, "out of memory");
      goto done;
    }
    int is_dir = 0;
    if (!exists_at(t, c->name, &is_dir) || !is_dir) {
      ds_err(err, "%s: column '%s' listed in __rootdirs__ has no directory",
             c->path, c->name);
      goto done;
    }
    if (open_carray(c, err)) goto done;
    if (i > 0 && c->len != t->cols[0].len) {
      ds_err(err, "%s: column '%s' has %llu rows but column '%s' has %llu",
             c->path, c->name, (unsigned long long)c->len, t->cols[0].name,
             (unsigned long long)t->cols[0].len);
      goto done;
    }
  }
  t->nrows = t->cols[0].len;
  rc = read_attrs(t, "", &t->attrs, err);
done:
  json_decref(j);
  return rc;
}

/* Open a ctable (a directory with __rootdirs__) or a lone carray, once. */
static int open_once(const char *path, bcolz_table **out, char **err) {
  *out = NULL;
  bcolz_table *t = calloc(1, sizeof *t);
  if (!t || !(t->path = strdup(path))) {
    free(t);
    return ds_err(err, "out of memory");
  }
  size_t pl = strlen(t->path);
  while (pl > 1 && t->path[pl - 1] == '/') t->path[--pl] = 0;
  ds_vfs_info st;
  if (ds_vfs_dir_open(&t->dir, t->path) != 0) {
    if (errno == ENOTDIR)
      ds_err(err, "%s: not a bcolz directory (not a directory)", t->path);
    else
      ds_err(err, "%s: cannot open: %s", t->path, strerror(errno));
    goto fail;
  }
  if (ds_vfs_dir_stat(&t->dir, &st) != 0) {
    ds_err(err, "%s: cannot stat: %s", t->path, strerror(errno));
    goto fail;
  }
  t->dev = st.dev;
  t->ino = st.ino;
  if (exists_at(t, "__rootdirs__", NULL)) {
    t->is_ctable = 1;
    char *rd = ds_path_join(t->path, "__rootdirs__");
    int rc = rd ? open_ctable(t, rd, err) : ds_err(err, "out of memory");
    free(rd);
    if (rc) goto fail;
  } else {
    if (!(t->cols = calloc(1, sizeof *t->cols))) {
      ds_err(err, "out of memory");
      goto fail;
    }
    t->ncols = 1;
    bcolz_col *c = &t->cols[0];
    c->t = t;
    c->name = strdup("value");
    c->path = strdup(t->path);
    c->rel = strdup("");
    if (!c->name || !c->path || !c->rel) {
      ds_err(err, "out of memory");
      goto fail;
    }
    if (open_carray(c, err)) goto fail;
    t->nrows = c->len;
    if (!(t->attrs = strdup(c->attrs))) {
      ds_err(err, "out of memory");
      goto fail;
    }
  }
  *out = t;
  return 0;
fail:
  bcolz_close(t);
  return -1;
}

/* An open through ds_open_stable (core/open_stable.h): the set is the
 * table's folder, which a writer exchanges whole. */
typedef struct bcolz_opening {
  const char *path;
  bcolz_table *t;
} bcolz_opening;

/* ds_open_steps.paths */
static int opening_paths(void *ctx, ds_path_set *set, char **err) {
  return ds_path_set_add(set, ((bcolz_opening *)ctx)->path) ? ds_err(err, "out of memory") : 0;
}

/* ds_open_steps.open */
static int opening_open(void *ctx, char **err) {
  bcolz_opening *o = ctx;
  return open_once(o->path, &o->t, err);
}

/* ds_open_steps.stale */
static int opening_stale(void *ctx) { return bcolz_stale(((bcolz_opening *)ctx)->t); }

/* ds_open_steps.close */
static void opening_close(void *ctx) {
  bcolz_opening *o = ctx;
  bcolz_close(o->t);
  o->t = NULL;
}

int bcolz_open(const char *path, bcolz_table **out, char **err) {
  static const ds_open_steps steps = {opening_paths, opening_open, opening_stale,
                                      opening_close, NULL};
  bcolz_opening o = {path, NULL};
  int rc = ds_open_stable(path, &steps, &o, err);
  *out = rc ? NULL : o.t;
  return rc;
}

/* ---------------------------------------------------------- getters */

/* Getters (see bcolz.h); col is not checked, callers pass col < ncols.
 * The table's path. */
const char *bcolz_path(const bcolz_table *t) { return t->path; }
/* 1 for a ctable, 0 for a lone carray. */
int bcolz_is_ctable(const bcolz_table *t) { return t->is_ctable; }
/* Rows of the table (every column has as many). */
uint64_t bcolz_nrows(const bcolz_table *t) { return t->nrows; }
/* Columns of the table (a carray has one). */
size_t bcolz_ncols(const bcolz_table *t) { return t->ncols; }
/* The root's __attrs__ as compact JSON. */
const char *bcolz_attrs_json(const bcolz_table *t) { return t->attrs; }
/* Column col's name. */
const char *bcolz_col_name(const bcolz_table *t, size_t col) {
  return t->cols[col].name;
}
/* Column col's parsed dtype. */
const bcolz_dtype *bcolz_col_dtype(const bcolz_table *t, size_t col) {
  return &t->cols[col].dt;
}
/* Column col's dtype text as meta/storage has it. */
const char *bcolz_col_meta_dtype(const bcolz_table *t, size_t col) {
  return t->cols[col].meta_dtype;
}
/* Column col's chunklen from meta/storage. */
uint64_t bcolz_col_chunklen(const bcolz_table *t, size_t col) {
  return t->cols[col].chunklen;
}
/* Chunk files column col uses. */
uint64_t bcolz_col_nchunks(const bcolz_table *t, size_t col) {
  return t->cols[col].nchunks;
}
/* Column col's __attrs__ as compact JSON. */
const char *bcolz_col_attrs_json(const bcolz_table *t, size_t col) {
  return t->cols[col].attrs;
}
/* Column col's directory. */
const char *bcolz_col_path(const bcolz_table *t, size_t col) {
  return t->cols[col].path;
}
/* Rows in a full chunk: chunklen, or 1 for object columns. */
static uint64_t rows_per_chunk(const bcolz_col *c) {
  return c->dt.kind == 'O' ? 1 : c->chunklen;
}
/* Rows held by chunk k (0 past the last chunk). */
uint64_t bcolz_col_chunk_rows(const bcolz_table *t, size_t col, uint64_t k) {
  const bcolz_col *c = &t->cols[col];
  if (k >= c->nchunks) return 0;
  if (k < c->nfull) return rows_per_chunk(c);
  return c->leftover;
}
/* The first row of chunk k. */
uint64_t bcolz_col_chunk_first(const bcolz_table *t, size_t col, uint64_t k) {
  return k * rows_per_chunk(&t->cols[col]);
}
/* The chunk that holds row. */
uint64_t bcolz_col_chunk_of(const bcolz_table *t, size_t col, uint64_t row) {
  return row / rows_per_chunk(&t->cols[col]);
}

/* ----------------------------------------------------------- chunks */

/* Check a chunk file's blpk and Blosc headers against its size. */
int bcolz_check_chunk_file(const uint8_t *p, uint64_t size, const char *name,
                           uint64_t *nbytes, char **err) {
  if (size < 32)
    return ds_err(err, "%s: chunk file of %llu bytes is too short (at least "
                  "32: blpk header + Blosc header)", name,
                  (unsigned long long)size);
  if (memcmp(p, "blpk", 4) != 0)
    return ds_err(err, "%s: bad magic at byte 0 (expected \"blpk\")", name);
  if (p[4] != 1)
    return ds_err(err, "%s: unsupported blpk version %u at byte 4", name,
                  (unsigned)p[4]);
  if (ds_le64(p + 8) != 1)
    return ds_err(err, "%s: blpk nchunks is %llu at byte 8 (expected 1)", name,
                  (unsigned long long)ds_le64(p + 8));
  const uint8_t *b = p + 16;
  if (b[0] == 0 || b[0] > 2)
    return ds_err(err, "%s: unsupported Blosc format version %u at byte 16",
                  name, (unsigned)b[0]);
  if (b[3] == 0)
    return ds_err(err, "%s: Blosc typesize 0 at byte 19", name);
  uint32_t cbytes = ds_le32(b + 12);
  if ((uint64_t)cbytes > size - 16)
    return ds_err(err, "%s: Blosc header says %u compressed bytes but the "
                  "file has %llu after the 16-byte blpk header", name, cbytes,
                  (unsigned long long)(size - 16));
  size_t nb = 0;
  /* validate against the header's own length: bytes after it are ignored,
   * as upstream ignores them (c-blosc wants the exact compressed size) */
  if (blosc_cbuffer_validate(b, (size_t)cbytes, &nb) != 0)
    return ds_err(err, "%s: invalid Blosc header (sizes inconsistent with the "
                  "file's %llu bytes)", name, (unsigned long long)size);
  if (nb != ds_le32(b + 4))
    return ds_err(err, "%s: invalid Blosc header", name);
  *nbytes = nb;
  return 0;
}

/* Decompress the validated Blosc buffer b (nbytes uncompressed) into buf. */
static int decompress(const uint8_t *b, uint64_t nbytes, const char *name,
                      ds_buf *buf, char **err) {
  if (buf->max && nbytes > buf->max) { /* max_value_bytes */
    ds_err_too_big(err, "chunk", nbytes, buf->max);
    ds_err_prefix(err, name);
    return -1;
  }
  if (ds_buf_reserve(buf, nbytes ? nbytes : 1))
    return ds_err(err, "%s: out of memory for %llu bytes", name,
                  (unsigned long long)nbytes);
  buf->len = 0;
  if (nbytes == 0) return 0;
  int r = blosc_decompress_ctx(b, buf->data, (size_t)nbytes, 1);
  if (r < 0 || (uint64_t)r != nbytes) {
    const char *lib = blosc_cbuffer_complib(b);
    int fl = (int)(b[2] >> 5);
    const char *avail = blosc_list_compressors();
    int missing = 0;
    if (lib && avail) {
      const char *cn = fl == 0 ? "blosclz" : fl == 1 ? "lz4" : fl == 2 ? "snappy"
                       : fl == 3 ? "zlib" : fl == 4 ? "zstd" : NULL;
      if (!(b[2] & BLOSC_MEMCPYED) && (!cn || !strstr(avail, cn))) missing = 1;
    }
    if (missing)
      return ds_err(err, "%s: chunk uses codec %s, not available in this "
                    "c-blosc build", name, lib ? lib : "?");
    return ds_err(err, "%s: Blosc decompression failed (code %d): corrupt "
                  "chunk", name, r);
  }
  buf->len = (size_t)nbytes;
  return 0;
}

/* Check a chunk file and decompress it into buf (the fuzzer's entry). */
int bcolz_decode_chunk_file(const uint8_t *p, uint64_t size, const char *name,
                            ds_buf *buf, char **err) {
  uint64_t nbytes;
  if (bcolz_check_chunk_file(p, size, name, &nbytes, err)) return -1;
  return decompress(p + 16, nbytes, name, buf, err);
}

/* Decompression counters, one per column directory path, process-wide:
 * bcolz_decode_count() shows that a query left a column alone. Entries
 * live as long as the process (one per distinct directory opened). */
typedef struct decode_counter {
  struct decode_counter *next;
  uint64_t n;
  char path[];
} decode_counter;
static decode_counter *counters;
static pthread_mutex_t counters_lock = PTHREAD_MUTEX_INITIALIZER;

/* The counter of a directory; create = 1 adds it when missing. */
static uint64_t *counter_of(const char *path, int create) {
  pthread_mutex_lock(&counters_lock);
  decode_counter *e = counters;
  while (e && strcmp(e->path, path) != 0) e = e->next;
  if (!e && create && (e = malloc(sizeof *e + strlen(path) + 1))) {
    e->n = 0;
    strcpy(e->path, path);
    e->next = counters;
    counters = e;
  }
  pthread_mutex_unlock(&counters_lock);
  return e ? &e->n : NULL;
}

/* Count one decompression of column c (its directory's counter). */
static void count_decode(bcolz_col *c) {
  if (!c->decodes) c->decodes = counter_of(c->path, 1);
  if (c->decodes) __atomic_fetch_add(c->decodes, 1, __ATOMIC_RELAXED);
}

/* Decompressions of chunks under column_dir so far (0 when none). */
uint64_t bcolz_decode_count(const char *column_dir) {
  uint64_t *n = counter_of(column_dir, 0);
  return n ? __atomic_load_n(n, __ATOMIC_RELAXED) : 0;
}

/* The file name of chunk k of column c (malloc'd; NULL: out of memory). */
static char *chunk_path(const bcolz_col *c, uint64_t k) {
  return ds_strf("%s/data/__%llu.blp", c->path, (unsigned long long)k);
}

/* Open chunk k of column c through the table's folder into f (loaded
 * whole when `load`); fp is its full name. */
static int chunk_open(const bcolz_col *c, uint64_t k, const char *fp, int load, ds_file *f,
                      char **err) {
  char *rel = ds_strf("%sdata/__%llu.blp", c->rel, (unsigned long long)k);
  if (!rel) return ds_err(err, "out of memory");
  int rc = load ? ds_file_load_at(f, &c->t->dir, rel, fp, err)
                : ds_file_open_at(f, &c->t->dir, rel, fp, err);
  int gone = rc && !exists_at(c->t, rel, NULL) && errno == ENOENT;
  free(rel);
  if (!rc || !gone) return rc; /* other errors say what is wrong */
  free(*err);
  *err = NULL;
  if (root_moved(c->t)) { /* the tree read is no longer the table's */
    c->t->moved = 1;
    return ds_err_changed(err, c->t->path);
  }
  return ds_err(err, "%s: chunk file not found (column '%s' needs chunks 0..%llu)", fp,
                c->name, (unsigned long long)(c->nchunks - 1));
}

/* Check the bytes of chunk k's file (data[0..size), named path) and the
 * size the chunk must hold. *nbytes = the Blosc uncompressed size. */
static int check_chunk(const bcolz_col *c, uint64_t k, const uint8_t *data, uint64_t size,
                       const char *path, uint64_t *nbytes, char **err) {
  if (bcolz_check_chunk_file(data, size, path, nbytes, err)) return -1;
  if (c->dt.kind == 'O') return 0;
  uint64_t need = (k < c->nfull ? c->chunklen : c->leftover) * c->dt.atom;
  if (k < c->nfull ? *nbytes != need : *nbytes < need)
    return ds_err(err, "%s: Blosc chunk holds %llu bytes but %s chunk %llu "
                  "must hold %s%llu (%llu rows of %llu bytes)", path,
                  (unsigned long long)*nbytes,
                  k < c->nfull ? "full" : "leftover", (unsigned long long)k,
                  k < c->nfull ? "" : "at least ", (unsigned long long)need,
                  (unsigned long long)(k < c->nfull ? c->chunklen : c->leftover),
                  (unsigned long long)c->dt.atom);
  return 0;
}

/* chunk k out of range: an error naming the column. */
static int chunk_range_error(const bcolz_col *c, uint64_t k, char **err) {
  return ds_err(err, "%s: chunk %llu out of range (%llu chunks)", c->path,
                (unsigned long long)k, (unsigned long long)c->nchunks);
}

/* Load (or reuse the loaded copy of) chunk k's file; check it and the size
 * it must hold. *nbytes = the Blosc uncompressed size. */
static int map_chunk(bcolz_col *c, uint64_t k, uint64_t *nbytes, char **err) {
  if (k >= c->nchunks) return chunk_range_error(c, k, err);
  chunk_map *m = &c->maps[k % MAP_SLOTS];
  if (m->open != 1 || m->k != k) {
    if (m->open) {
      ds_file_close(&m->f);
      m->open = 0;
    }
    char *fp = chunk_path(c, k);
    if (!fp) return ds_err(err, "out of memory");
    int rc = chunk_open(c, k, fp, 1, &m->f, err);
    free(fp);
    if (rc) return -1;
    m->open = 1;
    m->k = k;
  }
  c->cf = &m->f;
  return check_chunk(c, k, c->cf->data, c->cf->size, c->cf->path, nbytes, err);
}

/* The rows of decompressed chunk k in buf: *p its data, *rows its row
 * count (an object column's chunk is one pickled value); 0. */
static int chunk_rows(const bcolz_col *c, uint64_t k, ds_buf *buf, const uint8_t **p,
                      uint64_t *rows) {
  *p = buf->data;
  if (c->dt.kind == 'O') {
    *rows = 1;
  } else {
    *rows = k < c->nfull ? c->chunklen : c->leftover;
    buf->len = (size_t)(*rows * c->dt.atom);
  }
  return 0;
}

/* Read chunk k's file into `file` (reused: no allocation per chunk once
 * it is large enough), check it and decompress it into buf (see bcolz.h);
 * the table's chunk cache is left alone. */
int bcolz_chunk_read(bcolz_table *t, size_t col, uint64_t k, ds_buf *file, ds_buf *buf,
                     const uint8_t **p, uint64_t *rows, char **err) {
  if (col >= t->ncols) return ds_err(err, "%s: no column %zu", t->path, col);
  bcolz_col *c = &t->cols[col];
  if (k >= c->nchunks) return chunk_range_error(c, k, err);
  char *fp = chunk_path(c, k);
  if (!fp) return ds_err(err, "out of memory");
  ds_file f;
  uint64_t nbytes;
  int rc = chunk_open(c, k, fp, 0, &f, err);
  if (rc == 0) {
    if (f.size > SIZE_MAX || ds_buf_reserve(file, f.size ? (size_t)f.size : 1))
      rc = ds_err(err, "%s: out of memory for its %llu bytes", fp, (unsigned long long)f.size);
    else
      rc = ds_file_read(&f, 0, f.size, file->data, err);
    file->len = rc ? 0 : (size_t)f.size;
    ds_file_close(&f);
  }
  if (rc == 0) rc = check_chunk(c, k, file->data, file->len, fp, &nbytes, err);
  if (rc == 0) {
    count_decode(c);
    rc = decompress(file->data + 16, nbytes, fp, buf, err);
  }
  free(fp);
  return rc ? -1 : chunk_rows(c, k, buf, p, rows);
}

/* Chunk files a scan keeps announced ahead of it (ds_vfs_load_many: a
 * remote table's next chunk files are fetched whole in parallel on a
 * helper thread while the scan decodes the ones before them, instead of
 * one or two round trips per chunk in a row): those of the next
 * AHEAD_ROWS rows, at least 2 and at most AHEAD_MAX chunk files. Counted
 * in rows, so that the columns of a table, whatever their chunk lengths,
 * are announced about as far ahead in time (a file fetched ahead is kept
 * only a short while: remote/remote_ahead.h). */
#define AHEAD_ROWS ((uint64_t)1 << 20)
#define AHEAD_MAX 32

/* A scan is at chunk k (right after k - 1): when less than half of the
 * window ahead of it is announced, announce the rest, so that one half
 * is fetched while the one before it is decoded. */
static void hint_chunks(bcolz_col *c, uint64_t k) {
  uint64_t rows = c->dt.kind == 'O' ? 1 : c->chunklen; /* of a chunk */
  uint64_t ahead = AHEAD_ROWS / rows;
  if (ahead < 2) ahead = 2;
  if (ahead > AHEAD_MAX) ahead = AHEAD_MAX;
  if (c->hinted_to < k) c->hinted_to = k;
  if (c->hinted_to >= k + ahead / 2 + 1 || c->hinted_to >= c->nchunks) return;
  uint64_t end = k + ahead < c->nchunks ? k + ahead : c->nchunks;
  char *v[AHEAD_MAX] = {0};
  size_t m = 0;
  for (uint64_t i = c->hinted_to; i < end; i++)
    if ((v[m] = chunk_path(c, i))) m++;
  ds_vfs_load_many((const char *const *)v, m);
  for (size_t i = 0; i < m; i++) free(v[i]);
  c->hinted_to = end;
}

/* Decompress chunk k of a column into buf, then release its mapped pages. */
int bcolz_chunk(bcolz_table *t, size_t col, uint64_t k, ds_buf *buf,
                const uint8_t **p, uint64_t *rows, char **err) {
  if (col >= t->ncols) return ds_err(err, "%s: no column %zu", t->path, col);
  bcolz_col *c = &t->cols[col];
  uint64_t nbytes;
  if (k > 0 && c->last_whole == k - 1) {
    hint_chunks(c, k);
  } else {
    c->hinted_to = k + 1; /* not (yet) a scan: nothing announced after k */
    /* the first chunk of a scan: its next chunk files are fetched while
     * this one is read */
    if (c->scan_first == k + 1) hint_chunks(c, k + 1);
  }
  c->scan_first = 0;
  if (map_chunk(c, k, &nbytes, err)) return -1;
  count_decode(c);
  int rc = decompress(c->cf->data + 16, nbytes, c->cf->path, buf, err);
  /* a scan (chunk k right after chunk k-1): let the previous file's bytes
   * go, so a scan's memory does not grow with the files kept; lookups keep
   * theirs (at most MAP_SLOTS). The identity stays for bcolz_stale
   * (decompressed chunks may be cached). */
  if (k > 0 && c->last_whole == k - 1) {
    chunk_map *m = &c->maps[(k - 1) % MAP_SLOTS];
    if (m->open == 1 && m->k == k - 1) {
      ds_file_forget_data(&m->f);
      m->open = 2;
    }
  }
  c->last_whole = k;
  return rc ? -1 : chunk_rows(c, k, buf, p, rows);
}

void bcolz_scan_from(bcolz_table *t, uint64_t row) {
  for (size_t i = 0; i < t->ncols; i++)
    t->cols[i].scan_first = row < t->nrows ? bcolz_col_chunk_of(t, i, row) + 1 : 0;
}

/* 1 when chunk k of a column is one Blosc block (c-blosc 1.x writes one
 * block for most chunks of 8-byte columns): a single-row read then
 * decompresses the whole chunk anyway. */
int bcolz_chunk_one_block(bcolz_table *t, size_t col, uint64_t k, int *one,
                          char **err) {
  if (col >= t->ncols) return ds_err(err, "%s: no column %zu", t->path, col);
  bcolz_col *c = &t->cols[col];
  uint64_t nbytes;
  if (map_chunk(c, k, &nbytes, err)) return -1;
  *one = c->dt.kind == 'O' || ds_le32(c->cf->data + 16 + 8) >= nbytes;
  return 0;
}

/* One row's bytes: blosc_getitem of just its items when they line up with
 * the typesize, else the whole chunk inflated; object rows are a chunk each. */
int bcolz_row_atom(bcolz_table *t, size_t col, uint64_t row, ds_buf *out,
                   char **err) {
  if (col >= t->ncols) return ds_err(err, "%s: no column %zu", t->path, col);
  bcolz_col *c = &t->cols[col];
  if (row >= c->len)
    return ds_err(err, "%s: row %llu out of range (%llu rows)", c->path,
                  (unsigned long long)row, (unsigned long long)c->len);
  if (c->dt.kind == 'O') {
    const uint8_t *p;
    uint64_t rows;
    return bcolz_chunk(t, col, row, out, &p, &rows, err);
  }
  uint64_t k = row / c->chunklen, nbytes;
  if (map_chunk(c, k, &nbytes, err)) return -1;
  count_decode(c);
  const uint8_t *b = c->cf->data + 16;
  uint64_t ts = b[3];
  uint64_t off = (row % c->chunklen) * c->dt.atom;
  if (out->max && c->dt.atom > out->max) { /* max_value_bytes */
    ds_err_too_big(err, "row", c->dt.atom, out->max);
    ds_err_prefix(err, c->cf->path);
    return -1;
  }
  if (ds_buf_reserve(out, c->dt.atom))
    return ds_err(err, "out of memory");
  out->len = 0;
  if (off % ts || c->dt.atom % ts || nbytes % ts) {
    /* items do not line up with rows: inflate the whole chunk */
    ds_buf tmp = {0};
    tmp.max = out->max; /* the whole chunk: max_value_bytes applies */
    if (decompress(b, nbytes, c->cf->path, &tmp, err)) {
      ds_buf_free(&tmp);
      return -1;
    }
    memcpy(out->data, tmp.data + off, c->dt.atom);
    ds_buf_free(&tmp);
  } else {
    int r = blosc_getitem(b, (int)(off / ts), (int)(c->dt.atom / ts),
                          out->data);
    if (r < 0 || (uint64_t)r != c->dt.atom)
      return ds_err(err, "%s: Blosc decompression of row %llu failed (code "
                    "%d): corrupt chunk", c->cf->path, (unsigned long long)row,
                    r);
  }
  out->len = (size_t)c->dt.atom;
  return 0;
}

/* ------------------------------------------------------------ cells */

/* Copy p[0..n) into the arena as *out; -1 when out of memory. */
static int arena_copy(ds_arena *a, const uint8_t *p, size_t n,
                      const uint8_t **out) {
  uint8_t *d = ds_arena_alloc(a, n ? n : 1);
  if (!d) return -1;
  if (n) memcpy(d, p, n);
  *out = d;
  return 0;
}

/* UCS-4 units of a U element as UTF-8 appended to b (trailing U+0000
 * removed). *cps = code points kept. */
int bcolz_ucs4_to_utf8(const uint8_t *p, uint32_t itemsize, int big,
                       ds_buf *b, uint64_t *cps, char **err) {
  uint32_t n = itemsize / 4;
  while (n > 0 && ds_load_uint(p + 4 * (n - 1), 4, big) == 0) n--;
  if (cps) *cps = n;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t u = (uint32_t)ds_load_uint(p + 4 * i, 4, big);
    uint8_t o[4];
    size_t k = ds_utf8_encode(u, o);
    if (!k)
      return ds_err(err, "invalid UCS-4 code unit 0x%X at character %u", u, i);
    if (ds_buf_append(b, o, k)) return ds_err(err, "out of memory");
  }
  return 0;
}

/* Finish a TEXT cell built in b by a call that returned rc: on success
 * copy b into the arena as out; free b either way. */
static int text_value(int rc, ds_buf *b, ds_arena *a, ds_value *out, char **err) {
  if (rc == 0 && arena_copy(a, b->data, b->len, &out->u.s.p)) rc = ds_err(err, "out of memory");
  if (rc == 0) {
    out->u.s.n = b->len;
    out->type = DS_V_TEXT;
  }
  ds_buf_free(b);
  return rc ? -1 : 0;
}

/* One scalar element. */
static int scalar_value(const bcolz_dtype *dt, const uint8_t *p, int flags,
                        ds_arena *a, ds_value *out, char **err) {
  int big = dt->byteorder == '>';
  memset(out, 0, sizeof *out);
  switch (dt->kind) {
  case 'b':
    out->type = DS_V_BOOL;
    out->u.i = p[0] != 0;
    return 0;
  case 'i':
    out->type = DS_V_INT;
    out->u.i = ds_load_int(p, dt->itemsize, big);
    return 0;
  case 'u': /* u.u and u.i share their bits: INT below 2^63 */
    out->u.u = ds_load_uint(p, dt->itemsize, big);
    out->type = out->u.u > INT64_MAX ? DS_V_UINT : DS_V_INT;
    return 0;
  case 'f':
    out->type = DS_V_FLOAT;
    out->u.f = ds_load_float(p, dt->itemsize, big);
    return 0;
  case 'm': {
    int64_t v = ds_load_int(p, 8, big);
    if (v == DS_NPY_NAT) return 0; /* NULL */
    out->type = DS_V_INT;
    out->u.i = v;
    return 0;
  }
  case 'M': {
    int64_t v = ds_load_int(p, 8, big);
    if (v == DS_NPY_NAT) return 0;
    ds_buf b = {0};
    return text_value(ds_npy_datetime_iso(&b, v, dt->unit, dt->mult, err), &b, a, out, err);
  }
  case 'S': {
    size_t n = bcolz_s_len(p, dt->itemsize);
    out->type = (flags & BCOLZ_BYTES_BLOB) || !ds_utf8_valid(p, n)
                    ? DS_V_BYTES
                    : DS_V_TEXT;
    if (arena_copy(a, p, n, &out->u.s.p)) return ds_err(err, "out of memory");
    out->u.s.n = n;
    return 0;
  }
  case 'U': {
    ds_buf b = {0};
    return text_value(bcolz_ucs4_to_utf8(p, dt->itemsize, big, &b, NULL, err), &b, a, out, err);
  }
  default:
    return ds_err(err, "unsupported dtype '%s'", dt->str);
  }
}

/* A scalar numeric cell as SQL sees it (see bcolz.h). */
int bcolz_cell_number(const bcolz_dtype *dt, const uint8_t *p, int64_t *i,
                      double *d) {
  int big = dt->byteorder == '>';
  if (dt->ndim != 0) return BCOLZ_NUM_NONE;
  switch (dt->kind) {
  case 'b':
    *i = p[0] != 0;
    return BCOLZ_NUM_INT;
  case 'i':
    *i = ds_load_int(p, dt->itemsize, big);
    return BCOLZ_NUM_INT;
  case 'u': {
    uint64_t u = ds_load_uint(p, dt->itemsize, big);
    if (u > INT64_MAX) return BCOLZ_NUM_BIG;
    *i = (int64_t)u;
    return BCOLZ_NUM_INT;
  }
  case 'f':
    *d = ds_load_float(p, dt->itemsize, big);
    return isnan(*d) ? BCOLZ_NUM_NULL : BCOLZ_NUM_FLOAT;
  case 'm':
    *i = ds_load_int(p, 8, big);
    return *i == DS_NPY_NAT ? BCOLZ_NUM_NULL : BCOLZ_NUM_INT;
  default:
    return BCOLZ_NUM_NONE;
  }
}

/* One cell as a value: object cells through the pickle decoder, scalars by
 * scalar_value, cells of several elements as a .npy blob. */
int bcolz_cell_value(const bcolz_dtype *dt, const uint8_t *p, size_t n,
                     int flags, ds_arena *a, ds_value *out, char **err) {
  memset(out, 0, sizeof *out);
  if (dt->kind == 'O') {
    const uint8_t *copy;
    if (arena_copy(a, p, n, &copy)) return ds_err(err, "out of memory");
    if (ds_pickle_decode(copy, n, NULL, a, out, err)) {
      ds_err_prefix(err, "object cell");
      return -1;
    }
    const ds_value *u = ds_value_find_unsupported(out);
    if (u)
      return ds_err_quoted(err, "object cell: pickle uses unsupported global '%s'",
                           u->u.s.p, u->u.s.n);
    return 0;
  }
  if (n != dt->atom)
    return ds_err(err, "cell of %zu bytes, expected %llu", n,
                  (unsigned long long)dt->atom);
  if (dt->ndim == 0) return scalar_value(dt, p, flags, a, out, err);
  ds_buf b = {0};
  if (ds_npy_write_header(&b, dt->str, 0, dt->ndim, dt->shape, err) ||
      ds_buf_append(&b, p, n)) {
    if (!*err || !**err) ds_err(err, "out of memory");
    ds_buf_free(&b);
    return -1;
  }
  int rc = arena_copy(a, b.data, b.len, &out->u.s.p);
  out->u.s.n = b.len;
  ds_buf_free(&b);
  if (rc) return ds_err(err, "out of memory");
  out->type = DS_V_NDARRAY;
  return 0;
}

/* 1 when a mapped chunk file changed on disk since it was mapped. */
int bcolz_saw_change(const bcolz_table *t) { return t && t->moved; }

/* The chunk files bcolz_stale checks, stat'ed at once (ds_vfs_stat_many:
 * a remote table probes them in parallel, not one round trip each in a
 * row at the start of every statement). */
static void stat_maps(const bcolz_table *t) {
  size_t n = 0;
  const char **v = t->ncols ? malloc(t->ncols * MAP_SLOTS * sizeof *v) : NULL;
  for (size_t i = 0; v && i < t->ncols; i++)
    for (int j = 0; j < MAP_SLOTS; j++)
      if (t->cols[i].maps[j].open && t->cols[i].maps[j].f.on_disk)
        v[n++] = t->cols[i].maps[j].f.path;
  if (n > 1) ds_vfs_stat_many(v, n);
  free(v);
}

int bcolz_stale(const bcolz_table *t) {
  if (!t) return 0;
  if (root_moved(t)) return 1;
  stat_maps(t);
  for (size_t i = 0; i < t->ncols; i++)
    for (int j = 0; j < MAP_SLOTS; j++)
      if (t->cols[i].maps[j].open && ds_file_stale(&t->cols[i].maps[j].f)) return 1;
  return 0;
}

/* An integer or bool member of a cparams object (def when absent). */
static int cparam_int(json_t *cp, const char *key, int def) {
  json_t *v = cp ? json_object_get(cp, key) : NULL;
  if (json_is_boolean(v)) return json_is_true(v);
  return json_is_integer(v) ? (int)json_integer_value(v) : def;
}

/* A column's compression parameters: meta/storage's cparams, and the
 * Blosc flags and typesize of chunk 0's header. */
int bcolz_col_cparams(const bcolz_table *t, size_t col, bcolz_cparams *out,
                      char **err) {
  memset(out, 0, sizeof *out);
  if (col >= t->ncols) return ds_err(err, "%s: no column %zu", t->path, col);
  const bcolz_col *c = &t->cols[col];
  char *p = ds_strf("%smeta/storage", c->rel);
  if (!p) return ds_err(err, "out of memory");
  json_t *st = json_at(t, p, err);
  free(p);
  if (!st) return -1;
  json_t *cp = json_is_object(st) ? json_object_get(st, "cparams") : NULL;
  if (!json_is_object(cp)) cp = NULL;
  out->clevel = cparam_int(cp, "clevel", 5);
  out->shuffle = cparam_int(cp, "shuffle", 1);
  out->quantize = cparam_int(cp, "quantize", 0);
  json_t *cn = cp ? json_object_get(cp, "cname") : NULL;
  snprintf(out->cname, sizeof out->cname, "%s",
           json_is_string(cn) ? json_string_value(cn) : "blosclz");
  json_decref(st);
  if (c->nchunks == 0) return 0;
  char *fp = ds_strf("%sdata/__0.blp", c->rel);
  if (!fp) return ds_err(err, "out of memory");
  ds_file f;
  int rc = load_at(t, fp, 0, &f, err);
  free(fp);
  if (rc) return -1;
  uint64_t nbytes;
  rc = bcolz_check_chunk_file(f.data, f.size, f.path, &nbytes, err);
  if (rc == 0) {
    out->has_chunk = 1;
    out->flags = f.data[16 + 2];
    out->typesize = f.data[16 + 3];
  }
  ds_file_close(&f);
  return rc;
}

const char *ds_blosc_version(void) { return blosc_get_version_string(); }
