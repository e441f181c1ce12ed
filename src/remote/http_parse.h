/* http_parse.h - the pure parts of the HTTP range client, testable
 * without a network: Content-Range, Retry-After, the S3 error code of an
 * XML error body, a URL made fit for an error message (no user info, no
 * query string: a presigned URL's signature or a token never shows), and
 * the range a response must answer. */
#ifndef DS_HTTP_PARSE_H
#define DS_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define DS_HTTP_SIZE_UNKNOWN UINT64_MAX

/* "bytes a-b/N" (N may be "*": total DS_HTTP_SIZE_UNKNOWN) or
 * "bytes * /N" (unsatisfied: *first = *last = DS_HTTP_SIZE_UNKNOWN).
 * 0 ok, -1 when it is neither. Leading/trailing blanks allowed. */
int ds_http_parse_content_range(const char *v, size_t n, uint64_t *first,
                                uint64_t *last, uint64_t *total);
/* Retry-After in milliseconds: delta-seconds only ("120"); -1 when
 * absent or an HTTP date (then the backoff alone decides). */
long ds_http_parse_retry_after(const char *v, size_t n);
/* The text of <Code>...</Code> in an S3/GCS XML error body into out
 * (only [A-Za-z0-9.]; "" when none). */
void ds_http_xml_error_code(const char *body, size_t n, char *out, size_t cap);
/* url without "user:pass@" and without "?..." / "#..." into out. */
void ds_http_url_for_message(const char *url, char *out, size_t cap);
/* The bytes [*first, *last] a 206 must carry for a range of `length`
 * bytes at `offset` (suffix: the last `length` bytes) of an object of
 * `total` bytes; 0, or -1 when nothing of it exists (offset >= total). */
int ds_http_expected_range(int suffix, uint64_t offset, uint64_t length,
                           uint64_t total, uint64_t *first, uint64_t *last);

#endif
