/* s3_parts.h - the parts of one multipart upload sent from a local file
 * by helper threads, several in flight (DS_S3_PARTS_INFLIGHT), each
 * streamed from the file (no part is held in memory). The file may still
 * be growing: ds_s3_parts_feed says how many of its first bytes are final,
 * and every whole part (DS_S3_PART bytes) below that goes up while the
 * writer goes on; ds_s3_parts_cut says the file was cut back (a savepoint
 * rolled back), and the parts past the cut are sent again later (a part
 * still on its way when it is cut is never taken: the server keeps the
 * last one sent of a part number, and the new one is sent only after it).
 * ds_s3_parts_finish sends the rest (the last part may be smaller) and
 * waits for every part. Helpers run only while parts are ready (an
 * upload waiting for its file holds no thread, and each part opens the
 * file for itself). The object does not exist before
 * ds_s3_mpu_complete. Knows no SQLite. */
#ifndef DS_S3_PARTS_H
#define DS_S3_PARTS_H

#include <stdint.h>

#include "remote/s3_upload.h"

#define DS_S3_PARTS_INFLIGHT 4

typedef struct ds_s3_parts ds_s3_parts;

/* Create the multipart upload of the local file `local` to o (o must
 * outlive *out); no part is sent yet. */
int ds_s3_parts_start(const ds_robj *o, const char *local, ds_s3_parts **out, char **err);
/* The file's first `final` bytes will not change (unless cut): send the
 * whole parts below them. Never blocks on the network. */
void ds_s3_parts_feed(ds_s3_parts *p, uint64_t final);
/* The file was cut back to `size` bytes. */
void ds_s3_parts_cut(ds_s3_parts *p, uint64_t size);
/* The file is complete at `size` bytes: send what is left, wait for every
 * part (polling ds_cancel_check), and hand the upload to *u (its id and
 * the parts' ETags; p keeps nothing to abort). On failure (-1, *err
 * naming the URL, the part and the server's code) the upload is aborted.
 * p stays to be freed. */
int ds_s3_parts_finish(ds_s3_parts *p, uint64_t size, ds_s3_mpu *u, char **err);
/* The id of the upload (to tell it from a killed writer's). */
const char *ds_s3_parts_upload_id(const ds_s3_parts *p);
/* Stop the helpers, abort the upload unless finish handed it over, free.
 * NULL is fine. */
void ds_s3_parts_free(ds_s3_parts *p);

#endif
