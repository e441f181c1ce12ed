/* s3_upload.h - writing objects to S3 (and Cloud Storage's XML API, which
 * speaks the same multipart protocol): one signed request with a body from
 * memory or from a range of a local file (streamed, never all in memory),
 * retried like reads (connection errors, 408/429/5xx, backoff with jitter,
 * at least Retry-After); and on it the multipart upload an object is
 * published with: Create, UploadPart (DS_S3_PART bytes a part: s3_parts.h
 * sends them, several in flight), Complete
 * (the moment the object appears, whole), Abort; DELETE; and the open
 * uploads at one key (ListMultipartUploads), to abort those a killed
 * writer left. Errors name the method, the path as given (no user info,
 * no query string, never a key) and the server's status and error code:
 * "PUT s3://b/k (part 3): HTTP 403 AccessDenied". Knows no SQLite. */
#ifndef DS_S3_UPLOAD_H
#define DS_S3_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "remote/remote_object.h"

/* The size of a part (the last one may be smaller); S3 wants >= 5 MiB. */
#define DS_S3_PART ((uint64_t)8 << 20)

/* One request to the object o (or, with bucket_only, to its bucket). */
typedef struct ds_s3_call {
  const char *method;   /* "PUT", "POST", "DELETE", "GET" */
  const ds_kv *query;   /* decoded pairs */
  size_t nquery;
  int bucket_only;      /* the request names the bucket, not o's key */
  const void *body;     /* a body from memory (NULL: none, or fd) */
  size_t body_len;
  int fd;               /* a body from a file range when >= 0 */
  uint64_t off, len;
  const char *if_none_match; /* "*" for a conditional create, or NULL */
  const char *what;     /* for messages: "(part 3)", or NULL */
  /* out */
  long status;
  char etag[200];
  ds_buf resp;          /* the response body (caller frees) */
  char code[64];        /* the S3 error code of a failure, "" when none */
} ds_s3_call;

/* Start c as a call with no body (fd -1: a zeroed call would read fd 0):
 * everything zero but the method, the query pairs and `what`. */
void ds_s3_call_init(ds_s3_call *c, const char *method, const ds_kv *query, size_t nquery,
                     const char *what);

/* Run c against o with retries; 0 on a 2xx that carries no <Error>,
 * else -1 with *err (c->status and c->code say what the server said). */
int ds_s3_run(const ds_robj *o, ds_s3_call *c, char **err);

/* A multipart upload of a local file to o, its parts sent
 * (remote/s3_parts.h): the object does not exist until
 * ds_s3_mpu_complete. */
typedef struct ds_s3_mpu {
  char *upload_id;
  char (*etags)[200];
  size_t nparts;
  uint64_t size;  /* the object's bytes */
  char *local;    /* the staged file's path (malloc'd, or NULL): its MD5 is
                   * what servers that give a completed upload the MD5 of
                   * its bytes as ETag (s3rver) answer */
} ds_s3_mpu;

/* CreateMultipartUpload: the new upload's id (malloc'd) in *upload_id. */
int ds_s3_mpu_create(const ds_robj *o, char **upload_id, char **err);
/* Complete: the object appears whole. if_none_match "*": refused by a
 * server that supports conditional writes when the key exists (S3: 412
 * PreconditionFailed). A retried complete answered NoSuchUpload (an
 * earlier try completed the upload, its answer lost) is a success when
 * the object now there is this upload's: its size, and its ETag S3's
 * multipart one ("<MD5 of the parts' MD5s>-<parts>") or the MD5 of the
 * staged bytes. */
int ds_s3_mpu_complete(const ds_robj *o, ds_s3_mpu *u, const char *if_none_match,
                       char **err);
/* Abort an upload (0 also when the server no longer knows it). */
int ds_s3_mpu_abort(const ds_robj *o, const char *upload_id, char **err);
void ds_s3_mpu_free(ds_s3_mpu *u);

/* DELETE the object (0 also when it was not there). */
int ds_s3_delete(const ds_robj *o, char **err);
/* Abort every open multipart upload whose key is exactly o's but the one
 * whose id is `keep` (NULL: none kept); *n gets how many. A server
 * without ListMultipartUploads (501 NotImplemented) or keys without the
 * right to list them (403) abort nothing: 1. */
int ds_s3_abort_open(const ds_robj *o, const char *keep, size_t *n, char **err);

#endif
