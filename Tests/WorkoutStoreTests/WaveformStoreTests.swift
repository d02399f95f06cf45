import Foundation
import GRDB
import Logging
import Samples
import Sensors
import Testing
import Workouts

@testable import WorkoutStore

private let h10 = SensorIdentity(adapter: "hci0", address: "A0:9E:1A:00:00:01", name: "Polar H10 0A1B2C3D")
private let other = SensorIdentity(adapter: "hci0", address: "A0:9E:1A:00:00:02", name: "Polar H10 0A1B2C3E")
// Whole microseconds, as PostgreSQL's timestamptz keeps them.
private let origin = Date(timeIntervalSince1970: 1_795_626_000.125)

/// Frame `index` of a stream: 73 ECG samples at 130 Hz, or 36 acceleration samples at 50 Hz, times
/// on a 1 ms grid so both backends read them back exactly.
func waveformFrame(
    _ sensor: SensorIdentity, _ kind: WaveformKind, _ index: Int, continuous: Bool = true
) -> SensorWaveform {
    let samples = kind == .ecg ? 73 : 36
    let rate = kind == .ecg ? 130 : 50
    let seconds = (Double(index * samples) / Double(rate) * 1000).rounded() / 1000
    let values = (0..<(samples * kind.channels)).map {
        Int32((index * 1_000 + $0) % 4_001 - 2_000) * (kind == .acc ? 3 : 1)
    }
    return SensorWaveform(
        sensor: sensor, kind: kind, sampleRate: rate, values: values, start: origin.addingTimeInterval(seconds),
        interval: 1 / Double(rate), continuous: continuous && index > 0,
        sensorTimestamp: 599_616_012_345_678_848 &+ UInt64(index) * 561_538_461,
        receivedAt: origin.addingTimeInterval(seconds + 0.6))
}

/// Whether frames read back are the frames written: every field, times to the microsecond (a
/// Date through Unix seconds can move by its last bit; PostgreSQL keeps microseconds).
func sameFrames(_ read: [SensorWaveform], _ written: [SensorWaveform]) -> Bool {
    read.count == written.count
        && zip(read, written).allSatisfy { a, b in
            a.sensor == b.sensor && a.sensor.name == b.sensor.name && a.kind == b.kind && a.sampleRate == b.sampleRate
                && a.values == b.values && a.interval == b.interval && a.continuous == b.continuous
                && a.sensorTimestamp == b.sensorTimestamp && abs(a.start.timeIntervalSince(b.start)) < 1e-6
                && abs(a.receivedAt.timeIntervalSince(b.receivedAt)) < 1e-6
        }
}

/// Raw signals in the store, on both backends: stored once, read back exactly, paged, summarized,
/// deleted with their workout, and kept apart from the samples.
@Suite("Store conformance: raw signals (SQLite and PostgreSQL)")
struct WaveformStoreTests {
    func begin(_ store: WorkoutStore) async throws -> UUID {
        let id = UUID()
        try await store.beginWorkout(
            ActiveSessionRecord(
                workoutID: id, configuration: WorkoutConfiguration(activityType: .running), profile: nil,
                start: origin, state: .running))
        return id
    }

    @Test("frames read back equal, once each; filters, pages and summaries", arguments: StoreKind.allCases)
    func roundTrip(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workout = try await begin(store)
            let ecg = (0..<40).map { waveformFrame(h10, .ecg, $0, continuous: $0 != 25) }
            let acc = (0..<20).map { waveformFrame(h10, .acc, $0) }
            let second = (0..<5).map { waveformFrame(other, .ecg, $0) }
            #expect(try await store.append(waveforms: ecg + acc, workout: workout) == 60)
            #expect(try await store.append(waveforms: second, workout: workout) == 5)
            // A stream that began before the workout: its first stored frame follows an unstored one.
            let late = (3..<8).map { waveformFrame(other, .acc, $0) }
            #expect(try await store.append(waveforms: Array(late.suffix(2)), workout: workout) == 2)
            #expect(try await store.append(waveforms: Array(late.prefix(3)), workout: workout) == 3)
            // A frame sent again (a retried flush) is not stored twice.
            #expect(try await store.append(waveforms: Array(ecg.prefix(10)) + [second[0]], workout: workout) == 0)

            let stored = try await store.waveforms(WaveformQuery(workout: workout, sensor: h10, kind: .ecg))
            #expect(sameFrames(stored, ecg), "every field, the values exactly")
            #expect(stored.first?.sensor.name == "Polar H10 0A1B2C3D")
            let all = try await store.waveforms(WaveformQuery(workout: workout, limit: 1_000))
            #expect(all.count == 70)
            #expect(all.map(\.start) == all.map(\.start).sorted(), "time order")
            #expect(
                sameFrames(try await store.waveforms(WaveformQuery(workout: workout, sensor: h10, kind: .acc)), acc))
            #expect(try await store.waveforms(WaveformQuery(workout: UUID())).isEmpty)

            var pages: [[SensorWaveform]] = []
            try await store.forEachWaveformPage(workout: workout, sensor: h10, kind: .ecg, pageSize: 16) {
                pages.append($0)
            }
            #expect(pages.map(\.count) == [16, 16, 8])
            #expect(sameFrames(pages.flatMap { $0 }, ecg))

            let summaries = try await store.waveformSummaries(of: workout)
            #expect(
                summaries.map(\.first.timeIntervalSince1970)
                    == [ecg[0], acc[0], second[0], late[0]].map(\.start.timeIntervalSince1970))
            #expect(abs(summaries[3].last.timeIntervalSince(late[4].start)) < 1e-6, "the latest, sent first")
            #expect(
                summaries.map { summary in
                    var summary = summary
                    (summary.first, summary.last) = (origin, origin)
                    return summary
                } == [
                    WaveformSummary(
                        sensor: h10, kind: .ecg, sampleRate: 130, frames: 40, samples: 40 * 73, runs: 2,
                        first: origin, last: origin),
                    WaveformSummary(
                        sensor: h10, kind: .acc, sampleRate: 50, frames: 20, samples: 20 * 36, runs: 1,
                        first: origin, last: origin),
                    WaveformSummary(
                        sensor: other, kind: .ecg, sampleRate: 130, frames: 5, samples: 5 * 73, runs: 1,
                        first: origin, last: origin),
                    WaveformSummary(
                        sensor: other, kind: .acc, sampleRate: 50, frames: 5, samples: 5 * 36, runs: 1,
                        first: origin, last: origin),
                ], "by strap, then signal (ECG first)")
            #expect(abs(summaries[0].last.timeIntervalSince(ecg[39].start)) < 1e-6)
            // Raw signals are not samples: the heart-rate tables do not see them.
            #expect(try await store.samples(type: .heartRate, workout: workout).isEmpty)

            try await store.deleteWorkout(workout)
            #expect(try await store.waveforms(WaveformQuery(workout: workout)).isEmpty)
            #expect(try await store.waveformSummaries(of: workout).isEmpty)
        }
    }

    @Test(
        "a frame of a workout that does not exist is refused, and nothing is half-written",
        arguments: StoreKind.allCases)
    func unknownWorkout(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            let workout = try await begin(store)
            await #expect(throws: StoreError.self) {
                try await store.append(waveforms: [waveformFrame(h10, .ecg, 0)], workout: UUID())
            }
            #expect(try await store.append(waveforms: [waveformFrame(h10, .ecg, 0)], workout: workout) == 1)
        }
    }

    @Test("a damaged blob is a typed error naming the frame, never a trap (SQLite)")
    func damagedBlob() async throws {
        try await StoreKind.sqlite.withStore { store in
            let workout = try await begin(store)
            try await store.append(waveforms: [waveformFrame(h10, .ecg, 0)], workout: workout)
            _ = try await store.sqlite!.write { db in
                try db.execute(sql: "UPDATE waveform SET data = x'0100'")
            }
            await #expect {
                try await store.waveforms(WaveformQuery(workout: workout))
            } throws: { error in
                guard case .corrupt(let what) = error as? StoreError else { return false }
                return what.contains("ecg frame of A0:9E:1A:00:00:01") && what.contains("cut short")
            }
        }
    }
}
