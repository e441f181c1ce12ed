/* remote_probe_many.h - the probes of many remote paths at once (the
 * remote backends' ds_vfs_stat_many): opening a set of N shards must not
 * cost N round trips in a row. First, on the calling thread, what is
 * known without a request is taken (answers of this process, the disk
 * cache inside its freshness window), and the paths whose probe starts
 * with a suffix range GET are asked in batches of requests in flight
 * (DS_PROBE_BATCH_PARALLEL, libcurl's multi interface, connections
 * reused; 4 x that many a batch, each batch's answers handed to the
 * threads for their disk-cache writes while the next is on the wire).
 * The paths left (a failure, a folder, a missing key, a disk entry to
 * confirm by HEAD) are probed by up to DS_PROBE_PARALLEL threads
 * at once (each probe is remote_probe.c's, with its fallbacks for servers
 * that answer suffix ranges wrongly and its folder checks), made for the
 * call and joined before it returns (none when nothing is left); the
 * answers go to a process-wide store that ds_probe_get consults first,
 * together when the batch ends, kept DS_PROBE_TTL_MS from then like the
 * probe cache, so the stats and opens that follow make no request. The store holds at most DS_PROBE_WARM_SLOTS
 * answers and DS_PROBE_WARM_BYTES bytes of tails; past them, answers are
 * not kept (the opens then probe one by one, as without the hint). An
 * interrupt of the caller stops the threads within a poll. */
#ifndef DS_REMOTE_PROBE_MANY_H
#define DS_REMOTE_PROBE_MANY_H

#include <stddef.h>

#include "remote/remote_probe.h"

#define DS_PROBE_PARALLEL 32
#define DS_PROBE_BATCH_PARALLEL 64
#define DS_PROBE_WARM_SLOTS 8192
#define DS_PROBE_WARM_BYTES ((uint64_t)256 << 20)

/* Probe paths[0..n) in parallel into the store (with the remote settings
 * current on this thread). Never fails. */
void ds_probe_many(const char *const *paths, size_t n);
/* (ds_probe_warm_get, the store's look-up, is in remote_probe.h.) */

#endif
