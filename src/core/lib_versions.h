/* lib_versions.h - the version of each codec library, as the library
 * itself reports it (bytes level: the SQLite layer asks these, never the
 * libraries). Each is defined in a file that already uses its library, so
 * a per-format build links only the libraries its format needs:
 * ds_zstd_version in core/codec.c, ds_blosc_version in
 * formats/bcolz/bcolz.c, ds_msgpack_version in decoders/msgpack_value.c,
 * ds_protobuf_c_version in decoders/tfexample.c. */
#ifndef DS_LIB_VERSIONS_H
#define DS_LIB_VERSIONS_H

/* One library: its name and its version call. */
typedef struct ds_lib_version {
  const char *name;
  const char *(*version)(void);
} ds_lib_version;

const char *ds_zstd_version(void);
const char *ds_blosc_version(void);
const char *ds_msgpack_version(void);
const char *ds_protobuf_c_version(void);

/* The list a library linking every format reports. */
#define DS_LIB_ZSTD {"zstd", ds_zstd_version}
#define DS_LIB_BLOSC {"c-blosc", ds_blosc_version}
#define DS_LIB_MSGPACK {"msgpack-c", ds_msgpack_version}
#define DS_LIB_PROTOBUF_C {"protobuf-c", ds_protobuf_c_version}

#endif
