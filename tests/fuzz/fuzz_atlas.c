/* fuzz_atlas.c - libFuzzer harness for the atlas reader
 * (src/formats/atlas/atlas.c) without SQLite.
 *
 * The reader opens directories, so the input is split into the files of a
 * bare shard written to a per-process temporary directory:
 *   byte 0      flags: bit 0 write no data.bin, bit 1 write zstd_dict.bin,
 *               bit 2 also pass that file as the shared dictionary
 *               (atlas_open_dict), bits 3-7 unused
 *   bytes 1-2   length of meta.json (u16 LE, clamped to what is left)
 *   bytes 3-4   length of index.npy (u16 LE, clamped)
 *   bytes 5-6   length of zstd_dict.bin (u16 LE, clamped; bit 1 only)
 *   then        meta.json, index.npy, zstd_dict.bin, and data.bin (the rest)
 * The shard is opened, every block (at most MAX_BLOCKS) is fetched with
 * atlas_block_stored() and atlas_block(), and every byte of each result is
 * touched so that ASan sees any out-of-bounds pointer. Contract checks
 * (abort = finding): a failing call sets *err and returns no reader; an
 * opened shard's blocks lie inside data.bin, hold block_size examples (the
 * last one the rest) and add up to the count; locate agrees with the block
 * arithmetic; an uncompressed block equals its stored bytes; out-of-range
 * shards and blocks are refused.
 *
 * Build: make fuzz (clang -fsanitize=fuzzer,address,undefined; the link
 * needs -ljansson). Run: tests/fuzz/run.sh SECONDS. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/codec.h"
#include "core/common.h"
#include "formats/atlas/atlas.h"

/* The window blocks are read through (one for the whole test). */
static ds_view t_view;

#define MAX_BLOCKS 10000
/* Cap each decompressed block well below the reader's 1 GiB so that a
 * frame declaring a huge size does not become a spurious out-of-memory
 * report; the limit logic is the same code. */
#define FUZZ_MAX_OUT ((uint64_t)64 << 20)

static char dir[64];
static const char *const files[] = {"meta.json", "index.npy", "zstd_dict.bin",
                                    "data.bin"};

#define FUZZ_HARNESS "fuzz_atlas"
#include "fuzz_common.h"
/* The contract broken at example or block n. */
#define fail(what, n) fuzz_fail("%s (%llu)", (what), (unsigned long long)(n))
#define expect_err(err, n) \
  fuzz_expect_err((err), "error without a message (%llu)", (unsigned long long)(n))
#define touch fuzz_touch

/* dir/name into buf. */
static const char *file_path(char *buf, size_t cap, const char *name) {
  snprintf(buf, cap, "%s/%s", dir, name);
  return buf;
}

/* Remove the shard files and the directory at exit. */
static void cleanup(void) {
  char p[128];
  for (size_t i = 0; i < sizeof files / sizeof *files; i++)
    unlink(file_path(p, sizeof p, files[i]));
  rmdir(dir);
}

/* The per-process directory, made on first use. */
static void make_dir(void) {
  if (dir[0]) return;
  snprintf(dir, sizeof dir, "/tmp/fuzz_atlas.XXXXXX");
  if (!mkdtemp(dir)) fail("cannot create a temporary directory", 0);
  atexit(cleanup);
}

/* Write (or, when p is NULL, remove) one file of the shard. */
static void put(const char *name, const uint8_t *p, size_t n) {
  char path[128];
  file_path(path, sizeof path, name);
  unlink(path);
  if (!p) return;
  FILE *f = fopen(path, "wb");
  if (!f) fail("cannot write a shard file", n);
  if (n && fwrite(p, 1, n, f) != n) fail("short write", n);
  fclose(f);
}

/* Take a u16-length-prefixed piece of the input (clamped). */
static size_t take_len(const uint8_t *hdr, size_t *left) {
  size_t n = (size_t)(hdr[0] | hdr[1] << 8);
  if (n > *left) n = *left;
  *left -= n;
  return n;
}

/* Every block of shard 0: ranges, counts, contents. */
static void read_blocks(const atlas_reader *r) {
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  z.max_out = FUZZ_MAX_OUT;
  ds_buf buf = {0};
  char *err = NULL;
  uint64_t nb = atlas_num_blocks(r, 0), sum = 0, prev_end = 0;
  int raw = atlas_shard_strategy(r, 0) == 0;
  for (uint64_t b = 0; b < nb && b < MAX_BLOCKS; b++) {
    uint64_t off, len, e = atlas_block_examples(r, 0, b);
    if (atlas_block_range(r, 0, b, &off, &len, &err)) fail("range of a block failed", b);
    if (off != prev_end) fail("blocks not back to back", b);
    prev_end = off + len;
    if (e == 0 || e > atlas_block_size(r, 0)) fail("block example count", b);
    sum += e;
    /* a data.bin cut short opens (issue 11.10): the blocks past its end
     * fail when read, the intact ones read */
    int past_end = off + len > atlas_data_size(r, 0);
    const uint8_t *sp, *p;
    size_t sn, n;
    int src = atlas_block_stored(r, &t_view, 0, b, &sp, &sn, &err);
    if (past_end && !src) fail("a block past the end of data.bin read", b);
    if (src) expect_err(&err, b);
    else if (sn != len) fail("stored length differs from the range", b);
    else touch(sp, sn);
    if (atlas_block(r, &z, &t_view, 0, b, &buf, &p, &n, &err)) {
      expect_err(&err, b);
      if (!src && raw) fail("uncompressed block failed but its stored bytes did not", b);
      continue;
    }
    if (src) fail("block worked but its stored bytes failed", b);
    if (n && !p) fail("NULL block with a length", b);
    if (n > FUZZ_MAX_OUT) fail("block above the output limit", b);
    touch(p, n);
    if (raw && (n != sn || (n && memcmp(p, sp, n) != 0)))
      fail("uncompressed block differs from its stored bytes", b);
  }
  if (nb <= MAX_BLOCKS && sum != atlas_count(r)) fail("block counts do not add up", sum);
  const uint8_t *p;
  size_t n;
  if (atlas_block(r, &z, &t_view, 0, nb, &buf, &p, &n, &err) == 0) fail("block past the end read", nb);
  expect_err(&err, nb);
  if (atlas_block(r, &z, &t_view, 1, 0, &buf, &p, &n, &err) == 0) fail("missing shard read", 1);
  expect_err(&err, 1);
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
}

/* locate at a few indexes agrees with the shard arithmetic. */
static void check_locate(const atlas_reader *r) {
  uint64_t count = atlas_count(r), bs = atlas_block_size(r, 0);
  uint64_t probes[] = {0, count / 2, count ? count - 1 : 0, count};
  for (size_t i = 0; i < sizeof probes / sizeof *probes; i++) {
    uint64_t g = probes[i], block, pos;
    size_t shard;
    atlas_locate(r, g, &shard, &block, &pos);
    if (g >= count) {
      if (shard != atlas_nshards(r)) fail("locate past the end found a shard", g);
      continue;
    }
    if (shard != 0 || block != g / bs || pos != g % bs ||
        pos >= atlas_block_examples(r, 0, block))
      fail("locate disagrees with the block arithmetic", g);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 7) return 0;
  make_dir();
  uint8_t flags = data[0];
  size_t left = size - 7;
  size_t nm = take_len(data + 1, &left), ni = take_len(data + 3, &left);
  size_t nd = flags & 2 ? take_len(data + 5, &left) : 0;
  const uint8_t *p = data + 7;
  put("meta.json", p, nm);
  put("index.npy", p + nm, ni);
  put("zstd_dict.bin", flags & 2 ? p + nm + ni : NULL, nd);
  put("data.bin", flags & 1 ? NULL : p + nm + ni + nd, left);

  char dict[128];
  file_path(dict, sizeof dict, "zstd_dict.bin");
  atlas_reader *r = NULL;
  char *err = NULL;
  if (atlas_open_dict(dir, flags & 4 ? dict : NULL, &r, &err)) {
    if (r) fail("failed open returned a reader", 0);
    expect_err(&err, 0);
    return 0;
  }
  free(err); /* tolerated on success, but must not leak */
  if (!r || !atlas_is_bare_shard(r) || atlas_nshards(r) != 1) fail("not one bare shard", 0);
  if (atlas_count(r) != atlas_shard_count(r, 0)) fail("count differs from the shard's", 0);
  if (atlas_has_data(r, 0) == !!(flags & 1)) fail("data.bin presence", 0);
  if (atlas_data_size(r, 0) != (flags & 1 ? 0 : left)) fail("data.bin size", left);
  check_locate(r);
  read_blocks(r);
  atlas_close(r);
  return 0;
}
