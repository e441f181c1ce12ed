/* datadings_writer.h - writing datadings datasets byte for byte as
 * upstream's FileWriter / RawWriter (datadings 3.1-3.4) does: samples
 * appended to X.msgpack, then at the end X.msgpack.offsets (BE u64),
 * .keys (one msgpack array of str), .key_hashes (salt_for(c) for the
 * first c that gives no 64-bit collision, then the salted BLAKE2s
 * prefixes), .filter (simplebloom, capacity max(2, n), rate 1/capacity)
 * and .md5 (md5sum lines of the five others).
 *
 * Files are staged through core/stage.h; the transaction calls are those
 * of core/writer_steps.h (begin, mark, rollback_to, prepare, publish,
 * abort; add here), and a next transaction continues the published
 * dataset (its data and offsets files are copied back: a second commit
 * costs a copy).
 * Every key is kept in memory to refuse duplicates (core/key_store.h:
 * about 15-25 bytes plus the key's length per sample; at commit the table
 * is freed and 8 bytes a key hold the hashes). Knows no SQLite. */
#ifndef DS_DATADINGS_WRITER_H
#define DS_DATADINGS_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "core/stage.h"
#include "core/value.h"
#include "core/writer_steps.h"

typedef struct datadings_writer datadings_writer;

/* One field of a sample built from columns. */
typedef struct datadings_field {
  const char *name;
  size_t name_len;
  ds_value value;   /* NULL values are left out of the sample */
  int json;         /* value is TEXT holding JSON: write what it parses to */
} datadings_field;

/* Directory and lock key (malloc'd) of a writer of `path` (X.msgpack). */
int datadings_writer_target(const char *path, char **dir, char **key,
                            char **err);
/* Open a writer (stage borrowed, from datadings_writer_target). create:
 * an error when any file of the dataset exists; replace: they are all
 * replaced (or removed) at publish. */
int datadings_writer_open(ds_stage *stage, const char *path,
                          datadings_writer **out, char **err);
void datadings_writer_close(datadings_writer *w);

/* The transaction: datadings_writer_begin, _count, _mark, _rollback_to,
 * _prepare, _publish and _abort (core/writer_steps.h). */
DS_WRITER_STEPS(datadings_writer, datadings_writer);
/* A sample given as msgpack bytes, written as they are. check = 1: they
 * must be one msgpack map whose "key" is the str `key` (0: anything, as
 * upstream's RawWriter accepts). */
int datadings_writer_add_raw(datadings_writer *w, const uint8_t *key,
                             size_t klen, const uint8_t *p, size_t n,
                             int check, char **err);
/* A sample {"key": key, field: value, ...} (fields in the order given). */
int datadings_writer_add_fields(datadings_writer *w, const uint8_t *key,
                                size_t klen, const datadings_field *f,
                                size_t nf, char **err);
/* A sample given as a JSON object. Its "key" must equal `key`; key may be
 * NULL to take the object's own "key"; an object without "key" gets
 * `key` as its first entry. */
int datadings_writer_add_json(datadings_writer *w, const uint8_t *key,
                              size_t klen, const char *json, size_t n,
                              char **err);

/* The .msgpack path once a publish went through, else NULL. */
const char *datadings_writer_path(const datadings_writer *w);

/* Bytes held for the key set right now (for memory tests and docs). */
size_t datadings_writer_key_bytes(const datadings_writer *w);

#endif
