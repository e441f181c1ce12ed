/* msgpack_nd_memo.h - the type of a msgpack-numpy ndarray map without
 * converting it again, for schema inference (datadings_sample.c), which
 * converts the same field of many samples only to learn its type: an
 * ndarray's conversion (msgpack_numpy.c: a .npy header written and parsed,
 * the data copied) costs more than all the rest of a sample.
 *
 * Converting a map {nd: true, type, kind, shape, data} whose kind is not a
 * bin "O" depends on its type, kind and shape entries and on the size of
 * its bin data only (the data bytes are copied, never looked at), and it
 * takes one block of that many bytes from the arena. So a memo of a
 * successful conversion answers for a map with the same entries and data
 * size: it takes the same block from the arena (refused past the arena's
 * limit exactly when the conversion's would be) and gives DS_V_NDARRAY.
 * Only entries it can hold compare (type and kind str/bin up to a few
 * bytes, shape an int or a short list of ints); any other map is converted
 * as before. Knows no SQLite. */
#ifndef DS_MSGPACK_ND_MEMO_H
#define DS_MSGPACK_ND_MEMO_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

#define DS_ND_MEMO_TEXT 64 /* longest type / kind entry remembered */
#define DS_ND_MEMO_DIMS 8  /* most dimensions remembered */

/* What identifies an ndarray map's conversion. */
typedef struct ds_nd_key {
  int type_kind, kind_kind;  /* msgpack types of the entries (kind: 0 absent) */
  size_t type_n, kind_n;
  uint8_t type[DS_ND_MEMO_TEXT], kind[DS_ND_MEMO_TEXT];
  int shape_list;            /* shape given as a list (else one int) */
  uint32_t ndim;
  uint64_t dims[DS_ND_MEMO_DIMS];
  size_t data_n;             /* size of the bin data */
} ds_nd_key;

/* One remembered conversion; zero-initialise. */
typedef struct ds_nd_memo {
  int set;
  ds_nd_key key;
  size_t bytes;              /* what the conversion took from the arena */
} ds_nd_memo;

/* The type of converting map o (ds_msgpack_to_value) when the memo knows
 * it: 1 with *t (DS_V_NDARRAY, or DS_V_NULL when the arena refused the
 * block, as the conversion would have failed), 0 when o must be converted
 * (then ds_nd_memo_learn). */
int ds_nd_memo_type(const ds_nd_memo *m, const msgpack_object *o, ds_arena *a,
                    ds_vtype *t);
/* Remember the conversion of o into v (nothing unless o is a map the memo
 * can hold and v its ndarray). */
void ds_nd_memo_learn(ds_nd_memo *m, const msgpack_object *o, const ds_value *v);

#endif
