/* vfs_local.c - the local file system behind the seam (vfs.h): the one
 * file of the readers and writers that calls open, openat, stat, glob,
 * opendir, rename, unlink, mkdir, fsync, pread, ... itself. It calls the
 * same libc functions the code called before the seam, so the test shims
 * that intercept them (tests/shims) still see every call. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vfs.h"

/* The folder descriptor a path is relative to. */
static int at_fd(const ds_vfs_dir *at) { return at && at->be ? at->fd : AT_FDCWD; }

/* struct stat as the seam's stat. */
static void from_stat(const struct stat *s, ds_vfs_info *st) {
  mode_t m = s->st_mode;
  st->kind = S_ISREG(m)    ? DS_VFS_FILE
             : S_ISDIR(m)  ? DS_VFS_DIR
             : S_ISLNK(m)  ? DS_VFS_LINK
             : S_ISFIFO(m) ? DS_VFS_FIFO
             : S_ISCHR(m)  ? DS_VFS_CHAR
             : S_ISBLK(m)  ? DS_VFS_BLOCK
             : S_ISSOCK(m) ? DS_VFS_SOCKET
                           : DS_VFS_OTHER;
  st->size = (uint64_t)s->st_size;
  st->dev = (uint64_t)s->st_dev;
  st->ino = (uint64_t)s->st_ino;
  st->mtime_ns = (int64_t)s->st_mtim.tv_sec * 1000000000 + s->st_mtim.tv_nsec;
}

/* Open for reading; O_NONBLOCK: a FIFO must not wait for a writer. */
static int local_open(const ds_vfs_dir *at, const char *path, ds_vfs_file *f) {
  int fd = openat(at_fd(at), path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  struct stat s;
  if (fstat(fd, &s) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  from_stat(&s, &f->st);
  f->fd = fd;
  return 0;
}

/* pread(2), retried on EINTR. */
static ssize_t local_pread(const ds_vfs_file *f, void *buf, size_t n, uint64_t off) {
  ssize_t r;
  do r = pread(f->fd, buf, n, (off_t)off);
  while (r < 0 && errno == EINTR);
  return r;
}

/* fstat(2) of the open file. */
static int local_restat(const ds_vfs_file *f, ds_vfs_info *st) {
  return ds_vfs_stat_fd(f->fd, st);
}

static void local_close(ds_vfs_file *f) {
  if (f->fd >= 0) close(f->fd);
}

/* stat(2) / lstat(2), or fstatat(2) under a folder. */
static int local_stat(const ds_vfs_dir *at, const char *path, int follow, ds_vfs_info *st) {
  struct stat s;
  int rc = at && at->be ? fstatat(at->fd, path, &s, follow ? 0 : AT_SYMLINK_NOFOLLOW)
           : follow     ? stat(path, &s)
                        : lstat(path, &s);
  if (rc != 0) {
    memset(st, 0, sizeof *st);
    return -1;
  }
  from_stat(&s, st);
  return 0;
}

static int local_exists(const char *path) { return access(path, F_OK) == 0; }

static int local_dir_open(const char *path, ds_vfs_dir *d) {
  d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return d->fd < 0 ? -1 : 0;
}

static void local_dir_close(ds_vfs_dir *d) {
  if (d->fd >= 0) close(d->fd);
}

static int local_dir_stat(const ds_vfs_dir *d, ds_vfs_info *st) {
  return ds_vfs_stat_fd(d->fd, st);
}

/* A listing: the seam's header, then readdir's stream. */
typedef struct local_list {
  ds_vfs_list base;
  DIR *d;
} local_list;

static ds_vfs_list *local_list_open(const ds_vfs_dir *at, const char *path) {
  DIR *d;
  if (at && at->be) {
    int dfd = openat(at->fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d && dfd >= 0) {
      int e = errno;
      close(dfd);
      errno = e;
    }
  } else {
    d = opendir(path);
  }
  if (!d) return NULL;
  local_list *l = malloc(sizeof *l);
  if (!l) {
    closedir(d);
    errno = ENOMEM;
    return NULL;
  }
  l->base.be = &ds_vfs_local;
  l->d = d;
  return &l->base;
}

static const char *local_list_next(ds_vfs_list *l) {
  struct dirent *e;
  while ((e = readdir(((local_list *)l)->d)) != NULL)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) return e->d_name;
  return NULL;
}

static void local_list_close(ds_vfs_list *l) {
  closedir(((local_list *)l)->d);
  free(l);
}

/* glob(3) into out: its paths copied (sorted unless DS_VFS_GLOB_NOSORT). */
static int local_glob(const char *pattern, int flags, ds_vfs_names *out) {
  glob_t g;
  memset(&g, 0, sizeof g);
  int rc = glob(pattern, flags & DS_VFS_GLOB_NOSORT ? GLOB_NOSORT : 0, NULL, &g);
  if (rc == GLOB_NOMATCH || (rc == 0 && g.gl_pathc == 0)) {
    if (rc == 0) globfree(&g);
    return DS_VFS_NOMATCH;
  }
  if (rc != 0) { /* a read error, or out of memory inside glob */
    errno = EIO;
    return -1;
  }
  out->v = calloc(g.gl_pathc, sizeof *out->v);
  for (size_t i = 0; out->v && i < g.gl_pathc; i++, out->n++)
    if (!(out->v[i] = strdup(g.gl_pathv[i]))) break;
  int ok = out->v && out->n == g.gl_pathc;
  globfree(&g);
  if (!ok) {
    ds_vfs_names_free(out);
    errno = ENOMEM;
    return -1;
  }
  return 0;
}

/* RENAME_NOREPLACE, or where the file system cannot: link refuses an
 * existing name too; a directory cannot be linked: checked, then renamed
 * (a race with another program remains there, on such file systems
 * only). */
static int rename_noreplace(const char *from, const char *to) {
  if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return -1;
  struct stat st;
  if (lstat(from, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (lstat(to, &st) == 0) {
      errno = EEXIST;
      return -1;
    }
    return rename(from, to);
  }
  if (link(from, to) != 0) return -1;
  if (unlink(from) != 0) {
    int e = errno;
    unlink(to);
    errno = e;
    return -1;
  }
  return 0;
}

static int local_rename(const char *from, const char *to, ds_vfs_rename_how how) {
  if (how == DS_VFS_NOREPLACE) return rename_noreplace(from, to);
  if (how == DS_VFS_EXCHANGE) return renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
  return rename(from, to);
}

static int local_remove(const char *path) { return unlink(path); }
static int local_rmdir(const char *path) { return rmdir(path); }
static int local_mkdir(const char *path) { return mkdir(path, 0755); }
static int local_truncate(const char *path, uint64_t size) {
  return truncate(path, (off_t)size);
}

const ds_vfs_backend ds_vfs_local = {
    .scheme = "",
    .open = local_open,
    .pread = local_pread,
    .restat = local_restat,
    .close = local_close,
    .stat = local_stat,
    .exists = local_exists,
    .dir_open = local_dir_open,
    .dir_close = local_dir_close,
    .dir_stat = local_dir_stat,
    .list_open = local_list_open,
    .list_next = local_list_next,
    .list_close = local_list_close,
    .glob = local_glob,
    .rename = local_rename,
    .remove = local_remove,
    .rmdir = local_rmdir,
    .mkdir = local_mkdir,
    .truncate = local_truncate,
};

/* -- writers' descriptors (local files only) -- */

int ds_vfs_open_fd(const char *path, int oflags) { return open(path, oflags, 0644); }

void ds_vfs_close_fd(int fd) {
  if (fd >= 0) close(fd);
}

int ds_vfs_stat_fd(int fd, ds_vfs_info *st) {
  struct stat s;
  if (fstat(fd, &s) != 0) {
    memset(st, 0, sizeof *st);
    return -1;
  }
  from_stat(&s, st);
  return 0;
}

int ds_vfs_fsync_fd(int fd) { return fsync(fd); }

ssize_t ds_vfs_pread_fd(int fd, void *buf, size_t n, uint64_t off) {
  return pread(fd, buf, n, (off_t)off);
}

int ds_vfs_touch_fd(int fd) { return futimens(fd, NULL); }
