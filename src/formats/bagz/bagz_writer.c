/* bagz_writer.c - staged, transactional bagz writing (see bagz_writer.h).
 *
 * Every shard is two temporaries while it is written: its records, and its
 * limits (u64 LE end offsets), as upstream's writer keeps them. prepare
 * appends the limits to the records (tail) or publishes them as
 * `limits.<name>` (separate), and names the shards: with name@* the count
 * is known only then. name@N without rows_per_shard writes one staging
 * shard and splits it into N nearly equal shards at prepare. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mapped_file.h"
#include "core/vfs.h"
#include "formats/bagz/bagz_compress.h"
#include "formats/bagz/bagz_writer.h"

typedef struct bz_shard {
  ds_afile *data;    /* records */
  ds_afile *limits;  /* end offsets, u64 LE */
  uint64_t count;
} bz_shard;

/* What was published: enough to copy it back for the next transaction. */
typedef struct bz_pub {
  char *path;        /* records file */
  char *limits_path; /* separate limits, or NULL (tail) */
  uint64_t count, records_size;
} bz_pub;

struct bagz_writer {
  ds_stage *stage;
  bagz_writer_options o;
  uint8_t *dict;
  char *dir;         /* "" or "dir/" prefix of every file */
  char *plain;       /* a plain path, or NULL when sharded */
  char *prefix;      /* sharded: "dir/name" */
  char *suffix;      /* sharded: ".bagz" */
  unsigned fixed_n;  /* name@N: N; name@*: 0 */
  int split;         /* name@N without rows_per_shard */
  bz_shard *shards;  /* staging shards in use: [0, nshards) */
  size_t nshards, cap_shards, nslots; /* slots past nshards are spare files */
  uint64_t rows;     /* records so far, published + staged + queued */
  bz_pub *pub;       /* the published bag */
  size_t npub;
  bz_pub *next;      /* what prepare staged, published by publish */
  size_t nnext;
  uint64_t pub_count;
  char *pub_spec;
  bagz_compressor *comp;
  int in_txn;
};

/* Savepoint: how far each file had come. */
typedef struct bz_mark {
  size_t nshards;
  uint64_t rows;
  uint64_t count, data_size, limits_size; /* of the last shard */
} bz_mark;

/* ------------------------------------------------------------------ */
/* Paths                                                                */

/* Split spec into directory, and plain name or prefix, @N or @*, suffix. */
static int parse_spec(const char *spec, char **dir, char **base, unsigned *n,
                      int *star, char **prefix, char **suffix, char **err) {
  *dir = *base = *prefix = *suffix = NULL; /* every out set: callers free all */
  *n = 0;
  *star = 0;
  spec += ds_vfs_posix_prefix(spec);
  if (!*spec) return ds_err(err, "bagz: empty path");
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

int bagz_writer_target(const char *spec, char **dir, char **key, char **err) {
  char *base, *prefix, *suffix;
  unsigned n;
  int star;
  int rc = parse_spec(spec, dir, &base, &n, &star, &prefix, &suffix, err);
  if (rc == 0 && prefix) { /* one lock for name@N and name@*: "name@.ext" */
    const char *slash = strrchr(prefix, '/');
    free(base);
    base = ds_strf("%s@%s", slash ? slash + 1 : prefix, suffix);
    if (!base) rc = ds_err(err, "out of memory");
  } else if (rc == 0) { /* a shard's own name locks its bag: the same files */
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

/* "dir/limits.<name>" for a records file path. */
static char *limits_path(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return ds_strf("limits.%s", path);
  return ds_strf("%.*slimits.%s", (int)(slash - path + 1), path, slash + 1);
}

/* Shard file name NAME-%05d-of-%05d.EXT. */
static char *shard_path(const bagz_writer *w, size_t i, size_t n) {
  return ds_strf("%s-%05zu-of-%05zu%s", w->prefix, i, n, w->suffix);
}

/* Every existing file of the bag at this spec (any shard count for a
 * sharded spec, and their limits files). f(ctx, path, is_shard0). */
static int each_existing(const bagz_writer *w,
                         int (*f)(void *, const char *, int, char **),
                         void *ctx, char **err) {
  if (w->plain) {
    char *lp = limits_path(w->plain);
    int rc = lp ? 0 : ds_err(err, "out of memory");
    if (rc == 0 && ds_path_exists(w->plain, NULL)) rc = f(ctx, w->plain, 1, err);
    if (rc == 0 && ds_path_exists(lp, NULL)) rc = f(ctx, lp, 0, err);
    free(lp);
    return rc;
  }
  int rc = 0;
  for (int lim = 0; lim < 2 && rc == 0; lim++) {
    char *pat = ds_strf("%s-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]%s",
                        w->prefix, w->suffix);
    char *lpat = pat && lim ? limits_path(pat) : NULL;
    ds_vfs_names g = {0};
    if (!pat || (lim && !lpat)) rc = ds_err(err, "out of memory");
    else if (ds_vfs_glob(lim ? lpat : pat, 0, &g) == 0)
      for (size_t i = 0; i < g.n && rc == 0; i++) {
        const char *p = g.v[i];
        size_t plen = strlen(p), slen = strlen(w->suffix);
        /* "-00000-of-NNNNN" is 15 characters before the suffix */
        int first = !lim && plen >= slen + 15 &&
                    strncmp(p + plen - slen - 15, "-00000-of-", 10) == 0;
        rc = f(ctx, p, first, err);
      }
    ds_vfs_names_free(&g);
    free(pat);
    free(lpat);
  }
  return rc;
}

static int refuse_existing(void *ctx, const char *path, int first, char **err) {
  (void)first;
  return ds_stage_check_absent((ds_stage *)ctx, path, err);
}

static int mark_obsolete(void *ctx, const char *path, int first, char **err) {
  return ds_stage_obsolete((ds_stage *)ctx, path, first, err);
}

/* ------------------------------------------------------------------ */
/* Staging shards                                                       */

/* Make shard i current, creating (or reusing a spare) pair of files. */
static int open_shard(bagz_writer *w, size_t i, char **err) {
  /* the shard before closes its descriptors (a bag of thousands of shards
   * would hold two per shard): reopened on demand */
  if (w->nshards > 0 && w->nshards - 1 != i) {
    bz_shard *prev = &w->shards[w->nshards - 1];
    if (ds_stage_park(prev->data, err) || ds_stage_park(prev->limits, err)) return -1;
  }
  if (i < w->nslots) {
    bz_shard *s = &w->shards[i];
    s->count = 0;
    if (ds_stage_unpark(s->data, err) || ds_stage_unpark(s->limits, err)) return -1;
    if (ds_afile_truncate(s->data, 0, err) || ds_afile_truncate(s->limits, 0, err))
      return -1;
    w->nshards = i + 1;
    return 0;
  }
  bz_shard *grown = ds_grow_cap(w->shards, &w->cap_shards, w->nslots, sizeof *grown, 4);
  if (!grown) return ds_err(err, "out of memory");
  w->shards = grown;
  bz_shard *s = &w->shards[w->nslots];
  memset(s, 0, sizeof *s);
  char label[48];
  snprintf(label, sizeof label, "shard%zu", i);
  if (ds_stage_file(w->stage, label, &s->data, err)) return -1;
  snprintf(label, sizeof label, "shard%zu.limits", i);
  if (ds_stage_file(w->stage, label, &s->limits, err)) return -1;
  w->nslots++;
  w->nshards = i + 1;
  return 0;
}

/* Append v as a u64 little-endian limit. */
static int put_limit(ds_afile *f, uint64_t v, char **err) {
  uint8_t le[8];
  for (int k = 0; k < 8; k++) le[k] = (uint8_t)(v >> (8 * k));
  return ds_afile_write(f, le, 8, err);
}

/* Append one stored record to the current shard. */
static int put_stored(void *ctx, const uint8_t *p, size_t n, char **err) {
  bagz_writer *w = ctx;
  bz_shard *s = &w->shards[w->nshards - 1];
  if (ds_afile_write(s->data, p, n, err) || put_limit(s->limits, s->data->size, err))
    return -1;
  s->count++;
  return 0;
}

/* Copy published shard `p` (records, then limits rebased by the current
 * size) onto the end of staging shard s. */
static int copy_back(bz_shard *s, const bz_pub *p, char **err) {
  uint64_t base = s->data->size;
  if (ds_afile_copy_from(s->data, p->path, 0, p->records_size, err)) return -1;
  ds_file lf;
  const char *lsrc = p->limits_path ? p->limits_path : p->path;
  uint64_t loff = p->limits_path ? 0 : p->records_size;
  if (ds_file_open(&lf, lsrc, err)) return -1;
  int rc = 0;
  for (uint64_t i = 0; i < p->count && rc == 0; i++) {
    uint64_t v;
    rc = ds_file_u64le(&lf, loff + 8 * i, &v, err);
    if (rc == 0) rc = put_limit(s->limits, v + base, err);
  }
  ds_file_close(&lf);
  s->count += p->count;
  return rc;
}

/* ------------------------------------------------------------------ */
/* Open / close                                                         */

int bagz_writer_open(ds_stage *stage, const char *spec,
                     const bagz_writer_options *o, bagz_writer **out,
                     char **err) {
  *out = NULL;
  bagz_writer *w = calloc(1, sizeof *w);
  if (!w) return ds_err(err, "out of memory");
  w->stage = stage;
  w->o = *o;
  if (w->o.threads < 1) w->o.threads = 1;
  char *dir = NULL, *base = NULL;
  unsigned n;
  int star, rc = parse_spec(spec, &dir, &base, &n, &star, &w->prefix,
                            &w->suffix, err);
  if (rc == 0 && !w->prefix) {
    w->plain = strdup(spec + ds_vfs_posix_prefix(spec));
    if (!w->plain) rc = ds_err(err, "out of memory");
    else if (o->rows_per_shard)
      rc = ds_err(err, "%s: rows_per_shard needs a sharded path (name@*.ext "
                       "or name@N.ext)", spec);
  }
  free(dir);
  free(base);
  w->fixed_n = n;
  w->split = !star && n && !o->rows_per_shard;
  ds_file df = {0};
  if (rc == 0 && !o->dictionary && o->dictionary_path &&
      (rc = ds_file_load(&df, o->dictionary_path, err)) == 0) {
    w->o.dictionary = df.size ? df.data : (const uint8_t *)"";
    w->o.dictionary_len = df.size;
  }
  if (rc == 0 && w->o.dictionary) {
    size_t dn = w->o.dictionary_len;
    if (!(w->dict = malloc(dn ? dn : 1))) rc = ds_err(err, "out of memory");
    else memcpy(w->dict, w->o.dictionary, dn);
    w->o.dictionary = w->dict;
  }
  if (df.path) ds_file_close(&df);
  if (rc == 0 && o->zstd)
    rc = bagz_compressor_new(o->level, w->dict, w->o.dictionary_len, w->o.threads,
                             put_stored, w, &w->comp, err);
  if (rc == 0)
    rc = each_existing(w,
                       ds_stage_get_mode(stage) == DS_STAGE_CREATE ? refuse_existing
                                                                   : mark_obsolete,
                       stage, err);
  if (rc) {
    bagz_writer_close(w);
    return -1;
  }
  *out = w;
  return 0;
}

static void free_pubs(bz_pub **pub, size_t *n) {
  for (size_t i = 0; i < *n; i++) {
    free((*pub)[i].path);
    free((*pub)[i].limits_path);
  }
  free(*pub);
  *pub = NULL;
  *n = 0;
}

void bagz_writer_close(bagz_writer *w) {
  if (!w) return;
  bagz_writer_abort(w);
  bagz_compressor_free(w->comp);
  free_pubs(&w->pub, &w->npub);
  free(w->pub_spec);
  free(w->shards);
  free(w->dict);
  free(w->plain);
  free(w->prefix);
  free(w->suffix);
  free(w);
}

/* ------------------------------------------------------------------ */
/* Transactions                                                         */

int bagz_writer_begin(bagz_writer *w, char **err) {
  if (w->in_txn) return 0;
  w->in_txn = 1;
  w->rows = w->pub_count;
  if (open_shard(w, 0, err)) return -1;
  /* continue the published bag: its shards come back as staging shards */
  for (size_t i = 0; i < w->npub; i++) {
    if (!w->split && i > 0 && open_shard(w, i, err)) return -1;
    if (copy_back(&w->shards[w->nshards - 1], &w->pub[i], err)) return -1;
  }
  return 0;
}

uint64_t bagz_writer_count(const bagz_writer *w) {
  return w->in_txn ? w->rows : w->pub_count;
}

int bagz_writer_add(bagz_writer *w, const uint8_t *p, size_t n, char **err) {
  if (!w->in_txn && bagz_writer_begin(w, err)) return -1;
  uint64_t row = bagz_writer_count(w);
  uint64_t rps = w->o.rows_per_shard;
  if (rps) {
    /* rows land in shard row / rps; with threads the current shard is the
     * one of the rows being emitted, so drain before moving on */
    if (row > 0 && row % rps == 0) {
      if (w->comp && bagz_compressor_drain(w->comp, err)) return -1;
      size_t next = (size_t)(row / rps);
      if (w->fixed_n && next >= w->fixed_n)
        return ds_err(err, "record %llu: %u shards of rows_per_shard=%llu are "
                           "full",
                      (unsigned long long)row, w->fixed_n, (unsigned long long)rps);
      if (open_shard(w, next, err)) return -1;
    }
  }
  w->rows++;
  if (w->comp) return bagz_compressor_add(w->comp, row, p, n, err);
  return put_stored(w, p, n, err);
}

int bagz_writer_mark(bagz_writer *w, void **mark, char **err) {
  if (!w->in_txn && bagz_writer_begin(w, err)) return -1;
  if (w->comp && bagz_compressor_drain(w->comp, err)) return -1;
  bz_mark *m = malloc(sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  bz_shard *s = &w->shards[w->nshards - 1];
  m->nshards = w->nshards;
  m->rows = w->rows;
  m->count = s->count;
  m->data_size = s->data->size;
  m->limits_size = s->limits->size;
  *mark = m;
  return 0;
}

int bagz_writer_rollback_to(bagz_writer *w, const void *mark, char **err) {
  const bz_mark *m = mark;
  if (w->comp) bagz_compressor_reset(w->comp);
  for (size_t i = m->nshards; i < w->nshards; i++) w->shards[i].count = 0;
  w->nshards = m->nshards;
  w->rows = m->rows;
  bz_shard *s = &w->shards[w->nshards - 1];
  s->count = m->count;
  if (ds_stage_unpark(s->data, err) || ds_stage_unpark(s->limits, err)) return -1;
  if (ds_afile_truncate(s->data, m->data_size, err) ||
      ds_afile_truncate(s->limits, m->limits_size, err))
    return -1;
  return 0;
}

/* name@N without rows_per_shard: cut staging shard 0 into N shards of
 * nearly equal counts (the first ones one larger), records and rebased
 * limits copied into fresh staging files. */
static int split_evenly(bagz_writer *w, char **err) {
  if (ds_afile_flush(w->shards[0].data, err) || ds_afile_flush(w->shards[0].limits, err))
    return -1;
  bz_shard src = w->shards[0];
  uint64_t total = src.count, n = w->fixed_n, start = 0, start_off = 0;
  ds_file lf;
  if (ds_file_open(&lf, src.limits->path, err)) return -1;
  int rc = 0;
  bz_shard *dst = calloc(n, sizeof *dst);
  if (!dst) rc = ds_err(err, "out of memory");
  for (uint64_t k = 0; k < n && rc == 0; k++) {
    uint64_t cnt = total / n + (k < total % n);
    char label[48];
    snprintf(label, sizeof label, "split%llu", (unsigned long long)k);
    rc = ds_stage_file(w->stage, label, &dst[k].data, err);
    snprintf(label, sizeof label, "split%llu.limits", (unsigned long long)k);
    if (rc == 0) rc = ds_stage_file(w->stage, label, &dst[k].limits, err);
    uint64_t end_off = start_off;
    for (uint64_t i = 0; i < cnt && rc == 0; i++) {
      rc = ds_file_u64le(&lf, 8 * (start + i), &end_off, err);
      if (rc == 0) rc = put_limit(dst[k].limits, end_off - start_off, err);
    }
    if (rc == 0 && end_off > start_off)
      rc = ds_afile_copy_from(dst[k].data, src.data->path, start_off,
                              end_off - start_off, err);
    if (rc == 0) rc = ds_stage_park(dst[k].data, err) || ds_stage_park(dst[k].limits, err);
    dst[k].count = cnt;
    start += cnt;
    start_off = end_off;
  }
  ds_file_close(&lf);
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

int bagz_writer_prepare(bagz_writer *w, char **err) {
  if (!w->in_txn && bagz_writer_begin(w, err)) return -1;
  if (w->comp && bagz_compressor_drain(w->comp, err)) return -1;
  if (w->split && split_evenly(w, err)) return -1;
  /* a name@N bag always has N files, empty ones included */
  while (w->fixed_n && w->nshards < w->fixed_n)
    if (open_shard(w, w->nshards, err)) return -1;
  /* what appeared since CREATE: mode=create refuses it, mode=replace
   * replaces the bag's own files (of any shard count) */
  if (each_existing(w,
                    ds_stage_get_mode(w->stage) == DS_STAGE_CREATE ? refuse_existing
                                                                   : mark_obsolete,
                    w->stage, err))
    return -1;
  size_t n = w->nshards;
  free_pubs(&w->next, &w->nnext);
  if (!(w->next = calloc(n, sizeof *w->next))) return ds_err(err, "out of memory");
  w->nnext = n;
  /* publish the last shard first: shard 0 is the commit point */
  for (size_t k = n; k-- > 0;) {
    bz_shard *s = &w->shards[k];
    bz_pub *p = &w->next[k];
    p->path = w->plain ? strdup(w->plain) : shard_path(w, k, n);
    p->count = s->count;
    p->records_size = s->data->size;
    if (!p->path) return ds_err(err, "out of memory");
    if (w->o.limits == BAGZ_LIMITS_SEPARATE) {
      if (!(p->limits_path = limits_path(p->path))) return ds_err(err, "out of memory");
      if (ds_stage_final(w->stage, s->limits->path, p->limits_path, err)) return -1;
    } else {
      int parked = s->data->fd < 0;
      if (ds_afile_flush(s->limits, err) || ds_stage_unpark(s->data, err) ||
          ds_afile_copy_from(s->data, s->limits->path, 0, s->limits->size, err) ||
          (parked && ds_stage_park(s->data, err)))
        return -1;
    }
    if (ds_stage_final(w->stage, s->data->path, p->path, err)) return -1;
  }
  return ds_stage_sync(w->stage, err);
}

int bagz_writer_publish(bagz_writer *w, char **err) {
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

void bagz_writer_abort(bagz_writer *w) {
  if (w->comp) bagz_compressor_reset(w->comp);
  if (!w->in_txn) return;
  ds_stage_discard(w->stage);
  free_pubs(&w->next, &w->nnext);
  w->in_txn = 0;
  w->nshards = w->nslots = 0; /* the next begin copies w->pub back */
}

const char *bagz_writer_published_spec(const bagz_writer *w) {
  return w->pub_spec;
}
