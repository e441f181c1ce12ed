/* remote_probe.h - what is at a remote path, learnt with as few requests
 * as possible: one suffix range GET gives a file's size, ETag and tail
 * (kept, so an open right after a stat costs nothing more); a key that is
 * not there is a "folder" when keys lie under it (s3/gs: one listing of
 * the prefix) or when "url/" answers as a web server answers for a folder
 * (http(s): 200 or 403). Answers are remembered for DS_PROBE_TTL_MS in a
 * small process-wide cache (the stat, open, stat again of one table open
 * make one request); a read's If-Match still sees a change at once. */
#ifndef DS_REMOTE_PROBE_H
#define DS_REMOTE_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote_cache.h"
#include "remote/remote_object.h"

#define DS_PROBE_TAIL ((uint64_t)64 << 10) /* bytes of a file's end fetched at open */
#define DS_PROBE_TTL_MS 2000

typedef enum ds_probe_kind { DS_PROBE_MISSING = 0, DS_PROBE_FILE, DS_PROBE_DIR } ds_probe_kind;

typedef struct ds_probe {
  ds_probe_kind kind;
  uint64_t size;
  char etag[200];
  char version_id[128];
  uint8_t *tail;    /* the last tail_len bytes (malloc'd; NULL when none) */
  size_t tail_len;
  char why[512];    /* MISSING: the server's answer ("GET <url>: HTTP 404 NoSuchKey") */
} ds_probe;

/* What is at o. fresh = 1 skips the cache (restat). 0 ok (kind MISSING
 * too), -1 with *err (and *eno an errno value) when it cannot be told. */
int ds_probe_get(const ds_robj *o, int fresh, ds_probe *out, int *eno, char **err);
/* How ds_probe_many learns what is at o without ds_probe_get's one
 * request in a row per path. ds_probe_plan: DS_PLAN_KNOWN with out set
 * when no request is needed (the process's answers, the disk cache inside
 * its freshness window); DS_PLAN_SUFFIX when the first request is the
 * suffix range GET of ds_probe_suffix_req (those of many paths go in one
 * batch; a success is taken by ds_probe_take, which remembers it in the
 * process, and ds_probe_keep writes it to the disk cache (apart: the
 * writes of many answers run on several threads); anything else goes to
 * ds_probe_get, whose fallbacks
 * tell folders, missing keys and servers that get suffixes wrong);
 * DS_PLAN_ASK when ds_probe_get must ask (a disk entry to confirm, an
 * endpoint that answers suffix ranges wrongly). */
enum { DS_PLAN_KNOWN = 1, DS_PLAN_SUFFIX, DS_PLAN_ASK };
int ds_probe_plan(const ds_robj *o, ds_probe *out);
void ds_probe_suffix_req(const ds_robj *o, ds_http_req *r);
void ds_probe_take(const ds_robj *o, ds_http_req *r, ds_probe *out);
void ds_probe_keep(const ds_robj *o, const ds_probe *p);
/* Remember that url is a folder (a listing just showed keys under it),
 * as ds_probe_get would have found it: the stat of each folder a listing
 * gave (an atlas root's shard folders) then asks nothing while the answer
 * is fresh, instead of a suffix GET (404) and a listing in a row. */
void ds_probe_note_dir(const char *url);
/* Forget the cached answer for url (the writers, after changing the
 * object, and before checking that one is absent). */
void ds_probe_forget(const char *url);
void ds_probe_free(ds_probe *p);
/* p as the disk cache sees it (remote_cache.h; the tail borrowed). */
void ds_probe_cache_view(const ds_probe *p, ds_rcache_obj *v);

/* 1 when the store of answers probed in parallel (remote_probe_many.c,
 * ds_probe_many) has a fresh one for url (copied to out), else 0;
 * ds_probe_get asks it first. */
int ds_probe_warm_get(const char *url, ds_probe *out);
/* Drop url's answer from that store (a writer just changed the object). */
void ds_probe_warm_forget(const char *url);

/* errno for a request's failure: 404 ENOENT, 401/403 EACCES, changed
 * ESTALE, interrupted ECANCELED, else EIO. */
int ds_probe_errno(const ds_http_req *r);

#endif
