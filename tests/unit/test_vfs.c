/* test_vfs.c - core/vfs.c and core/vfs_local.c, the file-system seam and
 * its local backend: the backend a path picks, path-spec prefixes, open
 * with pread, size and identity (and what changes it), folders held open
 * while replaced, listings, patterns, the writers' steps (create, rename
 * with and without replacing, exchange, remove, mkdir, truncate, fsync)
 * and the trees built on them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/vfs.h"

static char tmp[64];

/* tmp/name in one of four buffers. */
static const char *at(int slot, const char *name) {
  static char buf[4][256];
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmp, name);
  return buf[slot];
}

/* Write text as the whole of path. */
static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The path's text, read through the seam (static buffer; "" on error). */
static const char *text_of(const ds_vfs_dir *dir, const char *path) {
  static char buf[256];
  ds_vfs_file f;
  buf[0] = 0;
  if (ds_vfs_open(&f, dir, path) != 0) return buf;
  ssize_t n = ds_vfs_pread(&f, buf, sizeof buf - 1, 0);
  buf[n > 0 ? n : 0] = 0;
  ds_vfs_close(&f);
  return buf;
}

static void test_schemes(void) {
  CHECK(ds_vfs_backend_for("a/b.bag") == &ds_vfs_local);
  CHECK(ds_vfs_backend_for("/abs/x") == &ds_vfs_local);
  /* the remote backends (remote/vfs_remote.c), any case; an unknown
   * scheme stays a local path, as before the seam */
  CHECK(ds_vfs_backend_for("s3://bucket/key") == &ds_vfs_s3);
  CHECK(ds_vfs_backend_for("GS://bucket/key") == &ds_vfs_gs);
  CHECK(ds_vfs_backend_for("https://h/x") == &ds_vfs_https);
  CHECK(ds_vfs_backend_for("http://h/x") == &ds_vfs_http);
  CHECK(ds_vfs_backend_for("hdfs://bucket/key") == &ds_vfs_local);
  const char *rest;
  size_t n = 99;
  CHECK(ds_vfs_split_prefix("posix:a/b", &rest, &n) == 0 && !strcmp(rest, "a/b") && n == 0);
  CHECK(ds_vfs_split_prefix("/posix:/x", &rest, &n) == 0 && !strcmp(rest, "/x"));
  CHECK(ds_vfs_split_prefix(":x", &rest, &n) == 0 && !strcmp(rest, "x"));
  CHECK(ds_vfs_split_prefix("gs:x", &rest, &n) == 1 && n == 2 && !strcmp(rest, "gs:x"));
  CHECK(ds_vfs_split_prefix("dir/a:b", &rest, &n) == 0 && !strcmp(rest, "dir/a:b"));
  CHECK(ds_vfs_split_prefix("plain", &rest, &n) == 0 && !strcmp(rest, "plain") && n == 0);
  CHECK(ds_vfs_posix_prefix("posix:x") == 6 && ds_vfs_posix_prefix("posixx") == 0);
  CHECK(ds_vfs_has_scheme("gs:b", 4) && !ds_vfs_has_scheme("c:b", 3) &&
        !ds_vfs_has_scheme("gs", 2));
}

static void test_open_read_identity(void) {
  put(at(0, "f"), "0123456789");
  ds_vfs_file f;
  CHECK(ds_vfs_open(&f, NULL, at(0, "f")) == 0);
  CHECK(f.st.kind == DS_VFS_FILE && f.st.size == 10);
  char b[16] = {0};
  CHECK(ds_vfs_pread(&f, b, 4, 3) == 4 && memcmp(b, "3456", 4) == 0);
  CHECK(ds_vfs_pread(&f, b, 16, 8) == 2 && memcmp(b, "89", 2) == 0);
  CHECK(ds_vfs_pread(&f, b, 4, 10) == 0); /* at the end */
  struct stat raw;
  CHECK(stat(at(0, "f"), &raw) == 0 && f.st.ino == (uint64_t)raw.st_ino &&
        f.st.dev == (uint64_t)raw.st_dev);
  /* a truncate shows in restat; a replace in the path's identity */
  CHECK(truncate(at(0, "f"), 5) == 0);
  ds_vfs_info now;
  CHECK(ds_vfs_restat(&f, &now) == 0 && now.size == 5 && now.ino == f.st.ino);
  put(at(1, "g"), "new file");
  CHECK(rename(at(1, "g"), at(0, "f")) == 0);
  CHECK(ds_vfs_stat(at(0, "f"), &now) == 0 && now.ino != f.st.ino && now.size == 8);
  CHECK(ds_vfs_pread(&f, b, 5, 0) == 5 && memcmp(b, "01234", 5) == 0); /* still the old one */
  ds_vfs_close(&f);
  CHECK(f.be == NULL);
  ds_vfs_close(&f); /* twice is fine */
  errno = 0;
  CHECK(ds_vfs_open(&f, NULL, at(0, "missing")) == -1 && errno == ENOENT && f.be == NULL);
  CHECK(ds_vfs_file_size(at(0, "f")) == 8 && ds_vfs_file_size(tmp) == 0 &&
        ds_vfs_file_size(at(0, "missing")) == 0);
}

static void test_kinds(void) {
  ds_vfs_info st;
  ds_vfs_file f;
  /* a FIFO opens without waiting for a writer, and says what it is */
  CHECK(mkfifo(at(0, "fifo"), 0644) == 0);
  CHECK(ds_vfs_open(&f, NULL, at(0, "fifo")) == 0 && f.st.kind == DS_VFS_FIFO);
  ds_vfs_close(&f);
  CHECK(ds_vfs_open(&f, NULL, tmp) == 0 && f.st.kind == DS_VFS_DIR);
  ds_vfs_close(&f);
  put(at(0, "target"), "t");
  CHECK(symlink("target", at(0, "link")) == 0 && symlink("nothing", at(1, "dangling")) == 0);
  CHECK(ds_vfs_stat(at(0, "link"), &st) == 0 && st.kind == DS_VFS_FILE);
  CHECK(ds_vfs_lstat(at(0, "link"), &st) == 0 && st.kind == DS_VFS_LINK);
  errno = 0;
  CHECK(ds_vfs_stat(at(0, "dangling"), &st) == -1 && errno == ENOENT &&
        st.kind == DS_VFS_MISSING);
  CHECK(ds_vfs_lstat(at(0, "dangling"), &st) == 0 && st.kind == DS_VFS_LINK);
  CHECK(ds_vfs_exists(at(0, "link")) && !ds_vfs_exists(at(1, "dangling")));
  int is_dir = -1;
  CHECK(ds_path_exists(tmp, &is_dir) && is_dir == 1);
  CHECK(ds_path_exists(at(0, "target"), &is_dir) && is_dir == 0);
  CHECK(!ds_path_exists(at(0, "nothing"), NULL));
}

/* 1 when the listing of path (under dir) is exactly names (any order). */
static int lists(const ds_vfs_dir *dir, const char *path, const char *const *names, size_t n) {
  ds_vfs_list *l = ds_vfs_list_open(dir, path);
  if (!l) return 0;
  size_t seen = 0, bad = 0;
  for (const char *e; (e = ds_vfs_list_next(l)) != NULL;) {
    size_t i = 0;
    while (i < n && strcmp(names[i], e)) i++;
    if (i == n) {
      check_note("    unexpected entry %s\n", e);
      bad++;
    }
    seen++;
  }
  ds_vfs_list_close(l);
  return !bad && seen == n;
}

static void test_folders(void) {
  CHECK(mkdir(at(0, "d"), 0755) == 0 && mkdir(at(0, "d/sub"), 0755) == 0);
  put(at(0, "d/a"), "old a");
  put(at(0, "d/sub/b"), "old b");
  static const char *const top[] = {"a", "sub"}, *const sub[] = {"b"};
  CHECK(lists(NULL, at(0, "d"), top, 2));
  ds_vfs_dir d;
  CHECK(ds_vfs_dir_open(&d, at(0, "d")) == 0 && d.be == &ds_vfs_local);
  ds_vfs_info st, raw;
  CHECK(ds_vfs_dir_stat(&d, &st) == 0 && st.kind == DS_VFS_DIR);
  /* another program replaces the folder: what we hold stays readable */
  CHECK(rename(at(0, "d"), at(1, "d.old")) == 0 && mkdir(at(0, "d"), 0755) == 0);
  put(at(0, "d/a"), "new a");
  CHECK(ds_vfs_stat(at(0, "d"), &raw) == 0 && raw.ino != st.ino);
  CHECK_STR(text_of(&d, "a"), "old a");
  CHECK_STR(text_of(NULL, at(0, "d/a")), "new a");
  CHECK(ds_vfs_stat_at(&d, "sub", &st) == 0 && st.kind == DS_VFS_DIR);
  CHECK(ds_vfs_stat_at(&d, "sub/b", &st) == 0 && st.kind == DS_VFS_FILE && st.size == 5);
  CHECK(lists(&d, "sub", sub, 1));
  errno = 0;
  CHECK(ds_vfs_list_open(&d, "none") == NULL && errno == ENOENT);
  ds_vfs_dir_close(&d);
  CHECK(d.be == NULL);
  ds_vfs_dir bad;
  errno = 0;
  CHECK(ds_vfs_dir_open(&bad, at(0, "d/a")) == -1 && errno == ENOTDIR && bad.be == NULL);
  errno = 0;
  CHECK(ds_vfs_list_open(NULL, at(0, "none")) == NULL && errno == ENOENT);
  static const char *const none[] = {NULL};
  CHECK(mkdir(at(0, "empty"), 0755) == 0 && lists(NULL, at(0, "empty"), none, 0));
}

static void test_glob(void) {
  CHECK(mkdir(at(0, "g"), 0755) == 0);
  put(at(0, "g/x-2.bag"), "");
  put(at(0, "g/x-10.bag"), "");
  put(at(0, "g/x-1.bag"), "");
  put(at(0, "g/y.bag"), "");
  ds_vfs_names n;
  CHECK(ds_vfs_glob(at(0, "g/x-*.bag"), 0, &n) == 0 && n.n == 3);
  CHECK(n.n == 3 && !strcmp(n.v[0], at(0, "g/x-1.bag")) && !strcmp(n.v[1], at(1, "g/x-10.bag")) &&
        !strcmp(n.v[2], at(2, "g/x-2.bag")));
  ds_vfs_names_free(&n);
  CHECK(n.v == NULL && n.n == 0);
  CHECK(ds_vfs_glob(at(0, "g/*.bag"), DS_VFS_GLOB_NOSORT, &n) == 0 && n.n == 4);
  ds_vfs_names_free(&n);
  CHECK(ds_vfs_glob(at(0, "g/z*"), 0, &n) == DS_VFS_NOMATCH && n.n == 0 && n.v == NULL);
  /* a pattern without metacharacters matches the file that exists */
  CHECK(ds_vfs_glob(at(0, "g/y.bag"), 0, &n) == 0 && n.n == 1);
  ds_vfs_names_free(&n);
}

static void test_writers(void) {
  char *err = NULL;
  struct stat raw;
  CHECK(ds_vfs_mkdir(at(0, "w")) == 0);
  errno = 0;
  CHECK(ds_vfs_mkdir(at(0, "w")) == -1 && errno == EEXIST);
  int fd = ds_vfs_open_fd(at(0, "w/a"), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC);
  CHECK(fd >= 0 && write(fd, "hello", 5) == 5 && ds_vfs_fsync_fd(fd) == 0);
  ds_vfs_info st;
  CHECK(ds_vfs_stat_fd(fd, &st) == 0 && st.kind == DS_VFS_FILE && st.size == 5);
  char b[8] = {0};
  CHECK(ds_vfs_pread_fd(fd, b, 3, 1) == 3 && memcmp(b, "ell", 3) == 0);
  ds_vfs_close_fd(fd);
  errno = 0;
  CHECK(ds_vfs_open_fd(at(0, "w/a"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC) == -1 &&
        errno == EEXIST);
  mode_t mask = umask(022);
  umask(mask);
  CHECK(stat(at(0, "w/a"), &raw) == 0 && (raw.st_mode & 0777) == (0644 & ~mask));
  put(at(0, "w/b"), "bee");
  /* NOREPLACE refuses an existing target and leaves both */
  errno = 0;
  CHECK(ds_vfs_rename(at(0, "w/a"), at(1, "w/b"), DS_VFS_NOREPLACE) == -1 && errno == EEXIST);
  CHECK_STR(text_of(NULL, at(0, "w/b")), "bee");
  CHECK_STR(text_of(NULL, at(0, "w/a")), "hello");
  CHECK(ds_vfs_rename(at(0, "w/a"), at(1, "w/c"), DS_VFS_NOREPLACE) == 0 &&
        !ds_vfs_exists(at(0, "w/a")));
  CHECK(ds_vfs_rename(at(0, "w/c"), at(1, "w/b"), DS_VFS_EXCHANGE) == 0);
  CHECK_STR(text_of(NULL, at(0, "w/b")), "hello");
  CHECK_STR(text_of(NULL, at(0, "w/c")), "bee");
  CHECK(ds_vfs_rename(at(0, "w/c"), at(1, "w/b"), DS_VFS_REPLACE) == 0);
  CHECK_STR(text_of(NULL, at(0, "w/b")), "bee");
  CHECK(ds_vfs_truncate(at(0, "w/b"), 1) == 0 && ds_vfs_file_size(at(0, "w/b")) == 1);
  CHECK(ds_vfs_remove(at(0, "w/b")) == 0 && !ds_vfs_exists(at(0, "w/b")));
  errno = 0;
  CHECK(ds_vfs_remove(at(0, "w/b")) == -1 && errno == ENOENT);
  CHECK(ds_vfs_mkdir(at(0, "w/e")) == 0 && ds_vfs_rmdir(at(0, "w/e")) == 0 &&
        !ds_vfs_exists(at(0, "w/e")));
  CHECK(ds_fsync_path(at(0, "w"), &err) == 0);
  CHECK(ds_fsync_path(at(0, "w/none"), &err) == -1);
  CHECK_CONTAINS(err, "w/none: cannot open");
  free(err);
  err = NULL;
  /* a tree goes; what is absent is no error */
  CHECK(ds_vfs_mkdir(at(0, "w/t")) == 0 && ds_vfs_mkdir(at(0, "w/t/u")) == 0);
  put(at(0, "w/t/u/f"), "x");
  put(at(0, "w/t/g"), "y");
  CHECK(symlink("/", at(0, "w/t/root")) == 0); /* a link is removed, not followed */
  CHECK(ds_remove_tree(at(0, "w/t"), &err) == 0 && !ds_vfs_exists(at(0, "w/t")));
  CHECK(ds_vfs_exists("/"));
  CHECK(ds_remove_tree(at(0, "w/t"), &err) == 0 && err == NULL);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_vfs_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  test_schemes();
  test_open_read_identity();
  test_kinds();
  test_folders();
  test_glob();
  test_writers();
  char *err = NULL;
  ds_remove_tree(tmp, &err);
  free(err);
  return check_exit();
}
