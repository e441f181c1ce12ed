/* pickle.h - a safe decoder for Python pickles (protocols 2 to 5): the
 * opcodes are interpreted as data, never executed. Globals are an
 * allow-list (builtins containers and scalars, collections.OrderedDict,
 * datetime, numpy arrays/scalars/dtypes under numpy 1 and 2 names); any
 * other global becomes a DS_V_UNSUPPORTED value naming "module.name", so
 * the rest of the pickle still decodes and the caller decides whether that
 * is an error or a placeholder. The result uses the shared value model
 * (core/value.h). Used by atlas blocks, datadings object arrays and bcolz
 * object columns. Format notes: docs/formats/atlas.md section 7. */
#ifndef DS_PICKLE_H
#define DS_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

/* Resource limits; a zero field takes its default. Every length in the
 * pickle is checked against the bytes left before anything is allocated. */
typedef struct ds_pickle_limits {
  size_t max_bytes;  /* total bytes the decoder may allocate (0: the
                        arena's limit when set, else 1 GiB); also
                        the cap on the value's size once shared references
                        are expanded (what a JSON writer walks) */
  int max_depth;     /* nesting of containers (0: 1000) */
  size_t max_memo;   /* memo entries (0: 1,000,000) */
  size_t max_stack;  /* value-stack and MARK-stack entries (0: 10,000,000) */
  size_t max_long;   /* bytes of one LONG1/LONG4 integer (0: 8192, i.e.
                        up to 2^65535, ~19,700 decimal digits; CPython
                        itself refuses to print ints over 4,300 digits) */
} ds_pickle_limits;

/* Containers a pickle may nest (the default max_depth). The writer
 * (pickle_write.c) refuses what would pass it, counting an atlas block's
 * or a bcolz chunk's list as the first level, so what it writes reads back. */
#define DS_PICKLE_MAX_DEPTH 1000

/* Decode the pickle in p[0..n) into *out, allocated in `a` (strings and
 * bytes may point into p, which must outlive the value). Shared references
 * become shared ds_value nodes; a container that contains itself is an
 * error ("recursive structure"). Errors say what is wrong and at which
 * byte offset, e.g. "unsupported pickle opcode 0x49 at byte 2".
 * Mapping: None NULL, bool BOOL, int INT (BIGINT decimal text outside
 * int64), float FLOAT, str TEXT (invalid UTF-8 -> U+FFFD), bytes/bytearray
 * BYTES, list LIST, tuple TUPLE, set/frozenset SET, dict/OrderedDict MAP
 * (any key types), complex COMPLEX, ndarray NDARRAY (a .npy file in C
 * order, big-endian simple dtypes made little-endian; object arrays are a
 * flat LIST of their items), numpy scalars BOOL/INT/UINT/FLOAT/COMPLEX/
 * TEXT/BYTES by dtype (datetime64 ISO TEXT, timedelta64 INT ticks, NaT
 * NULL), numpy dtype TEXT (its .npy description), datetime/date/time
 * ISO-8601 TEXT as isoformat() prints it (an aware one is UNSUPPORTED
 * naming its tzinfo class), timedelta FLOAT seconds. */
int ds_pickle_decode(const uint8_t *p, size_t n, const ds_pickle_limits *lim,
                     ds_arena *a, ds_value *out, char **err);

#endif
