/* bagz_records.h - single records of a bag read outside a scan (building
 * the key index, inferring a tf.Example schema): the reader with the
 * zstd context, file windows and buffer that a read needs. */
#ifndef DS_BAGZ_RECORDS_H
#define DS_BAGZ_RECORDS_H

#include <stdint.h>

#include "formats/bagz/bagz.h"

typedef struct bagz_records {
  const bagz_reader *r;
  ds_zstd_ctx z;
  bagz_io io;  /* windows on the files (reads with pread) */
  ds_buf buf;  /* a decompressed record, at most max_value_bytes bytes */
} bagz_records;

/* Ready to read records of r, none over max_value_bytes bytes. */
void bagz_records_init(bagz_records *c, const bagz_reader *r, uint64_t max_value_bytes);
/* Record i of the bag (ctx: a bagz_records); *p is valid until the next
 * call. The shape of ds_hash_get_fn and ds_tfex_record_fn. */
int bagz_records_get(void *ctx, uint64_t i, const uint8_t **p, size_t *n, char **err);
void bagz_records_free(bagz_records *c);

#endif
