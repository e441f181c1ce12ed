/* cancel.h - cooperative cancellation of long calls. The SQLite glue opens
 * a scope around a call that may do unbounded work in one go (building an
 * index, hashing files, skipping rows) with a callback that says whether
 * the statement should stop (an interrupt, a progress handler); the
 * loops doing the work call ds_cancel_poll() per unit and give up with
 * DS_CANCEL_MSG when it returns 1. Scopes are per thread and nest; with no
 * scope open, polls return 0. Knows no SQLite. */
#ifndef DS_CANCEL_H
#define DS_CANCEL_H

#include <stdint.h>

/* The error text of work given up on request. */
#define DS_CANCEL_MSG "interrupted"

/* 1: stop. Called at most every DS_CANCEL_EVERY_NS. */
typedef int (*ds_cancel_fn)(void *ctx);

#define DS_CANCEL_EVERY_NS 1000000 /* 1 ms */

typedef struct ds_cancel_scope {
  ds_cancel_fn fn;
  void *ctx;
  struct ds_cancel_scope *prev;
  int64_t next_ns; /* when to ask fn again (0: at the first check + 1 ms) */
  unsigned count;  /* polls since the clock was last read */
  int hit;         /* fn said stop: sticky */
} ds_cancel_scope;

/* Open a scope on this thread (it must stay alive until ds_cancel_end). */
void ds_cancel_begin(ds_cancel_scope *s, ds_cancel_fn fn, void *ctx);
/* Close it (scopes close in reverse order); 1 when it was hit. */
int ds_cancel_end(ds_cancel_scope *s);

/* For loops whose steps are cheap: reads the clock every 64 calls. */
int ds_cancel_poll(void);
/* For steps of a millisecond or more: reads the clock every call. */
int ds_cancel_check(void);

#endif
