# hrbridge — the two commands are `make demo` (the main job) and `make test` (every test and check).
SWIFT ?= swift
SYSTEM_PACKAGES := pkg-config libdbus-1-dev libbluetooth-dev libsqlite3-dev bluez dbus python3-venv python3-dbus python3-gi
BIN := .build/debug/hrbridge

.PHONY: demo test setup python-peers build format check-format bench bench-compare

setup:
	@scripts/check-toolchain.sh
	@scripts/ensure-system-packages.sh $(SYSTEM_PACKAGES)

python-peers: setup
	@scripts/setup-python.sh

build: setup
	$(SWIFT) build

# The main job: a simulated 18-minute interval workout with two virtual straps, played at 60×
# (about 20 s), live view on a terminal, summary at the end. No hardware, no root services.
demo: build
	$(BIN) workout run --activity running --speed 60 --age 35 --sex male --weight 72 --resting-hr 55

check-format:
	@scripts/check-format.sh

format:
	$(SWIFT) format format --in-place --parallel $$(git ls-files -co --exclude-standard '*.swift' | grep -v -x 'Sources/Bridge/API/OpenAPIDocument.swift')

test: python-peers check-format
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: setup
	Benchmarks/run.sh

bench-compare: setup
	Benchmarks/compare.sh
