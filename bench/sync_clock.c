/* sync_clock.c - the durability cost of the write workloads (bench_w,
 * bench_wac): this program's own fsync and fdatasync, which time the
 * libc call they pass on to and count it. run.sh links the drivers with
 * -Wl,--export-dynamic-symbol for both names, so the extension (loaded
 * with sqlite3_load_extension) and libsqlite3 bind their calls here, and
 * a copy's fsyncs (the writer's xSync, SQLite's journal and database)
 * are measured wherever they happen, on any thread. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "bench_sync.h"

static _Atomic long long sync_ns, sync_calls;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Call the next definition of `name` (libc's) on fd, timed. */
static int timed(const char *name, int fd) {
  int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, name);
  if (!real) return -1;
  long long t0 = now_ns();
  int rc = real(fd);
  sync_ns += now_ns() - t0;
  sync_calls++;
  return rc;
}

int fsync(int fd) { return timed("fsync", fd); }
int fdatasync(int fd) { return timed("fdatasync", fd); }

void bench_sync_reset(void) {
  sync_ns = 0;
  sync_calls = 0;
}
double bench_sync_ms(void) { return (double)sync_ns / 1e6; }
long long bench_sync_calls(void) { return sync_calls; }
