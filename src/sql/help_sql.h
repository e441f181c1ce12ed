/* help_sql.h - datasets_help(): what the loaded library has, as rows
 * (kind, module, name, value, takes, forms, help):
 *   library   name of the library (datasets, bagz, ...), value its version
 *   module    a virtual-table module, value its usage
 *   function  an SQL function or table-valued function, value its usage
 *   option    an option of a module (module), value its default, takes
 *             its values ("auto|none|zstd", "N", "..."), forms where it is
 *             taken ("table-valued, CREATE, writer"), help what it does
 *             (all from the option specs)
 *   version   SQLite and each codec library the library links, value the
 *             version the library reports at run time
 * Each library registers it with the parts it has (ext/). */
#ifndef DS_HELP_SQL_H
#define DS_HELP_SQL_H

#include "core/lib_versions.h"
#include "core/option_spec.h"
#include "sql/sqlite_api.h"

/* One module or function (arrays end with {NULL}). */
typedef struct ds_help_entry {
  const char *kind;            /* "module" or "function" */
  const char *name;
  const char *usage;           /* one line */
  const ds_opt_group *options; /* a module's options (NULL: none) */
  unsigned forms;              /* the forms whose options are listed */
} ds_help_entry;

typedef struct ds_help_library {
  const char *name;                  /* "datasets", "bagz", ... */
  const ds_help_entry *const *parts; /* NULL-terminated */
  const ds_lib_version *versions;    /* ends with {NULL} */
} ds_help_library;

/* The SQL functions every library has (datasets_version, datasets_help,
 * the npy_* functions). */
extern const ds_help_entry ds_help_common[];

/* Register datasets_help() for lib (kept: static storage). */
int ds_help_register(sqlite3 *db, const ds_help_library *lib);

#endif
