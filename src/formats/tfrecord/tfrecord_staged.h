/* tfrecord_staged.h - writing a TFRecord dataset transactionally: one
 * file, or shards NAME-%05d-of-%05d.EXT for `name@N.ext` (N files; with
 * rows_per_shard filled in order, else split into N nearly equal ones at
 * prepare) and `name@*.ext` (as many as rows_per_shard makes), staged
 * through core/stage.h so that nothing appears at the target until
 * publish (as bagz_writer.h does for bags).
 *
 * While a transaction runs each shard is a temporary of framed,
 * uncompressed records (tfrecord_frame.h), so a savepoint is a length and
 * a rollback a truncation, whatever the compression; prepare compresses
 * (gzip / zlib: tfrecord_writer.h) into the files that are published. An
 * uncompressed file is exactly its records' frames: a copy of a TFRecord
 * file is byte-identical to it. After publish the next begin continues
 * the published dataset (its records are copied back: decompressed when
 * compressed).
 *   begin -> add ... [mark / rollback_to] ... -> prepare -> publish
 *                                    any time before publish: abort
 * Knows no SQLite. */
#ifndef DS_TFRECORD_STAGED_H
#define DS_TFRECORD_STAGED_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "formats/tfrecord/tfrecord.h"

typedef struct tfrecord_staged_options {
  tfrecord_compression compression; /* NONE (AUTO means NONE), GZIP, ZLIB */
  int level;                        /* ISA-L level 0-3; < 0: 1 */
  uint64_t rows_per_shard;          /* 0: no limit */
} tfrecord_staged_options;

typedef struct tfrecord_staged tfrecord_staged;

/* Where a writer of spec keeps its lock and temporaries: the directory
 * and the lock key (both malloc'd). spec is one path, name@N.ext or
 * name@*.ext (a comma list is refused); a shard's own name locks its
 * whole set. */
int tfrecord_staged_target(const char *spec, char **dir, char **key, char **err);

/* Open a writer on spec (stage borrowed, from tfrecord_staged_target's dir
 * and key). mode=create: an error when a file of the dataset exists. */
int tfrecord_staged_open(ds_stage *stage, const char *spec,
                         const tfrecord_staged_options *o, tfrecord_staged **out,
                         char **err);
void tfrecord_staged_close(tfrecord_staged *w);

int tfrecord_staged_begin(tfrecord_staged *w, char **err);
/* Append one record; errors name the record's row number. */
int tfrecord_staged_add(tfrecord_staged *w, const uint8_t *p, size_t n, char **err);
/* Records so far (published and staged). */
uint64_t tfrecord_staged_count(const tfrecord_staged *w);
/* A savepoint (opaque, malloc'd; free()) and going back to it. */
int tfrecord_staged_mark(tfrecord_staged *w, void **mark, char **err);
int tfrecord_staged_rollback_to(tfrecord_staged *w, const void *mark, char **err);
/* Finish every file (split, compress, name) and fsync: then only publish
 * or abort remain. */
int tfrecord_staged_prepare(tfrecord_staged *w, char **err);
/* 0 published; 1 published with *err (the directory's fsync); -1 not. */
int tfrecord_staged_publish(tfrecord_staged *w, char **err);
void tfrecord_staged_abort(tfrecord_staged *w);
/* The spec a reader opens to see the published dataset (NULL before the
 * first publish), e.g. "dir/train@3.tfrecord". */
const char *tfrecord_staged_published_spec(const tfrecord_staged *w);

#endif
