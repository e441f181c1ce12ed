/* test_stage.c - core/stage.c: the writer lock, stale temporaries of a
 * dead writer, append files rolled back by truncation, publish order with
 * an old dataset, directories replaced by exchange, discard, replaced
 * files freed by a later close (core/close_later.c), a FIFO put at the
 * target before COMMIT never opened by it. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/close_later.h"
#include "core/mapped_file.h"
#include "core/stage.h"

static char tmp[64];

static const char *at(int slot, const char *name) {
  static char buf[4][256];
  snprintf(buf[slot], sizeof buf[slot], "%s/%s", tmp, name);
  return buf[slot];
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static void test_lock_and_stale(void) {
  char *err = NULL;
  ds_stage *a, *b;
  CHECK(ds_stage_open(tmp, "x.bin", DS_STAGE_CREATE, &a, &err) == 0);
  CHECK(ds_stage_open(tmp, "x.bin", DS_STAGE_CREATE, &b, &err) == -1);
  CHECK_CONTAINS(err, "another writer has this dataset open");
  ds_stage *c;
  CHECK(ds_stage_open(tmp, "y.bin", DS_STAGE_CREATE, &c, &err) == 0); /* other path */
  ds_stage_close(c);
  ds_stage_close(a);
  CHECK(fx_hidden_entries(tmp) == 0);
  /* a writer killed mid-way: its temporaries and lock stay behind */
  pid_t pid = fork();
  if (pid == 0) {
    ds_stage *s;
    ds_afile *f;
    if (ds_stage_open(tmp, "x.bin", DS_STAGE_CREATE, &s, NULL) == 0 &&
        ds_stage_file(s, "data", &f, NULL) == 0 && ds_stage_dir(s, "dir", &(const char *){0}, NULL) == 0)
      _exit(0); /* no close: as if killed */
    _exit(1);
  }
  int status;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_MSG(fx_hidden_entries(tmp) == 3, "lock, file and directory left behind (%d)", fx_hidden_entries(tmp));
  put(at(0, ".x.binary.ds-tmp.1.0.data"), "not ours"); /* another key */
  CHECK(ds_stage_open(tmp, "x.bin", DS_STAGE_CREATE, &a, &err) == 0);
  CHECK_MSG(fx_hidden_entries(tmp) == 2, "only the lock and the other key's file remain (%d)", fx_hidden_entries(tmp));
  ds_stage_close(a);
  unlink(at(0, ".x.binary.ds-tmp.1.0.data"));
  CHECK(fx_hidden_entries(tmp) == 0);
  free(err);
}

static void test_append_and_publish(void) {
  char *err = NULL;
  ds_stage *s;
  put(at(0, "d.dat"), "old data");
  put(at(0, "d.dat.idx"), "old index");
  put(at(0, "d.dat.extra"), "old extra");
  CHECK(ds_stage_open(tmp, "d.dat", DS_STAGE_CREATE, &s, &err) == 0);
  CHECK(ds_stage_check_absent(s, at(0, "d.dat"), &err) == -1);
  CHECK_CONTAINS(err, "d.dat: already exists");
  ds_stage_close(s);
  CHECK(ds_stage_open(tmp, "d.dat", DS_STAGE_REPLACE, &s, &err) == 0);
  CHECK(ds_stage_check_absent(s, at(0, "d.dat"), &err) == 0);
  CHECK(ds_stage_obsolete(s, at(0, "d.dat"), 1, &err) == 0);
  CHECK(ds_stage_obsolete(s, at(0, "d.dat.idx"), 0, &err) == 0);
  CHECK(ds_stage_obsolete(s, at(0, "d.dat.extra"), 0, &err) == 0);
  ds_afile *data, *idx, *scratch;
  CHECK(ds_stage_file(s, "data", &data, &err) == 0);
  CHECK(ds_stage_file(s, "idx", &idx, &err) == 0);
  CHECK(ds_stage_file(s, "scratch", &scratch, &err) == 0);
  CHECK(ds_afile_write(data, "hello ", 6, &err) == 0);
  uint64_t mark = data->size;
  CHECK(ds_afile_write(data, "wrong", 5, &err) == 0 && ds_afile_flush(data, &err) == 0);
  CHECK(ds_afile_truncate(data, mark, &err) == 0);
  CHECK(ds_afile_write(data, "world", 5, &err) == 0);
  CHECK(ds_afile_write(idx, "new index", 9, &err) == 0);
  CHECK(ds_afile_write(scratch, "tmp", 3, &err) == 0);
  CHECK(ds_stage_final(s, idx->path, at(0, "d.dat.idx"), &err) == 0);
  CHECK(ds_stage_final(s, data->path, at(0, "d.dat"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == 0);
  /* prepared: the old commit point waits under a ds-old name, the other
   * new file is in place, the journal says so */
  CHECK_STR(fx_small_text(at(0, "d.dat")), "(absent)");
  CHECK_STR(fx_small_text(at(0, "d.dat.idx")), "new index");
  CHECK(ds_path_exists(at(0, ".d.dat.ds-journal"), NULL));
  CHECK(ds_stage_publish(s, &err) == 0);
  CHECK_STR(fx_small_text(at(0, "d.dat")), "hello world");
  CHECK_STR(fx_small_text(at(0, "d.dat.idx")), "new index");
  CHECK_STR(fx_small_text(at(0, "d.dat.extra")), "(absent)");
  CHECK_MSG(fx_hidden_entries(tmp) == 1, "only the lock (%d)", fx_hidden_entries(tmp));
  /* a next version replaces the published one; a discarded one nothing */
  CHECK(ds_stage_file(s, "data", &data, &err) == 0);
  CHECK(ds_afile_copy_from(data, at(0, "d.dat"), 6, 5, &err) == 0);
  CHECK(ds_afile_write(data, "!", 1, &err) == 0);
  CHECK(ds_stage_final(s, data->path, at(0, "d.dat"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == 0 && ds_stage_publish(s, &err) == 0);
  CHECK_STR(fx_small_text(at(0, "d.dat")), "world!");
  CHECK_STR(fx_small_text(at(0, "d.dat.idx")), "(absent)"); /* not in the new version */
  CHECK(ds_stage_file(s, "data", &data, &err) == 0);
  CHECK(ds_stage_final(s, data->path, at(0, "d.dat"), &err) == 0);
  ds_stage_discard(s);
  CHECK_STR(fx_small_text(at(0, "d.dat")), "world!");
  ds_stage_close(s);
  CHECK(fx_hidden_entries(tmp) == 0);
  free(err);
}

/* A directory dataset's check: every directory is the format's. */
static int any_dir(const char *path, char **err) {
  (void)path;
  (void)err;
  return 0;
}

static void test_directories(void) {
  char *err = NULL;
  ds_stage *s;
  mkdir(at(0, "ds"), 0755);
  put(at(0, "ds/old.txt"), "old");
  CHECK(ds_stage_open(tmp, "ds", DS_STAGE_REPLACE, &s, &err) == 0);
  const char *d;
  CHECK(ds_stage_dir(s, "ds", &d, &err) == 0);
  CHECK(ds_stage_final(s, d, at(0, "ds"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == -1); /* no check given: a directory is refused */
  CHECK_CONTAINS(err, "a directory is there");
  ds_stage_discard(s);
  ds_stage_set_own(s, any_dir);
  CHECK(ds_stage_dir(s, "ds", &d, &err) == 0);
  char p[300];
  snprintf(p, sizeof p, "%s/new.txt", d);
  put(p, "new");
  CHECK(ds_stage_final(s, d, at(0, "ds"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == 0);
  CHECK_STR(fx_small_text(at(0, "ds/old.txt")), "old");
  CHECK(ds_stage_publish(s, &err) == 0);
  CHECK_STR(fx_small_text(at(0, "ds/new.txt")), "new");
  CHECK_STR(fx_small_text(at(0, "ds/old.txt")), "(absent)");
  ds_stage_close(s);
  CHECK(fx_hidden_entries(tmp) == 0);
  CHECK(ds_stage_open(tmp, "fresh", DS_STAGE_CREATE, &s, &err) == 0);
  CHECK(ds_stage_dir(s, "fresh", &d, &err) == 0);
  CHECK(ds_stage_final(s, d, at(0, "fresh"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == 0 && ds_stage_publish(s, &err) == 0);
  int is_dir = 0;
  CHECK(ds_path_exists(at(0, "fresh"), &is_dir) && is_dir);
  ds_stage_close(s);
  CHECK(ds_remove_tree(at(0, "ds"), &err) == 0 && !ds_path_exists(at(0, "ds"), NULL));
  free(err);
}

/* A journal the stage cannot read: the open fails naming it, and nothing
 * (the journal, an old file, a ds-old file) is touched. A whole journal
 * of an uncommitted publish: the old file comes back, ours goes. */
static void test_journal_recovery(void) {
  char *err = NULL;
  ds_stage *s;
  put(at(0, ".j.dat.ds-journal"), "garbage");
  put(at(0, ".j.dat.ds-old.1.0"), "old data");
  CHECK(ds_stage_open(tmp, "j.dat", DS_STAGE_REPLACE, &s, &err) == -1);
  CHECK_CONTAINS(err, ".j.dat.ds-journal");
  CHECK_STR(fx_small_text(at(0, ".j.dat.ds-journal")), "garbage");
  CHECK_STR(fx_small_text(at(0, ".j.dat.ds-old.1.0")), "old data");
  unlink(at(0, ".j.dat.ds-journal"));
  unlink(at(0, ".j.dat.ds-old.1.0"));
  /* a prepare of two files in a child that then dies (_exit: no cleanup,
   * its lock goes with its descriptors) */
  put(at(0, "j.dat"), "old data");
  put(at(0, "j.dat.idx"), "old index");
  pid_t pid = fork();
  if (pid == 0) {
    ds_afile *data, *idx;
    char *e = NULL;
    int ok = ds_stage_open(tmp, "j.dat", DS_STAGE_REPLACE, &s, &e) == 0 &&
             ds_stage_obsolete(s, at(0, "j.dat"), 1, &e) == 0 &&
             ds_stage_obsolete(s, at(0, "j.dat.idx"), 0, &e) == 0 &&
             ds_stage_file(s, "data", &data, &e) == 0 && ds_stage_file(s, "idx", &idx, &e) == 0 &&
             ds_afile_write(data, "new data", 8, &e) == 0 &&
             ds_afile_write(idx, "new index", 9, &e) == 0 &&
             ds_stage_final(s, idx->path, at(0, "j.dat.idx"), &e) == 0 &&
             ds_stage_final(s, data->path, at(0, "j.dat"), &e) == 0 && ds_stage_sync(s, &e) == 0;
    _exit(ok ? 0 : 1);
  }
  int status;
  waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK_STR(fx_small_text(at(0, "j.dat")), "(absent)"); /* moved away */
  CHECK_STR(fx_small_text(at(0, "j.dat.idx")), "new index");
  CHECK(ds_stage_open(tmp, "j.dat", DS_STAGE_REPLACE, &s, &err) == 0);
  CHECK_STR(fx_small_text(at(0, "j.dat")), "old data"); /* put back */
  CHECK_STR(fx_small_text(at(0, "j.dat.idx")), "old index");
  ds_stage_close(s);
  CHECK_MSG(fx_hidden_entries(tmp) == 0, "no journal, ds-old or temporary left (%d)",
            fx_hidden_entries(tmp));
  unlink(at(0, "j.dat"));
  unlink(at(0, "j.dat.idx"));
  free(err);
}

/* A local stage's file that is published as written (ds_stage_expect)
 * starts its disk writes as it grows (fsynced at commit anyway); a scratch
 * file does not. */
static void test_expect_writeback(void) {
  char *err = NULL;
  ds_stage *s;
  ds_afile *data, *scratch;
  CHECK(ds_stage_open(tmp, "wb.bin", DS_STAGE_CREATE, &s, &err) == 0);
  if (!s) return;
  CHECK(ds_stage_file(s, "data", &data, &err) == 0);
  CHECK(ds_stage_file(s, "scratch", &scratch, &err) == 0);
  ds_stage_expect(s, data, at(0, "wb.bin"));
  CHECK_MSG(data->writeback == 1 && scratch->writeback == 0, "writeback %d and %d",
            data->writeback, scratch->writeback);
  ds_stage_discard(s);
  ds_stage_close(s);
  free(err);
}

/* Descriptors of this process on deleted files under tmp. */
static int deleted_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL) {
    char p[300], l[512];
    snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
    ssize_t k = readlink(p, l, sizeof l - 1);
    if (k <= 0) continue;
    l[k] = 0;
    n += strncmp(l, tmp, strlen(tmp)) == 0 && strstr(l, " (deleted)") != NULL;
  }
  if (d) closedir(d);
  return n;
}

/* The descriptors ds_close_later takes are closed by its thread (or by
 * wait); a replaced dataset's old files are unlinked at publish and freed
 * when the stage's closer closes them: none is left open after close, on
 * the journaled path (several files) and the single rename. */
static void test_replaced_closed_later(void) {
  ds_close_later c = {0};
  int p[2], q[2];
  CHECK(pipe(p) == 0 && pipe(q) == 0);
  ds_close_later_add(&c, p[0]);
  ds_close_later_add(&c, p[1]);
  CHECK(fcntl(p[0], F_GETFD) >= 0); /* kept, not closed yet */
  ds_close_later_start(&c);
  ds_close_later_add(&c, q[0]);
  ds_close_later_add(&c, q[1]);
  ds_close_later_wait(&c);
  CHECK(fcntl(p[0], F_GETFD) == -1 && fcntl(p[1], F_GETFD) == -1);
  CHECK(fcntl(q[0], F_GETFD) == -1 && fcntl(q[1], F_GETFD) == -1);
  CHECK(c.n == 0 && !c.running);

  char *err = NULL;
  for (int single = 0; single < 2; single++) {
    ds_stage *s;
    put(at(0, "r.dat"), "old data");
    if (!single) put(at(0, "r.dat.idx"), "old index");
    int held = open(at(0, "r.dat"), O_RDONLY); /* watches the old inode */
    CHECK(ds_stage_open(tmp, "r.dat", DS_STAGE_REPLACE, &s, &err) == 0);
    if (!s) return;
    CHECK(ds_stage_obsolete(s, at(0, "r.dat"), 1, &err) == 0);
    if (!single) CHECK(ds_stage_obsolete(s, at(0, "r.dat.idx"), 0, &err) == 0);
    ds_afile *data, *idx;
    CHECK(ds_stage_file(s, "data", &data, &err) == 0);
    CHECK(ds_afile_write(data, "new data", 8, &err) == 0);
    if (!single) {
      CHECK(ds_stage_file(s, "idx", &idx, &err) == 0);
      CHECK(ds_afile_write(idx, "new index", 9, &err) == 0);
      CHECK(ds_stage_final(s, idx->path, at(0, "r.dat.idx"), &err) == 0);
    }
    CHECK(ds_stage_final(s, data->path, at(0, "r.dat"), &err) == 0);
    CHECK(ds_stage_sync(s, &err) == 0 && ds_stage_publish(s, &err) == 0);
    struct stat st;
    CHECK_MSG(fstat(held, &st) == 0 && st.st_nlink == 0, "the old file is unlinked (%d links)",
              (int)st.st_nlink);
    CHECK_STR(fx_small_text(at(0, "r.dat")), "new data");
    close(held);
    ds_stage_close(s);
    CHECK_MSG(deleted_fds() == 0, "no descriptor left on a deleted file (%d, %s)",
              deleted_fds(), single ? "single rename" : "journaled");
    CHECK(fx_hidden_entries(tmp) == 0);
    unlink(at(0, "r.dat"));
    unlink(at(0, "r.dat.idx"));
  }
  free(err);
}

/* The writer thread of test_fifo_at_commit: its open returns once the
 * FIFO has a reader. */
static atomic_int fifo_opened;
static char fifo_alias[256];
static void *fifo_writer(void *arg) {
  (void)arg;
  int fd = open(fifo_alias, O_WRONLY);
  atomic_store(&fifo_opened, 1);
  if (fd >= 0) close(fd);
  return NULL;
}

/* A FIFO put at the target's name between prepare and COMMIT: the COMMIT
 * (a single rename over it) never opens it, for opening a FIFO or a device
 * can act on it (here: it would wake a writer waiting for a reader). */
static void test_fifo_at_commit(void) {
  char *err = NULL;
  ds_stage *s = NULL;
  ds_afile *data;
  put(at(0, "f.dat"), "old");
  CHECK(ds_stage_open(tmp, "f.dat", DS_STAGE_REPLACE, &s, &err) == 0);
  if (!s) return;
  CHECK(ds_stage_obsolete(s, at(0, "f.dat"), 1, &err) == 0);
  CHECK(ds_stage_file(s, "data", &data, &err) == 0);
  CHECK(ds_afile_write(data, "new", 3, &err) == 0);
  CHECK(ds_stage_final(s, data->path, at(0, "f.dat"), &err) == 0);
  CHECK(ds_stage_sync(s, &err) == 0);
  snprintf(fifo_alias, sizeof fifo_alias, "%s", at(1, "f.fifo"));
  CHECK(unlink(at(0, "f.dat")) == 0 && mkfifo(at(0, "f.dat"), 0600) == 0 &&
        link(at(0, "f.dat"), fifo_alias) == 0);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, fifo_writer, NULL) == 0);
  usleep(50000); /* the writer waits in open */
  int rc = ds_stage_publish(s, &err);
  check_note("    %s\n", err ? err : "");
  CHECK(rc == 0);
  usleep(200000); /* an open at COMMIT would have woken it by now */
  CHECK_MSG(!atomic_load(&fifo_opened), "the FIFO was not opened by the COMMIT");
  CHECK_STR(fx_small_text(at(0, "f.dat")), "new");
  int r = open(fifo_alias, O_RDONLY | O_NONBLOCK); /* let the writer go */
  pthread_join(th, NULL);
  if (r >= 0) close(r);
  ds_stage_close(s);
  unlink(at(0, "f.dat"));
  unlink(fifo_alias);
  free(err);
}

int main(void) {
  snprintf(tmp, sizeof tmp, "/tmp/ds_stage_XXXXXX");
  if (!mkdtemp(tmp)) return 1;
  test_lock_and_stale();
  test_append_and_publish();
  test_directories();
  test_journal_recovery();
  test_expect_writeback();
  test_replaced_closed_later();
  test_fifo_at_commit();
  char *err = NULL;
  ds_remove_tree(tmp, &err);
  free(err);
  return check_exit();
}
