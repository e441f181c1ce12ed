/* tfrecord_staged.h - writing a TFRecord dataset transactionally: one
 * file, or shards NAME-%05d-of-%05d.EXT for `name@N.ext` and `name@*.ext`
 * (name@* needs rows_per_shard), through the sharded writer
 * (formats/sharded_writer.h, as bagz_writer.h does for bags).
 *
 * While a transaction runs each shard is a temporary of framed,
 * uncompressed records (tfrecord_frame.h), so a savepoint is a length and
 * a rollback a truncation, whatever the compression; prepare compresses
 * (gzip / zlib: tfrecord_writer.h) into the files that are published. An
 * uncompressed file is exactly its records' frames: a copy of a TFRecord
 * file is byte-identical to it. After publish the next begin continues
 * the published dataset (its records are copied back: decompressed when
 * compressed). Knows no SQLite. */
#ifndef DS_TFRECORD_STAGED_H
#define DS_TFRECORD_STAGED_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "formats/sharded_writer.h"
#include "formats/tfrecord/tfrecord.h"

typedef struct tfrecord_staged_options {
  tfrecord_compression compression; /* NONE (AUTO means NONE), GZIP, ZLIB */
  int level;                        /* ISA-L level 0-3; < 0: 1 */
  uint64_t rows_per_shard;          /* 0: no limit */
} tfrecord_staged_options;

/* Where a writer of spec keeps its lock and temporaries
 * (sharded_writer_target, errors naming tfrecord). */
int tfrecord_staged_target(const char *spec, char **dir, char **key, char **err);

/* Open a writer on spec (stage borrowed, from tfrecord_staged_target's dir
 * and key): a sharded_writer framing records as TFRecord does; its
 * transactions are sharded_writer.h's. mode=create: an error when a file
 * of the dataset exists. */
int tfrecord_staged_open(ds_stage *stage, const char *spec,
                         const tfrecord_staged_options *o, sharded_writer **out,
                         char **err);

#endif
