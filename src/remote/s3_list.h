/* s3_list.h - listing an S3 (or GCS XML API) bucket by prefix with
 * ListObjectsV2: one page's XML parsed (keys, sizes, common prefixes, the
 * continuation token; XML entities decoded), and a whole listing fetched
 * page after page (bounded). S3 and GCS have no folders: the listing
 * forms of remote paths (@*, globs, atlas and bcolz folders) list by
 * prefix, with delimiter "/" for one level. */
#ifndef DS_S3_LIST_H
#define DS_S3_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "remote/http.h"
#include "remote/remote_creds.h"

typedef struct ds_s3_object {
  char *key;
  uint64_t size;
} ds_s3_object;

/* Objects (in the server's order: by key) and common prefixes. */
typedef struct ds_s3_listing {
  ds_s3_object *objects;
  size_t n, cap;
  char **prefixes;
  size_t nprefixes, pcap;
} ds_s3_listing;

/* Parse one ListObjectsV2 page and append to out; *next gets the
 * continuation token (malloc'd) when the page says IsTruncated, else NULL.
 * 0 ok, -1 with *err (a body that is no ListBucketResult, or an entry
 * without a Key). */
int ds_s3_list_parse(const char *xml, size_t n, ds_s3_listing *out,
                     char **next, char **err);

/* Every object of bucket under prefix (delimiter NULL or "": all levels;
 * "/": this level, sub-levels as prefixes), max_keys a page (0: the
 * server's 1000), at most max_pages pages (0: 10000). 0 ok, -1 with *err. */
int ds_s3_list(const ds_remote_config *c, const char *bucket,
               const char *prefix, const char *delimiter, int max_keys,
               int max_pages, const ds_http_opts *o, ds_s3_listing *out,
               char **err);

void ds_s3_listing_free(ds_s3_listing *l);

#endif
