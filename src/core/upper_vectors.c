/* upper_vectors.c - vzeroupper after a library's AVX code (see
 * upper_vectors.h). */
#include "core/upper_vectors.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

/* The instruction, in a function compiled for AVX (the rest is not). */
__attribute__((target("avx"))) static void zeroupper(void) { _mm256_zeroupper(); }

void ds_clear_upper_vectors(void) {
  if (__builtin_cpu_supports("avx")) zeroupper();
}
#else
void ds_clear_upper_vectors(void) {}
#endif
