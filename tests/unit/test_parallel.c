/* test_parallel.c - independent tasks run at once (core/parallel.c):
 * every task runs exactly once for 0, 1, a few and more tasks than
 * threads; tasks really overlap (each waits, bounded, until all of a
 * round have started); one task runs on the caller's thread; helpers see
 * the caller's remote settings; a cancel of the caller reaches the
 * tasks' cancel checks. */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/cancel.h"
#include "core/parallel.h"
#include "core/vfs.h"

#define MANY (3 * DS_PARALLEL_MAX + 1)

typedef struct tasks {
  int runs[MANY];
  pthread_t who[MANY];
  const ds_vfs_remote_opts *ropts[MANY];
  int wait_all;  /* each task waits until `wait_all` tasks have started */
  int started;   /* atomic */
  int overlapped[MANY];
  int saw_cancel[MANY];
  int poll_cancel; /* tasks poll ds_cancel_check up to 5 s */
} tasks;

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void task(void *ctx, size_t i) {
  tasks *t = ctx;
  t->runs[i]++;
  t->who[i] = pthread_self();
  t->ropts[i] = ds_vfs_remote_current();
  __atomic_add_fetch(&t->started, 1, __ATOMIC_SEQ_CST);
  int64_t end = now_ms() + 5000; /* bounded: 5 s at most */
  if (t->wait_all) {
    while (__atomic_load_n(&t->started, __ATOMIC_SEQ_CST) < t->wait_all && now_ms() < end)
      usleep(1000);
    t->overlapped[i] = __atomic_load_n(&t->started, __ATOMIC_SEQ_CST) >= t->wait_all;
  }
  if (t->poll_cancel) {
    while (!ds_cancel_check() && now_ms() < end) usleep(1000);
    t->saw_cancel[i] = ds_cancel_check();
  }
}

static void test_counts(void) {
  static const size_t ns[] = {0, 1, 2, 5, DS_PARALLEL_MAX, MANY};
  for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
    tasks t;
    memset(&t, 0, sizeof t);
    ds_parallel(ns[k], task, &t);
    int once = 1, none_past = 1;
    for (size_t i = 0; i < ns[k]; i++) once &= t.runs[i] == 1;
    for (size_t i = ns[k]; i < MANY; i++) none_past &= t.runs[i] == 0;
    check_note("    n = %zu\n", ns[k]);
    CHECK(once && none_past);
  }
}

static void test_one_on_caller(void) {
  tasks t;
  memset(&t, 0, sizeof t);
  ds_parallel(1, task, &t);
  CHECK(t.runs[0] == 1 && pthread_equal(t.who[0], pthread_self()));
}

static void test_overlap_and_settings(void) {
  tasks t;
  memset(&t, 0, sizeof t);
  t.wait_all = 4;
  ds_vfs_remote_opts o;
  memset(&o, 0, sizeof o);
  const ds_vfs_remote_opts *was = ds_vfs_remote_use(&o);
  ds_parallel(4, task, &t);
  ds_vfs_remote_use(was);
  int all = 1, settings = 1, helpers = 1;
  for (int i = 0; i < 4; i++) {
    all &= t.overlapped[i];
    settings &= t.ropts[i] == &o;
    helpers &= !pthread_equal(t.who[i], pthread_self());
  }
  CHECK(all);      /* the 4 ran at once: none waited for another's end */
  CHECK(settings); /* each saw the caller's remote settings */
  CHECK(helpers);  /* on helper threads */
}

static int stop_now(void *ctx) {
  (void)ctx;
  return 1;
}

static void test_cancel(void) {
  tasks t;
  memset(&t, 0, sizeof t);
  t.poll_cancel = 1;
  ds_cancel_scope sc;
  ds_cancel_begin(&sc, stop_now, NULL);
  ds_parallel(3, task, &t);
  ds_cancel_end(&sc);
  /* each task's check said stop (without the caller's cancel reaching
   * them they give up after their own 5 s, not having seen it) */
  CHECK(t.saw_cancel[0] && t.saw_cancel[1] && t.saw_cancel[2]);
}

int main(void) {
  test_counts();
  test_one_on_caller();
  test_overlap_and_settings();
  test_cancel();
  return check_exit();
}
