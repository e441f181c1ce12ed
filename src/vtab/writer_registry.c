/* writer_registry.c - the writers of writer tables, per connection and
 * table, beyond one sqlite3_vtab's life (see writer_registry.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "vtab/writer_registry.h"

typedef struct entry {
  sqlite3 *db;
  char *schema, *name, *args;
  ds_table_writer *tw;
  void (*destroy)(ds_table_writer *tw);
  int refs;
  int gone;            /* table dropped / connection closed */
  struct entry *next;
} entry;

/* A connection whose close hook is registered. */
typedef struct hooked_db {
  sqlite3 *db;
  struct hooked_db *next;
} hooked_db;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static hooked_db *hooked;

/* The entry of tw (lock held), or NULL. */
static entry **find_writer(ds_table_writer *tw) {
  for (entry **e = &entries; *e; e = &(*e)->next)
    if ((*e)->tw == tw) return e;
  return NULL;
}

/* Unlink and free *e (lock held); its writer is returned to be destroyed
 * outside the lock. */
static entry *unlink_entry(entry **e) {
  entry *x = *e;
  *e = x->next;
  free(x->schema);
  free(x->name);
  free(x->args);
  return x;
}

/* The close hook: the function's destructor runs when db closes (after
 * SQLite disconnected its tables). Writers nothing holds are freed, the
 * others when their last reference goes. */
static void on_close(void *p) {
  sqlite3 *db = p;
  entry *done = NULL;
  pthread_mutex_lock(&lock);
  for (hooked_db **h = &hooked; *h; h = &(*h)->next)
    if ((*h)->db == db) {
      hooked_db *x = *h;
      *h = x->next;
      free(x);
      break;
    }
  for (entry **e = &entries; *e;) {
    if ((*e)->db != db) {
      e = &(*e)->next;
      continue;
    }
    (*e)->gone = 1;
    (*e)->db = NULL; /* the address may be a new connection's later */
    if ((*e)->refs > 0) {
      e = &(*e)->next;
      continue;
    }
    entry *x = unlink_entry(e);
    x->next = done;
    done = x;
  }
  pthread_mutex_unlock(&lock);
  while (done) {
    entry *x = done;
    done = x->next;
    x->destroy(x->tw);
    free(x);
  }
}

/* The hook function itself does nothing (it exists for its destructor). */
static void hook_func(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  (void)argc;
  (void)argv;
  sqlite3_result_null(ctx);
}

int ds_writer_registry_hook(sqlite3 *db) {
  pthread_mutex_lock(&lock);
  int have = 0;
  for (hooked_db *h = hooked; h && !have; h = h->next) have = h->db == db;
  hooked_db *h = have ? NULL : malloc(sizeof *h);
  if (h) {
    h->db = db;
    h->next = hooked;
    hooked = h;
  }
  pthread_mutex_unlock(&lock);
  if (have) return SQLITE_OK;
  if (!h) return SQLITE_NOMEM;
  /* one name per copy of this code (datasets.so and bagz.so may both be
   * loaded): replacing another copy's function would run its destructor */
  char name[64];
  snprintf(name, sizeof name, "ds_writer_tables_%p", (void *)&entries);
  return sqlite3_create_function_v2(db, name, 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, db,
                                    hook_func, NULL, NULL, on_close);
}

ds_table_writer *ds_writer_registry_find(sqlite3 *db, const char *schema,
                                         const char *name, const char *args) {
  ds_table_writer *tw = NULL;
  pthread_mutex_lock(&lock);
  for (entry *e = entries; e && !tw; e = e->next)
    if (!e->gone && e->db == db && strcmp(e->schema, schema) == 0 &&
        sqlite3_stricmp(e->name, name) == 0 && strcmp(e->args, args) == 0) {
      e->refs++;
      tw = e->tw;
    }
  pthread_mutex_unlock(&lock);
  return tw;
}

int ds_writer_registry_add(sqlite3 *db, const char *schema, const char *name,
                           const char *args, ds_table_writer *tw,
                           void (*destroy)(ds_table_writer *tw)) {
  entry *e = calloc(1, sizeof *e);
  if (!e || !(e->schema = strdup(schema)) || !(e->name = strdup(name)) ||
      !(e->args = strdup(args))) {
    if (e) {
      free(e->schema);
      free(e->name);
    }
    free(e);
    return -1;
  }
  e->db = db;
  e->tw = tw;
  e->destroy = destroy;
  e->refs = 1;
  pthread_mutex_lock(&lock);
  e->next = entries;
  entries = e;
  pthread_mutex_unlock(&lock);
  return 0;
}

/* One reference less (forget: and the table is gone); 1 when the caller
 * frees tw. */
static int drop_ref(ds_table_writer *tw, int forget) {
  pthread_mutex_lock(&lock);
  entry **e = find_writer(tw);
  int free_it = !forget; /* a writer never kept is the caller's alone */
  if (e) {
    if (forget) (*e)->gone = 1;
    else (*e)->refs--;
    free_it = (*e)->refs <= 0 && (*e)->gone;
    if (free_it) free(unlink_entry(e));
  }
  pthread_mutex_unlock(&lock);
  return free_it;
}

int ds_writer_registry_release(ds_table_writer *tw) { return drop_ref(tw, 0); }

int ds_writer_registry_forget(ds_table_writer *tw) { return drop_ref(tw, 1); }

int ds_writer_registry_rename(ds_table_writer *tw, const char *name) {
  char *copy = strdup(name);
  if (!copy) return -1;
  pthread_mutex_lock(&lock);
  entry **e = find_writer(tw);
  if (e) {
    free((*e)->name);
    (*e)->name = copy;
    copy = NULL;
  }
  pthread_mutex_unlock(&lock);
  free(copy);
  return 0;
}
