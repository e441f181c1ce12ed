/* tfrecord_walk.h - the index pass's inner loop (tfrecord_index): the
 * record headers of one window of an uncompressed file walked in a tight
 * loop, each length CRC checked with the CPU's CRC-32C instruction inlined
 * when it has one (x86-64 SSE4.2, asked at run time), else tfr_crc32c.
 * Knows no SQLite. */
#ifndef DS_TFRECORD_WALK_H
#define DS_TFRECORD_WALK_H

#include <stdint.h>

/* A window: the file bytes [off, off + len) at data, in a file of `size`
 * bytes whose records hold at most max_record bytes each. */
typedef struct tfr_window {
  const uint8_t *data;
  uint64_t off, len;
  uint64_t size, max_record;
} tfr_window;

/* From the record at *at (a file offset inside w) on: each record whose
 * 12-byte header w holds, whose length is <= max_record, whose length CRC
 * is good and whose frame (header, data, CRC) ends inside the file has
 * its offset stored in offs[*n] (*n counted up, at most to stop), *at
 * moved past it. Stops at the first record that is not such a one,
 * leaving *at there (the caller reads on, or says what is wrong with it). */
void tfr_walk(const tfr_window *w, uint64_t *at, uint64_t *offs, uint64_t *n, uint64_t stop);

#endif
