/* test_open_stable.c - ds_open_stable (core/open_stable.h): an open that
 * sees its files change is tried again, a bounded number of times, then
 * fails with "the dataset changed while it was read"; an open that fails
 * while nothing changes fails with its own error at once; an incomplete
 * set is given a few more tries; a file held that is no longer at its path
 * (stale) makes the open start again. The "open" here is a fake whose
 * effects on two real files are scripted per try. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/common.h"
#include "core/open_stable.h"

static char g_dir[] = "/tmp/ds-open-stable-XXXXXX";
static char g_a[64], g_b[64];

/* What the fake open does on each try. */
typedef struct script {
  int tries;        /* opens so far */
  int change_until; /* tries < this rewrite file a during the open */
  int fail_until;   /* tries < this fail */
  int stale_until;  /* tries < this report a held file stale */
  int b_missing;    /* file b is absent (an incomplete set) */
  int listed;       /* calls of paths */
  int list_partial_until; /* calls < this: paths says the set is incomplete */
  int closes;
} script;

/* Write `text` to path (replacing it). */
static void put(const char *path, const char *text) {
  char tmp[80];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
  rename(tmp, path);
}

/* ds_open_steps.paths: both files. */
static int paths(void *ctx, ds_path_set *set, char **err) {
  script *s = ctx;
  if (s->listed++ < s->list_partial_until) return ds_err(err, "no shard 0 yet"), 1;
  if (ds_path_set_add(set, g_a) || ds_path_set_add(set, g_b)) return ds_err(err, "oom");
  return 0;
}

/* ds_open_steps.open: per the script. */
static int open_fake(void *ctx, char **err) {
  script *s = ctx;
  int t = s->tries++;
  if (t < s->change_until) {
    char text[160];
    snprintf(text, sizeof text, "version %d, longer each time%*s", t, t % 100, "");
    put(g_a, text); /* another program replaced it meanwhile */
  }
  if (t < s->fail_until) return ds_err(err, "%s: cannot open: try %d failed", g_b, t);
  return 0;
}

/* ds_open_steps.stale: per the script (tries already counted). */
static int stale(void *ctx) {
  script *s = ctx;
  return s->tries - 1 < s->stale_until;
}

/* ds_open_steps.close */
static void close_fake(void *ctx) { ((script *)ctx)->closes++; }

/* ds_open_steps.incomplete: b missing beside a. */
static int incomplete(void *ctx, const ds_path_set *set) {
  (void)ctx;
  return set->n == 2 && set->ids[0].kind != 0 && set->ids[1].kind == 0;
}

static const ds_open_steps steps = {paths, open_fake, stale, close_fake, incomplete};

/* Run one scripted open; *err gets its message (or NULL). */
static int run(script *s, char **err) {
  *err = NULL;
  put(g_a, "a");
  if (s->b_missing) unlink(g_b);
  else put(g_b, "b");
  return ds_open_stable("the-set", &steps, s, err);
}

int main(void) {
  if (!mkdtemp(g_dir)) {
    CHECK(0);
    return check_exit();
  }
  snprintf(g_a, sizeof g_a, "%s/a", g_dir);
  snprintf(g_b, sizeof g_b, "%s/b", g_dir);
  char *err;

  /* nothing changes: one try */
  script s1 = {0};
  CHECK(run(&s1, &err) == 0);
  CHECK(s1.tries == 1 && s1.closes == 0);
  free(err);

  /* a file changes during the first two opens: the third counts */
  script s2 = {0};
  s2.change_until = 2;
  CHECK(run(&s2, &err) == 0);
  CHECK_MSG(s2.tries == 3 && s2.closes == 2, "tries %d closes %d", s2.tries, s2.closes);
  free(err);

  /* it keeps changing: DS_OPEN_TRIES tries, then the "changed" error */
  script s3 = {0};
  s3.change_until = 100;
  CHECK(run(&s3, &err) == -1);
  CHECK(s3.tries == DS_OPEN_TRIES);
  CHECK_CONTAINS(err, "the-set: the dataset changed while it was read");
  free(err);

  /* a failure while it changes is tried again; the next try opens */
  script s4 = {0};
  s4.change_until = 1;
  s4.fail_until = 1;
  CHECK(run(&s4, &err) == 0);
  CHECK(s4.tries == 2);
  free(err);

  /* a failure while nothing changes: its own error, at once */
  script s5 = {0};
  s5.fail_until = 100;
  CHECK(run(&s5, &err) == -1);
  CHECK(s5.tries == 1);
  CHECK_CONTAINS(err, "cannot open: try 0 failed");
  free(err);

  /* a held file no longer at its path: tried again */
  script s6 = {0};
  s6.stale_until = 2;
  CHECK(run(&s6, &err) == 0);
  CHECK_MSG(s6.tries == 3 && s6.closes == 2, "tries %d closes %d", s6.tries, s6.closes);
  free(err);

  /* an incomplete set that stays so: DS_OPEN_WAITS more tries, then the
   * open's own (last) error, not "changed" */
  script s7 = {0};
  s7.fail_until = 100;
  s7.b_missing = 1;
  CHECK(run(&s7, &err) == -1);
  CHECK_MSG(s7.tries == DS_OPEN_WAITS + 1, "tries %d", s7.tries);
  CHECK_CONTAINS(err, "cannot open: try");
  CHECK(err && !strstr(err, "changed"));
  free(err);

  /* an incomplete set completed while waiting: opens */
  script s8 = {0};
  s8.fail_until = 2;
  s8.b_missing = 1;
  CHECK(run(&s8, &err) == 0);
  CHECK(s8.tries == 3);
  free(err);

  /* listing finds the set incomplete twice, then whole: opens */
  script s9 = {0};
  s9.list_partial_until = 2;
  CHECK(run(&s9, &err) == 0);
  CHECK(s9.listed == 3 && s9.tries == 1);
  free(err);

  /* it stays incomplete: DS_OPEN_WAITS more listings, then that error */
  script s10 = {0};
  s10.list_partial_until = 100;
  CHECK(run(&s10, &err) == -1);
  CHECK_MSG(s10.listed == DS_OPEN_WAITS + 1 && s10.tries == 0, "listed %d", s10.listed);
  CHECK_STR(err, "no shard 0 yet");
  free(err);

  /* the shard set's incomplete rule (ds_shard_set_incomplete), ids by hand:
   * kind 0 missing, 1 a file */
  ds_path_id ids[4] = {{.kind = 1}, {.kind = 1}, {.kind = 1}, {.kind = 1}};
  ds_path_set set = {NULL, ids, 4, 4};
  CHECK(ds_shard_set_incomplete(&set, 1, "d@4.x") == 0); /* all there */
  ids[2].kind = 0;
  CHECK(ds_shard_set_incomplete(&set, 1, "d@4.x") == 1); /* one missing beside others */
  ids[0].kind = ids[1].kind = ids[3].kind = 0;
  CHECK(ds_shard_set_incomplete(&set, 1, "d@4.x") == 0); /* all gone: not a half set */
  CHECK(ds_shard_set_incomplete(&set, 1, "d@*.x") == 1); /* an @* set found a moment ago */
  /* step 2: data, side, data, side; only data files count */
  ids[0].kind = ids[1].kind = ids[2].kind = 1;
  ids[3].kind = 0; /* a side file missing */
  CHECK(ds_shard_set_incomplete(&set, 2, "d@2.x") == 0);
  ids[2].kind = 0; /* the second data file missing beside the first */
  CHECK(ds_shard_set_incomplete(&set, 2, "d@2.x") == 1);

  unlink(g_a);
  unlink(g_b);
  rmdir(g_dir);
  return check_exit();
}
