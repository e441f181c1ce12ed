/* remote_ahead.h - whole small remote files fetched ahead (the remote
 * backends' ds_vfs_load_many: a bcolz scan's next chunk files): one range
 * GET of the first DS_RAHEAD_FILE_MAX bytes per file, sent on a helper
 * thread while the caller goes on (it decodes the chunks before them), in
 * batches of up to DS_RAHEAD_BATCH files, DS_RAHEAD_PARALLEL in flight at
 * once; each file that came whole (its size, ETag and bytes) is kept in a
 * process-wide store for DS_PROBE_TTL_MS. An open of that URL takes it
 * out (ds_rahead_take) and serves every read from it, with no request; an
 * open of a file still being fetched waits for it (never a second GET of
 * the same bytes). A file asked for again while pending or kept is not
 * fetched again.
 *
 * Memory: the store holds at most DS_RAHEAD_SLOTS files (pending ones
 * included) and DS_RAHEAD_BYTES bytes: past them files are not fetched or
 * not kept (their opens then probe as usual); the batch being fetched
 * holds at most DS_RAHEAD_BATCH x DS_RAHEAD_FILE_MAX bytes more. A changed
 * object is seen as ever: its bytes are those of one GET, with that GET's
 * ETag, and later change checks compare that ETag. */
#ifndef DS_REMOTE_AHEAD_H
#define DS_REMOTE_AHEAD_H

#include <stddef.h>

#include "remote/remote_probe.h"

#define DS_RAHEAD_FILE_MAX ((uint64_t)4 << 20) /* larger files: not fetched whole */
#define DS_RAHEAD_PARALLEL 16
#define DS_RAHEAD_BATCH 32
#define DS_RAHEAD_SLOTS 256
#define DS_RAHEAD_BYTES ((uint64_t)64 << 20)

/* Queue the files paths[0..n) to be fetched whole (with the remote
 * settings current on this thread, read now) into the store; returns at
 * once. Never fails. */
void ds_rahead_load(const char *const *paths, size_t n);
/* 1 with *out (its tail the whole file, taken by the caller) when the
 * store had a fresh copy of url (waiting for it when it was being
 * fetched), now removed from it; else 0. */
int ds_rahead_take(const char *url, ds_probe *out);

#endif
