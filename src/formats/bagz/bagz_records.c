/* bagz_records.c - single records of a bag (see bagz_records.h). */
#include "formats/bagz/bagz_records.h"

#include <string.h>

#include "formats/bagz/bagz_shards.h"

void bagz_records_init(bagz_records *c, const bagz_reader *r, uint64_t max_value_bytes) {
  memset(c, 0, sizeof *c);
  c->r = r;
  ds_zstd_ctx_init(&c->z, bagz_dictionary(r));
  c->buf.max = (size_t)max_value_bytes;
}

int bagz_records_get(void *ctx, uint64_t i, const uint8_t **p, size_t *n, char **err) {
  bagz_records *c = ctx;
  return bagz_read(c->r, &c->z, &c->io, i, &c->buf, p, n, err);
}

void bagz_records_free(bagz_records *c) {
  ds_zstd_ctx_free(&c->z);
  bagz_io_free(&c->io);
  ds_buf_free(&c->buf);
}
