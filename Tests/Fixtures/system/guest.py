#!/usr/bin/env python3
"""The system bed's scenario driver (runs in the guest as hrbridge-bed-driver.service, as root,
with the guest's own python3). It does what an admin and a user do on an installed system, and
writes what it saw to OUT/phase-<N>.json after every scenario; the Swift tests assert on it.

Boot 1 installs the package with apt, then: the service as systemd runs it, a non-member refused,
the strap discovered and paired by a member of the hrbridge group with the CLI, a session over the
socket, bluetoothd restarted under it, the daemon killed and frozen (watchdog), stopped; an admin
edits the configuration; reboot. Boot 2: the service started by itself with the store and the bond,
the workout exported, an upgrade with apt, then remove and purge; power off.
"""

import json
import os
import select
import subprocess
import sys
import time
import traceback

OUT = sys.argv[1] if len(sys.argv) > 1 else "/out"
STRAP = "C1:00:00:00:00:39"
UNIT = "hrbridge.service"
SOCKET = "/run/hrbridge/api.sock"
STORE = "/var/lib/hrbridge/store.sqlite"
MEMBER = "coach"
STRANGER = "visitor"


def log(text):
    print(f"driver: {time.strftime('%H:%M:%S')} {text}", flush=True)


def run(command, user=None, timeout=180, env=None):
    """(exit status, stdout, stderr) of a command, as root or as `user`."""
    if user:
        command = ["runuser", "-u", user, "--"] + command
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        return None, expired.stdout or "", f"timed out after {timeout} s"
    except OSError as error:
        return None, "", str(error)


def output(command, **options):
    return run(command, **options)[1].strip()


def unit_property(name):
    return output(["systemctl", "show", "-P", name, UNIT])


def api(path, method="GET", body=None, user=MEMBER, raw_to=None):
    """(HTTP status, JSON or None) of a request on the API socket, as `user`."""
    command = ["curl", "-sS", "--unix-socket", SOCKET, "-X", method, "-w", "\n%{http_code}"]
    if body is not None:
        command += ["-H", "Content-Type: application/json", "-d", json.dumps(body)]
    if raw_to:
        command += ["-o", raw_to]
    code, text, error = run(command + [f"http://localhost{path}"], user=user, timeout=60)
    if code != 0:
        return None, error
    body_text, _, status = text.rpartition("\n")
    try:
        return int(status), (json.loads(body_text) if body_text and not raw_to else None)
    except ValueError:
        return int(status), body_text


class Watch:
    """`hrbridge session watch` as the member: the live stream, read as it comes (the readiness
    signal of every wait below: a message, never a sleep)."""

    def __init__(self, *arguments):
        self.process = subprocess.Popen(
            ["runuser", "-u", MEMBER, "--", "hrbridge", "session", "watch", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.messages = []

    def until(self, predicate, timeout):
        """The first message (from now on) `predicate` accepts, or None after `timeout` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.process.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.process.stdout.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            message["_at"] = time.time()
            self.messages.append(message)
            if predicate(message):
                return message
        return None

    def close(self):
        self.process.kill()
        self.process.wait()


def sensor_state(state):
    return lambda m: m.get("kind") == "sensor" and m.get("address") == STRAP and m.get("state") == state


def is_sample(m):
    return m.get("kind") == "sample" and m.get("sensor") == STRAP


def wait_for_samples(count, timeout, session=None):
    """Waits for `count` new samples of the strap; returns how many came."""
    watch = Watch(*(["--session", session] if session else ["--sensor", STRAP]))
    got = 0
    try:
        deadline = time.monotonic() + timeout
        while got < count and watch.until(is_sample, max(0.0, deadline - time.monotonic())):
            got += 1
    finally:
        watch.close()
    return got


def wait_active(timeout, old_pid=None):
    """Waits until systemd itself has the unit active again with a new main PID (its Restart=,
    never a start of ours); checks systemd's state twice a second until the deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = unit_property("MainPID")
        if unit_property("ActiveState") == "active" and pid not in ("0", old_pid):
            return pid
        time.sleep(0.5)
    return None


def service_facts():
    pid = unit_property("MainPID")
    facts = {"active": output(["systemctl", "is-active", UNIT]), "enabled": output(["systemctl", "is-enabled", UNIT]),
             "pid": pid, "restarts": unit_property("NRestarts"), "result": unit_property("Result")}
    if pid and pid != "0":
        facts["user"] = output(["ps", "-o", "user=", "-p", pid])
        with open(f"/proc/{pid}/status") as file:
            facts["capabilities"] = {line.split(":")[0]: line.split(":")[1].strip()
                                     for line in file if line.startswith("Cap")}
    return facts


def diagnosis():
    """What the system says when a wait failed: BlueZ's adapters, both services' logs."""
    return {"status": unit_property("StatusText"), "health": api("/v1/health")[1],
            "adapter": output(["bluetoothctl", "show"]).splitlines(),
            "devices": output(["bluetoothctl", "devices"]).splitlines(),
            "hrbridge": output(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).splitlines()[-40:],
            "bluetooth": output(["journalctl", "-b", "-u", "bluetooth", "--no-pager", "-o", "cat"]).splitlines()[-30:]}


def stat(path):
    code, text, _ = run(["stat", "-c", "%a %U %G", path])
    return text.strip() if code == 0 else None


def store_workouts():
    """The stored workouts as the CLI reads them from the store (root reads the state folder)."""
    code, text, error = run(["hrbridge", "workouts", "list", "--store", STORE, "--json"])
    if code != 0:
        return {"error": error.strip()}
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def sent_frames(since, until=None):
    frames = []
    with open(os.path.join(OUT, "sent.jsonl")) as file:
        for line in file:
            frame = json.loads(line)
            if frame["t"] >= since and (until is None or frame["t"] <= until):
                frames.append(frame)
    return frames


def strap_state():
    boot = open("/proc/sys/kernel/random/boot_id").read().strip()
    try:
        with open(os.path.join(OUT, f"strap-{boot}.json")) as file:
            return json.load(file)
    except (OSError, ValueError):
        return None


class Driver:
    def __init__(self, phase):
        self.phase = phase
        self.results = {}
        self.path = os.path.join(OUT, f"phase-{phase}.json")

    def save(self):
        with open(self.path + ".tmp", "w") as file:
            json.dump(self.results, file, indent=1)
        os.replace(self.path + ".tmp", self.path)

    def scenario(self, name, function):
        log(f"scenario {name}")
        facts = self.results.setdefault(name, {})
        started = time.monotonic()
        try:
            function(facts)
        except Exception:
            facts["error"] = traceback.format_exc()
            log(f"scenario {name} broke:\n{facts['error']}")
        facts["seconds"] = round(time.monotonic() - started, 1)
        self.save()

    def state(self, key, value=None):
        """Facts carried from boot 1 to boot 2 (the session, the workout, the kill time)."""
        path = os.path.join(OUT, "state.json")
        state = json.load(open(path)) if os.path.exists(path) else {}
        if value is None:
            return state.get(key)
        state[key] = value
        json.dump(state, open(path, "w"))

    # Boot 1 --------------------------------------------------------------------------------

    def install(self, facts):
        code, text, error = run(["apt-get", "install", "-y", os.environ["OLD_DEB"]], timeout=600,
                                env={"DEBIAN_FRONTEND": "noninteractive"})
        facts["apt"] = {"exit": code, "output": (text + error)[-3000:]}
        facts["version"] = output(["dpkg-query", "-W", "-f", "${Version}", "hrbridge"])
        facts["service"] = service_facts()
        facts["alias"] = output(["systemctl", "is-active", "hrbridged"])
        facts["userEntry"] = output(["getent", "passwd", "hrbridge"])
        facts["groupEntry"] = output(["getent", "group", "hrbridge"])
        facts["config"] = stat("/etc/hrbridge/config.toml")
        facts["socket"] = stat(SOCKET)
        facts["stateDirectory"] = stat("/var/lib/hrbridge")
        code, text, error = run(["systemd-analyze", "security", "--no-pager", UNIT])
        facts["security"] = [line for line in (text + error).splitlines() if "Overall exposure" in line]
        facts["journal"] = output(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).splitlines()[:40]
        facts["manPages"] = [os.path.exists(page) for page in ("/usr/share/man/man1/hrbridge.1.gz",
                                                               "/usr/share/man/man8/hrbridged.8.gz")]
        facts["udevRule"] = os.path.exists("/lib/udev/rules.d/60-hrbridge.rules")

    def users(self, facts):
        for user in (MEMBER, STRANGER):
            run(["useradd", "--create-home", "--shell", "/bin/bash", user])
        run(["usermod", "--append", "--groups", "hrbridge", MEMBER])
        facts["member"] = output(["id", MEMBER])
        code, text, error = run(["hrbridge", "session", "status"], user=STRANGER)
        facts["stranger"] = {"exit": code, "output": (text + error).strip()}
        code, text, error = run(["hrbridge", "session", "status"], user=MEMBER)
        facts["memberStatus"] = {"exit": code, "output": (text + error).strip()[:500]}

    def discover_and_pair(self, facts):
        # As docs/bluetooth.md tells a user: find it, pair it with the CLI (a member of the
        # group, not root); the daemon then follows the paired strap by itself.
        code, text, error = run(["hrbridge", "scan", "--timeout", "20", "--json"], user=MEMBER, timeout=120)
        found = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
        facts["scan"] = {"exit": code, "found": [line for line in found if line.get("address") == STRAP][:1],
                         "error": error.strip()[-500:]}
        watch = Watch("--sensor", STRAP)
        try:
            code, text, error = run(["hrbridge", "pair", STRAP, "--timeout", "60"], user=MEMBER, timeout=240)
            facts["pair"] = {"exit": code, "output": (text + error).strip()[-2000:]}
            facts["ready"] = watch.until(sensor_state("ready"), 180) is not None
            # Frames through (no session yet: the sensor's status carries the heart rate), so the
            # strap's own record is past the pairing too.
            streaming = watch.until(lambda m: sensor_state("ready")(m) and m.get("heartRate"), 60)
            facts["heartRate"] = streaming.get("heartRate") if streaming else None
            if not facts["ready"]:
                facts["diagnosis"] = diagnosis()
        finally:
            watch.close()
        facts["states"] = [m.get("state") for m in watch.messages if m.get("kind") == "sensor"]
        status, sensor = api(f"/v1/sensors/{STRAP}")
        facts["sensor"] = sensor
        facts["strap"] = strap_state()

    def session(self, facts):
        code, text, error = run(["hrbridge", "session", "start", "--sensor", STRAP, "--activity", "running"],
                                user=MEMBER)
        facts["start"] = {"exit": code, "output": (text + error).strip()[-2000:]}
        session = json.loads(text).get("id") if code == 0 else None
        facts["session"] = session
        self.state("session", session)
        self.state("sessionStarted", time.time())
        facts["samples"] = wait_for_samples(12, 120, session)

    def restart_bluetooth(self, facts):
        session = self.state("session")
        # Everything, filtered here: the strap's state messages and its samples.
        watch = Watch() if session else None
        try:
            before = time.time()
            code, _, error = run(["systemctl", "restart", "bluetooth"], timeout=120)
            facts["restart"] = {"exit": code, "error": error.strip()}
            facts["restartedAt"] = before
            # Frames resume: a sample that came after bluetoothd was back.
            resumed = watch.until(lambda m: is_sample(m) and m["_at"] > before + 1, 180) if watch else None
            facts["resumed"] = resumed is not None
            facts["resumedAfter"] = round(resumed["_at"] - before, 2) if resumed else None
            # The strap's status back to ready: the sensor manager says so in its own time, which may
            # come after the session's first sample (each reads the adapter's events on its own).
            def back_to_ready(_=None):
                states = [m.get("state") for m in watch.messages
                          if m.get("kind") == "sensor" and m.get("address") == STRAP]
                return bool(states) and states[-1] == "ready" and any(state != "ready" for state in states)
            if watch and not back_to_ready():
                watch.until(back_to_ready, 60)
        finally:
            if watch:
                watch.close()
        facts["messages"] = [{k: m.get(k) for k in ("kind", "state", "reason", "_at")}
                             for m in (watch.messages if watch else [])
                             if m.get("kind") == "sensor" and m.get("address") == STRAP
                             or m.get("kind") == "session"]
        status, body = api(f"/v1/sessions/{session}")
        facts["sessionState"] = body.get("state") if isinstance(body, dict) else body

    def kill(self, facts):
        session = self.state("session")
        pid = unit_property("MainPID")
        # Streaming steadily first: the loss is measured against frames the daemon had.
        wait_for_samples(8, 60, session)
        killed_at = time.time()
        run(["systemctl", "kill", "--signal=KILL", UNIT])
        self.state("killedAt", killed_at)
        facts["killedAt"] = killed_at
        facts["oldPid"] = pid
        facts["newPid"] = wait_active(120, old_pid=pid)
        facts["restarts"] = unit_property("NRestarts")
        status, body = api(f"/v1/sessions/{session}")
        facts["sessionAfter"] = {"status": status, "state": body.get("state") if isinstance(body, dict) else body}
        facts["samplesAfter"] = wait_for_samples(8, 180, session)

    def freeze(self, facts):
        session = self.state("session")
        pid = unit_property("MainPID")
        watchdog = unit_property("WatchdogUSec")
        facts["watchdog"] = watchdog
        frozen_at = time.monotonic()
        run(["kill", "-STOP", pid])
        facts["frozenPid"] = pid
        facts["newPid"] = wait_active(240, old_pid=pid)
        facts["restartedAfter"] = round(time.monotonic() - frozen_at, 1)
        facts["journal"] = [line for line in output(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).splitlines()
                            if "atchdog" in line][-5:]
        facts["samplesAfter"] = wait_for_samples(8, 180, session)

    def stop(self, facts):
        session = self.state("session")
        code, _, error = run(["systemctl", "stop", UNIT], timeout=120)
        facts["stop"] = {"exit": code, "error": error.strip()}
        facts["result"] = unit_property("Result")
        facts["active"] = output(["systemctl", "is-active", UNIT])
        facts["workouts"] = store_workouts()
        facts["journalEnd"] = output(["journalctl", "-b", "-u", UNIT, "--no-pager", "-o", "cat"]).splitlines()[-15:]
        self.state("workout", session)

    def edit_config(self, facts):
        # An admin's edit: the upgrade must keep it (a conffile).
        with open("/etc/hrbridge/config.toml", "a") as file:
            file.write("\n# edited by the admin of hrbridge-bed\n")
        facts["edited"] = True

    # Boot 2 --------------------------------------------------------------------------------

    def after_reboot(self, facts):
        # Started by systemd on its own (enabled: bluetooth.target wants it once hci0 is up).
        facts["startedBySystemd"] = wait_active(120) is not None
        facts["service"] = service_facts()
        facts["bond"] = output(["bluetoothctl", "info", STRAP]).splitlines()
        watch = Watch("--sensor", STRAP)
        try:
            facts["ready"] = watch.until(sensor_state("ready"), 240) is not None
        finally:
            watch.close()
        status, workouts = api("/v1/workouts")
        facts["workouts"] = {"status": status, "body": workouts}
        workout = self.state("workout")
        status, _ = api(f"/v1/workouts/{workout}/export?format=fit", raw_to=f"/tmp/workout.fit")
        facts["export"] = status
        if status == 200:
            subprocess.run(["cp", "/tmp/workout.fit", os.path.join(OUT, "workout.fit")])
        status, samples = api(f"/v1/workouts/{workout}/samples")
        with open(os.path.join(OUT, "samples.json"), "w") as file:
            json.dump(samples, file)
        facts["samplesStatus"] = status
        # The strap streams again without pairing: a new session records it.
        code, text, error = run(["hrbridge", "session", "start", "--sensor", STRAP], user=MEMBER)
        session = json.loads(text).get("id") if code == 0 else None
        facts["session"] = {"exit": code, "id": session, "output": (text + error).strip()[-500:]}
        facts["samples"] = wait_for_samples(8, 120, session)
        run(["hrbridge", "session", "stop", session], user=MEMBER)
        facts["strap"] = strap_state()

    def upgrade(self, facts):
        before = len(store_workouts_api())
        pid = unit_property("MainPID")
        code, text, error = run(["apt-get", "install", "-y", os.environ["NEW_DEB"]], timeout=600,
                                env={"DEBIAN_FRONTEND": "noninteractive"})
        facts["apt"] = {"exit": code, "output": (text + error)[-3000:]}
        facts["version"] = output(["dpkg-query", "-W", "-f", "${Version}", "hrbridge"])
        facts["oldPid"] = pid
        facts["service"] = service_facts()
        facts["workoutsBefore"] = before
        facts["workoutsAfter"] = len(store_workouts_api())
        facts["configEdited"] = "edited by the admin of hrbridge-bed" in open("/etc/hrbridge/config.toml").read()
        facts["config"] = stat("/etc/hrbridge/config.toml")
        facts["bond"] = "Paired: yes" in output(["bluetoothctl", "info", STRAP])

    def remove_and_purge(self, facts):
        code, text, error = run(["apt-get", "remove", "-y", "hrbridge"], timeout=300,
                                env={"DEBIAN_FRONTEND": "noninteractive"})
        facts["remove"] = {"exit": code, "output": (text + error)[-1500:]}
        facts["afterRemove"] = {"store": os.path.exists(STORE), "config": os.path.exists("/etc/hrbridge/config.toml"),
                                "binary": os.path.exists("/usr/bin/hrbridged"),
                                "active": output(["systemctl", "is-active", UNIT])}
        code, text, error = run(["apt-get", "purge", "-y", "hrbridge"], timeout=300,
                                env={"DEBIAN_FRONTEND": "noninteractive"})
        facts["purge"] = {"exit": code, "output": (text + error)[-1500:]}
        facts["afterPurge"] = {"stateDirectory": os.path.exists("/var/lib/hrbridge"),
                               "config": os.path.exists("/etc/hrbridge"),
                               "statoverride": output(["dpkg-statoverride", "--list", "/etc/hrbridge/config.toml"]),
                               "user": output(["getent", "passwd", "hrbridge"]),
                               "bond": "Paired: yes" in output(["bluetoothctl", "info", STRAP])}


def store_workouts_api():
    status, body = api("/v1/workouts")
    if isinstance(body, dict):
        return body.get("workouts", [])
    return body if isinstance(body, list) else []


def main():
    phase = int(next((word.split("=")[1] for word in open("/proc/cmdline").read().split()
                      if word.startswith("hrbridge.phase=")), "1"))
    driver = Driver(phase)
    log(f"phase {phase}")
    if phase == 1:
        for name, function in [("install", driver.install), ("users", driver.users),
                               ("pair", driver.discover_and_pair), ("session", driver.session),
                               ("restartBluetooth", driver.restart_bluetooth), ("kill", driver.kill),
                               ("watchdog", driver.freeze), ("stop", driver.stop), ("editConfig", driver.edit_config)]:
            driver.scenario(name, function)
            if name == "install" and not driver.results["install"].get("version"):
                log("the package is not installed: nothing else can run")
                break
        log("rebooting")
        subprocess.run(["systemctl", "reboot"])
    else:
        for name, function in [("reboot", driver.after_reboot), ("upgrade", driver.upgrade),
                               ("purge", driver.remove_and_purge)]:
            driver.scenario(name, function)
        log("powering off")
        subprocess.run(["systemctl", "poweroff"])


if __name__ == "__main__":
    main()
