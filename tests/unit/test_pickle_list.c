/* test_pickle_list.c - the fast list decoder (decoders/pickle_list.c)
 * against the general one (decoders/pickle.c): whenever the fast path
 * accepts a pickle, the value must be the one ds_pickle_decode gives (same
 * JSON), on hand-made pickles of every protocol's list/dict/tuple opcodes,
 * on every pickle of tests/fixtures/pickle, on every block of every atlas
 * fixture, and on random mutations of those; and the shapes it must
 * decline (nested or shared containers, globals, damage) are declined. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "core/value.h"
#include "formats/atlas/atlas.h"
#include "decoders/pickle.h"
#include "decoders/pickle_list.h"

/* The window blocks are read through (one for the whole test). */
static ds_view t_view;

#define PFIX "tests/fixtures/pickle/"
#define AFIX "tests/fixtures/upstream/atlas/"

static ds_pickle_list g_pl;
static ds_arena g_a1, g_a2;

/* JSON text of v (malloc'd; "" when it cannot be written). */
static char *json_of(const ds_value *v) { return fx_json_of(v, ""); }

static ds_arena g_a3, g_a4;
static size_t g_prefix_taken, g_prefix_early;

/* ds_pickle_list_prefix for example k of a pickle the example walk has
 * accepted: declined, or the general decoder's item k (`want`). The same
 * walk with the second half of the bytes overwritten by an opcode no walk
 * takes must decline or give the same: taken, it stopped before the
 * second half. Counts both. */
static int compare_prefix(const uint8_t *p, size_t n, size_t k, const ds_value *want,
                          char *why, size_t cap) {
  uint8_t *q = n ? malloc(n) : NULL;
  if (!q) return 1;
  memcpy(q, p, n);
  char *b = json_of(want);
  int same = 1;
  for (int cut = 0; cut < 2 && same; cut++) {
    ds_value ex;
    ds_arena_reset(&g_a4);
    if (cut) memset(q + n / 2, 0xff, n - n / 2);
    if (ds_pickle_list_prefix(&g_pl, q, n, &g_a4, k, &ex) != 0) continue;
    if (cut) g_prefix_early++;
    else g_prefix_taken++;
    char *a = json_of(&ex);
    same = strcmp(a, b) == 0;
    if (!same)
      snprintf(why, cap, "prefix%s example %zu: %.200s | general %.200s", cut ? " (cut)" : "",
               k, a, b);
    free(a);
  }
  free(b);
  free(q);
  return same;
}

/* ds_pickle_list_example for example k against item k of the general
 * decoder's value: 1 same (or declined where allowed), 0 differs. When
 * the whole-list fast path accepted (`full`), it must accept too. */
static int compare_example(const uint8_t *p, size_t n, size_t k, int full,
                           char *why, size_t cap) {
  ds_value ex, slow;
  size_t count = 0;
  ds_arena_reset(&g_a3);
  if (ds_pickle_list_example(&g_pl, p, n, &g_a3, k, &ex, &count) != 0) {
    if (full) snprintf(why, cap, "example %zu declined where the list was taken", k);
    return !full;
  }
  char *err = NULL;
  ds_arena_reset(&g_a2);
  if (ds_pickle_decode(p, n, NULL, &g_a2, &slow, &err) != 0 || slow.type != DS_V_LIST ||
      slow.u.list.n != count) {
    snprintf(why, cap, "example %zu accepted (count %zu), general: %s", k, count,
             err ? err : "another count or not a list");
    free(err);
    return 0;
  }
  if (k >= count) return 1;
  char *a = json_of(&ex), *b = json_of(&slow.u.list.items[k]);
  int same = strcmp(a, b) == 0;
  if (!same) snprintf(why, cap, "example %zu: fast %.200s | general %.200s", k, a, b);
  free(a);
  free(b);
  return same && compare_prefix(p, n, k, &slow.u.list.items[k], why, cap);
}

/* 1 fast accepted, 0 declined, -1 accepted but differs from the general
 * decoder (or the general decoder failed); ds_pickle_list_example is
 * checked for the first, middle, last and one-past-the-end examples. */
static int compare(const uint8_t *p, size_t n, char *why, size_t cap) {
  ds_value fast, slow;
  ds_arena_reset(&g_a1);
  ds_arena_reset(&g_a2);
  int full = ds_pickle_list_decode(&g_pl, p, n, &g_a1, &fast) == 0;
  size_t cnt = full && fast.type == DS_V_LIST ? fast.u.list.n : 3;
  size_t ks[4] = {0, cnt / 2, cnt ? cnt - 1 : 0, cnt};
  for (int i = 0; i < 4; i++)
    if (!compare_example(p, n, ks[i], full, why, cap)) return -1;
  if (!full) return 0;
  char *err = NULL;
  ds_arena_reset(&g_a2);
  if (ds_pickle_decode(p, n, NULL, &g_a2, &slow, &err) != 0) {
    snprintf(why, cap, "fast accepted, general failed: %s", err ? err : "?");
    free(err);
    return -1;
  }
  char *a = json_of(&fast), *b = json_of(&slow);
  int same = strcmp(a, b) == 0 && fast.type == slow.type;
  if (!same) snprintf(why, cap, "fast %.200s | general %.200s", a, b);
  free(a);
  free(b);
  return same ? 1 : -1;
}

/* Flip bytes of p at random positions; every accepted mutant must match
 * the general decoder. Returns the mismatches. */
static uint64_t g_rng = 0x243F6A8885A308D3ull;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}
static int mutants(const uint8_t *p, size_t n, int rounds, size_t *accepted) {
  if (!n) return 0;
  uint8_t *q = malloc(n);
  int bad = 0;
  char why[512];
  for (int r = 0; r < rounds && q; r++) {
    memcpy(q, p, n);
    int k = 1 + (int)(rnd() % 3);
    for (int j = 0; j < k; j++) q[rnd() % n] = (uint8_t)rnd();
    size_t m = rnd() % 4 == 0 ? rnd() % n : n; /* sometimes cut short */
    int c = compare(q, m, why, sizeof why);
    if (c < 0) {
      if (bad++ == 0) check_note("    mutant: %s\n", why);
    }
    if (c > 0) (*accepted)++;
  }
  free(q);
  return bad;
}

/* ------------------------------------------------------ hand-made */

typedef struct hcase {
  const char *name;
  const char *bytes; /* the pickle */
  size_t n;
  int accept;        /* 1: the fast path must take it */
} hcase;

#define H(name, s, acc) {name, s, sizeof(s) - 1, acc}

static const hcase hand[] = {
    /* protocol 2: BINPUT memo, BININT1/2/J, str as BINUNICODE, MARK+APPENDS */
    H("p2 list of dicts",
      "\x80\x02\x5d\x71\x00\x28\x7d\x71\x01\x28\x58\x02\x00\x00\x00\x69\x64\x71"
      "\x02\x4b\x01\x58\x04\x00\x00\x00\x74\x65\x78\x74\x71\x03\x58\x03\x00\x00"
      "\x00\x61\x62\x63\x71\x04\x75\x7d\x71\x05\x28\x68\x02\x4d\x00\x01\x68\x03"
      "\x58\x00\x00\x00\x00\x71\x06\x75\x65\x2e", 1),
    /* protocol 4: FRAME, MEMOIZE, SHORT_BINUNICODE, BINFLOAT, None, bools */
    H("p4 list of dicts",
      "\x80\x04\x95\x35\x00\x00\x00\x00\x00\x00\x00\x5d\x94\x28\x7d\x94\x28\x8c"
      "\x01\x61\x94\x4a\xff\xff\xff\xff\x8c\x01\x62\x94\x47\x3f\xf8\x00\x00\x00"
      "\x00\x00\x00\x8c\x01\x63\x94\x4e\x8c\x01\x64\x94\x88\x75\x7d\x94\x28\x68"
      "\x02\x89\x68\x03\x8a\x01\x80\x75\x65\x2e", 1),
    /* one example: APPEND; one pair: SETITEM; an empty dict */
    H("APPEND and SETITEM",
      "\x80\x04\x5d\x94\x28\x7d\x94\x8c\x01\x6b\x94\x4b\x07\x73\x7d\x94\x65\x2e", 1),
    H("single APPEND",
      "\x80\x04\x5d\x94\x7d\x94\x8c\x01\x6b\x94\x4b\x07\x73\x61\x2e", 1),
    H("empty list",
      "\x80\x04\x5d\x94\x2e", 1),
    /* tuples of scalars, lists of scalars, scalars as examples */
    H("tuples",
      "\x80\x04\x5d\x94\x28\x4b\x01\x4b\x02\x86\x94\x29\x28\x4b\x01\x4b\x02\x4b"
      "\x03\x4b\x04\x74\x94\x4b\x05\x85\x94\x65\x2e", 1),
    H("lists and scalars",
      "\x80\x04\x5d\x94\x28\x5d\x94\x28\x4b\x01\x4b\x02\x65\x5d\x94\x4b\x03\x61"
      "\x4b\x09\x8c\x01\x78\x94\x65\x2e", 1),
    H("bytes and LONG1",
      "\x80\x04\x5d\x94\x28\x43\x02\x00\xff\x8a\x08\x00\x00\x00\x00\x00\x00\x00"
      "\x80\x8a\x00\x8a\x02\xff\x7f\x65\x2e", 1),
    H("non-ASCII UTF-8",
      "\x80\x04\x5d\x94\x8c\x03\xc3\xa9\x78\x94\x61\x2e", 1),
    /* must decline */
    H("invalid UTF-8",
      "\x80\x04\x5d\x94\x8c\x02\xc3\x28\x94\x61\x2e", 0),
    H("nested dict",
      "\x80\x04\x5d\x94\x7d\x94\x8c\x01\x6b\x94\x7d\x94\x73\x61\x2e", 0),
    H("shared example",
      "\x80\x04\x5d\x94\x28\x7d\x94\x68\x01\x65\x2e", 0),
    H("self-reference",
      "\x80\x04\x5d\x94\x68\x00\x61\x2e", 0),
    H("top-level dict",
      "\x80\x04\x7d\x94\x2e", 0),
    H("top-level int",
      "\x80\x04\x4b\x01\x2e", 0),
    H("global",
      "\x80\x04\x5d\x94\x8c\x08\x62\x75\x69\x6c\x74\x69\x6e\x73\x8c\x03\x73\x65"
      "\x74\x93\x29\x52\x61\x2e", 0),
    H("LONG1 of 9 bytes",
      "\x80\x04\x5d\x94\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00\x61\x2e", 0),
    H("BINPUT out of order",
      "\x80\x02\x5d\x71\x05\x4b\x01\x61\x2e", 0),
    H("no STOP",
      "\x80\x04\x5d\x94\x28\x4b\x01\x65", 0),
    H("open MARK at STOP",
      "\x80\x04\x5d\x94\x28\x4b\x01\x2e", 0),
    H("two values at STOP",
      "\x80\x04\x5d\x94\x4b\x01\x2e", 0),
    H("odd SETITEMS",
      "\x80\x04\x5d\x94\x7d\x94\x28\x4b\x01\x75\x2e", 0),
    H("FRAME too long",
      "\x80\x04\x95\xff\x00\x00\x00\x00\x00\x00\x00\x5d\x94\x2e", 0),
    H("PROTO 6",
      "\x80\x06\x5d\x94\x2e", 0),
    H("APPENDS to a dict",
      "\x80\x04\x5d\x94\x7d\x94\x28\x4b\x01\x65\x2e", 0),
    H("string past the end",
      "\x80\x04\x5d\x94\x8c\x09\x61\x62\x63", 0),
};

/* Example mode builds one example: text elsewhere is not checked, and the
 * example asked for comes back as the general decoder has it. */
static void test_example_mode(void) {
  /* [{"k": 1}, "\xc3(" (invalid), {"k": 3}] */
  static const uint8_t p[] = {0x80, 0x04, ']', 0x94, '(', '}', 0x94, 0x8c, 0x01, 'k', 0x94,
                              'K', 0x01, 's', 0x8c, 0x02, 0xc3, '(', 0x94, '}', 0x94, 'h', 0x02,
                              'K', 0x03, 's', 'e', '.'};
  ds_value v, ex;
  size_t count = 0;
  ds_arena_reset(&g_a1);
  CHECK(ds_pickle_list_decode(&g_pl, p, sizeof p, &g_a1, &v) == 1);
  CHECK(ds_pickle_list_example(&g_pl, p, sizeof p, &g_a1, 2, &ex, &count) == 0 && count == 3);
  char *j = json_of(&ex);
  CHECK_STR(j, "{\"k\":3}");
  free(j);
  CHECK(ds_pickle_list_example(&g_pl, p, sizeof p, &g_a1, 1, &ex, &count) == 1);
  CHECK(ds_pickle_list_example(&g_pl, p, sizeof p, &g_a1, 7, &ex, &count) == 0 && count == 3);
  char why[512];
  for (size_t k = 0; k < 4; k++)
    CHECK_MSG(compare_example(p, sizeof p, k, 0, why, sizeof why), "%s", why);
}

static void test_hand(void) {
  char why[512];
  for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
    const hcase *h = &hand[i];
    int c = compare((const uint8_t *)h->bytes, h->n, why, sizeof why);
    if (h->accept)
      CHECK_MSG(c == 1, "%s: %s", h->name, c == 0 ? "declined" : why);
    else
      CHECK_MSG(c == 0, "%s: %s", h->name, c == 1 ? "accepted" : why);
  }
  /* the values themselves, for one case */
  ds_value v;
  ds_arena_reset(&g_a1);
  const hcase *h = &hand[1];
  CHECK(ds_pickle_list_decode(&g_pl, (const uint8_t *)h->bytes, h->n, &g_a1, &v) == 0);
  char *j = json_of(&v);
  CHECK_STR(j, "[{\"a\":-1,\"b\":1.5,\"c\":null,\"d\":true},{\"a\":false,\"b\":-128}]");
  free(j);
}

/* ------------------------------------------------------ fixtures */

static uint8_t *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long s = ftell(f);
  rewind(f);
  uint8_t *p = malloc(s > 0 ? (size_t)s : 1);
  if (p && fread(p, 1, (size_t)s, f) != (size_t)s) {
    free(p);
    p = NULL;
  }
  fclose(f);
  *n = (size_t)s;
  return p;
}

static void test_pickle_fixtures(void) {
  DIR *d = opendir(PFIX);
  CHECK(d != NULL);
  if (!d) return;
  struct dirent *e;
  size_t files = 0, accepted = 0, macc = 0;
  int bad = 0, mbad = 0;
  char why[512];
  while ((e = readdir(d)) != NULL) {
    size_t l = strlen(e->d_name);
    if (l < 4 || strcmp(e->d_name + l - 4, ".pkl") != 0) continue;
    char path[600];
    snprintf(path, sizeof path, PFIX "%s", e->d_name);
    size_t n;
    uint8_t *p = read_all(path, &n);
    if (!p) continue;
    files++;
    int c = compare(p, n, why, sizeof why);
    if (c < 0 && bad++ == 0) check_note("    %s: %s\n", e->d_name, why);
    if (c > 0) accepted++;
    mbad += mutants(p, n, 40, &macc);
    free(p);
  }
  closedir(d);
  CHECK_MSG(files >= 60 && bad == 0, "%zu pickle fixtures, %d differ", files, bad);
  CHECK_MSG(accepted > 0, "the fast path took %zu of %zu pickle fixtures", accepted, files);
  CHECK_MSG(mbad == 0, "%d mutated pickle fixtures differ (%zu accepted)", mbad, macc);
}

static void test_atlas_fixtures(void) {
  static const char *const cases[] = {"none", "standard", "shared_dict", "per_shard_dict",
                                      "single_shard", "mid", "many_shards", "types",
                                      "types_p5", "numpy2_p4", "numpy2_p5", "exotic",
                                      "index_u8_255", "index_u16_256", "shared_fallback"};
  size_t blocks = 0, accepted = 0, macc = 0;
  int bad = 0, mbad = 0;
  char why[512];
  g_prefix_taken = g_prefix_early = 0;
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char path[256], *err = NULL;
    snprintf(path, sizeof path, AFIX "%s", cases[i]);
    atlas_reader *r;
    if (atlas_open(path, &r, &err)) {
      CHECK_MSG(0, "%s: %s", path, err);
      free(err);
      continue;
    }
    for (size_t s = 0; s < atlas_nshards(r); s++)
      for (uint64_t b = 0; b < atlas_num_blocks(r, s); b++) {
        const uint8_t *p;
        size_t n;
        if (atlas_block(r, &z, &t_view, s, b, &buf, &p, &n, &err)) {
          free(err);
          err = NULL;
          continue;
        }
        blocks++;
        for (uint64_t k = 1; k + 1 < atlas_block_examples(r, s, b); k++)
          if (!compare_example(p, n, (size_t)k, 0, why, sizeof why) && bad++ == 0)
            check_note("    %s/%zu block %llu: %s\n", cases[i], s, (unsigned long long)b, why);
        int c = compare(p, n, why, sizeof why);
        if (c < 0 && bad++ == 0) check_note("    %s/%zu block %llu: %s\n", cases[i], s,
                                        (unsigned long long)b, why);
        if (c > 0) accepted++;
        size_t t0 = g_prefix_taken, e0 = g_prefix_early;
        if (b < 4) mbad += mutants(p, n, 20, &macc);
        g_prefix_taken = t0; /* mutants count apart */
        g_prefix_early = e0;
      }
    atlas_close(r);
  }
  ds_buf_free(&buf);
  ds_zstd_ctx_free(&z);
  CHECK_MSG(blocks > 100 && bad == 0, "%zu atlas fixture blocks, %d differ", blocks, bad);
  CHECK_MSG(accepted * 2 > blocks, "the fast path took %zu of %zu blocks", accepted, blocks);
  CHECK_MSG(mbad == 0, "%d mutated blocks differ (%zu accepted)", mbad, macc);
  /* the prefix walk is taken, and often stops in the first half */
  printf("    prefix walks: %zu taken, %zu stopped in the first half\n", g_prefix_taken,
         g_prefix_early);
  CHECK_MSG(g_prefix_taken > blocks && g_prefix_early * 4 > g_prefix_taken,
            "prefix walks: %zu taken, %zu stopped early", g_prefix_taken, g_prefix_early);
}

/* The scratch grows past its first size and is reused. */
static void test_big(void) {
  ds_buf b = {0};
  ds_buf_append(&b, "\x80\x04]\x94", 4);
  for (int batch = 0; batch < 3; batch++) {
    ds_buf_append(&b, "(", 1);
    for (int i = 0; i < 1000; i++) {
      ds_buf_append(&b, "}\x94(\x8c\x01k\x94M", 8);
      uint8_t le[2] = {(uint8_t)i, (uint8_t)(i >> 8)};
      ds_buf_append(&b, le, 2);
      ds_buf_append(&b, "u", 1);
    }
    ds_buf_append(&b, "e", 1);
  }
  ds_buf_append(&b, ".", 1);
  char why[512];
  CHECK_MSG(compare(b.data, b.len, why, sizeof why) == 1, "3000 examples: %s", why);
  ds_value v;
  ds_arena_reset(&g_a1);
  CHECK(ds_pickle_list_decode(&g_pl, b.data, b.len, &g_a1, &v) == 0 && v.u.list.n == 3000);
  ds_buf_free(&b);
}

int main(void) {
  test_hand();
  test_example_mode();
  test_big();
  test_pickle_fixtures();
  test_atlas_fixtures();
  ds_pickle_list_free(&g_pl);
  ds_arena_free(&g_a1);
  ds_arena_free(&g_a2);
  ds_arena_free(&g_a3);
  ds_arena_free(&g_a4);
  return check_exit();
}
