/* writer_registry.h - the writer of each writer table (mode=create|replace),
 * kept per connection, schema and table name for the table's whole life,
 * not for one sqlite3_vtab's.
 *
 * SQLite disconnects and later reconnects (xConnect) the tables of a
 * schema it resets, e.g. the temp schema after a failed CREATE VIRTUAL
 * TABLE; a table in a transaction may even be connected twice at once.
 * A reconnect must not create the dataset again (mode=create would find
 * what the table published, the lock would be its own): it takes the
 * writer xCreate opened, with what it published and its lock. An entry
 * goes away when its table is dropped (xDestroy) or its connection closes
 * (the destructor of a function registered once per connection), once no
 * sqlite3_vtab holds it. */
#ifndef DS_WRITER_REGISTRY_H
#define DS_WRITER_REGISTRY_H

#include "sql/sqlite_api.h"

typedef struct ds_table_writer ds_table_writer;

/* Call once per connection from a writing module's registration: the
 * hook that frees the connection's writers when it closes. */
int ds_writer_registry_hook(sqlite3 *db);

/* The writer of table schema.name of db opened with `args` (the CREATE
 * arguments), one more reference taken; NULL when there is none. */
ds_table_writer *ds_writer_registry_find(sqlite3 *db, const char *schema,
                                         const char *name, const char *args);
/* Keep tw as the writer of that table (one reference); `destroy` frees it
 * when its table and every reference are gone. 0, or -1 when out of
 * memory (tw is then not kept). */
int ds_writer_registry_add(sqlite3 *db, const char *schema, const char *name,
                           const char *args, ds_table_writer *tw,
                           void (*destroy)(ds_table_writer *tw));
/* The table of tw is renamed (ALTER TABLE ... RENAME TO name): SQLite
 * connects it again under the new name, which must find this writer. 0,
 * or -1 when out of memory. */
int ds_writer_registry_rename(ds_table_writer *tw, const char *name);
/* One reference less. Returns 1 when the caller must free tw: it is not
 * kept, or its table is gone (dropped, failed to create, connection
 * closed) and this was the last reference. */
int ds_writer_registry_release(ds_table_writer *tw);
/* The table of tw is gone (DROP TABLE, or its xCreate failed): freed at
 * the last release. Returns 1 when nothing holds it (the caller frees). */
int ds_writer_registry_forget(ds_table_writer *tw);

#endif
