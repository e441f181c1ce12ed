/* tfrecord_walk.c - the index pass's header walk (see tfrecord_walk.h),
 * compiled twice: with the CRC-32C instruction (one _mm_crc32_u64 a
 * record, inlined) for CPUs that have it, and portable. */
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <nmmintrin.h>
#define TFR_HW_CRC 1
#endif

#include "core/common.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_walk.h"

/* The loop, over a CRC of the 8 length bytes `crc8` (masked after). One
 * dependent load, one CRC and one store a record. */
#define TFR_WALK_BODY(crc8)                                                       \
  do {                                                                            \
    const uint8_t *base = w->data;                                                \
    uint64_t wo = w->off, we = w->off + w->len, size = w->size;                   \
    uint64_t max = w->max_record, off = *at, i = *n;                              \
    while (i < stop && off >= wo && off + TFR_HEADER <= we) {                     \
      const uint8_t *h = base + (off - wo);                                       \
      uint64_t len = ds_le64(h);                                                  \
      if (len > max || ds_le32(h + 8) != tfr_mask(crc8(h)) ||                     \
          size - off - TFR_HEADER < len + TFR_FOOTER)                             \
        break;                                                                    \
      offs[i++] = off;                                                            \
      off += TFR_OVERHEAD + len;                                                  \
    }                                                                             \
    *at = off;                                                                    \
    *n = i;                                                                       \
  } while (0)

#ifdef TFR_HW_CRC
/* CRC-32C of the 8 bytes at h with the instruction. */
__attribute__((target("sse4.2"))) static inline uint32_t crc8_hw(const uint8_t *h) {
  uint64_t v;
  memcpy(&v, h, 8);
  return ~(uint32_t)_mm_crc32_u64(0xffffffffu, v);
}
/* tfr_walk with the instruction. */
__attribute__((target("sse4.2"))) static void walk_hw(const tfr_window *w, uint64_t *at,
                                                      uint64_t *offs, uint64_t *n,
                                                      uint64_t stop) {
  TFR_WALK_BODY(crc8_hw);
}
#endif

/* CRC-32C of the 8 bytes at h, portable. */
static uint32_t crc8_sw(const uint8_t *h) { return tfr_crc32c(h, 8); }

void tfr_walk(const tfr_window *w, uint64_t *at, uint64_t *offs, uint64_t *n, uint64_t stop) {
#ifdef TFR_HW_CRC
  if (__builtin_cpu_supports("sse4.2")) {
    walk_hw(w, at, offs, n, stop);
    return;
  }
#endif
  TFR_WALK_BODY(crc8_sw);
}
