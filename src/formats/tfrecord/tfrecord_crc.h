/* tfrecord_crc.h - CRC-32C (Castagnoli, RFC 3720) through ISA-L's
 * crc32_iscsi, and TensorFlow's masking of it (tensorflow/core/lib/hash/
 * crc32c.h): a record's length and data checksums are stored masked,
 * ((crc >> 15) | (crc << 17)) + 0xa282ead8, so that a CRC of bytes that
 * themselves hold CRCs is not degenerate. Knows no SQLite. */
#ifndef DS_TFRECORD_CRC_H
#define DS_TFRECORD_CRC_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32C of p[0..n) (standard: initial ~0, final inversion; RFC 3720
 * B.4: 32 zero bytes give 0x8a9136aa). Any n (ISA-L takes an int: longer
 * buffers go in pieces). */
uint32_t tfr_crc32c(const void *p, size_t n);
/* tfr_crc32c(p, 8), for a record's length field: the CPU's CRC-32C
 * instruction once when it has one (no length dispatch), else the same
 * as tfr_crc32c. */
uint32_t tfr_crc32c_8(const uint8_t p[8]);

#define TFR_MASK_DELTA 0xa282ead8u

/* TensorFlow's crc32c::Mask and Unmask. */
static inline uint32_t tfr_mask(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + TFR_MASK_DELTA;
}
static inline uint32_t tfr_unmask(uint32_t masked) {
  uint32_t rot = masked - TFR_MASK_DELTA;
  return (rot >> 17) | (rot << 15);
}

#endif
