/* bagz_writer.h - writing bags as upstream's bagz.Writer does: each
 * non-empty record one zstd frame (content size in the header, no
 * checksum) at `level` with an optional dictionary, empty records stored
 * as 0 bytes, one little-endian u64 end offset per record in the file's
 * tail or in `limits.<name>`; shards named NAME-%05d-of-%05d.EXT.
 *
 * The writer is a sharded_writer (formats/sharded_writer.h: staged
 * through core/stage.h, nothing appears at the target until publish;
 * after publish the next begin continues the same bag, copying the
 * published files back into temporaries: a second commit costs a copy).
 * Memory is bounded: records go to disk as they come (with threads = 2,
 * two batches of about 1 MiB are in flight). Knows no SQLite. */
#ifndef DS_BAGZ_WRITER_H
#define DS_BAGZ_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "formats/bagz/bagz.h"
#include "formats/sharded_writer.h"

typedef struct bagz_writer_options {
  int zstd;                 /* compress non-empty records */
  int level;                /* zstd level; 0 = zstd's default (3) */
  const uint8_t *dictionary; /* NULL: none (copied at open) */
  size_t dictionary_len;
  const char *dictionary_path; /* or a file holding it (read at open) */
  bagz_limits limits;       /* tail (default) or separate */
  uint64_t rows_per_shard;  /* 0: no limit (name@N splits evenly) */
  int threads;              /* 1, or 2 to compress on two threads */
} bagz_writer_options;

/* Where a writer of `spec` keeps its lock and temporaries
 * (sharded_writer_target, errors naming bagz). */
int bagz_writer_target(const char *spec, char **dir, char **key, char **err);

/* Open a writer on `spec` (the stage is borrowed and must come from
 * bagz_writer_target's dir and key): a sharded_writer framing records as
 * bagz does; its transactions are sharded_writer.h's. mode=create: an
 * error when any file the bag could have exists (its limits files too);
 * replace: the existing bag's files are replaced at publish. */
int bagz_writer_open(ds_stage *stage, const char *spec, const bagz_writer_options *o,
                     sharded_writer **out, char **err);

#endif
