# sqlite-datasets build.
#   make            build/datasets.so and one .so per format
#   make test       install missing packages, build, run every test
#   make demo       install missing packages, build, run sql/demo.sql
#   make asan       the whole test suite under AddressSanitizer + UBSan
#   make tsan       the C tests (threads, read-ahead) under ThreadSanitizer
#   make fuzz       libFuzzer harnesses (clang); FUZZ_SECONDS=N runs each
#   make bench      the benchmark workloads (data generated outside the tree)
#   make clean
# BUILD selects the output folder (the asan target uses build/asan).

BUILD   ?= build
CC      ?= cc
FORMATS := bagz datadings atlas bcolz
OPT     ?= -O2 -g
CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(OPT) -fPIC -Isrc \
           $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
LIBS    := -ljansson -lmsgpackc -lb2 -lmd -lblosc -lzstd -lpthread -lm

SRCS      := $(wildcard src/core/*.c src/formats/*.c src/vtab/*.c)
# Objects for the loadable extensions (SQLite reached through sqlite3_api)
EXT_OBJS  := $(SRCS:%.c=$(BUILD)/ext/%.o)
# The same sources compiled against libsqlite3 directly (unit tests, fuzzers)
CORE_OBJS := $(SRCS:%.c=$(BUILD)/core/%.o)
LIBS_SO   := $(BUILD)/datasets.so $(FORMATS:%=$(BUILD)/%.so)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

.PHONY: all deps test demo asan tsan fuzz bench clean unit
.SECONDARY:
all: $(LIBS_SO)

deps:
	@tools/deps.sh build test

# Loadable libraries export only their sqlite3_*_init entry point, so two of
# them loaded into one process never bind to each other's symbols.
$(BUILD)/ext/%.o: %.c $(wildcard src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/core/%.o: %.c $(wildcard src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSQLITE_CORE -c $< -o $@

$(BUILD)/%.so: ext/%.c $(EXT_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -shared -o $@ $< $(EXT_OBJS) $(LDFLAGS) $(LIBS)

$(BUILD)/unit/%: tests/unit/%.c tests/unit/check.h $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSQLITE_CORE -Itests/unit -o $@ $< $(CORE_OBJS) $(LDFLAGS) -lsqlite3 -ljansson $(LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSQLITE_CORE -o $@ $< $(CORE_OBJS) $(LDFLAGS) -lsqlite3 $(LIBS)

unit: $(UNIT_BINS) $(TOOL_BINS)

test: deps
	@$(MAKE) --no-print-directory all unit
	@tests/run.sh $(BUILD)

demo: deps
	@$(MAKE) --no-print-directory all
	sqlite3 -bail -header -column :memory: -cmd '.load $(BUILD)/datasets' < sql/demo.sql

# The sanitizer build loads into the stock sqlite3 shell and python3 via
# LD_PRELOAD of gcc's libasan (see tests/run.sh).
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
asan: deps
	@$(MAKE) --no-print-directory BUILD=build/asan OPT="-O1 -g" \
	    EXTRA_CFLAGS="$(ASAN_FLAGS)" EXTRA_LDFLAGS="$(ASAN_FLAGS)" all unit
	@DS_SANITIZE=1 tests/run.sh build/asan

# make tsan: the C test programs (test_threads runs several connections on
# several threads, with the bagz and atlas read-ahead threads) built with
# -fsanitize=thread; any data race ends a program with a report and fails.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
tsan: deps
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT="-O1 -g" \
	    EXTRA_CFLAGS="$(TSAN_FLAGS)" EXTRA_LDFLAGS="$(TSAN_FLAGS)" unit
	@TSAN_OPTIONS="halt_on_error=1 exitcode=66" tests/run.sh build/tsan unit

# make fuzz: build every harness (the sources are compiled once, with
# clang's sanitizers); FUZZ_SECONDS=N then runs each for N seconds.
FUZZ_SECONDS ?= 0
FUZZ_BINS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_OBJS := $(patsubst %.c,build/fuzz/obj/%.o,$(filter-out src/vtab/%,$(SRCS)))
FUZZ_FLAGS := -std=c11 -D_GNU_SOURCE -DSQLITE_CORE -Isrc -g -O1 \
              -fsanitize=address,undefined -fno-sanitize-recover=all
fuzz:
	@tools/deps.sh build fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BINS)
	@if [ "$(FUZZ_SECONDS)" -gt 0 ]; then tests/fuzz/run.sh $(FUZZ_SECONDS); fi

build/fuzz/obj/%.o: %.c $(wildcard src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) -lsqlite3 $(LIBS)

bench:
	@tools/deps.sh build test bench
	@$(MAKE) --no-print-directory all
	@bench/run.sh

clean:
	rm -rf build
