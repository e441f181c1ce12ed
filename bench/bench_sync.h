/* bench_sync.h - time spent in fsync / fdatasync by the whole process
 * (bench/sync_clock.c), for the write workloads' durability cost. */
#ifndef BENCH_SYNC_H
#define BENCH_SYNC_H

/* Zero the clock. */
void bench_sync_reset(void);
/* Milliseconds inside fsync and fdatasync since the last reset, and the
 * number of calls. */
double bench_sync_ms(void);
long long bench_sync_calls(void);

#endif
