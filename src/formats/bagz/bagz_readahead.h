/* bagz_readahead.h - decompress the records of a scan ahead of the cursor
 * on a second thread. The cursor and the worker share the work: batches of
 * consecutive rows are claimed by whichever thread gets to them first and
 * handed to the cursor strictly in row order. Memory is bounded by a fixed
 * ring of batch buffers, whatever the size of the bag. */
#ifndef DS_BAGZ_READAHEAD_H
#define DS_BAGZ_READAHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/rowset.h"
#include "formats/bagz/bagz.h"

typedef struct bagz_readahead bagz_readahead;

/* Start walking `rs` (borrowed; must outlive the read-ahead). A record
 * larger than max_value_bytes (0: no cap beyond the codec's) is an error. */
int bagz_readahead_start(const bagz_reader *r, const ds_rowset *rs,
                         uint64_t max_value_bytes, bagz_readahead **out, char **err);
/* The next row of the walk and its record: 1 = a row, 0 = done, -1 =
 * error (*err set). *p stays valid until the next call. */
int bagz_readahead_next(bagz_readahead *ra, uint64_t *g, const uint8_t **p,
                        size_t *n, char **err);
/* Stops the worker and frees everything. NULL is fine. */
void bagz_readahead_free(bagz_readahead *ra);

#endif
