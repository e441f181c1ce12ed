/* tfrecord_staged.c - staged, transactional TFRecord writing (see
 * tfrecord_staged.h). Staging shards hold framed uncompressed records;
 * prepare splits (name@N without rows_per_shard: the staging file is
 * indexed by the reader's own index pass and cut at record boundaries),
 * compresses and names them, shard 0 last (the commit point). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/mapped_file.h"
#include "core/vfs.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_staged.h"
#include "formats/tfrecord/tfrecord_writer.h"

/* A published file: enough to copy it back for the next transaction. */
typedef struct pub_file {
  char *path;
  uint64_t count;
} pub_file;

struct tfrecord_staged {
  ds_stage *stage;
  tfrecord_staged_options o;
  char *plain;        /* a plain path, or NULL when sharded */
  char *prefix;       /* sharded: "dir/name" */
  char *suffix;       /* sharded: ".tfrecord" */
  unsigned fixed_n;   /* name@N: N; name@*: 0 */
  int split;          /* name@N without rows_per_shard */
  ds_afile **files;   /* staging shards: [0, nshards) in use, to nslots spare */
  uint64_t *counts;
  size_t nshards, nslots, cap;
  uint64_t rows;
  pub_file *pub, *next;
  size_t npub, nnext;
  uint64_t pub_count;
  char *pub_spec;
  int in_txn;
};

/* A savepoint: how far the last shard had come. */
typedef struct staged_mark {
  size_t nshards;
  uint64_t rows, count, size;
} staged_mark;

/* ------------------------------------------------------------------ */
/* Paths                                                                */

/* Split spec into dir, and plain name or prefix, N or *, suffix. */
static int parse_spec(const char *spec, char **dir, unsigned *n, int *star,
                      char **prefix, char **suffix, char **err) {
  *dir = *prefix = *suffix = NULL;
  *n = 0;
  *star = 0;
  if (strncmp(spec, "posix:", 6) == 0) spec += 6;
  if (!*spec) return ds_err(err, "tfrecord: empty path");
  if (strchr(spec, ','))
    return ds_err(err, "%s: a writer takes one path or one name@N / name@* spec, "
                       "not a comma list", spec);
  const char *slash = strrchr(spec, '/');
  const char *name = slash ? slash + 1 : spec;
  *dir = slash ? strndup(spec, (size_t)(slash - spec) + (slash == spec)) : strdup(".");
  if (!*dir) return ds_err(err, "out of memory");
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
    if (q == d || v == 0 || v >= 100000) return 0; /* a plain name */
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

int tfrecord_staged_target(const char *spec, char **dir, char **key, char **err) {
  char *prefix, *suffix;
  unsigned n;
  int star;
  *key = NULL;
  if (parse_spec(spec, dir, &n, &star, &prefix, &suffix, err)) {
    free(*dir);
    free(prefix);
    free(suffix);
    *dir = NULL;
    return -1;
  }
  const char *s = strncmp(spec, "posix:", 6) ? spec : spec + 6;
  const char *slash = strrchr(s, '/');
  const char *base = slash ? slash + 1 : s;
  if (prefix) { /* one lock for name@N and name@*: "name@.ext" */
    const char *ps = strrchr(prefix, '/');
    *key = ds_strf("%s@%s", ps ? ps + 1 : prefix, suffix);
  } else { /* a shard's own name locks its set */
    const char *p = strchr(base, '-');
    size_t k = 0;
    while (p && !(k = shard_infix(p))) p = strchr(p + 1, '-');
    *key = k ? ds_strf("%.*s@%s", (int)(p - base), base, p + k) : strdup(base);
  }
  free(prefix);
  free(suffix);
  if (!*key) {
    free(*dir);
    *dir = NULL;
    return ds_err(err, "out of memory");
  }
  return 0;
}

/* Shard file name NAME-%05d-of-%05d.EXT. */
static char *shard_path(const tfrecord_staged *w, size_t i, size_t n) {
  return ds_strf("%s-%05zu-of-%05zu%s", w->prefix, i, n, w->suffix);
}

/* Every existing file of the dataset at this spec (any shard count):
 * f(stage, path, is_shard0). */
static int each_existing(const tfrecord_staged *w,
                         int (*f)(ds_stage *, const char *, int, char **), char **err) {
  if (w->plain)
    return ds_path_exists(w->plain, NULL) ? f(w->stage, w->plain, 1, err) : 0;
  char *pat = ds_strf("%s-[0-9][0-9][0-9][0-9][0-9]-of-[0-9][0-9][0-9][0-9][0-9]%s",
                      w->prefix, w->suffix);
  if (!pat) return ds_err(err, "out of memory");
  ds_vfs_names g = {0};
  int rc = 0;
  if (ds_vfs_glob(pat, 0, &g) == 0)
    for (size_t i = 0; i < g.n && rc == 0; i++) {
      const char *p = g.v[i];
      size_t plen = strlen(p), slen = strlen(w->suffix);
      int first = plen >= slen + 15 && strncmp(p + plen - slen - 15, "-00000-of-", 10) == 0;
      rc = f(w->stage, p, first, err);
    }
  ds_vfs_names_free(&g);
  free(pat);
  return rc;
}

static int refuse_existing(ds_stage *s, const char *path, int first, char **err) {
  (void)first;
  return ds_stage_check_absent(s, path, err);
}

/* The files there now: refused (create) or replaced (replace). */
static int claim_existing(tfrecord_staged *w, char **err) {
  return each_existing(w, ds_stage_get_mode(w->stage) == DS_STAGE_CREATE ? refuse_existing
                                                                         : ds_stage_obsolete,
                       err);
}

/* ------------------------------------------------------------------ */
/* Staging shards                                                       */

/* Make shard i current (a spare slot emptied, or a new temporary). */
static int open_shard(tfrecord_staged *w, size_t i, char **err) {
  if (w->nshards > 0 && w->nshards - 1 != i &&
      ds_stage_park(w->files[w->nshards - 1], err))
    return -1;
  if (i < w->nslots) {
    w->counts[i] = 0;
    if (ds_stage_unpark(w->files[i], err) || ds_afile_truncate(w->files[i], 0, err))
      return -1;
    w->nshards = i + 1;
    return 0;
  }
  if (w->nslots >= w->cap) {
    size_t nc = w->cap ? w->cap * 2 : 4;
    ds_afile **f = realloc(w->files, nc * sizeof *f);
    if (f) w->files = f;
    uint64_t *c = f ? realloc(w->counts, nc * sizeof *c) : NULL;
    if (c) w->counts = c;
    if (!f || !c) return ds_err(err, "out of memory");
    w->cap = nc;
  }
  char label[48];
  snprintf(label, sizeof label, "shard%zu", i);
  if (ds_stage_file(w->stage, label, &w->files[w->nslots], err)) return -1;
  w->counts[w->nslots] = 0;
  w->nslots++;
  w->nshards = i + 1;
  return 0;
}

/* Append one framed record to staging shard s. */
static int put_framed(tfrecord_staged *w, size_t s, const uint8_t *p, size_t n,
                      char **err) {
  uint8_t h[TFR_HEADER], f[TFR_FOOTER];
  tfr_frame_header(h, n);
  tfr_frame_footer(f, p, n);
  if (ds_afile_write(w->files[s], h, sizeof h, err) ||
      (n && ds_afile_write(w->files[s], p, n, err)) ||
      ds_afile_write(w->files[s], f, sizeof f, err))
    return -1;
  w->counts[s]++;
  return 0;
}

/* Copy published file p's records onto the end of staging shard s
 * (uncompressed: its bytes; compressed: decompressed and re-framed). */
static int copy_back(tfrecord_staged *w, size_t s, const pub_file *p, char **err) {
  tfrecord_file t;
  tfrecord_options ro = {.compression = w->o.compression};
  if (tfrecord_open(&t, p->path, &ro, err)) return -1;
  int rc = 0;
  if (t.compression == TFRECORD_NONE) {
    rc = ds_afile_copy_from(w->files[s], p->path, 0, t.file.size, err);
    w->counts[s] += p->count;
  } else {
    tfrecord_cursor c;
    tfrecord_rec r;
    rc = tfrecord_cursor_init(&c, &t, err);
    int got = 0;
    while (rc == 0 && (got = tfrecord_next(&c, &r, err)) == 1)
      rc = put_framed(w, s, r.data, r.len, err);
    if (got < 0) rc = -1;
    tfrecord_cursor_free(&c);
  }
  tfrecord_close(&t);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Open / close                                                         */

int tfrecord_staged_open(ds_stage *stage, const char *spec,
                         const tfrecord_staged_options *o, tfrecord_staged **out,
                         char **err) {
  *out = NULL;
  tfrecord_staged *w = calloc(1, sizeof *w);
  if (!w) return ds_err(err, "out of memory");
  w->stage = stage;
  w->o = *o;
  if (w->o.compression == TFRECORD_AUTO) w->o.compression = TFRECORD_NONE;
  char *dir = NULL;
  int star;
  int rc = parse_spec(spec, &dir, &w->fixed_n, &star, &w->prefix, &w->suffix, err);
  free(dir);
  if (rc == 0 && !w->prefix) {
    w->plain = strdup(strncmp(spec, "posix:", 6) ? spec : spec + 6);
    if (!w->plain) rc = ds_err(err, "out of memory");
    else if (o->rows_per_shard)
      rc = ds_err(err, "%s: rows_per_shard needs a sharded path (name@*.ext or "
                       "name@N.ext)", spec);
  }
  if (rc == 0 && star && !o->rows_per_shard)
    rc = ds_err(err, "%s: name@* needs rows_per_shard (or name@N)", spec);
  w->split = w->fixed_n && !o->rows_per_shard;
  if (rc == 0) rc = claim_existing(w, err);
  if (rc) {
    tfrecord_staged_close(w);
    return -1;
  }
  *out = w;
  return 0;
}

static void free_pubs(pub_file **p, size_t *n) {
  for (size_t i = 0; i < *n; i++) free((*p)[i].path);
  free(*p);
  *p = NULL;
  *n = 0;
}

void tfrecord_staged_close(tfrecord_staged *w) {
  if (!w) return;
  tfrecord_staged_abort(w);
  free_pubs(&w->pub, &w->npub);
  free_pubs(&w->next, &w->nnext);
  free(w->pub_spec);
  free(w->files);
  free(w->counts);
  free(w->plain);
  free(w->prefix);
  free(w->suffix);
  free(w);
}

/* ------------------------------------------------------------------ */
/* Transactions                                                         */

int tfrecord_staged_begin(tfrecord_staged *w, char **err) {
  if (w->in_txn) return 0;
  w->in_txn = 1;
  w->rows = w->pub_count;
  if (open_shard(w, 0, err)) return -1;
  for (size_t i = 0; i < w->npub; i++) {
    if (!w->split && i > 0 && open_shard(w, i, err)) return -1;
    if (copy_back(w, w->nshards - 1, &w->pub[i], err)) return -1;
  }
  return 0;
}

uint64_t tfrecord_staged_count(const tfrecord_staged *w) {
  return w->in_txn ? w->rows : w->pub_count;
}

int tfrecord_staged_add(tfrecord_staged *w, const uint8_t *p, size_t n, char **err) {
  if (!w->in_txn && tfrecord_staged_begin(w, err)) return -1;
  uint64_t row = w->rows, rps = w->o.rows_per_shard;
  if (rps && row > 0 && row % rps == 0) {
    size_t next = (size_t)(row / rps);
    if (w->fixed_n && next >= w->fixed_n)
      return ds_err(err, "record %llu: %u shards of rows_per_shard=%llu are full",
                    (unsigned long long)row, w->fixed_n, (unsigned long long)rps);
    if (open_shard(w, next, err)) return -1;
  }
  if (put_framed(w, w->nshards - 1, p, n, err)) {
    char where[48];
    snprintf(where, sizeof where, "record %llu", (unsigned long long)row);
    ds_err_prefix(err, where);
    return -1;
  }
  w->rows++;
  return 0;
}

int tfrecord_staged_mark(tfrecord_staged *w, void **mark, char **err) {
  if (!w->in_txn && tfrecord_staged_begin(w, err)) return -1;
  staged_mark *m = malloc(sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  m->nshards = w->nshards;
  m->rows = w->rows;
  m->count = w->counts[w->nshards - 1];
  m->size = w->files[w->nshards - 1]->size;
  *mark = m;
  return 0;
}

int tfrecord_staged_rollback_to(tfrecord_staged *w, const void *mark, char **err) {
  const staged_mark *m = mark;
  for (size_t i = m->nshards; i < w->nshards; i++) w->counts[i] = 0;
  if (w->nshards > m->nshards && ds_stage_park(w->files[w->nshards - 1], err)) return -1;
  w->nshards = m->nshards;
  w->rows = m->rows;
  ds_afile *f = w->files[w->nshards - 1];
  w->counts[w->nshards - 1] = m->count;
  return ds_stage_unpark(f, err) || ds_afile_truncate(f, m->size, err) ? -1 : 0;
}

/* name@N without rows_per_shard: staging shard 0 cut into N shards of
 * nearly equal counts (the first ones one larger) at record boundaries
 * found by the reader's index pass. */
static int split_evenly(tfrecord_staged *w, char **err) {
  ds_afile *src = w->files[0];
  if (ds_afile_flush(src, err)) return -1;
  tfrecord_file t;
  tfrecord_options ro = {.compression = TFRECORD_NONE};
  if (tfrecord_open(&t, src->path, &ro, err)) return -1;
  int rc = tfrecord_index(&t, err);
  if (rc == 0 && t.tail_err) rc = ds_err(err, "%s", t.tail_err);
  uint64_t total = t.count, n = w->fixed_n, start = 0;
  ds_afile **dst = rc == 0 ? calloc(n, sizeof *dst) : NULL;
  uint64_t *cnt = rc == 0 ? calloc(n, sizeof *cnt) : NULL;
  if (rc == 0 && (!dst || !cnt)) rc = ds_err(err, "out of memory");
  for (uint64_t k = 0; k < n && rc == 0; k++) {
    uint64_t c = total / n + (k < total % n);
    char label[48];
    snprintf(label, sizeof label, "split%llu", (unsigned long long)k);
    rc = ds_stage_file(w->stage, label, &dst[k], err);
    if (rc == 0 && c > 0) {
      uint64_t a = t.offsets[start], b = start + c < total ? t.offsets[start + c]
                                                           : t.file.size;
      rc = ds_afile_copy_from(dst[k], src->path, a, b - a, err);
    }
    if (rc == 0) rc = ds_stage_park(dst[k], err);
    cnt[k] = c;
    start += c;
  }
  tfrecord_close(&t);
  if (rc == 0) { /* the split files take the slots' place; the old stay staged, unnamed */
    free(w->files);
    free(w->counts);
    w->files = dst;
    w->counts = cnt;
    w->nshards = w->nslots = w->cap = n;
  } else {
    free(dst);
    free(cnt);
  }
  return rc;
}

/* The file published for staging shard s: the shard itself, or its
 * records compressed into a new temporary (*tmp). */
static int finish_shard(tfrecord_staged *w, size_t s, ds_afile **tmp, char **err) {
  ds_afile *f = w->files[s];
  *tmp = f;
  if (ds_stage_unpark(f, err) || ds_afile_flush(f, err)) return -1;
  if (w->o.compression == TFRECORD_NONE) return ds_stage_park(f, err);
  char label[48];
  snprintf(label, sizeof label, "shard%zu.%s", s, tfrecord_compression_name(w->o.compression));
  if (ds_stage_file(w->stage, label, tmp, err)) return -1;
  tfrecord_writer *enc = NULL;
  tfrecord_file t;
  tfrecord_options ro = {.compression = TFRECORD_NONE, .skip_data_crc = 1};
  if (tfrecord_open(&t, f->path, &ro, err)) return -1;
  tfrecord_cursor c;
  tfrecord_rec r;
  int rc = tfrecord_writer_new(*tmp, w->o.compression, w->o.level, &enc, err);
  if (rc == 0) rc = tfrecord_cursor_init(&c, &t, err);
  if (rc == 0) {
    int got;
    while ((got = tfrecord_next(&c, &r, err)) == 1)
      if (tfrecord_writer_add(enc, r.data, r.len, err)) break;
    rc = got == 0 ? tfrecord_writer_finish(enc, err) : -1;
    tfrecord_cursor_free(&c);
  }
  tfrecord_writer_free(enc);
  tfrecord_close(&t);
  if (rc == 0) rc = ds_stage_park(f, err) || ds_stage_park(*tmp, err) ? -1 : 0;
  return rc;
}

int tfrecord_staged_prepare(tfrecord_staged *w, char **err) {
  if (!w->in_txn && tfrecord_staged_begin(w, err)) return -1;
  if (w->split && split_evenly(w, err)) return -1;
  while (w->fixed_n && w->nshards < w->fixed_n)
    if (open_shard(w, w->nshards, err)) return -1;
  if (claim_existing(w, err)) return -1; /* what appeared since the open */
  size_t n = w->nshards;
  free_pubs(&w->next, &w->nnext);
  if (!(w->next = calloc(n, sizeof *w->next))) return ds_err(err, "out of memory");
  w->nnext = n;
  for (size_t k = n; k-- > 0;) { /* shard 0 last: the commit point */
    pub_file *p = &w->next[k];
    ds_afile *tmp;
    p->path = w->plain ? strdup(w->plain) : shard_path(w, k, n);
    p->count = w->counts[k];
    if (!p->path) return ds_err(err, "out of memory");
    if (finish_shard(w, k, &tmp, err) || ds_stage_final(w->stage, tmp->path, p->path, err))
      return -1;
  }
  return ds_stage_sync(w->stage, err);
}

int tfrecord_staged_publish(tfrecord_staged *w, char **err) {
  int rc = ds_stage_publish(w->stage, err);
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

void tfrecord_staged_abort(tfrecord_staged *w) {
  if (!w->in_txn) return;
  ds_stage_discard(w->stage);
  free_pubs(&w->next, &w->nnext);
  w->in_txn = 0;
  w->nshards = w->nslots = 0;
}

const char *tfrecord_staged_published_spec(const tfrecord_staged *w) {
  return w->pub_spec;
}
