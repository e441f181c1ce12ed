/* writer_steps.h - the transaction steps every transactional writer has
 * (formats/sharded_writer.h for bagz and tfrecord, formats/datadings/
 * datadings_writer.h, core/staged_dir.h for atlas and bcolz), declared and
 * explained once: vtab/writer_txn.h orders the calls and
 * vtab/table_writer.h's DS_TABLE_WRITER_FMT adapts them to void *, by
 * these names. For a writer `prefix` whose handle is a `type *`:
 *   prefix_begin        start a transaction; after a publish it continues
 *                       the published dataset
 *   prefix_count        rows so far (published and staged)
 *   prefix_mark         a savepoint (opaque, malloc'd; free())
 *   prefix_rollback_to  go back to a savepoint
 *   prefix_prepare      finish every file and fsync: then only publish or
 *                       abort remain (all that can fail)
 *   prefix_publish      0 published; 1 published with *err (e.g. the
 *                       directory's fsync); -1 not
 *   prefix_abort        forget the transaction: back to the last published
 *                       state, temporaries deleted
 * Knows no SQLite and no bytes. */
#ifndef DS_WRITER_STEPS_H
#define DS_WRITER_STEPS_H

#include <stdint.h>

/* The prototypes of the steps of writer `prefix` (handle `type *`). */
#define DS_WRITER_STEPS(prefix, type)                                       \
  int prefix##_begin(type *w, char **err);                                  \
  uint64_t prefix##_count(const type *w);                                   \
  int prefix##_mark(type *w, void **mark, char **err);                      \
  int prefix##_rollback_to(type *w, const void *mark, char **err);          \
  int prefix##_prepare(type *w, char **err);                                \
  int prefix##_publish(type *w, char **err);                                \
  void prefix##_abort(type *w)

#endif
