/* interrupt.c - cancellation scopes that ask SQLite whether to stop (see
 * interrupt.h). */
#include "interrupt.h"

#include <stddef.h>

/* The probe: about 90 VM steps (a few microseconds), so that a progress
 * handler set to run every N steps runs about every N/90 probes, i.e.
 * every N/90 ms of work (N = 1000: every ~11 ms). */
#define PROBE_SQL                                                          \
  "SELECT count(*) FROM (VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9),(10)," \
  "(11),(12),(13),(14),(15),(16))"

/* ds_cancel_fn: 1 when the statement should stop. */
static int interrupted(void *ctx) {
  ds_interrupt *it = ctx;
#if SQLITE_VERSION_NUMBER >= 3041000
  if (sqlite3_is_interrupted(it->db)) return 1;
#endif
  if (!it->probe) {
    int rc = sqlite3_prepare_v2(it->db, PROBE_SQL, -1, &it->probe, NULL);
    if (rc != SQLITE_OK) {
      it->probe = NULL;
      return rc == SQLITE_INTERRUPT;
    }
  }
  int rc = sqlite3_step(it->probe);
  sqlite3_reset(it->probe);
  return rc == SQLITE_INTERRUPT;
}

void ds_interrupt_begin(ds_interrupt *it, sqlite3 *db) {
  it->db = db;
  it->probe = NULL;
  ds_cancel_begin(&it->scope, interrupted, it);
}

int ds_interrupt_end(ds_interrupt *it) {
  int hit = ds_cancel_end(&it->scope);
  sqlite3_finalize(it->probe);
  it->probe = NULL;
  return hit;
}

int ds_vtab_interrupted(sqlite3_vtab *vtab) {
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = NULL;
  return SQLITE_INTERRUPT;
}
