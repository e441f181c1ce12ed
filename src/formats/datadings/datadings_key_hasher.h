/* datadings_key_hasher.h - the two BLAKE2s hashes a datadings writer needs
 * of every key at commit, computed on a worker thread while rows are still
 * coming: the .key_hashes entry with upstream's first salt (salt_for(0),
 * datadings_key_hash) and the .filter's unsalted h1, h2
 * (simplebloom_hashes). The writing thread only copies each key into a
 * batch; the worker hashes whole batches.
 *
 * The results go to a staged temporary file (the "spill", 24 bytes a key:
 * the 8 salted bytes as .key_hashes holds them, then h1 and h2 in native
 * byte order), not to memory, so the writer's memory stays the key set's.
 * Only the worker touches the spill between start and finish (or cut);
 * after finish every key added is in it, in order. Knows no SQLite. */
#ifndef DS_DATADINGS_KEY_HASHER_H
#define DS_DATADINGS_KEY_HASHER_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"

#define DD_HASH_RECORD 24 /* bytes of the spill a key */

/* One key's record, as read back from the spill. */
typedef struct dd_key_hashes {
  uint8_t salted[8]; /* datadings_key_hash with salt_for(0) */
  uint64_t h1, h2;   /* simplebloom_hashes */
} dd_key_hashes;

typedef struct dd_key_hasher dd_key_hasher;

/* Hash into `spill` (borrowed; it must stay open until stop), appending
 * after the records already in it. NULL when out of memory. Without a
 * thread (pthread_create failed) batches are hashed by the caller. */
dd_key_hasher *dd_key_hasher_start(ds_afile *spill);
/* Queue key k (copied). -1 with *err when the worker failed (the spill
 * could not be written) or memory ran out. */
int dd_key_hasher_add(dd_key_hasher *h, const uint8_t *k, size_t n, char **err);
/* Wait until every key queued is in the spill (flushed to its file). */
int dd_key_hasher_finish(dd_key_hasher *h, char **err);
/* Forget every key past the first `keys` (waits for the worker first). */
int dd_key_hasher_cut(dd_key_hasher *h, uint64_t keys, char **err);
/* Stop the worker (queued keys are dropped) and free. NULL is fine. */
void dd_key_hasher_stop(dd_key_hasher *h);

/* Records [first, first + count) of a finished spill into out. */
int dd_key_hasher_read(const ds_afile *spill, uint64_t first, uint64_t count,
                       dd_key_hashes *out, char **err);

#endif
