/* numbers.h - loads of numpy-style numbers from unaligned bytes in either
 * byte order (integers of 1 to 8 bytes, IEEE half/single/double floats),
 * shared by npy.c, bcolz.c and msgpack_value.c. Inline: they sit on the
 * hot path of every column scan. */
#ifndef DS_NUMBERS_H
#define DS_NUMBERS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* 1 on a little-endian host ('=' and bare dtype strings mean native). */
static inline int ds_host_little(void) {
  const uint16_t x = 1;
  return *(const uint8_t *)&x == 1;
}

/* An unsigned integer of `size` bytes (1 to 8), big- or little-endian. */
static inline uint64_t ds_load_uint(const uint8_t *p, unsigned size, int big) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (!big) { /* the common case: native order, one load */
    uint64_t u64;
    uint32_t u32;
    uint16_t u16;
    switch (size) {
    case 8: memcpy(&u64, p, 8); return u64;
    case 4: memcpy(&u32, p, 4); return u32;
    case 2: memcpy(&u16, p, 2); return u16;
    case 1: return p[0];
    default: break;
    }
  }
#endif
  uint64_t v = 0;
  if (big)
    for (unsigned k = 0; k < size; k++) v = v << 8 | p[k];
  else
    for (unsigned k = size; k-- > 0;) v = v << 8 | p[k];
  return v;
}

/* A two's complement signed integer of `size` bytes (1 to 8). */
static inline int64_t ds_load_int(const uint8_t *p, unsigned size, int big) {
  uint64_t u = ds_load_uint(p, size, big);
  if (size < 8 && (u >> (8 * size - 1)) & 1) u |= UINT64_MAX << (8 * size);
  return (u >> 63) ? -(int64_t)(~u) - 1 : (int64_t)u;
}

/* IEEE 754 half precision bits as a double. */
static inline double ds_half_to_double(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v;
  if (e == 0) v = ldexp((double)m, -24);
  else if (e == 31) v = m ? NAN : INFINITY;
  else v = ldexp((double)(m + 1024), e - 25);
  return (h & 0x8000) ? -v : v;
}

/* A float of 2, 4 or 8 bytes as a double. */
static inline double ds_load_float(const uint8_t *p, unsigned size, int big) {
  uint64_t bits = ds_load_uint(p, size, big);
  if (size == 2) return ds_half_to_double((uint16_t)bits);
  if (size == 4) {
    uint32_t b32 = (uint32_t)bits;
    float f;
    memcpy(&f, &b32, sizeof f);
    return f;
  }
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

#endif
