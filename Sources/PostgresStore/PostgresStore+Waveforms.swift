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
            return try await session.execute(
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
                """)
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

    /// What a workout holds of each strap's raw signals, by strap and signal.
    public func waveformSummaries(of workout: UUID) async throws(StoreError) -> [WaveformSummary] {
        try await read { session in
            try await session.rows(
                """
                SELECT src.adapter, src.address, src.name, w.kind, MAX(w.rate)::int8, COUNT(*)::int8,
                SUM(w.sample_count)::int8, COUNT(*) FILTER (WHERE NOT w.continuous)::int8, MIN(w.start_time),
                MAX(w.start_time), (array_agg(w.continuous ORDER BY w.start_time))[1]
                FROM waveform w JOIN source src ON src.id = w.source_id WHERE w.workout_id = \(workout.uuidString)
                GROUP BY src.adapter, src.address, src.name, w.kind ORDER BY src.address, src.adapter, w.kind
                """
            ).map { row in
                let text = try row.text(3)
                guard let kind = WaveformKind(rawValue: text) else {
                    throw StoreError.corrupt("waveform kind '\(text)'")
                }
                // A run starts at every frame that does not follow its predecessor, and at the first.
                let firstContinuous = try row[10].decode(Bool.self)
                return WaveformSummary(
                    sensor: SensorIdentity(
                        adapter: try row.text(0), address: try row.text(1), name: try row.optionalText(2)),
                    kind: kind, sampleRate: Int(try row.int(4)), frames: Int(try row.int(5)),
                    samples: Int(try row.int(6)), runs: Int(try row.int(7)) + (firstContinuous ? 1 : 0),
                    first: try row.date(8), last: try row.date(9))
            }
        }
    }
}
