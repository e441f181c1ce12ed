/* stage.c - temporaries beside the target, a lock per dataset path, and
 * publish by rename (see stage.h for the names and the order). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped_file.h"
#include "stage.h"

typedef struct stage_tmp {
  char *path;
  ds_afile *file;  /* NULL for a directory */
  char *final;     /* NULL: not published (deleted) */
  uint64_t order;  /* position among finals */
} stage_tmp;

typedef struct stage_old {
  char *path;
  int first;
} stage_old;

struct ds_stage {
  char *dir;
  char *key;
  char *lock_path;
  int lock_fd;
  ds_stage_mode mode;
  stage_tmp *tmps;
  size_t ntmps, cap_tmps;
  stage_old *olds;
  size_t nolds, cap_olds;
  uint64_t seq;      /* temporaries made so far (unique names) */
  uint64_t nfinal;   /* finals named so far */
};

/* "<dir>/.<key>.<what>" (malloc'd). */
static char *stage_name(const char *dir, const char *key, const char *what) {
  return ds_strf("%s/.%s.%s", dir, key, what);
}

/* Remove entries of dir named ".<key>.ds-tmp.*": their writer is gone. */
static int clean_stale(ds_stage *s, char **err) {
  DIR *d = opendir(s->dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", s->dir, strerror(errno));
  char *prefix = ds_strf(".%s.ds-tmp.", s->key);
  int rc = prefix ? 0 : ds_err(err, "out of memory");
  size_t plen = prefix ? strlen(prefix) : 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, prefix, plen) != 0) continue;
    char *p = ds_path_join(s->dir, e->d_name);
    rc = p ? ds_remove_tree(p, err) : ds_err(err, "out of memory");
    free(p);
  }
  closedir(d);
  free(prefix);
  return rc;
}

/* Take the lock file: flock it and make sure the path still names the
 * inode we locked (a closing writer unlinks it while holding the lock). */
static int take_lock(ds_stage *s, char **err) {
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = open(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
      return ds_err(err, "%s: cannot create the writer lock: %s", s->lock_path,
                    strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      close(fd);
      if (e == EWOULDBLOCK)
        return ds_err(err, "%s/%s: another writer has this dataset open "
                           "(lock %s)",
                      s->dir, s->key, s->lock_path);
      return ds_err(err, "%s: cannot lock: %s", s->lock_path, strerror(e));
    }
    struct stat a, b;
    if (fstat(fd, &a) == 0 && stat(s->lock_path, &b) == 0 &&
        a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
      s->lock_fd = fd;
      return 0;
    }
    close(fd); /* lost a race with a closing writer: try again */
  }
  return ds_err(err, "%s: cannot take the writer lock", s->lock_path);
}

int ds_stage_open(const char *dir, const char *key, ds_stage_mode mode,
                  ds_stage **out, char **err) {
  *out = NULL;
  ds_stage *s = calloc(1, sizeof *s);
  if (!s) return ds_err(err, "out of memory");
  s->lock_fd = -1;
  s->mode = mode;
  s->dir = strdup(dir && *dir ? dir : ".");
  s->key = strdup(key);
  s->lock_path = s->dir && s->key ? stage_name(s->dir, key, "ds-lock") : NULL;
  if (!s->lock_path) {
    ds_stage_close(s);
    return ds_err(err, "out of memory");
  }
  if (take_lock(s, err) || clean_stale(s, err)) {
    ds_stage_close(s);
    return -1;
  }
  *out = s;
  return 0;
}

void ds_stage_close(ds_stage *s) {
  if (!s) return;
  ds_stage_discard(s);
  if (s->lock_fd >= 0) {
    unlink(s->lock_path); /* while still holding it: see take_lock */
    close(s->lock_fd);
  }
  free(s->tmps);
  for (size_t i = 0; i < s->nolds; i++) free(s->olds[i].path);
  free(s->olds);
  free(s->dir);
  free(s->key);
  free(s->lock_path);
  free(s);
}

ds_stage_mode ds_stage_get_mode(const ds_stage *s) { return s->mode; }
const char *ds_stage_dir_path(const ds_stage *s) { return s->dir; }

int ds_stage_check_absent(const ds_stage *s, const char *path, char **err) {
  struct stat st;
  if (s->mode == DS_STAGE_CREATE && lstat(path, &st) == 0)
    return ds_err(err, "%s: already exists (mode=create never overwrites; "
                       "use mode=replace)",
                  path);
  return 0;
}

int ds_stage_claim(ds_stage *s, const char *path, int first, char **err) {
  if (s->mode == DS_STAGE_CREATE) return ds_stage_check_absent(s, path, err);
  return ds_path_exists(path, NULL) ? ds_stage_obsolete(s, path, first, err) : 0;
}

/* Room for one more temporary; its path is "<dir>/.<key>.ds-tmp.<pid>.<seq>.<label>". */
static stage_tmp *new_tmp(ds_stage *s, const char *label, char **err) {
  stage_tmp *tmps = ds_grow_cap(s->tmps, &s->cap_tmps, s->ntmps, sizeof *tmps, 8);
  if (!tmps) return ds_err(err, "out of memory"), NULL;
  s->tmps = tmps;
  char what[64];
  snprintf(what, sizeof what, "ds-tmp.%ld.%llu.", (long)getpid(),
           (unsigned long long)s->seq++);
  char *base = stage_name(s->dir, s->key, what);
  char *path = base ? ds_strf("%s%s", base, label) : NULL;
  free(base);
  if (!path) return ds_err(err, "out of memory"), NULL;
  stage_tmp *t = &s->tmps[s->ntmps];
  memset(t, 0, sizeof *t);
  t->path = path;
  return t;
}

int ds_stage_file(ds_stage *s, const char *label, ds_afile **out, char **err) {
  stage_tmp *t = new_tmp(s, label, err);
  if (!t) return -1;
  ds_afile *f = calloc(1, sizeof *f);
  int fd = f ? open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;
  if (fd < 0) {
    int rc = f ? ds_err(err, "%s: cannot create: %s", t->path, strerror(errno))
               : ds_err(err, "out of memory");
    free(f);
    free(t->path);
    return rc;
  }
  f->fd = fd;
  f->path = t->path;
  t->file = f;
  s->ntmps++;
  *out = f;
  return 0;
}

int ds_stage_dir(ds_stage *s, const char *label, const char **out, char **err) {
  stage_tmp *t = new_tmp(s, label, err);
  if (!t) return -1;
  if (mkdir(t->path, 0755) != 0) {
    int rc = ds_err(err, "%s: cannot create: %s", t->path, strerror(errno));
    free(t->path);
    return rc;
  }
  s->ntmps++;
  *out = t->path;
  return 0;
}

int ds_stage_final(ds_stage *s, const char *tmp_path, const char *final_path,
                   char **err) {
  for (size_t i = 0; i < s->ntmps; i++) {
    if (strcmp(s->tmps[i].path, tmp_path) != 0) continue;
    free(s->tmps[i].final);
    s->tmps[i].final = strdup(final_path);
    s->tmps[i].order = s->nfinal++;
    return s->tmps[i].final ? 0 : ds_err(err, "out of memory");
  }
  return ds_err(err, "%s: not a temporary of this writer", tmp_path);
}

int ds_stage_obsolete(ds_stage *s, const char *path, int first, char **err) {
  for (size_t i = 0; i < s->nolds; i++)
    if (strcmp(s->olds[i].path, path) == 0) {
      s->olds[i].first |= first;
      return 0;
    }
  stage_old *o = ds_grow_cap(s->olds, &s->cap_olds, s->nolds, sizeof *o, 8);
  if (!o) return ds_err(err, "out of memory");
  s->olds = o;
  if (!(s->olds[s->nolds].path = strdup(path))) return ds_err(err, "out of memory");
  s->olds[s->nolds++].first = first;
  return 0;
}

int ds_fsync_path(const char *path, char **err) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ds_err(err, "%s: cannot open: %s", path, strerror(errno));
  int rc = fsync(fd) == 0 ? 0
                          : ds_err(err, "%s: fsync failed: %s", path, strerror(errno));
  close(fd);
  return rc;
}

/* fsync every file and directory below (and including) dir. */
static int sync_tree(const char *dir, char **err) {
  DIR *d = opendir(dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", dir, strerror(errno));
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *p = ds_path_join(dir, e->d_name);
    struct stat st;
    if (!p) rc = ds_err(err, "out of memory");
    else if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rc = sync_tree(p, err);
    else if (lstat(p, &st) == 0 && S_ISREG(st.st_mode)) rc = ds_fsync_path(p, err);
    free(p);
  }
  closedir(d);
  return rc ? rc : ds_fsync_path(dir, err);
}

int ds_stage_sync(ds_stage *s, char **err) {
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *t = &s->tmps[i];
    if (!t->final) continue; /* scratch: never published */
    if (t->file) {
      if (ds_afile_flush(t->file, err)) return -1;
      if (fsync(t->file->fd) != 0)
        return ds_err(err, "%s: fsync failed: %s", t->path, strerror(errno));
    } else if (sync_tree(t->path, err)) {
      return -1;
    }
  }
  return 0;
}

/* Compare finals by publish order (qsort_r: indexes into s->tmps, which
 * new_tmp may move). */
static int by_order(const void *a, const void *b, void *ctx) {
  const stage_tmp *tmps = ctx;
  const stage_tmp *x = &tmps[*(const size_t *)a], *y = &tmps[*(const size_t *)b];
  return x->order < y->order ? -1 : x->order > y->order;
}

/* Remove what the old dataset had and the new one (pub[0..n)) does not. */
static int remove_replaced(ds_stage *s, const char *const *pub, size_t n,
                           char **err) {
  for (size_t i = 0; i < s->nolds; i++) {
    int kept = 0;
    for (size_t j = 0; j < n && !kept; j++) kept = strcmp(pub[j], s->olds[i].path) == 0;
    if (!kept && ds_remove_tree(s->olds[i].path, err)) return -1;
  }
  return 0;
}

/* Move one temporary to its final place: files by rename (atomic
 * overwrite), directories by exchange when the target exists (then the
 * old tree, now under the temporary name, is removed). */
static int publish_one(stage_tmp *t, char **err) {
  if (t->file) {
    if (rename(t->path, t->final) != 0)
      return ds_err(err, "%s: cannot publish as %s: %s", t->path, t->final,
                    strerror(errno));
    return 0;
  }
  if (renameat2(AT_FDCWD, t->path, AT_FDCWD, t->final, RENAME_EXCHANGE) == 0)
    return ds_remove_tree(t->path, err);
  if (errno != ENOENT)
    return ds_err(err, "%s: cannot exchange with %s: %s", t->path, t->final,
                  strerror(errno));
  if (rename(t->path, t->final) != 0)
    return ds_err(err, "%s: cannot publish as %s: %s", t->path, t->final,
                  strerror(errno));
  return 0;
}

int ds_stage_publish(ds_stage *s, char **err) {
  size_t nf = 0;
  size_t *order = malloc((s->ntmps + 1) * sizeof *order);
  if (!order) return ds_err(err, "out of memory");
  for (size_t i = 0; i < s->ntmps; i++)
    if (s->tmps[i].final) order[nf++] = i;
  qsort_r(order, nf, sizeof *order, by_order, s->tmps);
  int rc = 0;
  /* 1. the old commit point leaves first when several files will appear
   *    (a single file overwrites it atomically instead) */
  for (size_t i = 0; i < s->nolds && rc == 0; i++) {
    stage_old *o = &s->olds[i];
    if (!o->first) continue;
    if (nf == 1 && strcmp(s->tmps[order[0]].final, o->path) == 0) continue;
    stage_tmp *t = new_tmp(s, "old", err);
    if (!t) { rc = -1; break; }
    if (rename(o->path, t->path) != 0 && errno != ENOENT)
      rc = ds_err(err, "%s: cannot move the old dataset away: %s", o->path,
                  strerror(errno));
    s->ntmps++; /* deleted below, or by the next writer if we die */
  }
  /* 2. the new files, commit point last */
  char **published = calloc(nf + 1, sizeof *published);
  size_t npub = 0;
  if (!published && rc == 0) rc = ds_err(err, "out of memory");
  for (size_t i = 0; i < nf && rc == 0; i++) {
    stage_tmp *t = &s->tmps[order[i]];
    rc = publish_one(t, err);
    if (rc == 0) published[npub++] = t->final;
    if (rc == 0) t->final = NULL;
  }
  free(order);
  if (rc == 0) rc = remove_replaced(s, (const char *const *)published, npub, err);
  if (rc) {
    for (size_t i = 0; i < npub; i++) free(published[i]);
    free(published);
    return -1;
  }
  rc = ds_fsync_path(s->dir, err);
  /* the published files are what the next version replaces */
  for (size_t i = 0; i < s->nolds; i++) free(s->olds[i].path);
  s->nolds = 0;
  for (size_t i = 0; i < npub && rc == 0; i++)
    rc = ds_stage_obsolete(s, published[i], i + 1 == npub, err);
  for (size_t i = 0; i < npub; i++) free(published[i]);
  free(published);
  ds_stage_discard(s);
  return rc;
}

void ds_stage_discard(ds_stage *s) {
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *t = &s->tmps[i];
    if (t->file) {
      close(t->file->fd);
      free(t->file->buf);
      free(t->file);
    }
    ds_remove_tree(t->path, NULL);
    free(t->path);
    free(t->final);
  }
  s->ntmps = 0;
  s->nfinal = 0;
}

int ds_remove_tree(const char *path, char **err) {
  struct stat st;
  if (lstat(path, &st) != 0) return 0;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    if (!d) return ds_err(err, "%s: cannot list: %s", path, strerror(errno));
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char *p = ds_path_join(path, e->d_name);
      rc = p ? ds_remove_tree(p, err) : ds_err(err, "out of memory");
      free(p);
    }
    closedir(d);
    if (rc) return rc;
    if (rmdir(path) != 0 && errno != ENOENT)
      return ds_err(err, "%s: cannot remove: %s", path, strerror(errno));
    return 0;
  }
  if (unlink(path) != 0 && errno != ENOENT)
    return ds_err(err, "%s: cannot remove: %s", path, strerror(errno));
  return 0;
}
