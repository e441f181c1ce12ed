/* bcolz_options.c - the spec tables of the bcolz module's options (see
 * bcolz_options.h): bytes= and cache_mb=, and the list of every group. */
#include "vtab/bcolz_options.h"

#include <stddef.h>
#include <stdint.h>

#include "vtab/dataset.h"

/* Default cache_mb: decompressed chunks kept for row lookups. */
#define DEFAULT_CACHE_MB 1024

static const char *const bytes_names[] = {"text", "blob", NULL};
static const ds_opt_spec bz_specs[] = {
    {.name = "bytes", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM, .names = bytes_names,
     .def = 0, .help = "bytes (S) columns as TEXT or BLOB", .at = offsetof(bz_opts, bytes)},
    {.name = "cache_mb", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 0,
     .max = INT64_C(1) << 40, .def = DEFAULT_CACHE_MB,
     .help = "MiB of decompressed chunks kept for row lookups (0: none)",
     .at = offsetof(bz_opts, cache_mb)},
    {0}};
DS_WRITING_MODULE_OPTIONS(ds_bcolz_option_groups, bz_opts, bz_specs, bcolz_write_specs);
