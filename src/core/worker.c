/* worker.c - start and stop a helper thread (see worker.h). */
#include "core/worker.h"

#include <sched.h>

void ds_worker_start(ds_worker *w, void *(*main)(void *), void *arg) {
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  w->stop = 0;
  w->running = pthread_create(&w->thread, NULL, main, arg) == 0;
}

void ds_worker_stop(ds_worker *w) {
  pthread_mutex_lock(&w->mu);
  w->stop = 1;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  if (w->running) pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->mu);
  pthread_cond_destroy(&w->cv);
}

int ds_worker_cpus(void) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  int n = CPU_COUNT(&set);
  return n > 0 ? n : 1;
}
