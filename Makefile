# hrbridge — the two commands are `make demo` (the main job) and `make test` (every test and check).
SWIFT ?= swift
SYSTEM_PACKAGES := pkg-config
BIN := .build/debug/hrbridge

.PHONY: demo test setup build format check-format bench

setup:
	@scripts/check-toolchain.sh
	@scripts/ensure-system-packages.sh $(SYSTEM_PACKAGES)

build: setup
	$(SWIFT) build

demo: build
	@echo '$$ hrbridge decode heart-rate-measurement "1e 55 32 00 21 00"'
	@$(BIN) decode heart-rate-measurement "1e 55 32 00 21 00"
	@echo '$$ hrbridge decode 2a37 "1e 55 32 00 21 00" --samples --received-at 2026-01-01T10:00:00Z'
	@$(BIN) decode 2a37 "1e 55 32 00 21 00" --samples --received-at 2026-01-01T10:00:00Z
	@echo '$$ hrbridge decode 2a37 "10 48 2c 03 01"   # malformed: exit 65'
	@$(BIN) decode 2a37 "10 48 2c 03 01" || echo "(exit $$?)"

check-format:
	@scripts/check-format.sh

format:
	$(SWIFT) format format --in-place --parallel $$(git ls-files -co --exclude-standard '*.swift')

test: setup check-format
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: setup
	Benchmarks/run.sh
