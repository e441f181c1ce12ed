/* pickle_list.h - a fast path for the pickles atlas blocks hold in
 * practice: a list of flat examples (dicts, lists or tuples of scalars, or
 * scalars), as pickle.dumps writes them with protocols 2 to 5. It decodes
 * such a pickle straight into the value ds_pickle_decode would give,
 * without the general decoder's object graph and resolve pass, and
 * declines anything else (nested containers, shared containers, globals,
 * invalid UTF-8, damage of any kind) so that the caller decodes that
 * pickle with ds_pickle_decode, which then gives the value or the error.
 * Nothing is ever executed either way. */
#ifndef DS_PICKLE_LIST_H
#define DS_PICKLE_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

/* Scratch space reused from one pickle to the next (zero it to start;
 * ds_pickle_list_free releases it). */
typedef struct ds_pickle_list {
  ds_value *st;      /* value stack */
  size_t st_cap;
  size_t *marks;     /* MARK stack */
  size_t marks_cap;
  ds_value *memo;
  size_t memo_cap;
  size_t *org, *org_memo;  /* ds_pickle_list_prefix: where slots and memo */
  size_t org_cap, org_memo_cap; /* entries came from */
} ds_pickle_list;

void ds_pickle_list_free(ds_pickle_list *l);

/* Decode p[0..n) into *out (allocated in `a`; strings point into p) when
 * it is a list of flat examples: 0. 1 when it is not (or out of memory):
 * *out is then unset and `a` may hold garbage the caller can reset. */
int ds_pickle_list_decode(ds_pickle_list *l, const uint8_t *p, size_t n,
                          ds_arena *a, ds_value *out);

/* The same walk and checks over the whole pickle, but only example k is
 * built: 0 with *count the list's length and *ex its item k (when
 * k < *count), exactly as ds_pickle_list_decode would give them; 1 when
 * ds_pickle_list_decode would decline. For a lookup of one example. */
int ds_pickle_list_example(ds_pickle_list *l, const uint8_t *p, size_t n,
                           ds_arena *a, size_t k, ds_value *ex, size_t *count);

/* For a pickle ds_pickle_list_example (for any example) or
 * ds_pickle_list_decode has accepted before (the same bytes), with k below
 * the count it gave: walk only until example k is final, without the
 * checks of the rest (the walk's checks other than those of the text in
 * the example built do not depend on k, and example k's are made here).
 * 0 with *ex exactly as ds_pickle_list_example gives it; 1 when it would
 * decline or the walk cannot tell where the example ends (the caller then
 * walks the whole pickle). On bytes never accepted, the result means
 * nothing. */
int ds_pickle_list_prefix(ds_pickle_list *l, const uint8_t *p, size_t n, ds_arena *a,
                          size_t k, ds_value *ex);

#endif
