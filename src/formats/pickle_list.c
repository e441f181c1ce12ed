/* pickle_list.c - the fast path of pickle_list.h.
 *
 * A small stack machine over the opcodes pickle.dumps uses for a list of
 * flat examples: PROTO, FRAME, MARK, EMPTY_LIST/DICT/TUPLE, APPEND(S),
 * SETITEM(S), TUPLE/TUPLE1-3, the scalar opcodes (ints up to 8 bytes,
 * floats, None, bools, str, bytes), MEMOIZE/BINPUT appending to the memo,
 * BINGET of a memoized scalar, STOP. The examples' containers are the
 * only objects besides the outer list; an example is finished when it is
 * appended to the outer list. Anything outside that (another opcode, a
 * container inside an example, a memoized container fetched again, text
 * that is not valid UTF-8, a truncated or inconsistent pickle, a value
 * larger than FL_MAX_BYTES) declines, and the caller runs the general
 * decoder, so both paths always agree. The mapping of each scalar is the
 * general decoder's (pickle.h); nothing here can fail in a way that
 * changes a result.
 *
 * Text is checked for UTF-8 where it is placed into the value being built
 * (a str that is only memoized, or only placed into an example not being
 * built, cannot change the value). That is what lets
 * ds_pickle_list_example walk the whole pickle with every check that can
 * make the general decoder fail, but build one example only. */
#include "formats/pickle_list.h"

#include <stdlib.h>
#include <string.h>

#define FL_OBJ 0x50                /* internal slot type: a container */
#define FL_MAX_MEMO ((size_t)1000000)
#define FL_MAX_STACK ((size_t)1000000)
#define FL_MAX_BYTES ((uint64_t)128 << 20) /* expanded size of the values */
#define FL_CHUNK 8192

enum { O_LIST, O_DICT };

/* A container being filled. */
typedef struct fl_obj {
  ds_value *items; /* a dict has key, value pairs */
  size_t n, cap;
  int kind;
  int build;       /* its items are kept (else only counted) */
} fl_obj;

/* The decoder's state for one pickle. */
typedef struct fl {
  ds_pickle_list *l;
  const uint8_t *p, *end;
  ds_arena *a;
  uint8_t *chunk;
  size_t chunk_left, chunk_next;
  size_t sp, nmarks, fence, memo_len;
  fl_obj *outer;
  uint64_t bytes; /* values pushed, with str/bytes expanded */
  size_t want;    /* the example to build; SIZE_MAX: all of them */
  ds_value *ex;   /* where example `want` goes */
  int got;
} fl;

void ds_pickle_list_free(ds_pickle_list *l) {
  free(l->st);
  free(l->marks);
  free(l->memo);
  memset(l, 0, sizeof *l);
}

/* n bytes (8-aligned) carved from arena chunks; NULL when out of memory. */
static void *fl_alloc(fl *d, size_t n) {
  n = (n + 7) & ~(size_t)7;
  if (n > d->chunk_left) {
    size_t size = d->chunk_next > n ? d->chunk_next : n;
    uint8_t *c = ds_arena_alloc(d->a, size);
    if (!c) return NULL;
    d->chunk = c;
    d->chunk_left = size;
    if (d->chunk_next < 65536) d->chunk_next *= 2;
  }
  void *r = d->chunk;
  d->chunk += n;
  d->chunk_left -= n;
  return r;
}

/* Grow a reusable array to `need` entries of `size` bytes (at most max). */
static int grow(void **arr, size_t *cap, size_t need, size_t size, size_t max) {
  if (need <= *cap) return 0;
  if (need > max) return -1;
  size_t nc = *cap ? *cap * 2 : 256;
  while (nc < need) nc *= 2;
  void *q = realloc(*arr, nc * size);
  if (!q) return -1;
  *arr = q;
  *cap = nc;
  return 0;
}

/* A new slot on the stack (NULL: decline). */
static inline ds_value *push(fl *d) {
  ds_pickle_list *l = d->l;
  if ((d->bytes += sizeof(ds_value)) > FL_MAX_BYTES) return NULL;
  if (d->sp == l->st_cap &&
      grow((void **)&l->st, &l->st_cap, d->sp + 1, sizeof(ds_value), FL_MAX_STACK))
    return NULL;
  return &l->st[d->sp++];
}

static inline int is_scalar(const ds_value *v) {
  return v->type <= DS_V_FLOAT || v->type == DS_V_TEXT || v->type == DS_V_BYTES;
}

/* 1 when p[0..n) is ASCII (8 bytes at a time). */
static inline int ascii(const uint8_t *p, size_t n) {
  uint64_t acc = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    acc |= w;
  }
  for (; i < n; i++) acc |= p[i];
  return (acc & 0x8080808080808080ull) == 0;
}

/* 1 when a value may be placed as it is: not text, or valid UTF-8. */
static inline int text_ok(const ds_value *v) {
  return v->type != DS_V_TEXT || ascii(v->u.s.p, v->u.s.n) || ds_utf8_valid(v->u.s.p, v->u.s.n);
}

/* Whether the example at stack slot `pos` (above the outer list in slot 0)
 * is built. */
static inline int builds(const fl *d, size_t pos) {
  return d->want == SIZE_MAX || (d->outer && pos && d->outer->n + pos - 1 == d->want);
}

static inline fl_obj *obj_of(const ds_value *v) {
  return v->type == (ds_vtype)FL_OBJ ? (fl_obj *)(void *)(uintptr_t)v->u.s.p : NULL;
}

/* Push a new empty container. */
static int new_obj(fl *d, int kind) {
  fl_obj *o = fl_alloc(d, sizeof *o);
  ds_value *t = o ? push(d) : NULL;
  if (!t) return -1;
  o->items = NULL;
  o->n = o->cap = 0;
  o->kind = kind;
  o->build = builds(d, d->sp - 1);
  if (!d->outer && d->sp == 1) {
    if (kind != O_LIST) return -1; /* the pickle is not a list */
    d->outer = o;
  }
  t->type = (ds_vtype)FL_OBJ;
  t->u.s.p = (const uint8_t *)(void *)o;
  t->u.s.n = 0;
  return 0;
}

/* The finished value of an example container. */
static void finish(const fl_obj *o, ds_value *v) {
  v->type = o->kind == O_DICT ? DS_V_MAP : DS_V_LIST;
  v->u.list.items = o->items;
  v->u.list.n = o->kind == O_DICT ? o->n / 2 : o->n;
}

/* Move the k values at st[from..] into the container at st[from - 1]. */
static int add_items(fl *d, size_t from, size_t k, int kind) {
  if (from <= d->fence) return -1;
  fl_obj *o = obj_of(&d->l->st[from - 1]);
  if (!o || o->kind != kind || (kind == O_DICT && k % 2)) return -1;
  if (!k) {
    d->sp = from;
    return 0;
  }
  int keep = o == d->outer ? d->want == SIZE_MAX : o->build;
  if (keep && k > o->cap - o->n) {
    size_t nc = o->n + k;
    ds_value *q = fl_alloc(d, nc * sizeof(ds_value));
    if (!q) return -1;
    if (o->n) memcpy(q, o->items, o->n * sizeof(ds_value));
    o->items = q;
    o->cap = nc;
  }
  ds_value *src = d->l->st + from, *dst = keep ? o->items + o->n : NULL;
  if (o == d->outer) { /* examples: scalars, tuples or finished containers */
    for (size_t i = 0; i < k; i++) {
      ds_value v;
      fl_obj *e = obj_of(&src[i]);
      if (e) {
        if (e == d->outer) return -1;
        finish(e, &v);
      } else if (is_scalar(&src[i]) || src[i].type == DS_V_TUPLE) {
        v = src[i];
      } else {
        return -1;
      }
      if (keep) {
        if (!text_ok(&v)) return -1;
        dst[i] = v;
      } else if (o->n + i == d->want) {
        if (!text_ok(&v)) return -1;
        *d->ex = v;
        d->got = 1;
      }
    }
  } else {
    for (size_t i = 0; i < k; i++) {
      if (!is_scalar(&src[i])) return -1;
      if (keep) {
        if (!text_ok(&src[i])) return -1;
        dst[i] = src[i];
      }
    }
  }
  o->n += k;
  d->sp = from;
  return 0;
}

/* Pop the last MARK into *k. */
static inline int mark_pop(fl *d, size_t *k) {
  if (!d->nmarks) return -1;
  *k = d->l->marks[--d->nmarks];
  d->fence = d->nmarks ? d->l->marks[d->nmarks - 1] : 0;
  return 0;
}

/* The k stack values from st[from] become a tuple value there. */
static int make_tuple(fl *d, size_t from, size_t k) {
  ds_value *items = NULL;
  ds_value *src = d->l->st + from;
  int keep = builds(d, from);
  for (size_t i = 0; i < k; i++)
    if (!is_scalar(&src[i]) || (keep && !text_ok(&src[i]))) return -1;
  if (k && keep) {
    items = fl_alloc(d, k * sizeof(ds_value));
    if (!items) return -1;
    memcpy(items, src, k * sizeof(ds_value));
  }
  d->sp = from + 1;
  src->type = DS_V_TUPLE;
  src->u.list.items = items;
  src->u.list.n = k;
  return 0;
}

/* Little-endian unsigned argument of k bytes. */
static inline int arg(fl *d, size_t k, uint64_t *v) {
  if ((size_t)(d->end - d->p) < k) return -1;
  uint64_t x = 0;
  for (size_t i = 0; i < k; i++) x |= (uint64_t)d->p[i] << (8 * i);
  d->p += k;
  *v = x;
  return 0;
}

/* str or bytes with a k-byte length. */
static int op_string(fl *d, size_t k, int type) {
  uint64_t n;
  if (arg(d, k, &n) || n > (uint64_t)(d->end - d->p)) return -1;
  const uint8_t *s = d->p;
  d->p += n;
  if ((d->bytes += n) > FL_MAX_BYTES) return -1;
  ds_value *t = push(d);
  if (!t) return -1;
  t->type = (ds_vtype)type;
  t->u.s.p = s;
  t->u.s.n = (size_t)n;
  return 0;
}

/* Push an integer or bool. */
static inline int push_int(fl *d, int type, int64_t i) {
  ds_value *t = push(d);
  if (!t) return -1;
  t->type = (ds_vtype)type;
  t->u.i = i;
  return 0;
}

/* LONG1 of at most 8 bytes (two's complement, little-endian). */
static int op_long1(fl *d) {
  uint64_t n, u = 0;
  if (arg(d, 1, &n) || n > 8 || n > (uint64_t)(d->end - d->p)) return -1;
  for (uint64_t i = 0; i < n; i++) u |= (uint64_t)d->p[i] << (8 * i);
  if (n && n < 8 && (d->p[n - 1] & 0x80)) u |= ~(uint64_t)0 << (8 * n);
  d->p += n;
  int64_t v;
  memcpy(&v, &u, sizeof v);
  return push_int(d, DS_V_INT, v);
}

/* BINFLOAT: a big-endian double. */
static int op_float(fl *d) {
  if (d->end - d->p < 8) return -1;
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u = u << 8 | d->p[i];
  d->p += 8;
  ds_value *t = push(d);
  if (!t) return -1;
  t->type = DS_V_FLOAT;
  memcpy(&t->u.f, &u, 8);
  return 0;
}

/* MEMOIZE / BINPUT i with i the next memo index. */
static int memo_put(fl *d, uint64_t i) {
  ds_pickle_list *l = d->l;
  if (i != d->memo_len || d->sp <= d->fence ||
      grow((void **)&l->memo, &l->memo_cap, d->memo_len + 1, sizeof(ds_value), FL_MAX_MEMO))
    return -1;
  l->memo[d->memo_len++] = l->st[d->sp - 1];
  return 0;
}

/* BINGET of a memoized scalar. */
static int memo_get(fl *d, uint64_t i) {
  if (i >= d->memo_len || !is_scalar(&d->l->memo[i])) return -1;
  const ds_value *m = &d->l->memo[i];
  if ((m->type == DS_V_TEXT || m->type == DS_V_BYTES) && (d->bytes += m->u.s.n) > FL_MAX_BYTES)
    return -1;
  ds_value *t = push(d);
  if (!t) return -1;
  *t = d->l->memo[i];
  return 0;
}

/* One opcode other than STOP; -1 declines. */
static int step(fl *d, uint8_t op) {
  uint64_t x;
  size_t k;
  switch (op) {
    case 0x80: return arg(d, 1, &x) || x > 5 ? -1 : 0; /* PROTO */
    case 0x95: /* FRAME */
      return arg(d, 8, &x) || x > (uint64_t)(d->end - d->p) ? -1 : 0;
    case '(':
      if (grow((void **)&d->l->marks, &d->l->marks_cap, d->nmarks + 1, sizeof(size_t),
               FL_MAX_STACK))
        return -1;
      d->l->marks[d->nmarks++] = d->fence = d->sp;
      return 0;
    case ']': return new_obj(d, O_LIST);
    case '}': return new_obj(d, O_DICT);
    case ')': return push(d) ? make_tuple(d, d->sp - 1, 0) : -1;
    case 'a': return d->sp - d->fence < 2 ? -1 : add_items(d, d->sp - 1, 1, O_LIST);
    case 's': return d->sp - d->fence < 3 ? -1 : add_items(d, d->sp - 2, 2, O_DICT);
    case 'e': return mark_pop(d, &k) ? -1 : add_items(d, k, d->sp - k, O_LIST);
    case 'u': return mark_pop(d, &k) ? -1 : add_items(d, k, d->sp - k, O_DICT);
    case 't':
      if (mark_pop(d, &k)) return -1;
      if (k == d->sp) return push(d) ? make_tuple(d, k, 0) : -1;
      return make_tuple(d, k, d->sp - k);
    case 0x85: case 0x86: case 0x87:
      k = (size_t)(op - 0x84);
      return d->sp - d->fence < k ? -1 : make_tuple(d, d->sp - k, k);
    case 'K': return arg(d, 1, &x) ? -1 : push_int(d, DS_V_INT, (int64_t)x);
    case 'M': return arg(d, 2, &x) ? -1 : push_int(d, DS_V_INT, (int64_t)x);
    case 'J': return arg(d, 4, &x) ? -1 : push_int(d, DS_V_INT, (int32_t)(uint32_t)x);
    case 0x8A: return op_long1(d);
    case 'G': return op_float(d);
    case 0x88: return push_int(d, DS_V_BOOL, 1);
    case 0x89: return push_int(d, DS_V_BOOL, 0);
    case 'N': return push_int(d, DS_V_NULL, 0);
    case 0x8C: return op_string(d, 1, DS_V_TEXT);
    case 'X': return op_string(d, 4, DS_V_TEXT);
    case 0x8D: return op_string(d, 8, DS_V_TEXT);
    case 'C': return op_string(d, 1, DS_V_BYTES);
    case 'B': return op_string(d, 4, DS_V_BYTES);
    case 0x8E: case 0x96: return op_string(d, 8, DS_V_BYTES);
    case 0x94: return memo_put(d, d->memo_len);
    case 'q': return arg(d, 1, &x) ? -1 : memo_put(d, x);
    case 'r': return arg(d, 4, &x) ? -1 : memo_put(d, x);
    case 'h': return arg(d, 1, &x) ? -1 : memo_get(d, x);
    case 'j': return arg(d, 4, &x) ? -1 : memo_get(d, x);
  }
  return -1;
}

/* Run to STOP: 0 with the outer list complete, 1 to decline. */
static int run(fl *d) {
  while (d->p < d->end) {
    uint8_t op = *d->p++;
    if (op == '.')
      return d->sp != 1 || d->nmarks || !d->outer || obj_of(&d->l->st[0]) != d->outer;
    if (step(d, op)) return 1;
  }
  return 1; /* no STOP */
}

int ds_pickle_list_decode(ds_pickle_list *l, const uint8_t *p, size_t n,
                          ds_arena *a, ds_value *out) {
  fl d = {l, p, p + n, a, NULL, 0, 2048, 0, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0};
  if (run(&d)) return 1;
  out->type = DS_V_LIST;
  out->u.list.items = d.outer->items;
  out->u.list.n = d.outer->n;
  return 0;
}

int ds_pickle_list_example(ds_pickle_list *l, const uint8_t *p, size_t n,
                           ds_arena *a, size_t k, ds_value *ex, size_t *count) {
  fl d = {l, p, p + n, a, NULL, 0, 512, 0, 0, 0, 0, NULL, 0, k, ex, 0};
  if (k == SIZE_MAX || run(&d)) return 1;
  *count = d.outer->n;
  if (!d.got) ex->type = DS_V_NULL;
  return 0;
}
