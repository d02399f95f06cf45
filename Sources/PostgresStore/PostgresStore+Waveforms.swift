public import Foundation
import NIOCore
import PostgresNIO
public import Sensors
public import WorkoutStore

extension PostgresStore {
    /// Stores raw-signal frames of a workout not stored yet, in one statement; returns how many were new.
    @discardableResult
    public func append(waveforms: [SensorWaveform], workout: UUID) async throws(StoreError) -> Int {
        guard !waveforms.isEmpty else { return 0 }
        return try await write { session in
            var sourceIDs: [SensorIdentity: Int64] = [:]
            for sensor in Set(waveforms.map(\.sensor)) { sourceIDs[sensor] = try await self.sourceID(sensor, session) }
            let sources = waveforms.map { sourceIDs[$0.sensor] ?? 0 }
            let kinds = waveforms.map(\.kind.rawValue)
            let starts = waveforms.map(\.start.timeIntervalSince1970)
            let intervals = waveforms.map(\.interval)
            let rates = waveforms.map { Int64($0.sampleRate) }
            let counts = waveforms.map { Int64($0.sampleCount) }
            let continuous = waveforms.map(\.continuous)
            let sensorTimes = waveforms.map { Int64(bitPattern: $0.sensorTimestamp) }
            let received = waveforms.map(\.receivedAt.timeIntervalSince1970)
            let blobs = waveforms.map { ByteBuffer(bytes: WaveformBlob.encode($0.values, channels: $0.kind.channels)) }
            let inserted = try await session.rows(
                """
                INSERT INTO waveform (workout_id, source_id, kind, start_time, sample_interval, rate, sample_count,
                continuous, sensor_time, received_at, data)
                SELECT \(workout.uuidString), t.source_id, t.kind, to_timestamp(t.start_time), t.sample_interval,
                t.rate, t.sample_count, t.continuous, t.sensor_time, to_timestamp(t.received_at), t.data
                FROM unnest(\(sources)::int8[], \(kinds)::text[], \(starts)::float8[], \(intervals)::float8[],
                \(rates)::int8[], \(counts)::int8[], \(continuous)::bool[], \(sensorTimes)::int8[],
                \(received)::float8[], \(blobs)::bytea[])
                AS t(source_id, kind, start_time, sample_interval, rate, sample_count, continuous, sensor_time,
                received_at, data)
                ON CONFLICT DO NOTHING
                RETURNING source_id, kind, extract(epoch FROM start_time)::float8, rate::int8, sample_count::int8, continuous
                """)
            var tallies: [PostgresStreamKey: WaveformStreamTally] = [:]
            for row in inserted {
                tallies[
                    PostgresStreamKey(source: try row.int(0), kind: try row.text(1)), default: WaveformStreamTally()
                ]
                .add(
                    start: try row.double(2), rate: Int(try row.int(3)), samples: Int(try row.int(4)),
                    continuous: try row[5].decode(Bool.self))
            }
            for (key, tally) in tallies {
                try await session.execute(
                    """
                    INSERT INTO waveform_stream (workout_id, source_id, kind, rate, frames, samples, runs, first_time,
                    last_time) VALUES (\(workout.uuidString), \(key.source), \(key.kind), \(Int64(tally.rate)),
                    \(Int64(tally.frames)), \(Int64(tally.samples)), \(Int64(tally.runsOfANewStream)),
                    to_timestamp(\(tally.first)), to_timestamp(\(tally.last)))
                    ON CONFLICT (workout_id, source_id, kind) DO UPDATE SET
                    rate = GREATEST(waveform_stream.rate, excluded.rate), frames = waveform_stream.frames + excluded.frames,
                    samples = waveform_stream.samples + excluded.samples, runs = waveform_stream.runs + \(Int64(tally.breaks)),
                    first_time = LEAST(waveform_stream.first_time, excluded.first_time),
                    last_time = GREATEST(waveform_stream.last_time, excluded.last_time)
                    """)
            }
            return inserted.count
        }
    }

    /// A workout's raw-signal frames matching the query, in time order.
    public func waveforms(_ query: WaveformQuery) async throws(StoreError) -> [SensorWaveform] {
        try await read { session in
            try await session.rows(
                """
                SELECT src.adapter, src.address, src.name, w.kind, w.start_time, w.sample_interval, w.rate,
                w.sample_count, w.continuous, w.sensor_time, w.received_at, w.data
                FROM waveform w JOIN source src ON src.id = w.source_id
                WHERE w.workout_id = \(query.workout.uuidString)
                AND (\(query.sensor?.address)::text IS NULL OR (src.adapter = \(query.sensor?.adapter)
                AND src.address = \(query.sensor?.address)))
                AND (\(query.kind?.rawValue)::text IS NULL OR w.kind = \(query.kind?.rawValue))
                AND (\(query.after?.timeIntervalSince1970)::float8 IS NULL
                OR w.start_time > to_timestamp(\(query.after?.timeIntervalSince1970)))
                ORDER BY w.start_time, w.source_id, w.kind LIMIT \(Int64(query.limit))
                """
            ).map { row in
                let data = try row[11].decode(ByteBuffer.self)
                return try StoreRows.waveform(
                    sensor: SensorIdentity(
                        adapter: try row.text(0), address: try row.text(1), name: try row.optionalText(2)),
                    kind: try row.text(3), start: try row.date(4), interval: try row.double(5),
                    sampleRate: try row.int(6), count: try row.int(7), continuous: try row[8].decode(Bool.self),
                    sensorTimestamp: try row.int(9), receivedAt: try row.date(10),
                    data: data.getBytes(at: data.readerIndex, length: data.readableBytes) ?? [])
            }
        }
    }

    /// What a workout holds of each strap's raw signals, by strap and signal (the stream rollups).
    public func waveformSummaries(of workout: UUID) async throws(StoreError) -> [WaveformSummary] {
        try await read { session in
            try await session.rows(
                """
                SELECT src.adapter, src.address, src.name, w.kind, w.rate::int8, w.frames, w.samples, w.runs,
                w.first_time, w.last_time
                FROM waveform_stream w JOIN source src ON src.id = w.source_id WHERE w.workout_id = \(workout.uuidString)
                """
            ).map { row in
                let text = try row.text(3)
                guard let kind = WaveformKind(rawValue: text) else {
                    throw StoreError.corrupt("waveform kind '\(text)'")
                }
                return WaveformSummary(
                    sensor: SensorIdentity(
                        adapter: try row.text(0), address: try row.text(1), name: try row.optionalText(2)),
                    kind: kind, sampleRate: Int(try row.int(4)), frames: Int(try row.int(5)),
                    samples: Int(try row.int(6)), runs: Int(try row.int(7)), first: try row.date(8),
                    last: try row.date(9))
            }
        }
    }
}

/// A strap's signal within a transaction's tallies.
struct PostgresStreamKey: Hashable {
    let source: Int64
    let kind: String
}
