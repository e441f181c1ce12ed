/* msgpack_nd_memo.c - ndarray conversions remembered for schema inference
 * (see msgpack_nd_memo.h). */
#include "decoders/msgpack_nd_memo.h"

#include <stdlib.h>
#include <string.h>

#include "decoders/msgpack_numpy.h"

/* A str/bin entry into (*kind, bytes): 0 when it cannot be held. */
static int hold_text(const msgpack_object *e, int *kind, uint8_t *bytes, size_t *n) {
  if (e->type != MSGPACK_OBJECT_STR && e->type != MSGPACK_OBJECT_BIN) return 0;
  const uint8_t *p = ds_msgpack_bytes(e, n);
  if (*n > DS_ND_MEMO_TEXT) return 0;
  memcpy(bytes, p, *n);
  *kind = (int)e->type;
  return 1;
}

/* The key of map o: 1, or 0 when o is not an ndarray map the memo can
 * hold (or one whose conversion depends on its data bytes: kind bin "O"). */
static int key_of(const msgpack_object *o, ds_nd_key *k) {
  if (o->type != MSGPACK_OBJECT_MAP) return 0;
  const msgpack_object *nd = ds_msgpack_bin_entry(o, "nd");
  if (!nd || nd->type != MSGPACK_OBJECT_BOOLEAN || !nd->via.boolean) return 0;
  const msgpack_object *kind = ds_msgpack_bin_entry(o, "kind");
  const msgpack_object *type = ds_msgpack_bin_entry(o, "type");
  const msgpack_object *shape = ds_msgpack_bin_entry(o, "shape");
  const msgpack_object *data = ds_msgpack_bin_entry(o, "data");
  if (!type || !shape || !data || data->type != MSGPACK_OBJECT_BIN) return 0;
  memset(k, 0, sizeof *k);
  if (kind) {
    if (kind->type == MSGPACK_OBJECT_BIN && kind->via.bin.size == 1 &&
        kind->via.bin.ptr[0] == 'O')
      return 0; /* an object array: a pickle, decoded */
    if (!hold_text(kind, &k->kind_kind, k->kind, &k->kind_n)) return 0;
  }
  if (!hold_text(type, &k->type_kind, k->type, &k->type_n)) return 0;
  const msgpack_object *d = shape;
  k->ndim = 1;
  if (shape->type == MSGPACK_OBJECT_ARRAY) {
    k->shape_list = 1;
    k->ndim = shape->via.array.size;
    d = shape->via.array.ptr;
  }
  if (k->ndim > DS_ND_MEMO_DIMS) return 0;
  for (uint32_t i = 0; i < k->ndim; i++) {
    if (d[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER) return 0;
    k->dims[i] = d[i].via.u64;
  }
  k->data_n = data->via.bin.size;
  return 1;
}

/* 1 when two keys are the same (every field compared by value). */
static int same_key(const ds_nd_key *a, const ds_nd_key *b) {
  return a->type_kind == b->type_kind && a->kind_kind == b->kind_kind &&
         a->type_n == b->type_n && a->kind_n == b->kind_n &&
         memcmp(a->type, b->type, a->type_n) == 0 &&
         memcmp(a->kind, b->kind, a->kind_n) == 0 && a->shape_list == b->shape_list &&
         a->ndim == b->ndim &&
         memcmp(a->dims, b->dims, a->ndim * sizeof *a->dims) == 0 &&
         a->data_n == b->data_n;
}

int ds_nd_memo_type(const ds_nd_memo *m, const msgpack_object *o, ds_arena *a,
                    ds_vtype *t) {
  ds_nd_key k;
  if (!m->set || !key_of(o, &k) || !same_key(&k, &m->key)) return 0;
  char *e = NULL;
  *t = ds_arena_get(a, m->bytes, &e) ? DS_V_NDARRAY : DS_V_NULL;
  free(e);
  return 1;
}

void ds_nd_memo_learn(ds_nd_memo *m, const msgpack_object *o, const ds_value *v) {
  ds_nd_key k;
  if (v->type != DS_V_NDARRAY || !key_of(o, &k)) return;
  m->key = k;
  m->bytes = v->u.s.n;
  m->set = 1;
}
