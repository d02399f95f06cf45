// The libmosquitto client API for the MQTT module, which is the only importer of this target.
#ifndef HRBRIDGE_CMOSQUITTO_SHIM_H
#define HRBRIDGE_CMOSQUITTO_SHIM_H

#include <mosquitto.h>

#endif
