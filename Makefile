# Thin wrapper around CMake. `make` builds build/benchgate; `make test` runs
# every test (unit, CLI golden, conformance); `make asan` builds build-asan/
# with AddressSanitizer + UBSan and runs the whole suite there; `make
# analyze` runs clang-tidy's static analyser (.clang-tidy) over src/.
PREFIX ?= /usr/local
WERROR ?= OFF
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CONFORMANCE ?= ../shared/conformance

.PHONY: all build test asan analyze install clean bench demo fuzz

all: build

build:
	cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBENCHGATE_WERROR=$(WERROR) >/dev/null
	cmake --build build -j $(JOBS)

test: build
	tests/run-all build $(CONFORMANCE)

asan:
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DBENCHGATE_SANITIZE=ON -DBENCHGATE_WERROR=$(WERROR) >/dev/null
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		tests/run-all build-asan $(CONFORMANCE)

# Every finding of the analyser fails it; its whole log is build-analyze/tidy.log.
analyze:
	@cmake -S . -B build-analyze -DCMAKE_BUILD_TYPE=Release -DBENCHGATE_TESTS=OFF \
		-DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
	@run-clang-tidy -p build-analyze -j $(JOBS) -quiet "$(CURDIR)/src/" >build-analyze/tidy.log 2>&1 || \
		{ grep -E -A3 "(warning|error):" build-analyze/tidy.log; \
		  echo "analyze: clang-tidy found the above (build-analyze/tidy.log)"; exit 1; }
	@echo "analyze: clang-tidy's static analyser found nothing in src/ ($$(ls src/*/*.c | wc -l) files)"

# Installs from a build of its own without the tests, which need cmocka.
install:
	cmake -S . -B build-install -DCMAKE_BUILD_TYPE=Release -DBENCHGATE_TESTS=OFF -DBENCHGATE_WERROR=$(WERROR) >/dev/null
	cmake --build build-install -j $(JOBS)
	cmake --install build-install --prefix "$(PREFIX)"

# The main job: the whole benchgate workflow on the detector-binning example.
demo:
	scripts/demo

bench: build
	bench/registry.sh

clean:
	rm -rf build build-asan build-fuzz build-analyze

# libFuzzer targets (clang), each run over its seeds in tests/fuzz/corpus/:
#   fuzz_registry (registry/), fuzz_json (registry/, json/),
#   fuzz_project (project/: a whole project), fuzz_npy (npy/),
#   fuzz_promote (registry/, promote/), fuzz_reported (reported/),
#   fuzz_scrub (scrub/: home paths and secrets in what a session writes),
#   fuzz_format (format/: a format specification and a value),
#   fuzz_bigint (bigint/: integers beyond 64 bits against OpenSSL's BIGNUM)
# make fuzz [FUZZ_TARGET=fuzz_registry] [FUZZ_SECONDS=60]
FUZZ_TARGET ?= fuzz_registry
FUZZ_SEEDS_fuzz_registry = registry
FUZZ_SEEDS_fuzz_json = registry json
FUZZ_SEEDS_fuzz_project = project
FUZZ_SEEDS_fuzz_npy = npy
FUZZ_SEEDS_fuzz_promote = registry promote
FUZZ_SEEDS_fuzz_reported = reported
FUZZ_SEEDS_fuzz_scrub = scrub
FUZZ_SEEDS_fuzz_format = format
FUZZ_SEEDS_fuzz_bigint = bigint
FUZZ_MAX_LEN_fuzz_project = 65536
FUZZ_DICT_fuzz_registry = tests/fuzz/fuzz_registry.dict
FUZZ_DICT_fuzz_json = tests/fuzz/fuzz_registry.dict
FUZZ_DICT_fuzz_promote = tests/fuzz/fuzz_registry.dict
FUZZ_DICT_fuzz_project = tests/fuzz/fuzz_registry.dict tests/fuzz/fuzz_project.dict
fuzz:
	CC=clang cmake -S . -B build-fuzz -DBENCHGATE_LIBFUZZER=ON -DBENCHGATE_SANITIZE=ON -DBENCHGATE_TESTS=OFF -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build build-fuzz -j $(JOBS) --target $(FUZZ_TARGET)
	mkdir -p build-fuzz/corpus-$(FUZZ_TARGET)
	for d in $(FUZZ_SEEDS_$(FUZZ_TARGET)); do cp tests/fuzz/corpus/$$d/* build-fuzz/corpus-$(FUZZ_TARGET)/; done
	cat /dev/null $(FUZZ_DICT_$(FUZZ_TARGET)) >build-fuzz/$(FUZZ_TARGET).dict
	build-fuzz/$(FUZZ_TARGET) -max_total_time=$${FUZZ_SECONDS:-60} -max_len=$(or $(FUZZ_MAX_LEN_$(FUZZ_TARGET)),8192) $(if $(FUZZ_DICT_$(FUZZ_TARGET)),-dict=build-fuzz/$(FUZZ_TARGET).dict) build-fuzz/corpus-$(FUZZ_TARGET)
