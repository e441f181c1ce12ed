/* remote_cache.h - the persistent cache of remote index bytes (issue 24
 * item 2): on local disk, shared by every process of the user, so that a
 * second open of a remote dataset costs no GET of its index bytes.
 *
 * What it keeps, per URL (the key; an entry names the ETag it holds):
 *   - the probe answer of an object (remote_probe.h): size, ETag, version
 *     id and the tail bytes the open fetched (a bagz open's limits);
 *   - the whole bytes of an index or metadata object of at most
 *     DS_RCACHE_WHOLE_MAX bytes, as the readers name them with
 *     DS_VFS_HINT_INDEX (core/vfs.h: datadings .offsets/.keys/.key_hashes/
 *     .filter, atlas meta.json/index.npy/dictionaries, bcolz meta files,
 *     separate bagz limits, tfrecord indexes); data is never kept.
 * Objects without an ETag are never kept (nothing to check them against),
 * nor URLs with a query string (signed URLs: a new key each time, and a
 * signature for GET that a HEAD would not pass).
 *
 * Where: $DATASETS_REMOTE_CACHE_DIR when set, else
 * $XDG_CACHE_HOME/sqlite-datasets/remote, else
 * ~/.cache/sqlite-datasets/remote; one file per entry ("<sha256 of the
 * URL>.p" for a probe answer, ".w" for whole bytes), written to a temporary
 * file and renamed into place (concurrent processes see an old or a new
 * whole entry, never half of one), each with a CRC-32 of its content: an
 * entry that fails the check, or names another URL, is deleted and the
 * bytes fetched again. How big: DATASETS_REMOTE_CACHE_MAX bytes (K/M/G
 * suffixes; default 1G); when a process has written past it, the least
 * recently used entries (file mtime, set at each use) go until 3/4 of it
 * is left. Off: the option remote_cache=off, or DATASETS_REMOTE_CACHE=off.
 *
 * Freshness: a probe entry is used only after the server confirmed its
 * ETag (a HEAD, no body) unless it was confirmed less than
 * DATASETS_REMOTE_CACHE_FRESH_MS ago (default DS_RCACHE_FRESH_DEFAULT_MS,
 * 10 s, so that a warm open of 1,000 shards makes no request; 0: always
 * confirmed); whole bytes are used only for the ETag the open confirmed. A
 * replaced object (another ETag) is never served old bytes: within the
 * window an open may still see the old size and tail (a count(*) of a bagz
 * shard the old count), but the file's range reads fail on the new ETag
 * (and the entry is dropped). A writer of this machine drops the entries
 * of what it publishes or removes (vfs_publish.c).
 *
 * A guest: no printing; every failure of the cache (no folder, read-only
 * or full disk, a damaged entry) is silent and the bytes come from the
 * network. Only the local backend's seam calls (core/vfs.h) touch files. */
#ifndef DS_REMOTE_CACHE_H
#define DS_REMOTE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote_object.h"

#define DS_RCACHE_WHOLE_MAX ((uint64_t)16 << 20) /* objects read whole and kept */
#define DS_RCACHE_TAIL_MAX ((uint64_t)1 << 20)    /* a probe entry's tail, at most */
#define DS_RCACHE_MAX_DEFAULT ((uint64_t)1 << 30)
#define DS_RCACHE_FRESH_DEFAULT_MS 10000 /* DATASETS_REMOTE_CACHE_FRESH_MS unset */

/* What an object is (a probe answer: remote_probe.h) as the cache keeps it. */
typedef struct ds_rcache_obj {
  uint64_t size;
  char etag[200];
  char version_id[128];
  uint8_t *tail; /* the last tail_len bytes (malloc'd by probe_get) */
  size_t tail_len;
} ds_rcache_obj;

/* 1 when the cache is on for o (its remote_cache= option, else
 * DATASETS_REMOTE_CACHE) and has a folder. */
int ds_rcache_on(const ds_robj *o);

/* The probe entry of o's URL into out (tail malloc'd) with the age of its
 * last confirmation in *age_ms: 1 found, 0 not (or damaged: deleted). */
int ds_rcache_probe_get(const ds_robj *o, ds_rcache_obj *out, int64_t *age_ms);
/* Keep p (with an ETag) as o's probe entry, confirmed now. */
void ds_rcache_probe_put(const ds_robj *o, const ds_rcache_obj *p);
/* Forget o's entries (its object changed). */
void ds_rcache_drop(const ds_robj *o);

/* 1 when a freshness window is set (DATASETS_REMOTE_CACHE_FRESH_MS > 0, or
 * unset: the default). */
int ds_rcache_fresh_window(void);
/* 1 when a probe entry confirmed age_ms ago is inside the freshness
 * window (used without a request), 0 when it must be confirmed. */
int ds_rcache_fresh(int64_t age_ms);

/* 1 when the object p describes is one to keep whole: an ETag, at most
 * DS_RCACHE_WHOLE_MAX bytes, more than its tail, and the cache on. */
int ds_rcache_whole_wanted(const ds_robj *o, const ds_rcache_obj *p);
/* The whole object p describes (its size and ETag) into buf (size
 * bytes): 1 hit, 0 miss (counted in core/remote_stats.h). */
int ds_rcache_whole_get(const ds_robj *o, const ds_rcache_obj *p, void *buf);
/* Keep buf (the whole object p describes) as o's whole entry. */
void ds_rcache_whole_put(const ds_robj *o, const ds_rcache_obj *p, const void *buf);

#endif
