/* tfrecord_writer.h - TFRecord bytes into an append-only file (a ds_afile
 * a stage gave: core/stage.h publishes it): each record framed as
 * TensorFlow's record_writer.cc frames it (tfrecord_frame.h), the whole
 * file optionally one gzip or zlib stream (ISA-L's igzip; TensorFlow's
 * reader and Python's gzip / zlib modules read it). An uncompressed
 * file's bytes are fixed by its records: a copy is byte-identical.
 *   new -> add ... -> finish (ends a compressed stream) -> free
 * Knows no SQLite. */
#ifndef DS_TFRECORD_WRITER_H
#define DS_TFRECORD_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/append_file.h"
#include "formats/tfrecord/tfrecord.h"

typedef struct tfrecord_writer tfrecord_writer;

/* A writer appending to out (borrowed; it must outlive the writer).
 * compression NONE, GZIP or ZLIB; level 0-3 (ISA-L's levels; 0 stores
 * Huffman-coded literals only, 1 is the default used when level < 0). */
int tfrecord_writer_new(ds_afile *out, tfrecord_compression c, int level,
                        tfrecord_writer **w, char **err);
/* Append one record. */
int tfrecord_writer_add(tfrecord_writer *w, const uint8_t *p, size_t n, char **err);
/* Records added. */
uint64_t tfrecord_writer_count(const tfrecord_writer *w);
/* End the file: a compressed stream gets its last block and trailer
 * (nothing to do uncompressed). No add after it. */
int tfrecord_writer_finish(tfrecord_writer *w, char **err);
void tfrecord_writer_free(tfrecord_writer *w);

#endif
