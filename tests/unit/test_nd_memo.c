/* test_nd_memo.c - unit tests of decoders/msgpack_nd_memo.c: whenever the
 * memo answers for a msgpack-numpy map, its answer is the type converting
 * the map (ds_msgpack_to_value) gives on an arena in the same state, and
 * it takes the same bytes from the arena; it answers for the same ndarray
 * with other data bytes, and not for other shapes, dtypes or data sizes
 * (malformed ones included), object arrays (kind "O", a pickle), dtype
 * lists or maps that are not ndarrays. Maps are built with msgpack-c's
 * packer. */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "decoders/msgpack_nd_memo.h"
#include "decoders/msgpack_value.h"

/* An unpacked map and the bytes its str/bin objects point into. */
typedef struct packed {
  msgpack_sbuffer sb;
  msgpack_unpacked u;
} packed;

static void packed_free(packed *p) {
  msgpack_unpacked_destroy(&p->u);
  msgpack_sbuffer_destroy(&p->sb);
}

/* A map {nd: true, type, kind, shape: [dims], data: n bytes of `fill`},
 * unpacked into *pu (type NULL: a dtype list [["a", "<f4"]]; kind NULL:
 * no kind entry). */
static const msgpack_object *nd_map(packed *pu, const char *type, const char *kind,
                                    const uint64_t *dims, int ndim, size_t n, int fill) {
  msgpack_sbuffer *sbp = &pu->sb;
  msgpack_unpacked *u = &pu->u;
  msgpack_sbuffer_init(sbp);
  msgpack_packer pk;
  msgpack_packer_init(&pk, sbp, msgpack_sbuffer_write);
  msgpack_pack_map(&pk, kind ? 5 : 4);
  msgpack_pack_bin_with_body(&pk, "nd", 2);
  msgpack_pack_true(&pk);
  msgpack_pack_bin_with_body(&pk, "type", 4);
  if (type) {
    msgpack_pack_str_with_body(&pk, type, strlen(type));
  } else {
    msgpack_pack_array(&pk, 1);
    msgpack_pack_array(&pk, 2);
    msgpack_pack_str_with_body(&pk, "a", 1);
    msgpack_pack_str_with_body(&pk, "<f4", 3);
  }
  if (kind) {
    msgpack_pack_bin_with_body(&pk, "kind", 4);
    msgpack_pack_bin_with_body(&pk, kind, strlen(kind));
  }
  msgpack_pack_bin_with_body(&pk, "shape", 5);
  msgpack_pack_array(&pk, (size_t)ndim);
  for (int i = 0; i < ndim; i++) msgpack_pack_uint64(&pk, dims[i]);
  msgpack_pack_bin_with_body(&pk, "data", 4);
  uint8_t *data = malloc(n ? n : 1);
  memset(data, fill, n);
  msgpack_pack_bin_with_body(&pk, data, n);
  free(data);
  msgpack_unpacked_init(u);
  msgpack_unpack_next(u, sbp->data, sbp->size, NULL);
  return &u->data;
}

/* The type converting o gives on an arena with `used` bytes taken of
 * `limit` (DS_V_NULL when it fails), and the bytes it took. */
static ds_vtype converted(const msgpack_object *o, size_t limit, size_t used, size_t *took,
                          ds_value *v) {
  ds_arena a = {0};
  a.limit = limit;
  char *e = NULL;
  if (used) ds_arena_get(&a, used, &e);
  size_t before = a.total;
  ds_vtype t = ds_msgpack_to_value(o, &a, v, &e) == 0 ? v->type : DS_V_NULL;
  *took = a.total - before;
  free(e);
  ds_arena_free(&a);
  return t;
}

/* Whether the memo answers for o on the same arena state; when it does,
 * CHECK that it agrees with the conversion. */
static int memo_agrees(const ds_nd_memo *m, const msgpack_object *o, size_t limit,
                       size_t used, const char *what) {
  ds_arena a = {0};
  a.limit = limit;
  char *e = NULL;
  if (used) ds_arena_get(&a, used, &e);
  free(e);
  size_t before = a.total, took;
  ds_vtype t, want;
  ds_value v;
  int answered = ds_nd_memo_type(m, o, &a, &t);
  if (answered) {
    want = converted(o, limit, used, &took, &v);
    CHECK_MSG(t == want && (t == DS_V_NULL || a.total - before == took),
              "%s: memo says type %d taking %zu bytes, conversion %d taking %zu", what,
              (int)t, a.total - before, (int)want, took);
  }
  ds_arena_free(&a);
  return answered;
}

int main(void) {
  const uint64_t d16[] = {16}, d4x4[] = {4, 4}, d15[] = {15};
  packed u1, u2;
  ds_nd_memo m = {0};
  ds_value v;
  size_t took;

  /* learn from a float32[16] */
  const msgpack_object *a = nd_map(&u1, "<f4", "f", d16, 1, 64, 1);
  CHECK(converted(a, 0, 0, &took, &v) == DS_V_NDARRAY && took == v.u.s.n);
  CHECK(!memo_agrees(&m, a, 0, 0, "empty memo"));
  ds_arena ar = {0};
  char *e = NULL;
  CHECK(ds_msgpack_to_value(a, &ar, &v, &e) == 0);
  ds_nd_memo_learn(&m, a, &v);
  ds_arena_free(&ar);
  CHECK(m.set && m.bytes == v.u.s.n);

  /* the same array, other data bytes: answered, and right */
  const msgpack_object *b = nd_map(&u2, "<f4", "f", d16, 1, 64, 7);
  CHECK(memo_agrees(&m, b, 0, 0, "same array"));
  /* an arena that has room for it, and one that has not */
  CHECK(memo_agrees(&m, b, took + 100, 50, "room"));
  CHECK(memo_agrees(&m, b, took + 100, 150, "no room"));
  ds_arena full = {0};
  full.limit = took + 100;
  ds_vtype t;
  ds_arena_get(&full, 150, &e);
  free(e);
  e = NULL;
  CHECK(ds_nd_memo_type(&m, b, &full, &t) == 1 && t == DS_V_NULL && full.over);
  ds_arena_free(&full);
  packed_free(&u2);

  /* not answered: other data size (malformed), shape, dtype, kind, no
   * kind, object array, dtype list; each still converts as before */
  struct {
    const char *type, *kind;
    const uint64_t *dims;
    int ndim;
    size_t n;
    const char *what;
  } other[] = {
      {"<f4", "f", d16, 1, 60, "data 4 bytes short"},
      {"<f4", "f", d15, 1, 60, "shape 15"},
      {"<f4", "f", d4x4, 2, 64, "shape 4x4"},
      {"<i4", "i", d16, 1, 64, "dtype <i4"},
      {"<f4", "g", d16, 1, 64, "kind g"},
      {"<f4", NULL, d16, 1, 64, "no kind"},
      {"<f4", "O", d16, 1, 64, "kind O"},
      {NULL, "V", d16, 1, 64, "dtype list"},
  };
  for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
    const msgpack_object *o =
        nd_map(&u2, other[i].type, other[i].kind, other[i].dims, other[i].ndim, other[i].n, 3);
    CHECK_MSG(!memo_agrees(&m, o, 0, 0, other[i].what), "%s answered", other[i].what);
    packed_free(&u2);
  }
  CHECK(converted(nd_map(&u2, "<f4", "f", d16, 1, 60, 3), 0, 0, &took, &v) == DS_V_NULL);
  packed_free(&u2);

  /* a failed conversion teaches nothing; a map that is not an ndarray
   * neither */
  ds_nd_memo m2 = {0};
  const msgpack_object *bad = nd_map(&u2, "<f4", "f", d16, 1, 60, 3);
  v.type = DS_V_NULL;
  ds_nd_memo_learn(&m2, bad, &v);
  CHECK(!m2.set);
  packed_free(&u2);
  ds_nd_memo_learn(&m, a, &(ds_value){.type = DS_V_MAP});
  CHECK(m.set && memo_agrees(&m, a, 0, 0, "kept after a map"));
  packed_free(&u1);
  return check_exit();
}
