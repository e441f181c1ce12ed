# sqlite-datasets build.
#   make            build/datasets.so and one .so per format (each linked
#                   from build/libds.a, so it needs only its format's libraries)
#   make test       install missing packages, build, run every test
#                   (T=name runs only the tests whose name contains it)
#   make demo       install missing packages, build, run sql/demo.sql
#   make asan       the whole test suite under AddressSanitizer + UBSan
#   make fuzz       libFuzzer harnesses (clang); FUZZ_SECONDS=N runs each
#   make bench      the benchmark workloads (data generated outside the tree)
#   make clean
# BUILD selects the output folder (the asan target uses build/asan).

BUILD   ?= build
CC      ?= cc
FORMATS := bagz datadings atlas bcolz
OPT     ?= -O2 -g
# -MMD -MP: each object gets a .d file listing the headers it includes
CFLAGS  := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(OPT) -fPIC -Isrc \
           -MMD -MP $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)
LIBS    := -ljansson -lmsgpackc -lb2 -lmd -lblosc -lzstd -lpthread -lm

# Layers (ARCHITECTURE.md): core and formats know no SQLite; sql and vtab
# are the SQLite layer.
SRCS      := $(wildcard src/core/*.c src/formats/*.c src/sql/*.c src/vtab/*.c)
# Objects for the loadable extensions (SQLite reached through sqlite3_api),
# gathered in an archive: a library's link pulls in only the objects its
# entry point reaches, and --as-needed records only the shared libraries
# those objects call (bagz.so: zstd; datadings.so: msgpack-c, libb2, libmd).
EXT_OBJS  := $(SRCS:%.c=$(BUILD)/ext/%.o)
EXT_LIB   := $(BUILD)/libds.a
# The same sources compiled against libsqlite3 directly (unit tests, fuzzers)
CORE_OBJS := $(SRCS:%.c=$(BUILD)/core/%.o)
LIBS_SO   := $(BUILD)/datasets.so $(FORMATS:%=$(BUILD)/%.so)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(TOOL_SRCS:tests/tools/%.c=$(BUILD)/tools/%)

.PHONY: all deps test demo asan fuzz bench clean unit
.SECONDARY:
all: $(LIBS_SO)

deps:
	@tools/deps.sh build test

# Loadable libraries export only their sqlite3_*_init entry point, so two of
# them loaded into one process never bind to each other's symbols.
$(BUILD)/ext/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fvisibility=hidden -c $< -o $@

$(BUILD)/core/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DSQLITE_CORE -c $< -o $@

$(EXT_LIB): $(EXT_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/%.so: ext/%.c $(EXT_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MF $(BUILD)/ext/$*.d -MT $@ -fvisibility=hidden -shared -o $@ $< \
	    $(LDFLAGS) -Wl,--as-needed $(EXT_LIB) $(LIBS)

$(BUILD)/unit/%: tests/unit/%.c tests/unit/check.h $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MF $@.d -MT $@ -DSQLITE_CORE -Itests/unit -o $@ $< $(CORE_OBJS) $(LDFLAGS) -lsqlite3 -ljansson $(LIBS)

$(BUILD)/tools/%: tests/tools/%.c $(CORE_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MF $@.d -MT $@ -DSQLITE_CORE -o $@ $< $(CORE_OBJS) $(LDFLAGS) -lsqlite3 $(LIBS)

unit: $(UNIT_BINS) $(TOOL_BINS)

# tools/check_layers.sh runs first and counts in the totals (tests/run.sh).
test: deps
	@$(MAKE) --no-print-directory all unit
	@tests/run.sh $(BUILD) $(T)

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

build/fuzz/obj/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -MMD -MP -fsanitize=fuzzer-no-link -c $< -o $@

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJS)
	clang $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) -lsqlite3 $(LIBS)

bench:
	@tools/deps.sh build test bench
	@$(MAKE) --no-print-directory all
	@bench/run.sh

clean:
	rm -rf build

# Header dependencies written by -MMD (absent before the first build).
-include $(shell find $(BUILD) build/fuzz -name '*.d' 2>/dev/null)
