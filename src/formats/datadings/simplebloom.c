/* simplebloom.c - simplebloom's parameters, hashes and bits (see
 * simplebloom.h and datadings.md section 7). */
#include <blake2.h>
#include <math.h>
#include <string.h>

#include "core/numbers.h"
#include "formats/datadings/key_hash_state.h"
#include "formats/datadings/simplebloom.h"

static void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

uint64_t simplebloom_bytes(uint64_t m, double p) {
  if (m == 0 || !(p > 0.0 && p < 1.0)) return 0;
  /* exactly simplebloom's order of double operations */
  double x = (double)m * log(p);
  x = x / -0.4804530139182015;
  x = ceil(x / 8.0);
  /* a hostile capacity can ask for more than 2^64 bytes: unusable */
  if (!(x < 18446744073709551616.0)) return 0;
  return (uint64_t)x;
}

double simplebloom_hash_count(uint64_t num_bits, uint64_t m) {
  double k = (double)num_bits / (double)m;
  return rint(k * 0.6931471805599453);
}

void simplebloom_hash_init(blake2s_state *init) {
  blake2s_init(init, BLAKE2S_OUTBYTES);
}

void simplebloom_hashes_from(const blake2s_state *init, const uint8_t *key,
                             size_t n, uint64_t *h1, uint64_t *h2) {
  blake2s_state S = *init;
  uint8_t d[BLAKE2S_OUTBYTES];
  blake2s_update(&S, key ? key : (const uint8_t *)"", n);
  blake2s_final(&S, d, sizeof d);
  *h1 = ds_load_uint(d, 8, 1);
  *h2 = ds_load_uint(d + 8, 8, 1);
}

void simplebloom_hashes(const uint8_t *key, size_t n, uint64_t *h1,
                        uint64_t *h2) {
  blake2s_state S;
  simplebloom_hash_init(&S);
  simplebloom_hashes_from(&S, key, n, h1, h2);
}

/* The bit positions (h1 + j * h2) % num_bits, j = 0, 1, ..., with the sum
 * wrapping around 2^64 as upstream's numpy uint64 does, stepped without a
 * division per position: pos moves by h2 % num_bits, and by 2^64 %
 * num_bits less whenever the 64-bit sum wraps. */
typedef struct bloom_walk {
  uint64_t sum, pos, n, step, wrap;
} bloom_walk;

static bloom_walk walk_start(uint64_t num_bits, uint64_t h1, uint64_t h2) {
  bloom_walk w = {h1, h1 % num_bits, num_bits, h2 % num_bits,
                  (UINT64_MAX % num_bits + 1) % num_bits};
  return w;
}

/* The next position (j + 1) from position j in w. */
static void walk_next(bloom_walk *w, uint64_t h2) {
  uint64_t s = w->sum + h2, p = w->pos + w->step; /* pos, step < n */
  if (p >= w->n || p < w->pos) p -= w->n;
  if (s < h2) p = p >= w->wrap ? p - w->wrap : p + (w->n - w->wrap);
  w->sum = s;
  w->pos = p;
}

void simplebloom_positions(uint64_t num_bits, uint32_t k, uint64_t h1,
                           uint64_t h2, uint64_t *pos) {
  if (num_bits == 0) return;
  bloom_walk w = walk_start(num_bits, h1, h2);
  for (uint32_t j = 0; j < k; j++, walk_next(&w, h2)) pos[j] = w.pos;
}

int simplebloom_test(const uint8_t *bits, uint64_t num_bits, uint32_t k,
                     uint64_t h1, uint64_t h2) {
  if (num_bits == 0) return 1; /* no bits: cannot tell absent */
  bloom_walk w = walk_start(num_bits, h1, h2);
  for (uint32_t j = 0; j < k; j++, walk_next(&w, h2))
    if ((bits[w.pos >> 3] & (1u << (w.pos & 7))) == 0) return 0;
  return 1;
}

void simplebloom_add(uint8_t *bits, uint64_t num_bits, uint32_t k, uint64_t h1,
                     uint64_t h2) {
  if (num_bits == 0) return;
  bloom_walk w = walk_start(num_bits, h1, h2);
  for (uint32_t j = 0; j < k; j++, walk_next(&w, h2))
    bits[w.pos >> 3] |= (uint8_t)(1u << (w.pos & 7));
}

void simplebloom_header(uint8_t out[SIMPLEBLOOM_HEADER], uint64_t total_size,
                        uint64_t m, double p) {
  memcpy(out, "SIMPBLOO", 8);
  put_be64(out + 8, total_size);
  put_be64(out + 16, m);
  uint64_t pb;
  memcpy(&pb, &p, sizeof pb);
  put_be64(out + 24, pb);
}

void simplebloom_prefetch(const uint8_t *bits, const uint64_t *pos, uint32_t k) {
  for (uint32_t j = 0; j < k; j++) __builtin_prefetch(bits + (pos[j] >> 3), 1);
}

void simplebloom_set(uint8_t *bits, const uint64_t *pos, uint32_t k) {
  for (uint32_t j = 0; j < k; j++) bits[pos[j] >> 3] |= (uint8_t)(1u << (pos[j] & 7));
}
