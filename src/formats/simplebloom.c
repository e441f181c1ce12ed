/* simplebloom.c - simplebloom's parameters, hashes and bits (see
 * simplebloom.h and datadings.md section 7). */
#include <blake2.h>
#include <math.h>
#include <string.h>

#include "formats/simplebloom.h"

/* Big-endian u64 at p. */
static uint64_t be64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) v = v << 8 | p[i];
  return v;
}

static void put_be64(uint8_t *p, uint64_t v) {
  for (int i = 7; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
}

uint64_t simplebloom_bytes(uint64_t m, double p) {
  if (m == 0 || !(p > 0.0 && p < 1.0)) return 0;
  /* exactly simplebloom's order of double operations */
  double x = (double)m * log(p);
  x = x / -0.4804530139182015;
  x = x / 8.0;
  return (uint64_t)ceil(x);
}

double simplebloom_hash_count(uint64_t num_bits, uint64_t m) {
  double k = (double)num_bits / (double)m;
  return rint(k * 0.6931471805599453);
}

void simplebloom_hashes(const uint8_t *key, size_t n, uint64_t *h1,
                        uint64_t *h2) {
  uint8_t d[BLAKE2S_OUTBYTES];
  blake2s(d, key ? key : (const uint8_t *)"", NULL, BLAKE2S_OUTBYTES, n, 0);
  *h1 = be64(d);
  *h2 = be64(d + 8);
}

int simplebloom_test(const uint8_t *bits, uint64_t num_bits, uint32_t k,
                     uint64_t h1, uint64_t h2) {
  for (uint64_t j = 0; j < k; j++) {
    uint64_t pos = (h1 + j * h2) % num_bits; /* u64 wrap-around, as upstream */
    if ((bits[pos >> 3] & (1u << (pos & 7))) == 0) return 0;
  }
  return 1;
}

void simplebloom_add(uint8_t *bits, uint64_t num_bits, uint32_t k, uint64_t h1,
                     uint64_t h2) {
  for (uint64_t j = 0; j < k; j++) {
    uint64_t pos = (h1 + j * h2) % num_bits;
    bits[pos >> 3] |= (uint8_t)(1u << (pos & 7));
  }
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
