/* pickle.c - the safe pickle decoder of pickle.h (protocols 2 to 5; format
 * notes: docs/formats/atlas.md section 7).
 *
 * The pickle is interpreted by a stack machine like CPython's _pickle.c
 * (value stack, MARK stack with its "fence", memo), but nothing is ever
 * called: a global is a token, and REDUCE/BUILD/NEWOBJ on a token either
 * builds data for an allow-listed global (atlas.md 7.6) or makes an opaque
 * object that becomes DS_V_UNSUPPORTED("module.name").
 *
 * Values during decoding are ds_value slots. Immutable scalars (None, bool,
 * int, float, str, bytes, complex, finished ndarrays) are stored inline;
 * str and bytes point into the input. Everything with identity (list,
 * tuple, dict, set, globals, unknown objects, numpy dtypes and arrays that
 * BUILD completes later) is a pk_obj in the arena, referenced by a slot of
 * internal type PK_REF, so the memo shares the object, not a snapshot.
 * After STOP one iterative pass ("resolve") turns references into plain
 * ds_values in place: every object is converted once (shared objects
 * become shared nodes), a reference back to an object still being
 * converted is the error "recursive structure", nesting is bounded by
 * max_depth, and the size of the value with every shared reference
 * written out is bounded by max_bytes (so a DAG such as t = (t, t)
 * repeated 100 times cannot make a JSON writer run forever).
 *
 * No per-opcode malloc: objects and item arrays are carved from chunks of
 * the caller's arena (counted against max_bytes); the value, mark and memo
 * stacks start in the decoder struct on the C stack and move to the heap
 * only when a pickle outgrows them. On the atlas mid/ blocks (64 dicts
 * each) this decodes about 3x faster than CPython's pickle.loads.
 *
 * numpy: arrays are materialised at BUILD (_reconstruct) or REDUCE
 * (_frombuffer) time as .npy blobs in C order (F and K layouts gathered,
 * big-endian simple dtypes swapped), and each blob is checked with
 * ds_npy_parse so that the rest of the project can read it; an ndarray
 * subclass given to _reconstruct becomes an opaque object named by it.
 *
 * Decisions beyond CPython: STOP must leave exactly one value and no open
 * MARK; FRAME lengths must fit in the input; bytes after STOP are ignored
 * (as CPython does); dict keys are not de-duplicated and need not be
 * hashable (a pickler never writes duplicates); invalid UTF-8 (Python's
 * surrogatepass output for lone surrogates) becomes U+FFFD, one per
 * maximal invalid subpart like errors='replace'; a BUILD state on a dict
 * (OrderedDict attributes) is dropped; NEWOBJ/NEWOBJ_EX always make an
 * opaque object; __builtin__.bytes is accepted too (protocol 2 writes the
 * empty bytes object that way). */
#include "decoders/pickle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "core/numbers.h"
#include "core/utf8.h"
#include "decoders/pickle_slot.h"

#define PK_DEF_MAX_BYTES ((size_t)1 << 30)
#define PK_DEF_MAX_DEPTH DS_PICKLE_MAX_DEPTH
#define PK_DEF_MAX_MEMO ((size_t)1000000)
#define PK_DEF_MAX_STACK ((size_t)10000000)
#define PK_DEF_MAX_LONG ((size_t)8192)
#define PK_HIGHEST_PROTOCOL 5
#define PK_LOCAL_STACK 128   /* value-stack slots before going to the heap */
#define PK_LOCAL_MEMO 256    /* memo slots before going to the heap */
#define PK_LOCAL_MARKS 32    /* MARK entries before going to the heap */
#define PK_LOCAL_FRAMES 64   /* resolve frames before going to the heap */
#define PK_CHUNK_MIN 1024    /* first arena chunk the decoder carves from */
#define PK_CHUNK_MAX 65536   /* largest chunk (bigger requests: their own) */
#define PK_MAX_FIELDS 1024   /* fields of one structured dtype */
#define PK_MAX_DTYPE_NEST 32 /* structured dtypes inside structured dtypes */
#define PK_MAX_DESCR 65536   /* bytes of a dtype description text */

/* Internal slot types, beyond the public ds_vtype values. */
enum { PK_REF = 0x40, PK_EMPTY = 0x41 };

/* What a pk_obj is. */
enum pk_kind {
  K_LIST, K_TUPLE, K_SET, K_FROZENSET, K_DICT, /* containers */
  K_GLOBAL,   /* a global token (class or function) */
  K_OBJECT,   /* an opaque object made from a global off the allow-list */
  K_DTYPE,    /* numpy.dtype */
  K_ARRAY,    /* numpy array made by _reconstruct, waiting for BUILD */
  K_NDARRAY,  /* numpy array after BUILD: out holds the .npy value */
  K_OBJARRAY  /* object-dtype array after BUILD: items[0] is the list */
};

/* Resolve states of a pk_obj. */
enum { S_OPEN, S_BUSY, S_DONE };

/* Allow-listed globals (atlas.md 7.6). */
enum pk_global {
  G_OTHER, G_RECONSTRUCT, G_NDARRAY, G_DTYPE, G_SCALAR, G_FROMBUFFER,
  G_BYTEARRAY, G_BYTES, G_COMPLEX, G_SET, G_FROZENSET, G_ORDEREDDICT,
  G_DATETIME, G_DATE, G_TIME, G_TIMEDELTA, G_ENCODE
};

typedef struct pk_dtype pk_dtype;

/* One field of a structured dtype. */
typedef struct pk_field {
  const uint8_t *name;
  size_t name_len;
  const pk_dtype *type;
  uint64_t offset;
} pk_field;

/* A numpy dtype as far as the .npy output needs it. */
struct pk_dtype {
  char kind;          /* b i u f c S U V O M m */
  char order;         /* '<', '>' or '|' */
  uint32_t itemsize;  /* bytes per element */
  int has_object;     /* kind O, or a field that has one */
  int unit;           /* M/m: enum ds_npy_unit */
  int64_t mult;       /* M/m: unit multiplier */
  pk_field *fields;   /* structured: fields in names order */
  size_t nfields;
  const pk_dtype *base; /* subarray dtype: element type ... */
  int sub_ndim;         /* ... and shape */
  uint64_t sub_shape[DS_NPY_MAX_DIMS];
};

/* An object with identity (see the file comment). */
typedef struct pk_obj {
  ds_value *items;  /* container slots (a dict has key, value pairs) */
  size_t n, cap;
  ds_value out;     /* the finished value (preset for globals/objects) */
  uint64_t weight;  /* bytes of the value with shared parts expanded */
  pk_dtype *dt;     /* K_DTYPE */
  uint8_t kind, state, gkind;
} pk_obj;

/* One entry of the resolve pass's explicit stack. */
typedef struct pk_frame {
  pk_obj *o;
  size_t i; /* next item to look at */
} pk_frame;

/* The decoder. */
typedef struct pk {
  const uint8_t *p0, *p, *end; /* input, read position */
  size_t op_at;                /* offset of the current opcode */
  int proto;
  ds_arena *a;
  uint8_t *chunk;              /* the piece of arena memory being carved */
  size_t chunk_left, chunk_size;
  char **err;
  size_t used, max_bytes, max_memo, max_stack, max_long;
  int max_depth;
  ds_value *st;                /* value stack */
  size_t sp, st_cap;
  size_t *marks;               /* MARK stack: stack heights */
  size_t nmarks, marks_cap, fence;
  ds_value *memo;
  size_t memo_len, memo_cap, memo_count;
  ds_value st_local[PK_LOCAL_STACK];
  ds_value memo_local[PK_LOCAL_MEMO];
  size_t marks_local[PK_LOCAL_MARKS];
} pk;

/* ------------------------------------------------------------ errors */

/* Set *err to the message plus " at byte N" (the current opcode). */
__attribute__((format(printf, 2, 3)))
static void fail_(pk *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *m = ds_vstrf(fmt, ap);
  va_end(ap);
  ds_err(d->err, "%s at byte %zu", m ? m : "pickle error", d->op_at);
  free(m);
}

/* The opcode being run (for messages). */
#define cur_op(d) ((d)->p0[(d)->op_at])
/* fail(d, fmt, ...): set the error and evaluate to -1 (a macro, so that the
 * compiler sees every error path return -1). */
#define fail(...) (fail_(__VA_ARGS__), -1)
/* " (max_value_bytes)" when the memory cap is the arena's limit. */
#define CAP_NOTE(d) ((d)->a->limit && (d)->max_bytes == (d)->a->limit ? " (max_value_bytes)" : "")
/* The input ends inside the current opcode. */
#define truncated(d) fail((d), "pickle truncated in opcode 0x%02x", cur_op(d))
/* An opcode wants more values than the stack holds above the last MARK. */
#define underflow(d) fail((d), "pickle stack underflow (opcode 0x%02x)", cur_op(d))

/* ------------------------------------------------------------ memory */

/* The slow path of pk_alloc: a new chunk from the arena (doubling up to
 * PK_CHUNK_MAX), or a piece of its own for a large request. */
static void *pk_alloc_slow(pk *d, size_t n) {
  if (n > d->max_bytes - d->used) {
    fail_(d, "pickle needs more than %zu bytes of memory%s", d->max_bytes, CAP_NOTE(d));
    return NULL;
  }
  void *p;
  if (n > PK_CHUNK_MAX / 4) {
    p = ds_arena_alloc(d->a, n);
  } else {
    size_t size = d->chunk_size ? d->chunk_size * 2 : PK_CHUNK_MIN;
    if (size > PK_CHUNK_MAX) size = PK_CHUNK_MAX;
    while (size < n) size *= 2; /* n <= PK_CHUNK_MAX / 4 here */
    /* never ask a capped arena for more than it has left */
    const ds_arena *a = d->a;
    if (a->limit && a->total < a->limit && size > a->limit - a->total &&
        ((a->limit - a->total) & ~(size_t)15) >= n)
      size = (a->limit - a->total) & ~(size_t)15;
    uint8_t *c = ds_arena_alloc(d->a, size);
    if (c) {
      d->chunk = c + n;
      d->chunk_left = size - n;
      d->chunk_size = size;
    }
    p = c;
  }
  if (!p) {
    if (d->a->over) fail_(d, "pickle needs more than max_value_bytes=%zu bytes", d->a->limit);
    else fail_(d, "out of memory");
    return NULL;
  }
  d->used += n;
  return p;
}

/* n bytes (8-byte aligned) of arena memory, counted against max_bytes;
 * carved from the current chunk without a call in the common case. */
static inline void *pk_alloc(pk *d, size_t n) {
  size_t r = (n + 7) & ~(size_t)7;
  if (r < n) r = SIZE_MAX; /* wrapped: let the slow path refuse it */
  if (r <= d->chunk_left && r <= d->max_bytes - d->used) {
    void *p = d->chunk;
    d->chunk += r;
    d->chunk_left -= r;
    d->used += r;
    return p;
  }
  return pk_alloc_slow(d, r);
}

/* Grow a heap-or-local array of `size`-byte entries to at least `need`
 * entries (at most `max`); *local says whether *arr is still the local one. */
static int grow_array(pk *d, void **arr, size_t *cap, size_t need, size_t max,
                      size_t size, int local, const char *what) {
  if (need > max) return fail(d, "pickle %s exceeds %zu entries", what, max);
  size_t nc = *cap * 2;
  if (nc < need) nc = need;
  if (nc > max) nc = max;
  size_t add = (nc - *cap) * size;
  if (add > d->max_bytes - d->used)
    return fail(d, "pickle needs more than %zu bytes of memory%s", d->max_bytes, CAP_NOTE(d));
  void *q = local ? malloc(nc * size) : realloc(*arr, nc * size);
  if (!q) return fail(d, "out of memory");
  if (local) memcpy(q, *arr, *cap * size);
  d->used += add;
  *arr = q;
  *cap = nc;
  return 0;
}

/* Room for one more value on the stack. */
static int grow_stack(pk *d) {
  void *arr = d->st;
  if (grow_array(d, &arr, &d->st_cap, d->sp + 1, d->max_stack, sizeof(ds_value),
                 d->st == d->st_local, "stack"))
    return -1;
  d->st = arr;
  return 0;
}

/* Copy a slot field by field: the loads then match the stores that wrote
 * the source (a whole-struct copy right after field stores stalls the
 * CPU's store forwarding; this is the decoder's hottest path). */
static inline void vcopy(ds_value *dst, const ds_value *src) {
  dst->type = src->type;
  dst->u.s.p = src->u.s.p;
  dst->u.s.n = src->u.s.n;
}

/* A new slot on top of the stack, or NULL (error set). */
static inline ds_value *push_slot(pk *d) {
  if (d->sp == d->st_cap && grow_stack(d)) return NULL;
  return &d->st[d->sp++];
}

/* Push a value. */
static inline int push(pk *d, const ds_value *v) {
  ds_value *t = push_slot(d);
  if (!t) return -1;
  vcopy(t, v);
  return 0;
}

/* Values on the stack above the last MARK. */
static inline size_t avail(const pk *d) { return d->sp - d->fence; }

/* ------------------------------------------------------------ objects */

/* Slot referring to an object. */
static inline void set_ref(ds_value *v, pk_obj *o) {
  v->type = (ds_vtype)PK_REF;
  v->u.s.p = (const uint8_t *)(void *)o;
  v->u.s.n = 0;
}

/* The object a slot refers to, or NULL for an inline value. */
static inline pk_obj *obj_of(const ds_value *v) {
  if ((int)v->type != PK_REF) return NULL;
  return (pk_obj *)(void *)(uintptr_t)v->u.s.p;
}

/* A new empty object of a kind. */
static pk_obj *new_obj(pk *d, int kind) {
  pk_obj *o = pk_alloc(d, sizeof *o);
  if (!o) return NULL;
  memset(o, 0, sizeof *o);
  o->kind = (uint8_t)kind;
  return o;
}

/* Push a new empty object; *out (may be NULL) gets it. */
static int push_new(pk *d, int kind, pk_obj **out) {
  pk_obj *o = new_obj(d, kind);
  ds_value *t = o ? push_slot(d) : NULL;
  if (!t) return -1;
  set_ref(t, o);
  if (out) *out = o;
  return 0;
}

/* Room for `add` more slots in o->items. */
static int reserve_items(pk *d, pk_obj *o, size_t add) {
  if (add <= o->cap - o->n) return 0;
  if (add > SIZE_MAX / sizeof(ds_value) - o->n)
    return fail(d, "pickle container too large");
  size_t nc = o->cap ? o->cap * 2 : 0;
  if (nc < o->n + add) nc = o->n + add;
  if (nc > SIZE_MAX / sizeof(ds_value)) nc = o->n + add;
  ds_value *q = pk_alloc(d, nc * sizeof(ds_value));
  if (!q) return -1;
  if (o->n) memcpy(q, o->items, o->n * sizeof(ds_value));
  o->items = q;
  o->cap = nc;
  return 0;
}

/* Append k slots to o->items. */
static int add_items(pk *d, pk_obj *o, const ds_value *src, size_t k) {
  if (!k) return 0;
  if (reserve_items(d, o, k)) return -1;
  memcpy(o->items + o->n, src, k * sizeof(ds_value));
  o->n += k;
  return 0;
}

/* A new object holding a copy of k slots. */
static pk_obj *obj_with(pk *d, int kind, const ds_value *src, size_t k) {
  pk_obj *o = new_obj(d, kind);
  if (!o || add_items(d, o, src, k)) return NULL;
  return o;
}

/* ------------------------------------------------------------ text */

/* make_text for text that is not ASCII: valid UTF-8 stays in place,
 * anything else is copied with replacements. */
static int make_text_slow(pk *d, const uint8_t *s, size_t n, ds_value *v) {
  if (ds_utf8_valid(s, n)) return 0;
  if (n > SIZE_MAX / 3) return fail(d, "string too long");
  uint8_t *q = pk_alloc(d, 3 * n);
  if (!q) return -1;
  size_t i = 0, k = 0, skip;
  while (i < n) {
    size_t m = ds_utf8_seq(s + i, n - i, &skip);
    if (m) {
      memcpy(q + k, s + i, m);
      k += m;
      i += m;
    } else {
      memcpy(q + k, "\xEF\xBF\xBD", 3);
      k += 3;
      i += skip;
    }
  }
  v->u.s.p = q;
  v->u.s.n = k;
  return 0;
}

/* A TEXT value for UTF-8 bytes: points into the input when valid, else a
 * copy in the arena with U+FFFD for each maximal invalid subpart. */
static inline int make_text(pk *d, const uint8_t *s, size_t n, ds_value *v) {
  v->type = DS_V_TEXT;
  v->u.s.p = s;
  v->u.s.n = n;
  return ds_ascii(s, n) ? 0 : make_text_slow(d, s, n, v);
}

/* A value whose bytes are copied into the arena (type TEXT, BYTES, ...). */
static int make_copy(pk *d, int type, const void *s, size_t n, ds_value *v) {
  uint8_t *q = pk_alloc(d, n ? n : 1);
  if (!q) return -1;
  if (n) memcpy(q, s, n);
  v->type = (ds_vtype)type;
  v->u.s.p = q;
  v->u.s.n = n;
  return 0;
}

/* Bytes of a str encoded as latin-1 (every code point below 256). */
static int encode_latin1(pk *d, const ds_value *t, ds_value *out) {
  uint8_t *q = pk_alloc(d, t->u.s.n ? t->u.s.n : 1);
  if (!q) return -1;
  size_t i = 0, k = 0;
  while (i < t->u.s.n) {
    uint32_t cp = ds_utf8_next(t->u.s.p, t->u.s.n, &i);
    if (cp > 0xFF) return fail(d, "character U+%04X does not fit latin-1", (unsigned)cp);
    q[k++] = (uint8_t)cp;
  }
  out->type = DS_V_BYTES;
  out->u.s.p = q;
  out->u.s.n = k;
  return 0;
}

/* 1 when a TEXT value equals the C string s. */
static int text_is(const ds_value *v, const char *s) {
  size_t n = strlen(s);
  return v->type == DS_V_TEXT && v->u.s.n == n && memcmp(v->u.s.p, s, n) == 0;
}

/* ------------------------------------------------------------ integers */

/* A LONG1/LONG4 payload (two's complement, little-endian) as INT when it
 * fits in int64, else BIGINT decimal text in the arena. */
static int make_long(pk *d, const uint8_t *b, size_t n, ds_value *v) {
  if (n == 0) {
    v->type = DS_V_INT;
    v->u.i = 0;
    return 0;
  }
  int neg = (b[n - 1] & 0x80) != 0;
  size_t sig = n; /* drop sign-extension bytes */
  while (sig > 1 && b[sig - 1] == (neg ? 0xFF : 0x00) &&
         ((b[sig - 2] & 0x80) != 0) == neg)
    sig--;
  if (sig <= 8) {
    uint64_t u = neg ? ~(uint64_t)0 : 0;
    for (size_t i = 0; i < sig; i++) {
      u &= ~((uint64_t)0xFF << (8 * i));
      u |= (uint64_t)b[i] << (8 * i);
    }
    v->type = DS_V_INT;
    memcpy(&v->u.i, &u, sizeof u);
    return 0;
  }
  /* magnitude in 32-bit limbs, then repeated division by 10^9 */
  size_t nl = (sig + 3) / 4;
  uint32_t *limb = malloc(nl * sizeof *limb);
  size_t cap = sig * 3 + 2; /* > 2.41 digits per byte, plus sign */
  char *txt = malloc(cap);
  if (!limb || !txt) {
    free(limb);
    free(txt);
    return fail(d, "out of memory");
  }
  unsigned carry = 1;
  for (size_t l = 0; l < nl; l++) {
    uint32_t w = 0;
    for (size_t k = 0; k < 4; k++) {
      size_t i = 4 * l + k;
      unsigned byte = i < n ? b[i] : (neg ? 0xFF : 0);
      if (neg) { /* two's complement negation, byte by byte */
        byte = (~byte & 0xFF) + carry;
        carry = byte >> 8;
        byte &= 0xFF;
      }
      w |= (uint32_t)byte << (8 * k);
    }
    limb[l] = w;
  }
  size_t len = 0;
  while (nl && !limb[nl - 1]) nl--;
  while (nl) {
    uint64_t rem = 0;
    for (size_t l = nl; l-- > 0;) {
      uint64_t cur = rem << 32 | limb[l];
      limb[l] = (uint32_t)(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    while (nl && !limb[nl - 1]) nl--;
    for (int k = 0; k < 9 && (nl || rem); k++) {
      txt[len++] = (char)('0' + rem % 10);
      rem /= 10;
    }
  }
  if (neg) txt[len++] = '-';
  for (size_t i = 0; i < len / 2; i++) {
    char c = txt[i];
    txt[i] = txt[len - 1 - i];
    txt[len - 1 - i] = c;
  }
  int rc = make_copy(d, DS_V_BIGINT, txt, len, v);
  free(limb);
  free(txt);
  return rc;
}

/* An int argument (Python int or bool). */
static int arg_int(pk *d, const ds_value *v, int64_t *out, const char *what) {
  if (v->type == DS_V_INT || v->type == DS_V_BOOL) {
    *out = v->u.i;
    return 0;
  }
  return fail(d, "%s: expected an int", what);
}

/* A tuple argument: its items. */
static int arg_tuple(pk *d, const ds_value *v, ds_value **items, size_t *n,
                     const char *what) {
  pk_obj *o = obj_of(v);
  if (!o || o->kind != K_TUPLE) return fail(d, "%s: expected a tuple", what);
  *items = o->items;
  *n = o->n;
  return 0;
}

/* A shape: a tuple of ints >= 0 (at most DS_NPY_MAX_DIMS). */
static int arg_shape(pk *d, const ds_value *v, uint64_t *shape, int *nd,
                     const char *what) {
  ds_value *it;
  size_t n;
  if (arg_tuple(d, v, &it, &n, what)) return -1;
  if (n > DS_NPY_MAX_DIMS)
    return fail(d, "%s: %zu dimensions (at most %d)", what, n, DS_NPY_MAX_DIMS);
  for (size_t k = 0; k < n; k++) {
    int64_t x;
    if (arg_int(d, &it[k], &x, what)) return -1;
    if (x < 0) return fail(d, "%s: negative dimension", what);
    shape[k] = (uint64_t)x;
  }
  *nd = (int)n;
  return 0;
}

/* A numpy dtype argument. */
static int arg_dtype(pk *d, const ds_value *v, const pk_dtype **dt,
                     const char *what) {
  pk_obj *o = obj_of(v);
  if (!o || o->kind != K_DTYPE) return fail(d, "%s: expected a numpy dtype", what);
  *dt = o->dt;
  return 0;
}

/* Product of a shape times an itemsize, with overflow checks (numpy: fits
 * in int64). */
static int shape_bytes(pk *d, int nd, const uint64_t *shape, uint64_t item,
                       uint64_t *count, uint64_t *bytes) {
  uint64_t nz = item ? item : 1; /* product of the non-zero dimensions */
  for (int k = 0; k < nd; k++) {
    if (shape[k] && nz > (uint64_t)INT64_MAX / shape[k])
      return fail(d, "numpy array too large");
    if (shape[k]) nz *= shape[k];
  }
  uint64_t cnt = 1;
  for (int k = 0; k < nd; k++) cnt *= shape[k]; /* cannot overflow now */
  *count = cnt;
  *bytes = cnt * item;
  return 0;
}

/* ------------------------------------------------------------ dtypes */

static const char *const unit_names[] = {"Y", "M", "W", "D", "h", "m", "s",
                                         "ms", "us", "ns", "ps", "fs", "as"};

/* Itemsize implied by a numpy typestr kind and number ("f8", "U5"); 0 when
 * the combination is not a numpy dtype. */
static uint64_t typestr_size(char kind, uint64_t num) {
  switch (kind) {
    case 'b': return num == 1 ? 1 : 0;
    case 'i': case 'u':
      return num == 1 || num == 2 || num == 4 || num == 8 ? num : 0;
    case 'f': return num == 2 || num == 4 || num == 8 || num == 12 || num == 16 ? num : 0;
    case 'c': return num == 8 || num == 16 || num == 24 || num == 32 ? num : 0;
    case 'O': case 'M': case 'm': return num == 8 ? 8 : 0;
    case 'S': case 'V': return num;
    case 'U': return num * 4;
  }
  return 0;
}

/* The byte order a dtype gets in numpy: '|' for one-byte and non-numeric
 * kinds, '<' for native ('=') and unknown, else as given. */
static char norm_order(char kind, uint32_t itemsize, char order) {
  if (itemsize <= 1 || kind == 'b' || kind == 'S' || kind == 'V' || kind == 'O')
    return '|';
  return order == '>' ? '>' : '<';
}

/* numpy.dtype(typestr, align, copy): a dtype with default state. */
static int dtype_new(pk *d, const ds_value *it, size_t n, ds_value *res) {
  if (n < 1 || n > 3 || it[0].type != DS_V_TEXT)
    return fail(d, "numpy.dtype: expected (str, bool, bool)");
  const uint8_t *s = it[0].u.s.p;
  size_t len = it[0].u.s.n, i = 0;
  if (i < len && (s[i] == '<' || s[i] == '>' || s[i] == '|' || s[i] == '='))
    i++;
  char order = i ? (char)s[0] : '<';
  char kind = i < len ? (char)s[i++] : 0;
  uint64_t num = 0;
  size_t digits = 0;
  for (; i < len && s[i] >= '0' && s[i] <= '9' && num < (1u << 30); i++, digits++)
    num = num * 10 + (s[i] - '0');
  if (!digits && (kind == 'O' || kind == 'M' || kind == 'm')) num = 8;
  int known = kind && strchr("biufcOMmSVU", kind) != NULL;
  uint64_t size = known ? typestr_size(kind, num) : 0;
  int flexible = known && strchr("SVU", kind) != NULL;
  if (i != len || !known || (!size && !(digits && flexible)) || size > INT32_MAX) {
    char *q = ds_escape(s, len > 40 ? 40 : len); /* pickle bytes: any */
    int rc = fail(d, "unsupported numpy dtype '%s'", q ? q : "");
    free(q);
    return rc;
  }
  pk_obj *o = new_obj(d, K_DTYPE);
  pk_dtype *dt = o ? pk_alloc(d, sizeof *dt) : NULL;
  if (!dt) return -1;
  memset(dt, 0, sizeof *dt);
  dt->kind = kind;
  dt->itemsize = (uint32_t)size;
  dt->order = norm_order(kind, dt->itemsize, order);
  dt->has_object = kind == 'O';
  dt->unit = DS_NPY_UNIT_GENERIC;
  dt->mult = 1;
  o->dt = dt;
  set_ref(res, o);
  return 0;
}

/* The datetime unit of a version-4 dtype state's metadata item:
 * (metadata, (unit, num, den, events)). */
static int dtype_unit(pk *d, pk_dtype *dt, const ds_value *meta) {
  ds_value *it, *u;
  size_t n, nu;
  if (arg_tuple(d, meta, &it, &n, "numpy.dtype state metadata")) return -1;
  if (n != 2 || arg_tuple(d, &it[1], &u, &nu, "numpy datetime metadata") || nu < 2 ||
      (u[0].type != DS_V_BYTES && u[0].type != DS_V_TEXT))
    return fail(d, "numpy datetime metadata: expected (unit, num, den, events)");
  int64_t mult;
  if (arg_int(d, &u[1], &mult, "numpy datetime metadata")) return -1;
  if (mult < 1 || mult > INT32_MAX) return fail(d, "numpy datetime unit multiplier out of range");
  dt->mult = mult;
  dt->unit = -2;
  if (u[0].u.s.n == 7 && memcmp(u[0].u.s.p, "generic", 7) == 0) dt->unit = DS_NPY_UNIT_GENERIC;
  for (int k = 0; k < (int)(sizeof unit_names / sizeof *unit_names); k++)
    if (strlen(unit_names[k]) == u[0].u.s.n && memcmp(unit_names[k], u[0].u.s.p, u[0].u.s.n) == 0)
      dt->unit = k;
  if (dt->unit == -2) return fail(d, "unknown numpy datetime unit");
  return 0;
}

/* The (dtype, offset[, title]) entry of field `name` in a fields dict. */
static int dtype_field(pk *d, pk_obj *fields, size_t guess, const ds_value *name,
                       pk_field *f) {
  size_t pairs = fields->n / 2, hit = pairs;
  if (guess < pairs) {
    const ds_value *k = &fields->items[2 * guess];
    if (k->type == DS_V_TEXT && k->u.s.n == name->u.s.n &&
        memcmp(k->u.s.p, name->u.s.p, name->u.s.n) == 0)
      hit = guess;
  }
  for (size_t j = 0; hit == pairs && j < pairs; j++) {
    const ds_value *k = &fields->items[2 * j];
    if (k->type == DS_V_TEXT && k->u.s.n == name->u.s.n &&
        memcmp(k->u.s.p, name->u.s.p, name->u.s.n) == 0)
      hit = j;
  }
  if (hit == pairs) return fail(d, "numpy dtype: field missing from the fields dict");
  ds_value *it;
  size_t n;
  int64_t off;
  if (arg_tuple(d, &fields->items[2 * hit + 1], &it, &n, "numpy dtype field")) return -1;
  if (n < 2 || n > 3 || arg_dtype(d, &it[0], &f->type, "numpy dtype field") ||
      arg_int(d, &it[1], &off, "numpy dtype field offset"))
    return fail(d, "numpy dtype field: expected (dtype, offset[, title])");
  if (off < 0) return fail(d, "numpy dtype field: negative offset");
  f->name = name->u.s.p;
  f->name_len = name->u.s.n;
  f->offset = (uint64_t)off;
  return 0;
}

/* names + fields of a structured dtype state. */
static int dtype_fields(pk *d, pk_dtype *dt, const ds_value *names,
                        const ds_value *fields) {
  ds_value *nm;
  size_t n;
  pk_obj *fo = obj_of(fields);
  if (arg_tuple(d, names, &nm, &n, "numpy dtype names")) return -1;
  if (!fo || fo->kind != K_DICT) return fail(d, "numpy dtype: fields is not a dict");
  if (n > PK_MAX_FIELDS) return fail(d, "numpy dtype: more than %d fields", PK_MAX_FIELDS);
  pk_field *f = pk_alloc(d, (n ? n : 1) * sizeof *f);
  if (!f) return -1;
  for (size_t k = 0; k < n; k++) {
    if (nm[k].type != DS_V_TEXT) return fail(d, "numpy dtype: field name is not a str");
    if (dtype_field(d, fo, k, &nm[k], &f[k])) return -1;
    if (f[k].offset > dt->itemsize || f[k].type->itemsize > dt->itemsize - f[k].offset)
      return fail(d, "numpy dtype: field outside the itemsize");
    if (f[k].type->has_object) dt->has_object = 1;
  }
  dt->fields = f;
  dt->nfields = n;
  return 0;
}

/* The (base, shape) subarray item of a dtype state. */
static int dtype_subarray(pk *d, pk_dtype *dt, const ds_value *sub) {
  ds_value *it;
  size_t n;
  if (arg_tuple(d, sub, &it, &n, "numpy dtype subarray")) return -1;
  if (n != 2 || arg_dtype(d, &it[0], &dt->base, "numpy dtype subarray") ||
      arg_shape(d, &it[1], dt->sub_shape, &dt->sub_ndim, "numpy dtype subarray"))
    return fail(d, "numpy dtype subarray: expected (dtype, shape)");
  if (dt->base->base) return fail(d, "numpy dtype: nested subarray");
  uint64_t cnt, bytes;
  if (shape_bytes(d, dt->sub_ndim, dt->sub_shape, dt->base->itemsize, &cnt, &bytes))
    return -1;
  if (bytes != dt->itemsize) return fail(d, "numpy dtype: subarray size mismatch");
  if (dt->base->has_object) dt->has_object = 1;
  return 0;
}

/* BUILD on a dtype: (version, byteorder, subarray, names, fields, elsize,
 * alignment, flags[, metadata]); the 7-item form without flags too. */
static int dtype_setstate(pk *d, pk_obj *o, const ds_value *state) {
  ds_value *it;
  size_t n;
  pk_dtype *dt = o->dt;
  if (arg_tuple(d, state, &it, &n, "numpy dtype state")) return -1;
  if (n < 7 || n > 9) return fail(d, "numpy dtype state has %zu items", n);
  if (it[1].type != DS_V_TEXT || it[1].u.s.n != 1 || !strchr("<>|=", it[1].u.s.p[0]))
    return fail(d, "numpy dtype state: bad byte order");
  int64_t elsize;
  if (arg_int(d, &it[5], &elsize, "numpy dtype state elsize")) return -1;
  if (elsize >= 0 && (dt->kind == 'S' || dt->kind == 'U' || dt->kind == 'V')) {
    if (elsize > INT32_MAX || (dt->kind == 'U' && elsize % 4))
      return fail(d, "numpy dtype state: bad elsize");
    dt->itemsize = (uint32_t)elsize;
  }
  dt->order = norm_order(dt->kind, dt->itemsize, (char)it[1].u.s.p[0]);
  dt->fields = NULL;
  dt->nfields = 0;
  dt->base = NULL;
  dt->has_object = dt->kind == 'O';
  if (it[2].type != DS_V_NULL && dtype_subarray(d, dt, &it[2])) return -1;
  if (it[3].type != DS_V_NULL || it[4].type != DS_V_NULL) {
    if (dt->kind != 'V') return fail(d, "numpy dtype: fields on a non-void dtype");
    if (dtype_fields(d, dt, &it[3], &it[4])) return -1;
  }
  if (n == 9 && (dt->kind == 'M' || dt->kind == 'm') && dtype_unit(d, dt, &it[8]))
    return -1;
  return 0;
}

/* Append a Python repr of a field name ('x'). */
static int put_name(ds_buf *b, const uint8_t *s, size_t n) {
  int rc = ds_buf_puts(b, "'");
  for (size_t i = 0; i < n && !rc; i++) {
    uint8_t c = s[i];
    if (c == '\'' || c == '\\') rc = ds_buf_printf(b, "\\%c", c);
    else if (c < 0x20 || c == 0x7F) rc = ds_buf_printf(b, "\\x%02x", c);
    else rc = ds_buf_append(b, &c, 1);
  }
  return rc || ds_buf_puts(b, "'");
}

/* Append a shape tuple "(2,)" / "(2, 3)". */
static int put_shape(ds_buf *b, int nd, const uint64_t *shape) {
  int rc = ds_buf_puts(b, "(");
  for (int k = 0; k < nd; k++)
    rc |= ds_buf_printf(b, k ? ", %llu" : "%llu", (unsigned long long)shape[k]);
  return rc | ds_buf_puts(b, nd == 1 ? ",)" : ")");
}

static int put_descr(pk *d, ds_buf *b, const pk_dtype *dt, int swap, int depth);

/* Append the simple dtype text ("<f4", "|S2", "<M8[s]"); swap makes a
 * big-endian dtype little-endian (the data is swapped too). */
static int put_simple(ds_buf *b, const pk_dtype *dt, int swap) {
  char order = dt->order == '>' && swap ? '<' : dt->order;
  if (dt->kind == 'O') return ds_buf_puts(b, "|O");
  int rc = ds_buf_printf(b, "%c%c%lu", order, dt->kind,
                         (unsigned long)(dt->kind == 'U' ? dt->itemsize / 4 : dt->itemsize));
  if ((dt->kind == 'M' || dt->kind == 'm') && dt->unit >= 0) {
    if (dt->mult > 1)
      rc |= ds_buf_printf(b, "[%lld%s]", (long long)dt->mult, unit_names[dt->unit]);
    else
      rc |= ds_buf_printf(b, "[%s]", unit_names[dt->unit]);
  }
  return rc;
}

/* Append the list text of a structured dtype, with ('', '|Vn') padding. */
static int put_struct(pk *d, ds_buf *b, const pk_dtype *dt, int depth) {
  uint64_t pos = 0;
  int rc = ds_buf_puts(b, "[");
  for (size_t k = 0; k < dt->nfields && !rc; k++) {
    const pk_field *f = &dt->fields[k];
    if (f->offset < pos)
      return fail(d, "numpy structured dtype with overlapping or unordered fields");
    if (f->offset > pos)
      rc |= ds_buf_printf(b, "('', '|V%llu'), ", (unsigned long long)(f->offset - pos));
    rc |= ds_buf_puts(b, "(") || put_name(b, f->name, f->name_len) || ds_buf_puts(b, ", ");
    const pk_dtype *t = f->type->base ? f->type->base : f->type;
    if (!t->fields) rc |= ds_buf_puts(b, "'");
    if (rc || put_descr(d, b, t, 0, depth + 1)) return rc ? fail(d, "out of memory") : -1;
    if (!t->fields) rc |= ds_buf_puts(b, "'");
    if (f->type->base)
      rc |= ds_buf_puts(b, ", ") || put_shape(b, f->type->sub_ndim, f->type->sub_shape);
    rc |= ds_buf_puts(b, k + 1 < dt->nfields ? "), " : ")");
    pos = f->offset + f->type->itemsize;
    if (b->len > PK_MAX_DESCR) return fail(d, "numpy dtype description too long");
  }
  if (!rc && pos < dt->itemsize)
    rc |= ds_buf_printf(b, "%s('', '|V%llu')", dt->nfields ? ", " : "",
                        (unsigned long long)(dt->itemsize - pos));
  rc |= ds_buf_puts(b, "]");
  return rc ? fail(d, "out of memory") : 0;
}

/* Append a dtype's .npy description (simple text or field list). */
static int put_descr(pk *d, ds_buf *b, const pk_dtype *dt, int swap, int depth) {
  if (depth > PK_MAX_DTYPE_NEST) return fail(d, "numpy dtype nested too deeply");
  if (dt->base) return fail(d, "numpy subarray dtype outside a structured dtype");
  if (dt->fields) return put_struct(d, b, dt, depth);
  return put_simple(b, dt, swap) ? fail(d, "out of memory") : 0;
}

/* The text a dtype object on its own becomes: its .npy description, or
 * "(base, shape)" for a subarray dtype. */
static int dtype_text(pk *d, ds_buf *b, const pk_dtype *dt) {
  const pk_dtype *t = dt->base ? dt->base : dt;
  int q = dt->base && !t->fields; /* quote a simple base */
  if (dt->base && ds_buf_puts(b, q ? "('" : "(")) return fail(d, "out of memory");
  if (put_descr(d, b, t, 0, 0)) return -1;
  if (dt->base && (ds_buf_puts(b, q ? "', " : ", ") ||
                   put_shape(b, dt->sub_ndim, dt->sub_shape) || ds_buf_puts(b, ")")))
    return fail(d, "out of memory");
  return 0;
}

/* ------------------------------------------------------------ arrays */

/* Copy the elements at src (byte strides sst) into dst in C order. */
static void gather(uint8_t *dst, const uint8_t *src, int nd, const uint64_t *shape,
                   const uint64_t *sst, size_t item) {
  if (nd == 0) {
    memcpy(dst, src, item);
    return;
  }
  for (int k = 0; k < nd; k++)
    if (!shape[k]) return;
  uint64_t idx[DS_NPY_MAX_DIMS] = {0};
  const uint8_t *s = src;
  for (;;) {
    const uint8_t *q = s;
    uint64_t step = sst[nd - 1];
    for (uint64_t i = 0; i < shape[nd - 1]; i++, q += step, dst += item)
      memcpy(dst, q, item);
    int k = nd - 2;
    for (; k >= 0; k--) {
      s += sst[k];
      if (++idx[k] < shape[k]) break;
      s -= sst[k] * shape[k];
      idx[k] = 0;
    }
    if (k < 0) return;
  }
}

/* Reverse the bytes of each `unit`-byte group of p[0..n). */
static void swap_units(uint8_t *p, size_t n, size_t unit) {
  for (size_t i = 0; i + unit <= n; i += unit)
    for (size_t a = i, b = i + unit - 1; a < b; a++, b--) {
      uint8_t t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
}

/* Make the data little-endian for a big-endian simple dtype. */
static void to_little(uint8_t *p, size_t n, const pk_dtype *dt) {
  if (dt->order != '>' || dt->fields) return;
  size_t unit = dt->kind == 'c' ? dt->itemsize / 2 : dt->kind == 'U' ? 4 : dt->itemsize;
  if (unit > 1) swap_units(p, n, unit);
}

/* Build an NDARRAY value (.npy in C order) from raw element bytes laid out
 * as `order`: 'C' row-major, 'F' column-major, 'K' row-major for `shape`
 * then transposed by axes. */
static int make_ndarray(pk *d, const pk_dtype *dt, int nd, const uint64_t *shape,
                        const uint8_t *data, size_t len, char order,
                        const uint64_t *axes, ds_value *out) {
  uint64_t count, bytes, sst[DS_NPY_MAX_DIMS], oshape[DS_NPY_MAX_DIMS];
  if (dt->has_object) return fail(d, "numpy object array with a byte buffer");
  if (shape_bytes(d, nd, shape, dt->itemsize, &count, &bytes)) return -1;
  if (bytes != len)
    return fail(d, "numpy array data has %zu bytes, its shape and dtype need %llu",
                len, (unsigned long long)bytes);
  uint64_t c[DS_NPY_MAX_DIMS];
  for (int k = nd - 1; k >= 0; k--) /* C strides of the buffer */
    c[k] = k == nd - 1 ? dt->itemsize : c[k + 1] * shape[k + 1];
  for (int k = 0; k < nd; k++) {
    oshape[k] = order == 'K' ? shape[axes[k]] : shape[k];
    sst[k] = order == 'K' ? c[axes[k]] : c[k];
  }
  if (order == 'F')
    for (int k = 0; k < nd; k++) sst[k] = k ? sst[k - 1] * shape[k - 1] : dt->itemsize;
  ds_buf db = {0}, hb = {0};
  char *e = NULL;
  int rc = put_descr(d, &db, dt, 1, 0);
  if (!rc && ds_buf_append(&db, "", 1)) rc = fail(d, "out of memory");
  if (!rc && ds_npy_write_header(&hb, (const char *)db.data, 0, nd, oshape, &e)) {
    rc = fail(d, "%s", e ? e : "npy header");
    free(e);
  }
  uint8_t *blob = NULL;
  if (!rc && bytes > SIZE_MAX - hb.len) rc = fail(d, "numpy array too large");
  if (!rc) blob = pk_alloc(d, hb.len + (size_t)bytes);
  if (!blob) rc = -1;
  if (!rc) {
    memcpy(blob, hb.data, hb.len);
    if (order == 'C' || nd <= 1) memcpy(blob + hb.len, data, (size_t)bytes);
    else if (bytes) gather(blob + hb.len, data, nd, oshape, sst, dt->itemsize);
    to_little(blob + hb.len, (size_t)bytes, dt);
    ds_npy chk; /* the rest of the project must be able to read it back */
    if (ds_npy_parse(blob, hb.len + (size_t)bytes, &chk, &e)) {
      rc = fail(d, "numpy array: %s", e ? e : "unreadable .npy");
      free(e);
    }
    out->type = DS_V_NDARRAY;
    out->u.s.p = blob;
    out->u.s.n = hb.len + (size_t)bytes;
  }
  ds_buf_free(&db);
  ds_buf_free(&hb);
  return rc ? -1 : 0;
}

/* BUILD on an array from _reconstruct: ([version,] shape, dtype,
 * is_fortran, data). */
static int array_setstate(pk *d, pk_obj *o, const ds_value *state) {
  ds_value *it;
  size_t n;
  if (arg_tuple(d, state, &it, &n, "numpy array state")) return -1;
  if (n != 4 && n != 5) return fail(d, "numpy array state has %zu items", n);
  if (n == 5) it++;
  uint64_t shape[DS_NPY_MAX_DIMS];
  int nd;
  const pk_dtype *dt;
  int64_t fortran;
  if (arg_shape(d, &it[0], shape, &nd, "numpy array shape") ||
      arg_dtype(d, &it[1], &dt, "numpy array state") ||
      arg_int(d, &it[2], &fortran, "numpy array is_fortran"))
    return -1;
  if (dt->base) return fail(d, "numpy array with a subarray dtype");
  if (dt->has_object) {
    pk_obj *lst = obj_of(&it[3]);
    uint64_t count, bytes;
    if (!lst || lst->kind != K_LIST) return fail(d, "numpy object array data is not a list");
    if (shape_bytes(d, nd, shape, 1, &count, &bytes)) return -1;
    if (lst->n != count)
      return fail(d, "numpy object array has %zu items, its shape needs %llu", lst->n,
                  (unsigned long long)count);
    if (!o->cap && reserve_items(d, o, 1)) return -1;
    o->items[0] = it[3];
    o->n = 1;
    o->kind = K_OBJARRAY;
    return 0;
  }
  if (it[3].type != DS_V_BYTES) return fail(d, "numpy array data is not bytes");
  if (make_ndarray(d, dt, nd, shape, it[3].u.s.p, it[3].u.s.n, fortran ? 'F' : 'C',
                   NULL, &o->out))
    return -1;
  o->n = 0;
  o->kind = K_NDARRAY;
  return 0;
}

/* _frombuffer(buffer, dtype, shape, order[, axis_order]) (protocol 5). */
static int np_frombuffer(pk *d, const ds_value *it, size_t n, ds_value *res) {
  const char *what = "numpy _frombuffer";
  const pk_dtype *dt;
  uint64_t shape[DS_NPY_MAX_DIMS], axes[DS_NPY_MAX_DIMS];
  int nd, na = 0;
  if (n < 4 || n > 5) return fail(d, "%s: expected 4 or 5 arguments", what);
  if (it[0].type != DS_V_BYTES) return fail(d, "%s: buffer is not bytes", what);
  if (arg_dtype(d, &it[1], &dt, what) || arg_shape(d, &it[2], shape, &nd, what))
    return -1;
  if (dt->base) return fail(d, "%s: subarray dtype", what);
  char order = text_is(&it[3], "C") ? 'C' : text_is(&it[3], "F") ? 'F'
             : text_is(&it[3], "K") ? 'K' : 0;
  if (!order) return fail(d, "%s: order must be 'C', 'F' or 'K'", what);
  if (order == 'K') {
    if (n != 5 || arg_shape(d, &it[4], axes, &na, what) || na != nd)
      return fail(d, "%s: order 'K' needs an axis order for every dimension", what);
    int seen[DS_NPY_MAX_DIMS] = {0};
    for (int k = 0; k < na; k++) {
      if (axes[k] >= (uint64_t)nd || seen[axes[k]])
        return fail(d, "%s: axis order is not a permutation", what);
      seen[axes[k]] = 1;
    }
  }
  return make_ndarray(d, dt, nd, shape, it[0].u.s.p, it[0].u.s.n, order, axes, res);
}

/* numpy.core.multiarray.scalar(dtype, bytes) -> a scalar by dtype. */
static int np_scalar(pk *d, const ds_value *it, size_t n, ds_value *res) {
  const pk_dtype *dt;
  if (n < 1 || n > 2 || arg_dtype(d, &it[0], &dt, "numpy scalar")) {
    return n < 1 || n > 2 ? fail(d, "numpy scalar: expected (dtype, bytes)") : -1;
  }
  if (dt->has_object) { /* the object itself */
    if (n == 2) *res = it[1];
    else res->type = DS_V_NULL;
    return 0;
  }
  if (n != 2 || it[1].type != DS_V_BYTES)
    return fail(d, "numpy scalar: expected (dtype, bytes)");
  if (it[1].u.s.n != dt->itemsize)
    return fail(d, "numpy scalar: %zu bytes for a %u-byte dtype", it[1].u.s.n,
                (unsigned)dt->itemsize);
  if (dt->kind == 'V' || dt->base) { /* void / record: its raw bytes */
    *res = it[1];
    return 0;
  }
  ds_npy a;
  memset(&a, 0, sizeof a);
  ds_buf db = {0}, scratch = {0};
  char *e = NULL;
  if (put_simple(&db, dt, 0) || ds_buf_append(&db, "", 1)) {
    ds_buf_free(&db);
    return fail(d, "out of memory");
  }
  snprintf(a.descr_buf, sizeof a.descr_buf, "%s", (const char *)db.data);
  ds_buf_free(&db);
  a.descr = a.descr_buf;
  a.kind = dt->kind;
  a.byteorder = dt->order;
  a.itemsize = dt->itemsize;
  a.count = 1;
  a.data = it[1].u.s.p;
  a.data_len = it[1].u.s.n;
  a.dt_unit = dt->unit;
  a.dt_mult = dt->mult;
  a.version = 1;
  int rc = ds_npy_element(&a, 0, res, &scratch, &e);
  if (rc) fail_(d, "numpy scalar: %s", e ? e : "unsupported dtype");
  else if (res->type == DS_V_TEXT && res->u.s.p == scratch.data)
    rc = make_copy(d, DS_V_TEXT, scratch.data, scratch.len, res);
  free(e);
  ds_buf_free(&scratch);
  return rc;
}

/* ------------------------------------------------------------ builtins */

/* A float argument (Python float, int or bool). */
static int arg_num(pk *d, const ds_value *v, double *out, const char *what) {
  if (v->type == DS_V_FLOAT) *out = v->u.f;
  else if (v->type == DS_V_INT || v->type == DS_V_BOOL) *out = (double)v->u.i;
  else return fail(d, "%s: expected a number", what);
  return 0;
}

/* complex([re[, im]]). */
static int py_complex(pk *d, const ds_value *it, size_t n, ds_value *res) {
  double re = 0, im = 0;
  if (n > 2 || (n > 0 && arg_num(d, &it[0], &re, "complex")) ||
      (n > 1 && arg_num(d, &it[1], &im, "complex")))
    return n > 2 ? fail(d, "complex: expected (re, im)") : -1;
  res->type = DS_V_COMPLEX;
  res->u.c.re = re;
  res->u.c.im = im;
  return 0;
}

/* _codecs.encode(str[, encoding[, errors]]) and bytes/bytearray(str,
 * encoding): latin-1 or UTF-8. */
static int py_encode(pk *d, const ds_value *it, size_t n, ds_value *res) {
  if (n < 1 || n > 3 || it[0].type != DS_V_TEXT)
    return fail(d, "encode: expected (str, encoding)");
  if (n == 1 || text_is(&it[1], "utf-8") || text_is(&it[1], "utf8")) {
    *res = it[0];
    res->type = DS_V_BYTES;
    return 0;
  }
  if (text_is(&it[1], "latin1") || text_is(&it[1], "latin-1") ||
      text_is(&it[1], "iso-8859-1") || text_is(&it[1], "iso8859-1"))
    return encode_latin1(d, &it[0], res);
  return fail(d, "encode: unsupported encoding");
}

/* bytes(...) / bytearray(...): (), (bytes,) or (str, encoding). */
static int py_bytes(pk *d, const ds_value *it, size_t n, ds_value *res) {
  if (n == 0) {
    res->type = DS_V_BYTES;
    res->u.s.p = (const uint8_t *)"";
    res->u.s.n = 0;
    return 0;
  }
  if (n == 1 && it[0].type == DS_V_BYTES) {
    *res = it[0];
    return 0;
  }
  if (n >= 2 && it[0].type == DS_V_TEXT) return py_encode(d, it, n, res);
  return fail(d, "bytearray: expected (bytes,) or (str, encoding)");
}

/* set(iterable) / frozenset(iterable): a copy of a list/tuple/set. */
static int py_set(pk *d, int kind, const ds_value *it, size_t n, ds_value *res) {
  pk_obj *src = n == 1 ? obj_of(&it[0]) : NULL;
  if (n > 1 || (n == 1 && (!src || src->kind > K_FROZENSET)))
    return fail(d, "set: expected () or (list,)");
  pk_obj *o = obj_with(d, kind, src ? src->items : NULL, src ? src->n : 0);
  if (!o) return -1;
  set_ref(res, o);
  return 0;
}

/* collections.OrderedDict() or OrderedDict([(k, v), ...]) -> a dict. */
static int py_ordereddict(pk *d, const ds_value *it, size_t n, ds_value *res) {
  pk_obj *src = n == 1 ? obj_of(&it[0]) : NULL;
  if (n > 1 || (n == 1 && (!src || (src->kind != K_LIST && src->kind != K_TUPLE))))
    return fail(d, "OrderedDict: expected () or (list of pairs,)");
  pk_obj *o = new_obj(d, K_DICT);
  if (!o) return -1;
  for (size_t k = 0; src && k < src->n; k++) {
    pk_obj *pair = obj_of(&src->items[k]);
    if (!pair || (pair->kind != K_LIST && pair->kind != K_TUPLE) || pair->n != 2)
      return fail(d, "OrderedDict: item is not a pair");
    if (add_items(d, o, pair->items, 2)) return -1;
  }
  set_ref(res, o);
  return 0;
}

/* Days in a month of the proleptic Gregorian calendar. */
static int days_in_month(int64_t y, int64_t m) {
  static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : dm[m - 1];
}

/* The tzinfo argument: None is fine; anything else makes the datetime an
 * unsupported object named after the tzinfo's class. 1 when it did. */
static int datetime_tz(const ds_value *tz, ds_value *res) {
  if (!tz || tz->type == DS_V_NULL) return 0;
  pk_obj *o = obj_of(tz);
  res->type = DS_V_UNSUPPORTED;
  if (o && (o->kind == K_GLOBAL || o->kind == K_OBJECT)) res->u.s = o->out.u.s;
  else {
    res->u.s.p = (const uint8_t *)"datetime.tzinfo";
    res->u.s.n = 15;
  }
  return 1;
}

/* datetime.datetime / date / time: (bytes state[, tzinfo]) or the
 * constructor's ints -> ISO-8601 text as isoformat() prints it. */
static int py_datetime(pk *d, int g, const ds_value *it, size_t n, ds_value *res) {
  int64_t f[7] = {1, 1, 1, 0, 0, 0, 0}; /* y mo d h mi s us */
  int first = g == G_TIME ? 3 : 0, nf = g == G_DATE ? 3 : g == G_TIME ? 4 : 7;
  size_t used = 0;
  const char *what = g == G_DATE ? "datetime.date" : g == G_TIME ? "datetime.time"
                                                                 : "datetime.datetime";
  if (n >= 1 && it[0].type == DS_V_BYTES) {
    const uint8_t *b = it[0].u.s.p;
    size_t want = g == G_DATE ? 4 : g == G_TIME ? 6 : 10;
    if (it[0].u.s.n != want) return fail(d, "%s: state has %zu bytes", what, it[0].u.s.n);
    if (g == G_TIME) {
      f[3] = b[0] & 0x7F, f[4] = b[1], f[5] = b[2];
      f[6] = (int64_t)b[3] << 16 | b[4] << 8 | b[5];
    } else {
      f[0] = b[0] << 8 | b[1], f[1] = b[2] & 0x7F, f[2] = b[3];
      if (g == G_DATETIME) {
        f[3] = b[4], f[4] = b[5], f[5] = b[6];
        f[6] = (int64_t)b[7] << 16 | b[8] << 8 | b[9];
      }
    }
    used = 1;
  } else {
    for (; used < n && used < (size_t)nf && it[used].type != DS_V_NULL &&
           obj_of(&it[used]) == NULL; used++)
      if (arg_int(d, &it[used], &f[first + used], what)) return -1;
    if (used < (g == G_TIME ? 0u : 3u)) return fail(d, "%s: expected a bytes state", what);
  }
  if (n > used + (g == G_DATE ? 0 : 1)) return fail(d, "%s: too many arguments", what);
  if (f[0] < 1 || f[0] > 9999 || f[1] < 1 || f[1] > 12 || f[2] < 1 ||
      f[2] > days_in_month(f[0], f[1]) || f[3] < 0 || f[3] > 23 || f[4] < 0 ||
      f[4] > 59 || f[5] < 0 || f[5] > 59 || f[6] < 0 || f[6] > 999999)
    return fail(d, "%s: value out of range", what);
  if (datetime_tz(n > used ? &it[used] : NULL, res)) return 0;
  char buf[48];
  int k = 0;
  if (g != G_TIME)
    k = snprintf(buf, sizeof buf, "%04d-%02d-%02d", (int)f[0], (int)f[1], (int)f[2]);
  if (g == G_DATETIME) buf[k++] = 'T';
  if (g != G_DATE) {
    k += snprintf(buf + k, sizeof buf - (size_t)k, "%02d:%02d:%02d", (int)f[3],
                  (int)f[4], (int)f[5]);
    if (f[6]) k += snprintf(buf + k, sizeof buf - (size_t)k, ".%06d", (int)f[6]);
  }
  return make_copy(d, DS_V_TEXT, buf, (size_t)k, res);
}

/* datetime.timedelta(days, seconds, microseconds) -> float seconds, as
 * total_seconds() computes it. */
static int py_timedelta(pk *d, const ds_value *it, size_t n, ds_value *res) {
  int64_t v[3] = {0, 0, 0};
  double fv[3] = {0, 0, 0};
  int all_int = 1;
  if (n > 3) return fail(d, "datetime.timedelta: too many arguments");
  for (size_t k = 0; k < n; k++) {
    if (arg_num(d, &it[k], &fv[k], "datetime.timedelta")) return -1;
    if (it[k].type == DS_V_FLOAT) all_int = 0;
    else v[k] = it[k].u.i;
    if (fabs(fv[k]) > 1e15) return fail(d, "datetime.timedelta: value out of range");
  }
  res->type = DS_V_FLOAT;
  if (all_int) {
    __int128 us = ((__int128)v[0] * 86400 + v[1]) * 1000000 + v[2];
    res->u.f = (double)us / 1e6;
  } else {
    res->u.f = fv[0] * 86400.0 + fv[1] + fv[2] / 1e6;
  }
  return 0;
}

/* ------------------------------------------------------------ globals */

static const struct {
  const char *module, *name;
  uint8_t g;
} allow_list[] = {
    {"numpy.core.multiarray", "_reconstruct", G_RECONSTRUCT},
    {"numpy._core.multiarray", "_reconstruct", G_RECONSTRUCT},
    {"numpy", "ndarray", G_NDARRAY},
    {"numpy", "dtype", G_DTYPE},
    {"numpy.core.multiarray", "scalar", G_SCALAR},
    {"numpy._core.multiarray", "scalar", G_SCALAR},
    {"numpy.core.numeric", "_frombuffer", G_FROMBUFFER},
    {"numpy._core.numeric", "_frombuffer", G_FROMBUFFER},
    {"builtins", "bytearray", G_BYTEARRAY},
    {"builtins", "bytes", G_BYTES},
    {"builtins", "complex", G_COMPLEX},
    {"builtins", "set", G_SET},
    {"builtins", "frozenset", G_FROZENSET},
    {"collections", "OrderedDict", G_ORDEREDDICT},
    {"datetime", "datetime", G_DATETIME},
    {"datetime", "date", G_DATE},
    {"datetime", "time", G_TIME},
    {"datetime", "timedelta", G_TIMEDELTA},
    {"_codecs", "encode", G_ENCODE},
};

/* 1 when p[0..n) equals the C string s. */
static int bytes_is(const uint8_t *p, size_t n, const char *s) {
  return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* Push the token of global module.name (exact allow-list lookup). */
static int push_global(pk *d, const ds_value *mod, const ds_value *name) {
  const uint8_t *m = mod->u.s.p;
  size_t ml = mod->u.s.n;
  if (d->proto < 3 && bytes_is(m, ml, "__builtin__")) { /* fix_imports */
    m = (const uint8_t *)"builtins";
    ml = 8;
  }
  pk_obj *o;
  if (push_new(d, K_GLOBAL, &o)) return -1;
  for (size_t k = 0; k < sizeof allow_list / sizeof *allow_list; k++)
    if (bytes_is(m, ml, allow_list[k].module) &&
        bytes_is(name->u.s.p, name->u.s.n, allow_list[k].name))
      o->gkind = allow_list[k].g;
  if (ml > SIZE_MAX / 2 || name->u.s.n > SIZE_MAX / 2) return fail(d, "global name too long");
  uint8_t *q = pk_alloc(d, ml + 1 + name->u.s.n);
  if (!q) return -1;
  memcpy(q, m, ml);
  q[ml] = '.';
  memcpy(q + ml + 1, name->u.s.p, name->u.s.n);
  o->out.type = DS_V_UNSUPPORTED;
  o->out.u.s.p = q;
  o->out.u.s.n = ml + 1 + name->u.s.n;
  return 0;
}

/* Push an opaque object named like global/object `from`. */
static int push_object(pk *d, const pk_obj *from) {
  pk_obj *o;
  if (push_new(d, K_OBJECT, &o)) return -1;
  o->out = from->out;
  return 0;
}

/* _reconstruct(numpy.ndarray, shape, typecode) -> an array for BUILD;
 * another class (an ndarray subclass) -> an opaque object named by it. */
static int np_reconstruct(pk *d, const ds_value *it, size_t n) {
  pk_obj *cls = n == 3 ? obj_of(&it[0]) : NULL;
  if (!cls || (cls->kind != K_GLOBAL && cls->kind != K_OBJECT))
    return fail(d, "numpy _reconstruct: expected (class, shape, typecode)");
  if (cls->kind == K_GLOBAL && cls->gkind == G_NDARRAY) return push_new(d, K_ARRAY, NULL);
  return push_object(d, cls);
}

/* REDUCE on an allow-listed global: build its value and push it. */
static int call_global(pk *d, const pk_obj *g, const ds_value *args) {
  ds_value *it, res;
  size_t n;
  if (arg_tuple(d, args, &it, &n, "REDUCE arguments")) return -1;
  memset(&res, 0, sizeof res);
  int rc;
  switch (g->gkind) {
    case G_RECONSTRUCT: return np_reconstruct(d, it, n);
    case G_NDARRAY: return push_object(d, g); /* only _reconstruct's argument */
    case G_DTYPE: rc = dtype_new(d, it, n, &res); break;
    case G_SCALAR: rc = np_scalar(d, it, n, &res); break;
    case G_FROMBUFFER: rc = np_frombuffer(d, it, n, &res); break;
    case G_BYTEARRAY: case G_BYTES: rc = py_bytes(d, it, n, &res); break;
    case G_COMPLEX: rc = py_complex(d, it, n, &res); break;
    case G_SET: rc = py_set(d, K_SET, it, n, &res); break;
    case G_FROZENSET: rc = py_set(d, K_FROZENSET, it, n, &res); break;
    case G_ORDEREDDICT: rc = py_ordereddict(d, it, n, &res); break;
    case G_DATETIME: case G_DATE: case G_TIME:
      rc = py_datetime(d, g->gkind, it, n, &res);
      break;
    case G_TIMEDELTA: rc = py_timedelta(d, it, n, &res); break;
    case G_ENCODE: rc = py_encode(d, it, n, &res); break;
    default: return push_object(d, g);
  }
  return rc ? -1 : push(d, &res);
}

/* ------------------------------------------------------------ memo */

/* memo_put when the slot is not the next free one or the memo is full. */
static int memo_put_slow(pk *d, size_t i) {
  if (!avail(d)) return underflow(d);
  if (i >= d->max_memo) return fail(d, "pickle memo index %zu exceeds the limit %zu", i, d->max_memo);
  if (i >= d->memo_cap) {
    void *arr = d->memo;
    if (grow_array(d, &arr, &d->memo_cap, i + 1, d->max_memo, sizeof(ds_value),
                   d->memo == d->memo_local, "memo"))
      return -1;
    d->memo = arr;
  }
  while (d->memo_len <= i) d->memo[d->memo_len++].type = (ds_vtype)PK_EMPTY;
  if ((int)d->memo[i].type == PK_EMPTY) d->memo_count++;
  d->memo[i] = d->st[d->sp - 1];
  return 0;
}

/* memo[i] = top of stack (appending to the memo is the fast case). */
static inline int memo_put(pk *d, size_t i) {
  if (i == d->memo_len && i < d->memo_cap && i < d->max_memo && d->sp > d->fence) {
    vcopy(&d->memo[d->memo_len++], &d->st[d->sp - 1]);
    d->memo_count++;
    return 0;
  }
  return memo_put_slow(d, i);
}

/* Push memo[i]. */
static inline int memo_get(pk *d, size_t i) {
  if (i >= d->memo_len || (int)d->memo[i].type == PK_EMPTY)
    return fail(d, "pickle memo key %zu is not defined", i);
  return push(d, &d->memo[i]);
}

/* ------------------------------------------------------------ marks */

/* MARK: remember the stack height. */
static int mark_push(pk *d) {
  if (d->nmarks == d->marks_cap) {
    void *arr = d->marks;
    if (grow_array(d, &arr, &d->marks_cap, d->nmarks + 1, d->max_stack, sizeof(size_t),
                   d->marks == d->marks_local, "MARK stack"))
      return -1;
    d->marks = arr;
  }
  d->marks[d->nmarks++] = d->sp;
  d->fence = d->sp;
  return 0;
}

/* Pop the last MARK: *k gets its stack height. */
static int mark_pop(pk *d, size_t *k) {
  if (!d->nmarks) return fail(d, "pickle opcode 0x%02x without a MARK", cur_op(d));
  *k = d->marks[--d->nmarks];
  d->fence = d->nmarks ? d->marks[d->nmarks - 1] : 0;
  return 0;
}

/* ------------------------------------------------------------ opcodes */

/* Read a little-endian unsigned argument of k bytes. */
static inline int read_uint(pk *d, size_t k, uint64_t *v) {
  if ((size_t)(d->end - d->p) < k) return truncated(d);
  *v = ds_load_uint(d->p, (unsigned)k, 0);
  d->p += k;
  return 0;
}

/* Push a value of a simple type (NULL, BOOL, INT). */
static inline int push_simple(pk *d, int type, int64_t i) {
  return ds_pickle_put_int(push_slot(d), type, i);
}

/* Push an INT. */
static inline int push_int(pk *d, int64_t i) { return push_simple(d, DS_V_INT, i); }

/* The n payload bytes announced by a length prefix of k bytes. */
static inline int read_len(pk *d, size_t k, const uint8_t **s, size_t *n) {
  uint64_t len;
  if (read_uint(d, k, &len)) return -1;
  if (len > (uint64_t)(d->end - d->p)) return truncated(d);
  *s = d->p;
  *n = (size_t)len;
  d->p += len;
  return 0;
}

/* SHORT_BINUNICODE / BINUNICODE / BINUNICODE8. */
static inline int op_unicode(pk *d, size_t k) {
  const uint8_t *s;
  size_t n;
  ds_value *t;
  if (read_len(d, k, &s, &n) || !(t = push_slot(d))) return -1;
  return make_text(d, s, n, t);
}

/* SHORT_BINBYTES / BINBYTES / BINBYTES8 / BYTEARRAY8. */
static int op_bytes(pk *d, size_t k) {
  const uint8_t *s;
  size_t n;
  ds_value *t;
  if (read_len(d, k, &s, &n) || !(t = push_slot(d))) return -1;
  t->type = DS_V_BYTES;
  t->u.s.p = s;
  t->u.s.n = n;
  return 0;
}

/* LONG1 / LONG4. */
static int op_long(pk *d, size_t k) {
  uint64_t len;
  if (read_uint(d, k, &len)) return -1;
  if (k == 4 && (len & 0x80000000u)) return fail(d, "LONG4 with a negative length");
  if (len > (uint64_t)(d->end - d->p)) return truncated(d);
  if (len > d->max_long)
    return fail(d, "integer of %llu bytes exceeds the limit of %zu", (unsigned long long)len,
                d->max_long);
  ds_value v = {0};
  if (make_long(d, d->p, (size_t)len, &v)) return -1;
  d->p += len;
  return push(d, &v);
}

/* BINFLOAT: a big-endian double. */
static int op_binfloat(pk *d) {
  if (d->end - d->p < 8) return truncated(d);
  d->p += 8;
  return ds_pickle_put_binfloat(push_slot(d), d->p - 8);
}

/* FRAME: only check that the frame fits in the input. */
static int op_frame(pk *d) {
  uint64_t len;
  if (read_uint(d, 8, &len)) return -1;
  if (len > (uint64_t)(d->end - d->p)) return truncated(d);
  return 0;
}

/* The object at stack slot i that APPENDS/SETITEMS/ADDITEMS extend. */
static pk_obj *target_at(pk *d, size_t i, int kind, const char *what) {
  pk_obj *o = obj_of(&d->st[i]);
  if (o && (o->kind == kind || o->kind == K_OBJECT)) return o;
  fail_(d, "%s on a value that is not a %s", what,
       kind == K_LIST ? "list" : kind == K_DICT ? "dict" : "set");
  return NULL;
}

/* APPEND / SETITEM: pop k values into the object below them. */
static int op_add_one(pk *d, size_t k, int kind, const char *what) {
  if (avail(d) < k + 1) return underflow(d);
  pk_obj *o = target_at(d, d->sp - k - 1, kind, what);
  if (!o) return -1;
  d->sp -= k;
  return o->kind == K_OBJECT ? 0 : add_items(d, o, d->st + d->sp, k);
}

/* APPENDS / SETITEMS / ADDITEMS: pop the values above the MARK into the
 * object below it. */
static int op_add_marked(pk *d, int kind, const char *what) {
  size_t k;
  if (mark_pop(d, &k)) return -1;
  if (k <= d->fence) return underflow(d);
  size_t cnt = d->sp - k;
  if (kind == K_DICT && cnt % 2) return fail(d, "odd number of items for SETITEMS");
  pk_obj *o = target_at(d, k - 1, kind, what);
  if (!o) return -1;
  d->sp = k;
  return o->kind == K_OBJECT ? 0 : add_items(d, o, d->st + k, cnt);
}

/* TUPLE / FROZENSET: the values above the MARK become a new object. */
static int op_collect(pk *d, int kind) {
  size_t k;
  if (mark_pop(d, &k)) return -1;
  pk_obj *o = obj_with(d, kind, d->st + k, d->sp - k);
  if (!o) return -1;
  d->sp = k;
  set_ref(&d->st[d->sp++], o); /* k slots were just freed */
  return 0;
}

/* TUPLE1 / TUPLE2 / TUPLE3. */
static int op_tuple_n(pk *d, size_t k) {
  if (avail(d) < k) return underflow(d);
  pk_obj *o = obj_with(d, K_TUPLE, d->st + d->sp - k, k);
  if (!o) return -1;
  d->sp -= k;
  set_ref(&d->st[d->sp++], o);
  return 0;
}

/* STACK_GLOBAL: pop name and module (both str, checked as popped). */
static int op_stack_global(pk *d) {
  if (avail(d) < 2) return underflow(d);
  ds_value name = d->st[--d->sp], mod = d->st[--d->sp];
  if (name.type != DS_V_TEXT || mod.type != DS_V_TEXT)
    return fail(d, "STACK_GLOBAL requires str");
  return push_global(d, &mod, &name);
}

/* GLOBAL: "module\nname\n". */
static int op_global(pk *d) {
  ds_value mod, name;
  for (int k = 0; k < 2; k++) {
    const uint8_t *nl = memchr(d->p, '\n', (size_t)(d->end - d->p));
    if (!nl) return truncated(d);
    if (make_text(d, d->p, (size_t)(nl - d->p), k ? &name : &mod)) return -1;
    d->p = nl + 1;
  }
  return push_global(d, &mod, &name);
}

/* REDUCE: pop args and callable; push what calling it would give. */
static int op_reduce(pk *d) {
  if (avail(d) < 2) return underflow(d);
  d->sp -= 2;
  ds_value args = d->st[d->sp + 1];
  pk_obj *f = obj_of(&d->st[d->sp]);
  if (!f || (f->kind != K_GLOBAL && f->kind != K_OBJECT))
    return fail(d, "REDUCE on a value that is not a global");
  if (f->kind == K_OBJECT || f->gkind == G_OTHER) return push_object(d, f);
  return call_global(d, f, &args);
}

/* NEWOBJ / NEWOBJ_EX: pop k arguments and the class; push an opaque
 * object of that class. */
static int op_newobj(pk *d, size_t k) {
  if (avail(d) < k + 1) return underflow(d);
  d->sp -= k + 1;
  pk_obj *cls = obj_of(&d->st[d->sp]);
  if (!cls || (cls->kind != K_GLOBAL && cls->kind != K_OBJECT))
    return fail(d, "NEWOBJ on a value that is not a class");
  return push_object(d, cls);
}

/* BUILD: pop the state and apply it to the object on top. */
static int op_build(pk *d) {
  if (avail(d) < 2) return underflow(d);
  ds_value state = d->st[--d->sp];
  pk_obj *o = obj_of(&d->st[d->sp - 1]);
  int kind = o ? o->kind : -1;
  if (kind == K_OBJECT || kind == K_DICT) return 0; /* attributes: dropped */
  if (kind == K_DTYPE) return dtype_setstate(d, o, &state);
  if (kind == K_ARRAY || kind == K_NDARRAY || kind == K_OBJARRAY)
    return array_setstate(d, o, &state);
  return fail(d, "BUILD on a value that takes no state");
}

/* POP: drop the top value, or the last MARK when it is on top. */
static int op_pop(pk *d) {
  if (d->nmarks && d->marks[d->nmarks - 1] == d->sp) {
    size_t k;
    return mark_pop(d, &k);
  }
  if (!avail(d)) return underflow(d);
  d->sp--;
  return 0;
}

/* POP_MARK: drop everything down to the last MARK. */
static int op_pop_mark(pk *d) {
  size_t k;
  if (mark_pop(d, &k)) return -1;
  d->sp = k;
  return 0;
}

/* DUP: push the top value again. */
static int op_dup(pk *d) {
  if (!avail(d)) return underflow(d);
  ds_value *t = push_slot(d); /* may move the stack: index afterwards */
  if (!t) return -1;
  vcopy(t, &d->st[d->sp - 2]);
  return 0;
}

/* STOP: the single value left is the result. */
static int op_stop(pk *d, ds_value *out) {
  if (d->nmarks) return fail(d, "STOP with an open MARK");
  if (d->sp != 1)
    return d->sp ? fail(d, "STOP with %zu values on the stack", d->sp) : underflow(d);
  *out = d->st[0];
  return 0;
}

/* One opcode (not STOP). */
static int step(pk *d, uint8_t op) {
  uint64_t x;
  switch (op) {
    case 0x80: /* PROTO */
      if (read_uint(d, 1, &x)) return -1;
      if (x > PK_HIGHEST_PROTOCOL) return fail(d, "unsupported pickle protocol %d", (int)x);
      d->proto = (int)x;
      return 0;
    case 0x95: return op_frame(d);
    case '(': return mark_push(d);
    case ']': return push_new(d, K_LIST, NULL);
    case '}': return push_new(d, K_DICT, NULL);
    case 0x8F: return push_new(d, K_SET, NULL);
    case ')': return push_new(d, K_TUPLE, NULL);
    case 'a': return op_add_one(d, 1, K_LIST, "APPEND");
    case 'e': return op_add_marked(d, K_LIST, "APPENDS");
    case 's': return op_add_one(d, 2, K_DICT, "SETITEM");
    case 'u': return op_add_marked(d, K_DICT, "SETITEMS");
    case 0x90: return op_add_marked(d, K_SET, "ADDITEMS");
    case 0x91: return op_collect(d, K_FROZENSET);
    case 't': return op_collect(d, K_TUPLE);
    case 0x85: return op_tuple_n(d, 1);
    case 0x86: return op_tuple_n(d, 2);
    case 0x87: return op_tuple_n(d, 3);
    case 'K': return read_uint(d, 1, &x) || push_int(d, (int64_t)x);
    case 'M': return read_uint(d, 2, &x) || push_int(d, (int64_t)x);
    case 'J': return read_uint(d, 4, &x) || push_int(d, (int32_t)(uint32_t)x);
    case 0x8A: return op_long(d, 1);
    case 0x8B: return op_long(d, 4);
    case 'G': return op_binfloat(d);
    case 0x88: return push_simple(d, DS_V_BOOL, 1);
    case 0x89: return push_simple(d, DS_V_BOOL, 0);
    case 'N': return push_simple(d, DS_V_NULL, 0);
    case 0x8C: return op_unicode(d, 1);
    case 'X': return op_unicode(d, 4);
    case 0x8D: return op_unicode(d, 8);
    case 'C': return op_bytes(d, 1);
    case 'B': return op_bytes(d, 4);
    case 0x8E: case 0x96: return op_bytes(d, 8);
    case 0x94: return memo_put(d, d->memo_count);
    case 'h': return read_uint(d, 1, &x) || memo_get(d, (size_t)x);
    case 'j': return read_uint(d, 4, &x) || memo_get(d, (size_t)x);
    case 'q': return read_uint(d, 1, &x) || memo_put(d, (size_t)x);
    case 'r': return read_uint(d, 4, &x) || memo_put(d, (size_t)x);
    case 0x93: return op_stack_global(d);
    case 'c': return op_global(d);
    case 'R': return op_reduce(d);
    case 'b': return op_build(d);
    case 0x81: return op_newobj(d, 1);
    case 0x92: return op_newobj(d, 2);
    case '0': return op_pop(d);
    case '1': return op_pop_mark(d);
    case '2': return op_dup(d);
  }
  return fail(d, "unsupported pickle opcode 0x%02x", op);
}

/* Run the opcodes up to STOP; *out gets the (unresolved) result. */
static int run(pk *d, ds_value *out) {
  for (;;) {
    if (d->p >= d->end) {
      d->op_at = (size_t)(d->end - d->p0);
      return fail(d, "pickle truncated (no STOP opcode)");
    }
    d->op_at = (size_t)(d->p - d->p0);
    uint8_t op = *d->p++;
    if (op == '.') return op_stop(d, out);
    if (step(d, op)) return -1;
  }
}

/* ------------------------------------------------------------ resolve */

/* Bytes a finished inline value counts for in the expanded size. */
static inline uint64_t leaf_weight(const ds_value *v) {
  switch ((int)v->type) {
    case DS_V_TEXT: case DS_V_BYTES: case DS_V_BIGINT: case DS_V_NDARRAY:
    case DS_V_UNSUPPORTED:
      return sizeof(ds_value) + v->u.s.n;
  }
  return sizeof(ds_value);
}

/* Add w to o's expanded size, failing past max_bytes. */
static inline int add_weight(pk *d, pk_obj *o, uint64_t w) {
  o->weight += w;
  if (o->weight > d->max_bytes)
    return ds_err(d->err, "pickle value too large: with shared references expanded it "
                          "exceeds %zu bytes%s", d->max_bytes, CAP_NOTE(d));
  return 0;
}

/* The finished value of an object whose items are all resolved. */
static int finish(pk *d, pk_obj *o) {
  ds_value *v = &o->out;
  switch (o->kind) {
    case K_LIST: v->type = DS_V_LIST; break;
    case K_TUPLE: v->type = DS_V_TUPLE; break;
    case K_SET: case K_FROZENSET: v->type = DS_V_SET; break;
    case K_DICT:
      v->type = DS_V_MAP;
      v->u.list.items = o->items;
      v->u.list.n = o->n / 2;
      return add_weight(d, o, sizeof(ds_value));
    case K_OBJARRAY: *v = o->items[0]; return 0;
    case K_ARRAY: return ds_err(d->err, "numpy array without its state (no BUILD)");
    case K_DTYPE: {
      ds_buf b = {0};
      int rc = dtype_text(d, &b, o->dt) || make_copy(d, DS_V_TEXT, b.data, b.len, v);
      ds_buf_free(&b);
      if (rc) return -1;
      return add_weight(d, o, leaf_weight(v));
    }
    default: /* globals, opaque objects, built arrays: out is preset */
      return add_weight(d, o, leaf_weight(v));
  }
  v->u.list.items = o->items;
  v->u.list.n = o->n;
  return add_weight(d, o, sizeof(ds_value));
}

/* Turn every reference reachable from *v into its finished value. */
static int resolve(pk *d, ds_value *v) {
  pk_obj *root = obj_of(v);
  if (!root) return 0;
  pk_frame local[PK_LOCAL_FRAMES], *fr = local;
  size_t nf = 0, cap = PK_LOCAL_FRAMES;
  int rc = 0;
  if (root->state != S_DONE) {
    root->state = S_BUSY;
    fr[nf++] = (pk_frame){root, 0};
  }
  while (nf && !rc) {
    pk_frame *f = &fr[nf - 1];
    pk_obj *o = f->o;
    /* inline values: one pass, one weight update */
    size_t i = f->i;
    uint64_t w = 0;
    while (i < o->n && (int)o->items[i].type != PK_REF) w += leaf_weight(&o->items[i++]);
    f->i = i;
    if (w && (rc = add_weight(d, o, w))) break;
    if (f->i < o->n) {
      ds_value *it = &o->items[f->i++];
      pk_obj *c = obj_of(it);
      if (c->state == S_DONE) {
        *it = c->out;
        rc = add_weight(d, o, c->weight);
      } else if (c->state == S_BUSY) {
        rc = ds_err(d->err, "recursive structure: a pickled container contains itself");
      } else if (nf >= (size_t)d->max_depth) {
        rc = ds_err(d->err, "pickle value nested deeper than %d levels", d->max_depth);
      } else {
        if (nf == cap) {
          size_t nc = cap * 2;
          pk_frame *q = fr == local ? malloc(nc * sizeof *q) : realloc(fr, nc * sizeof *q);
          if (!q) {
            rc = ds_err(d->err, "out of memory");
            break;
          }
          if (fr == local) memcpy(q, local, sizeof local);
          fr = q;
          cap = nc;
        }
        c->state = S_BUSY;
        fr[nf++] = (pk_frame){c, 0};
      }
      continue;
    }
    rc = finish(d, o);
    o->state = S_DONE;
    if (--nf && !rc) {
      pk_frame *p = &fr[nf - 1];
      p->o->items[p->i - 1] = o->out;
      rc = add_weight(d, p->o, o->weight);
    }
  }
  if (fr != local) free(fr);
  if (!rc) *v = root->out;
  return rc;
}

/* ------------------------------------------------------------ entry */

/* Decode p[0..n): run the opcodes, then resolve the result. */
int ds_pickle_decode(const uint8_t *p, size_t n, const ds_pickle_limits *lim,
                     ds_arena *a, ds_value *out, char **err) {
  pk dec, *d = &dec;
  d->p0 = d->p = p;
  d->end = p + n;
  d->op_at = 0;
  d->proto = 0;
  d->a = a;
  d->err = err;
  d->used = 0;
  d->chunk = NULL;
  d->chunk_left = d->chunk_size = 0;
  d->max_bytes = lim && lim->max_bytes ? lim->max_bytes
                 : a->limit ? a->limit : PK_DEF_MAX_BYTES; /* max_value_bytes */
  d->max_depth = lim && lim->max_depth > 0 ? lim->max_depth : PK_DEF_MAX_DEPTH;
  d->max_memo = lim && lim->max_memo ? lim->max_memo : PK_DEF_MAX_MEMO;
  d->max_stack = lim && lim->max_stack ? lim->max_stack : PK_DEF_MAX_STACK;
  d->max_long = lim && lim->max_long ? lim->max_long : PK_DEF_MAX_LONG;
  d->st = d->st_local;
  d->sp = 0;
  d->st_cap = PK_LOCAL_STACK;
  d->marks = d->marks_local;
  d->nmarks = 0;
  d->marks_cap = PK_LOCAL_MARKS;
  d->fence = 0;
  d->memo = d->memo_local;
  d->memo_len = d->memo_cap = d->memo_count = 0;
  d->memo_cap = PK_LOCAL_MEMO;
  ds_value res;
  int rc = run(d, &res) || resolve(d, &res);
  if (!rc) *out = res;
  if (d->st != d->st_local) free(d->st);
  if (d->marks != d->marks_local) free(d->marks);
  if (d->memo != d->memo_local) free(d->memo);
  return rc ? -1 : 0;
}
