/* tfrecord_idx.h - the `.idx` sidecar of a TFRecord file, as NVIDIA
 * DALI's tfrecord2idx and vahidk/tfrecord's create_index write it: one
 * text line per record, "<offset> <size>", where size counts the whole
 * framed record (12 header bytes, the data, 4 CRC bytes). It saves the
 * index pass of an uncompressed file, after a consistency check: the
 * records follow each other from offset 0 to the end of the file, each
 * at least 16 bytes, and the first and last records' headers (length CRC
 * good, length = size - 16) agree with the file. Knows no SQLite. */
#ifndef DS_TFRECORD_IDX_H
#define DS_TFRECORD_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "formats/tfrecord/tfrecord.h"

/* "<path>.idx" (malloc'd), where tfrecord_idx_load looks by default. */
char *tfrecord_idx_path(const char *path);

/* Parse and check the sidecar text p[0..n) (named `name` in errors) for
 * t, and make it t's index. 0: accepted; -1 refused with *err saying why
 * ("<name>: line <k>: ..."; t keeps no index). A compressed t is refused:
 * its offsets are not file offsets. */
int tfrecord_idx_use(tfrecord_file *t, const char *name, const uint8_t *p,
                     size_t n, char **err);

/* Load the sidecar file idx_path and tfrecord_idx_use it: 1 when there is
 * no such file (nothing changed), 0 accepted, -1 refused or unreadable. */
int tfrecord_idx_load(tfrecord_file *t, const char *idx_path, char **err);

#endif
