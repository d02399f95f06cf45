public import Foundation
import GRDB
public import Sensors

extension SQLiteStore {
    /// Stores raw-signal frames of a workout not stored yet, in one transaction; returns how many were new.
    @discardableResult
    public func append(waveforms: [SensorWaveform], workout: UUID) async throws(StoreError) -> Int {
        guard !waveforms.isEmpty else { return 0 }
        return try await write { [self] db in
            var sourceIDs: [SensorIdentity: Int64] = [:]
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO waveform (workoutId, sourceId, kind, start, interval, rate, count, continuous,
                    sensorTime, receivedAt, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT DO NOTHING
                    """)
            var added = 0
            var tallies: [WaveformStreamKey: WaveformStreamTally] = [:]
            for frame in waveforms {
                let source: Int64
                if let known = sourceIDs[frame.sensor] {
                    source = known
                } else {
                    source = try sourceID(frame.sensor, db)
                    sourceIDs[frame.sensor] = source
                }
                try statement.execute(arguments: [
                    workout.uuidString, source, frame.kind.rawValue, frame.start.timeIntervalSince1970,
                    frame.interval, frame.sampleRate, frame.sampleCount, frame.continuous,
                    Int64(bitPattern: frame.sensorTimestamp), frame.receivedAt.timeIntervalSince1970,
                    Data(WaveformBlob.encode(frame.values, channels: frame.kind.channels)),
                ])
                guard db.changesCount > 0 else { continue }
                added += 1
                tallies[WaveformStreamKey(source: source, kind: frame.kind.rawValue), default: WaveformStreamTally()]
                    .add(
                        start: frame.start.timeIntervalSince1970, rate: frame.sampleRate, samples: frame.sampleCount,
                        continuous: frame.continuous)
            }
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO waveformStream (workoutId, sourceId, kind, rate, frames, samples, runs, first, last)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workoutId, sourceId, kind) DO UPDATE SET
                    rate = max(rate, excluded.rate), frames = frames + excluded.frames,
                    samples = samples + excluded.samples, runs = runs + ?, first = min(first, excluded.first),
                    last = max(last, excluded.last)
                    """)
            for (key, tally) in tallies {
                try upsert.execute(arguments: [
                    workout.uuidString, key.source, key.kind, tally.rate, tally.frames, tally.samples,
                    tally.runsOfANewStream, tally.first, tally.last, tally.breaks,
                ])
            }
            return added
        }
    }

    /// A workout's raw-signal frames matching the query, in time order.
    public func waveforms(_ query: WaveformQuery) async throws(StoreError) -> [SensorWaveform] {
        try await read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT w.*, src.adapter, src.address, src.name FROM waveform w JOIN source src ON src.id = w.sourceId
                    WHERE w.workoutId = ? AND (? IS NULL OR (src.adapter = ? AND src.address = ?))
                    AND (? IS NULL OR w.kind = ?) AND (? IS NULL OR w.start > ?)
                    ORDER BY w.start, w.sourceId, w.kind LIMIT ?
                    """,
                arguments: [
                    query.workout.uuidString, query.sensor?.address, query.sensor?.adapter, query.sensor?.address,
                    query.kind?.rawValue, query.kind?.rawValue, query.after?.timeIntervalSince1970,
                    query.after?.timeIntervalSince1970, query.limit,
                ])
            return try rows.map { row in
                let data: Data = try row.value("data")
                return try StoreRows.waveform(
                    sensor: SensorIdentity(
                        adapter: try row.value("adapter"), address: try row.value("address"), name: row["name"]),
                    kind: try row.value("kind"), start: Date(timeIntervalSince1970: try row.value("start")),
                    interval: try row.value("interval"), sampleRate: try row.value("rate"),
                    count: try row.value("count"), continuous: try row.value("continuous"),
                    sensorTimestamp: try row.value("sensorTime"),
                    receivedAt: Date(timeIntervalSince1970: try row.value("receivedAt")), data: [UInt8](data))
            }
        }
    }

    /// What a workout holds of each strap's raw signals, by strap and signal (the stream rollups).
    public func waveformSummaries(of workout: UUID) async throws(StoreError) -> [WaveformSummary] {
        try await read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT src.adapter, src.address, src.name, w.* FROM waveformStream w
                    JOIN source src ON src.id = w.sourceId WHERE w.workoutId = ?
                    """,
                arguments: [workout.uuidString]
            ).map { row in
                let kindText: String = try row.value("kind")
                guard let kind = WaveformKind(rawValue: kindText) else {
                    throw StoreError.corrupt("waveform kind '\(kindText)'")
                }
                return WaveformSummary(
                    sensor: SensorIdentity(
                        adapter: try row.value("adapter"), address: try row.value("address"), name: row["name"]),
                    kind: kind, sampleRate: try row.value("rate"), frames: try row.value("frames"),
                    samples: try row.value("samples"), runs: try row.value("runs"),
                    first: Date(timeIntervalSince1970: try row.value("first")),
                    last: Date(timeIntervalSince1970: try row.value("last")))
            }
        }
    }
}

/// A strap's signal within a transaction's tallies.
struct WaveformStreamKey: Hashable {
    let source: Int64
    let kind: String
}
