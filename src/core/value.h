/* value.h - the one value model shared by every format.
 *
 * Decoders (msgpack, pickle, bcolz cells) build a tree of ds_value in a
 * ds_arena; the glue turns it into an SQLite result (ds_value_result) or
 * JSON text (ds_value_json, value_json.h), following the Values table of
 * docs/INTERFACE.md:
 *   NULL/BOOL/INT -> NULL/INTEGER;  UINT above INT64_MAX and BIGINT ->
 *   TEXT exact decimal;  FLOAT -> REAL (NaN -> NULL);  TEXT -> TEXT;
 *   BYTES -> BLOB;  LIST/TUPLE/SET/MAP -> JSON TEXT with subtype 'J';
 *   NDARRAY -> BLOB holding a whole .npy file;  COMPLEX -> JSON [re, im].
 * Inside JSON: bytes are base64 strings, ndarrays nested lists, non-finite
 * floats null, tuples/sets arrays, non-string map keys their JSON text. */
#ifndef DS_VALUE_H
#define DS_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"
#include "json.h" /* the JSON atoms, which many users of values write */
#include "utf8.h"

typedef enum ds_vtype {
  DS_V_NULL = 0,
  DS_V_BOOL,    /* u.i is 0 or 1 */
  DS_V_INT,     /* u.i */
  DS_V_UINT,    /* u.u (values above INT64_MAX become decimal TEXT) */
  DS_V_BIGINT,  /* u.s: exact decimal digits, optional leading '-' */
  DS_V_FLOAT,   /* u.f */
  DS_V_TEXT,    /* u.s: UTF-8, may hold U+0000 */
  DS_V_BYTES,   /* u.s */
  DS_V_LIST,    /* u.list */
  DS_V_TUPLE,   /* u.list */
  DS_V_SET,     /* u.list */
  DS_V_MAP,     /* u.list with 2*n items: key0, value0, key1, value1, ... */
  DS_V_NDARRAY, /* u.s: a complete .npy file (header + data) */
  DS_V_COMPLEX, /* u.c */
  DS_V_UNSUPPORTED /* u.s: "module.name" of an object a decoder will not
                      build (pickle globals off the allow-list); JSON
                      {"$unsupported": "module.name"} */
} ds_vtype;

typedef struct ds_value ds_value;
struct ds_value {
  ds_vtype type;
  union {
    int64_t i;
    uint64_t u;
    double f;
    struct { const uint8_t *p; size_t n; } s;
    struct { ds_value *items; size_t n; } list; /* MAP: n pairs, 2n items */
    struct { double re, im; } c;
  } u;
};

/* A bump allocator for value trees: everything is freed at once. */
typedef struct ds_arena_block ds_arena_block;
typedef struct ds_arena {
  ds_arena_block *head;
  size_t total;  /* bytes handed out since the last reset */
  size_t limit;  /* 0 = unlimited; else allocations past it fail (the
                    module's max_value_bytes) and set `over` */
  int over;
} ds_arena;

void *ds_arena_alloc(ds_arena *a, size_t n);  /* 16-byte aligned; NULL on failure */
/* The error after ds_arena_alloc failed: past the limit ("value needs more
 * than max_value_bytes=N bytes") or out of memory. Returns -1. */
int ds_arena_fail(const ds_arena *a, char **err);
/* ds_arena_alloc, setting *err by ds_arena_fail when it fails. */
void *ds_arena_get(ds_arena *a, size_t n, char **err);
void ds_arena_reset(ds_arena *a);             /* keep one block, forget the rest */
void ds_arena_free(ds_arena *a);

/* Containers nested deeper than this make ds_value_json fail (no stack
 * overflow on hostile input). */
#define DS_VALUE_MAX_DEPTH 1000
/* 0 while depth is at most DS_VALUE_MAX_DEPTH, else -1 with "value nested
 * deeper than N levels" (the encoders check it on entering each value). */
int ds_value_check_depth(int depth, char **err);

/* The first DS_V_UNSUPPORTED value inside v (depth-first), or NULL. */
const ds_value *ds_value_find_unsupported(const ds_value *v);

/* Parse JSON text into a value tree allocated in `a` (value_from_json.c):
 * objects -> MAP (TEXT keys, in order; a repeated key is an error), arrays
 * -> LIST, integers -> INT (UINT / BIGINT decimal outside int64), other
 * numbers -> FLOAT, strings -> TEXT. */
int ds_value_from_json(const char *text, size_t n, ds_arena *a, ds_value *out,
                       char **err);

/* Parse a BIGINT's decimal text ("-?[0-9]+"). Returns 1 and sets *out when it
 * fits in int64, 0 when it is valid but does not fit, -1 when malformed. */
int ds_bigint_to_i64(const uint8_t *p, size_t n, int64_t *out);

#endif
