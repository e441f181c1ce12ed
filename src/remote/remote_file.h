/* remote_file.h - an open remote object (the impl of a ds_vfs_file of the
 * remote backends): its tail from the open's one request, a few blocks
 * read since, and the ranges a prefetch hint fetched, so that a format's
 * footer reads cost nothing, a sequential scan costs one round of requests
 * per growing window, and a `rowid IN (...)` list one round for all its
 * records.
 *
 * Read-ahead: a read that follows the last one (or jumps forward less
 * than DS_RFILE_GAP: the gap is read through, not skipped with a new
 * request) fetches a window that starts at DS_RFILE_AHEAD_START and
 * doubles up to DS_RFILE_AHEAD_MAX; a window (or any fetch) larger than
 * DS_RFILE_PIECE_MIN is cut into up to DS_RFILE_INFLIGHT range GETs run at
 * once on as many connections (libcurl's multi interface, http.h), and
 * put back together in order. A read that jumps fetches what it asks (at
 * least DS_RFILE_MIN). No thread: the reader waits for its window.
 *
 * Memory: a file holds at most DS_RFILE_BLOCKS blocks of at most
 * DS_RFILE_AHEAD_MAX bytes (the window is one of them), plus at most
 * DS_RFILE_PREFETCH_MAX bytes of prefetched ranges, plus its tail
 * (DS_PROBE_TAIL); all open remote files together hold at most
 * DS_REMOTE_HELD_MAX bytes of blocks and prefetched ranges: past it a read
 * fetches just what it asks and keeps nothing.
 *
 * Every range GET carries If-Match with the ETag of the open: a replaced
 * object fails with ESTALE (the "changed while in use" error), never mixed
 * bytes. Reads from several threads are safe (blocks under a lock;
 * requests run outside it). */
#ifndef DS_REMOTE_FILE_H
#define DS_REMOTE_FILE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/vfs.h"
#include "remote/remote_probe.h"

#define DS_RFILE_BLOCKS 4
#define DS_RFILE_MIN ((uint64_t)64 << 10)          /* least bytes a GET asks */
#define DS_RFILE_AHEAD_START ((uint64_t)1 << 20)   /* first read-ahead window */
#define DS_RFILE_AHEAD_MAX ((uint64_t)16 << 20)    /* read-ahead cap */
#define DS_RFILE_PIECE_MIN ((uint64_t)1 << 20)     /* least bytes of one GET of a cut fetch */
#define DS_RFILE_INFLIGHT 4                        /* GETs of one window at once */
#define DS_RFILE_GAP ((uint64_t)1 << 20)           /* forward jumps read through */
#define DS_RFILE_PREFETCH_MAX ((uint64_t)64 << 20) /* prefetched bytes per file */
#define DS_REMOTE_HELD_MAX ((uint64_t)512 << 20)   /* all files' blocks */
#define DS_RFILE_PREFETCH_PARALLEL 64              /* prefetch GETs at once */

typedef struct ds_rblock {
  uint64_t off;
  size_t len;
  uint8_t *data;
  uint64_t used; /* last use (LRU) */
} ds_rblock;

typedef struct ds_rfile {
  ds_robj obj;
  ds_probe at_open; /* size, ETag, version, tail */
  pthread_mutex_t mu;
  ds_rblock blk[DS_RFILE_BLOCKS];
  ds_rblock *pre;    /* prefetched ranges, sorted by off, disjoint */
  size_t npre;
  uint64_t tick;
  uint64_t next_seq; /* where the last read ended */
  uint64_t ahead;    /* read-ahead now */
} ds_rfile;

/* Take obj and probe (both owned by the file after). */
ds_rfile *ds_rfile_new(ds_robj *obj, ds_probe *p);
void ds_rfile_free(ds_rfile *f);
/* Read up to n bytes at off (fewer at the end, and fewer when the read
 * starts in a prefetched range and runs past it: the range's bytes, no
 * request): the count, or -1 with errno (and the detail set through
 * ds_vfs_set_detail). */
ssize_t ds_rfile_pread(ds_rfile *f, void *buf, size_t n, uint64_t off);
/* Fetch the ranges r[0..n) now (sorted, merged through small gaps, many
 * requests in flight) and keep them for the reads that follow, replacing
 * what an earlier prefetch kept; within DS_RFILE_PREFETCH_MAX. Failures
 * are dropped: those bytes are fetched (and their errors told) when read. */
void ds_rfile_prefetch(ds_rfile *f, const ds_vfs_range *r, size_t n);

/* ds_rfile_prefetch of k files at once: the ranges r[j][0..n[j]) of
 * fs[j], all their GETs in one batch (DS_RFILE_PREFETCH_PARALLEL in flight
 * on as many connections; the settings of fs[0]'s object: retries,
 * timeouts), so that a list of rows over many shards costs one round, not
 * one per shard. A file with no range keeps what it held. */
void ds_rfile_prefetch_many(ds_rfile *const *fs, const ds_vfs_range *const *r,
                            const size_t *n, size_t k);

/* Bytes of blocks and prefetched ranges all open remote files hold now. */
uint64_t ds_rfile_held_bytes(void);

#endif
