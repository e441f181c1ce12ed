/* atlas_options.c - the spec tables of the atlas module's options (see
 * atlas_options.h): the reader's, and the list of every group. */
#include "vtab/atlas_options.h"

#include <stddef.h>
#include <stdint.h>

#include "vtab/dataset.h"
#include "vtab/infer_options.h"

static const char *const unsupported_names[] = {"error", "placeholder", NULL};
/* dictionary= is entry ATLAS_SPEC_DICTIONARY (atlas_options.h). */
const ds_opt_spec atlas_read_specs[] = {
    DS_INFER_COLUMNS_SPECS(at_opts, "examples", "example"),
    {.name = "unsupported", .forms = DS_FORMS_ALL, .kind = DS_OPT_ENUM,
     .names = unsupported_names, .def = 0,
     .help = "a pickled object off the decoder's allow-list: an error, or a placeholder",
     .at = offsetof(at_opts, unsupported)},
    {.name = "cache_mb", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 0,
     .max = (int64_t)(SIZE_MAX >> 21), .def = 0,
     .help = "MiB of decoded blocks kept between queries", .at = offsetof(at_opts, cache_mb)},
    {.name = "threads", .forms = DS_FORMS_ALL, .kind = DS_OPT_INT, .min = 1, .max = 2,
     .def = 2, .help = "2: scans decode ahead (writing: compress) on a second thread",
     .at = offsetof(at_opts, threads)},
    {.name = "dictionary", .forms = DS_FORMS_READ, .kind = DS_OPT_TEXT,
     .help = "the shared zstd dictionary of a shard folder opened alone",
     .at = offsetof(at_opts, dictionary)},
    {0}};
DS_WRITING_MODULE_OPTIONS(ds_atlas_option_groups, at_opts, atlas_read_specs, atlas_write_specs);
