/* tfrecord_frame.c - a record's header and footer (see tfrecord_frame.h). */
#include "core/common.h"
#include "formats/tfrecord/tfrecord_frame.h"

/* Store v little-endian in k bytes. */
static void put_le(uint8_t *out, uint64_t v, int k) {
  for (int i = 0; i < k; i++) out[i] = (uint8_t)(v >> (8 * i));
}

void tfr_frame_header(uint8_t out[TFR_HEADER], uint64_t n) {
  put_le(out, n, 8);
  put_le(out + 8, tfr_mask(tfr_crc32c(out, 8)), 4);
}

void tfr_frame_footer(uint8_t out[TFR_FOOTER], const void *p, size_t n) {
  put_le(out, tfr_mask(tfr_crc32c(p, n)), 4);
}

int tfr_frame_parse(const uint8_t hdr[TFR_HEADER], uint64_t *n,
                    uint32_t *stored, uint32_t *computed) {
  *n = ds_le64(hdr);
  *stored = ds_le32(hdr + 8);
  *computed = tfr_mask(tfr_crc32c_8(hdr));
  return *stored == *computed ? 0 : -1;
}

int tfr_frame_check(const uint8_t *p, size_t n, const uint8_t footer[TFR_FOOTER],
                    uint32_t *stored, uint32_t *computed) {
  *stored = ds_le32(footer);
  *computed = tfr_mask(tfr_crc32c(p, n));
  return *stored == *computed ? 0 : -1;
}
