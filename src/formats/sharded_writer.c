/* sharded_writer.c - staged, transactional writing of sharded record
 * files (see sharded_writer.h): spec parsing and shard names, staging
 * shards (spare ones reused, all but the current one parked), savepoints,
 * the even split of name@N, and the publish, shard 0 last. The records'
 * bytes are the format's (sharded_writer_ops). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/vfs.h"
#include "formats/sharded_writer.h"

struct sharded_writer {
  ds_stage *stage;
  const sharded_writer_ops *ops;
  void *fmt;
  uint64_t rows_per_shard; /* 0: no limit */
  char *plain;       /* a plain path, or NULL when sharded */
  char *prefix;      /* sharded: "dir/name" */
  char *suffix;      /* sharded: ".ext" */
  unsigned fixed_n;  /* name@N: N; name@*: 0 */
  int split;         /* name@N without rows_per_shard */
  sw_shard *shards;  /* staging shards in use: [0, nshards) */
  size_t nshards, cap_shards, nslots; /* slots past nshards are spare files */
  uint64_t rows;     /* records so far, published + staged */
  sw_pub *pub, *next; /* the published dataset; what prepare staged */
  size_t npub, nnext;
  uint64_t pub_count;
  char *pub_spec;
  int in_txn;
};

/* Savepoint: how far the last shard's files had come. */
typedef struct sw_mark {
  size_t nshards;
  uint64_t rows, count, size, side_size;
} sw_mark;

/* ------------------------------------------------------------------ */
/* Paths                                                                */

/* Split spec into directory, and plain name or prefix, @N or @*, suffix. */
static int parse_spec(const char *format, const char *spec, char **dir, char **base,
                      unsigned *n, int *star, char **prefix, char **suffix, char **err) {
  *dir = *base = *prefix = *suffix = NULL; /* every out set: callers free all */
  *n = 0;
  *star = 0;
  spec += ds_vfs_posix_prefix(spec);
  if (!*spec) return ds_err(err, "%s: empty path", format);
  if (strchr(spec, ','))
    return ds_err(err, "%s: a writer takes one path or one name@N / name@* spec, "
                       "not a comma list", spec);
  const char *slash = strrchr(spec, '/');
  const char *name = slash ? slash + 1 : spec;
  *dir = slash ? strndup(spec, (size_t)(slash - spec) + (slash == spec)) : strdup(".");
  *base = strdup(name);
  if (!*dir || !*base) return ds_err(err, "out of memory");
  if (!*name) return ds_err(err, "%s: names a directory, not a file", spec);
  const char *at = strchr(name, '@');
  if (!at) return 0;
  const char *q = at + 1;
  if (*q == '*') {
    *star = 1;
    q++;
  } else {
    unsigned long v = 0;
    const char *d = q;
    while (*q >= '0' && *q <= '9' && v < 100000) v = v * 10 + (unsigned)(*q++ - '0');
    if (q == d || v == 0 || v >= 100000) return 0; /* a plain name, as upstream */
    *n = (unsigned)v;
  }
  *prefix = strndup(spec, (size_t)(at - spec));
  *suffix = strdup(q);
  if (!*prefix || !*suffix) return ds_err(err, "out of memory");
  return 0;
}

/* The length of "-DDDDD-of-DDDDD" at p, or 0. */
static size_t shard_infix(const char *p) {
  static const char pat[] = "-#####-of-#####";
  for (size_t i = 0; i < sizeof pat - 1; i++)
    if (pat[i] == '#' ? !(p[i] >= '0' && p[i] <= '9') : p[i] != pat[i]) return 0;
  return sizeof pat - 1;
}

int sharded_writer_target(const char *format, const char *spec, char **dir, char **key,
                          char **err) {
  char *base, *prefix, *suffix;
  unsigned n;
  int star;
  int rc = parse_spec(format, spec, dir, &base, &n, &star, &prefix, &suffix, err);
  if (rc == 0 && prefix) { /* one lock for name@N and name@*: "name@.ext" */
    const char *slash = strrchr(prefix, '/');
    free(base);
    base = ds_strf("%s@%s", slash ? slash + 1 : prefix, suffix);
    if (!base) rc = ds_err(err, "out of memory");
  } else if (rc == 0) { /* a shard's own name locks its set: the same files */
    for (char *p = strchr(base, '-'); p; p = strchr(p + 1, '-')) {
      size_t k = shard_infix(p);
      if (!k) continue;
      char *b = ds_strf("%.*s@%s", (int)(p - base), base, p + k);
      free(base);
      base = b;
      if (!base) rc = ds_err(err, "out of memory");
      break;
    }
  }
  free(prefix);
  free(suffix);
  if (rc) {
    free(*dir);
    free(base);
    *dir = NULL;
    return -1;
  }
  *key = base;
  return 0;
}

/* Shard file name NAME-%05d-of-%05d.EXT. */
static char *shard_path(const sharded_writer *w, size_t i, size_t n) {
  return ds_strf("%s-%05zu-of-%05zu%s", w->prefix, i, n, w->suffix);
}

/* Every existing file of the dataset at this spec (any shard count, and
 * their side files), claimed for the stage: refused (create) or replaced
 * (replace); shard 0 is the old commit point. */
static int claim_existing(sharded_writer *w, char **err) {
  char *(*side)(const char *) = w->ops->side_path;
  if (w->plain) {
    char *sp = side ? side(w->plain) : NULL;
    int rc = side && !sp ? ds_err(err, "out of memory") : 0;
    if (rc == 0 && ds_path_exists(w->plain, NULL))
      rc = ds_stage_claim(w->stage, w->plain, 1, err);
    if (rc == 0 && sp && ds_path_exists(sp, NULL)) rc = ds_stage_claim(w->stage, sp, 0, err);
    free(sp);
    return rc;
  }
  int rc = 0;
  for (int s = 0; s < 1 + (side != NULL) && rc == 0; s++) {
    char *pat = ds_strf("%s-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]%s",
                        w->prefix, w->suffix);
    char *spat = pat && s ? side(pat) : NULL;
    ds_vfs_names g = {0};
    if (!pat || (s && !spat)) rc = ds_err(err, "out of memory");
    else if (ds_vfs_glob(s ? spat : pat, 0, &g) == 0)
      for (size_t i = 0; i < g.n && rc == 0; i++) {
        const char *p = g.v[i];
        size_t plen = strlen(p), slen = strlen(w->suffix);
        /* "-00000-of-NNNNN" is 15 characters before the suffix */
        int first = !s && plen >= slen + 15 &&
                    strncmp(p + plen - slen - 15, "-00000-of-", 10) == 0;
        rc = ds_stage_claim(w->stage, p, first, err);
      }
    ds_vfs_names_free(&g);
    free(pat);
    free(spat);
  }
  return rc;
}

/* ------------------------------------------------------------------ */
/* Staging shards                                                       */

/* Park (close) or unpark a staging shard's files. */
static int park(sw_shard *s, char **err) {
  return ds_stage_park(s->data, err) || (s->side && ds_stage_park(s->side, err)) ? -1 : 0;
}
static int unpark(sw_shard *s, char **err) {
  return ds_stage_unpark(s->data, err) || (s->side && ds_stage_unpark(s->side, err)) ? -1
                                                                                     : 0;
}

/* A staging shard's new files, labelled `what`N (and `what`N.<side>). */
static int new_files(sharded_writer *w, const char *what, size_t i, sw_shard *s,
                     char **err) {
  char label[64];
  memset(s, 0, sizeof *s);
  snprintf(label, sizeof label, "%s%zu", what, i);
  if (ds_stage_file(w->stage, label, &s->data, err)) return -1;
  if (!w->ops->side_label) return 0;
  snprintf(label, sizeof label, "%s%zu.%s", what, i, w->ops->side_label);
  return ds_stage_file(w->stage, label, &s->side, err);
}

/* Tell the stage the name staging shard i will have, when it is known
 * now and its data file is what is published (a remote target uploads it
 * while it is written). name@N without rows_per_shard is split evenly at
 * the end (new files), name@* is named by the count: neither. */
static void expect_name(sharded_writer *w, size_t i) {
  if (!w->ops->data_published || !w->ops->data_published(w->fmt)) return;
  char *name = w->plain ? (i == 0 ? strdup(w->plain) : NULL)
               : w->fixed_n && !w->split && i < w->fixed_n ? shard_path(w, i, w->fixed_n)
                                                          : NULL;
  if (name) ds_stage_expect(w->stage, w->shards[i].data, name);
  free(name);
}

/* Make shard i current: a spare slot emptied, or new files. The shard
 * before is parked (a set of thousands of shards would hold their
 * descriptors): reopened on demand. */
static int open_shard(sharded_writer *w, size_t i, char **err) {
  if (w->nshards > 0 && w->nshards - 1 != i && park(&w->shards[w->nshards - 1], err))
    return -1;
  if (i < w->nslots) {
    sw_shard *s = &w->shards[i];
    s->count = 0;
    if (unpark(s, err) || ds_afile_truncate(s->data, 0, err) ||
        (s->side && ds_afile_truncate(s->side, 0, err)))
      return -1;
    w->nshards = i + 1;
    return 0;
  }
  sw_shard *grown = ds_grow_cap(w->shards, &w->cap_shards, w->nslots, sizeof *grown, 4);
  if (!grown) return ds_err(err, "out of memory");
  w->shards = grown;
  if (new_files(w, "shard", i, &w->shards[w->nslots], err)) return -1;
  w->nslots++;
  w->nshards = i + 1;
  expect_name(w, i);
  return 0;
}

sw_shard *sharded_writer_current(sharded_writer *w) {
  return &w->shards[w->nshards - 1];
}

/* ------------------------------------------------------------------ */
/* Open / close                                                         */

int sharded_writer_open(ds_stage *stage, const char *spec, uint64_t rows_per_shard,
                        const sharded_writer_ops *ops, void *fmt, sharded_writer **out,
                        char **err) {
  *out = NULL;
  sharded_writer *w = calloc(1, sizeof *w);
  if (!w) {
    ops->free(fmt);
    return ds_err(err, "out of memory");
  }
  w->stage = stage;
  w->ops = ops;
  w->fmt = fmt;
  w->rows_per_shard = rows_per_shard;
  char *dir = NULL, *base = NULL;
  int star;
  int rc = parse_spec(ops->name, spec, &dir, &base, &w->fixed_n, &star, &w->prefix,
                      &w->suffix, err);
  free(dir);
  free(base);
  if (rc == 0 && !w->prefix) {
    w->plain = strdup(spec + ds_vfs_posix_prefix(spec));
    if (!w->plain) rc = ds_err(err, "out of memory");
    else if (rows_per_shard)
      rc = ds_err(err, "%s: rows_per_shard needs a sharded path (name@*.ext or "
                       "name@N.ext)", spec);
  }
  if (rc == 0 && star && !rows_per_shard && ops->star_needs_rows)
    rc = ds_err(err, "%s: name@* needs rows_per_shard (or name@N)", spec);
  w->split = w->fixed_n && !rows_per_shard;
  if (rc == 0 && ops->init) rc = ops->init(fmt, w, err);
  if (rc == 0) rc = claim_existing(w, err);
  if (rc) {
    sharded_writer_close(w);
    return -1;
  }
  *out = w;
  return 0;
}

static void free_pubs(sw_pub **pub, size_t *n) {
  for (size_t i = 0; i < *n; i++) {
    free((*pub)[i].path);
    free((*pub)[i].side_path);
  }
  free(*pub);
  *pub = NULL;
  *n = 0;
}

void sharded_writer_close(sharded_writer *w) {
  if (!w) return;
  sharded_writer_abort(w);
  w->ops->free(w->fmt);
  free_pubs(&w->pub, &w->npub);
  free_pubs(&w->next, &w->nnext);
  free(w->pub_spec);
  free(w->shards);
  free(w->plain);
  free(w->prefix);
  free(w->suffix);
  free(w);
}

/* ------------------------------------------------------------------ */
/* Transactions                                                         */

int sharded_writer_begin(sharded_writer *w, char **err) {
  if (w->in_txn) return 0;
  w->in_txn = 1;
  w->rows = w->pub_count;
  if (open_shard(w, 0, err)) return -1;
  /* continue the published set: its files come back as staging shards */
  for (size_t i = 0; i < w->npub; i++) {
    if (!w->split && i > 0 && open_shard(w, i, err)) return -1;
    if (w->ops->copy_back(w->fmt, sharded_writer_current(w), &w->pub[i], err)) return -1;
  }
  return 0;
}

uint64_t sharded_writer_count(const sharded_writer *w) {
  return w->in_txn ? w->rows : w->pub_count;
}

/* Write what the format has queued. */
static int drain(sharded_writer *w, char **err) {
  return w->ops->drain ? w->ops->drain(w->fmt, err) : 0;
}

int sharded_writer_add(sharded_writer *w, const uint8_t *p, size_t n, char **err) {
  if (!w->in_txn && sharded_writer_begin(w, err)) return -1;
  uint64_t row = w->rows, rps = w->rows_per_shard;
  /* rows land in shard row / rps; queued rows go to the current shard, so
   * they are written before moving on */
  if (rps && row > 0 && row % rps == 0) {
    if (drain(w, err)) return -1;
    size_t next = (size_t)(row / rps);
    if (w->fixed_n && next >= w->fixed_n)
      return ds_err(err, "record %llu: %u shards of rows_per_shard=%llu are full",
                    (unsigned long long)row, w->fixed_n, (unsigned long long)rps);
    if (open_shard(w, next, err)) return -1;
  }
  if (w->ops->add(w->fmt, sharded_writer_current(w), row, p, n, err)) return -1;
  w->rows++;
  return 0;
}

int sharded_writer_mark(sharded_writer *w, void **mark, char **err) {
  if (!w->in_txn && sharded_writer_begin(w, err)) return -1;
  if (drain(w, err)) return -1;
  sw_mark *m = malloc(sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  const sw_shard *s = sharded_writer_current(w);
  m->nshards = w->nshards;
  m->rows = w->rows;
  m->count = s->count;
  m->size = s->data->size;
  m->side_size = s->side ? s->side->size : 0;
  *mark = m;
  return 0;
}

int sharded_writer_rollback_to(sharded_writer *w, const void *mark, char **err) {
  const sw_mark *m = mark;
  if (w->ops->reset) w->ops->reset(w->fmt);
  for (size_t i = m->nshards; i < w->nshards; i++) w->shards[i].count = 0;
  if (w->nshards > m->nshards && park(sharded_writer_current(w), err)) return -1;
  w->nshards = m->nshards;
  w->rows = m->rows;
  sw_shard *s = sharded_writer_current(w);
  s->count = m->count;
  if (unpark(s, err) || ds_afile_truncate(s->data, m->size, err) ||
      (s->side && ds_afile_truncate(s->side, m->side_size, err)))
    return -1;
  return 0;
}

/* name@N without rows_per_shard: staging shard 0 cut into N shards of
 * nearly equal counts (the first ones one larger) where the format says
 * its records end, copied into fresh staging files. */
static int split_evenly(sharded_writer *w, char **err) {
  sw_shard src = w->shards[0];
  if (ds_afile_flush(src.data, err) || (src.side && ds_afile_flush(src.side, err)))
    return -1;
  void *ix = NULL;
  uint64_t total = 0, n = w->fixed_n, start = 0;
  if (w->ops->split_open(w->fmt, &src, &ix, &total, err)) {
    w->ops->split_close(ix);
    return -1;
  }
  int rc = 0;
  sw_shard *dst = calloc(n, sizeof *dst);
  if (!dst) rc = ds_err(err, "out of memory");
  for (uint64_t k = 0; k < n && rc == 0; k++) {
    uint64_t cnt = total / n + (k < total % n), from = 0, to = 0;
    rc = new_files(w, "split", (size_t)k, &dst[k], err);
    if (rc == 0) rc = w->ops->split_part(ix, start, cnt, &dst[k], &from, &to, err);
    if (rc == 0 && to > from)
      rc = ds_afile_copy_from(dst[k].data, src.data->path, from, to - from, err);
    if (rc == 0) rc = park(&dst[k], err);
    dst[k].count = cnt;
    start += cnt;
  }
  w->ops->split_close(ix);
  if (rc == 0) {
    /* the split shards take the staging slots' place (the old files stay
     * staged, unnamed, and are deleted at publish) */
    free(w->shards);
    w->shards = dst;
    w->nshards = w->nslots = w->cap_shards = n;
  } else {
    free(dst);
  }
  return rc;
}

int sharded_writer_prepare(sharded_writer *w, char **err) {
  if (!w->in_txn && sharded_writer_begin(w, err)) return -1;
  if (drain(w, err)) return -1;
  if (w->split && split_evenly(w, err)) return -1;
  /* a name@N set always has N files, empty ones included */
  while (w->fixed_n && w->nshards < w->fixed_n)
    if (open_shard(w, w->nshards, err)) return -1;
  if (claim_existing(w, err)) return -1; /* what appeared since the open */
  size_t n = w->nshards;
  free_pubs(&w->next, &w->nnext);
  if (!(w->next = calloc(n, sizeof *w->next))) return ds_err(err, "out of memory");
  w->nnext = n;
  for (size_t k = n; k-- > 0;) { /* shard 0 last: the commit point */
    sw_shard *s = &w->shards[k];
    sw_pub *p = &w->next[k];
    ds_afile *out;
    p->path = w->plain ? strdup(w->plain) : shard_path(w, k, n);
    p->count = s->count;
    p->size = s->data->size;
    if (!p->path) return ds_err(err, "out of memory");
    if (w->ops->finish(w->fmt, w->stage, s, k, p, &out, err) ||
        ds_stage_final(w->stage, out->path, p->path, err))
      return -1;
  }
  return ds_stage_sync(w->stage, err);
}

int sharded_writer_publish(sharded_writer *w, char **err) {
  int rc = ds_stage_publish(w->stage, err); /* 1: published, with an error */
  if (rc < 0) return -1;
  free_pubs(&w->pub, &w->npub);
  w->pub = w->next;
  w->npub = w->nnext;
  w->next = NULL;
  w->nnext = 0;
  w->pub_count = 0;
  for (size_t i = 0; i < w->npub; i++) w->pub_count += w->pub[i].count;
  free(w->pub_spec);
  w->pub_spec = w->plain ? strdup(w->plain)
                         : ds_strf("%s@%zu%s", w->prefix, w->npub, w->suffix);
  w->in_txn = 0;
  w->nshards = w->nslots = 0; /* the stage closed every staging file */
  if (!w->pub_spec && rc == 0) {
    ds_err(err, "out of memory");
    rc = 1;
  }
  return rc;
}

void sharded_writer_abort(sharded_writer *w) {
  if (w->ops->reset) w->ops->reset(w->fmt);
  if (!w->in_txn) return;
  ds_stage_discard(w->stage);
  free_pubs(&w->next, &w->nnext);
  w->in_txn = 0;
  w->nshards = w->nslots = 0; /* the next begin copies w->pub back */
}

const char *sharded_writer_published_spec(const sharded_writer *w) {
  return w->pub_spec;
}
