/* module_help.h - the datasets_help() rows (sql/help_sql.h) of each
 * module and function, next to their code; the entry files in ext/ list
 * those of the library they build. */
#ifndef DS_MODULE_HELP_H
#define DS_MODULE_HELP_H

#include "sql/help_sql.h"

/* The forms whose options datasets_help() lists for a module. */
#define DS_HELP_FORMS (DS_FORM_TVF | DS_FORM_CREATE | DS_FORM_WRITER)

/* The row of a module read both table-valued and by CREATE: its usage
 * "name(tvf_path [, 'name=value,...']), or CREATE VIRTUAL TABLE t USING
 * name(create_path, name=value, ...)" (the paths quoted examples) and its
 * option groups. */
#define DS_HELP_MODULE(name, tvf_path, create_path, groups)                                 \
  {"module", name,                                                                        \
   name "(" tvf_path " [, 'name=value,...']), or CREATE VIRTUAL TABLE t USING " name "("  \
        create_path ", name=value, ...)",                                                 \
   groups, DS_HELP_FORMS}

extern const ds_help_entry ds_bagz_help[];      /* bagz_vtab.c */
extern const ds_help_entry ds_tfexample_help[]; /* tfexample_sql.c */
extern const ds_help_entry ds_datadings_help[]; /* datadings_vtab.c */
extern const ds_help_entry ds_atlas_help[];     /* atlas_vtab.c */
extern const ds_help_entry ds_bcolz_help[];     /* bcolz_vtab.c */
extern const ds_help_entry ds_tfrecord_help[];  /* tfrecord_vtab.c */
extern const ds_help_entry ds_dataset_help[];   /* dataset_shards.c: dataset,
                                                   dataset_info, dataset_shards */

#endif
