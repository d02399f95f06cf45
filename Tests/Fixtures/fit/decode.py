#!/usr/bin/env python3
"""Decodes a FIT file with Garmin's own FIT SDK (PyPI garmin-fit-sdk), integrity check on, and
prints what the tests compare as one JSON object."""
import json
import math
import sys

from garmin_fit_sdk import Decoder, Stream

FIT_EPOCH = 631065600


def seconds(value):
    # Timestamps stay raw FIT seconds (convert_datetimes_to_dates=False): turn them into Unix time.
    return None if value is None else value + FIT_EPOCH


def main():
    checker = Decoder(Stream.from_file(sys.argv[1]))
    is_fit = checker.is_fit()
    integrity = checker.check_integrity()
    # The checks consume their stream: read from a fresh one.
    messages, errors = Decoder(Stream.from_file(sys.argv[1])).read(
        apply_scale_and_offset=True, convert_datetimes_to_dates=False, convert_types_to_strings=True,
        enable_crc_check=True, expand_sub_fields=True, expand_components=True, merge_heart_rates=False)
    records = messages.get("record_mesgs", [])
    # Developer fields are keyed by their field description's key: name them.
    names = {description.get("key"): description.get("field_name")
             for description in messages.get("field_description_mesgs", [])}
    base_types = {description.get("key"): description.get("fit_base_type_id")
                  for description in messages.get("field_description_mesgs", [])}
    def present(key, value):
        # An invalid float32 (all bits set) reads back as NaN, an invalid uint8 or enum as 255
        # (base type ids 2 and 0, or their names): the field is absent there.
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return not (base_types.get(key) in (0, 2, "enum", "uint8") and value == 255)
    developer = []
    for record in records:
        fields = {names.get(key, str(key)): value
                  for key, value in record.get("developer_fields", {}).items() if present(key, value)}
        if fields:
            developer.append({"timestamp": seconds(record.get("timestamp")), **fields})
    hrv = [value for message in messages.get("hrv_mesgs", []) for value in message.get("time", []) if value is not None]
    result = {
        "isFit": is_fit,
        "integrity": integrity,
        "errors": [str(error) for error in errors],
        "fileType": messages.get("file_id_mesgs", [{}])[0].get("type"),
        "records": len(records),
        "heartRates": [record.get("heart_rate") for record in records],
        "timestamps": [seconds(record.get("timestamp")) for record in records],
        "rr": hrv,
        "laps": [
            {
                "start": seconds(lap.get("start_time")),
                "timer": lap.get("total_timer_time"),
                "elapsed": lap.get("total_elapsed_time"),
                "avgHeartRate": lap.get("avg_heart_rate"),
                "maxHeartRate": lap.get("max_heart_rate"),
                "calories": lap.get("total_calories"),
                "distance": lap.get("total_distance"),
            }
            for lap in messages.get("lap_mesgs", [])
        ],
        "sessions": [
            {
                "sport": session.get("sport"),
                "subSport": session.get("sub_sport"),
                "start": seconds(session.get("start_time")),
                "timer": session.get("total_timer_time"),
                "avgHeartRate": session.get("avg_heart_rate"),
                "numLaps": session.get("num_laps"),
                "calories": session.get("total_calories"),
                "distance": session.get("total_distance"),
            }
            for session in messages.get("session_mesgs", [])
        ],
        "activity": [
            {"timer": activity.get("total_timer_time"), "sessions": activity.get("num_sessions")}
            for activity in messages.get("activity_mesgs", [])
        ],
        "events": [(event.get("event"), event.get("event_type")) for event in messages.get("event_mesgs", [])],
        "devices": len(messages.get("device_info_mesgs", [])),
        "developerFields": [
            {"name": description.get("field_name"), "units": description.get("units"),
             "nativeMessage": description.get("native_mesg_num")}
            for description in messages.get("field_description_mesgs", [])
        ],
        "developerRecords": developer,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
