/* remote_stats.h - what remote reading cost, per endpoint ("scheme://host:
 * port" of the URLs requested), since the library was loaded or since the
 * last reset: requests (tries sent), retries, failures, body bytes
 * fetched, time waited for the network (milliseconds, the wall time of
 * each batch of requests), and the persistent cache's hits, misses and
 * bytes served. The remote client (src/remote) adds; datasets_remote_stats()
 * (src/sql) reads. Thread-safe: a fixed table of endpoints under a mutex,
 * counters added atomically. Plain C: no SQLite, no HTTP. */
#ifndef DS_REMOTE_STATS_H
#define DS_REMOTE_STATS_H

#include <stddef.h>
#include <stdint.h>

#define DS_RSTATS_ENDPOINTS 64 /* endpoints counted apart; more share "(other)" */

typedef enum ds_rstat_field {
  DS_RSTAT_REQUESTS,
  DS_RSTAT_RETRIES,
  DS_RSTAT_FAILURES,
  DS_RSTAT_BYTES,
  DS_RSTAT_WAIT_US,
  DS_RSTAT_CACHE_HITS,
  DS_RSTAT_CACHE_MISSES,
  DS_RSTAT_CACHE_BYTES,
  DS_RSTAT_NFIELDS
} ds_rstat_field;

typedef struct ds_rstats_row {
  char endpoint[128];
  uint64_t v[DS_RSTAT_NFIELDS];
} ds_rstats_row;

/* The endpoint of url ("http://h:p", "https://h": scheme and authority,
 * without user info) into out. */
void ds_rstats_endpoint(const char *url, char out[128]);
/* Add n to field f of url's endpoint. */
void ds_rstats_add(const char *url, ds_rstat_field f, uint64_t n);
/* Add v (one count per field) to endpoint e's row (ds_rstats_endpoint). */
void ds_rstats_add_row(const char *e, const uint64_t v[DS_RSTAT_NFIELDS]);
/* The rows (endpoints with any count), at most max: their number. reset
 * = 1 zeroes the counters as they are read (nothing counted is lost). */
size_t ds_rstats_read(ds_rstats_row *rows, size_t max, int reset);

#endif
