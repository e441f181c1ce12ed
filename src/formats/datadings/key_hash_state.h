/* key_hash_state.h - datadings' two key hashes in two steps, for hashing
 * many keys: the BLAKE2s starting state once, then each key from a copy
 * of it (the same bytes as datadings_key_hash and simplebloom_hashes, less
 * the parameter block set up per key). Apart from datadings.h and
 * simplebloom.h because it needs libb2's types, which the SQLite layer
 * including those headers must not see. Knows no SQLite. */
#ifndef DS_KEY_HASH_STATE_H
#define DS_KEY_HASH_STATE_H

#include <blake2.h>
#include <stddef.h>
#include <stdint.h>

/* datadings_key_hash (datadings.c): the state for `salt`, then a key's
 * 8 bytes. */
void datadings_key_hash_init(const uint8_t salt[8], blake2s_state *init);
void datadings_key_hash_from(const blake2s_state *init, const uint8_t *key,
                             size_t n, uint8_t out[8]);

/* simplebloom_hashes (simplebloom.c): the unkeyed state, then a key's
 * h1, h2. */
void simplebloom_hash_init(blake2s_state *init);
void simplebloom_hashes_from(const blake2s_state *init, const uint8_t *key,
                             size_t n, uint64_t *h1, uint64_t *h2);

#endif
