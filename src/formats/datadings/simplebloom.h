/* simplebloom.h - the Bloom filter of datadings' .filter files
 * (simplebloom 1.0.x, datadings.md section 7), shared by the reader and
 * the writer: parameters from capacity and false-positive rate in exactly
 * simplebloom's double arithmetic, the two 64-bit hashes of a key
 * (unsalted BLAKE2s), and bit tests and sets (LSB first in each byte).
 * Knows no SQLite. */
#ifndef DS_SIMPLEBLOOM_H
#define DS_SIMPLEBLOOM_H

#include <stddef.h>
#include <stdint.h>

#define SIMPLEBLOOM_HEADER 32

/* Bytes of bit array for capacity m and rate p: ceil(m ln p / -(ln 2)^2 / 8);
 * 0 when m or p is unusable or the size passes 2^64 bytes. */
uint64_t simplebloom_bytes(uint64_t m, double p);
/* Hash functions for num_bits bits and capacity m: round-half-even of
 * num_bits / m * ln 2. */
double simplebloom_hash_count(uint64_t num_bits, uint64_t m);
/* h1, h2: big-endian u64 of bytes 0..7 and 8..15 of BLAKE2s(key). */
void simplebloom_hashes(const uint8_t *key, size_t n, uint64_t *h1,
                        uint64_t *h2);
/* (Two-step form for many keys: formats/datadings/key_hash_state.h.) */
/* 1 when every bit of the key is set ("maybe"), 0 ("absent"). */
/* The k bit positions (h1 + j * h2) % num_bits (the sum wrapping around
 * 2^64) that add sets and test reads, into pos[0..k). */
void simplebloom_positions(uint64_t num_bits, uint32_t k, uint64_t h1,
                           uint64_t h2, uint64_t *pos);
/* Start loading the bytes of positions pos[0..k) into the cache (a writer
 * setting many keys prefetches one key's bits while hashing the next). */
void simplebloom_prefetch(const uint8_t *bits, const uint64_t *pos, uint32_t k);
/* Set the bits at positions pos[0..k). */
void simplebloom_set(uint8_t *bits, const uint64_t *pos, uint32_t k);
int simplebloom_test(const uint8_t *bits, uint64_t num_bits, uint32_t k,
                     uint64_t h1, uint64_t h2);
void simplebloom_add(uint8_t *bits, uint64_t num_bits, uint32_t k,
                     uint64_t h1, uint64_t h2);
/* The 32-byte header: "SIMPBLOO", total size, capacity, rate (all BE). */
void simplebloom_header(uint8_t out[SIMPLEBLOOM_HEADER], uint64_t total_size,
                        uint64_t m, double p);

#endif
