/* datadings_writer.c - staged datadings writing (see datadings_writer.h).
 *
 * While rows come: X.msgpack and X.msgpack.offsets grow as temporaries
 * (their md5 kept running), keys go to an in-memory store with a hash
 * table for uniqueness. prepare writes .keys, .key_hashes, .filter and .md5
 * and names everything; X.msgpack is published last (the commit point).
 * Helper threads: the data file's md5 is computed by one that reads back
 * what was written (core/md5_follow.h); each key's two BLAKE2s hashes
 * (.key_hashes with the first salt, the .filter's) by another while rows
 * come (formats/datadings/datadings_key_hasher.h, into a temporary file); at
 * prepare the .filter's bits are set by a third while .keys and
 * .key_hashes are written. */
#include <md5.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/key_store.h"
#include "core/mapped_file.h"
#include "core/md5_follow.h"
#include "formats/datadings/datadings.h"
#include "formats/datadings/datadings_key_hasher.h"
#include "formats/datadings/datadings_writer.h"
#include "decoders/msgpack_encode.h"
#include "decoders/msgpack_value.h"
#include "formats/datadings/simplebloom.h"

static const char *const SUFFIXES[] = {".offsets", ".keys", ".key_hashes",
                                       ".filter", ".md5", ".index", NULL};
#define MAX_SALT_TRIES 1000

struct datadings_writer {
  ds_stage *stage;
  char *path;               /* X.msgpack */
  ds_afile *data, *offsets; /* staging files of this transaction */
  MD5_CTX data_md5, offsets_md5; /* data_md5: as of the last prepare */
  ds_md5_follow *data_follow; /* hashes the data file on a second thread */
  ds_afile *spill;          /* every key's hashes (a temporary never published) */
  dd_key_hasher *hasher;    /* fills spill on a third thread */
  uint64_t n;               /* samples so far */
  ds_key_store keys;        /* every key, for uniqueness and the index */
  /* the published state a next transaction continues */
  int published, in_txn;
  uint64_t pub_n;
  ds_key_mark pub_keys;
  MD5_CTX pub_data_md5, pub_offsets_md5;
  uint64_t pub_data_size, pub_offsets_size;
  ds_buf scratch;           /* one encoded sample */
  ds_arena arena;
};

typedef struct dd_mark {
  uint64_t n, data_size, offsets_size;
  ds_key_mark keys;
  MD5_CTX offsets_md5;
} dd_mark;

/* Add key k (hash h from ds_key_store_hash) as sample w->n's; an error
 * when it is already there. */
static int add_key(datadings_writer *w, const uint8_t *k, size_t n, uint64_t h,
                   char **err) {
  uint64_t dup;
  int r = ds_key_store_add_hashed(&w->keys, k, n, h, &dup);
  if (r < 0) return ds_err(err, "%s: out of memory for the key set", w->path);
  if (r > 0)
    return ds_err(err, "sample %llu: key \"%.*s\" is already sample %llu (keys "
                       "must be unique)",
                  (unsigned long long)w->n, (int)(n > 200 ? 200 : n), k,
                  (unsigned long long)dup);
  return 0;
}

/* ------------------------------------------------------------------ */
/* Open / close                                                         */

int datadings_writer_target(const char *path, char **dir, char **key,
                            char **err) {
  const char *slash = strrchr(path, '/');
  *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
  *key = strdup(slash ? slash + 1 : path);
  if (!*dir || !*key) return ds_err(err, "out of memory");
  if (!**key) return ds_err(err, "%s: names a directory, not a .msgpack file", path);
  return 0;
}

int datadings_writer_open(ds_stage *stage, const char *path,
                          datadings_writer **out, char **err) {
  *out = NULL;
  if (strpbrk(path, "*?["))
    return ds_err(err, "%s: a writer takes one .msgpack path, not a glob", path);
  /* the data file (the commit point) and every side file */
  for (int i = -1; SUFFIXES[i + 1] || i < 0; i++) {
    char *p = i < 0 ? strdup(path) : ds_strf("%s%s", path, SUFFIXES[i]);
    int rc = p ? ds_stage_claim(stage, p, i < 0, err) : ds_err(err, "out of memory");
    free(p);
    if (rc) return -1;
  }
  datadings_writer *w = calloc(1, sizeof *w);
  if (!w || !(w->path = strdup(path))) {
    free(w);
    return ds_err(err, "out of memory");
  }
  w->stage = stage;
  MD5Init(&w->data_md5);
  MD5Init(&w->offsets_md5);
  *out = w;
  return 0;
}

void datadings_writer_close(datadings_writer *w) {
  if (!w) return;
  datadings_writer_abort(w);
  ds_key_store_free(&w->keys);
  ds_buf_free(&w->scratch);
  ds_arena_free(&w->arena);
  free(w->path);
  free(w);
}

/* ------------------------------------------------------------------ */
/* Transactions                                                         */

/* Append bytes to a staging file and its running md5. */
static int put(ds_afile *f, MD5_CTX *md5, const void *p, size_t n, char **err) {
  MD5Update(md5, p, n);
  return ds_afile_write(f, p, n, err);
}

static int put_be64(ds_afile *f, MD5_CTX *md5, uint64_t v, char **err) {
  uint8_t b[8];
  for (int i = 7; i >= 0; i--, v >>= 8) b[i] = (uint8_t)v;
  return put(f, md5, b, 8, err);
}

/* Start hashing the data file on a second thread from w->data_md5, which
 * holds its bytes so far. */
static int start_follow(datadings_writer *w, char **err) {
  w->data_follow = ds_md5_follow_start(w->data->fd, &w->data_md5, w->data->size);
  return w->data_follow ? 0 : ds_err(err, "%s: out of memory", w->path);
}

/* Start hashing keys into a new spill; the published keys (a continued
 * dataset) are queued first. */
static int start_hasher(datadings_writer *w, char **err) {
  if (ds_stage_file(w->stage, "hashes", &w->spill, err)) return -1;
  if (!(w->hasher = dd_key_hasher_start(w->spill)))
    return ds_err(err, "%s: out of memory", w->path);
  ds_key_iter it = {0, 0};
  const uint8_t *p;
  size_t n;
  for (uint64_t i = 0; i < w->pub_n && ds_key_store_next(&w->keys, &it, &p, &n); i++)
    if (dd_key_hasher_add(w->hasher, p, n, err)) return -1;
  return 0;
}

/* Stop the key hasher (before its spill is discarded). */
static void stop_hasher(datadings_writer *w) {
  dd_key_hasher_stop(w->hasher);
  w->hasher = NULL;
  w->spill = NULL;
}

int datadings_writer_begin(datadings_writer *w, char **err) {
  if (w->in_txn) return 0;
  if (ds_stage_file(w->stage, "msgpack", &w->data, err) ||
      ds_stage_file(w->stage, "offsets", &w->offsets, err))
    return -1;
  /* published as written: a remote target uploads them while written */
  char *offsets_path = ds_strf("%s.offsets", w->path);
  ds_stage_expect(w->stage, w->data, w->path);
  w->data->writeback = 0; /* its md5 follower starts the disk writes, off this thread */
  if (offsets_path) ds_stage_expect(w->stage, w->offsets, offsets_path);
  free(offsets_path);
  w->in_txn = 1;
  if (start_hasher(w, err)) return -1;
  if (!w->published) {
    MD5Init(&w->data_md5);
    return start_follow(w, err) || put_be64(w->offsets, &w->offsets_md5, 0, err) ? -1 : 0;
  }
  /* continue the published dataset */
  char *op = ds_strf("%s.offsets", w->path);
  int rc = op ? 0 : ds_err(err, "out of memory");
  if (rc == 0) rc = ds_afile_copy_from(w->data, w->path, 0, w->pub_data_size, err);
  if (rc == 0) rc = ds_afile_copy_from(w->offsets, op, 0, w->pub_offsets_size, err);
  free(op);
  w->data_md5 = w->pub_data_md5;
  w->offsets_md5 = w->pub_offsets_md5;
  return rc ? -1 : start_follow(w, err);
}

uint64_t datadings_writer_count(const datadings_writer *w) { return w->n; }

/* Append one encoded sample under key k (hash kh: taken with
 * ds_key_store_hash before the sample was checked or encoded, so the key
 * table's cache miss overlaps that work). */
static int append(datadings_writer *w, const uint8_t *k, size_t kn, uint64_t kh,
                  const uint8_t *p, size_t n, char **err) {
  if (!w->in_txn && datadings_writer_begin(w, err)) return -1;
  if (!ds_utf8_valid(k, kn))
    return ds_err(err, "sample %llu: the key is not valid UTF-8",
                  (unsigned long long)w->n);
  if (add_key(w, k, kn, kh, err)) return -1;
  if (ds_afile_write(w->data, p, n, err) ||
      put_be64(w->offsets, &w->offsets_md5, w->data->size, err))
    return -1; /* the statement fails and rolls back to its savepoint */
  ds_md5_follow_feed(w->data_follow, w->data->size - w->data->nbuf);
  if (dd_key_hasher_add(w->hasher, k, kn, err)) return -1;
  w->n++;
  return 0;
}

int datadings_writer_add_raw(datadings_writer *w, const uint8_t *key,
                             size_t klen, const uint8_t *p, size_t n,
                             int check, char **err) {
  uint64_t kh = ds_key_store_hash(&w->keys, key, klen);
  if (check) {
    /* one msgpack object, its headers walked (nothing unpacked); its "key" */
    char *e = NULL;
    msgpack_object kv, *k = &kv;
    int is_map, found;
    if (ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &kv, &e)) {
      int rc = ds_err(err, "sample %llu: raw is not one msgpack object: %s",
                      (unsigned long long)w->n, e);
      free(e);
      return rc;
    }
    if (!is_map)
      return ds_err(err, "sample %llu: raw is not a msgpack map", (unsigned long long)w->n);
    if (!found)
      return ds_err(err, "sample %llu: raw has no \"key\" field", (unsigned long long)w->n);
    if (k->type != MSGPACK_OBJECT_STR || k->via.str.size != klen ||
        (klen && memcmp(k->via.str.ptr, key, klen) != 0))
      return ds_err(err, "sample %llu: the \"key\" inside raw differs from the "
                         "key column \"%.*s\"",
                    (unsigned long long)w->n, (int)(klen > 200 ? 200 : klen), key);
  }
  return append(w, key, klen, kh, p, n, err);
}

/* 1 when v may encode as msgpack containers nested deep enough to pass
 * DS_MSGPACK_MAX_NEST in a sample (so the sample is walked). Scalars and
 * bytes cannot, nor arrays: a plain one is a map and a shape list, and
 * structured ones (whose descr nests) are refused by the encoder. */
static int may_nest(const ds_value *v) {
  return v->type == DS_V_LIST || v->type == DS_V_TUPLE || v->type == DS_V_SET ||
         v->type == DS_V_MAP;
}

/* Refuse an encoded sample the readers would refuse (containers nested
 * deeper than DS_MSGPACK_MAX_NEST): the same walk as theirs. */
static int readable(const datadings_writer *w, char **err) {
  char *e = NULL;
  if (ds_msgpack_walk(w->scratch.data, w->scratch.len, &e) == 0) return 0;
  int rc = ds_err(err, "sample %llu: the readers would refuse it: %s",
                  (unsigned long long)w->n, e);
  free(e);
  return rc;
}

/* Refuse msgpack-numpy's marker names as top-level fields. */
static int reserved(const datadings_writer *w, const uint8_t *name, size_t n,
                    char **err) {
  if ((n == 2 && memcmp(name, "nd", 2) == 0) || (n == 7 && memcmp(name, "complex", 7) == 0))
    return ds_err(err, "sample %llu: field \"%.*s\" is reserved by msgpack-numpy",
                  (unsigned long long)w->n, (int)n, name);
  return 0;
}

/* Encode one field value (JSON text parsed first when asked). */
static int pack_field(datadings_writer *w, const datadings_field *f, int *nest,
                      char **err) {
  ds_value v = f->value;
  if (f->json && v.type == DS_V_TEXT &&
      ds_value_from_json((const char *)v.u.s.p, v.u.s.n, &w->arena, &v, err))
    return -1;
  *nest |= may_nest(&v);
  return ds_msgpack_pack_value(&w->scratch, &v, err);
}

int datadings_writer_add_fields(datadings_writer *w, const uint8_t *key,
                                size_t klen, const datadings_field *f,
                                size_t nf, char **err) {
  uint64_t kh = ds_key_store_hash(&w->keys, key, klen);
  size_t live = 1;
  int nest = 0;
  for (size_t i = 0; i < nf; i++) {
    if (reserved(w, (const uint8_t *)f[i].name, f[i].name_len, err)) return -1;
    live += f[i].value.type != DS_V_NULL;
  }
  w->scratch.len = 0;
  ds_arena_reset(&w->arena);
  int rc = ds_msgpack_pack_map_header(&w->scratch, live, err) ||
           ds_msgpack_pack_str(&w->scratch, (const uint8_t *)"key", 3, err) ||
           ds_msgpack_pack_str(&w->scratch, key, klen, err);
  for (size_t i = 0; i < nf && rc == 0; i++) {
    if (f[i].value.type == DS_V_NULL) continue;
    rc = ds_msgpack_pack_str(&w->scratch, (const uint8_t *)f[i].name, f[i].name_len, err) ||
         pack_field(w, &f[i], &nest, err);
    if (rc) ds_err_prefix(err, f[i].name);
  }
  if (rc) {
    char where[64];
    snprintf(where, sizeof where, "sample %llu", (unsigned long long)w->n);
    ds_err_prefix(err, where);
    return -1;
  }
  if (nest && readable(w, err)) return -1;
  return append(w, key, klen, kh, w->scratch.data, w->scratch.len, err);
}

int datadings_writer_add_json(datadings_writer *w, const uint8_t *key,
                              size_t klen, const char *json, size_t n,
                              char **err) {
  ds_arena_reset(&w->arena);
  ds_value v;
  char where[64];
  snprintf(where, sizeof where, "sample %llu", (unsigned long long)w->n);
  if (ds_value_from_json(json, n, &w->arena, &v, err)) {
    ds_err_prefix(err, where);
    return -1;
  }
  if (v.type != DS_V_MAP)
    return ds_err(err, "%s: the sample JSON is not an object", where);
  const ds_value *own = NULL;
  int nest = 0;
  for (size_t i = 0; i < v.u.list.n; i++) {
    const ds_value *k = &v.u.list.items[2 * i];
    if (reserved(w, k->u.s.p, k->u.s.n, err)) return -1;
    if (k->u.s.n == 3 && memcmp(k->u.s.p, "key", 3) == 0) own = &v.u.list.items[2 * i + 1];
    nest |= may_nest(&v.u.list.items[2 * i + 1]);
  }
  if (own && own->type != DS_V_TEXT)
    return ds_err(err, "%s: the sample's \"key\" is not a string", where);
  if (own && key && (own->u.s.n != klen || memcmp(own->u.s.p, key, klen) != 0))
    return ds_err(err, "%s: the sample's \"key\" differs from the key column", where);
  if (!own && !key) return ds_err(err, "%s: no key (neither a key column nor \"key\")", where);
  if (!key) {
    key = own->u.s.p;
    klen = own->u.s.n;
  }
  w->scratch.len = 0;
  int rc;
  if (own) {
    rc = ds_msgpack_pack_value(&w->scratch, &v, err);
  } else {
    rc = ds_msgpack_pack_map_header(&w->scratch, v.u.list.n + 1, err) ||
         ds_msgpack_pack_str(&w->scratch, (const uint8_t *)"key", 3, err) ||
         ds_msgpack_pack_str(&w->scratch, key, klen, err);
    for (size_t i = 0; i < 2 * v.u.list.n && rc == 0; i++)
      rc = ds_msgpack_pack_value(&w->scratch, &v.u.list.items[i], err);
  }
  if (rc) {
    ds_err_prefix(err, where);
    return -1;
  }
  if (nest && readable(w, err)) return -1;
  return append(w, key, klen, ds_key_store_hash(&w->keys, key, klen), w->scratch.data,
                w->scratch.len, err);
}

int datadings_writer_mark(datadings_writer *w, void **mark, char **err) {
  if (!w->in_txn && datadings_writer_begin(w, err)) return -1;
  dd_mark *m = malloc(sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  m->n = w->n;
  m->data_size = w->data->size;
  m->offsets_size = w->offsets->size;
  m->keys = ds_key_store_mark(&w->keys);
  m->offsets_md5 = w->offsets_md5;
  *mark = m;
  return 0;
}

int datadings_writer_rollback_to(datadings_writer *w, const void *mark,
                                 char **err) {
  const dd_mark *m = mark;
  ds_md5_follow_cut(w->data_follow, m->data_size);
  if (dd_key_hasher_cut(w->hasher, m->n, err) ||
      ds_afile_truncate(w->data, m->data_size, err) ||
      ds_afile_truncate(w->offsets, m->offsets_size, err))
    return -1;
  w->n = m->n;
  ds_key_store_rollback(&w->keys, m->keys);
  w->offsets_md5 = m->offsets_md5;
  return 0;
}

/* Hex md5 line "<hex>  <name>\n" of a finished context. */
static int md5_line(ds_buf *out, MD5_CTX *c, const char *name) {
  uint8_t d[MD5_DIGEST_LENGTH];
  MD5Final(d, c);
  for (int i = 0; i < MD5_DIGEST_LENGTH; i++)
    if (ds_buf_printf(out, "%02x", d[i])) return -1;
  return ds_buf_printf(out, "  %s\n", name);
}

#define RADIX_BITS 16
#define RADIX ((size_t)1 << RADIX_BITS)

/* Sort v[0..n) with tmp (n more) and count (RADIX counters): LSD radix
 * sort, 16 bits a pass; after the 4 passes the values are back in v
 * (qsort's compare calls were most of the time at a million keys). */
static void sort_u64(uint64_t *v, uint64_t *tmp, size_t *count, uint64_t n) {
  for (int shift = 0; shift < 64; shift += RADIX_BITS) {
    memset(count, 0, RADIX * sizeof *count);
    for (uint64_t i = 0; i < n; i++) count[(v[i] >> shift) & (RADIX - 1)]++;
    size_t sum = 0;
    for (size_t d = 0; d < RADIX; d++) {
      size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (uint64_t i = 0; i < n; i++) tmp[count[(v[i] >> shift) & (RADIX - 1)]++] = v[i];
    uint64_t *t = v;
    v = tmp;
    tmp = t;
  }
}

/* The salted hashes of every key with salt_for(0), from the spill. */
static int spilled_hashes(datadings_writer *w, uint64_t *h, char **err) {
  dd_key_hashes r[1024];
  for (uint64_t i = 0; i < w->n; i += 1024) {
    uint64_t m = w->n - i < 1024 ? w->n - i : 1024;
    if (dd_key_hasher_read(w->spill, i, m, r, err)) return -1;
    for (uint64_t j = 0; j < m; j++) memcpy(&h[i + j], r[j].salted, 8);
  }
  return 0;
}

/* .key_hashes: salt_for(c) for the first c without a repeated hash. The
 * hashes are written in key order, then sorted in memory to look for a
 * repeat; a repeat truncates the file and tries the next salt (the first
 * salt's hashes were made while rows came, later ones are made here). */
static int write_key_hashes(datadings_writer *w, ds_afile *f, MD5_CTX *md5,
                            char **err) {
  uint64_t *h = malloc((w->n ? 2 * w->n : 1) * sizeof *h);
  size_t *count = malloc(RADIX * sizeof *count);
  if (!h || !count) {
    free(h);
    free(count);
    return ds_err(err, "%s: out of memory for key hashes", w->path);
  }
  int rc = 0, found = 0;
  for (uint64_t c = 0; c < MAX_SALT_TRIES && rc == 0 && !found; c++) {
    uint8_t salt[8];
    datadings_salt_for(c, salt);
    MD5Init(md5);
    rc = ds_afile_truncate(f, 0, err) || put(f, md5, salt, 8, err);
    ds_key_iter it = {0, 0};
    const uint8_t *p;
    size_t n;
    if (c == 0 && rc == 0) rc = spilled_hashes(w, h, err);
    for (uint64_t i = 0; c > 0 && rc == 0 && ds_key_store_next(&w->keys, &it, &p, &n); i++)
      datadings_key_hash(salt, p, n, (uint8_t *)&h[i]);
    if (rc == 0) rc = put(f, md5, h, 8 * w->n, err);
    sort_u64(h, h + w->n, count, w->n);
    found = 1;
    for (uint64_t i = 1; i < w->n && found; i++) found = h[i] != h[i - 1];
  }
  free(h);
  free(count);
  if (rc == 0 && !found)
    rc = ds_err(err, "%s: no salt out of %d gives distinct key hashes", w->path,
                MAX_SALT_TRIES);
  return rc ? -1 : 0;
}

/* The .filter's bits, made on a second thread while .keys and .key_hashes
 * are written (both read the key store, which nothing changes meanwhile). */
typedef struct filter_job {
  const ds_afile *spill;    /* the keys' hashes */
  uint64_t nkeys;
  char *err;                /* a failed read of the spill */
  uint64_t m, nbytes;
  double p;
  uint32_t k;
  uint8_t *bits;
  pthread_t thread;
  int threaded;
} filter_job;

/* simplebloom over every key's h1, h2 (read from the spill) into
 * job->bits. k is log2(m) rounded, at most 64: each key's bits are
 * prefetched, then set after the next key's positions are found (the bit
 * array is random access). */
static void *fill_filter(void *arg) {
  filter_job *j = arg;
  dd_key_hashes r[1024];
  uint64_t pos[2][64], nbits = 8 * j->nbytes;
  int cur = 0, pending = 0;
  for (uint64_t i = 0; i < j->nkeys; i++) {
    if (i % 1024 == 0 &&
        dd_key_hasher_read(j->spill, i, j->nkeys - i < 1024 ? j->nkeys - i : 1024, r, &j->err))
      return NULL;
    uint64_t h1 = r[i % 1024].h1, h2 = r[i % 1024].h2;
    if (j->k > 64) {
      simplebloom_add(j->bits, nbits, j->k, h1, h2);
      continue;
    }
    simplebloom_positions(nbits, j->k, h1, h2, pos[cur]);
    simplebloom_prefetch(j->bits, pos[cur], j->k);
    if (pending) simplebloom_set(j->bits, pos[!cur], j->k);
    pending = 1;
    cur = !cur;
  }
  if (pending) simplebloom_set(j->bits, pos[!cur], j->k);
  return NULL;
}

/* Start the filter's bits (on this thread when no other starts). */
static int start_filter(datadings_writer *w, filter_job *j, char **err) {
  j->spill = w->spill;
  j->nkeys = w->n;
  j->m = w->n > 2 ? w->n : 2;
  j->p = 1.0 / (double)j->m;
  j->nbytes = simplebloom_bytes(j->m, j->p);
  j->k = (uint32_t)simplebloom_hash_count(8 * j->nbytes, j->m);
  j->bits = calloc(j->nbytes ? j->nbytes : 1, 1);
  if (!j->bits) return ds_err(err, "%s: out of memory for the filter", w->path);
  j->threaded = pthread_create(&j->thread, NULL, fill_filter, j) == 0;
  if (!j->threaded) fill_filter(j);
  return 0;
}

/* Wait for the bits; then .filter (when f is not NULL) and free them. */
static int finish_filter(filter_job *j, ds_afile *f, MD5_CTX *md5, char **err) {
  if (!j->bits) return 0;
  if (j->threaded) pthread_join(j->thread, NULL);
  int rc = 0;
  if (j->err) {
    rc = f ? ds_err(err, "%s", j->err) : 0;
    free(j->err);
    j->err = NULL;
    f = NULL;
  }
  if (f) {
    uint8_t hdr[SIMPLEBLOOM_HEADER];
    simplebloom_header(hdr, SIMPLEBLOOM_HEADER + j->nbytes, j->m, j->p);
    MD5Init(md5);
    rc = put(f, md5, hdr, sizeof hdr, err) || put(f, md5, j->bits, j->nbytes, err);
  }
  free(j->bits);
  j->bits = NULL;
  return rc ? -1 : 0;
}

/* .keys: one msgpack array of every key. */
static int write_keys(datadings_writer *w, ds_afile *f, MD5_CTX *md5, char **err) {
  MD5Init(md5);
  ds_buf b = {0};
  int rc = ds_msgpack_pack_array_header(&b, w->n, err);
  ds_key_iter it = {0, 0};
  const uint8_t *p;
  size_t n;
  while (rc == 0 && ds_key_store_next(&w->keys, &it, &p, &n)) {
    rc = ds_msgpack_pack_str(&b, p, n, err);
    if (rc == 0 && b.len >= (1u << 20)) {
      rc = put(f, md5, b.data, b.len, err);
      b.len = 0;
    }
  }
  if (rc == 0 && b.len) rc = put(f, md5, b.data, b.len, err);
  ds_buf_free(&b);
  return rc;
}

int datadings_writer_prepare(datadings_writer *w, char **err) {
  if (!w->in_txn && datadings_writer_begin(w, err)) return -1;
  /* the table is not needed again before the next begin: give its memory
   * to the index files */
  ds_key_store_drop_table(&w->keys);
  /* the data's md5 finishes on its thread while the index files are made */
  if (ds_afile_flush(w->data, err) || dd_key_hasher_finish(w->hasher, err)) return -1;
  ds_md5_follow_feed(w->data_follow, w->data->size);
  ds_afile *keys, *hashes, *filter, *md5f;
  MD5_CTX mk, mh, mf, md, mo = w->offsets_md5;
  filter_job fj = {0};
  if (start_filter(w, &fj, err)) return -1;
  if (ds_stage_file(w->stage, "keys", &keys, err) || write_keys(w, keys, &mk, err) ||
      ds_stage_file(w->stage, "key_hashes", &hashes, err) ||
      write_key_hashes(w, hashes, &mh, err) ||
      ds_stage_file(w->stage, "filter", &filter, err)) {
    finish_filter(&fj, NULL, NULL, NULL);
    return -1;
  }
  /* the spill is not published: emptied, its fsync costs nothing */
  if (finish_filter(&fj, filter, &mf, err) || ds_afile_truncate(w->spill, 0, err) ||
      ds_stage_file(w->stage, "md5", &md5f, err) ||
      ds_md5_follow_finish(w->data_follow, w->data->size, &w->data_md5, w->path, err))
    return -1;
  md = w->data_md5;
  const char *base = ds_basename(w->path);
  ds_buf t = {0};
  int rc = 0;
  char *names[5];
  for (int i = 0; i < 5; i++)
    names[i] = i == 0 ? strdup(base) : ds_strf("%s%s", base, SUFFIXES[i - 1]);
  MD5_CTX *ctx[5] = {&md, &mo, &mk, &mh, &mf};
  for (int i = 0; i < 5 && rc == 0; i++)
    rc = names[i] ? md5_line(&t, ctx[i], names[i]) : -1;
  if (rc) ds_err(err, "out of memory");
  if (rc == 0) rc = ds_afile_write(md5f, t.data, t.len, err);
  ds_buf_free(&t);
  for (int i = 0; i < 5; i++) free(names[i]);
  ds_afile *files[6] = {w->offsets, keys, hashes, filter, md5f, w->data};
  for (int i = 0; i < 6 && rc == 0; i++) {
    char *fin = i == 5 ? strdup(w->path) : ds_strf("%s%s", w->path, SUFFIXES[i]);
    rc = fin ? ds_stage_final(w->stage, files[i]->path, fin, err)
             : ds_err(err, "out of memory");
    free(fin);
  }
  return rc ? -1 : ds_stage_sync(w->stage, err);
}

int datadings_writer_publish(datadings_writer *w, char **err) {
  uint64_t ds = w->data->size, os = w->offsets->size;
  int rc = ds_stage_publish(w->stage, err); /* 1: published, with an error */
  if (rc < 0) return -1;
  stop_hasher(w);
  ds_md5_follow_stop(w->data_follow); /* idle since prepare took its md5 */
  w->data_follow = NULL;
  w->published = 1;
  w->in_txn = 0;
  w->pub_n = w->n;
  w->pub_keys = ds_key_store_mark(&w->keys);
  w->pub_data_md5 = w->data_md5;
  w->pub_offsets_md5 = w->offsets_md5;
  w->pub_data_size = ds;
  w->pub_offsets_size = os;
  w->data = w->offsets = NULL;
  return rc;
}

void datadings_writer_abort(datadings_writer *w) {
  if (!w->in_txn) return;
  ds_md5_follow_stop(w->data_follow); /* before its file is closed */
  w->data_follow = NULL;
  stop_hasher(w);
  ds_stage_discard(w->stage);
  w->in_txn = 0;
  w->data = w->offsets = NULL;
  w->n = w->published ? w->pub_n : 0;
  ds_key_mark zero = {0, 0, 0};
  ds_key_store_rollback(&w->keys, w->published ? w->pub_keys : zero);
  if (!w->published) {
    MD5Init(&w->data_md5);
    MD5Init(&w->offsets_md5);
  }
}

const char *datadings_writer_path(const datadings_writer *w) {
  return w->published ? w->path : NULL;
}

size_t datadings_writer_key_bytes(const datadings_writer *w) {
  return ds_key_store_bytes(&w->keys);
}
