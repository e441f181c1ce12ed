/* tfexample_diag.c - locate the fault in a record protobuf-c refused.
 *
 * protobuf-c's unpack answers only "no". This walk over the protocol
 * buffer wire format (tag varint; varint, 64-bit, length-delimited or
 * 32-bit payload), descending into the fields the Example schema of
 * proto/example.proto declares as messages, finds the first byte where
 * the record stops being an Example: a truncated varint or field, a length
 * past the end of its message, an invalid wire type or field number 0, a
 * known field with the wrong wire type, packed floats that are not whole
 * 4-byte values, a feature name that is not UTF-8. It decodes nothing;
 * values come from protobuf-c only. */
#include "tfexample_diag.h"

#include <stdio.h>

#include "core/common.h"
#include "core/utf8.h"

/* The messages of the schema. */
typedef enum msg_kind {
  M_EXAMPLE, M_FEATURES, M_ENTRY, M_FEATURE, M_BYTES, M_FLOATS, M_INT64S,
  M_OTHER /* a field outside the schema, or a scalar */
} msg_kind;

static const char *const msg_name[] = {
    "Example", "Features", "feature map entry", "Feature",
    "BytesList", "FloatList", "Int64List"};

/* Wire types. */
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4,
       WT_I32 = 5 };

/* A walk's state: the record, and the first fault found. */
typedef struct walk {
  const uint8_t *p;
  const char *why;
  size_t at;
  char detail[96];
} walk;

/* Note a fault at byte offset `at`; returns -1. */
static int fault(walk *w, size_t at, const char *why) {
  w->why = why;
  w->at = at;
  return -1;
}

/* Read a varint at *pos before end. 0 ok; -1 truncated or over 10 bytes. */
static int varint(walk *w, size_t *pos, size_t end, uint64_t *v) {
  size_t start = *pos;
  uint64_t x = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (*pos >= end) return fault(w, start, "truncated varint");
    uint8_t b = w->p[(*pos)++];
    x |= shift < 64 ? (uint64_t)(b & 0x7f) << shift : 0;
    if (!(b & 0x80)) {
      *v = x;
      return 0;
    }
  }
  return fault(w, start, "varint longer than 10 bytes");
}

/* What field `field` of message m is: the message it holds (M_OTHER for
 * scalars and unknown fields) and the wire types it may use (bit mask;
 * 0 = any, an unknown field). */
static unsigned field_rule(msg_kind m, uint64_t field, msg_kind *sub) {
  *sub = M_OTHER;
  unsigned len = 1u << WT_LEN;
  switch (m) {
    case M_EXAMPLE: if (field == 1) { *sub = M_FEATURES; return len; } break;
    case M_FEATURES: if (field == 1) { *sub = M_ENTRY; return len; } break;
    case M_ENTRY:
      if (field == 1) return len;
      if (field == 2) { *sub = M_FEATURE; return len; }
      break;
    case M_FEATURE:
      if (field >= 1 && field <= 3) {
        *sub = field == 1 ? M_BYTES : field == 2 ? M_FLOATS : M_INT64S;
        return len;
      }
      break;
    case M_BYTES: if (field == 1) return len; break;
    case M_FLOATS: if (field == 1) return len | 1u << WT_I32; break;
    case M_INT64S: if (field == 1) return len | 1u << WT_VARINT; break;
    default: break;
  }
  return 0;
}

static int walk_message(walk *w, msg_kind m, size_t pos, size_t end);

/* Check the payload p[pos..end) of a length-delimited field `field` of m. */
static int check_payload(walk *w, msg_kind m, uint64_t field, msg_kind sub,
                         size_t pos, size_t end) {
  if (sub != M_OTHER) return walk_message(w, sub, pos, end);
  if (m == M_ENTRY && field == 1 && !ds_utf8_valid(w->p + pos, end - pos))
    return fault(w, pos, "feature name is not UTF-8");
  if (m == M_FLOATS && field == 1 && (end - pos) % 4)
    return fault(w, pos, "packed floats are not whole 4-byte values");
  if (m == M_INT64S && field == 1) {
    uint64_t v;
    while (pos < end)
      if (varint(w, &pos, end, &v)) return -1;
  }
  return 0;
}

/* Walk one field at *pos of message m. */
static int walk_field(walk *w, msg_kind m, size_t *pos, size_t end) {
  size_t at = *pos;
  uint64_t tag, v;
  if (varint(w, pos, end, &tag)) return -1;
  uint64_t field = tag >> 3;
  unsigned wt = (unsigned)(tag & 7);
  if (field == 0) return fault(w, at, "field number 0");
  if (wt > WT_I32) return fault(w, at, "invalid wire type");
  msg_kind sub;
  unsigned allowed = field_rule(m, field, &sub);
  if (allowed && !(allowed & 1u << wt)) {
    snprintf(w->detail, sizeof w->detail,
             "field %u of %s has wire type %u", (unsigned)field, msg_name[m], wt);
    return fault(w, at, w->detail);
  }
  switch (wt) {
    case WT_VARINT: return varint(w, pos, end, &v);
    case WT_I64:
    case WT_I32: {
      size_t k = wt == WT_I64 ? 8 : 4;
      if (end - *pos < k) return fault(w, *pos, "truncated fixed-size field");
      *pos += k;
      return 0;
    }
    case WT_LEN: {
      size_t lat = *pos;
      if (varint(w, pos, end, &v)) return -1;
      if (v > end - *pos) {
        snprintf(w->detail, sizeof w->detail,
                 "length %llu runs past the end of the %s",
                 (unsigned long long)v, msg_name[m]);
        return fault(w, lat, w->detail);
      }
      size_t start = *pos;
      *pos += (size_t)v;
      return check_payload(w, m, field, sub, start, *pos);
    }
    default: return fault(w, at, "group (wire types 3 and 4) not supported");
  }
}

/* Walk the fields of message m in p[pos..end). */
static int walk_message(walk *w, msg_kind m, size_t pos, size_t end) {
  while (pos < end)
    if (walk_field(w, m, &pos, end)) return -1;
  return 0;
}

int ds_tfex_diagnose(const uint8_t *p, size_t len, char **err) {
  walk w = {.p = p};
  if (walk_message(&w, M_EXAMPLE, 0, len))
    return ds_err(err, "not a tf.train.Example: %s at byte offset %zu", w.why, w.at);
  return ds_err(err, "not a tf.train.Example: protobuf-c refused the %zu-byte record",
                len);
}
