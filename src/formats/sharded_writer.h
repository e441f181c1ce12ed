/* sharded_writer.h - writing a record format's files transactionally,
 * written once for every record format (bagz, tfrecord): one file, or
 * shards NAME-%05d-of-%05d.EXT for `name@N.ext` (N files; with
 * rows_per_shard filled in order, else split into N nearly equal ones at
 * prepare) and `name@*.ext` (as many as rows_per_shard makes), staged
 * through core/stage.h so that nothing appears at the target until
 * publish. Transactions:
 *   begin -> add ... [mark / rollback_to] ... -> prepare -> publish
 *                                    any time before publish: abort
 * After publish the next begin continues the published dataset (its
 * records are copied back into staging shards).
 *
 * This file knows shard names, staging shards, savepoints and the
 * publish; the format frames its records (sharded_writer_ops): how a
 * record goes into a staging shard, how a published file comes back, where
 * a staging shard can be cut, and what a staging shard becomes when it is
 * published. A staging shard is one append-only file of records and, when
 * the format keeps one (bagz's limits), a side file. Knows no SQLite. */
#ifndef DS_SHARDED_WRITER_H
#define DS_SHARDED_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "core/writer_steps.h"

/* A staging shard: its records, its side file (or NULL), its count. */
typedef struct sw_shard {
  ds_afile *data;
  ds_afile *side;
  uint64_t count;
} sw_shard;

/* A published file: enough to copy it back for the next transaction. */
typedef struct sw_pub {
  char *path;      /* records file */
  char *side_path; /* a published side file, or NULL (set by ops.finish) */
  uint64_t count;
  uint64_t size;   /* the staging shard's data size at prepare */
} sw_pub;

typedef struct sharded_writer sharded_writer;

/* What a format gives: `fmt` below is its state, owned by the writer. */
typedef struct sharded_writer_ops {
  const char *name;       /* names the format in errors: "bagz" */
  const char *side_label; /* a staging shard has a side file "shardN.<label>"; NULL: none */
  int star_needs_rows;    /* name@* without rows_per_shard is refused (else one shard) */
  /* The published side file of a records file (malloc'd), or NULL: an
   * existing one is refused (create) or replaced (replace) as well. */
  char *(*side_path)(const char *path);
  /* After the spec is checked: the format's own setup (may be NULL). */
  int (*init)(void *fmt, sharded_writer *w, char **err);
  /* Append record number `row` (to shard `cur`, the current one, now or
   * when queued records are written: the format counts it there). */
  int (*add)(void *fmt, sw_shard *cur, uint64_t row, const uint8_t *p, size_t n,
             char **err);
  /* Write what is queued / forget it (NULL: records are written as they come). */
  int (*drain)(void *fmt, char **err);
  void (*reset)(void *fmt);
  /* Append the records of published file p to staging shard s. */
  int (*copy_back)(void *fmt, sw_shard *s, const sw_pub *p, char **err);
  /* Cutting staging shard src (flushed) into shards: split_open indexes
   * it (*total records), split_part gives records [start, start + count)
   * to dst (its side file; dst->data gets [*from, *to) of src's data). */
  int (*split_open)(void *fmt, const sw_shard *src, void **ix, uint64_t *total, char **err);
  int (*split_part)(void *ix, uint64_t start, uint64_t count, sw_shard *dst,
                    uint64_t *from, uint64_t *to, char **err);
  void (*split_close)(void *ix);
  /* Staging shard k before it is published as p->path: the temporary that
   * goes there (*out: s->data, or a new one of the stage's), and any side
   * file (p->side_path, given to the stage here). */
  int (*finish)(void *fmt, ds_stage *stage, sw_shard *s, size_t k, sw_pub *p,
                ds_afile **out, char **err);
  /* 1 when finish publishes s->data itself (its bytes as written, maybe
   * with more appended): a shard whose name is known from the start (one
   * file, or name@N with rows_per_shard) is then uploaded while written
   * (ds_stage_expect). NULL: never. */
  int (*data_published)(void *fmt);
  void (*free)(void *fmt);
} sharded_writer_ops;

/* Where a writer of spec keeps its lock and temporaries: the directory
 * and the lock key (both malloc'd). spec is one path, name@N.ext or
 * name@*.ext (an optional `posix:` prefix is dropped; a comma list is
 * refused); a shard's own name locks its whole set ("name@.ext"). */
int sharded_writer_target(const char *format, const char *spec, char **dir, char **key,
                          char **err);

/* Open a writer on spec (stage borrowed, from sharded_writer_target's dir
 * and key; fmt owned from here on, freed by ops->free even on error).
 * mode=create: an error when a file of the dataset exists; replace: they
 * are replaced at publish. */
int sharded_writer_open(ds_stage *stage, const char *spec, uint64_t rows_per_shard,
                        const sharded_writer_ops *ops, void *fmt, sharded_writer **out,
                        char **err);
void sharded_writer_close(sharded_writer *w);

/* The transaction: sharded_writer_begin, _count, _mark, _rollback_to,
 * _prepare (every file split, finished by the format, named and fsynced),
 * _publish (shard 0 last: the commit point) and _abort, as
 * core/writer_steps.h says. */
DS_WRITER_STEPS(sharded_writer, sharded_writer);
/* Append one record. */
int sharded_writer_add(sharded_writer *w, const uint8_t *p, size_t n, char **err);
/* The staging shard records go to now. */
sw_shard *sharded_writer_current(sharded_writer *w);
/* The spec a reader opens to see the published dataset (NULL before the
 * first publish), e.g. "dir/train@3.tfrecord". */
const char *sharded_writer_published_spec(const sharded_writer *w);

#endif
