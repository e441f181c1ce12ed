/* stage_journal.h - the publish journal of a multi-file dataset (see
 * core/stage.h and ARCHITECTURE.md, "Publishing"): before a writer touches
 * any final name it writes, durably, `D/.K.ds-journal` listing what it is
 * about to do, so that whoever takes the lock after a crash can finish or
 * undo it knowing exactly which files are whose.
 *
 * Entries (names are basenames in the stage's directory D):
 *   'c'  the new commit point: its final name, the temporary it comes
 *        from, and the inode it has (rename keeps the inode)
 *   'n'  another new file: the same
 *   'o'  an old file of the dataset: its name, the `.K.ds-old.*` name it
 *        waits under while the new files appear, and its inode
 *
 * The commit point at its final name with the journaled inode means the
 * new dataset is published: what remains is deleting the old files.
 * Otherwise nothing was published: the new files are moved back (or
 * deleted) and the old ones renamed back. Nothing whose inode the journal
 * does not name is ever deleted or replaced. Knows no SQLite. */
#ifndef DS_STAGE_JOURNAL_H
#define DS_STAGE_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

#include "close_later.h"

#include "vfs.h"

typedef struct ds_jentry {
  char kind;       /* 'c', 'n' or 'o' */
  char *name;      /* the final name */
  char *other;     /* 'c', 'n': the temporary's name; 'o': the ds-old name */
  uint64_t dev, ino;
} ds_jentry;

typedef struct ds_journal {
  ds_jentry *e;
  size_t n, cap;
} ds_journal;

/* Add an entry (names copied; st gives dev and ino). */
int ds_journal_add(ds_journal *j, char kind, const char *name, const char *other,
                   const ds_vfs_info *st, char **err);
void ds_journal_free(ds_journal *j);

/* Write j as `path` in dir, durably: through temporary `tmp` (fsync'ed,
 * renamed, the directory fsync'ed). */
int ds_journal_write(const ds_journal *j, const char *dir, const char *tmp,
                     const char *path, char **err);
/* Read a journal a writer left (an error for anything malformed). */
int ds_journal_read(ds_journal *j, const char *path, char **err);

/* 1 when the commit point at its final name is the journaled new one. */
int ds_journal_committed(const ds_journal *j, const char *dir);
/* Not published: every new file back to its temporary name (deleted when
 * that is taken), every old file back to its name (the commit point
 * last), the directory fsync'ed. Only journaled inodes are touched. */
int ds_journal_undo(const ds_journal *j, const char *dir, char **err);
/* Published: delete the old files (journaled inodes only). With `later`
 * not NULL each old regular file is opened before its unlink and its
 * descriptor left to `later` (core/close_later.h): the unlink only drops
 * the name, freeing the file's pages waits for that close. */
void ds_journal_finish(const ds_journal *j, const char *dir, ds_close_later *later);
/* After a crash, under the lock: finish or undo the journal at `path`,
 * then delete it. No journal: nothing to do. */
int ds_journal_recover(const char *dir, const char *path, char **err);

#endif
