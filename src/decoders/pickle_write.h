/* pickle_write.h - a pickle encoder (protocol 4, as CPython 3.8-3.13's
 * pickle.dumps writes by default) for the atlas writer and bcolz object
 * columns. It writes only plain data: None, bool, int of any size, float,
 * str, bytes, list (tuples and sets are written as lists), dict, and numpy
 * arrays from .npy values through numpy's own reconstruct globals
 * (numpy.core.multiarray._reconstruct, numpy.ndarray, numpy.dtype, the names
 * numpy 1.x writes and numpy 2.x still reads). Anything else is an error,
 * so what it writes never names any other global.
 *
 * A pickle is one FRAME. Dict keys and short strings are memoized (BINGET
 * for repeats within one pickle), as are the numpy globals; containers are
 * batched by 1000 items (MARK ... APPENDS / SETITEMS) as CPython does. */
#ifndef DS_PICKLE_WRITE_H
#define DS_PICKLE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/value.h"

typedef struct pkw_slot pkw_slot;

/* Encoder state, reused between pickles (zero-initialise, then
 * ds_pickler_free). */
typedef struct ds_pickler {
  ds_buf *out;          /* the pickle being written */
  size_t start;         /* where it starts in out */
  uint32_t memo_next;   /* next memo index */
  pkw_slot *slots;      /* string memo: open addressing */
  size_t cap, used;
  ds_buf keys;          /* bytes of the memoized strings */
  uint32_t g_reconstruct, g_ndarray, g_dtype, g_tuple0; /* memo index + 1 */
  size_t items;         /* items added to the open list */
  size_t batch;         /* items in the open MARK ... APPENDS batch */
  int open;             /* a list pickle is open */
} ds_pickler;

/* The whole pickle of one value, appended to out. */
int ds_pickle_encode(ds_pickler *p, const ds_value *v, ds_buf *out,
                     char **err);

/* A pickle of a list written one item at a time (an atlas block): begin,
 * add each item, end. An item that fails leaves the pickle as it was before
 * it (so the caller may go on or give up). */
int ds_pickle_list_begin(ds_pickler *p, ds_buf *out, char **err);
int ds_pickle_list_add(ds_pickler *p, const ds_value *v, char **err);
int ds_pickle_list_end(ds_pickler *p, char **err);

void ds_pickler_free(ds_pickler *p);

#endif
