/* bcolz_meta.h - bcolz metadata in listable form, for bcolz_attrs and
 * dataset_info: the entries of an __attrs__ JSON object, and the codec and
 * shuffle a Blosc chunk header's flags name. */
#ifndef DS_BCOLZ_META_H
#define DS_BCOLZ_META_H

/* Call fn(ctx, name, value) for each entry of the JSON object `json` (an
 * __attrs__ file's text), value as compact JSON text. Stops at fn's first
 * non-zero result and returns it; -1 with *err when json is not an object
 * ("__attrs__ [of <column>] is not a JSON object") or out of memory. */
int bcolz_attrs_each(const char *json, const char *column,
                     int (*fn)(void *ctx, const char *name, const char *value),
                     void *ctx, char **err);

/* What the flags byte of a Blosc chunk header says: the codec ("blosclz",
 * "lz4", "snappy", "zlib", "zstd", "unknown"), the shuffle ("bit", "byte",
 * "none") and whether the chunk is stored uncompressed (memcpyed). */
void bcolz_blosc_flags(unsigned flags, const char **codec, const char **shuffle,
                       int *memcpyed);

#endif
