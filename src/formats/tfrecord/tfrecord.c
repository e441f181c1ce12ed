/* tfrecord.c - the TFRecord reader: open and detect, a cursor's
 * sequential and indexed reads, the index pass (see tfrecord.h). */
#include <stdlib.h>
#include <string.h>

#include "core/cancel.h"
#include "core/codec.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_ahead.h"
#include "formats/tfrecord/tfrecord_frame.h"
#include "formats/tfrecord/tfrecord_inflate.h"
#include "formats/tfrecord/tfrecord_walk.h"

/* The most index entries reserved before any is known to be needed (16M
 * records: 256 MiB for both arrays, in pages touched only as filled). */
#define TFR_GUESS_MAX ((size_t)1 << 24)
/* The index pass: records walked between two checks for cancellation,
 * and the window of a local file read on the query thread (1 MiB: 256 KiB
 * reads measured 1.3x slower than 1 MiB ones, dd of a 284 MB file from
 * the page cache, 32 against 24.5 ms). */
#define TFR_WALK_MAX 1024
#define TFR_INDEX_AHEAD ((uint64_t)1 << 20)
/* threads=2 reads ahead (tfrecord_ahead.h) a file whose first record is
 * at most this long: with longer records most of what it reads would be
 * data the pass skips. */
#define TFR_AHEAD_MAX_RECORD ((uint64_t)64 << 10)

static int header(tfrecord_cursor *c, uint64_t *len, char **err);

const char *tfrecord_compression_name(tfrecord_compression c) {
  switch (c) {
    case TFRECORD_NONE: return "none";
    case TFRECORD_GZIP: return "gzip";
    case TFRECORD_ZLIB: return "zlib";
    default: return "auto";
  }
}

tfrecord_compression tfrecord_detect(const uint8_t *p, size_t n) {
  if (n >= TFR_HEADER) {
    uint64_t len;
    uint32_t s, c;
    if (tfr_frame_parse(p, &len, &s, &c) == 0) return TFRECORD_NONE;
  }
  if (n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8) return TFRECORD_GZIP;
  if (n >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 &&
      ((unsigned)p[0] << 8 | p[1]) % 31 == 0)
    return TFRECORD_ZLIB;
  return TFRECORD_NONE;
}

/* Options, then the compression (detected from the first bytes). */
static int finish_open(tfrecord_file *t, const tfrecord_options *o, char **err) {
  t->compression = o ? o->compression : TFRECORD_AUTO;
  t->skip_data_crc = o ? o->skip_data_crc : 0;
  t->read_ahead = o ? o->read_ahead : 0;
  t->max_record = o && o->max_record ? o->max_record : DS_MAX_VALUE_BYTES;
  if (t->max_record > ((uint64_t)1 << 62)) t->max_record = (uint64_t)1 << 62;
  if (t->compression != TFRECORD_AUTO) return 0;
  uint8_t head[TFR_HEADER];
  size_t n = t->file.size < TFR_HEADER ? (size_t)t->file.size : TFR_HEADER;
  if (n && ds_file_read(&t->file, 0, n, head, err)) return -1;
  t->compression = tfrecord_detect(head, n);
  return 0;
}

int tfrecord_open(tfrecord_file *t, const char *path, const tfrecord_options *o,
                  char **err) {
  memset(t, 0, sizeof *t);
  if (ds_file_open(&t->file, path, err)) return -1;
  if (finish_open(t, o, err)) {
    tfrecord_close(t);
    return -1;
  }
  return 0;
}

int tfrecord_open_memory(tfrecord_file *t, const char *name, const uint8_t *data,
                         uint64_t size, const tfrecord_options *o, char **err) {
  memset(t, 0, sizeof *t);
  if (ds_file_from_memory(&t->file, name, data, size, err)) return -1;
  if (finish_open(t, o, err)) {
    tfrecord_close(t);
    return -1;
  }
  return 0;
}

void tfrecord_close(tfrecord_file *t) {
  if (t->file.path) ds_file_close(&t->file);
  free(t->offsets);
  free(t->tail_err);
  memset(t, 0, sizeof *t);
}

int tfrecord_probe(const tfrecord_file *t) {
  tfrecord_cursor c;
  char *err = NULL;
  uint64_t len;
  int rc = tfrecord_cursor_init(&c, t, &err) == 0 && header(&c, &len, &err) == 1;
  free(err);
  tfrecord_cursor_free(&c);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Cursors                                                              */

int tfrecord_cursor_init(tfrecord_cursor *c, const tfrecord_file *t, char **err) {
  memset(c, 0, sizeof *c);
  c->t = t;
  if (t->compression == TFRECORD_GZIP || t->compression == TFRECORD_ZLIB)
    return tfr_inflate_new(&t->file, t->compression == TFRECORD_ZLIB,
                           t->max_record + TFR_OVERHEAD, &c->z, err);
  return 0;
}

void tfrecord_cursor_free(tfrecord_cursor *c) {
  ds_view_free(&c->view);
  tfr_inflate_free(c->z);
  memset(c, 0, sizeof *c);
}

/* "<file>: record <i> at offset <off>[ of the decompressed stream]: <what>" */
static int rec_err(const tfrecord_cursor *c, char **err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int rec_err(const tfrecord_cursor *c, char **err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *what = ds_vstrf(fmt, ap);
  va_end(ap);
  int rc = ds_err(err, "%s: record %llu at offset %llu%s: %s", c->t->file.path,
                  (unsigned long long)c->rec, (unsigned long long)c->off,
                  c->z ? " of the decompressed stream" : "",
                  what ? what : "out of memory");
  free(what);
  return rc;
}

/* An error of the stream itself (damaged or cut gzip / zlib): named at
 * the record it hit. */
static int stream_err(const tfrecord_cursor *c, char **err) {
  char *what = err ? *err : NULL;
  if (err) *err = NULL;
  int rc = rec_err(c, err, "%s", what ? what : "decompression failed");
  free(what);
  return rc;
}

/* The next n bytes of the record area at c->off + skip: *p, *got (fewer
 * at the end of the file or stream). Uncompressed reads go through the
 * view; compressed ones consume the stream. */
static int take(tfrecord_cursor *c, uint64_t at, size_t n, const uint8_t **p,
                size_t *got, char **err) {
  if (c->z) {
    if (tfr_inflate_read(c->z, n, p, got, err)) return stream_err(c, err);
    return 0;
  }
  const ds_file *f = &c->t->file;
  uint64_t left = at < f->size ? f->size - at : 0;
  *got = left < n ? (size_t)left : n;
  if (*got == 0) {
    *p = (const uint8_t *)"";
    return 0;
  }
  const uint8_t *h = ds_view_held(&c->view, f, at, *got);
  if (h) {
    *p = h;
    return 0;
  }
  return ds_view_read(&c->view, f, at, *got, p, err);
}

/* Read and check the header at c->off: 1 with *len, 0 at a clean end. */
static int header(tfrecord_cursor *c, uint64_t *len, char **err) {
  const uint8_t *h;
  size_t got;
  if (take(c, c->off, TFR_HEADER, &h, &got, err)) return -1;
  if (got == 0) return 0;
  if (got < TFR_HEADER)
    return rec_err(c, err, "cut short: %zu of the header's 12 bytes are there, "
                           "then the %s ends",
                   got, c->z ? "stream" : "file");
  uint32_t stored, computed;
  if (tfr_frame_parse(h, len, &stored, &computed))
    return rec_err(c, err, "length CRC mismatch (stored 0x%08x, computed 0x%08x): "
                           "the length field reads %llu",
                   stored, computed, (unsigned long long)*len);
  if (*len > c->t->max_record) {
    char *what = NULL;
    ds_err_too_big(&what, "the record", *len, c->t->max_record);
    rec_err(c, err, "%s", what ? what : "too big");
    free(what);
    return -1;
  }
  return 1;
}

/* "cut short" for a record of len data bytes of which got (of len + 4)
 * are there. */
static int cut(tfrecord_cursor *c, uint64_t len, size_t got, char **err) {
  return rec_err(c, err, "cut short: the record needs %llu bytes after its header "
                         "(%llu of data, 4 of CRC), the %s has %zu",
                 (unsigned long long)len + TFR_FOOTER, (unsigned long long)len,
                 c->z ? "stream" : "file", got);
}

/* An indexed record of an uncompressed file in one read (a point read is
 * one pread, not two): 1 with *p at its data and *len, 0 when the index
 * does not know it (or the file is shorter now: the slow path says why). */
static int whole_frame(tfrecord_cursor *c, const uint8_t **p, uint64_t *len,
                       char **err) {
  const tfrecord_file *t = c->t;
  if (c->z || !t->indexed || c->rec >= t->count || t->offsets[c->rec] != c->off)
    return 0;
  uint64_t want = tfrecord_len(t, c->rec) + TFR_OVERHEAD;
  size_t got;
  const uint8_t *f = want <= t->max_record + TFR_OVERHEAD /* a scan's case: in the window */
                         ? ds_view_held(&c->view, &t->file, c->off, want)
                         : NULL;
  if (!f) {
    if (want > t->max_record + TFR_OVERHEAD || take(c, c->off, (size_t)want, &f, &got, err))
      return want > t->max_record + TFR_OVERHEAD ? 0 : -1;
    if (got < want) return 0;
  }
  uint32_t stored, computed;
  if (tfr_frame_parse(f, len, &stored, &computed))
    return rec_err(c, err, "length CRC mismatch (stored 0x%08x, computed 0x%08x): "
                           "the length field reads %llu",
                   stored, computed, (unsigned long long)*len);
  if (*len != want - TFR_OVERHEAD)
    return rec_err(c, err, "the length field says %llu bytes, the index %llu",
                   (unsigned long long)*len, (unsigned long long)(want - TFR_OVERHEAD));
  *p = f + TFR_HEADER;
  return 1;
}

/* The record at c->rec / c->off, its data p[0..len) and footer in
 * memory: the data CRC checked (unless verify=false), *r set, the cursor
 * moved past it. */
static int deliver(tfrecord_cursor *c, const uint8_t *p, uint64_t len, tfrecord_rec *r,
                   char **err) {
  uint32_t stored, computed;
  if (!c->t->skip_data_crc &&
      tfr_frame_check(p, (size_t)len, p + len, &stored, &computed))
    return rec_err(c, err, "data CRC mismatch (stored 0x%08x, computed 0x%08x) "
                           "over its %llu bytes",
                   stored, computed, (unsigned long long)len);
  r->data = p;
  r->len = (size_t)len;
  r->index = c->rec;
  r->offset = c->off;
  c->rec++;
  c->off += TFR_OVERHEAD + len;
  return 1;
}

int tfrecord_next(tfrecord_cursor *c, tfrecord_rec *r, char **err) {
  uint64_t len;
  const uint8_t *p;
  int w = whole_frame(c, &p, &len, err);
  if (w < 0) return -1;
  if (w == 0) {
    int h = header(c, &len, err);
    if (h <= 0) return h;
    size_t got;
    if (take(c, c->off + TFR_HEADER, (size_t)len + TFR_FOOTER, &p, &got, err))
      return -1;
    if (got < len + TFR_FOOTER) return cut(c, len, got, err);
  }
  return deliver(c, p, len, r, err);
}

int tfrecord_seek(tfrecord_cursor *c, uint64_t i, char **err) {
  const tfrecord_file *t = c->t;
  if (!t->indexed) return ds_err(err, "%s: seek without an index", t->file.path);
  if (i > t->count)
    return ds_err(err, "%s: record %llu is past the last record (%llu records)",
                  t->file.path, (unsigned long long)i, (unsigned long long)t->count);
  uint64_t off = t->offsets[i]; /* [count]: where the last record ends */
  if (c->z) {
    if (tfr_inflate_pos(c->z) > off) tfr_inflate_rewind(c->z);
    uint64_t got;
    uint64_t gap = off - tfr_inflate_pos(c->z);
    c->rec = i;
    c->off = tfr_inflate_pos(c->z);
    if (tfr_inflate_skip(c->z, gap, &got, err)) return stream_err(c, err);
    if (got < gap) return rec_err(c, err, "the stream ends before offset %llu",
                                  (unsigned long long)off);
  }
  c->rec = i;
  c->off = off;
  return 0;
}

int tfrecord_read_at(tfrecord_cursor *c, uint64_t i, tfrecord_rec *r, char **err) {
  const tfrecord_file *t = c->t;
  if (!c->z && t->indexed && i < t->count) { /* a scan's and a lookup's path */
    c->rec = i;
    c->off = t->offsets[i];
    const uint8_t *p;
    uint64_t len;
    int w = whole_frame(c, &p, &len, err);
    if (w < 0) return -1;
    if (w > 0) return deliver(c, p, len, r, err) < 0 ? -1 : 0;
  }
  if (tfrecord_seek(c, i, err)) return -1;
  if (i == c->t->count && c->t->tail_err) return ds_err(err, "%s", c->t->tail_err);
  int rc = tfrecord_next(c, r, err);
  if (rc == 0)
    return ds_err(err, "%s: record %llu is past the last record (%llu records)",
                  c->t->file.path, (unsigned long long)i,
                  (unsigned long long)c->t->count);
  return rc < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------ */
/* The index pass                                                       */

/* Room for entry n of the offsets (capacity *cap, doubled; at the first
 * record `guess` entries, capped, or 1,024 when that much cannot be had). */
static int grow(uint64_t **offs, size_t *cap, uint64_t n, uint64_t guess) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : guess > TFR_GUESS_MAX ? TFR_GUESS_MAX
                              : guess > 1024 ? (size_t)guess : 1024;
  for (;;) {
    uint64_t *a = realloc(*offs, nc * sizeof *a);
    if (a) {
      *offs = a;
      break;
    }
    if (*cap || nc <= 1024) return -1;
    nc = 1024; /* the guess was too much to ask: grow from small */
  }
  *cap = nc;
  return 0;
}

/* The index pass's fast path (tfrecord_walk.h), for an uncompressed file:
 * from c->off on, the records whose header c's window holds, good and not
 * cut, at most `room` of them: their offsets stored from offs[c->rec],
 * c->rec and c->off moved past them. Anything else (the window's end, a
 * damaged header, a cut record, a full array) stops it; the pass's slow
 * path then reads on or says what is wrong. A file in memory (loaded, or
 * bytes given) is one window; with a read-ahead `a`, its window. */
static void walk(tfrecord_cursor *c, tfr_ahead *a, uint64_t *offs, uint64_t room) {
  const tfrecord_file *t = c->t;
  tfr_window w = {t->file.data, 0, t->file.size, t->file.size, t->max_record};
  if (a && tfr_ahead_window(a, c->off, &w)) {
    /* the helper's window */
  } else if (!t->file.data) { /* streamed: the window the last read left */
    if (!ds_view_held(&c->view, &t->file, c->off, TFR_HEADER)) return;
    w.data = c->view.buf.data;
    w.off = c->view.off;
    w.len = c->view.buf.len;
  }
  tfr_walk(&w, &c->off, offs, &c->rec, c->rec + room);
}

int tfrecord_index(tfrecord_file *t, char **err) {
  if (t->indexed) return 0;
  tfrecord_cursor c;
  if (tfrecord_cursor_init(&c, t, err)) return -1;
  /* a local file in windows that stay in the CPU's cache while walked */
  if (!c.z && !ds_file_prefetchable(&t->file)) c.view.max_ahead = TFR_INDEX_AHEAD;
  uint64_t *offs = NULL, checked = 0;
  size_t cap = 0;
  char *tail = NULL;
  tfr_ahead *ahead = NULL;
  int rc = 0;
  for (;;) {
    if (c.rec - checked >= TFR_WALK_MAX) {
      checked = c.rec;
      if (ds_cancel_check()) {
        rc = ds_err(err, DS_CANCEL_MSG);
        break;
      }
    }
    /* the common case: the headers the window holds, walked in a tight
     * loop (room for them and the end's entry) */
    if (!c.z && cap > c.rec + 1) {
      uint64_t room = cap - c.rec - 1, at = c.rec;
      walk(&c, ahead, offs, room < TFR_WALK_MAX ? room : TFR_WALK_MAX);
      if (c.rec > at) continue;
    }
    /* one record the slow way: the next window read, the first record,
     * the array grown, or what is wrong with the record said */
    uint64_t len;
    int h = header(&c, &len, &tail);
    if (h <= 0) break; /* the end, or the records stop here: tail says why */
    uint64_t got = 0;
    int cut_here;
    if (c.z) {
      if (tfr_inflate_skip(c.z, len + TFR_FOOTER, &got, &tail)) {
        stream_err(&c, &tail);
        break;
      }
      cut_here = got < len + TFR_FOOTER;
    } else {
      uint64_t left = t->file.size - (c.off + TFR_HEADER);
      got = left < len + TFR_FOOTER ? left : len + TFR_FOOTER;
      cut_here = left < len + TFR_FOOTER;
    }
    if (cut_here) {
      cut(&c, len, (size_t)got, &tail);
      break;
    }
    /* the first record's size says how many there may be */
    uint64_t guess = cap || c.z ? 0 : t->file.size / (TFR_OVERHEAD + len);
    if (grow(&offs, &cap, c.rec + 1, guess + guess / 8 + 16)) { /* and the end's entry */
      rc = ds_err(err, "%s: out of memory indexing record %llu", t->file.path,
                  (unsigned long long)c.rec);
      break;
    }
    offs[c.rec] = c.off;
    c.rec++;
    c.off += TFR_OVERHEAD + len;
    /* after the first record: the rest read ahead when it is worth it */
    if (c.rec == 1 && t->read_ahead && !c.z && TFR_OVERHEAD + len <= TFR_AHEAD_MAX_RECORD)
      ahead = tfr_ahead_start(&t->file, c.off, t->max_record);
  }
  tfr_ahead_free(ahead);
  if (rc == 0 && grow(&offs, &cap, c.rec, 1)) /* no record: the end's entry */
    rc = ds_err(err, "%s: out of memory indexing record %llu", t->file.path,
                (unsigned long long)c.rec);
  if (rc == 0) {
    offs[c.rec] = c.off; /* where the last intact record ends */
    t->offsets = offs;
    t->count = c.rec;
    t->tail_err = tail;
    t->indexed = 1;
  } else {
    free(offs);
    free(tail);
  }
  tfrecord_cursor_free(&c);
  return rc;
}
