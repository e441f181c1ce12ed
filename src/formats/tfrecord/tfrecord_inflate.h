/* tfrecord_inflate.h - a gzip or zlib file read as one sequential stream
 * of decompressed bytes (ISA-L's igzip), as TensorFlow's
 * ZlibInputStream reads a TFRecord file written with
 * TFRecordOptions(compression_type="GZIP" / "ZLIB"). A gzip file may hold
 * several members one after the other (what `cat a.gz b.gz` makes); their
 * bytes follow each other. The stream only goes forward: to go back, a
 * reader rewinds to the start (tfr_inflate_rewind) and decompresses again.
 * Errors are the problem alone ("gzip stream cut short ..."): the reader
 * adds the file, record and offset. Knows no SQLite. */
#ifndef DS_TFRECORD_INFLATE_H
#define DS_TFRECORD_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapped_file.h"

typedef struct tfr_inflate tfr_inflate;

/* A stream over the compressed file f (borrowed), zlib (1) or gzip (0);
 * at most `max` bytes are ever asked for at once (the buffer's cap). */
int tfr_inflate_new(const ds_file *f, int zlib, uint64_t max, tfr_inflate **out,
                    char **err);
void tfr_inflate_free(tfr_inflate *z);
/* Back to the start of the stream (offset 0). */
void tfr_inflate_rewind(tfr_inflate *z);
/* The decompressed offset of the next byte tfr_inflate_read returns. */
uint64_t tfr_inflate_pos(const tfr_inflate *z);

/* The next n decompressed bytes, contiguous at *p (valid until the next
 * call), consumed. *got < n only when the stream ends first (*got bytes
 * were left). -1 with *err when the compressed bytes are damaged or cut
 * (a stream that stops before its end marker), or n is above max. */
int tfr_inflate_read(tfr_inflate *z, size_t n, const uint8_t **p, size_t *got,
                     char **err);
/* Skip n bytes (decompressing them); *got as for tfr_inflate_read. Polls
 * core/cancel.h every 64 KiB (DS_CANCEL_MSG when interrupted). */
int tfr_inflate_skip(tfr_inflate *z, uint64_t n, uint64_t *got, char **err);

#endif
