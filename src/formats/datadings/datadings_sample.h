/* datadings_sample.h - one sample of a datadings dataset as values, for the
 * SQL layer: its bytes (capped at max_value_bytes), its parse, a field or
 * the whole sample as a ds_value, and the columns the first samples
 * suggest. Errors name the shard file and the sample: "<file>: sample
 * <g>: ...". The msgpack objects stay inside (decoders/msgpack_value.h). */
#ifndef DS_DATADINGS_SAMPLE_H
#define DS_DATADINGS_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/schema.h"
#include "core/value.h"
#include "formats/datadings/datadings.h"

/* A parsed sample, reused from row to row (opaque). */
typedef struct datadings_doc datadings_doc;

/* NULL when out of memory. */
datadings_doc *datadings_doc_new(void);
void datadings_doc_free(datadings_doc *d); /* NULL is fine */
/* Forget the fields learned so far (a new query reads other fields). */
void datadings_doc_forget(datadings_doc *d);

/* The doc's window on the dataset's files (reads with pread); its
 * samples are read through it. */
datadings_io *datadings_doc_io(datadings_doc *d);

/* The bytes of sample g, at most `max` of them (max_value_bytes), read
 * through io (valid until its next read). `path` names the dataset when
 * the sample's shard is unknown. */
int datadings_sample_capped(const datadings_reader *r, datadings_io *io, const char *path,
                            uint64_t max, uint64_t g, const uint8_t **p, size_t *n,
                            char **err);

/* Parse sample g into d (lazily: fields are unpacked when asked for). */
int datadings_doc_load(datadings_doc *d, const datadings_reader *r, const char *path,
                       uint64_t max, uint64_t g, char **err);
/* Top-level field name[0..len) of the loaded sample as a value in `a`: 1,
 * 0 when absent, -1 on error. The doc learns the fields asked for (by
 * name pointer, which must outlive it): later samples are walked only as
 * far as the last of them. */
int datadings_doc_field(datadings_doc *d, const char *name, size_t len, ds_arena *a,
                        ds_value *v, char **err);
/* Name the loaded sample in an error about it (takes why). */
char *datadings_doc_error(const datadings_doc *d, char *why);
/* The whole loaded sample as a value in `a`. Its msgpack objects and the
 * values share a's limit (max_value_bytes; more is an error naming the
 * sample), and objects of over 1 MiB are freed once converted: what is made
 * from the values (JSON text) shares the limit with them alone. */
int datadings_doc_value(datadings_doc *d, ds_arena *a, ds_value *v, char **err);

/* Columns from the first `infer` samples: every str key but "key" of a
 * map sample, typed by the values seen. Samples that do not parse, and
 * values that do not convert, are skipped (queries that read them report
 * them). An ndarray field whose dtype, shape and data size repeat those of
 * the same field of an earlier sample is typed without being converted
 * again (decoders/msgpack_nd_memo.h): same columns, far less work. */
int datadings_infer_columns(const datadings_reader *r, const char *path, uint64_t max,
                            uint64_t infer, ds_schema *s, char **err);

#endif
