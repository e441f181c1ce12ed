/* test_simplebloom.c - formats/datadings/simplebloom.c: the bits simplebloom_add sets
 * and simplebloom_test reads are upstream's (h1 + j * h2) % num_bits, the
 * sum wrapping around 2^64, for bit counts small and past 2^63 and hashes
 * near 2^64 (where the stepped positions meet the wrap-around). Each check
 * fails if one position of the stepped walk is off. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats/datadings/simplebloom.h"

static uint64_t next_rand(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The positions simplebloom_add sets in a small bit array equal the
 * formula's, over many random hashes. */
static int small_arrays_match(void) {
  uint64_t seed = 42;
  static const uint64_t sizes[] = {1, 7, 8, 1000, 28755, 1u << 20, 3000017};
  for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
    uint64_t nb = sizes[z];
    uint8_t *got = calloc(nb / 8 + 1, 1), *want = calloc(nb / 8 + 1, 1);
    for (int t = 0; t < 2000; t++) {
      uint64_t h1 = next_rand(&seed), h2 = next_rand(&seed);
      if (t % 3 == 0) h2 = UINT64_MAX - (h2 & 0xff); /* wraps every step */
      uint32_t k = 1 + (uint32_t)(next_rand(&seed) % 40);
      simplebloom_add(got, nb, k, h1, h2);
      for (uint64_t j = 0; j < k; j++) {
        uint64_t pos = (h1 + j * h2) % nb;
        want[pos >> 3] |= (uint8_t)(1u << (pos & 7));
      }
      if (!simplebloom_test(got, nb, k, h1, h2)) return 0;
    }
    int same = memcmp(got, want, nb / 8 + 1) == 0;
    free(got);
    free(want);
    if (!same) return 0;
  }
  return 1;
}

/* For bit counts up to and past 2^63 (no array), the walk's positions
 * (simplebloom_positions, the walk add and test step through) equal the
 * formula. */
static int huge_counts_match(void) {
  uint64_t seed = 7, pos[64];
  for (int t = 0; t < 20000; t++) {
    uint64_t nb = t % 2 ? (1ull << 63) + (next_rand(&seed) >> 1) : next_rand(&seed) >> (t % 60);
    if (nb == 0) nb = 1;
    uint64_t h1 = next_rand(&seed), h2 = next_rand(&seed);
    uint32_t k = 1 + (uint32_t)(next_rand(&seed) % 64);
    simplebloom_positions(nb, k, h1, h2, pos);
    for (uint32_t j = 0; j < k; j++)
      if (pos[j] != (h1 + (uint64_t)j * h2) % nb) return 0;
  }
  return 1;
}

int main(void) {
  CHECK(small_arrays_match());
  CHECK(huge_counts_match());
  uint8_t none[1] = {0};
  CHECK(simplebloom_test(none, 0, 5, 1, 2) == 1); /* no bits: not absent */
  return check_exit();
}
