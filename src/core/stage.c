/* stage.c - temporaries beside the target, a lock per dataset path, and
 * the two-step publish: prepare (xSync) does everything that can fail,
 * publish (xCommit) one rename (see stage.h, stage_journal.h and
 * ARCHITECTURE.md, "Publishing"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "close_later.h"
#include "mapped_file.h"
#include "parallel.h"
#include "stage.h"
#include "stage_journal.h"
#include "stage_early.h"
#include "stage_remote.h"
#include "vfs.h"
#include "vfs_each.h"

typedef struct stage_tmp {
  char *path;
  ds_afile *file;  /* NULL for a directory */
  char *final;     /* NULL: not published (deleted) */
  uint64_t order;  /* position among finals */
  ds_stage_early *early; /* a remote stage's upload while it is written */
} stage_tmp;

typedef struct stage_old {
  char *path;
  int first;
} stage_old;

struct ds_stage {
  char *dir;
  char *key;
  char *lock_path;
  char *shown;       /* a remote target's folder, for messages */
  int lock_fd;
  ds_stage_mode mode;
  stage_tmp *tmps;
  size_t ntmps, cap_tmps;
  stage_old *olds;
  size_t nolds, cap_olds;
  uint64_t seq;      /* temporaries made so far (unique names) */
  uint64_t nfinal;   /* finals named so far */
  int (*own)(const char *path, char **err); /* a directory dataset's check */
  char *journal_path;
  int prepared;      /* ds_stage_sync done: only the commit step is left */
  int journaled;     /* ... with the journal j on disk (several files) */
  ds_journal j;
  size_t commit;     /* tmps index of the commit point (prepared) */
  int commit_over;   /* single file or directory: its final name exists */
  int kept;          /* publish failed: discard keeps the temporaries */
  const ds_vfs_publisher *pub; /* a remote target's: dir is a private
                                * local folder (stage_remote.h) */
  ds_rpub *rpub;     /* its uploads once prepared */
  ds_close_later later; /* the replaced files, closed (freed) after a publish */
  ds_vfs_remote_opts ropts; /* endpoint=, region=, ... current at open
                             * (strings owned), current again for the
                             * uploads */
  int has_ropts;
};

/* Make the remote settings of s's open current (returns the ones before). */
static const ds_vfs_remote_opts *use_ropts(const ds_stage *s) {
  return ds_vfs_remote_use(s->has_ropts ? &s->ropts : ds_vfs_remote_current());
}

/* "<dir>/.<key>.<what>" (malloc'd). */
static char *stage_name(const char *dir, const char *key, const char *what) {
  return ds_strf("%s/.%s.%s", dir, key, what);
}

/* Remove entries of dir named ".<key>.ds-tmp.*": their writer is gone. */
static int clean_stale(ds_stage *s, char **err) {
  ds_vfs_list *d = ds_vfs_list_open(NULL, s->dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", s->dir, strerror(errno));
  char *prefix = ds_strf(".%s.ds-tmp.", s->key);
  int rc = prefix ? 0 : ds_err(err, "out of memory");
  size_t plen = prefix ? strlen(prefix) : 0;
  const char *name;
  while (rc == 0 && (name = ds_vfs_list_next(d)) != NULL) {
    if (strncmp(name, prefix, plen) != 0) continue;
    char *p = ds_path_join(s->dir, name);
    rc = p ? ds_remove_tree(p, err) : ds_err(err, "out of memory");
    free(p);
  }
  ds_vfs_list_close(d);
  free(prefix);
  return rc;
}

/* Take the lock file: flock it and make sure the path still names the
 * inode we locked (a closing writer unlinks it while holding the lock). */
static int take_lock(ds_stage *s, char **err) {
  for (int attempt = 0; attempt < 100; attempt++) {
    int fd = ds_vfs_open_fd(s->lock_path, O_RDWR | O_CREAT | O_CLOEXEC);
    if (fd < 0)
      return ds_err(err, "%s: cannot create the writer lock: %s", s->lock_path,
                    strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int e = errno;
      close(fd);
      if (e == EWOULDBLOCK)
        return ds_err(err, "%s/%s: another writer has this dataset open "
                           "(lock %s)",
                      s->shown ? s->shown : s->dir, s->key, s->lock_path);
      return ds_err(err, "%s: cannot lock: %s", s->lock_path, strerror(e));
    }
    ds_vfs_info a, b;
    if (ds_vfs_stat_fd(fd, &a) == 0 && ds_vfs_stat(s->lock_path, &b) == 0 &&
        a.dev == b.dev && a.ino == b.ino) {
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
  s->pub = dir ? ds_vfs_publisher_for(dir) : NULL;
  if (s->pub && !(s->dir = ds_rpub_local_dir(dir, key, err))) {
    ds_stage_close(s);
    return -1;
  }
  if (!s->pub) s->dir = strdup(dir && *dir ? dir : ".");
  const ds_vfs_remote_opts *cur = s->pub ? ds_vfs_remote_current() : NULL;
  if (cur) {
    s->ropts = *cur;
    s->ropts.endpoint = cur->endpoint ? strdup(cur->endpoint) : NULL;
    s->ropts.region = cur->region ? strdup(cur->region) : NULL;
    s->has_ropts = 1;
  }
  s->key = strdup(key);
  s->lock_path = s->dir && s->key ? stage_name(s->dir, key, "ds-lock") : NULL;
  if (s->pub && s->lock_path) { /* one lock per target URL on this machine */
    free(s->lock_path);
    s->lock_path = ds_rpub_lock_path(dir, key);
    s->shown = strdup(dir);
  }
  s->journal_path = s->lock_path ? stage_name(s->dir, key, "ds-journal") : NULL;
  if (!s->journal_path) {
    ds_stage_close(s);
    return ds_err(err, "out of memory");
  }
  /* writers do not create folders: say which one is missing rather than
   * failing on the lock file inside it */
  ds_vfs_info st;
  int bad = 0;
  if (ds_vfs_stat(s->dir, &st) != 0)
    bad = errno == ENOENT || errno == ENOTDIR
              ? ds_err(err, "%s: the folder to write into does not exist (writers do "
                            "not create folders: create it first)", s->dir)
              : ds_err(err, "%s: cannot use the folder to write into: %s", s->dir,
                       strerror(errno));
  else if (st.kind != DS_VFS_DIR)
    bad = ds_err(err, "%s: not a folder, so nothing can be written inside it", s->dir);
  if (bad) {
    ds_stage_close(s);
    return -1;
  }
  /* under the lock: finish or undo what a dead writer journaled, then
   * delete its temporaries */
  if (take_lock(s, err) || ds_journal_recover(s->dir, s->journal_path, err) ||
      clean_stale(s, err) || (s->pub && ds_rpub_clean_stale(dir, key, s->dir, err))) {
    ds_stage_close(s);
    return -1;
  }
  *out = s;
  return 0;
}

void ds_stage_close(ds_stage *s) {
  if (!s) return;
  ds_stage_discard(s);
  ds_close_later_wait(&s->later);
  if (s->lock_fd >= 0) {
    ds_vfs_remove(s->lock_path); /* while still holding it: see take_lock */
    close(s->lock_fd);
  }
  if (s->pub && s->dir) ds_remove_tree(s->dir, NULL); /* the private folder */
  free(s->tmps);
  for (size_t i = 0; i < s->nolds; i++) free(s->olds[i].path);
  free(s->olds);
  free((char *)s->ropts.endpoint);
  free((char *)s->ropts.region);
  free(s->dir);
  free(s->key);
  free(s->lock_path);
  free(s->shown);
  free(s->journal_path);
  free(s);
}

ds_stage_mode ds_stage_get_mode(const ds_stage *s) { return s->mode; }
const char *ds_stage_dir_path(const ds_stage *s) { return s->dir; }

static int is_old(const ds_stage *s, const char *path);

int ds_stage_check_absent(const ds_stage *s, const char *path, char **err) {
  ds_vfs_info st;
  if (s->mode == DS_STAGE_CREATE && s->pub) s->pub->forget(path); /* asked anew */
  if (s->mode == DS_STAGE_CREATE && ds_vfs_lstat(path, &st) == 0 && !is_old(s, path))
    return ds_err(err, "%s: already exists (mode=create never overwrites; "
                       "use mode=replace)",
                  path);
  return 0;
}

void ds_stage_set_own(ds_stage *s, int (*own)(const char *path, char **err)) {
  s->own = own;
}

/* What is at a path, for messages. */
static const char *kind_of(ds_vfs_kind k) {
  return k == DS_VFS_DIR ? "a directory" : k == DS_VFS_FIFO ? "a FIFO"
       : k == DS_VFS_SOCKET ? "a socket"
       : k == DS_VFS_CHAR || k == DS_VFS_BLOCK ? "a device"
       : k == DS_VFS_LINK ? "a dangling symbolic link" : "something else";
}

/* An existing `path` may be replaced: a directory dataset's check (own),
 * else a regular file (or a symbolic link to one: the link is replaced). */
static int check_own(const ds_stage *s, const char *path, char **err) {
  ds_vfs_info st;
  if (ds_vfs_lstat(path, &st) != 0) return 0;
  if (s->own) return s->own(path, err);
  if (ds_vfs_stat(path, &st) == 0 && st.kind == DS_VFS_FILE) return 0;
  if (ds_vfs_stat(path, &st) != 0) ds_vfs_lstat(path, &st);
  return ds_err(err, "%s: %s is there, not a file of this dataset (mode=replace "
                     "replaces only the dataset's own files; move it away first)",
                path, kind_of(st.kind));
}

/* Add `path` to the old dataset's paths (no check). */
static int add_old(ds_stage *s, const char *path, int first, char **err) {
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

/* 1 when path is one of the old dataset's. */
static int is_old(const ds_stage *s, const char *path) {
  for (size_t i = 0; i < s->nolds; i++)
    if (strcmp(s->olds[i].path, path) == 0) return 1;
  return 0;
}

int ds_stage_obsolete(ds_stage *s, const char *path, int first, char **err) {
  if (!is_old(s, path) && check_own(s, path, err)) return -1;
  return add_old(s, path, first, err);
}

int ds_stage_claim(ds_stage *s, const char *path, int first, char **err) {
  ds_vfs_info st;
  if (s->mode == DS_STAGE_CREATE) return ds_stage_check_absent(s, path, err);
  return ds_vfs_lstat(path, &st) == 0 ? ds_stage_obsolete(s, path, first, err) : 0;
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
  int fd = f ? ds_vfs_open_fd(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC) : -1;
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

void ds_stage_expect(ds_stage *s, ds_afile *f, const char *final_path) {
  if (!s->pub) { /* fsynced at commit: start its disk writes as it grows */
    f->writeback = 1;
    return;
  }
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *t = &s->tmps[i];
    if (t->file != f) continue;
    ds_early_free(t->early);
    t->early = ds_early_new(s->pub, s->has_ropts ? &s->ropts : NULL, t->file, final_path);
    return;
  }
}

int ds_stage_dir(ds_stage *s, const char *label, const char **out, char **err) {
  stage_tmp *t = new_tmp(s, label, err);
  if (!t) return -1;
  if (ds_vfs_mkdir(t->path) != 0) {
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

static int sync_tree(const char *dir, char **err);

/* ds_vfs_entry_fn of sync_tree: a folder's tree, a file (others: none). */
static int sync_entry(void *ctx, const char *p, const char *name, const ds_vfs_info *st,
                      char **err) {
  (void)ctx;
  (void)name;
  if (st && st->kind == DS_VFS_DIR) return sync_tree(p, err);
  if (st && st->kind == DS_VFS_FILE) return ds_fsync_path(p, err);
  return 0;
}

/* fsync every file and directory below (and including) dir. */
static int sync_tree(const char *dir, char **err) {
  int rc = ds_vfs_each(dir, sync_entry, NULL, err);
  return rc ? rc : ds_fsync_path(dir, err);
}

/* flush and fsync every temporary to be published. A remote target's
 * temporaries are only flushed: they are uploaded from the page cache,
 * and after a crash nothing is published from them (the next writer
 * deletes them; what must last is the server's copy), so an fsync would
 * only wait for the disk. */
static int sync_temporaries(ds_stage *s, char **err) {
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *t = &s->tmps[i];
    if (!t->final) continue; /* scratch: never published */
    if (s->pub) {
      if (t->file && t->file->fd >= 0 && ds_afile_flush(t->file, err)) return -1;
      continue;
    }
    if (t->file && t->file->fd < 0) { /* parked (ds_stage_park): flushed */
      if (ds_fsync_path(t->path, err)) return -1;
    } else if (t->file) {
      if (ds_afile_flush(t->file, err)) return -1;
      if (ds_vfs_fsync_fd(t->file->fd) != 0)
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

/* Undo a prepare: the journal's new files back to their temporary names,
 * the old files back, the journal deleted. */
static int unprepare(ds_stage *s, char **err) {
  int rc = 0;
  if (s->rpub) {
    const ds_vfs_remote_opts *was = use_ropts(s);
    ds_rpub_free(s->rpub); /* a remote target's uploads: aborted */
    ds_vfs_remote_use(was);
    s->rpub = NULL;
  }
  if (s->journaled) {
    rc = ds_journal_undo(&s->j, s->dir, err);
    if (rc == 0) ds_vfs_remove(s->journal_path); /* else the next writer retries */
  }
  ds_journal_free(&s->j); /* also a journal half built */
  s->journaled = s->prepared = 0;
  return rc;
}

/* The checks of a final path at prepare: mode=create, nothing there (the
 * writer's own earlier publish aside); mode=replace, only what the format
 * owns, which then joins the old dataset. */
static int check_final(ds_stage *s, const char *path, int commit, int there, char **err) {
  if (!there) return 0;
  if (is_old(s, path)) return check_own(s, path, err);
  if (s->mode == DS_STAGE_CREATE)
    return ds_err(err, "%s: appeared after CREATE (mode=create never "
                       "overwrites: nothing was published)",
                  path);
  return check_own(s, path, err) || add_old(s, path, commit, err) ? -1 : 0;
}

/* Whether something is at each final path (asked of all at once). */
typedef struct finals_probe {
  const ds_stage *s;
  const size_t *order;
  int *there;
} finals_probe;

/* ds_task_fn: is something at the k-th final path? Asked anew: no
 * cached answer decides. */
static void probe_final(void *ctx, size_t k) {
  finals_probe *x = ctx;
  const char *path = x->s->tmps[x->order[k]].final;
  ds_vfs_info st;
  if (x->s->pub) x->s->pub->forget(path);
  x->there[k] = ds_vfs_lstat(path, &st) == 0;
}

/* The journal of a multi-file publish: every old file that exists, each
 * new file, the commit point. */
static int build_journal(ds_stage *s, const size_t *order, size_t nf, char **err) {
  long pid = (long)getpid();
  for (int pass = 0; pass < 2; pass++) /* the old commit point first */
    for (size_t i = 0; i < s->nolds; i++) {
      ds_vfs_info st;
      if ((s->olds[i].first ? 0 : 1) != pass || ds_vfs_lstat(s->olds[i].path, &st) != 0) continue;
      char what[64];
      snprintf(what, sizeof what, "ds-old.%ld.%zu", pid, i);
      char *other = ds_strf(".%s.%s", s->key, what);
      int rc = other ? ds_journal_add(&s->j, 'o', ds_basename(s->olds[i].path), other, &st, err)
                     : ds_err(err, "out of memory");
      free(other);
      if (rc) return -1;
    }
  for (size_t k = 0; k < nf; k++) {
    stage_tmp *t = &s->tmps[order[k]];
    ds_vfs_info st;
    if (ds_vfs_lstat(t->path, &st) != 0)
      return ds_err(err, "%s: cannot stat: %s", t->path, strerror(errno));
    if (ds_journal_add(&s->j, k + 1 == nf ? 'c' : 'n', ds_basename(t->final),
                       ds_basename(t->path), &st, err))
      return -1;
  }
  char what[64];
  snprintf(what, sizeof what, "ds-tmp.%ld.%llu.journal", pid, (unsigned long long)s->seq++);
  char *tmp = stage_name(s->dir, s->key, what);
  int rc = tmp ? ds_journal_write(&s->j, s->dir, tmp, s->journal_path, err)
               : ds_err(err, "out of memory");
  free(tmp);
  return rc;
}

/* dir/name (malloc'd). */
static char *in_dir(const ds_stage *s, const char *name) { return ds_path_join(s->dir, name); }

/* Prepare a remote target's publish: upload every final (stage_remote.h). */
static int remote_prepare(ds_stage *s, const size_t *order, size_t nf, char **err) {
  ds_rpub_item *it = calloc(nf, sizeof *it);
  char **olds = calloc(s->nolds + 1, sizeof *olds);
  int rc = it && olds ? 0 : ds_err(err, "out of memory");
  for (size_t k = 0; k < nf && rc == 0; k++) {
    stage_tmp *t = &s->tmps[order[k]];
    it[k] = (ds_rpub_item){t->path, t->file == NULL, t->final, ds_early_take(t->early, t->final)};
  }
  for (size_t i = 0; i < s->nolds && rc == 0; i++) olds[i] = s->olds[i].path;
  if (rc == 0) {
    const ds_vfs_remote_opts *was = use_ropts(s);
    rc = ds_rpub_prepare(s->pub, it, nf, olds, s->nolds, s->mode == DS_STAGE_CREATE,
                         &s->rpub, err);
    ds_vfs_remote_use(was);
  }
  free(it);
  free(olds);
  return rc;
}

int ds_stage_sync(ds_stage *s, char **err) {
  if (s->prepared && unprepare(s, err)) return -1;
  if (sync_temporaries(s, err)) return -1;
  size_t nf = 0;
  size_t *order = malloc((s->ntmps + 1) * sizeof *order);
  if (!order) return ds_err(err, "out of memory");
  for (size_t i = 0; i < s->ntmps; i++)
    if (s->tmps[i].final) order[nf++] = i;
  qsort_r(order, nf, sizeof *order, by_order, s->tmps);
  int rc = 0;
  /* 1. what is at the final names and the old ones may be replaced (on
   *    object storage every name asked at once: one round trip) */
  int *there = calloc(nf + 1, sizeof *there);
  if (!there) rc = ds_err(err, "out of memory");
  finals_probe fp = {s, order, there};
  if (rc == 0 && s->pub) ds_parallel(nf, probe_final, &fp);
  for (size_t k = 0; k < nf && rc == 0; k++) {
    if (!s->pub) probe_final(&fp, k);
    rc = check_final(s, s->tmps[order[k]].final, k + 1 == nf, there[k], err);
  }
  free(there);
  for (size_t i = 0; i < s->nolds && rc == 0; i++) rc = check_own(s, s->olds[i].path, err);
  if (rc || nf == 0) {
    free(order);
    s->prepared = rc == 0;
    return rc;
  }
  s->commit = order[nf - 1];
  if (s->pub) {
    rc = remote_prepare(s, order, nf, err);
    free(order);
    s->prepared = rc == 0;
    return rc;
  }
  const char *cp = s->tmps[s->commit].final;
  int single = nf == 1;
  for (size_t i = 0; i < s->nolds && single; i++)
    single = strcmp(s->olds[i].path, cp) == 0 || !ds_path_exists(s->olds[i].path, NULL);
  if (single) { /* one rename at commit does it all */
    ds_vfs_info st;
    s->commit_over = ds_vfs_lstat(cp, &st) == 0;
    s->prepared = 1;
    free(order);
    return 0;
  }
  /* 2. the journal, durable before any final name changes */
  rc = build_journal(s, order, nf, err);
  if (rc == 0) s->journaled = 1;
  /* 3. the old files move away (commit point first): from here on no
   *    reader finds the old dataset, nor yet the new one */
  for (size_t i = 0; i < s->j.n && rc == 0; i++) {
    const ds_jentry *e = &s->j.e[i];
    if (e->kind != 'o') continue;
    char *from = in_dir(s, e->name), *to = in_dir(s, e->other);
    if (!from || !to) rc = ds_err(err, "out of memory");
    else if (ds_vfs_rename(from, to, DS_VFS_NOREPLACE) != 0 && errno != ENOENT)
      rc = ds_err(err, "%s: cannot move the old file away to %s: %s", from, to,
                  strerror(errno));
    free(from);
    free(to);
  }
  /* 4. the new files but the commit point, never over anything */
  for (size_t k = 0; k + 1 < nf && rc == 0; k++) {
    stage_tmp *t = &s->tmps[order[k]];
    if (ds_vfs_rename(t->path, t->final, DS_VFS_NOREPLACE) != 0)
      rc = ds_err(err, "%s: cannot publish %s: %s%s", t->final, t->path, strerror(errno),
                  errno == EEXIST ? " (it appeared while the old files were "
                                    "moved away: nothing was replaced)" : "");
  }
  if (rc == 0) rc = ds_fsync_path(s->dir, err);
  free(order);
  if (rc) {
    unprepare(s, NULL);
    return -1;
  }
  s->prepared = 1;
  return 0;
}

/* The commit step: one rename of the commit point. */
static int commit_rename(ds_stage *s, stage_tmp *t, int *exchanged) {
  *exchanged = 0;
  if (!s->journaled && s->commit_over) {
    if (!t->file) { /* a directory replaces a directory */
      if (ds_vfs_rename(t->path, t->final, DS_VFS_EXCHANGE) == 0) {
        *exchanged = 1;
        return 0;
      }
      if (errno != ENOENT) return -1; /* gone since prepare: create it */
    } else { /* the replaced file is freed at the close of old, later
                (a regular file's only: opening a device can act on it) */
      ds_vfs_info st;
      int old = ds_vfs_lstat(t->final, &st) == 0 && st.kind == DS_VFS_FILE
                    ? ds_vfs_open_fd(t->final, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
                    : -1;
      int rc = ds_vfs_rename(t->path, t->final, DS_VFS_REPLACE);
      if (rc == 0) ds_close_later_add(&s->later, old);
      else if (old >= 0) close(old);
      return rc;
    }
  }
  return ds_vfs_rename(t->path, t->final, DS_VFS_NOREPLACE);
}

int ds_stage_publish(ds_stage *s, char **err) {
  if (!s->prepared && ds_stage_sync(s, err)) return -1;
  size_t nf = 0;
  for (size_t i = 0; i < s->ntmps; i++) nf += s->tmps[i].final != NULL;
  if (nf == 0) {
    s->prepared = 0;
    ds_stage_discard(s);
    return 0;
  }
  stage_tmp *t = &s->tmps[s->commit];
  int exchanged = 0;
  if (s->pub) {
    const ds_vfs_remote_opts *was = use_ropts(s);
    int bad = ds_rpub_commit(s->rpub, err);
    ds_vfs_remote_use(was);
    if (bad) {
      unprepare(s, NULL); /* the uploads left: aborted */
      return -1;
    }
  }
  if (!s->pub && commit_rename(s, t, &exchanged) != 0) {
    int e = errno;
    char *u = NULL;
    unprepare(s, &u); /* the old dataset back, the new files at their
                       * temporary names */
    s->kept = 1;
    ds_err(err, "%s: COMMIT could not publish the new dataset: %s; nothing "
                "was replaced%s, and the new files are kept as %s/.%s.ds-tmp.%ld.* "
                "(until the next writer of this dataset opens it)%s%s",
           t->final, strerror(e), u ? "" : " (the old dataset is as it was)", s->dir,
           s->key, (long)getpid(), u ? "; " : "", u ? u : "");
    free(u);
    return -1;
  }
  /* published: nothing below undoes it */
  int rc = 0;
  if (s->pub) {
    ds_rpub_free(s->rpub); /* all completed: nothing to abort */
    s->rpub = NULL;
  } else if (ds_fsync_path(s->dir, err)) {
    ds_err_prefix(err, "COMMIT published the new dataset, but it may not be durable");
    rc = 1;
  }
  if (s->journaled) {
    ds_journal_finish(&s->j, s->dir, &s->later);
    ds_vfs_remove(s->journal_path); /* the next writer finishes what fails here */
    ds_journal_free(&s->j);
    s->journaled = 0;
  }
  if (exchanged) ds_remove_tree(t->path, NULL); /* the old tree */
  s->prepared = 0;
  /* the published files are what the next version replaces */
  for (size_t i = 0; i < s->nolds; i++) free(s->olds[i].path);
  s->nolds = 0;
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *x = &s->tmps[i];
    if (x->final && add_old(s, x->final, i == s->commit, err) && rc == 0) rc = 1;
    free(x->final);
    x->final = NULL;
  }
  ds_stage_discard(s);
  ds_close_later_start(&s->later);
  return rc;
}

void ds_stage_discard(ds_stage *s) {
  if (s->prepared) unprepare(s, NULL);
  for (size_t i = 0; i < s->ntmps; i++) {
    stage_tmp *t = &s->tmps[i];
    ds_early_free(t->early); /* an upload not taken by a prepare: aborted */
    t->early = NULL;
    if (t->file) {
      if (t->file->fd >= 0) close(t->file->fd);
      free(t->file->buf);
      free(t->file);
    }
    if (!s->kept) ds_remove_tree(t->path, NULL);
    free(t->path);
    free(t->final);
  }
  s->ntmps = 0;
  s->nfinal = 0;
  s->kept = 0;
}

int ds_stage_park(ds_afile *f, char **err) {
  if (f->fd < 0) return 0;
  if (ds_afile_flush(f, err)) return -1;
  close(f->fd);
  f->fd = -1;
  return 0;
}

int ds_stage_unpark(ds_afile *f, char **err) {
  if (f->fd >= 0) return 0;
  int fd = ds_vfs_open_fd(f->path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return ds_err(err, "%s: cannot open again: %s", f->path, strerror(errno));
  if (lseek(fd, (off_t)(f->size - f->nbuf), SEEK_SET) < 0) {
    close(fd);
    return ds_err(err, "%s: cannot seek: %s", f->path, strerror(errno));
  }
  f->fd = fd;
  return 0;
}
