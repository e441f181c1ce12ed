/* parallel.c - independent tasks on helper threads, the caller waiting
 * (parallel.h). */
#include "core/parallel.h"

#include <pthread.h>
#include <time.h>

#include "core/cancel.h"
#include "core/vfs.h"

typedef struct run {
  ds_task_fn fn;
  void *ctx;
  size_t n, next, done;
  const ds_vfs_remote_opts *ropts; /* the caller's */
  int stop;                        /* atomic: the caller was cancelled */
  pthread_mutex_t mu;
  pthread_cond_t cv; /* signalled when a task ends */
} run;

/* The helpers' cancel check: the caller said stop. */
static int stopped(void *ctx) {
  run *r = ctx;
  return __atomic_load_n(&r->stop, __ATOMIC_RELAXED);
}

/* A helper: take the next task until none is left. */
static void *helper(void *arg) {
  run *r = arg;
  ds_vfs_remote_use(r->ropts);
  ds_cancel_scope sc;
  ds_cancel_begin(&sc, stopped, r);
  pthread_mutex_lock(&r->mu);
  while (r->next < r->n) {
    size_t i = r->next++;
    pthread_mutex_unlock(&r->mu);
    r->fn(r->ctx, i);
    pthread_mutex_lock(&r->mu);
    r->done++;
    pthread_cond_signal(&r->cv);
  }
  pthread_mutex_unlock(&r->mu);
  ds_cancel_end(&sc);
  return NULL;
}

void ds_parallel(size_t n, ds_task_fn fn, void *ctx) {
  run r = {fn, ctx, n, 0, 0, ds_vfs_remote_current(), 0,
           PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
  pthread_t t[DS_PARALLEL_MAX];
  size_t nt = 0;
  while (n > 1 && nt < n && nt < DS_PARALLEL_MAX && pthread_create(&t[nt], NULL, helper, &r) == 0)
    nt++;
  if (nt == 0) { /* alone: in order, on this thread */
    for (size_t i = 0; i < n; i++) fn(ctx, i);
    return;
  }
  pthread_mutex_lock(&r.mu);
  while (r.done < n) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 50 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&r.cv, &r.mu, &ts);
    if (r.done < n && ds_cancel_check()) __atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
  }
  pthread_mutex_unlock(&r.mu);
  for (size_t k = 0; k < nt; k++) pthread_join(t[k], NULL);
  pthread_mutex_destroy(&r.mu);
  pthread_cond_destroy(&r.cv);
}
