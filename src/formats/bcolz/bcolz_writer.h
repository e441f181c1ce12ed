/* bcolz_writer.h - writing bcolz 1.x ctables (or, for one column named
 * `value`, carrays) as upstream's bcolz writes them
 * (docs/formats/bcolz.md): one carray folder per column with
 * meta/storage, meta/sizes, __attrs__ and data/__<N>.blp chunk files (the
 * 16-byte "blpk" header and one c-blosc 1.x buffer of chunklen rows at
 * cname/clevel/shuffle); the last partial chunk holds only its rows, as
 * upstream's flush() writes it; __rootdirs__ and __attrs__ at the root.
 *
 * Column dtypes come from numpy dtype strings ("i4", "<f8", "int64",
 * "S16", "U8", "M8[ns]", "m8[s]", "bool", "object", with an optional cell
 * shape "(3,)f4") or SQL types (INTEGER int64, REAL float64, BOOLEAN bool,
 * TEXT U and BLOB S of the width of the longest value). chunklen, when not
 * given, follows upstream's rule from expectedlen (default 1,000,000, what
 * bcolz.fromiter assumes for an iterator of unknown length).
 *
 * Rows stream: each column keeps one chunk in memory; TEXT/BLOB columns
 * without a width wait in a temporary file (".values.tmp" in the column
 * folder) until the end, when their width is known. A value that does not
 * fit its column is an error naming the row and the column. Knows no
 * SQLite; writes into a directory the caller provides. */
#ifndef DS_BCOLZ_WRITE_H
#define DS_BCOLZ_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/value.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_cell_fast.h"
#include "formats/bcolz/bcolz_cell_write.h"
#include "formats/bcolz/bcolz_write_options.h"

typedef struct bcolz_writer bcolz_writer;

/* Start a ctable (carray = 0) or a carray (carray = 1, one column) in
 * directory `dir`, which must exist and be empty. */
int bcolz_writer_open(const char *dir, int carray, size_t ncols,
                      const char *const *names, const bcolz_wtype *types,
                      const bcolz_write_options *o, bcolz_writer **out,
                      char **err);
/* Append one row (ncols values). On error nothing was added. */
int bcolz_writer_add(bcolz_writer *w, const ds_value *row, char **err);
uint64_t bcolz_writer_count(const bcolz_writer *w);
/* The shortcut rows' window, when every column takes a shortcut of
 * bcolz_cell_fast.h (the common copy): cols[i] is column i's shortcut and
 * the place of its cell for the window's first row; the next row's cell
 * is bcolz_window_cell (lag rows further). The caller puts each cell with
 * bcolz_put_int / bcolz_fast_put_f8 / _s and, once all are in place,
 * adds the row with bcolz_window_add (inline, no call, while no column
 * fills up) or else bcolz_writer_add_placed; a row left half placed (a
 * cell the shortcut refused, then bcolz_writer_add) changes nothing. The
 * window lives as long as the writer; room 0 means "not current": ask
 * bcolz_writer_window again (every other writer call may make it so). */
typedef struct bcolz_wcol {
  uint8_t *cell0;         /* the cell of the window's first row */
  bcolz_fast fast;        /* the column's shortcut; fast.size: its cell size */
} bcolz_wcol;
typedef struct bcolz_window {
  bcolz_wcol *cols;
  size_t ncols;
  uint64_t room;          /* rows the cells take before a column fills up; 0: not current */
  uint64_t lag;           /* rows added since the window was made current */
  uint64_t *rows;         /* the writer's row count */
} bcolz_window;

/* The writer's window, made current; NULL when not every column takes a
 * shortcut, or the table is finished. */
bcolz_window *bcolz_writer_window(bcolz_writer *w);
/* Column i's cell for the next row. */
static inline uint8_t *bcolz_window_cell(const bcolz_window *win, size_t i) {
  return win->cols[i].cell0 + win->lag * win->cols[i].fast.size;
}
/* Add the row placed in win's cells: 1, or 0 when the window cannot (a
 * column fills up with it, or the window is not current): then
 * bcolz_writer_add_placed adds it. */
static inline int bcolz_window_add(bcolz_window *win) {
  if (win->room <= 1) return 0;
  win->room--;
  win->lag++;
  (*win->rows)++;
  return 1;
}
int bcolz_writer_add_placed(bcolz_writer *w, char **err);
/* Go back to the first `rows` rows (a savepoint). */
int bcolz_writer_truncate(bcolz_writer *w, uint64_t rows, char **err);
/* Write the last chunks, meta/sizes and the JSON files. */
int bcolz_writer_finish(bcolz_writer *w, char **err);
void bcolz_writer_free(bcolz_writer *w);
/* 0 when `path` is absent, an empty directory, or a bcolz ctable
 * (__rootdirs__) or carray (meta/storage) as the reader recognises them;
 * else an error naming what is there. */
int bcolz_write_is_own(const char *path, char **err);

#endif
