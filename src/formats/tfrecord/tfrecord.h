/* tfrecord.h - reading TFRecord files (TensorFlow's record container:
 * tfrecord_frame.h) record by record and by record number.
 *
 * A tfrecord_file is one file: uncompressed, or one gzip / zlib stream of
 * framed records (TFRecordOptions(compression_type="GZIP" / "ZLIB")),
 * told by the caller or detected from the bytes (tfrecord_detect). A
 * tfrecord_cursor reads it; one per cursor or thread (its own window and,
 * compressed, its own decompression state).
 *
 * Checks: every record's length CRC; its data CRC unless skip_data_crc
 * (verify=false). A mismatch, a length past max_record or a record cut by
 * the end of the file is an error "<file>: record <i> at offset <off>:
 * <what>" (records numbered from 0; offsets in the file, or "of the
 * decompressed stream" for gzip / zlib); the records before it read.
 *
 * Random access: tfrecord_index builds the offsets of every record in one
 * sequential pass (uncompressed: headers only, the data skipped and not
 * checked; compressed: everything decompressed, since deflate cannot be
 * entered mid-stream), or takes them from a DALI / vahidk `.idx` sidecar
 * (tfrecord_idx.h) after a consistency check. With the index, a cursor
 * seeks to any record: uncompressed, one read; gzip / zlib, a seek
 * forward decompresses the bytes in between and a seek backward starts
 * again from the beginning of the file (random access over a compressed
 * file costs a decompression of the file up to the record, per backward
 * jump: convert such files to an indexed format to sample them).
 * Knows no SQLite. */
#ifndef DS_TFRECORD_H
#define DS_TFRECORD_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapped_file.h"

typedef enum tfrecord_compression {
  TFRECORD_AUTO = 0, /* detect from the bytes (tfrecord_detect) */
  TFRECORD_NONE,
  TFRECORD_GZIP,
  TFRECORD_ZLIB
} tfrecord_compression;

/* "none", "gzip", "zlib" ("auto" for TFRECORD_AUTO). */
const char *tfrecord_compression_name(tfrecord_compression c);

typedef struct tfrecord_options {
  tfrecord_compression compression;
  int skip_data_crc;   /* verify=false: only the length CRCs are checked */
  uint64_t max_record; /* a longer record is an error; 0: DS_MAX_VALUE_BYTES */
  int read_ahead;      /* threads=2: the index pass reads ahead on a helper
                          thread (tfrecord_ahead.h) */
} tfrecord_options;

typedef struct tfrecord_file {
  ds_file file;
  tfrecord_compression compression; /* never AUTO once open */
  int skip_data_crc;
  uint64_t max_record;
  int read_ahead;
  /* the index (tfrecord_index), shared by the file's cursors */
  int indexed;
  uint64_t count;      /* intact records */
  uint64_t *offsets;   /* [count + 1]: where each record starts, then where
                          the last one ends (records follow each other:
                          record i has offsets[i + 1] - offsets[i] - 16
                          data bytes, tfrecord_len) */
  char *tail_err;      /* why the records stop before the end, or NULL */
} tfrecord_file;

/* The data bytes of indexed record i (i < count). */
static inline uint64_t tfrecord_len(const tfrecord_file *t, uint64_t i) {
  return t->offsets[i + 1] - t->offsets[i] - 16; /* TFR_OVERHEAD */
}

/* What the first bytes of a file say: a file whose first 12 bytes are a
 * record header with a good length CRC is uncompressed; else the gzip
 * magic (1f 8b 08) is gzip, a zlib header (deflate, a window <= 32 KiB,
 * the FCHECK multiple of 31) is zlib; else uncompressed (whose first
 * record then fails its length CRC). An empty file is uncompressed. */
tfrecord_compression tfrecord_detect(const uint8_t *p, size_t n);

/* Format detection's question: does t start with a TFRecord record? 1
 * when its first 12 bytes (decompressed first for gzip / zlib: at most
 * what the first record header needs) are a header with a good length
 * CRC, a 2^-32 chance for other bytes; 0 for anything else, an empty file
 * included (it is no evidence). Never an error. */
int tfrecord_probe(const tfrecord_file *t);

/* Open `path` (streamed reads; nothing but the first 12 bytes read) or
 * bytes in memory (borrowed). */
int tfrecord_open(tfrecord_file *t, const char *path, const tfrecord_options *o,
                  char **err);
int tfrecord_open_memory(tfrecord_file *t, const char *name, const uint8_t *data,
                         uint64_t size, const tfrecord_options *o, char **err);
void tfrecord_close(tfrecord_file *t);

/* One record: data[0..len), valid until the cursor's next call. */
typedef struct tfrecord_rec {
  const uint8_t *data;
  size_t len;
  uint64_t index;  /* its number in the file, from 0 */
  uint64_t offset; /* where its header starts (in the decompressed stream
                      for gzip / zlib) */
} tfrecord_rec;

typedef struct tfrecord_cursor {
  const tfrecord_file *t;
  ds_view view;
  struct tfr_inflate *z; /* gzip / zlib: the stream; else NULL */
  uint64_t rec, off;     /* the next record and where it starts */
} tfrecord_cursor;

/* A cursor at record 0. */
int tfrecord_cursor_init(tfrecord_cursor *c, const tfrecord_file *t, char **err);
void tfrecord_cursor_free(tfrecord_cursor *c);
/* The next record: 1 with *r, 0 at the end of the file, -1 with *err. */
int tfrecord_next(tfrecord_cursor *c, tfrecord_rec *r, char **err);
/* Put the cursor at record i (0 <= i <= count; needs the index). */
int tfrecord_seek(tfrecord_cursor *c, uint64_t i, char **err);
/* Record i (tfrecord_seek + tfrecord_next; i == count gives the tail
 * error, or "past the last record" when there is none). */
int tfrecord_read_at(tfrecord_cursor *c, uint64_t i, tfrecord_rec *r, char **err);

/* Build t's index in one pass (nothing when it has one). The records up to
 * the first damaged or cut one (or one that could not be read) are
 * indexed; that one's error is kept in t->tail_err (reading record
 * `count` gives it). -1 only when out of memory or interrupted
 * (core/cancel.h: DS_CANCEL_MSG; t keeps no index, the next call starts
 * again). */
int tfrecord_index(tfrecord_file *t, char **err);

#endif
