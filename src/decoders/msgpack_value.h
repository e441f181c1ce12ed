/* msgpack_value.h - datadings samples: one msgpack object (msgpack-c does
 * the parsing) turned into the shared value model, with msgpack-numpy's
 * maps recognised as upstream's decoder does (bin keys only):
 *   {nd: true, type, kind, shape, data}  -> DS_V_NDARRAY (.npy bytes)
 *   {nd: <other>, type, data}            -> numpy scalar: BOOL/INT/UINT/
 *                                           FLOAT/COMPLEX by dtype
 *   {complex: true, data: "(1+2j)"}      -> DS_V_COMPLEX
 * Format notes: docs/formats/datadings.md sections 2-3. Knows no SQLite. */
#ifndef DS_MSGPACK_VALUE_H
#define DS_MSGPACK_VALUE_H

#include <msgpack.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"
#include "decoders/msgpack_numpy.h"

/* A parsed sample: msgpack-c objects that point into the input bytes (which
 * must outlive it). Reuse one doc for many samples: parse clears it. */
typedef struct ds_msgpack_doc {
  msgpack_zone zone;
  int zone_ready;
  msgpack_object root;   /* valid after ds_msgpack_parse / _get_root */
  /* lazy mode (ds_msgpack_scan): the bytes, and where the top-level map's
   * elements start (key0, value0, key1, ...), so one field can be unpacked
   * without the rest */
  const uint8_t *p;
  size_t n;
  int have_root;
  int root_is_map;
  size_t *marks;
  size_t nmarks, cap_marks;
  size_t zone_need;
  /* optional: the top-level fields a query reads (ds_msgpack_want); the
   * scan stops once it has walked all of them */
  const char *const *want;
  const size_t *want_len;
  size_t nwant;
  int partial;      /* the last scan stopped early */
  /* what the last scan saw of the wanted fields (the first nfound_want
   * names): bit i of `found` set when want[i] is a key, at marks[want_at[i]] */
  size_t nfound_want;
  uint64_t found;
  size_t want_at[64];
  uint64_t want_word[64]; /* a wanted name of <= 8 bytes as a word */
  size_t max_value_bytes; /* 0: none; else the msgpack objects of one sample may
                       take at most this much memory (max_value_bytes) */
} ds_msgpack_doc;

void ds_msgpack_doc_init(ds_msgpack_doc *d);
void ds_msgpack_doc_free(ds_msgpack_doc *d);

/* Parse exactly one msgpack object filling p[0..n): trailing bytes,
 * truncation, invalid UTF-8 in a str, the reserved byte 0xc1, or container
 * counts that the bytes cannot hold are errors ("...at byte N"; no file
 * name, the caller adds it). Never allocates more than the input can
 * justify. Containers may nest 32 deep (msgpack-c's fixed parser stack). */
int ds_msgpack_parse(ds_msgpack_doc *d, const uint8_t *p, size_t n, char **err);

/* Levels of containers one msgpack object may nest (msgpack-c's fixed
 * parser stack): the readers refuse more, so the writers do too. */
#define DS_MSGPACK_MAX_NEST 32

/* Walk the headers of exactly one msgpack object in p[0..n) as the readers
 * do (nesting, counts within the bytes, no trailing bytes; str contents
 * are not checked): 0, or -1 with *err saying what and at which byte. */
int ds_msgpack_walk(const uint8_t *p, size_t n, char **err);

/* Lazy form of ds_msgpack_parse: check the object's structure the same
 * way (except str contents, whose UTF-8 is checked when a str is
 * converted) and remember where the top-level fields are, but unpack
 * nothing yet. Then ds_msgpack_get_field unpacks one field, and
 * ds_msgpack_get_root the whole object. */
int ds_msgpack_scan(ds_msgpack_doc *d, const uint8_t *p, size_t n, char **err);
/* Tell later scans which top-level fields will be read (names[i] of
 * lens[i] bytes, at most 64; borrowed): a scan then stops after walking
 * them, so the bytes after the last one are checked only when the whole
 * object is needed (ds_msgpack_get_root). n = 0 walks everything. */
void ds_msgpack_want(ds_msgpack_doc *d, const char *const *names,
                     const size_t *lens, size_t n);

/* After scan: the top-level map field `name` (1, *out set), absent (0), or
 * an error (-1). The object lives until the next scan/parse. */
int ds_msgpack_get_field(ds_msgpack_doc *d, const char *name, size_t len,
                         const msgpack_object **out, char **err);
/* Without a doc, nothing unpacked or allocated: whether p[0..n) is
 * exactly one msgpack object (checked as ds_msgpack_scan checks it) that
 * is a map (*is_map), and its top-level entry with str key `name` (the
 * first; *found): *val is a scalar value decoded, or for a container only
 * its type (MSGPACK_OBJECT_MAP). 0, or -1 with *err when the bytes are not
 * one object. (A writer's check of raw samples.) */
int ds_msgpack_map_entry(const uint8_t *p, size_t n, const char *name, size_t len,
                         int *is_map, int *found, msgpack_object *val, char **err);
/* After scan: the whole object. */
int ds_msgpack_get_root(ds_msgpack_doc *d, const msgpack_object **out, char **err);
/* Free the msgpack objects unpacked so far (every object d handed out is
 * gone; the input bytes stay): a caller that converted them to values
 * holds only those. Later get_root / get_field calls unpack again. */
void ds_msgpack_release_objects(ds_msgpack_doc *d);

/* The value of top-level map entry `name` (a str key, compared byte for
 * byte; the first entry when the key repeats) of the parsed root, or NULL
 * when the root is not a map or has no such key. */
const msgpack_object *ds_msgpack_field(const ds_msgpack_doc *d, const char *name,
                                       size_t name_len);

/* Convert one object (and everything inside it) into a ds_value allocated
 * in `a`, applying the msgpack-numpy rules above. TEXT and BYTES values
 * point into the parsed input bytes (which must outlive the value); list
 * items and .npy blobs live in the arena. Object arrays (kind "O", a
 * pickle) are decoded by the safe pickle decoder into a LIST; one holding
 * an object outside its allow-list is an error naming the global. */
int ds_msgpack_to_value(const msgpack_object *o, ds_arena *a, ds_value *out,
                        char **err);

#endif
