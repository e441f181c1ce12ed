/* bcolz_chunk_writer.h - the chunk files of the bcolz writer: a chunk
 * blosc-compressed with blosc_compress_ctx (one blosc thread, the
 * writer's cname/clevel/shuffle, blocksize 0) and written as data/__<k>.blp
 * behind its 16-byte "blpk" header. Full chunks can go to a helper thread,
 * which compresses and writes them while rows keep arriving: each slot (a
 * column) has at most one chunk in flight, whose buffer stays lent until
 * the slot's next submit or a drain returns. Without the thread (it could
 * not be started) a submitted chunk is written at once. Knows no SQLite;
 * never touches blosc's global state. */
#ifndef DS_BCOLZ_CHUNK_WRITER_H
#define DS_BCOLZ_CHUNK_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "formats/bcolz/bcolz_write_options.h"

typedef struct bcolz_chunk_writer bcolz_chunk_writer;

/* A chunk writer for `nslots` slots with the options' codec (copied). */
int bcolz_chunk_writer_new(const bcolz_write_options *o, size_t nslots,
                           bcolz_chunk_writer **out, char **err);
/* Stop the helper thread (a chunk being written is finished, queued ones
 * are dropped) and free everything. */
void bcolz_chunk_writer_free(bcolz_chunk_writer *cw);

/* Compress src[0..n) and write it as `path` now, on the caller's thread;
 * *cbytes: its compressed size. */
int bcolz_chunk_write(bcolz_chunk_writer *cw, const char *path, size_t typesize,
                      const uint8_t *src, size_t n, uint32_t *cbytes, char **err);
/* The same for a full chunk of slot `slot`, on the helper thread: `path`
 * is taken (freed by the writer), src and cbytes must stay valid until
 * the slot's next submit, bcolz_chunk_wait of the slot or a drain.
 * Waits for the slot's chunk in flight first. Reports the first error of
 * any earlier chunk. */
int bcolz_chunk_submit(bcolz_chunk_writer *cw, size_t slot, char *path, size_t typesize,
                       const uint8_t *src, size_t n, uint32_t *cbytes, char **err);
/* Wait until slot `slot` has no chunk in flight. */
int bcolz_chunk_wait(bcolz_chunk_writer *cw, size_t slot, char **err);
/* Wait until no chunk is in flight. */
int bcolz_chunk_drain(bcolz_chunk_writer *cw, char **err);

#endif
