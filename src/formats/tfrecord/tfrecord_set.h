/* tfrecord_set.h - the TFRecord files a spec names (core/shard_spec.h:
 * comma lists, name@N, name@*; an element with * ? [ that names no file
 * is a glob, its matches in name order), as shards of one dataset
 * whose rows are the records of shard 0, then shard 1, ... (rowid = the
 * record's number in the whole set).
 *
 * Opening reads the first bytes of each file (compression detection), no
 * more: nothing says how many records a TFRecord file holds, so the row
 * map (tfrecord_set_index) needs every shard indexed (tfrecord.h), from
 * its `.idx` sidecar when there is one that checks out, else by the index
 * pass. A shard whose records stop at a damaged or cut record (its
 * tail_err) counts that record as one more row: reading it fails with the
 * shard's error (file, record, offset), so a scan over the set reads the
 * intact records and then fails where the damage is, as in every other
 * format. Knows no SQLite. */
#ifndef DS_TFRECORD_SET_H
#define DS_TFRECORD_SET_H

#include <stddef.h>
#include <stdint.h>

#include "core/shard_spec.h"
#include "formats/tfrecord/tfrecord.h"

typedef struct tfrecord_set {
  tfrecord_file *files; /* [n], opened */
  size_t n;
  int use_idx;          /* look for "<file>.idx" sidecars when indexing */
  int mapped;
  ds_shard_map map;     /* after tfrecord_set_index: rows per shard */
  int damaged;          /* after tfrecord_set_index: 1 when a shard has a
                           damaged or cut tail row */
} tfrecord_set;

/* The files spec names (comma lists, @N, @*, globs), not opened. */
int tfrecord_set_paths(const char *spec, ds_shard_list *out, char **err);

/* Open every file of spec (a set of files read as one version while a
 * writer may be replacing it: core/open_stable.h). */
int tfrecord_set_open(tfrecord_set *s, const char *spec, const tfrecord_options *o,
                      int use_idx, char **err);
void tfrecord_set_close(tfrecord_set *s);
/* 1 when any file changed on disk since the open. */
int tfrecord_set_stale(const tfrecord_set *s);

/* Index every shard (sidecars first when use_idx: a sidecar that does not
 * check out is not used, the index pass runs instead) and build the row
 * map. Nothing when done already. */
int tfrecord_set_index(tfrecord_set *s, char **err);
/* Rows of shard i (its intact records, + 1 for a damaged tail). Only
 * after tfrecord_set_index. */
uint64_t tfrecord_set_rows(const tfrecord_set *s, size_t i);

/* Row g of the set through cursors[shard] (one per shard, initialised by
 * the caller with tfrecord_cursor_init on files[shard], or zeroed: then
 * initialised here on first use): *r, or -1 with *err (the damaged
 * record's own error for a tail row). */
/* 1 with *err (the shard's error: file, record, offset) when row g is a
 * shard's damaged or cut tail row, else 0. Only after tfrecord_set_index. */
int tfrecord_set_row_damaged(const tfrecord_set *s, uint64_t g, char **err);

int tfrecord_set_read(const tfrecord_set *s, tfrecord_cursor *cursors, uint64_t g,
                      tfrecord_rec *r, char **err);
/* tfrecord_set_read of row i of shard `shard`, when the caller located
 * it already (a scan's cursor did, to know its shard). */
int tfrecord_set_read_in(const tfrecord_set *s, tfrecord_cursor *cursors, size_t shard,
                         uint64_t i, tfrecord_rec *r, char **err);

#endif
