/* stage_early.h - a remote stage's temporary file uploaded while it is
 * written: once the file has a whole part on disk (DS_EARLY_MIN bytes),
 * a multipart upload to the final name the writer expects is started
 * (one request, on the writing thread) and every whole part is sent by
 * the publisher's helpers as the file grows (the ds_afile hooks); a cut
 * below sent parts (a savepoint rolled back) sends those parts again. The
 * upload stays invisible (never completed here): prepare takes it over
 * when the file is published under that name, else it is aborted. A
 * failure to start only turns it off (prepare uploads the file whole and
 * reports what fails then); a part that fails after its retries fails
 * the prepare with its error, as it would have there. An upload waiting
 * for its file to grow holds no thread and no descriptor
 * (remote/s3_parts.c). Knows no SQLite and no HTTP. */
#ifndef DS_STAGE_EARLY_H
#define DS_STAGE_EARLY_H

#include <stdint.h>

#include "append_file.h"
#include "vfs.h"
#include "vfs_publish.h"

/* A file smaller than this is uploaded at prepare only (no request before
 * COMMIT): S3's parts are at least 5 MiB, ours 8 MiB. */
#define DS_EARLY_MIN ((uint64_t)8 << 20)

typedef struct ds_stage_early ds_stage_early;

/* Follow f (its hooks set) for final name `target`; ropts: the remote
 * settings to upload with (borrowed, outlive the follower; NULL: the
 * current ones). NULL when out of memory (nothing follows: fine). */
ds_stage_early *ds_early_new(const ds_vfs_publisher *pub, const ds_vfs_remote_opts *ropts,
                             ds_afile *f, const char *target);
/* The upload, handed over (the hooks removed) when the file is published
 * as `target` and the upload is alive; else NULL. */
void *ds_early_take(ds_stage_early *e, const char *target);
/* Abort the upload (if any, not taken), remove the hooks, free. NULL is
 * fine. */
void ds_early_free(ds_stage_early *e);

#endif
