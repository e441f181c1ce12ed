/* parallel.h - n independent tasks run at once on helper threads (at most
 * DS_PARALLEL_MAX), the caller waiting for all of them: the steps of a
 * publish that each wait on a round trip (a check per object, a complete
 * per object) take one round trip instead of n in a row. Each helper runs
 * with the caller's remote settings current (ds_vfs_remote_use) and a
 * cancel scope that the caller trips when its own cancel check says stop
 * (polled every 50 ms while it waits). One task, or no thread to be had:
 * the caller runs the tasks itself, in order. Knows no SQLite. */
#ifndef DS_PARALLEL_H
#define DS_PARALLEL_H

#include <stddef.h>

#define DS_PARALLEL_MAX 16

/* A task: fn(ctx, i) for one i of [0, n); tasks share ctx and must touch
 * only their own slot of it. */
typedef void (*ds_task_fn)(void *ctx, size_t i);

/* Run fn(ctx, i) for every i in [0, n) and return when all returned. */
void ds_parallel(size_t n, ds_task_fn fn, void *ctx);

#endif
