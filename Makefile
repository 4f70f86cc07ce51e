# rankscope — one GNU Makefile for everything. Out-of-tree build in $(BUILD)/; every folder becomes
# $(BUILD)/lib<folder>.a and binaries/tests link those archives. See README.md for the two
# commands that matter (make demo, make test) and docs/operations.md for the rest.

BUILD     ?= build
CUDA_HOME ?= /usr/local/cuda
HAVE_CUPTI := $(wildcard $(CUDA_HOME)/include/cupti.h)
CC        ?= cc
PREFIX    ?= /usr/local
VERSION   := 0.1.0
comma     := ,

# Debian packages (docs/dependencies.md says why each): to build and run, and make demo (make
# deps); what make test needs on top (make test-deps, which make test runs); development tools
# (make dev-deps: make format, make fuzz-*, pprof's web UI). scripts/deps.sh installs the missing.
BUILD_DEB_PACKAGES := build-essential pkg-config libnng-dev libuv1-dev liblmdb-dev \
                      libprotobuf-c-dev protobuf-c-compiler libjansson-dev libcurl4-openssl-dev \
                      node-llhttp zlib1g-dev libmbedtls-dev
DEB_PACKAGES      := $(BUILD_DEB_PACKAGES) python3
TEST_DEB_PACKAGES := python3-yaml curl golang-go nodejs npm
TEST_DEB_PACKAGES += openssl
TEST_DEB_PACKAGES += chromium
DEV_DEB_PACKAGES  := clang-format clang graphviz golang-go

# pkg-config where the .pc exists; Debian's libnng-dev ships none, so fall back to plain -l.
pc_cflags = $(shell pkg-config --cflags $(1) 2>/dev/null)
pc_libs   = $(or $(shell pkg-config --libs $(1) 2>/dev/null),$(2))

DEP_CFLAGS := $(call pc_cflags,libuv) $(call pc_cflags,lmdb) $(call pc_cflags,libprotobuf-c) \
              $(call pc_cflags,jansson) $(call pc_cflags,libcurl) $(call pc_cflags,nng)
LIB_UV     := $(call pc_libs,libuv,-luv)
LIB_LMDB   := $(call pc_libs,lmdb,-llmdb)
LIB_PBC    := $(call pc_libs,libprotobuf-c,-lprotobuf-c)
LIB_JANSSON:= $(call pc_libs,jansson,-ljansson)
LIB_CURL   := $(call pc_libs,libcurl,-lcurl)
LIB_NNG    := $(call pc_libs,nng,-lnng)

LLHTTP_SRC := /usr/share/llhttp
LLHTTP_INC := /usr/share/include/llhttp

WARN    := -Wall -Wextra -Wmissing-prototypes -Wstrict-prototypes -Wshadow -Wformat=2 -Wvla \
           -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN    += -Werror
endif
OPT     ?= -O2 -g
ifeq ($(SAN),1)
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDSAN   := -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
OPT     := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
LDSAN   := -fsanitize=thread
endif
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE -DRS_VERSION='"$(VERSION)"' $(OPT) $(WARN) -MMD -MP \
              -I. -I$(BUILD)/gen $(DEP_CFLAGS) $(CFLAGS)
LDFLAGS_ALL := -Wl,--as-needed $(LDSAN) $(LDFLAGS)

# ---- sources ---------------------------------------------------------------------------------
lib_srcs = $(filter-out %/main.c,$(shell find $(1) -name '*.c' -not -path '*/collector/*' | sort))
COMMON_SRC  := $(call lib_srcs,common)
PROTO_SRC   := $(call lib_srcs,proto)
STORAGE_SRC := $(call lib_srcs,storage)
QUERY_SRC   := $(call lib_srcs,query)
SERVER_SRC  := $(call lib_srcs,server)
AGENT_SRC   := $(call lib_srcs,node-agent)
IMPORT_SRC  := $(call lib_srcs,import)
CLI_SRC     := $(call lib_srcs,cli)
SIM_SRC     := $(call lib_srcs,sim)
PROTOS      := rankscope pprof
PB_C        := $(patsubst %,$(BUILD)/gen/%.pb-c.c,$(PROTOS))
PB_H        := $(patsubst %,$(BUILD)/gen/%.pb-c.h,$(PROTOS))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
LIBCOMMON  := $(BUILD)/libcommon.a
LIBPROTO   := $(BUILD)/libproto.a
LIBSTORAGE := $(BUILD)/libstorage.a
LIBQUERY   := $(BUILD)/libquery.a
LIBSERVER  := $(BUILD)/libserver.a
LIBAGENT   := $(BUILD)/libnode-agent.a
LIBIMPORT  := $(BUILD)/libimport.a
LIBCLI     := $(BUILD)/libcli.a
LIBSIM     := $(BUILD)/libsim.a
LIBLLHTTP  := $(BUILD)/libllhttp.a

# Each folder with what it may use, itself first: the layers (STYLE.md) as link lines. Binaries and
# unit tests link these and nothing more, so code that reaches up a layer does not link.
LAYER_common     := $(LIBCOMMON)
LAYER_proto      := $(LIBPROTO) $(LAYER_common)
LAYER_storage    := $(LIBSTORAGE) $(LAYER_proto)
LAYER_import     := $(LIBIMPORT) $(LAYER_proto)
LAYER_query      := $(LIBQUERY) $(LAYER_storage)
LAYER_server     := $(LIBSERVER) $(LAYER_query) $(LIBLLHTTP)
LAYER_node-agent := $(LIBAGENT) $(LAYER_proto)
LAYER_sim        := $(LIBSIM) $(LAYER_node-agent)
LAYER_cli        := $(LIBCLI) $(LIBQUERY) $(LIBIMPORT) $(LAYER_storage)
layer_of = $(LAYER_$(firstword $(subst /, ,$(1))))
SERVER_LIBS := $(LAYER_server)
AGENT_LIBS  := $(LAYER_node-agent)
SIM_LIBS    := $(LAYER_sim)
CLI_LIBS    := $(LAYER_cli)
EXT_LIBS    := $(LIB_NNG) $(LIB_UV) $(LIB_LMDB) $(LIB_PBC) $(LIB_JANSSON) $(LIB_CURL) -lmbedcrypto -lz -lstdc++ \
               -lpthread -lm
# TLS: HTTPS on the REST port and the agent channel's certificates (docs/dependencies.md)
EXT_LIBS    += -lmbedtls -lmbedx509

BINS := $(BUILD)/bin/rankscope-server $(BUILD)/bin/rankscope-agent $(BUILD)/bin/rankscope-sim \
        $(BUILD)/bin/rankscope
UNIT_SRC  := $(shell find tests/unit -name '*_test.c' -not -path '*/collector/*' | sort) \
             $(if $(HAVE_CUPTI),$(shell find tests/unit/collector -name '*_test.c' 2>/dev/null | sort))
UNIT_BINS := $(patsubst tests/unit/%_test.c,$(BUILD)/tests/unit/%_test,$(UNIT_SRC))
FUZZ_SRC  := $(shell find tests/fuzz -name '*_fuzz.c' | sort)
FUZZ_BINS := $(patsubst tests/fuzz/%_fuzz.c,$(BUILD)/tests/fuzz/%_replay,$(FUZZ_SRC))
TOOL_BINS := $(addprefix $(BUILD)/tests/tools/,rs-nng-send make-corpus rs-store-dump rs-load \
                                              rs-query-bench rs-import-bench rs-summary-load \
                                              rs-window-bench fnv-collide rs-nvml-read)


.PHONY: all deps test-deps dev-deps build-check test asan tsan demo clean format bench collector
.SECONDARY:
all: $(BINS) collector

# ---- the CUPTI collector (only where CUPTI's headers are) ----------------------------------------
# librankscope.so: the collector and everything it calls, position-independent, exporting only
# InitializeInjection (node-agent/collector/exports.map); protobuf-c linked in statically when the
# archive allows, so the training process needs nothing of ours but libcupti.
CUPTI_INC     := $(CUDA_HOME)/include
CUPTI_LIBDIRS := $(wildcard $(CUDA_HOME)/lib64 $(CUDA_HOME)/lib $(CUDA_HOME)/extras/CUPTI/lib64)
COLLECTOR_SRC := $(sort $(wildcard node-agent/collector/*.c))
COLLECTOR_DEPS_SRC := node-agent/collector_client.c node-agent/capture_run.c node-agent/records.c common/strtab.c proto/nccl_kernel.c \
                      proto/in_flight.c proto/capture.c \
                      proto/wire.c common/hash.c common/clock.c common/utf8.c common/error.c \
                      common/pos_index.c common/array.c
pic = $(patsubst %.c,$(BUILD)/pic/%.o,$(1))
LIBCOLLECTOR := $(BUILD)/libcollector.a
COLLECTOR_SO := $(BUILD)/lib/librankscope.so
PBC_STATIC   := $(wildcard /usr/lib/x86_64-linux-gnu/libprotobuf-c.a)
# the least a CUPTI client can do, to price the collector against (tests/bench/cupti_floor.c)
CUPTI_FLOOR_SO := $(BUILD)/lib/bench/libcupti_floor.so
# what the NCCL profiler plugin costs per operation (tests/bench/plugin_bench.c)
PLUGIN_BENCH := $(BUILD)/tests/tools/rs-plugin-bench

collector:
ifeq ($(HAVE_CUPTI),)
	@echo "collector: skipped ($(CUPTI_INC)/cupti.h not found; set CUDA_HOME to build librankscope.so)"
else
collector: $(COLLECTOR_SO) $(CUPTI_FLOOR_SO) $(PLUGIN_BENCH)
endif

$(BUILD)/pic/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -fvisibility=hidden -I$(CUPTI_INC) -c $< -o $@
$(BUILD)/pic/gen/rankscope.pb-c.o: $(BUILD)/gen/rankscope.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -w -fPIC -fvisibility=hidden -c $< -o $@
$(LIBCOLLECTOR): $(call pic,$(COLLECTOR_SRC))
$(COLLECTOR_SO): $(call pic,$(COLLECTOR_SRC) $(COLLECTOR_DEPS_SRC)) $(BUILD)/pic/gen/rankscope.pb-c.o \
                 node-agent/collector/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS_ALL) -Wl,--version-script=node-agent/collector/exports.map -Wl,-z,defs \
	  -o $@ $(filter %.o,$^) $(or $(PBC_STATIC),$(LIB_PBC)) $(addprefix -L,$(CUPTI_LIBDIRS)) \
	  $(addprefix -Wl$(comma)-rpath$(comma),$(CUPTI_LIBDIRS)) -lcupti -ldl -lpthread

$(PLUGIN_BENCH): tests/bench/plugin_bench.c $(LIBCOLLECTOR) $(AGENT_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -I$(CUPTI_INC) -o $@ $< $(LIBCOLLECTOR) $(AGENT_LIBS) $(EXT_LIBS)

$(CUPTI_FLOOR_SO): tests/bench/cupti_floor.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -fPIC -I$(CUPTI_INC) -o $@ $< $(addprefix -L,$(CUPTI_LIBDIRS)) \
	  $(addprefix -Wl$(comma)-rpath$(comma),$(CUPTI_LIBDIRS)) -lcupti

# ---- generated code --------------------------------------------------------------------------
# Before anything is compiled: are the build's tools and headers there? (else: say what to do)
build-check:
	@DEPS_LOG=$(BUILD)/deps.log scripts/deps.sh check deps $(BUILD_DEB_PACKAGES)

$(BUILD)/gen/%.pb-c.c $(BUILD)/gen/%.pb-c.h: proto/%.proto | build-check
	@mkdir -p $(BUILD)/gen
	protoc-c --c_out=$(BUILD)/gen -Iproto $<

$(BUILD)/obj/%.o: %.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/obj/gen/%.pb-c.o: $(BUILD)/gen/%.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -w -c $< -o $@

# llhttp is built from Debian's node-llhttp sources (see docs/dependencies.md); not our code.
$(BUILD)/obj/llhttp/%.o: $(LLHTTP_SRC)/%.c | build-check
	@mkdir -p $(dir $@)
	$(CC) $(OPT) -w -I$(LLHTTP_INC) -c $< -o $@

# ---- archives --------------------------------------------------------------------------------
$(LIBCOMMON):  $(call obj,$(COMMON_SRC))
$(LIBPROTO):   $(call obj,$(PROTO_SRC)) $(patsubst %,$(BUILD)/obj/gen/%.pb-c.o,$(PROTOS))
$(LIBSTORAGE): $(call obj,$(STORAGE_SRC))
$(LIBQUERY):   $(call obj,$(QUERY_SRC))
$(LIBSERVER):  $(call obj,$(SERVER_SRC)) $(BUILD)/obj/gen/web_assets.o
$(LIBAGENT):   $(call obj,$(AGENT_SRC))
$(LIBIMPORT):  $(call obj,$(IMPORT_SRC))
$(LIBCLI):     $(call obj,$(CLI_SRC))
$(LIBSIM):     $(call obj,$(SIM_SRC))
$(LIBLLHTTP):  $(BUILD)/obj/llhttp/llhttp.o $(BUILD)/obj/llhttp/api.o $(BUILD)/obj/llhttp/http.o
$(BUILD)/lib%.a:
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/server/%.o: CFLAGS_ALL += -I$(LLHTTP_INC)
$(BUILD)/obj/tests/%.o: CFLAGS_ALL += -I$(LLHTTP_INC)

# ---- the dashboard (docs/dashboard.md) ---------------------------------------------------------
# web/ bundled by esbuild (web/build.sh: npm ci once per package-lock.json, then node build.mjs)
# into $(BUILD)/web/dist, which scripts/embed_assets.sh turns into C data linked into
# rankscope-server. Without node and npm the server carries web/fallback/ instead: a page saying
# how to build the dashboard; so does DASHBOARD=off.
WEB_INPUTS := $(shell find web/src -type f 2>/dev/null) web/index.html web/build.mjs web/build.sh \
              web/package.json web/package-lock.json
DASHBOARD ?= auto
ifeq ($(DASHBOARD),off)
WEB_DIST := web/fallback
$(info dashboard: DASHBOARD=off: rankscope-server will serve a page saying how to build the dashboard)
else ifeq ($(shell command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && echo yes),yes)
WEB_DIST := $(BUILD)/web/dist
$(WEB_DIST)/index.html: $(WEB_INPUTS)
	@web/build.sh $(abspath $(WEB_DIST))
else
WEB_DIST := web/fallback
$(info dashboard: node/npm not found: rankscope-server will serve a page saying how to build the dashboard (apt-get install nodejs npm, then make))
endif
$(BUILD)/gen/web_assets.c: $(WEB_DIST)/index.html scripts/embed_assets.sh
	@mkdir -p $(dir $@)
	scripts/embed_assets.sh $(WEB_DIST) >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/web_assets.o: $(BUILD)/gen/web_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# ---- binaries --------------------------------------------------------------------------------
$(BUILD)/bin/rankscope-server: $(BUILD)/obj/server/main.o $(SERVER_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/bin/rankscope-agent: $(BUILD)/obj/node-agent/main.o $(AGENT_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/bin/rankscope-sim: $(BUILD)/obj/sim/main.o $(SIM_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/bin/rankscope: $(BUILD)/obj/cli/main.o $(CLI_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)

# ---- tests -----------------------------------------------------------------------------------
# Fuzz replays and test tools link everything; a unit test links its folder's layer only
# (tests/unit/<folder>/...; the collector's tests add the collector to the agent's).
ALL_LIBS := $(LIBCLI) $(LIBSIM) $(LIBSERVER) $(LIBAGENT) $(LIBQUERY) $(LIBIMPORT) $(LIBSTORAGE) \
            $(LIBPROTO) $(LIBCOMMON) $(LIBLLHTTP)
.SECONDEXPANSION:
$(BUILD)/tests/unit/%_test: $(BUILD)/obj/tests/unit/%_test.o $$(call layer_of,$$*)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/tests/unit/collector/%_test: $(BUILD)/obj/tests/unit/collector/%_test.o $(LIBCOLLECTOR) \
                                       $(AGENT_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/obj/tests/unit/collector/%.o: CFLAGS_ALL += -I$(CUPTI_INC)
# tests that run collector code against a stand-in libcupti and driver (fake_cupti.h), which the
# code looks up among the process's global symbols
FAKE_CUPTI_TESTS := $(addprefix $(BUILD)/tests/unit/collector/,pcsampling_test activity_test \
                                                                injection_test attach_test)
$(FAKE_CUPTI_TESTS): $(BUILD)/obj/tests/unit/collector/fake_cupti.o
$(FAKE_CUPTI_TESTS): LDFLAGS_ALL += -rdynamic
# plugin_test's stand-in cuCtxGetDevice, found the same way
$(BUILD)/tests/unit/collector/plugin_test: LDFLAGS_ALL += -rdynamic
# activity_test's second CUPTI client, in a library of its own (its calls go through its GOT)
KINETO_STANDIN := $(BUILD)/tests/unit/collector/libkineto_standin.so
$(KINETO_STANDIN): tests/unit/collector/kineto_standin.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -I$(CUPTI_INC) -fPIC -shared -Wl,-soname,$(notdir $@) -o $@ $<
$(BUILD)/tests/unit/collector/activity_test: $(KINETO_STANDIN)
$(BUILD)/tests/unit/collector/activity_test: LDFLAGS_ALL += -Wl,-rpath,'$$ORIGIN'
# got_hook_test's callers: one library bound lazily, one bound at load with its GOT in RELRO
GOT_CALLERS := $(BUILD)/tests/unit/collector/libgot_caller_lazy.so \
               $(BUILD)/tests/unit/collector/libgot_caller_now.so
$(BUILD)/tests/unit/collector/libgot_caller_%.so: tests/unit/collector/got_caller.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fPIC -shared -DGOT_CALLER=got_caller_$* \
	  $(if $(filter now,$*),-fno-plt -Wl$(comma)-z$(comma)now -Wl$(comma)-z$(comma)relro,-Wl$(comma)-z$(comma)lazy) \
	  -Wl,-soname,$(notdir $@) -o $@ $<
$(BUILD)/tests/unit/collector/got_hook_test: $(BUILD)/obj/tests/unit/collector/got_hook_test.o \
                                             $(LIBCOLLECTOR) $(LIBCOMMON) $(GOT_CALLERS)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -Wl,-rpath,'$$ORIGIN' $(EXT_LIBS)
$(BUILD)/tests/fuzz/%_replay: $(BUILD)/obj/tests/fuzz/%_fuzz.o $(BUILD)/obj/tests/fuzz/replay_main.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)
$(BUILD)/tests/tools/%: $(BUILD)/obj/tests/tools/%.o $(ALL_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)

# The power-cut simulator is preloaded into the server: plain flags, no sanitizer (its runtime
# must come first), so the test that uses it skips sanitizer builds.
$(BUILD)/tests/tools/powerloss.so: tests/tools/powerloss.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -fPIC -shared -o $@ $< -ldl -lpthread

# The stand-in NVML the agent loads in tests and make demo (--nvml-library): today's names, and an
# old driver's (renamed functions under their old names, some missing).
FAKE_NVML := $(BUILD)/tests/tools/libfake_nvml.so $(BUILD)/tests/tools/libfake_nvml_old.so
$(BUILD)/tests/tools/libfake_nvml.so: tests/tools/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -fPIC -shared -o $@ $<
$(BUILD)/tests/tools/libfake_nvml_old.so: tests/tools/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -Wall -Wextra -Wno-unused-parameter -fPIC -shared -DFAKE_NVML_OLD -o $@ $<

# A server that speaks wire schema version 4 at most, as servers before GPU telemetry did: the agent
# must stop sending telemetry to it and lose no profile data (tests/integration/250).
SERVER_V4 := $(BUILD)/tests/tools/rankscope-server-v4
$(BUILD)/obj/tests/wire_v4.o: proto/wire.c | $(PB_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -DRS_WIRE_SCHEMA_VERSION=4u -c $< -o $@
$(SERVER_V4): $(BUILD)/obj/server/main.o $(BUILD)/obj/tests/wire_v4.o $(SERVER_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(EXT_LIBS)

test-build: $(BINS) $(UNIT_BINS) $(FUZZ_BINS) $(TOOL_BINS) $(BUILD)/tests/tools/powerloss.so \
            $(FAKE_NVML) $(SERVER_V4)
.PHONY: test-build

test: test-deps lint-tools browser-tools
	@$(MAKE) --no-print-directory test-build collector
	@BUILD=$(BUILD) tests/run.sh

# The linters tests/integration/006-lint.sh runs: Redocly CLI, pinned in tests/tools/lint, with
# npm ci (again only when its package-lock.json changes); promtool is Debian's (prometheus).
lint-tools: test-deps
	@tests/tools/lint-tools.sh
.PHONY: lint-tools

# puppeteer-core for the dashboard's browser test (tests/integration/260-dashboard.sh), pinned in
# tests/browser; npm ci only when its package-lock.json changes.
browser-tools: test-deps
	@tests/browser/install.sh
.PHONY: browser-tools

asan:
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=1 test

# ThreadSanitizer over the threaded parts that run beside training: the collector (its flush thread,
# CUPTI's callbacks, PC-sampling windows) and the agent (its loop, forwarder and spool), with the
# server they talk to.
TSAN_TESTS := unit/collector unit/node-agent integration/010- integration/020- integration/060- \
              integration/210-
tsan: test-deps
	@$(MAKE) --no-print-directory BUILD=build-tsan SAN=thread test-build collector
	@BUILD=build-tsan RS_TESTS="$(TSAN_TESTS)" tests/run.sh

# libFuzzer builds of the fuzz targets (clang): make fuzz-wire (or fuzz-http_request,
# fuzz-config, fuzz-agent_frames, fuzz-spool, fuzz-routes), then run build-fuzz/<name>_fuzz tests/fuzz/corpus/<name>.
# Targets beyond the decoders above link the layers they drive (tests/fuzz/*_fuzz.c say which).
FUZZ_SRC_agent_frames := $(AGENT_SRC)
FUZZ_SRC_spool        := $(AGENT_SRC)
FUZZ_SRC_routes       := $(SERVER_SRC) $(QUERY_SRC) $(STORAGE_SRC) $(BUILD)/gen/web_assets.c
fuzz-routes: $(BUILD)/gen/web_assets.c
fuzz-%: $(PB_H)
	@scripts/deps.sh check dev-deps clang
	@mkdir -p build-fuzz
	clang -std=c11 -D_GNU_SOURCE -DRS_VERSION='"$(VERSION)"' -g -O1 \
	  -fsanitize=fuzzer,address,undefined -I. -I$(BUILD)/gen -I$(LLHTTP_INC) $(DEP_CFLAGS) \
	  tests/fuzz/$*_fuzz.c $(IMPORT_SRC) $(PROTO_SRC) $(COMMON_SRC) $(PB_C) server/http_request.c server/auth_file.c \
	  $(filter-out server/http_request.c server/tls_stream.c server/auth_file.c,$(FUZZ_SRC_$*)) \
	  server/tls_stream.c \
	  $(LLHTTP_SRC)/llhttp.c $(LLHTTP_SRC)/api.c $(LLHTTP_SRC)/http.c -o build-fuzz/$*_fuzz \
	  $(EXT_LIBS)

demo: deps
	@$(MAKE) --no-print-directory all $(FAKE_NVML)
	@BUILD=$(BUILD) scripts/demo.sh

bench: all test-build
	@BUILD=$(BUILD) tests/bench/run.sh

# Install only what is missing; safe to run again; need root (or sudo) only when something is
# missing, and say what to run as root where there is neither. apt-get's output: $(BUILD)/deps.log.
deps:
	@DEPS_LOG=$(BUILD)/deps.log scripts/deps.sh install deps $(DEB_PACKAGES)
test-deps:
	@DEPS_LOG=$(BUILD)/deps.log scripts/deps.sh install test-deps $(DEB_PACKAGES) $(TEST_DEB_PACKAGES)
dev-deps:
	@DEPS_LOG=$(BUILD)/deps.log scripts/deps.sh install dev-deps $(DEV_DEB_PACKAGES)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BINS) $(DESTDIR)$(PREFIX)/bin/

format:
	@scripts/deps.sh check dev-deps clang-format
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-tsan build-fuzz

-include $(shell find $(BUILD)/obj $(BUILD)/pic -name '*.d' 2>/dev/null)
