/* pickle_slot.h - what both pickle decoders (pickle.c, the full one, and
 * pickle_list.c, the flat-list fast path) put in a new stack slot: a
 * scalar of integer value, or a BINFLOAT's double. Plain C. */
#ifndef DS_PICKLE_SLOT_H
#define DS_PICKLE_SLOT_H

#include <stdint.h>
#include <string.h>

#include "core/numbers.h"
#include "core/value.h"

/* Fill the new slot t (NULL: none could be had) with a value of type
 * `type` (NULL, BOOL, INT) holding i. 0, or -1 when t is NULL. */
static inline int ds_pickle_put_int(ds_value *t, int type, int64_t i) {
  if (!t) return -1;
  t->type = (ds_vtype)type;
  t->u.i = i;
  return 0;
}

/* Fill the new slot t (NULL: none could be had) with the FLOAT whose
 * IEEE bits are the 8 big-endian bytes at b (BINFLOAT's argument). 0, or
 * -1 when t is NULL. */
static inline int ds_pickle_put_binfloat(ds_value *t, const uint8_t *b) {
  if (!t) return -1;
  uint64_t u = ds_load_uint(b, 8, 1);
  t->type = DS_V_FLOAT;
  memcpy(&t->u.f, &u, 8);
  return 0;
}

#endif
