/* cancel.c - per-thread cancellation scopes (see cancel.h). */
#include "cancel.h"

#include <stddef.h>
#include <time.h>

static _Thread_local ds_cancel_scope *current;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void ds_cancel_begin(ds_cancel_scope *s, ds_cancel_fn fn, void *ctx) {
  s->fn = fn;
  s->ctx = ctx;
  s->prev = current;
  s->next_ns = 0; /* the first check starts the clock: opening is cheap */
  s->count = 0;
  s->hit = 0;
  current = s;
}

int ds_cancel_end(ds_cancel_scope *s) {
  if (current == s) current = s->prev;
  return s->hit;
}

int ds_cancel_check(void) {
  ds_cancel_scope *s = current;
  if (!s) return 0;
  if (s->hit) return 1;
  int64_t t = now_ns();
  if (s->next_ns == 0) {
    s->next_ns = t + DS_CANCEL_EVERY_NS;
    return 0;
  }
  if (t < s->next_ns) return 0;
  s->next_ns = t + DS_CANCEL_EVERY_NS;
  if (s->fn(s->ctx)) s->hit = 1;
  return s->hit;
}

int ds_cancel_poll(void) {
  ds_cancel_scope *s = current;
  if (!s) return 0;
  if (s->hit) return 1;
  if (++s->count % 64) return 0;
  return ds_cancel_check();
}
