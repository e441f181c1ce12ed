/* bagz_writer.h - writing bags as upstream's bagz.Writer does: each
 * non-empty record one zstd frame (content size in the header, no
 * checksum) at `level` with an optional dictionary, empty records stored
 * as 0 bytes, one little-endian u64 end offset per record in the file's
 * tail or in `limits.<name>`; shards named NAME-%05d-of-%05d.EXT.
 *
 * The writer stages its files through core/stage.h, so nothing appears at
 * the target until bagz_writer_publish. Transactions:
 *   begin -> add ... [mark / rollback_to] ... -> prepare -> publish
 *                                    any time before publish: abort
 * After publish the next begin continues the same bag (it copies the
 * published files back into temporaries: a second commit costs a copy).
 * Memory is bounded: records go to disk as they come (with threads = 2,
 * two batches of about 1 MiB are in flight). Knows no SQLite. */
#ifndef DS_BAGZ_WRITER_H
#define DS_BAGZ_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "formats/bagz/bagz.h"

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

typedef struct bagz_writer bagz_writer;

/* Where a writer of `spec` keeps its lock and temporaries: the directory
 * and the lock key (malloc'd both). spec is one path, `name@N.ext` or
 * `name@*.ext` (an optional `posix:` prefix is dropped; comma lists are
 * refused). */
int bagz_writer_target(const char *spec, char **dir, char **key, char **err);

/* Open a writer on `spec` (the stage is borrowed and must come from
 * bagz_writer_target's dir and key). mode=create: an error when any file
 * the bag could have exists; replace: the existing bag's files are
 * replaced at publish. */
int bagz_writer_open(ds_stage *stage, const char *spec,
                     const bagz_writer_options *o, bagz_writer **out,
                     char **err);
void bagz_writer_close(bagz_writer *w);

/* Start a transaction (continues the published bag, if any). */
int bagz_writer_begin(bagz_writer *w, char **err);
/* Append one record; errors name the record's row number. */
int bagz_writer_add(bagz_writer *w, const uint8_t *p, size_t n, char **err);
/* Records written so far (published and staged). */
uint64_t bagz_writer_count(const bagz_writer *w);

/* A savepoint: the state to come back to (opaque, malloc'd; free()). */
int bagz_writer_mark(bagz_writer *w, void **mark, char **err);
int bagz_writer_rollback_to(bagz_writer *w, const void *mark, char **err);

/* Finish every file (limits, shard names) and fsync them: after this only
 * publish (renames) or abort remain. */
int bagz_writer_prepare(bagz_writer *w, char **err);
int bagz_writer_publish(bagz_writer *w, char **err);
/* Forget the transaction: back to the last published state. */
void bagz_writer_abort(bagz_writer *w);

/* The spec a reader opens to see the published bag (NULL before the
 * first publish); e.g. "dir/clean@3.bagz". */
const char *bagz_writer_published_spec(const bagz_writer *w);

#endif
