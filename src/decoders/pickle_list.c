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
 * make the general decoder fail, but build one example only.
 *
 * ds_pickle_list_prefix, for a pickle such a walk has accepted before,
 * stops as soon as the example is final. With only the outer list's MARK
 * open, example k sits in stack slot s = k - (examples already appended)
 * + 1. Once slot s + 1 holds a container or a tuple, nothing can change
 * slot s again in a walk that succeeds: every opcode that would put values
 * into the example in slot s (APPEND, SETITEM(S), APPENDS, TUPLE*, a MARK
 * at s + 1 closed by SETITEMS/APPENDS/TUPLE) would have to take the
 * non-scalar in slot s + 1 with them, which declines, and the only way to
 * take it off the stack that succeeds is the outer APPENDS, which
 * finishes the example as it is. An example appended to the outer list
 * (APPEND or APPENDS) is final too.
 *
 * Until then, a prefix walk skims: it follows only the stack height, the
 * MARKs, the count of examples appended to the outer list and, for each
 * stack slot and memo entry, the offset of the opcode that pushed its
 * scalar (skim()), without building values or checking them (the pickle
 * was accepted whole before). At the first opcode that pushes a value
 * with only the outer MARK open and example k's slot the next to fill
 * (not a MARK or memo store: those may still belong to the example
 * below), it hands over to the
 * full walk: the outer list in slot 0 (its count so far), placeholders
 * (None) in the slots between, and memo entries that fetch their scalar
 * by running the opcode at its offset again when BINGET asks for them.
 * The example being built only ever reads its own slot,
 * the slots above it and the memo, so it comes out as the full walk makes
 * it. When the skim cannot hand over (the example was made under a MARK,
 * as tuples are, or APPENDed alone), or the full walk then meets a
 * placeholder it must fill (an example filled by SETITEM), the prefix
 * walk starts again without skimming. */
#include "decoders/pickle_list.h"

#include <stdlib.h>
#include <string.h>

#include "core/utf8.h"
#include "decoders/pickle_slot.h"

#define FL_OBJ 0x50                /* internal slot type: a container */
#define FL_LAZY 0x51               /* memo entry: the scalar of the opcode at u.s.n */
#define FL_NONSCALAR SIZE_MAX      /* skim: a slot that holds no scalar */
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
  const uint8_t *p, *end, *base;
  ds_arena *a;
  uint8_t *chunk;
  size_t chunk_left, chunk_next;
  size_t sp, nmarks, fence, memo_len;
  fl_obj *outer;
  uint64_t bytes; /* values pushed, with str/bytes expanded */
  size_t want;    /* the example to build; SIZE_MAX: all of them */
  ds_value *ex;   /* where example `want` goes */
  int got;
  int early;      /* stop once example `want` is final (a prefix walk) */
} fl;

void ds_pickle_list_free(ds_pickle_list *l) {
  free(l->st);
  free(l->marks);
  free(l->memo);
  free(l->org);
  free(l->org_memo);
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

/* 1 when a value may be placed as it is: not text, or valid UTF-8. */
static inline int text_ok(const ds_value *v) {
  return v->type != DS_V_TEXT || ds_ascii(v->u.s.p, v->u.s.n) || ds_utf8_valid(v->u.s.p, v->u.s.n);
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
static inline __attribute__((always_inline)) int op_string(fl *d, size_t k, int type) {
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
  return ds_pickle_put_int(push(d), type, i);
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
static inline __attribute__((always_inline)) int op_float(fl *d) {
  if (d->end - d->p < 8) return -1;
  d->p += 8;
  return ds_pickle_put_binfloat(push(d), d->p - 8);
}

/* MEMOIZE / BINPUT i with i the next memo index. */
static inline __attribute__((always_inline)) int memo_put(fl *d, uint64_t i) {
  ds_pickle_list *l = d->l;
  if (i != d->memo_len || d->sp <= d->fence ||
      grow((void **)&l->memo, &l->memo_cap, d->memo_len + 1, sizeof(ds_value), FL_MAX_MEMO))
    return -1;
  l->memo[d->memo_len++] = l->st[d->sp - 1];
  return 0;
}

/* BINGET of a memoized scalar. */
static int lazy_get(fl *d, uint64_t i);

static inline __attribute__((always_inline)) int memo_get(fl *d, uint64_t i) {
  if (i < d->memo_len && d->l->memo[i].type == (ds_vtype)FL_LAZY) return lazy_get(d, i);
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
static inline __attribute__((always_inline)) int step(fl *d, uint8_t op) {
  uint64_t x = 0; /* set by arg(); 0 keeps -Wmaybe-uninitialized quiet under -fsanitize */
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

/* A prefix walk: 1 when example `want` is final (see the top of the file),
 * with *d->ex set. A text example at the outer level is checked here as
 * add_items would check it. */
static int example_final(fl *d) {
  if (d->got) return 1;
  if (d->nmarks != 1 || d->fence != 1 || !d->outer || d->want < d->outer->n) return 0;
  size_t s = d->want - d->outer->n + 1;
  if (s + 1 >= d->sp || is_scalar(&d->l->st[s + 1])) return 0;
  const ds_value *v = &d->l->st[s];
  fl_obj *e = obj_of(v);
  if (e) {
    if (e == d->outer) return 0;
    finish(e, d->ex);
    return 1;
  }
  if (!(is_scalar(v) || v->type == DS_V_TUPLE) || !text_ok(v)) return 0;
  *d->ex = *v;
  return 1;
}

/* BINGET of a memo entry the skim left: run the scalar opcode it came
 * from again (a scalar push), then carry on where BINGET was. */
static int lazy_get(fl *d, uint64_t i) {
  size_t at = d->l->memo[i].u.s.n;
  if (at == FL_NONSCALAR || at >= (size_t)(d->end - d->base)) return -1;
  const uint8_t *back = d->p;
  d->p = d->base + at + 1;
  uint8_t op = d->base[at];
  int rc = op == 'h' || op == 'j' ? -1 : step(d, op);
  d->p = back;
  return rc;
}

/* Skip a k-byte little-endian length and that many bytes. */
static inline int skip_counted(fl *d, size_t k) {
  uint64_t n;
  if (arg(d, k, &n) || n > (uint64_t)(d->end - d->p)) return -1;
  d->p += n;
  return 0;
}

/* 1 for an opcode that pushes a value (not a MARK, which may open the
 * items of the slot below, nor a memo store). */
static inline int pushes_slot(uint8_t op) {
  switch (op) {
    case '}': case ']': case ')': case 'K': case 'M': case 'J': case 0x8A: case 'G':
    case 0x88: case 0x89: case 'N': case 0x8C: case 'X': case 0x8D: case 'C': case 'B':
    case 0x8E: case 0x96: case 'h': case 'j':
      return 1;
  }
  return 0;
}

/* The skim of a prefix walk (see the top of the file): 0 with the full
 * walk's state set up at the opcode where example `want`'s slot is the
 * next to fill, 1 to decline. l->org holds each slot's origin. */
static int skim(fl *d) {
  ds_pickle_list *l = d->l;
  size_t sp = 0, on = 0, memo = 0;
  int outer = 0;
  for (;;) {
    if (d->p >= d->end) return 1;
    if (outer && d->nmarks == 1 && d->fence == 1 && d->want >= on) {
      size_t slot = d->want - on + 1;
      if (sp == slot && pushes_slot(*d->p)) break;
      if (sp > slot) return 1;               /* the slot was filled under a MARK */
    }
    size_t at = (size_t)(d->p - d->base), k;
    uint8_t op = *d->p++;
    uint64_t x = 0; /* set by arg(); 0 keeps -Wmaybe-uninitialized quiet under -fsanitize */
    size_t push = FL_NONSCALAR + 0; /* origin of a pushed slot */
    int pushes = 0;
    switch (op) {
      case 0x80: if (arg(d, 1, &x)) return 1; break;
      case 0x95: if (arg(d, 8, &x)) return 1; break;
      case '(':
        if (grow((void **)&l->marks, &l->marks_cap, d->nmarks + 1, sizeof(size_t), FL_MAX_STACK))
          return 1;
        l->marks[d->nmarks++] = d->fence = sp;
        break;
      case ']':
        if (sp == 0) outer = 1;
        pushes = 1;
        break;
      case '}': case ')': pushes = 1; break;
      case 'a':
        if (sp < 2) return 1;
        if (sp == 2 && outer) on++;
        sp--;
        break;
      case 's': if (sp < 3) return 1; sp -= 2; break;
      case 'e': case 'u': case 't':
        if (mark_pop(d, &k) || k > sp) return 1;
        if (op == 'e' && k == 1 && outer) on += sp - k;
        sp = k;
        if (op == 't') pushes = 1;
        break;
      case 0x85: case 0x86: case 0x87:
        k = (size_t)(op - 0x84);
        if (sp < k) return 1;
        sp -= k;
        pushes = 1;
        break;
      case 'K': case 'C': case 0x8C: if (op == 'K' ? arg(d, 1, &x) : skip_counted(d, 1)) return 1;
        push = at; pushes = 1; break;
      case 'M': if (arg(d, 2, &x)) return 1; push = at; pushes = 1; break;
      case 'J': if (arg(d, 4, &x)) return 1; push = at; pushes = 1; break;
      case 'X': case 'B': if (skip_counted(d, 4)) return 1; push = at; pushes = 1; break;
      case 0x8D: case 0x8E: case 0x96: if (skip_counted(d, 8)) return 1;
        push = at; pushes = 1; break;
      case 0x8A: if (skip_counted(d, 1)) return 1; push = at; pushes = 1; break;
      case 'G': if (d->end - d->p < 8) return 1; d->p += 8; push = at; pushes = 1; break;
      case 0x88: case 0x89: case 'N': push = at; pushes = 1; break;
      case 0x94: case 'q': case 'r':
        if (op == 'q' ? arg(d, 1, &x) : op == 'r' ? arg(d, 4, &x) : (x = memo, 0)) return 1;
        if (x != memo || sp <= d->fence ||
            grow((void **)&l->org_memo, &l->org_memo_cap, memo + 1, sizeof(size_t), FL_MAX_MEMO))
          return 1;
        l->org_memo[memo++] = l->org[sp - 1];
        break;
      case 'h': case 'j':
        if (arg(d, op == 'h' ? 1 : 4, &x) || x >= memo) return 1;
        push = l->org_memo[x];
        pushes = 1;
        break;
      default: return 1; /* STOP, or an opcode the fast path never takes */
    }
    if (pushes) {
      if (grow((void **)&l->org, &l->org_cap, sp + 1, sizeof(size_t), FL_MAX_STACK)) return 1;
      l->org[sp++] = push;
    }
  }
  /* hand over to the full walk */
  fl_obj *o = fl_alloc(d, sizeof *o);
  if (!o || grow((void **)&l->st, &l->st_cap, sp, sizeof(ds_value), FL_MAX_STACK) ||
      (memo && grow((void **)&l->memo, &l->memo_cap, memo, sizeof(ds_value), FL_MAX_MEMO)))
    return 1;
  *o = (fl_obj){NULL, on, 0, O_LIST, 0};
  d->outer = o;
  l->st[0].type = (ds_vtype)FL_OBJ;
  l->st[0].u.s.p = (const uint8_t *)(void *)o;
  l->st[0].u.s.n = 0;
  for (size_t i = 1; i < sp; i++) {
    l->st[i].type = DS_V_NULL;
    l->st[i].u.i = 0;
  }
  for (size_t i = 0; i < memo; i++) {
    l->memo[i].type = (ds_vtype)FL_LAZY;
    l->memo[i].u.s.p = NULL;
    l->memo[i].u.s.n = l->org_memo[i];
  }
  d->sp = sp;
  d->memo_len = memo;
  return 0;
}

/* Run until example `want` is final: 0, or 1 to decline. */
static int run_prefix(fl *d) {
  while (d->p < d->end) {
    uint8_t op = *d->p++;
    if (op == '.' || step(d, op)) return 1;
    if (example_final(d)) return 0;
  }
  return 1;
}

int ds_pickle_list_decode(ds_pickle_list *l, const uint8_t *p, size_t n,
                          ds_arena *a, ds_value *out) {
  fl d = {l, p, p + n, p, a, NULL, 0, 2048, 0, 0, 0, 0, NULL, 0, SIZE_MAX, NULL, 0, 0};
  if (run(&d)) return 1;
  out->type = DS_V_LIST;
  out->u.list.items = d.outer->items;
  out->u.list.n = d.outer->n;
  return 0;
}

int ds_pickle_list_example(ds_pickle_list *l, const uint8_t *p, size_t n,
                           ds_arena *a, size_t k, ds_value *ex, size_t *count) {
  fl d = {l, p, p + n, p, a, NULL, 0, 512, 0, 0, 0, 0, NULL, 0, k, ex, 0, 0};
  if (k == SIZE_MAX || run(&d)) return 1;
  *count = d.outer->n;
  if (!d.got) ex->type = DS_V_NULL;
  return 0;
}

int ds_pickle_list_prefix(ds_pickle_list *l, const uint8_t *p, size_t n, ds_arena *a,
                          size_t k, ds_value *ex) {
  if (k == SIZE_MAX) return 1;
  fl d = {l, p, p + n, p, a, NULL, 0, 512, 0, 0, 0, 0, NULL, 0, k, ex, 0, 1};
  if (skim(&d) == 0 && run_prefix(&d) == 0) return 0;
  fl again = {l, p, p + n, p, a, NULL, 0, 512, 0, 0, 0, 0, NULL, 0, k, ex, 0, 1};
  return run_prefix(&again); /* from the start, building as it goes */
}
