/* test_row_window.c - core/row_window.c without SQLite: parsing the window
 * options, rowid <-> local row both ways (against a brute-force walk of
 * the window's rows), rowid ranges as local ranges, bad options named, and
 * ds_row_window_check's bound on the last rowid against exact arithmetic. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/options.h"
#include "core/row_window.h"

/* Parse `text` into w; 0 or -1 (err freed). */
static int parse(const char *text, ds_row_window *w) {
  ds_options o = {0};
  char *err = NULL;
  int rc = ds_options_add_list(&o, text, &err);
  if (rc == 0) rc = ds_row_window_parse(&o, w, &err);
  ds_options_free(&o);
  free(err);
  return rc;
}

/* ds_row_window_check(text, total) == 0 exactly when the window's last
 * rowid (counted in 128 bits) is at most INT64_MAX; the error names the
 * options' numbers. */
static void check_bound(const char *text, uint64_t total) {
  ds_row_window w;
  CHECK(parse(text, &w) == 0);
  uint64_t end = w.end < total ? w.end : total;
  unsigned __int128 last = w.first_rowid;
  if (end > w.start) last += (unsigned __int128)(end - w.start - 1) * w.step;
  int fits = end <= w.start || last <= (unsigned __int128)INT64_MAX;
  char *err = NULL;
  int rc = ds_row_window_check(&w, total, &err);
  CHECK_MSG(rc == (fits ? 0 : -1) && (fits || (err && strstr(err, "first_rowid=") &&
                                                strstr(err, "rowid_step="))),
            "%s over %llu rows: %s", text, (unsigned long long)total, err ? err : "fits");
  free(err);
}

/* Every rowid in [0, 60) maps to the local row a walk of the window gives,
 * and every range [lo, hi) to the local rows whose rowids fall in it. */
static void check_against_walk(const ds_row_window *w, uint64_t nrows, const char *what) {
  int ok = 1;
  for (uint64_t g = 0; g < 60; g++) {
    uint64_t want = UINT64_MAX, l = UINT64_MAX;
    for (uint64_t k = 0; k < nrows; k++)
      if (w->first_rowid + k * w->step == g) want = w->start + k;
    int found = ds_row_window_local(w, g, &l);
    if (found != (want != UINT64_MAX) || (found && l != want)) ok = 0;
    if (found && ds_row_window_rowid(w, l) != g) ok = 0;
  }
  for (uint64_t lo = 0; lo < 40; lo += 3)
    for (uint64_t hi = lo; hi < 60; hi += 5) {
      uint64_t a, b, wa = UINT64_MAX, wb = 0;
      ds_row_window_range(w, lo, hi, &a, &b);
      for (uint64_t k = 0; k < nrows; k++) {
        uint64_t g = w->first_rowid + k * w->step;
        if (g >= lo && g < hi) {
          if (wa == UINT64_MAX) wa = w->start + k;
          wb = w->start + k + 1;
        }
      }
      if (wa == UINT64_MAX ? a != b : (a != wa || b != wb)) ok = 0;
    }
  CHECK_MSG(ok, "%s", what);
}

int main(void) {
  ds_row_window w;
  CHECK(parse("", &w) == 0 && !w.on && w.step == 1 && w.end == UINT64_MAX);
  CHECK(parse("compression=none", &w) == 0 && !w.on);
  CHECK(parse("shard=2, first_rowid=10, shard_index=4, rows=5", &w) == 0);
  CHECK(w.on && w.shard == 2 && w.first_rowid == 10 && w.start == 4 && w.end == 9);
  check_against_walk(&w, 5, "concatenated window: shard_index=4, rows=5 from rowid 10");
  CHECK(parse("shard=1, first_rowid=13, rowid_step=3, shard_index=4, rows=2", &w) == 0);
  check_against_walk(&w, 2, "interleaved range: rowid_step=3");
  CHECK(parse("first_rowid=7, rowid_step=4", &w) == 0);
  check_against_walk(&w, 20, "no rows= : to the end (walk of 20)");
  CHECK(parse("rows=0, first_rowid=3", &w) == 0);
  check_against_walk(&w, 0, "rows=0: an empty window");
  uint64_t l;
  CHECK(parse("first_rowid=5", &w) == 0 && !ds_row_window_local(&w, 4, &l));
  CHECK(parse("rowid_step=0", &w) == -1);
  CHECK(parse("shard=-1", &w) == -1);
  CHECK(parse("rows=x", &w) == -1);
  CHECK(parse("first_rowid=9223372036854775800, rows=100", &w) == -1);
  CHECK(parse("first_rowid=9223372036854775800, rows=8", &w) == 0);
  /* no rows= : the files' row count decides */
  static const char *const near_top[] = {
      "first_rowid=9223372036854775807", "first_rowid=9223372036854775806",
      "first_rowid=9223372032559808512, rowid_step=4294967296",
      "first_rowid=9223372028264841217, rowid_step=4294967296",
      "first_rowid=9223372036854775807, shard_index=5", "first_rowid=5, rowid_step=4294967296",
      "first_rowid=0"};
  static const uint64_t totals[] = {0, 1, 2, 3, 6, 7, 1000, UINT64_MAX / 2};
  for (size_t i = 0; i < sizeof near_top / sizeof *near_top; i++)
    for (size_t j = 0; j < sizeof totals / sizeof *totals; j++) check_bound(near_top[i], totals[j]);
  check_bound("first_rowid=9223372036854775807, rows=1", 10);
  return check_exit();
}
