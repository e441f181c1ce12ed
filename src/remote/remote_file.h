/* remote_file.h - an open remote object (the impl of a ds_vfs_file of the
 * remote backends): its tail from the open's one request, a few blocks
 * read since, and the ranges a prefetch hint fetched, so that a format's
 * footer reads cost nothing, a sequential scan costs one round of requests
 * per growing window, and a `rowid IN (...)` list one round for all its
 * records.
 *
 * Read-ahead: reads are sorted into up to DS_RFILE_STREAMS streams (a
 * scan of bagz records and one of its limits are two; the two threads of
 * a threads=2 scan reading batches in turn are one): a read that lands
 * within DS_RFILE_GAP of where a stream's last read ended follows it (a
 * gap is read through, not skipped with a new request). While a stream
 * follows itself (from its third read on: a lookup or two nearby do not
 * start it), blocks after it are fetched ahead on a helper thread of
 * the file (started when needed, gone when it has nothing to do, joined
 * at close): blocks of DS_RFILE_BLOCK_START bytes (1 MiB), doubling as the
 * stream reads on (a block is at most what the stream has read so far:
 * 2 MiB once 2 MiB are read, 4, then DS_RFILE_BLOCK_MAX, 8 MiB, once
 * 8 MiB are), each one range GET, up to DS_RFILE_AHEAD_BLOCKS blocks
 * ahead of the reader and never ending more than DS_RFILE_AHEAD_MAX
 * (24 MiB) past it (so 6 GETs of 1 or 2 MiB, then 6 of 4 MiB, then 2 or 3
 * of 8 MiB ahead), up to DS_RFILE_AHEAD_INFLIGHT in flight
 * as a window that never empties (one ds_http_run that goes on,
 * libcurl's multi interface on as many connections: as soon as a GET
 * ends, the next queued block is sent), so the reader finds its next
 * bytes there instead of waiting a round trip. A block being fetched is marked:
 * a reader that needs it (the other thread of a scan) waits for it rather
 * than fetching the same bytes again. A block a stream has read past is
 * freed at once. A read that jumps fetches what it asks (at least
 * DS_RFILE_MIN) on the reader's thread; one larger than a block is cut
 * into up to DS_RFILE_INFLIGHT range GETs at once and not kept.
 *
 * Memory: a file holds at most DS_RFILE_BLOCKS blocks of at most
 * DS_RFILE_BLOCK_MAX bytes (128 MiB), plus at most DS_RFILE_PREFETCH_MAX
 * bytes of prefetched ranges, plus its tail (DS_PROBE_TAIL); a sequential
 * scan holds per stream at most DS_RFILE_AHEAD_MAX bytes past its reader
 * and, behind it, the block it reads and those that end within
 * DS_RFILE_GAP of it (the other thread of a threads=2 scan): less than
 * DS_RFILE_AHEAD_MAX + DS_RFILE_BLOCK_MAX + DS_RFILE_GAP (33 MiB);
 * a stream's blocks stop where another stream began (bagz records do not
 * run on into the limits another stream reads);
 * when all files together hold more than DS_RFILE_SHED_AT bytes, a stream
 * about to fetch ahead first frees the ready blocks fetched ahead in the
 * other open files for streams not read in the last DS_RFILE_SHED_AFTER
 * reads of any file (a scan of a set of shards does not keep the last
 * blocks of each shard it finished: its memory stays flat in the number
 * of shards; the other thread of a threads=2 scan may still be reading
 * the end of the shard before);
 * a scan hints its next shard (ds_rfile_ahead): that shard's first blocks,
 * at most the len asked (a bagz scan: 1 MiB of records, 512 KiB of limits),
 * are fetched before the scan gets there and are not freed by other
 * files until their stream is read;
 * all open remote files together hold at most DS_REMOTE_HELD_MAX bytes of
 * blocks and prefetched ranges: past it a read fetches just what it asks
 * and keeps nothing, and nothing is fetched ahead.
 *
 * Every range GET carries If-Match with the ETag of the open: a replaced
 * object fails with ESTALE (the "changed while in use" error), never mixed
 * bytes (a block fetched ahead that failed is fetched again by the reader,
 * which then tells the error). Reads from several threads are safe
 * (blocks under a lock; requests run outside it). */
#ifndef DS_REMOTE_FILE_H
#define DS_REMOTE_FILE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/vfs.h"
#include "remote/remote_probe.h"

#define DS_RFILE_BLOCKS 16
#define DS_RFILE_STREAMS 4
#define DS_RFILE_MIN ((uint64_t)64 << 10)          /* least bytes a GET asks */
#define DS_RFILE_BLOCK_START ((uint64_t)1 << 20)   /* first block fetched ahead */
#define DS_RFILE_BLOCK_MAX ((uint64_t)8 << 20)     /* largest block */
#define DS_RFILE_AHEAD_BLOCKS 6                    /* blocks ahead of a stream */
#define DS_RFILE_AHEAD_INFLIGHT 8                  /* the helper's GETs in flight */
#define DS_RFILE_AHEAD_MAX ((uint64_t)24 << 20)    /* bytes ahead of a stream */
#define DS_RFILE_PIECE_MIN ((uint64_t)1 << 20)     /* least bytes of one GET of a cut fetch */
#define DS_RFILE_INFLIGHT 4                        /* GETs of one large read at once */
#define DS_RFILE_GAP ((uint64_t)1 << 20)           /* forward jumps read through */
#define DS_RFILE_PREFETCH_MAX ((uint64_t)64 << 20) /* prefetched bytes per file */
#define DS_REMOTE_HELD_MAX ((uint64_t)512 << 20)   /* all files' blocks */
#define DS_RFILE_SHED_AT ((uint64_t)4 << 20)       /* past it, other files' blocks go */
#define DS_RFILE_PREFETCH_PARALLEL 64              /* prefetch GETs at once */
/* A prefetch reads through gaps under this (a list of rows: one GET for
 * records up to this far apart). A GET in a round of 64 costs about as
 * long as 100-200 KiB of transfer (R-B1 point: 25 ms a round): 128 KiB
 * halves the requests of 1,000 random rows over 4 x 34 MB for twice the
 * bytes (19 to 39 MB); 256 KiB would save a bit more time for 4.5 x. */
#define DS_RFILE_PREFETCH_GAP ((uint64_t)128 << 10)
#define DS_RFILE_SHED_AFTER 8                      /* reads elsewhere before a stream's blocks shed */

/* A block's state (ds_rblock.state). */
enum { DS_RB_EMPTY = 0, DS_RB_READY, DS_RB_QUEUED, DS_RB_LOADING, DS_RB_FAILED };

typedef struct ds_rblock {
  uint64_t off;
  size_t len;
  uint8_t *data;
  uint64_t used; /* last use (LRU) */
  int state;     /* DS_RB_* (prefetched ranges: READY) */
  int stream;    /* the stream it was fetched ahead for, or -1 */
} ds_rblock;

/* Where a run of reads that follow each other is. */
typedef struct ds_rstream {
  uint64_t lo;   /* where its first read began */
  uint64_t pos;  /* where its last read ended (0: unused) */
  uint64_t next; /* where its blocks fetched ahead end */
  uint64_t used; /* last use (LRU) */
  uint64_t runs; /* reads that followed it */
  uint64_t seen; /* the process-wide read count at its last read */
  uint64_t hint_end; /* a hinted stream not read yet (ds_rfile_ahead):
                        its blocks end here and are not shed; 0: none */
} ds_rstream;

typedef struct ds_rfile {
  ds_robj obj;
  ds_probe at_open; /* size, ETag, version, tail */
  pthread_mutex_t mu;
  pthread_cond_t cv; /* broadcast when a block is fetched or fails */
  ds_rblock blk[DS_RFILE_BLOCKS];
  ds_rstream st[DS_RFILE_STREAMS];
  ds_rblock *pre;    /* prefetched ranges, sorted by off, disjoint */
  size_t npre;
  uint64_t tick;
  pthread_t helper;  /* fetches QUEUED blocks */
  int helper_on;     /* it runs (it clears this as it returns) */
  int helper_join;   /* it was started and not joined yet */
  int stop;          /* close: the helper returns */
  struct ds_rfile *prev, *next; /* all open remote files (remote_file.c) */
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

/* A hint: f will be read in order from off, soon (the next shard of a
 * scan). A stream starts at off as if two reads had followed each other
 * there, and its first blocks, up to len bytes (within a stream's usual window), are queued for the helper thread now: the call
 * does not wait. Its blocks are not shed until the stream is read. No-op
 * when a stream is near off already, for the tail, or past the cap. */
void ds_rfile_ahead(ds_rfile *f, uint64_t off, uint64_t len);

/* Bytes of blocks and prefetched ranges all open remote files hold now. */
uint64_t ds_rfile_held_bytes(void);

#endif
