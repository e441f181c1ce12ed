/* stage_journal.c - write, read, undo, finish and recover the publish
 * journal (see stage_journal.h). On disk: NUL-separated tokens, "ds-journal-1",
 * then five per entry (kind, name, other, dev, ino), then "end". */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "append_file.h"
#include "common.h"
#include "mapped_file.h"
#include "stage_journal.h"
#include "vfs.h"

#define MAGIC "ds-journal-1"
#define MAX_JOURNAL (64u << 20)

int ds_journal_add(ds_journal *j, char kind, const char *name, const char *other,
                   const ds_vfs_info *st, char **err) {
  ds_jentry *e = ds_grow_cap(j->e, &j->cap, j->n, sizeof *e, 8);
  if (!e) return ds_err(err, "out of memory");
  j->e = e;
  e = &j->e[j->n];
  e->kind = kind;
  e->name = strdup(name);
  e->other = strdup(other);
  e->dev = st->dev;
  e->ino = st->ino;
  if (!e->name || !e->other) {
    free(e->name);
    free(e->other);
    return ds_err(err, "out of memory");
  }
  j->n++;
  return 0;
}

void ds_journal_free(ds_journal *j) {
  for (size_t i = 0; i < j->n; i++) {
    free(j->e[i].name);
    free(j->e[i].other);
  }
  free(j->e);
  memset(j, 0, sizeof *j);
}

/* Append token t and its NUL. */
static int put_tok(ds_buf *b, const char *t) {
  return ds_buf_append(b, t, strlen(t) + 1);
}

int ds_journal_write(const ds_journal *j, const char *dir, const char *tmp,
                     const char *path, char **err) {
  ds_buf b = {0};
  int rc = put_tok(&b, MAGIC);
  for (size_t i = 0; i < j->n && rc == 0; i++) {
    char kind[2] = {j->e[i].kind, 0}, dev[32], ino[32];
    snprintf(dev, sizeof dev, "%llu", (unsigned long long)j->e[i].dev);
    snprintf(ino, sizeof ino, "%llu", (unsigned long long)j->e[i].ino);
    rc = put_tok(&b, kind) || put_tok(&b, j->e[i].name) || put_tok(&b, j->e[i].other) ||
         put_tok(&b, dev) || put_tok(&b, ino);
  }
  if (rc == 0) rc = put_tok(&b, "end");
  if (rc) {
    ds_buf_free(&b);
    return ds_err(err, "out of memory");
  }
  int fd = ds_vfs_open_fd(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC);
  if (fd < 0) rc = ds_err(err, "%s: cannot create: %s", tmp, strerror(errno));
  if (rc == 0) rc = ds_write_all(fd, b.data, b.len, tmp, err);
  if (rc == 0 && ds_vfs_fsync_fd(fd) != 0) rc = ds_err(err, "%s: fsync failed: %s", tmp, strerror(errno));
  if (fd >= 0) close(fd);
  ds_buf_free(&b);
  if (rc == 0 && ds_vfs_rename(tmp, path, DS_VFS_REPLACE) != 0)
    rc = ds_err(err, "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
  if (rc) {
    ds_vfs_remove(tmp);
    return -1;
  }
  return ds_fsync_path(dir, err);
}

int ds_journal_read(ds_journal *j, const char *path, char **err) {
  memset(j, 0, sizeof *j);
  int fd = ds_vfs_open_fd(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ds_err(err, "%s: cannot open: %s", path, strerror(errno));
  ds_buf b = {0};
  char chunk[65536];
  ssize_t k;
  int rc = 0;
  while (rc == 0 && (k = read(fd, chunk, sizeof chunk)) != 0) {
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) rc = ds_err(err, "%s: cannot read: %s", path, strerror(errno));
    else if (b.len + (size_t)k > MAX_JOURNAL) rc = ds_err(err, "%s: too large for a journal", path);
    else if (ds_buf_append(&b, chunk, (size_t)k)) rc = ds_err(err, "out of memory");
  }
  close(fd);
  /* tokens: the header, five per entry, "end" */
  const char *tok[5];
  size_t pos = 0, ntok = 0, seen = 0;
  int ended = 0, header = 0;
  while (rc == 0 && pos < b.len && !ended) {
    const char *t = (const char *)b.data + pos;
    const char *z = memchr(t, 0, b.len - pos);
    if (!z) break;
    pos += (size_t)(z - t) + 1;
    if (seen++ == 0) {
      header = !strcmp(t, MAGIC);
      if (!header) break;
      continue;
    }
    if (ntok == 0 && !strcmp(t, "end")) {
      ended = 1;
      break;
    }
    tok[ntok++] = t;
    if (ntok < 5) continue;
    ntok = 0;
    char *e1, *e2;
    unsigned long long dev = strtoull(tok[3], &e1, 10), ino = strtoull(tok[4], &e2, 10);
    if (strlen(tok[0]) != 1 || !strchr("cno", tok[0][0]) || *e1 || *e2 || !*tok[1] ||
        !*tok[2] || strchr(tok[1], '/') || strchr(tok[2], '/')) {
      rc = ds_err(err, "%s: a malformed entry", path);
      break;
    }
    ds_vfs_info st;
    memset(&st, 0, sizeof st);
    st.dev = (uint64_t)dev;
    st.ino = (uint64_t)ino;
    rc = ds_journal_add(j, tok[0][0], tok[1], tok[2], &st, err);
  }
  ds_buf_free(&b);
  if (rc == 0 && (!header || !ended || ntok))
    rc = ds_err(err, "%s: not a whole journal", path);
  if (rc) ds_journal_free(j);
  return rc;
}

/* 1 when dir/name is the inode (dev, ino). */
static int is_inode(const char *dir, const char *name, uint64_t dev, uint64_t ino) {
  char *p = ds_path_join(dir, name);
  ds_vfs_info st;
  int yes = p && ds_vfs_lstat(p, &st) == 0 && st.dev == dev && st.ino == ino;
  free(p);
  return yes;
}

int ds_journal_committed(const ds_journal *j, const char *dir) {
  for (size_t i = 0; i < j->n; i++)
    if (j->e[i].kind == 'c') return is_inode(dir, j->e[i].name, j->e[i].dev, j->e[i].ino);
  return 0;
}

int ds_journal_undo(const ds_journal *j, const char *dir, char **err) {
  int rc = 0;
  /* the new files leave first (the new commit point first of all) */
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < j->n; i++) {
      const ds_jentry *e = &j->e[i];
      if (e->kind != (pass ? 'n' : 'c') || !is_inode(dir, e->name, e->dev, e->ino)) continue;
      char *from = ds_path_join(dir, e->name), *to = ds_path_join(dir, e->other);
      if (!from || !to) rc = ds_err(err, "out of memory");
      else if (ds_vfs_rename(from, to, DS_VFS_NOREPLACE) != 0 && ds_remove_tree(from, err))
        rc = -1;
      free(from);
      free(to);
    }
  /* then the old ones come back, the commit point (the first) last */
  for (size_t k = j->n; k-- > 0;) {
    const ds_jentry *e = &j->e[k];
    if (e->kind != 'o' || !is_inode(dir, e->other, e->dev, e->ino)) continue;
    char *from = ds_path_join(dir, e->other), *to = ds_path_join(dir, e->name);
    if (!from || !to) rc = ds_err(err, "out of memory");
    else if (ds_vfs_rename(from, to, DS_VFS_NOREPLACE) != 0)
      rc = ds_err(err, "%s: cannot put the old file back from %s: %s (it stays there)",
                  to, from, strerror(errno));
    free(from);
    free(to);
  }
  char *e2 = NULL;
  if (ds_fsync_path(dir, rc ? &e2 : err) && rc == 0) rc = -1;
  free(e2);
  return rc;
}

void ds_journal_finish(const ds_journal *j, const char *dir, ds_close_later *later) {
  for (size_t i = 0; i < j->n; i++) {
    const ds_jentry *e = &j->e[i];
    if (e->kind != 'o' || !is_inode(dir, e->other, e->dev, e->ino)) continue;
    char *p = ds_path_join(dir, e->other);
    ds_vfs_info st;
    int fd = -1; /* a regular file's: its pages are freed at its close */
    if (p && later && ds_vfs_lstat(p, &st) == 0 && st.kind == DS_VFS_FILE)
      fd = ds_vfs_open_fd(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (p) ds_remove_tree(p, NULL);
    if (fd >= 0) ds_close_later_add(later, fd);
    free(p);
  }
}

int ds_journal_recover(const char *dir, const char *path, char **err) {
  ds_vfs_info st;
  if (ds_vfs_lstat(path, &st) != 0) return 0;
  ds_journal j;
  if (ds_journal_read(&j, path, err)) {
    ds_err_prefix(err, "the journal a dead writer left (look at it; nothing "
                       "was changed)");
    return -1;
  }
  int rc = 0;
  if (ds_journal_committed(&j, dir)) ds_journal_finish(&j, dir, NULL);
  else rc = ds_journal_undo(&j, dir, err);
  ds_journal_free(&j);
  if (rc) return -1;
  if (ds_vfs_remove(path) != 0 && errno != ENOENT)
    return ds_err(err, "%s: cannot remove: %s", path, strerror(errno));
  return ds_fsync_path(dir, err);
}
