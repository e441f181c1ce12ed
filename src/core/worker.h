/* worker.h - one helper thread with the lock and condition variable it
 * shares with its owner: started, told to stop, joined. The read-ahead
 * rings (bagz, atlas) each run one. */
#ifndef DS_WORKER_H
#define DS_WORKER_H

#include <pthread.h>

typedef struct ds_worker {
  pthread_mutex_t mu;  /* guards stop and whatever the owner shares */
  pthread_cond_t cv;   /* broadcast on every change of shared state */
  pthread_t thread;
  int running;         /* the thread was created (else the owner works alone) */
  int stop;            /* guarded by mu: the thread should return */
} ds_worker;

/* Set up the lock and condition and start main(arg) on a new thread; when
 * the thread cannot be created, running stays 0 and the owner does all
 * the work itself. */
void ds_worker_start(ds_worker *w, void *(*main)(void *), void *arg);

/* How many CPUs the calling thread may run on (its affinity; 1 when it
 * cannot be read). A helper that spins for its owner, or works beside it,
 * pays only with 2 or more. */
int ds_worker_cpus(void);

/* Tell the thread to stop (stop = 1 under the lock, broadcast), wait for
 * it, then destroy the lock and condition. */
void ds_worker_stop(ds_worker *w);

#endif
