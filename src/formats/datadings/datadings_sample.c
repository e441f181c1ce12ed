/* datadings_sample.c - samples of a datadings dataset as values (see
 * datadings_sample.h), on decoders/msgpack_value.h. */
#include "datadings_sample.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "decoders/msgpack_nd_memo.h"
#include "decoders/msgpack_value.h"

#define MAX_WANT 64

struct datadings_doc {
  ds_msgpack_doc doc;
  const datadings_reader *r; /* of the loaded sample */
  const char *path;
  uint64_t g;
  datadings_io io; /* window on the files (reads with pread) */
  const char *want[MAX_WANT]; /* the fields asked for so far */
  size_t want_len[MAX_WANT];
  size_t nwant;
};

datadings_doc *datadings_doc_new(void) {
  datadings_doc *d = calloc(1, sizeof *d);
  if (d) ds_msgpack_doc_init(&d->doc);
  return d;
}

void datadings_doc_free(datadings_doc *d) {
  if (!d) return;
  ds_msgpack_doc_free(&d->doc);
  datadings_io_free(&d->io);
  free(d);
}

void datadings_doc_forget(datadings_doc *d) {
  d->nwant = 0;
  ds_msgpack_want(&d->doc, NULL, NULL, 0);
}

/* Prefix an error about sample g with the file that holds it (the shard
 * file of a glob) and its index; takes why. */
static char *sample_error(const datadings_reader *r, const char *path, uint64_t g,
                          char *why) {
  size_t shard = 0;
  uint64_t start, end;
  char *ignored = NULL;
  const char *file = path;
  datadings_io io; /* its own: the caller's may hold the sample */
  memset(&io, 0, sizeof io);
  if (datadings_sample_range(r, &io, g, &shard, &start, &end, &ignored) == 0)
    file = datadings_shard_path(r, shard);
  datadings_io_free(&io);
  free(ignored);
  char *m = ds_strf("%s: sample %llu: %s", file, (unsigned long long)g,
                    why ? why : "out of memory");
  free(why);
  return m;
}

datadings_io *datadings_doc_io(datadings_doc *d) { return &d->io; }

int datadings_sample_capped(const datadings_reader *r, datadings_io *io, const char *path,
                            uint64_t max, uint64_t g, const uint8_t **p, size_t *n,
                            char **err) {
  if (datadings_sample(r, io, g, p, n, err)) return -1;
  if (*n <= max) return 0;
  size_t shard;
  uint64_t start = 0, end;
  datadings_sample_range(r, io, g, &shard, &start, &end, err);
  ds_err(err, "sample of %zu bytes at offset %llu is more than max_value_bytes=%llu", *n,
         (unsigned long long)start, (unsigned long long)max);
  *err = sample_error(r, path, g, *err);
  return -1;
}

/* Parse sample g into a msgpack doc. */
static int parse(ds_msgpack_doc *doc, const datadings_reader *r, datadings_io *io,
                 const char *path, uint64_t max, uint64_t g, char **err) {
  const uint8_t *p;
  size_t n;
  if (datadings_sample_capped(r, io, path, max, g, &p, &n, err)) return -1;
  doc->max_value_bytes = (size_t)max;
  if (ds_msgpack_scan(doc, p, n, err)) {
    *err = sample_error(r, path, g, *err);
    return -1;
  }
  return 0;
}

int datadings_doc_load(datadings_doc *d, const datadings_reader *r, const char *path,
                       uint64_t max, uint64_t g, char **err) {
  d->r = r;
  d->path = path;
  d->g = g;
  return parse(&d->doc, r, &d->io, path, max, g, err);
}

char *datadings_doc_error(const datadings_doc *d, char *why) {
  return sample_error(d->r, d->path, d->g, why);
}

/* Remember that field name (by pointer) is read by this query. */
static void learn(datadings_doc *d, const char *name, size_t len) {
  if (d->nwant >= MAX_WANT) return;
  for (size_t i = 0; i < d->nwant; i++)
    if (d->want_len[i] == len && d->want[i] == name) return;
  d->want[d->nwant] = name;
  d->want_len[d->nwant++] = len;
  ds_msgpack_want(&d->doc, d->want, d->want_len, d->nwant);
}

int datadings_doc_field(datadings_doc *d, const char *name, size_t len, ds_arena *a,
                        ds_value *v, char **err) {
  const msgpack_object *o;
  int found = ds_msgpack_get_field(&d->doc, name, len, &o, err);
  if (found > 0) {
    learn(d, name, len);
    if (ds_msgpack_to_value(o, a, v, err)) found = -1;
  }
  if (found < 0) *err = sample_error(d->r, d->path, d->g, *err);
  return found;
}

/* Objects of more bytes than this are freed once converted to values. */
#define RELEASE_OBJECTS ((size_t)1 << 20)

int datadings_doc_value(datadings_doc *d, ds_arena *a, ds_value *v, char **err) {
  const msgpack_object *root;
  if (ds_msgpack_get_root(&d->doc, &root, err)) {
    *err = sample_error(d->r, d->path, d->g, *err);
    return -1;
  }
  size_t limit = a->limit, objects = d->doc.zone_need;
  if (limit) a->limit = objects < limit ? limit - objects : 1; /* one budget */
  a->over = 0;
  int rc = ds_msgpack_to_value(root, a, v, err);
  int over = a->over;
  a->limit = limit;
  if (rc && over) {
    free(*err);
    *err = ds_strf("value needs more than max_value_bytes=%zu bytes (with the sample's "
                   "%zu bytes of msgpack objects)", limit, objects);
  }
  if (rc) {
    *err = sample_error(d->r, d->path, d->g, *err);
    return -1;
  }
  /* the values (and JSON) take the objects' place; small ones stay (a
   * clear per row costs a scan a tenth) */
  if (objects > RELEASE_OBJECTS) ds_msgpack_release_objects(&d->doc);
  return 0;
}

/* Ndarray conversions remembered by field position (msgpack_nd_memo.h):
 * samples written by one program hold the same fields in the same order. */
#define MEMO_FIELDS 16

/* Observe the str-keyed fields (but "key") of one parsed map sample. */
static int observe(const msgpack_object_map *m, ds_arena *arena, ds_nd_memo *memo,
                   ds_schema *s, char **err) {
  for (uint32_t i = 0; i < m->size; i++) {
    const msgpack_object *k = &m->ptr[i].key;
    if (k->type != MSGPACK_OBJECT_STR) continue; /* only str names become columns */
    if (k->via.str.size == 3 && memcmp(k->via.str.ptr, "key", 3) == 0) continue;
    const msgpack_object *o = &m->ptr[i].val;
    ds_nd_memo *mm = i < MEMO_FIELDS ? &memo[i] : NULL;
    ds_value v;
    ds_vtype type = DS_V_NULL;
    char *e = NULL;
    /* the type converting o gives: from the memo when it knows, else
     * converted (and remembered) */
    int known = mm && ds_nd_memo_type(mm, o, arena, &type);
    if (!known && ds_msgpack_to_value(o, arena, &v, &e) == 0) {
      type = v.type;
      if (mm) ds_nd_memo_learn(mm, o, &v);
    }
    free(e);
    if (ds_schema_observe(s, k->via.str.ptr, k->via.str.size, type, err)) return -1;
  }
  return 0;
}

int datadings_infer_columns(const datadings_reader *r, const char *path, uint64_t max,
                            uint64_t infer, ds_schema *s, char **err) {
  uint64_t n = datadings_count(r);
  ds_msgpack_doc doc;
  ds_msgpack_doc_init(&doc);
  datadings_io io;
  memset(&io, 0, sizeof io);
  ds_arena arena = {0};
  arena.limit = (size_t)max;
  ds_nd_memo memo[MEMO_FIELDS] = {{0}};
  int rc = 0;
  datadings_read_ahead(r, &io, 0, n < infer ? n : infer); /* one read each */
  for (uint64_t g = 0; g < n && g < infer && rc == 0; g++) {
    char *e = NULL;
    const msgpack_object *root;
    if (parse(&doc, r, &io, path, max, g, &e) || ds_msgpack_get_root(&doc, &root, &e) ||
        root->type != MSGPACK_OBJECT_MAP) {
      free(e);
      continue;
    }
    rc = observe(&root->via.map, &arena, memo, s, err);
    ds_arena_reset(&arena);
  }
  ds_arena_free(&arena);
  ds_msgpack_doc_free(&doc);
  datadings_io_free(&io);
  return rc;
}
