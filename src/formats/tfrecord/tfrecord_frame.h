/* tfrecord_frame.h - one TFRecord record's framing, as TensorFlow's
 * record_writer.cc writes it (docs/formats/tfrecord.md):
 *   uint64 length (little-endian)
 *   uint32 masked CRC-32C of those 8 length bytes
 *   length bytes of data
 *   uint32 masked CRC-32C of the data
 * Every integer little-endian. Knows no SQLite. */
#ifndef DS_TFRECORD_FRAME_H
#define DS_TFRECORD_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "formats/tfrecord/tfrecord_crc.h"

#define TFR_HEADER 12 /* length + its CRC */
#define TFR_FOOTER 4  /* the data's CRC */
#define TFR_OVERHEAD (TFR_HEADER + TFR_FOOTER)

/* Write the 12 header bytes of a record of n data bytes. */
void tfr_frame_header(uint8_t out[TFR_HEADER], uint64_t n);
/* Write the 4 footer bytes of data p[0..n). */
void tfr_frame_footer(uint8_t out[TFR_FOOTER], const void *p, size_t n);

/* Parse a header: *n = the length; 0 when its CRC matches, else -1 with
 * *stored and *computed the two masked CRCs (for the error). */
int tfr_frame_parse(const uint8_t hdr[TFR_HEADER], uint64_t *n,
                    uint32_t *stored, uint32_t *computed);
/* Check data p[0..n) against its footer: 0 matches, else -1 with the two
 * masked CRCs. */
int tfr_frame_check(const uint8_t *p, size_t n, const uint8_t footer[TFR_FOOTER],
                    uint32_t *stored, uint32_t *computed);

#endif
