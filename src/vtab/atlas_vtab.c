/* atlas_vtab.c - the `atlas` virtual table: SQL over torch-atlas-ds
 * datasets (pickled, optionally zstd-compressed blocks of examples).
 *
 *   SELECT example FROM atlas('data/train') LIMIT 3;
 *   CREATE VIRTUAL TABLE temp.t USING atlas('data/train', infer=1000);
 *   SELECT label, avg(score) FROM t GROUP BY label;
 *   SELECT * FROM t WHERE shard = 2 LIMIT 10;
 *
 * Table-valued form: example TEXT (JSON), shard INTEGER, shard_index
 * INTEGER, and the HIDDEN arguments path and options. CREATE form: one
 * column per key when the first `infer` examples (default 100) are dicts
 * with str keys (or as given by columns='...'); c0, c1, ... when they are
 * tuples or lists; otherwise one column `value`; then HIDDEN example,
 * shard and shard_index. Options: infer, columns, unsupported=error|
 * placeholder (a pickled object outside the decoder's allow-list is an
 * error naming it, or the JSON {"$unsupported": "module.name"}), and
 * cache_mb=N and threads=1|2 (both forms; defaults 0 and 2). With
 * mode=create|replace the CREATE form writes a new dataset
 * (vtab/atlas_write.c).
 *
 * Blocks are decoded by the safe pickle decoders (decoders/pickle_list.c
 * for the usual list of flat examples, else decoders/pickle.c), never
 * executed. Each cursor keeps its last decoded block, so a scan decodes
 * every block once; rowid, shard and LIMIT/OFFSET constraints decode only
 * the blocks holding the rows asked for, and count(*) decodes nothing.
 * cache_mb=N keeps up to N MiB of decoded blocks (decompressed pickle plus
 * decoded values, formats/atlas/atlas_cache.c) per table for later statements
 * and other cursors, least recently used out first; the blocks cursors
 * are reading at the moment may come on top. Results are the same with
 * or without it; repeated or skewed lookups then skip decompression and
 * decoding. threads=2: an ascending scan decodes the blocks after its
 * second one ahead on a second thread (formats/atlas/atlas_readahead.c) when
 * the process may run on two CPUs or more (threads=1 turns it off). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/value_json.h"
#include "core/options.h"
#include "core/rowset.h"
#include "core/schema.h"
#include "core/worker.h"
#include "formats/atlas/atlas.h"
#include "formats/atlas/atlas_cache.h"
#include "formats/atlas/atlas_decode.h"
#include "formats/atlas/atlas_readahead.h"
#include "formats/atlas/atlas_scan_ahead.h"
#include "decoders/pickle.h"
#include "decoders/pickle_list.h"
#include "sql/plan.h"
#include "sql/sqlite_api.h"
#include "sql/column_value.h"
#include "sql/value_sql.h"
#include "vtab/atlas_options.h"
#include "vtab/atlas_write.h"
#include "vtab/dataset.h"
#include "vtab/interrupt.h"
#include "vtab/module_help.h"
#include "vtab/module_options.h"
#include "vtab/modules.h"
#include "vtab/table.h"
#include "vtab/vtab_util.h"

#define MOD "atlas"

typedef enum { SHAPE_DICT, SHAPE_SEQ, SHAPE_VALUE } example_shape;

typedef struct at_dataset {
  ds_dataset base;    /* refcount, cache key, path, change detection */
  atlas_reader *reader;
  at_opts opts;
  int placeholder;    /* unsupported=placeholder */
  int threads;        /* 2: scans decode ahead on a second thread */
  int64_t infer;      /* option infer (CREATE form) */
  uint64_t count;     /* examples, and shards (0 for a writer's table */
  size_t nshards;     /*   before its first commit: no reader) */
  uint64_t *first;    /* first global row of each shard */
  uint64_t *counts;   /* rows of each shard */
  atlas_cache cache;  /* cache_mb */
} at_dataset;

/* The module's view of a shared dataset. */
static at_dataset *AT(ds_dataset *d) { return (at_dataset *)d; }

/* What a cursor decodes with. The table keeps the last closed cursor's
 * for the next one: SQLite opens a cursor per statement run, and a fresh
 * ZSTD_DCtx and buffers cost about as much as a lookup. */
typedef struct at_res {
  ds_zstd_ctx z;
  ds_view in;         /* window on data.bin */
  atlas_dblock *own;  /* the block decoded into when the cache is off */
  ds_pickle_list pl;  /* the fast decoder's scratch */
} at_res;

static void res_init(at_res *r) {
  memset(r, 0, sizeof *r);
  ds_zstd_ctx_init(&r->z, NULL);
  r->z.contiguous = 1; /* blocks decode right after a copy of the dictionary */
}

static void res_free(at_res *r) {
  ds_zstd_ctx_free(&r->z);
  ds_view_free(&r->in);
  atlas_dblock_free(r->own);
  ds_pickle_list_free(&r->pl);
  r->own = NULL;
}

typedef struct at_vtab {
  ds_table base;        /* db, form, dataset, argument columns */
  ds_table_writer *writer; /* mode=create|replace (table_writer.h) */
  example_shape shape;  /* CREATE form */
  ds_schema schema;     /* SHAPE_DICT: the key columns */
  size_t nseq;          /* SHAPE_SEQ: number of c<i> columns */
  int col_example, col_shard, col_shard_index;
  int spare;            /* spare_res holds a closed cursor's at_res */
  at_res spare_res;
} at_vtab;

typedef struct at_cursor {
  ds_cursor base;        /* dataset, rowset, row, argument columns */
  size_t shard;
  uint64_t block, pos;
  int located;           /* shard, block, pos are row's */
  uint64_t shard_end;    /* first row after the shard */
  uint64_t bsize;        /* the shard's block size */
  atlas_dblock *blk;     /* the decoded block read (pinned when cached) */
  int single;            /* the rowset is one row */
  atlas_readahead *ra;   /* a scan decoding ahead on a second thread */
  int blk_ra;            /* blk belongs to ra */
  ds_scan_ahead ahead; /* without ra: remote shards' hints */
  uint64_t loads;        /* blocks loaded since the filter */
  at_res r;
} at_cursor;

/* ds_dataset_ops.close */
static void dataset_close(ds_dataset *base) {
  at_dataset *d = AT(base);
  atlas_cache_free(&d->cache);
  atlas_close(d->reader);
  free(d->first);
  free(d->counts);
}

/* ds_dataset_ops.changed */
static int dataset_changed(const ds_dataset *d) {
  return atlas_stale(((const at_dataset *)d)->reader);
}

/* ds_dataset_ops.open: the CREATE form takes infer=, columns=,
 * unsupported=, cache_mb=, threads= and dictionary= (the shared zstd
 * dictionary of a shard folder opened alone), the table-valued form all
 * but infer= and columns=. */
static int dataset_open(ds_dataset *base, const char *path, const ds_options *o, int tvf,
                        char **err) {
  (void)tvf;
  at_dataset *d = AT(base);
  at_opts *v = &d->opts;
  if (ds_opt_bind(ds_atlas_option_groups, base->form, o, v, err)) {
    ds_err_prefix(err, path);
    return -1;
  }
  int wmode = base->mode;
  d->placeholder = v->unsupported == 1;
  d->threads = (int)v->threads;
  d->infer = v->infer;
  atlas_cache_init(&d->cache, (size_t)v->cache_mb << 20);
  /* a writer's table reads what it has published: nothing yet;
   * dictionary=: a shard folder opened alone decodes with its root's */
  if (!wmode && atlas_open_dict(path, v->dictionary, &d->reader, err))
    return -1;
  d->count = d->reader ? atlas_count(d->reader) : 0;
  size_t k = d->nshards = d->reader ? atlas_nshards(d->reader) : 0;
  d->first = malloc((k ? k : 1) * sizeof *d->first);
  d->counts = malloc((k ? k : 1) * sizeof *d->counts);
  if (!d->first || !d->counts) return ds_err(err, "out of memory");
  for (size_t s = 0; s < k; s++) {
    d->first[s] = atlas_shard_first(d->reader, s);
    d->counts[s] = atlas_shard_count(d->reader, s);
  }
  return 0;
}

static const ds_dataset_ops atlas_ops = {"atlas('dataset/dir')", dataset_open,
                                         dataset_close, dataset_changed, NULL,
                                         sizeof(at_dataset), ds_atlas_option_groups};

/* The example's value, or an error when it holds an object outside the
 * allow-list and placeholders are off. */
static int check_supported(const at_dataset *d, const ds_value *v, size_t shard,
                           uint64_t block, uint64_t g, char **err) {
  if (d->placeholder) return 0;
  const ds_value *u = ds_value_find_unsupported(v);
  if (!u) return 0;
  return ds_err(err, "%s: block %llu: example %llu holds a pickled '%.*s', which is not "
                     "on the decoder's allow-list (option unsupported=placeholder "
                     "gives {\"$unsupported\": ...} instead)",
                atlas_shard_path(d->reader, shard), (unsigned long long)block,
                (unsigned long long)g, (int)u->u.s.n, (const char *)u->u.s.p);
}

/* What the first `infer` examples look like, and their dict keys. */
static int infer_schema(at_vtab *t, int64_t infer, char **err) {
  at_dataset *d = AT(t->base.ds);
  uint64_t n = d->count, seen = 0;
  int all_dict = 1, all_seq = 1;
  size_t maxlen = 0;
  at_res res;
  res_init(&res);
  res.z.max_out = d->base.max_value_bytes; /* atlas_decode.h */
  atlas_dblock *blk = atlas_dblock_new();
  int rc = blk ? 0 : ds_err(err, "out of memory");
  size_t have_shard = (size_t)-1;
  uint64_t have_block = 0;
  int bad_block = 0; /* the held block failed to decode: skip its examples */
  if (n > 0 && infer > 0) atlas_scan_ahead_open(d->reader); /* remote: a stream, not a block */
  for (uint64_t g = 0; g < n && seen < (uint64_t)infer && rc == 0; g++, seen++) {
    size_t s;
    uint64_t b, pos;
    atlas_locate(d->reader, g, &s, &b, &pos);
    if (s != have_shard || b != have_block) {
      char *e = NULL;
      have_shard = s;
      have_block = b;
      bad_block = atlas_decode_block(d->reader, &res.z, &res.in, &res.pl, blk, s, b, UINT64_MAX, &e) != 0;
      free(e); /* a bad block is reported when a query reads it */
    }
    if (bad_block) continue;
    const ds_value *v = &blk->list.u.list.items[pos];
    int is_dict = v->type == DS_V_MAP;
    for (size_t i = 0; is_dict && i < v->u.list.n; i++)
      if (v->u.list.items[2 * i].type != DS_V_TEXT) is_dict = 0;
    all_dict &= is_dict;
    all_seq &= v->type == DS_V_TUPLE || v->type == DS_V_LIST;
    if (is_dict)
      for (size_t i = 0; i < v->u.list.n && rc == 0; i++) {
        const ds_value *k = &v->u.list.items[2 * i];
        rc = ds_schema_observe(&t->schema, (const char *)k->u.s.p, k->u.s.n,
                               v->u.list.items[2 * i + 1].type, err);
      }
    if ((v->type == DS_V_TUPLE || v->type == DS_V_LIST) && v->u.list.n > maxlen)
      maxlen = v->u.list.n;
  }
  atlas_dblock_free(blk);
  res_free(&res);
  if (rc) return rc;
  if (seen > 0 && all_dict && t->schema.n > 0) {
    t->shape = SHAPE_DICT;
  } else if (seen > 0 && all_seq && maxlen > 0) {
    t->shape = SHAPE_SEQ;
    t->nseq = maxlen;
    ds_schema_free(&t->schema);
  } else {
    t->shape = SHAPE_VALUE;
    ds_schema_free(&t->schema);
  }
  return 0;
}

/* The CREATE form's column list after the data columns. */
static int declare_create(at_vtab *t, char **err) {
  static const char *const none[] = {NULL};
  if (t->shape == SHAPE_SEQ) {
    for (size_t i = 0; i < t->nseq; i++) {
      char name[32];
      snprintf(name, sizeof name, "c%zu", i);
      if (ds_schema_observe(&t->schema, name, strlen(name), DS_V_NULL, err)) return -1;
      t->schema.cols[i].types = 0;
    }
  } else if (t->shape == SHAPE_VALUE) {
    if (ds_schema_observe(&t->schema, "value", 5, DS_V_NULL, err)) return -1;
    t->schema.cols[0].types = 0;
  }
  if (ds_schema_name_columns(&t->schema, none, err)) return -1;
  char *ex = ds_schema_free_name(&t->schema, "example", none);
  char *sh = ds_schema_free_name(&t->schema, "shard", none);
  char *si = ds_schema_free_name(&t->schema, "shard_index", none);
  char *tail = ex && sh && si ? ds_strf("\"%s\" HIDDEN, \"%s\" HIDDEN INTEGER, \"%s\" HIDDEN INTEGER",
                                        ex, sh, si)
                              : NULL;
  char *sql = tail ? ds_schema_sql(&t->schema, NULL, tail) : NULL;
  free(ex);
  free(sh);
  free(si);
  free(tail);
  int rc = ds_table_declare(&t->base, sql, err);
  free(sql);
  t->col_example = (int)t->schema.n;
  t->col_shard = t->col_example + 1;
  t->col_shard_index = t->col_example + 2;
  return rc;
}

/* CREATE VIRTUAL TABLE t USING atlas(path, infer=N | columns='...', ...):
 * the columns given, or the shape of the first examples. A writer table
 * (mode=create|replace) has the columns given, or one column `value`. */
static int create_form(at_vtab *t, const ds_options *o, char **err) {
  const at_opts *v = &AT(t->base.ds)->opts;
  const char *cols = v->columns;
  int rc = 0, mode = t->base.ds->mode;
  if (mode && !cols) {
    t->shape = SHAPE_VALUE;
  } else if (cols) {
    t->shape = SHAPE_DICT;
    if (ds_schema_parse_columns(&t->schema, cols, mode != 0, err)) {
      ds_err_prefix(err, t->base.ds->path);
      rc = -1;
    }
  } else {
    rc = infer_schema(t, AT(t->base.ds)->infer, err);
  }
  if (rc == 0) rc = declare_create(t, err);
  if (rc == 0 && mode) rc = atlas_table_write_open(t->base.ds->path, o, &v->write, v->threads, mode,
                                                  &t->writer, err);
  return rc;
}

/* ds_table_def.declare */
static int declare(ds_table *base, const ds_options *o, char **err) {
  at_vtab *t = (at_vtab *)base;
  if (!base->tvf) return create_form(t, o, err);
  t->col_example = 0, t->col_shard = 1, t->col_shard_index = 2;
  ds_table_arg_columns(base, 3, 4);
  return ds_table_declare(base, "CREATE TABLE x(example TEXT, shard INTEGER,"
                                " shard_index INTEGER, path HIDDEN, options HIDDEN)", err);
}

/* ds_table_def.table_free */
static void table_free(ds_table *base) {
  at_vtab *t = (at_vtab *)base;
  ds_table_writer_free(t->writer);
  if (t->spare) res_free(&t->spare_res);
  ds_schema_free(&t->schema);
}

/* Cost model: a row costs 1 (a block is decoded once for all its rows);
 * rowid constraints touch only their rows' blocks; shard = reads one
 * shard. */
static int at_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info) {
  at_vtab *t = (at_vtab *)vtab;
  ds_dataset *ds = t->base.ds;
  double n = ds ? (double)AT(ds)->count : 1e6;
  double k = ds && AT(ds)->nshards ? (double)AT(ds)->nshards : 4;
  ds_plan_extra extra[1] = {{t->col_shard, "shard", n / k, 0}};
  return ds_table_plan(&t->base, info, n, extra, 1);
}

/* ds_table_def.cursor_init: the last cursor's context and buffers, or new. */
static void cursor_init(ds_cursor *base) {
  at_cursor *c = (at_cursor *)base;
  at_vtab *t = (at_vtab *)base->base.pVtab;
  if (t->spare) {
    c->r = t->spare_res;
    t->spare = 0;
  } else {
    res_init(&c->r);
  }
}

/* Let go of the block the cursor reads: unpin a cached one, free one that
 * could not be cached, keep the cursor's own. */
static void drop_block(at_cursor *c) {
  atlas_dblock *b = c->blk;
  c->blk = NULL;
  if (!b || b == c->r.own || c->blk_ra) return;
  if (b->lru.cached) atlas_cache_unpin(&AT(c->base.ds)->cache, b);
  else atlas_dblock_free(b);
}

/* ds_table_def.cursor_reset */
static void cursor_reset(ds_cursor *base) {
  at_cursor *c = (at_cursor *)base;
  if (base->ds) drop_block(c);
  atlas_readahead_free(c->ra); /* before the rowset it walks */
  c->ra = NULL;
  c->blk_ra = 0;
  c->loads = 0;
  c->located = 0;
  c->single = 0;
}

/* ds_table_def.cursor_free: keep the context and a small block for the
 * next cursor. */
static void cursor_free(ds_cursor *base) {
  at_cursor *c = (at_cursor *)base;
  at_vtab *t = (at_vtab *)base->base.pVtab;
  atlas_dblock *own = c->r.own;
  if (own) {
    own->shard = (size_t)-1;
    ds_arena_reset(&own->arena);
  }
  if (!t->spare && (!own || own->buf.cap <= ((size_t)8 << 20))) {
    t->spare_res = c->r;
    t->spare = 1;
  } else {
    res_free(&c->r);
  }
}

/* ds_table_def.select: shard = / IN as flags over the shards' rows. */
static int select_rows(ds_cursor *base, ds_plan_args *a, ds_rows *r, char **err) {
  at_cursor *c = (at_cursor *)base;
  at_dataset *d = AT(base->ds);
  ds_shard_map map = {DS_LAYOUT_CONCATENATED, d->nshards, d->counts, d->first, d->count};
  c->r.z.max_out = base->ds->max_value_bytes; /* atlas_decode.h */
  return ds_rows_shard_map(base, &map, a->extra[0], a->extra_in[0], r, err);
}

/* ds_table_def.shard_of */
static size_t shard_of(ds_cursor *base, uint64_t g) {
  size_t s;
  uint64_t b, pos;
  if (g >= AT(base->ds)->count) return SIZE_MAX;
  atlas_locate(AT(base->ds)->reader, g, &s, &b, &pos);
  return s;
}

/* ds_table_def.start: a single row decodes only its example; the blocks
 * of a list of rows of a remote dataset are fetched at once. */
static int start(ds_cursor *base, const ds_filter_call *call, char **err) {
  (void)call;
  (void)err;
  const ds_rowset *rs = &base->rs;
  ((at_cursor *)base)->single = rs->kind == DS_RS_LIST && rs->nids == 1;
  ds_scan_ahead_init(&((at_cursor *)base)->ahead, rs);
  if (rs->kind == DS_RS_LIST && rs->nids > 1 && rs->limit == UINT64_MAX)
    atlas_prefetch(AT(base->ds)->reader, rs->ids, rs->nids);
  return 0;
}

/* ds_table_def.arrive: row g's shard, block and position (by counting
 * when it follows the last one in the same shard). */
static void arrive(ds_cursor *base, uint64_t g) {
  at_cursor *c = (at_cursor *)base;
  if (c->located && g == base->row + 1 && g < c->shard_end) {
    if (++c->pos == c->bsize) {
      c->pos = 0;
      c->block++;
    }
    return;
  }
  at_dataset *d = AT(base->ds);
  atlas_locate(d->reader, g, &c->shard, &c->block, &c->pos);
  c->located = c->shard < atlas_nshards(d->reader);
  if (c->located) {
    c->shard_end = d->first[c->shard] + d->counts[c->shard];
    c->bsize = atlas_block_size(d->reader, c->shard);
  }
}

/* Make c->blk the decoded block (shard, block): from the cache, or
 * decoded (into the cache, or into the cursor's own block). */
static int load_block(at_cursor *c, char **err) {
  at_dataset *d = AT(c->base.ds);
  drop_block(c);
  c->blk_ra = 0;
  if (!c->ra) atlas_scan_ahead_block(&c->ahead, d->reader, c->shard, c->block);
  if (d->cache.limit) {
    atlas_dblock *b = atlas_cache_get(&d->cache, c->shard, c->block);
    if (!b) {
      if (!(b = atlas_dblock_new())) return ds_err(err, "out of memory");
      if (atlas_decode_block(d->reader, &c->r.z, &c->r.in, &c->r.pl, b, c->shard, c->block, UINT64_MAX, err)) {
        atlas_dblock_free(b);
        return -1;
      }
      b->lru.pins = 1;
      atlas_cache_put(&d->cache, b); /* not cached when out of memory */
    }
    c->blk = b;
    return 0;
  }
  if (c->ra) {
    atlas_dblock *b;
    int rc = atlas_readahead_get(c->ra, c->shard, c->block, &b, err);
    if (rc < 0) return -1;
    if (rc > 0) {
      c->blk = b;
      c->blk_ra = 1;
      return 0;
    }
  }
  if (!c->r.own && !(c->r.own = atlas_dblock_new())) return ds_err(err, "out of memory");
  if (atlas_decode_block(d->reader, &c->r.z, &c->r.in, &c->r.pl, c->r.own, c->shard, c->block,
                         c->single ? c->pos : UINT64_MAX, err))
    return -1;
  c->blk = c->r.own;
  /* an ascending scan reaching its second block: the blocks after this one
   * are decoded ahead on a second thread (rowid lists and single rows
   * jump; the cache serves those) */
  const ds_rowset *rs = &c->base.rs;
  if (!c->ra && d->threads > 1 && ++c->loads == 2 && !c->single && !rs->desc &&
      rs->kind != DS_RS_LIST && ds_worker_cpus() >= 2)
    atlas_readahead_start(d->reader, &c->base.it, c->shard, c->block, c->base.ds->max_value_bytes,
                          &c->r.z, &c->r.in, &c->r.pl, &c->ra, err);
  return 0;
}

/* The current example, decoding its block if the cursor does not hold it. */
static int current_example(at_cursor *c, const ds_value **v, char **err) {
  atlas_dblock *b = c->blk;
  if (!b || b->shard != c->shard || b->block != c->block ||
      (b->partial && b->pos != c->pos)) {
    if (b && b->partial) c->single = 0; /* more rows of the block: decode it all */
    if (load_block(c, err)) return -1;
    b = c->blk;
  }
  *v = b->partial ? &b->ex : &b->list.u.list.items[c->pos];
  return 0;
}

/* Look up a dict example's field (NULL value when absent). */
static const ds_value *dict_field(const ds_value *ex, const ds_column *col) {
  if (ex->type != DS_V_MAP) return NULL;
  for (size_t i = 0; i < ex->u.list.n; i++) {
    const ds_value *k = &ex->u.list.items[2 * i];
    if (k->type == DS_V_TEXT && k->u.s.n == col->field_len &&
        memcmp(k->u.s.p, col->field, k->u.s.n) == 0)
      return &ex->u.list.items[2 * i + 1];
  }
  return NULL;
}

/* The value a data column shows for an example (NULL pointer: SQL NULL). */
static const ds_value *column_value(const at_vtab *t, const ds_value *ex, int col) {
  if (t->shape == SHAPE_DICT) return dict_field(ex, &t->schema.cols[col]);
  if (t->shape == SHAPE_SEQ)
    return (ex->type == DS_V_TUPLE || ex->type == DS_V_LIST) && (size_t)col < ex->u.list.n
               ? &ex->u.list.items[col]
               : NULL;
  return ex;
}

/* A value (as a column declared decl gives it), or its JSON (example
 * column), checked for unsupported objects. */
static void result_value(at_cursor *c, sqlite3_context *ctx, const ds_value *v,
                         int as_json, ds_decl decl) {
  char *err = NULL;
  if (check_supported(AT(c->base.ds), v, c->shard, c->block, c->base.row, &err)) {
    ds_result_error(ctx, MOD, err);
    return;
  }
  if (!as_json) {
    ds_value_result_decl(ctx, v, decl);
    return;
  }
  ds_buf json = {0};
  if (ds_value_json_capped(&json, v, c->base.ds->max_value_bytes, NULL, &err))
    ds_result_error(ctx, MOD, ds_strf("%s: block %llu: example %llu: %s",
                                      atlas_shard_path(AT(c->base.ds)->reader, c->shard),
                                      (unsigned long long)c->block,
                                      (unsigned long long)c->base.row, err ? err : "?"));
  else
    ds_result_json(ctx, &json);
  free(err);
  ds_buf_free(&json);
}

static int at_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col) {
  at_cursor *c = (at_cursor *)cur;
  at_vtab *t = (at_vtab *)cur->pVtab;
  if (ds_cursor_arg_column(cur, ctx, col)) {
    return SQLITE_OK;
  } else if (col == t->col_shard) {
    sqlite3_result_int64(ctx, (sqlite3_int64)ds_cursor_shard(&c->base, c->shard));
  } else if (col == t->col_shard_index) {
    sqlite3_result_int64(ctx, (sqlite3_int64)(c->base.row - AT(c->base.ds)->first[c->shard]));
  } else {
    const ds_value *ex;
    char *err = NULL;
    if (current_example(c, &ex, &err)) {
      ds_result_error(ctx, MOD, err);
      return SQLITE_OK;
    }
    if (col == t->col_example) {
      result_value(c, ctx, ex, 1, DS_DECL_NONE);
    } else {
      const ds_value *v = column_value(t, ex, col);
      ds_decl decl = (size_t)col < t->schema.n ? t->schema.cols[col].decl : DS_DECL_NONE;
      if (v) result_value(c, ctx, v, 0, decl);
    }
  }
  return SQLITE_OK;
}

/* xUpdate: one INSERT row -> one example (vtab/atlas_write.c). */
static int at_update(ds_table *base, int argc, sqlite3_value **argv, sqlite3_int64 *rowid,
                     char **err) {
  at_vtab *t = (at_vtab *)base;
  uint64_t row;
  if (ds_table_writer_insert(base, argc, argv, &row, err) ||
      atlas_table_write_row(t->writer, &t->schema, t->shape == SHAPE_DICT, argv + 2,
                            argv[2 + t->col_example], row, err))
    return -1;
  *rowid = (sqlite3_int64)row;
  return 0;
}

static const sqlite3_module atlas_module = DS_TABLE_WRITER_MODULE(at_best_index, at_column);

/* modules.h */
const ds_table_def ds_atlas_def = {
    .name = MOD, .methods = &atlas_module, .ops = &atlas_ops,
    DS_TABLE_SIZES(at_vtab, at_cursor), .declare = declare,
    .table_free = table_free, /* the spare decoder, the schema */
    .cursor_init = cursor_init, .cursor_reset = cursor_reset, .cursor_free = cursor_free,
    .select = select_rows, .shard_of = shard_of, .start = start, .arrive = arrive,
    .update = at_update}; /* mode=create|replace */

const ds_help_entry ds_atlas_help[] = {
    DS_HELP_MODULE("atlas", "'dataset/dir'", "'dataset/dir'", ds_atlas_option_groups),
    {NULL, NULL, NULL, NULL, 0}};

/* module_options.h */
atlas_reader *ds_atlas_reader_of(const ds_dataset *d) {
  return ((const at_dataset *)d)->reader;
}
