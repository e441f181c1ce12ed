/* msgpack_value.c - one datadings sample: msgpack bytes -> msgpack-c objects
 * -> the shared value model (see msgpack_value.h and
 * docs/formats/datadings.md sections 2-3).
 *
 * Parsing is msgpack-c's msgpack_unpack() into a reused msgpack_zone; str
 * and bin objects point into the caller's bytes. Before msgpack-c sees the
 * bytes, a small pre-check walks the type headers (never the values) once:
 *   - msgpack-c trusts container counts: an array header claiming 2^32-1
 *     entries makes it allocate count * sizeof(msgpack_object) (~100 GB)
 *     before noticing the input ends after 10 bytes. Every element needs at
 *     least one byte, so the pre-check rejects any count larger than the
 *     bytes left (minus the elements still pending), and str/bin/ext lengths
 *     that run past the end. After it, msgpack-c allocates at most about
 *     24 bytes per input byte.
 *   - msgpack-c's parser stack holds 32 open containers (a fixed
 *     MSGPACK_EMBED_STACK_SIZE compiled into the library; deeper input gives
 *     a bare "no memory" code). The pre-check names the limit instead.
 *     Upstream Python msgpack allows 1024 levels, so 33..1024 levels is an
 *     error here that upstream would accept.
 *   - it gives the precise errors: truncation, trailing bytes, the reserved
 *     byte 0xc1, and str payloads that are not strict UTF-8 (upstream
 *     decodes str with errors='strict').
 *   - it totals what msgpack-c will take from the zone, so the zone's first
 *     chunk can be grown once and then reused without malloc per sample.
 * The lazy form (ds_msgpack_scan) steps over a root map's keys and scalar
 * values inline, remembers where the fields a query wants are, and
 * get_field decodes a scalar field (nil, bool, int, float, str, bin)
 * itself, exactly as msgpack-c would; containers still go through
 * msgpack-c.
 *
 * Value mapping (msgpack-numpy maps are recognised by msgpack_numpy.c: bin
 * keys only, the rules of datadings.md 3.4; the entry looked up is the last
 * one with that key, as a Python dict keeps it):
 *   nil NULL, bool BOOL, int INT (UINT above INT64_MAX), float32/64 FLOAT,
 *   str TEXT, bin BYTES (both point into the input bytes), array LIST, map
 *   MAP (entries in file order), ext -> error (writers never produce it);
 *   {nd: true}  -> NDARRAY: a whole .npy file in the arena (C order);
 *                  kind "O" (a pickled object array) is decoded by the safe
 *                  pickle decoder (decoders/pickle.c) into a LIST;
 *   {nd: other} -> numpy scalar: b/i/u/f2/f4/f8/c8/c16 decoded here, other
 *                  dtypes (U, S, M, m, V) through core/npy.c's element code;
 *   {complex}   -> COMPLEX from Python's repr text (section 3.3);
 *   a recognised map missing a required entry stays a plain MAP. */
#include "decoders/msgpack_value.h"
#include "core/lib_versions.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/utf8.h"
#include "decoders/msgpack_numpy.h"

#define MP_MAX_NEST DS_MSGPACK_MAX_NEST
#define MP_MAX_DEPTH 512           /* recursion limit of the conversion */
#define MP_ZONE_FIRST 8192         /* first zone chunk */
#define MP_ZONE_KEEP (1u << 20)    /* largest chunk the doc keeps around */

/* ---------------------------------------------------------- pre-check */

/* What a type header announces. */
enum { MH_PLAIN, MH_STR, MH_ARRAY, MH_MAP };

/* One decoded type header. */
typedef struct mp_head {
  int what;     /* MH_* */
  size_t hdr;   /* header bytes (type byte, length, ext type) */
  uint64_t len; /* payload bytes (MH_PLAIN, MH_STR) or entry count */
} mp_head;

/* Big-endian unsigned integer of k bytes. */
static uint64_t be_uint(const uint8_t *p, int k) {
  uint64_t v = 0;
  for (int i = 0; i < k; i++) v = v << 8 | p[i];
  return v;
}

/* A header whose length field has k bytes: 0, or 1 when they are missing. */
static inline int head_sized(const uint8_t *p, size_t avail, int what, int k,
                      size_t extra, mp_head *h) {
  if (avail < 1 + (size_t)k + extra) return 1;
  h->what = what;
  h->hdr = 1 + (size_t)k + extra;
  h->len = be_uint(p + 1, k);
  return 0;
}

/* A header with a fixed payload of len bytes after hdr header bytes. */
static inline int head_fixed(size_t hdr, uint64_t len, mp_head *h) {
  h->what = MH_PLAIN;
  h->hdr = hdr;
  h->len = len;
  return 0;
}

/* Decode the header at p[0..avail) (avail >= 1): 0 ok, 1 when the header
 * itself is cut off, -1 for the reserved byte 0xc1. */
static inline int mp_header(const uint8_t *p, size_t avail, mp_head *h) {
  uint8_t b = p[0];
  if (b <= 0x7f || b >= 0xe0) return head_fixed(1, 0, h);
  if (b <= 0x8f) { *h = (mp_head){MH_MAP, 1, b & 0x0fu}; return 0; }
  if (b <= 0x9f) { *h = (mp_head){MH_ARRAY, 1, b & 0x0fu}; return 0; }
  if (b <= 0xbf) { *h = (mp_head){MH_STR, 1, b & 0x1fu}; return 0; }
  switch (b) {
    case 0xc0: case 0xc2: case 0xc3: return head_fixed(1, 0, h);
    case 0xc1: return -1;
    case 0xc4: return head_sized(p, avail, MH_PLAIN, 1, 0, h);
    case 0xc5: return head_sized(p, avail, MH_PLAIN, 2, 0, h);
    case 0xc6: return head_sized(p, avail, MH_PLAIN, 4, 0, h);
    case 0xc7: return head_sized(p, avail, MH_PLAIN, 1, 1, h);
    case 0xc8: return head_sized(p, avail, MH_PLAIN, 2, 1, h);
    case 0xc9: return head_sized(p, avail, MH_PLAIN, 4, 1, h);
    case 0xca: return head_fixed(1, 4, h);
    case 0xcb: return head_fixed(1, 8, h);
    case 0xcc: case 0xd0: return head_fixed(1, 1, h);
    case 0xcd: case 0xd1: return head_fixed(1, 2, h);
    case 0xce: case 0xd2: return head_fixed(1, 4, h);
    case 0xcf: case 0xd3: return head_fixed(1, 8, h);
    case 0xd4: return head_fixed(2, 1, h);
    case 0xd5: return head_fixed(2, 2, h);
    case 0xd6: return head_fixed(2, 4, h);
    case 0xd7: return head_fixed(2, 8, h);
    case 0xd8: return head_fixed(2, 16, h);
    case 0xd9: return head_sized(p, avail, MH_STR, 1, 0, h);
    case 0xda: return head_sized(p, avail, MH_STR, 2, 0, h);
    case 0xdb: return head_sized(p, avail, MH_STR, 4, 0, h);
    case 0xdc: return head_sized(p, avail, MH_ARRAY, 2, 0, h);
    case 0xdd: return head_sized(p, avail, MH_ARRAY, 4, 0, h);
    case 0xde: return head_sized(p, avail, MH_MAP, 2, 0, h);
    default: return head_sized(p, avail, MH_MAP, 4, 0, h); /* 0xdf */
  }
}

/* State of the header walk. */
typedef struct mp_scan {
  const uint8_t *p;
  size_t n, pos;
  uint64_t pending;                /* elements announced, not yet read */
  int depth;                       /* open non-empty containers */
  uint64_t left[MP_MAX_NEST + 1];  /* elements left per open level */
  size_t zone;                     /* bytes msgpack-c will take */
  int check_utf8;                  /* validate str payloads here */
} mp_scan;

/* The error for input that ends before the object does. */
static int scan_truncated(const mp_scan *s, char **err) {
  return ds_err(err, "msgpack object truncated (needs more than %zu bytes)",
                s->n);
}

/* Account for a container of `count` entries (2 elements per map entry). */
static int scan_container(mp_scan *s, const mp_head *h, char **err) {
  uint64_t elems = h->what == MH_MAP ? h->len * 2 : h->len;
  size_t at = s->pos;
  s->pos += h->hdr;
  size_t rest = s->n - s->pos;
  if (elems > rest || s->pending > rest - elems) return scan_truncated(s, err);
  if (s->depth >= MP_MAX_NEST)
    return ds_err(err, "msgpack containers nested deeper than %d levels at "
                  "byte %zu (the limit of msgpack-c)", MP_MAX_NEST, at);
  size_t bytes = (size_t)elems * sizeof(msgpack_object) + MSGPACK_ZONE_ALIGN;
  s->zone = bytes > SIZE_MAX - s->zone ? SIZE_MAX : s->zone + bytes;
  if (elems) {
    s->left[++s->depth] = elems;
    s->pending += elems;
  }
  return 0;
}

/* The error for a str whose payload is not UTF-8. */
static int scan_bad_utf8(size_t at, char **err) {
  return ds_err(err, "invalid UTF-8 in the msgpack str at byte %zu", at);
}

/* Skip a str/bin/ext/number payload, checking str for UTF-8 when asked. */
static inline int scan_payload(mp_scan *s, const mp_head *h, char **err) {
  size_t rest = s->n - s->pos - h->hdr;
  if (h->len > rest) return scan_truncated(s, err);
  if (h->what == MH_STR && s->check_utf8 &&
      !ds_utf8_valid(s->p + s->pos + h->hdr, (size_t)h->len))
    return scan_bad_utf8(s->pos, err);
  s->pos += h->hdr + (size_t)h->len;
  return 0;
}

/* Read one element header (and skip its payload). */
static inline int scan_element(mp_scan *s, char **err) {
  if (s->pos >= s->n) return scan_truncated(s, err);
  mp_head h;
  int r = mp_header(s->p + s->pos, s->n - s->pos, &h);
  if (r < 0)
    return ds_err(err, "invalid msgpack byte 0x%02x at byte %zu",
                  s->p[s->pos], s->pos);
  if (r > 0 || h.hdr > s->n - s->pos) return scan_truncated(s, err);
  if (h.what == MH_ARRAY || h.what == MH_MAP) return scan_container(s, &h, err);
  return scan_payload(s, &h, err);
}

/* Walk the element at s->pos and everything inside it (the caller has
 * already counted it off `pending` and its level's `left`). */
static int walk_one(mp_scan *s, char **err) {
  int base = s->depth;
  if (scan_element(s, err)) return -1;
  while (s->depth > base) {
    if (s->left[s->depth] == 0) {
      s->depth--;
      continue;
    }
    s->left[s->depth]--;
    s->pending--;
    if (scan_element(s, err)) return -1;
  }
  return 0;
}

/* Room for n more marks. */
static int reserve_marks(ds_msgpack_doc *d, uint64_t n, char **err) {
  if (n <= d->cap_marks - d->nmarks) return 0;
  size_t cap = d->cap_marks ? d->cap_marks : 64;
  while (cap - d->nmarks < n) cap *= 2; /* n <= the input's length */
  size_t *m = realloc(d->marks, cap * sizeof *m);
  if (!m) return ds_err(err, "out of memory");
  d->marks = m;
  d->cap_marks = cap;
  return 0;
}

/* memcpy(&mask, word_mask + 8 - k, 8) keeps the first k bytes of a word
 * loaded with memcpy, on any byte order. */
static const uint8_t word_mask[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* Payload bytes of the fixed-size types 0xca..0xd3 (float32, float64,
 * uint8..64, int8..64). */
static const uint8_t fixed_len[10] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};

/* Lazy walk of a top-level map (its header at s->pos == 0, already
 * counted off): remember where each key and value starts, check that str
 * keys are UTF-8 (str values are checked when converted), note where the
 * wanted keys are, and stop at the first key after all of them were seen
 * (*stopped = 1). Values that are not containers are stepped over here;
 * the rest go through walk_one. */
static int scan_top_map(mp_scan *s, ds_msgpack_doc *d, int *stopped, char **err) {
  mp_head h;
  if (mp_header(s->p, s->n, &h) != 0 || h.hdr > s->n) return scan_truncated(s, err);
  if (scan_container(s, &h, err)) return -1;
  uint64_t count = h.len; /* scan_container checked 2 * count against the bytes */
  if (reserve_marks(d, 2 * count, err)) return -1;
  /* locals, not *s and *d: the marks array could alias them */
  const uint8_t *p = s->p;
  size_t n = s->n, nwant = d->nwant, pos = s->pos, *marks = d->marks, nm = d->nmarks;
  uint64_t all = nwant >= 64 ? UINT64_MAX : (((uint64_t)1 << nwant) - 1), found = 0;
  for (uint64_t e = 0; e < count; e++) {
    /* the key */
    if (pos >= n) goto truncated;
    if (nwant && found == all) { /* every wanted field is behind us */
      marks[nm++] = pos;
      *stopped = 1;
      break;
    }
    marks[nm++] = pos;
    uint8_t b = p[pos];
    size_t kh, kl;
    if ((b & 0xe0) == 0xa0) {
      kh = 1;
      kl = b & 0x1fu;
    } else {
      mp_head k;
      if (mp_header(p + pos, n - pos, &k) != 0 || k.what != MH_STR) {
        s->pos = pos; /* not a str key (or a bad one) */
        s->pending = 2 * (count - e) - 1;
        if (walk_one(s, err)) return -1;
        pos = s->pos;
        goto value;
      }
      if (k.hdr > n - pos || k.len > n - pos - k.hdr) goto truncated;
      kh = k.hdr;
      kl = (size_t)k.len;
    }
    if (kl > n - pos - kh) goto truncated;
    const uint8_t *key = p + pos + kh;
    if (kl <= 8 && n - pos - kh >= 8) { /* one word: ASCII check and compare */
      uint64_t w, m;
      memcpy(&w, key, 8);
      memcpy(&m, word_mask + 8 - kl, 8);
      w &= m;
      if ((w & 0x8080808080808080ull) && !ds_utf8_valid(key, kl)) goto bad_utf8;
      for (size_t i = 0; i < nwant; i++)
        if (d->want_len[i] == kl && d->want_word[i] == w && !(found >> i & 1)) {
          found |= (uint64_t)1 << i;
          d->want_at[i] = nm - 1;
        }
    } else {
      if (!ds_utf8_valid(key, kl)) goto bad_utf8;
      for (size_t i = 0; i < nwant; i++)
        if (d->want_len[i] == kl && !(found >> i & 1) &&
            (kl == 0 || !memcmp(d->want[i], key, kl))) {
          found |= (uint64_t)1 << i;
          d->want_at[i] = nm - 1;
        }
    }
    pos += kh + kl;
  value:
    /* the value: fixint, nil, bool, fixstr, str8, bin8 and fixed-size
     * numbers inline */
    if (pos >= n) goto truncated;
    marks[nm++] = pos;
    b = p[pos];
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
      pos += 1;
    } else if ((b & 0xe0) == 0xa0) {
      if ((size_t)(b & 0x1fu) > n - pos - 1) goto truncated;
      pos += 1 + (b & 0x1fu);
    } else if (b >= 0xca && b <= 0xd3) {
      if ((size_t)fixed_len[b - 0xca] > n - pos - 1) goto truncated;
      pos += 1 + fixed_len[b - 0xca];
    } else if (b == 0xd9 || b == 0xc4) { /* str 8, bin 8 */
      if (n - pos < 2 || (size_t)p[pos + 1] > n - pos - 2) goto truncated;
      pos += 2 + (size_t)p[pos + 1];
    } else {
      s->pos = pos;
      s->pending = 2 * (count - e) - 2;
      if (walk_one(s, err)) return -1;
      pos = s->pos;
    }
  }
  d->nmarks = nm;
  s->pos = pos;
  s->pending = 0;
  s->left[1] = 0;
  if (s->depth == 1) s->depth = 0;
  d->found = found;
  d->nfound_want = nwant;
  return 0;
truncated:
  return scan_truncated(s, err);
bad_utf8:
  return scan_bad_utf8(marks[nm - 1], err);
}

/* Walk exactly one object from p[0]: *end gets its length, *zone the
 * bytes msgpack-c will allocate for it. With `marks` (the lazy scan) a
 * root map's elements are marked, and the walk may stop after the wanted
 * fields (marks->partial). */
static int precheck(const uint8_t *p, size_t n, size_t *end, size_t *zone,
                    ds_msgpack_doc *marks, char **err) {
  mp_scan s;
  s.p = p;
  s.n = n;
  s.pos = 0;
  s.pending = 0; /* the root is counted off below */
  s.depth = 0;
  s.left[0] = 0;
  s.zone = 0;
  s.check_utf8 = marks == NULL;
  int stopped = 0, rc;
  if (marks) {
    marks->nmarks = 0;
    marks->nfound_want = 0;
  }
  if (marks && n > 0 && ((p[0] & 0xf0) == 0x80 || p[0] == 0xde || p[0] == 0xdf))
    rc = scan_top_map(&s, marks, &stopped, err);
  else
    rc = walk_one(&s, err);
  if (rc) return -1;
  if (marks) marks->partial = stopped;
  *end = stopped ? n : s.pos; /* a stopped walk does not judge the rest */
  *zone = s.zone;
  return 0;
}

void ds_msgpack_want(ds_msgpack_doc *d, const char *const *names,
                     const size_t *lens, size_t n) {
  d->want = names;
  d->want_len = lens;
  d->nwant = n > 64 ? 0 : n;
  d->nfound_want = 0; /* the last scan's want_at no longer applies */
  for (size_t i = 0; i < d->nwant; i++) { /* names of up to 8 bytes as words */
    d->want_word[i] = 0;
    if (lens[i] && lens[i] <= 8) memcpy(&d->want_word[i], names[i], lens[i]);
  }
}

/* ------------------------------------------------------------ parsing */

void ds_msgpack_doc_init(ds_msgpack_doc *d) {
  memset(d, 0, sizeof *d);
  d->root.type = MSGPACK_OBJECT_NIL;
}

void ds_msgpack_doc_free(ds_msgpack_doc *d) {
  if (d->zone_ready) msgpack_zone_destroy(&d->zone);
  free(d->marks);
  ds_msgpack_doc_init(d);
}

/* Make the zone empty, with a first chunk of at least `need` bytes when
 * that is at most MP_ZONE_KEEP (bigger samples let msgpack-c add chunks,
 * which the next clear frees). */
/* The objects of one sample must fit d->max_value_bytes. */
static int check_need(const ds_msgpack_doc *d, size_t need, char **err) {
  return d->max_value_bytes && need > d->max_value_bytes
             ? ds_err_too_big(err, "msgpack objects", need, d->max_value_bytes)
             : 0;
}

static int doc_zone_prepare(ds_msgpack_doc *d, size_t need, char **err) {
  if (check_need(d, need, err)) return -1;
  size_t want = MP_ZONE_FIRST;
  while (want < need && want < MP_ZONE_KEEP) want *= 2;
  if (d->zone_ready && d->zone.chunk_size >= want) {
    msgpack_zone_clear(&d->zone);
    return 0;
  }
  if (d->zone_ready) msgpack_zone_destroy(&d->zone);
  d->zone_ready = msgpack_zone_init(&d->zone, want) ? 1 : 0;
  return d->zone_ready ? 0 : ds_err(err, "out of memory");
}

/* The first steps of parse and scan: forget d's last object, check that
 * p[0..n) is exactly one object (marking a root map's elements in d when
 * `marks`), and make d's zone ready for it; *need gets its zone size. */
static int doc_prepare(ds_msgpack_doc *d, const uint8_t *p, size_t n, int marks,
                       size_t *need, char **err) {
  d->root.type = MSGPACK_OBJECT_NIL;
  d->p = NULL;
  d->have_root = 0;
  size_t end;
  if (precheck(p, n, &end, need, marks ? d : NULL, err)) return -1;
  if (end != n)
    return ds_err(err, "%zu bytes after the msgpack object at byte %zu",
                  n - end, end);
  return doc_zone_prepare(d, *need, err);
}

int ds_msgpack_parse(ds_msgpack_doc *d, const uint8_t *p, size_t n,
                     char **err) {
  size_t need;
  if (doc_prepare(d, p, n, 0, &need, err)) return -1;
  size_t off = 0;
  msgpack_object root;
  msgpack_unpack_return r =
      msgpack_unpack((const char *)p, n, &off, &d->zone, &root);
  if (r == MSGPACK_UNPACK_NOMEM_ERROR) return ds_err(err, "out of memory");
  if (r != MSGPACK_UNPACK_SUCCESS || off != n) /* the pre-check rules out */
    return ds_err(err, "msgpack-c rejected the object (code %d)", (int)r);
  d->root = root;
  d->have_root = 1;
  return 0;
}

int ds_msgpack_scan(ds_msgpack_doc *d, const uint8_t *p, size_t n, char **err) {
  size_t need;
  if (doc_prepare(d, p, n, 1, &need, err)) return -1;
  d->p = p;
  d->n = n;
  d->zone_need = need;
  d->root_is_map = n > 0 && ((p[0] & 0xf0) == 0x80 || p[0] == 0xde || p[0] == 0xdf);
  return 0;
}

/* A str/bin of len bytes after a header of hdr bytes. */
static inline size_t scalar_bytes(msgpack_object *o, msgpack_object_type t,
                                  const uint8_t *p, size_t hdr, uint64_t len) {
  o->type = t;
  o->via.str.size = (uint32_t)len; /* str and bin share the layout */
  o->via.str.ptr = (const char *)p + hdr;
  return hdr + (size_t)len;
}

/* An integer as msgpack-c stores it: non-negative ones are POSITIVE. */
static inline void scalar_int(msgpack_object *o, int64_t v) {
  o->type = v >= 0 ? MSGPACK_OBJECT_POSITIVE_INTEGER : MSGPACK_OBJECT_NEGATIVE_INTEGER;
  o->via.i64 = v;
}

/* The element p[0..n) when it is a scalar (nil, bool, int, float, str,
 * bin) taking exactly n bytes, decoded as msgpack-c would: 1 with *o
 * set, else 0 (containers, ext, anything unexpected: msgpack-c's turn). */
static int decode_scalar(const uint8_t *p, size_t n, msgpack_object *o) {
  if (n == 0) return 0;
  uint8_t b = p[0];
  size_t used = 1;
  if (b <= 0x7f) {
    o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
    o->via.u64 = b;
  } else if (b >= 0xe0) {
    o->type = MSGPACK_OBJECT_NEGATIVE_INTEGER;
    o->via.i64 = (int8_t)b;
  } else if ((b & 0xe0) == 0xa0) {
    used = scalar_bytes(o, MSGPACK_OBJECT_STR, p, 1, b & 0x1fu);
  } else if (b == 0xc0) {
    o->type = MSGPACK_OBJECT_NIL;
  } else if (b == 0xc2 || b == 0xc3) {
    o->type = MSGPACK_OBJECT_BOOLEAN;
    o->via.boolean = b == 0xc3;
  } else if (b >= 0xc4 && b <= 0xc6) { /* bin 8/16/32 */
    int k = 1 << (b - 0xc4);
    if (n < 1 + (size_t)k) return 0;
    used = scalar_bytes(o, MSGPACK_OBJECT_BIN, p, 1 + (size_t)k, be_uint(p + 1, k));
  } else if (b >= 0xd9 && b <= 0xdb) { /* str 8/16/32 */
    int k = 1 << (b - 0xd9);
    if (n < 1 + (size_t)k) return 0;
    used = scalar_bytes(o, MSGPACK_OBJECT_STR, p, 1 + (size_t)k, be_uint(p + 1, k));
  } else if (b >= 0xca && b <= 0xd3) {
    int k = fixed_len[b - 0xca];
    if (n < 1 + (size_t)k) return 0;
    uint64_t v = be_uint(p + 1, k);
    used = 1 + (size_t)k;
    if (b == 0xca) {
      uint32_t v32 = (uint32_t)v;
      float f;
      memcpy(&f, &v32, sizeof f);
      o->type = MSGPACK_OBJECT_FLOAT32;
      o->via.f64 = f;
    } else if (b == 0xcb) {
      o->type = MSGPACK_OBJECT_FLOAT64;
      memcpy(&o->via.f64, &v, sizeof v);
    } else if (b <= 0xcf) {
      o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
      o->via.u64 = v;
    } else { /* int 8/16/32/64: sign-extend */
      unsigned shift = 64 - 8 * (unsigned)k;
      scalar_int(o, shift ? (int64_t)(v << shift) >> shift : (int64_t)v);
    }
  } else {
    return 0;
  }
  return used == n;
}

/* Unpack the checked object p[0..n) into a zone-allocated msgpack_object. */
static int unpack_into_zone(ds_msgpack_doc *d, const uint8_t *p, size_t n,
                            const msgpack_object **out, char **err) {
  msgpack_object *o = msgpack_zone_malloc(&d->zone, sizeof *o);
  if (!o) return ds_err(err, "out of memory");
  if (decode_scalar(p, n, o)) { /* no msgpack-c needed */
    *out = o;
    return 0;
  }
  size_t off = 0;
  msgpack_unpack_return r = msgpack_unpack((const char *)p, n, &off, &d->zone, o);
  if (r == MSGPACK_UNPACK_NOMEM_ERROR) return ds_err(err, "out of memory");
  if (r != MSGPACK_UNPACK_SUCCESS || off != n) /* the scan rules this out */
    return ds_err(err, "msgpack-c rejected the object (code %d)", (int)r);
  *out = o;
  return 0;
}

static int finish_scan(ds_msgpack_doc *d, char **err);

int ds_msgpack_get_root(ds_msgpack_doc *d, const msgpack_object **out, char **err) {
  if (d->p && d->partial && finish_scan(d, err)) return -1; /* check it all first */
  if (!d->have_root) {
    if (!d->p) return ds_err(err, "no sample scanned");
    const msgpack_object *o;
    if (unpack_into_zone(d, d->p, d->n, &o, err)) return -1;
    d->root = *o;
    d->have_root = 1;
  }
  *out = &d->root;
  return 0;
}

void ds_msgpack_release_objects(ds_msgpack_doc *d) {
  if (d->zone_ready) msgpack_zone_clear(&d->zone); /* frees all but the first chunk */
  d->have_root = 0;
  d->root.type = MSGPACK_OBJECT_NIL;
}

/* The str at p[0..n) (a checked top-level key): its bytes, or NULL when
 * the element is not a str. */
static const uint8_t *mark_str(const uint8_t *p, size_t n, size_t *len) {
  mp_head h;
  if (n == 0 || mp_header(p, n, &h) != 0 || h.what != MH_STR) return NULL;
  *len = (size_t)h.len;
  return p + h.hdr;
}

static int field_in_marks(ds_msgpack_doc *d, const char *name, size_t len,
                          const msgpack_object **out, char **err);

/* A scan that stopped early walks the whole object now (for a field it
 * did not look for, or for the root). */
static int finish_scan(ds_msgpack_doc *d, char **err) {
  size_t nwant = d->nwant, end, need;
  d->nwant = 0;
  int rc = precheck(d->p, d->n, &end, &need, d, err);
  d->nwant = nwant;
  if (rc) return -1;
  if (end != d->n)
    return ds_err(err, "%zu bytes after the msgpack object at byte %zu", d->n - end, end);
  if (need > d->zone_need) { /* msgpack-c adds zone chunks as it needs them */
    if (check_need(d, need, err)) return -1;
    d->zone_need = need;
  }
  return 0;
}

int ds_msgpack_get_field(ds_msgpack_doc *d, const char *name, size_t len,
                         const msgpack_object **out, char **err) {
  if (!d->p) return ds_err(err, "no sample scanned");
  if (!d->root_is_map) return 0;
  for (size_t i = 0; i < d->nfound_want; i++) /* a wanted field: the scan saw it */
    if (d->want_len[i] == len && (d->want[i] == name || !memcmp(d->want[i], name, len))) {
      if (!(d->found >> i & 1)) return 0; /* the scan walked the map: absent */
      size_t m = d->want_at[i];
      size_t ve = m + 2 < d->nmarks ? d->marks[m + 2] : d->n;
      return unpack_into_zone(d, d->p + d->marks[m + 1], ve - d->marks[m + 1], out, err) ? -1 : 1;
    }
  int found = field_in_marks(d, name, len, out, err);
  if (found != 0 || !d->partial) return found;
  if (finish_scan(d, err)) return -1; /* not among the wanted: look further */
  return field_in_marks(d, name, len, out, err);
}

int ds_msgpack_walk(const uint8_t *p, size_t n, char **err) {
  mp_scan s = {.p = p, .n = n};
  if (walk_one(&s, err)) return -1;
  if (s.pos != n)
    return ds_err(err, "%zu bytes after the msgpack object at byte %zu", n - s.pos, s.pos);
  return 0;
}

int ds_msgpack_map_entry(const uint8_t *p, size_t n, const char *name, size_t len,
                         int *is_map, int *found, msgpack_object *val, char **err) {
  mp_scan s = {.p = p, .n = n};
  *found = 0;
  *is_map = n > 0 && ((p[0] & 0xf0) == 0x80 || p[0] == 0xde || p[0] == 0xdf);
  if (!*is_map) {
    if (walk_one(&s, err)) return -1;
  } else {
    mp_head h;
    if (mp_header(p, n, &h) != 0 || h.hdr > n) return scan_truncated(&s, err);
    if (scan_container(&s, &h, err)) return -1;
    for (uint64_t e = 0; e < h.len; e++) {
      size_t kat = s.pos, kl = 0;
      s.left[1]--; /* walk_one wants its element counted off */
      s.pending--;
      const uint8_t *kp = NULL;
      if (kat < n && (p[kat] & 0xe0) == 0xa0) { /* a fixstr key, the usual: inline */
        kl = p[kat] & 0x1fu;
        if (kl > n - kat - 1) return scan_truncated(&s, err);
        kp = p + kat + 1;
        s.pos += 1 + kl;
      } else {
        if (walk_one(&s, err)) return -1;
        mp_head k;
        if (mp_header(p + kat, n - kat, &k) == 0 && k.what == MH_STR) { /* walked: in bounds */
          kp = p + kat + k.hdr;
          kl = (size_t)k.len;
        }
      }
      int match = 0;
      if (kp) {
        uint8_t high = 0;
        for (size_t i = 0; i < kl; i++) high |= kp[i];
        if ((high & 0x80) && !ds_utf8_valid(kp, kl)) return scan_bad_utf8(kat, err);
        match = !*found && kl == len && (len == 0 || !memcmp(kp, name, len));
      }
      size_t vat = s.pos;
      s.left[1]--;
      s.pending--;
      if (walk_one(&s, err)) return -1;
      if (match) {
        *found = 1;
        if (!decode_scalar(p + vat, s.pos - vat, val)) val->type = MSGPACK_OBJECT_MAP;
      }
    }
  }
  if (s.pos != n)
    return ds_err(err, "%zu bytes after the msgpack object at byte %zu", n - s.pos, s.pos);
  return 0;
}

/* Look `name` up among the marked top-level entries. */
static int field_in_marks(ds_msgpack_doc *d, const char *name, size_t len,
                          const msgpack_object **out, char **err) {
  for (size_t i = 0; i + 1 < d->nmarks; i += 2) {
    size_t kn, ks = d->marks[i], vs = d->marks[i + 1];
    const uint8_t *k = mark_str(d->p + ks, vs - ks, &kn);
    if (!k || kn != len || (len && memcmp(k, name, len) != 0)) continue;
    size_t ve = i + 2 < d->nmarks ? d->marks[i + 2] : d->n;
    return unpack_into_zone(d, d->p + vs, ve - vs, out, err) ? -1 : 1;
  }
  return 0;
}

/* 1 when o is a str equal to name[0..len), byte for byte. */
static int str_equals(const msgpack_object *o, const char *name, size_t len) {
  return o->type == MSGPACK_OBJECT_STR && o->via.str.size == len &&
         (len == 0 || !memcmp(o->via.str.ptr, name, len));
}

const msgpack_object *ds_msgpack_field(const ds_msgpack_doc *d, const char *name,
                                       size_t name_len) {
  if (d->root.type != MSGPACK_OBJECT_MAP) return NULL;
  const msgpack_object_map *m = &d->root.via.map;
  for (uint32_t i = 0; i < m->size; i++)
    if (str_equals(&m->ptr[i].key, name, name_len)) return &m->ptr[i].val;
  return NULL;
}

/* ---------------------------------------------------------- conversion */

static int conv(const msgpack_object *o, ds_arena *a, ds_value *out, int depth,
                char **err);

/* An array as a LIST (pairs = 0), or a map as a MAP (pairs = 1: keys
 * converted too, entries in file order). */
static int conv_items(const msgpack_object *o, int pairs, ds_arena *a,
                      ds_value *out, int depth, char **err) {
  uint32_t n = pairs ? o->via.map.size : o->via.array.size;
  size_t per = pairs ? 2 : 1; /* values per entry */
  ds_value *items = NULL;
  if (n && !(items = ds_arena_get(a, (size_t)n * per * sizeof *items, err))) return -1;
  for (uint32_t i = 0; i < n; i++) {
    const msgpack_object *first = pairs ? &o->via.map.ptr[i].key : &o->via.array.ptr[i];
    if (conv(first, a, &items[per * i], depth + 1, err) ||
        (pairs && conv(&o->via.map.ptr[i].val, a, &items[2 * i + 1], depth + 1, err)))
      return -1;
  }
  out->type = pairs ? DS_V_MAP : DS_V_LIST;
  out->u.list.items = items;
  out->u.list.n = n;
  return 0;
}

/* A map: msgpack-numpy's forms first (msgpack_numpy.c), else a MAP. */
static int conv_map(const msgpack_object *o, ds_arena *a, ds_value *out,
                    int depth, char **err) {
  int r = ds_msgpack_numpy_value(o, a, out, err);
  if (r <= 0) return r;
  return conv_items(o, 1, a, out, depth, err);
}

/* Bytes of a str/bin as TEXT or BYTES pointing into the input. */
static void conv_bytes(const msgpack_object *o, ds_vtype t, ds_value *out) {
  out->type = t;
  out->u.s.p = ds_msgpack_bytes(o, &out->u.s.n);
}

/* One object into *out. */
static int conv(const msgpack_object *o, ds_arena *a, ds_value *out, int depth,
                char **err) {
  if (depth > MP_MAX_DEPTH)
    return ds_err(err, "msgpack value nested deeper than %d levels", MP_MAX_DEPTH);
  memset(out, 0, sizeof *out);
  switch (o->type) {
    case MSGPACK_OBJECT_NIL: out->type = DS_V_NULL; return 0;
    case MSGPACK_OBJECT_BOOLEAN:
      out->type = DS_V_BOOL;
      out->u.i = o->via.boolean ? 1 : 0;
      return 0;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
      out->type = o->via.u64 > INT64_MAX ? DS_V_UINT : DS_V_INT;
      out->u.u = o->via.u64;
      return 0;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
      out->type = DS_V_INT;
      out->u.i = o->via.i64;
      return 0;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
      out->type = DS_V_FLOAT;
      out->u.f = o->via.f64;
      return 0;
    case MSGPACK_OBJECT_STR:
      conv_bytes(o, DS_V_TEXT, out);
      if (!ds_utf8_valid(out->u.s.p, out->u.s.n)) /* upstream decodes strictly */
        return ds_err(err, "invalid UTF-8 in a msgpack str");
      return 0;
    case MSGPACK_OBJECT_BIN: conv_bytes(o, DS_V_BYTES, out); return 0;
    case MSGPACK_OBJECT_ARRAY: return conv_items(o, 0, a, out, depth, err);
    case MSGPACK_OBJECT_MAP: return conv_map(o, a, out, depth, err);
    case MSGPACK_OBJECT_EXT:
      return ds_err(err, "msgpack ext type %d (%u bytes) has no value mapping",
                    (int)o->via.ext.type, (unsigned)o->via.ext.size);
    default: return ds_err(err, "unknown msgpack object type %d", (int)o->type);
  }
}

int ds_msgpack_to_value(const msgpack_object *o, ds_arena *a, ds_value *out,
                        char **err) {
  return conv(o, a, out, 0, err);
}

const char *ds_msgpack_version(void) { return msgpack_version(); }
