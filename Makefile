# hrbridge — the two commands are `make demo` (the main job) and `make test` (every test and check).
SWIFT ?= swift
# What building (and the demo, on the simulator) needs; the tests need the peers and tools as well.
SYSTEM_PACKAGES := pkg-config libdbus-1-dev libbluetooth-dev libsqlite3-dev libmosquitto-dev
# What `make deb` needs on top of building (before TEST_PACKAGES: `:=` expands at once).
DEB_PACKAGES := dpkg-dev binutils
TEST_PACKAGES := bluez dbus python3-venv python3-dbus python3-gi systemd chromium chromium-driver mosquitto openssl \
	qemu-system-x86 busybox-static kmod postgresql util-linux libxml2-utils prometheus \
	mmdebstrap e2fsprogs lintian procps $(DEB_PACKAGES)
BIN := .build/debug/hrbridge
# The upstream version; packages add +git<commit count> (scripts/build-deb.sh).
VERSION ?= 0.9.0

.PHONY: demo test test-real-bluez test-system setup test-setup python-peers build format check-format check-docs bench bench-compare bench-daemon bench-daemon-compare bench-record-ratio bench-soak release deb install install-files uninstall fuzz stress

# Install locations: `make install PREFIX=/usr DESTDIR=/tmp/stage` stages a package; unit, udev and
# sysusers directories come from pkg-config when systemd's and udev's .pc files are installed.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SYSCONFDIR ?= /etc
UNITDIR ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
UDEVDIR ?= $(shell pkg-config --variable=udevdir udev 2>/dev/null || echo /lib/udev)
SYSUSERSDIR ?= $(shell pkg-config --variable=sysusersdir systemd 2>/dev/null || echo /usr/lib/sysusers.d)
# Where `make install-files` takes the two executables from.
BINDIR_BUILT ?= .build/release

setup:
	@scripts/check-toolchain.sh
	@scripts/ensure-system-packages.sh $(SYSTEM_PACKAGES)

test-setup: setup
	@scripts/ensure-system-packages.sh $(TEST_PACKAGES)

python-peers: test-setup
	@scripts/setup-python.sh

# The command line alone: it does not link the server stack, so the demo does not wait for it.
build: setup
	$(SWIFT) build --product hrbridge

# The main job: a simulated 18-minute interval workout with two virtual straps, played at 60×
# (about 20 s), live view on a terminal, summary at the end. No hardware, no root services.
demo: build
	$(BIN) workout run --activity running --speed 60 --age 35 --sex male --weight 72 --resting-hr 55

check-docs:
	@scripts/check-docs.sh

check-format:
	@scripts/check-format.sh

format:
	$(SWIFT) format format --in-place --parallel $$(git ls-files -co --exclude-standard '*.swift')

# The suite, then the real-BlueZ bed alone (one QEMU guest; it skips itself, saying why, without
# QEMU), then the package installed and run under systemd in the whole-system bed.
test: python-peers check-format check-docs
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) TEST_TIME_LIMIT=1200 scripts/run-tests.sh unit --skip-build --skip RealBlueZTests --skip SystemTests
	SWIFT=$(SWIFT) TEST_TIME_LIMIT=2400 scripts/run-tests.sh real-bluez --skip-build --filter RealBlueZTests
	$(MAKE) --no-print-directory test-system

# Only the real-BlueZ bed: bluetoothd 5.66 and Debian's kernel in QEMU, Bumble straps (docs/testing.md).
test-real-bluez: python-peers
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --filter RealBlueZTests

# Only the whole-system bed: the .deb installed with apt in a Debian 12 guest booted under QEMU with
# systemd as PID 1, real D-Bus and bluetoothd, a Bumble strap (docs/testing.md).
test-system: python-peers release
	$(SWIFT) build --build-tests
	SWIFT=$(SWIFT) scripts/test-system.sh

# libFuzzer over the GATT decoders and the D-Bus value reader: 10 million inputs each (RUNS=…).
fuzz: setup
	scripts/fuzz.sh $(RUNS)

# The whole suite N times in a row, one core kept busy (build first with make test).
stress:
	scripts/test-stress.sh $(or $(N),3) --load

bench: test-setup
	Benchmarks/run.sh

bench-compare: setup
	Benchmarks/compare.sh

bench-daemon: python-peers
	Benchmarks/daemon.sh

# Two hours of a class of 60 simulated straps recording at 1×; the daemon's RSS, FDs, threads and CPU every minute.
bench-soak: python-peers
	Benchmarks/soak.sh

# The three daemon benchmarks, this tree against revision OLD, alternating: make bench-daemon-compare OLD=80193be
bench-daemon-compare: python-peers
	Benchmarks/daemon-compare.sh $(OLD) --runs $(or $(RUNS),3)

# Issue 35's ratio: a gateway recording 50 straps against relaying them, alternating: make bench-record-ratio ROUNDS=10
bench-record-ratio: python-peers
	Benchmarks/record-ratio.sh --rounds $(or $(ROUNDS),6)

release: setup
	$(SWIFT) build -c release --static-swift-stdlib --product hrbridge
	$(SWIFT) build -c release --static-swift-stdlib --product hrbridged

# The Debian package (.build/deb/hrbridge_<version>_<arch>.deb): see docs/service.md, "Installing".
deb: release
	@scripts/ensure-system-packages.sh $(DEB_PACKAGES)
	SWIFT=$(SWIFT) scripts/build-deb.sh

# Builds in release mode, then installs both executables, the unit, the sysusers entry, the udev rule and
# (only when there is none) the default configuration. Enabling the unit is left to the admin.
# As a user: make release, then sudo make install-files (sudo's PATH rarely has swift, and a build
# as root would leave root's files in .build).
install: release install-files

install-files:
	@test -x $(BINDIR_BUILT)/hrbridge -a -x $(BINDIR_BUILT)/hrbridged || { echo "no release build in $(BINDIR_BUILT): run make release first (as yourself, not root)"; exit 1; }
	install -Dm755 $(BINDIR_BUILT)/hrbridge $(DESTDIR)$(BINDIR)/hrbridge
	install -Dm755 $(BINDIR_BUILT)/hrbridged $(DESTDIR)$(BINDIR)/hrbridged
	install -d $(DESTDIR)$(UNITDIR)
	sed 's#^ExecStart=.*#ExecStart=$(BINDIR)/hrbridged#' systemd/hrbridge.service > $(DESTDIR)$(UNITDIR)/hrbridge.service
	chmod 644 $(DESTDIR)$(UNITDIR)/hrbridge.service
	install -Dm644 systemd/hrbridge.sysusers $(DESTDIR)$(SYSUSERSDIR)/hrbridge.conf
	install -Dm644 udev/60-hrbridge.rules $(DESTDIR)$(UDEVDIR)/rules.d/60-hrbridge.rules
	test -e $(DESTDIR)$(SYSCONFDIR)/hrbridge/config.toml || install -Dm640 systemd/config.toml $(DESTDIR)$(SYSCONFDIR)/hrbridge/config.toml
	@# Installed into this system as root: the hrbridge user and group now, so the daemon (User=hrbridge) can read its configuration.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		systemd-sysusers $(SYSUSERSDIR)/hrbridge.conf && chgrp hrbridge $(SYSCONFDIR)/hrbridge/config.toml && \
		echo "installed; now: systemctl daemon-reload && udevadm control --reload && systemctl enable --now hrbridge"; \
	else \
		echo "installed; on the target, as root: systemd-sysusers && chgrp hrbridge $(SYSCONFDIR)/hrbridge/config.toml && systemctl daemon-reload && udevadm control --reload && systemctl enable --now hrbridge"; \
	fi

uninstall:
	@# From this system as root: the unit stopped and disabled first, so no link to it is left behind.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v systemctl >/dev/null; then systemctl disable --now hrbridge 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(BINDIR)/hrbridge $(DESTDIR)$(BINDIR)/hrbridged $(DESTDIR)$(UNITDIR)/hrbridge.service $(DESTDIR)$(SYSUSERSDIR)/hrbridge.conf $(DESTDIR)$(UDEVDIR)/rules.d/60-hrbridge.rules
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v systemctl >/dev/null; then systemctl daemon-reload; udevadm control --reload 2>/dev/null || true; else echo "on the target, as root, first: systemctl disable --now hrbridge; after: systemctl daemon-reload && udevadm control --reload"; fi
	@echo "kept $(DESTDIR)$(SYSCONFDIR)/hrbridge/config.toml and the store in /var/lib/hrbridge (remove them by hand if wanted)"
