/* pickle_write.c - the protocol-4 pickle encoder of pickle_write.h.
 *
 * Opcodes are chosen the way CPython's pickler chooses them (integers:
 * BININT1 / BININT2 / BININT / LONG1 / LONG4 with the minimal
 * two's-complement length; str: SHORT_BINUNICODE / BINUNICODE /
 * BINUNICODE8; bytes likewise; floats BINFLOAT), so CPython and our own
 * decoder read back the same values. Memo use is our own: only strings of
 * at most PKW_MEMO_LEN bytes and the three numpy globals are memoized. */
#include "decoders/pickle_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"
#include "decoders/pickle.h"

#define PKW_BATCH 1000     /* items per MARK ... APPENDS, as CPython */
#define PKW_MEMO_LEN 64    /* longest string worth memoizing */
#define PKW_MAX_DIGITS 20000 /* decimal digits of one big integer */

enum {
  OP_MARK = '(', OP_STOP = '.', OP_BININT = 'J', OP_BININT1 = 'K',
  OP_BININT2 = 'M', OP_NONE = 'N', OP_BINFLOAT = 'G', OP_BINUNICODE = 'X',
  OP_BINBYTES = 'B', OP_SHORT_BINBYTES = 'C', OP_REDUCE = 'R',
  OP_APPEND = 'a', OP_APPENDS = 'e', OP_BUILD = 'b', OP_BINGET = 'h',
  OP_LONG_BINGET = 'j', OP_SETITEM = 's', OP_SETITEMS = 'u', OP_TUPLE = 't',
  OP_EMPTY_TUPLE = ')', OP_EMPTY_LIST = ']', OP_EMPTY_DICT = '}',
  OP_PROTO = 0x80, OP_TUPLE1 = 0x85, OP_TUPLE2 = 0x86, OP_TUPLE3 = 0x87,
  OP_NEWTRUE = 0x88, OP_NEWFALSE = 0x89, OP_LONG1 = 0x8a, OP_LONG4 = 0x8b,
  OP_SHORT_BINUNICODE = 0x8c, OP_BINUNICODE8 = 0x8d, OP_BINBYTES8 = 0x8e,
  OP_STACK_GLOBAL = 0x93, OP_MEMOIZE = 0x94, OP_FRAME = 0x95
};

/* One memoized string: its bytes in p->keys[off, off+len). */
struct pkw_slot {
  uint64_t hash;
  uint32_t off, len;
  uint32_t idx;   /* memo index + 1; 0 = empty slot */
};

/* What an item may undo: everything list_add changes. */
typedef struct pkw_save {
  size_t len, keys_len, used, batch, items;
  uint32_t memo_next, g_reconstruct, g_ndarray, g_dtype, g_tuple0;
} pkw_save;

static int encode(ds_pickler *p, const ds_value *v, int depth, char **err);

/* ---- small writers -------------------------------------------------- */

/* Where the next n bytes go (exactly n, so a buffer's max still holds),
 * or NULL without memory; the caller writes them and adds n to len. Most
 * calls only compare: the buffer grows by doubling. */
static inline uint8_t *room(ds_pickler *p, size_t n) {
  ds_buf *b = p->out;
  if (b->cap - b->len < n &&
      (n > SIZE_MAX - b->len || ds_buf_reserve(b, b->len + n)))
    return NULL;
  return b->data + b->len;
}

/* Append one opcode byte. */
static inline int op(ds_pickler *p, int code) {
  uint8_t *w = room(p, 1);
  if (!w) return -1;
  *w = (uint8_t)code;
  p->out->len++;
  return 0;
}

/* Append an opcode and an n-byte little-endian argument. */
static inline int op_le(ds_pickler *p, int code, uint64_t arg, int n) {
  uint8_t *w = room(p, (size_t)n + 1);
  if (!w) return -1;
  w[0] = (uint8_t)code;
  for (int i = 0; i < n; i++) w[1 + i] = (uint8_t)(arg >> (8 * i));
  p->out->len += (size_t)n + 1;
  return 0;
}

/* Append an opcode with its little-endian length (1, 4 or 8 bytes as
 * `op1` / `op4` / `op8` say: the str and bytes forms) and the n bytes of
 * s, in one step. */
static int op_sized(ds_pickler *p, int op1, int op4, int op8, const uint8_t *s,
                    size_t n) {
  int k = n < 256 ? 1 : n <= 0xffffffffu ? 4 : 8;
  if ((size_t)k + 1 > SIZE_MAX - n) return -1;
  uint8_t *w = room(p, (size_t)k + 1 + n);
  if (!w) return -1;
  w[0] = (uint8_t)(k == 1 ? op1 : k == 4 ? op4 : op8);
  for (int i = 0; i < k; i++) w[1 + i] = (uint8_t)((uint64_t)n >> (8 * i));
  if (n) memcpy(w + 1 + k, s, n);
  p->out->len += (size_t)k + 1 + n;
  return 0;
}

/* MEMOIZE, returning the index it gave (+1) in *idx. */
static int memoize(ds_pickler *p, uint32_t *idx) {
  if (op(p, OP_MEMOIZE)) return -1;
  *idx = ++p->memo_next;
  return 0;
}

/* BINGET / LONG_BINGET of memo index idx-1. */
static int get(ds_pickler *p, uint32_t idx) {
  return idx - 1 < 256 ? op_le(p, OP_BINGET, idx - 1, 1)
                       : op_le(p, OP_LONG_BINGET, idx - 1, 4);
}

static int oom(char **err) { return ds_err(err, "out of memory"); }

/* ---- string memo ---------------------------------------------------- */

static uint64_t load64(const uint8_t *s) {
  uint64_t w;
  memcpy(&w, s, 8);
  return w;
}

static uint64_t load32(const uint8_t *s) {
  uint32_t w;
  memcpy(&w, s, 4);
  return w;
}

/* A hash of a short string, a word at a time (the last word overlapping):
 * only for the table's slots, equal strings are compared byte by byte. */
static uint64_t hash_bytes(const uint8_t *s, size_t n) {
  const uint64_t m = 0x9E3779B97F4A7C15ull;
  uint64_t h = (n + 1) * m;
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) h = (h ^ load64(s + i)) * m;
    h = (h ^ load64(s + n - 8)) * m;
  } else if (n >= 4) {
    h = (h ^ (load32(s) | load32(s + n - 4) << 32)) * m;
  } else if (n) {
    h = (h ^ (s[0] | (uint64_t)s[n / 2] << 8 | (uint64_t)s[n - 1] << 16)) * m;
  }
  return h ^ (h >> 31);
}

/* a[0..n) == b[0..n) for the short strings of the memo, a word at a time
 * (the last word overlapping) rather than a call to memcmp. */
static int same_bytes(const uint8_t *a, const uint8_t *b, size_t n) {
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8)
      if (load64(a + i) != load64(b + i)) return 0;
    return load64(a + n - 8) == load64(b + n - 8);
  }
  if (n >= 4)
    return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* The slot holding s[0..n), or the empty slot where it belongs. */
static pkw_slot *memo_find(ds_pickler *p, const uint8_t *s, size_t n,
                           uint64_t h) {
  size_t mask = p->cap - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    pkw_slot *sl = &p->slots[i];
    if (!sl->idx) return sl;
    if (sl->hash == h && sl->len == n &&
        same_bytes(p->keys.data + sl->off, s, n))
      return sl;
  }
}

/* Grow the table to twice its size (or 64 slots), keeping entries whose
 * memo index is below `keep_below` (+1). */
static int memo_rehash(ds_pickler *p, size_t cap, uint32_t keep_below) {
  pkw_slot *old = p->slots;
  size_t oldcap = p->cap;
  pkw_slot *ns = calloc(cap, sizeof *ns);
  if (!ns) return -1;
  p->slots = ns;
  p->cap = cap;
  p->used = 0;
  for (size_t i = 0; i < oldcap; i++) {
    if (!old[i].idx || old[i].idx > keep_below) continue;
    pkw_slot *sl = memo_find(p, p->keys.data + old[i].off, old[i].len,
                             old[i].hash);
    *sl = old[i];
    p->used++;
  }
  free(old);
  return 0;
}

/* Forget every memo entry (a new pickle starts). */
static void memo_reset(ds_pickler *p) {
  if (p->slots) memset(p->slots, 0, p->cap * sizeof *p->slots);
  p->used = 0;
  p->keys.len = 0;
  p->memo_next = 0;
  p->g_reconstruct = p->g_ndarray = p->g_dtype = p->g_tuple0 = 0;
}

/* ---- scalars -------------------------------------------------------- */

/* Python's encode_long: little-endian two's complement of the number whose
 * magnitude is mag[0..n) (little-endian), at the minimal length. */
static int put_long(ds_pickler *p, int neg, const uint8_t *mag, size_t n) {
  while (n && !mag[n - 1]) n--;
  if (!n) return op_le(p, OP_LONG1, 0, 1);
  unsigned top = mag[n - 1], bits = 0;
  while (top) { bits++; top >>= 1; }
  size_t bitlen = (n - 1) * 8 + bits, nbytes = (bitlen >> 3) + 1;
  uint8_t *b = malloc(nbytes);
  if (!b) return -1;
  unsigned carry = 1;
  for (size_t i = 0; i < nbytes; i++) {
    unsigned m = i < n ? mag[i] : 0;
    if (neg) {
      unsigned x = (uint8_t)~m + carry;
      b[i] = (uint8_t)x;
      carry = x >> 8;
    } else {
      b[i] = (uint8_t)m;
    }
  }
  if (neg && nbytes > 1 && b[nbytes - 1] == 0xff && (b[nbytes - 2] & 0x80))
    nbytes--;
  int rc = nbytes < 256 ? op_le(p, OP_LONG1, nbytes, 1)
                        : op_le(p, OP_LONG4, nbytes, 4);
  if (!rc) rc = ds_buf_append(p->out, b, nbytes);
  free(b);
  return rc;
}

/* An integer given as sign and 64-bit magnitude. */
static int put_int_mag(ds_pickler *p, int neg, uint64_t mag) {
  if (!neg && mag <= 0xff) return op_le(p, OP_BININT1, mag, 1);
  if (!neg && mag <= 0xffff) return op_le(p, OP_BININT2, mag, 2);
  if ((!neg && mag <= 0x7fffffff) || (neg && mag <= 0x80000000u))
    return op_le(p, OP_BININT, neg ? (uint32_t)(0u - (uint32_t)mag)
                                   : (uint32_t)mag, 4);
  uint8_t m[8];
  for (int i = 0; i < 8; i++) m[i] = (uint8_t)(mag >> (8 * i));
  return put_long(p, neg, m, 8);
}

static int put_int(ds_pickler *p, int64_t i) {
  return i < 0 ? put_int_mag(p, 1, (uint64_t)0 - (uint64_t)i)
               : put_int_mag(p, 0, (uint64_t)i);
}

/* A BIGINT: decimal digits "-?[0-9]+" to a magnitude in base 256. */
static int put_bigint(ds_pickler *p, const uint8_t *s, size_t n, char **err) {
  int64_t small;
  int fits = ds_bigint_to_i64(s, n, &small);
  if (fits < 0) return ds_err(err, "malformed big integer");
  if (fits) return put_int(p, small) ? oom(err) : 0;
  int neg = s[0] == '-';
  size_t i = neg, digits = n - i;
  if (digits > PKW_MAX_DIGITS)
    return ds_err(err, "integer of %zu digits is too large", digits);
  size_t cap = digits / 2 + 2, len = 0;
  uint8_t *mag = calloc(cap, 1);
  if (!mag) return oom(err);
  for (; i < n; i++) {
    unsigned carry = (unsigned)(s[i] - '0');
    for (size_t k = 0; k < len; k++) {
      unsigned x = mag[k] * 10u + carry;
      mag[k] = (uint8_t)x;
      carry = x >> 8;
    }
    while (carry) { mag[len++] = (uint8_t)carry; carry >>= 8; }
  }
  int rc = put_long(p, neg, mag, len);
  free(mag);
  return rc ? oom(err) : 0;
}

static int put_float(ds_pickler *p, double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  uint8_t *w = room(p, 9);
  if (!w) return -1;
  w[0] = OP_BINFLOAT;
  for (int i = 0; i < 8; i++) w[1 + i] = (uint8_t)(u >> (56 - 8 * i));
  p->out->len += 9;
  return 0;
}

/* A str (UTF-8 checked), memoized when short: BINGET if seen before (the
 * same bytes as a str already checked, so not checked again). */
static int put_str(ds_pickler *p, const uint8_t *s, size_t n, char **err) {
  pkw_slot *sl = NULL;
  uint64_t h = 0;
  if (n <= PKW_MEMO_LEN) {
    if ((p->used + 1) * 2 > p->cap &&
        memo_rehash(p, p->cap ? p->cap * 2 : 64, UINT32_MAX))
      return oom(err);
    h = hash_bytes(s, n);
    sl = memo_find(p, s, n, h);
    if (sl->idx) return get(p, sl->idx) ? oom(err) : 0;
  }
  if (!ds_utf8_valid(s, n))
    return ds_err(err, "text is not valid UTF-8 (a Python str must be)");
  if (op_sized(p, OP_SHORT_BINUNICODE, OP_BINUNICODE, OP_BINUNICODE8, s, n))
    return oom(err);
  if (!sl) return 0;
  size_t off = p->keys.len;
  if (ds_buf_append(&p->keys, s, n)) return oom(err);
  uint32_t idx;
  if (memoize(p, &idx)) return oom(err);
  *sl = (pkw_slot){h, (uint32_t)off, (uint32_t)n, idx};
  p->used++;
  return 0;
}

/* A C string as str (ASCII names and dtype texts). */
static int put_cstr(ds_pickler *p, const char *s, char **err) {
  return put_str(p, (const uint8_t *)s, strlen(s), err);
}

static int put_bytes(ds_pickler *p, const uint8_t *s, size_t n) {
  return op_sized(p, OP_SHORT_BINBYTES, OP_BINBYTES, OP_BINBYTES8, s, n);
}

/* ---- containers ----------------------------------------------------- */

/* A dict key must be a hashable scalar for pickle.loads to rebuild it. */
static int check_key(const ds_value *k, char **err) {
  switch (k->type) {
    case DS_V_NULL: case DS_V_BOOL: case DS_V_INT: case DS_V_UINT:
    case DS_V_BIGINT: case DS_V_FLOAT: case DS_V_TEXT: case DS_V_BYTES:
      return 0;
    default:
      return ds_err(err, "a dict key must be a string, number, bytes, bool "
                         "or None");
  }
}

/* A list of n items (tuples and sets too), or a dict of n key/value pairs
 * (items then holds 2n values), in batches of PKW_BATCH as pickle writes
 * them: MARK, the items, APPENDS / SETITEMS (APPEND / SETITEM for one). */
static int put_container(ds_pickler *p, int dict, const ds_value *items, size_t n,
                         int depth, char **err) {
  if (depth >= DS_PICKLE_MAX_DEPTH) /* the readers' limit: this is level depth + 1 */
    return ds_err(err, "containers nested deeper than %d levels (an atlas block's "
                       "list counts as one), more than the pickle reader takes",
                  DS_PICKLE_MAX_DEPTH);
  if (op(p, dict ? OP_EMPTY_DICT : OP_EMPTY_LIST)) return oom(err);
  for (size_t i = 0; i < n; i += PKW_BATCH) {
    size_t k = n - i < PKW_BATCH ? n - i : PKW_BATCH;
    if (k > 1 && op(p, OP_MARK)) return oom(err);
    for (size_t j = 0; j < k; j++) {
      const ds_value *item = dict ? &items[2 * (i + j)] : &items[i + j];
      if ((dict && check_key(item, err)) || encode(p, item, depth + 1, err) ||
          (dict && encode(p, item + 1, depth + 1, err)))
        return -1;
    }
    int end = dict ? (k > 1 ? OP_SETITEMS : OP_SETITEM) : (k > 1 ? OP_APPENDS : OP_APPEND);
    if (op(p, end)) return oom(err);
  }
  return 0;
}

/* ---- numpy arrays --------------------------------------------------- */

/* Push the global module.name, memoized in *slot for the next use. */
static int put_global(ds_pickler *p, const char *module, const char *name,
                      uint32_t *slot, char **err) {
  if (*slot) return get(p, *slot) ? oom(err) : 0;
  if (put_cstr(p, module, err) || put_cstr(p, name, err)) return -1;
  if (op(p, OP_STACK_GLOBAL) || memoize(p, slot)) return oom(err);
  return 0;
}

/* A tuple of the n small ints dims (n of 0..3 use the short opcodes). */
static int put_int_tuple(ds_pickler *p, const uint64_t *dims, int n) {
  if (n == 0) return op(p, OP_EMPTY_TUPLE);
  if (n > 3 && op(p, OP_MARK)) return -1;
  for (int i = 0; i < n; i++)
    if (put_int_mag(p, 0, dims[i])) return -1;
  return op(p, n == 1 ? OP_TUPLE1 : n == 2 ? OP_TUPLE2 : n == 3 ? OP_TUPLE3
                                                                : OP_TUPLE);
}

static const char *const UNIT_NAMES[] = {"Y", "M", "W", "D", "h", "m", "s",
                                         "ms", "us", "ns", "ps", "fs", "as"};

/* numpy.dtype(typestr, False, True) and its BUILD state, as
 * dtype.__reduce__ gives them. */
static int put_dtype(ds_pickler *p, const ds_npy *a, char **err) {
  char typestr[32];
  int64_t elsize = -1, align = -1, flags = 0;
  switch (a->kind) {
    case 'b': case 'i': case 'u': case 'f': case 'c': case 'M': case 'm':
      snprintf(typestr, sizeof typestr, "%c%u", a->kind, a->itemsize);
      break;
    case 'S':
      snprintf(typestr, sizeof typestr, "S%u", a->itemsize);
      elsize = a->itemsize, align = 1;
      break;
    case 'U':
      snprintf(typestr, sizeof typestr, "U%u", a->itemsize / 4);
      elsize = a->itemsize, align = 4, flags = 8;
      break;
    default:
      return ds_err(err, "an array of dtype '%s' cannot be written (only "
                         "bool, numbers, S, U, datetime64 and timedelta64)",
                    a->descr);
  }
  int dt = a->kind == 'M' || a->kind == 'm';
  if (dt && (a->dt_unit < 0 || a->dt_unit > DS_NPY_UNIT_as))
    return ds_err(err, "an array of dtype '%s' (no unit) cannot be written",
                  a->descr);
  char order[2] = {a->byteorder, 0};
  if (put_global(p, "numpy", "dtype", &p->g_dtype, err) ||
      put_cstr(p, typestr, err))
    return -1;
  if (op(p, OP_NEWFALSE) || op(p, OP_NEWTRUE) || op(p, OP_TUPLE3) ||
      op(p, OP_REDUCE) || op(p, OP_MARK) || put_int(p, dt ? 4 : 3))
    return oom(err);
  if (put_cstr(p, order, err)) return -1;
  if (op(p, OP_NONE) || op(p, OP_NONE) || op(p, OP_NONE) ||
      put_int(p, elsize) || put_int(p, align) || put_int(p, flags))
    return oom(err);
  if (dt) { /* ({}, (b'unit', mult, 1, 1)) */
    const char *u = UNIT_NAMES[a->dt_unit];
    if (op(p, OP_EMPTY_DICT) || op(p, OP_MARK) ||
        put_bytes(p, (const uint8_t *)u, strlen(u)) || put_int(p, a->dt_mult) ||
        put_int(p, 1) || put_int(p, 1) || op(p, OP_TUPLE) || op(p, OP_TUPLE2))
      return oom(err);
  }
  return op(p, OP_TUPLE) || op(p, OP_BUILD) ? oom(err) : 0;
}

/* An ndarray from a .npy value: _reconstruct(ndarray, (0,), b'b') then
 * BUILD with (1, shape, dtype, is_fortran, data). */
static int put_ndarray(ds_pickler *p, const ds_value *v, char **err) {
  ds_npy a;
  if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, err)) return -1;
  if (a.structured || a.has_object)
    return ds_err(err, "an array of dtype '%s' cannot be written (only "
                       "bool, numbers, S, U, datetime64 and timedelta64)",
                  a.descr);
  if (put_global(p, "numpy.core.multiarray", "_reconstruct",
                 &p->g_reconstruct, err) ||
      put_global(p, "numpy", "ndarray", &p->g_ndarray, err))
    return -1;
  if (p->g_tuple0) {
    if (get(p, p->g_tuple0)) return oom(err);
  } else if (put_int(p, 0) || op(p, OP_TUPLE1) || memoize(p, &p->g_tuple0)) {
    return oom(err);
  }
  if (put_bytes(p, (const uint8_t *)"b", 1) || op(p, OP_TUPLE3) ||
      op(p, OP_REDUCE) || op(p, OP_MARK) || put_int(p, 1) ||
      put_int_tuple(p, a.shape, a.ndim))
    return oom(err);
  if (put_dtype(p, &a, err)) return -1;
  /* numpy writes is_fortran only for arrays that are not also C-order */
  int fortran = a.fortran_order && a.ndim > 1;
  if (op(p, fortran ? OP_NEWTRUE : OP_NEWFALSE) ||
      put_bytes(p, a.data, a.data_len) || op(p, OP_TUPLE) || op(p, OP_BUILD))
    return oom(err);
  return 0;
}

/* ---- one value ------------------------------------------------------ */

static int encode(ds_pickler *p, const ds_value *v, int depth, char **err) {
  if (depth > DS_VALUE_MAX_DEPTH) return ds_value_check_depth(depth, err);
  int rc = 0;
  switch (v->type) {
    case DS_V_NULL: rc = op(p, OP_NONE); break;
    case DS_V_BOOL: rc = op(p, v->u.i ? OP_NEWTRUE : OP_NEWFALSE); break;
    case DS_V_INT: rc = put_int(p, v->u.i); break;
    case DS_V_UINT: rc = put_int_mag(p, 0, v->u.u); break;
    case DS_V_FLOAT: rc = put_float(p, v->u.f); break;
    case DS_V_BYTES: rc = put_bytes(p, v->u.s.p, v->u.s.n); break;
    case DS_V_BIGINT: return put_bigint(p, v->u.s.p, v->u.s.n, err);
    case DS_V_TEXT: return put_str(p, v->u.s.p, v->u.s.n, err);
    case DS_V_LIST: case DS_V_TUPLE: case DS_V_SET:
      return put_container(p, 0, v->u.list.items, v->u.list.n, depth, err);
    case DS_V_MAP:
      return put_container(p, 1, v->u.list.items, v->u.list.n, depth, err);
    case DS_V_NDARRAY: return put_ndarray(p, v, err);
    case DS_V_COMPLEX:
      return ds_err(err, "a complex number cannot be written (write [re, im])");
    default:
      return ds_err(err, "a value of this type cannot be pickled");
  }
  return rc ? oom(err) : 0;
}

/* ---- whole pickles -------------------------------------------------- */

/* PROTO 4 and a FRAME whose length end() fills in. */
static int begin(ds_pickler *p, ds_buf *out, char **err) {
  p->out = out;
  p->start = out->len;
  memo_reset(p);
  uint8_t head[11] = {OP_PROTO, 4, OP_FRAME};
  return ds_buf_append(out, head, sizeof head) ? oom(err) : 0;
}

/* STOP, then the frame length. */
static int end(ds_pickler *p, char **err) {
  if (op(p, OP_STOP)) return oom(err);
  uint64_t n = p->out->len - p->start - 11;
  uint8_t *f = p->out->data + p->start + 3;
  for (int i = 0; i < 8; i++) f[i] = (uint8_t)(n >> (8 * i));
  return 0;
}

int ds_pickle_encode(ds_pickler *p, const ds_value *v, ds_buf *out,
                     char **err) {
  size_t len = out->len;
  if (begin(p, out, err) || encode(p, v, 0, err) || end(p, err)) {
    out->len = len;
    return -1;
  }
  return 0;
}

int ds_pickle_list_begin(ds_pickler *p, ds_buf *out, char **err) {
  if (begin(p, out, err)) return -1;
  p->items = p->batch = 0;
  p->open = 1;
  return op(p, OP_EMPTY_LIST) ? oom(err) : 0;
}

/* Undo an item that failed: truncate and drop memo entries it made. */
static void restore(ds_pickler *p, const pkw_save *s) {
  p->out->len = s->len;
  p->keys.len = s->keys_len;
  p->batch = s->batch;
  p->items = s->items;
  p->g_reconstruct = s->g_reconstruct;
  p->g_ndarray = s->g_ndarray;
  p->g_dtype = s->g_dtype;
  p->g_tuple0 = s->g_tuple0;
  if (p->memo_next != s->memo_next) {
    if (memo_rehash(p, p->cap, s->memo_next)) {
      /* no memory to rebuild: forget the string memo, which stays valid */
      memset(p->slots, 0, p->cap * sizeof *p->slots);
      p->used = 0;
    }
    p->memo_next = s->memo_next;
  }
}

int ds_pickle_list_add(ds_pickler *p, const ds_value *v, char **err) {
  if (!p->open) return ds_err(err, "no list pickle is open");
  pkw_save s = {p->out->len, p->keys.len, p->used, p->batch, p->items,
                p->memo_next, p->g_reconstruct, p->g_ndarray, p->g_dtype,
                p->g_tuple0};
  int rc = 0;
  if (p->batch == PKW_BATCH) { /* close the full batch */
    rc = op(p, OP_APPENDS);
    p->batch = 0;
  }
  if (!rc && p->batch == 0) rc = op(p, OP_MARK);
  if (rc) {
    oom(err);
  } else if (!encode(p, v, 1, err)) {
    p->batch++;
    p->items++;
    return 0;
  }
  restore(p, &s);
  return -1;
}

int ds_pickle_list_end(ds_pickler *p, char **err) {
  if (!p->open) return ds_err(err, "no list pickle is open");
  p->open = 0;
  if (p->batch && op(p, OP_APPENDS)) return oom(err);
  return end(p, err);
}

void ds_pickler_free(ds_pickler *p) {
  free(p->slots);
  ds_buf_free(&p->keys);
  memset(p, 0, sizeof *p);
}
