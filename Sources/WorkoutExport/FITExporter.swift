import Foundation
public import Samples
import Sensors
public import Workouts

/// Writes a FIT activity file: file_id, device_info per sensor, timer events, records, hrv (RR),
/// a lap per lap event (or per session), a session per activity, and the activity. With DFA α1
/// windows, records carry two developer fields (`dfa_alpha1`, `hrv_artefacts` in %) at the
/// seconds the windows ended; when the samples say how their frames came, records carry
/// `heart_rate_via` (0: a link, 1: a broadcast) with their heart rate. A developer_data_id and a
/// field_description per field describe them.
public enum FITExporter {
    /// The FIT bytes of `workout` with its `samples`; a workout whose times FIT cannot hold is
    /// refused (``ExportError/dateOutsideFIT(_:)``) rather than written with invalid or relative times.
    public static func export(_ workout: Workout, samples: [QuantitySample]) throws(ExportError) -> [UInt8] {
        let model = try ExportModel(workout: workout, samples: samples)
        // Every time written lies between these (events, laps and DFA windows are inside the workout).
        let dates = [workout.start, workout.end] + [model.samples.first, model.samples.last].compactMap { $0?.start }
        if let outside = dates.first(where: { !FITWriter.dateTimes.contains(timestamp($0)) }) {
            throw .dateOutsideFIT(outside)
        }
        var writer = FITWriter()
        let created = timestamp(workout.start)

        writer.write(
            global: 0,
            [
                (.init(0, .enumeration), .integer(4)),  // type: activity
                (.init(1, .uint16), .integer(255)),  // manufacturer: development
                (.init(2, .uint16), .integer(1)),  // product
                (.init(3, .uint32z), .integer(Int64(abs(workout.id.hashValue % 1_000_000_000) + 1))),
                (.init(4, .uint32), .integer(created)),
            ])
        for (index, source) in workout.sources.enumerated() {
            writer.write(
                global: 23,
                [
                    (.init(253, .uint32), .integer(created)),
                    (.init(0, .uint8), .integer(Int64(index))),  // device_index
                    (.init(1, .uint8), .integer(120)),  // device_type: heart rate
                    (.init(2, .uint16), .integer(255)),
                    (.init(3, .uint32z), .integer(Int64(serial(source.address)))),
                    (.init(25, .enumeration), .integer(3)),  // source_type: bluetooth_low_energy
                    (.init(27, .string, count: 20), .text(source.name ?? source.address)),
                ])
        }

        // DFA α1 as developer fields of the records, at the seconds its windows ended.
        var alpha1BySecond: [Int64: HRVWindow] = [:]
        for window in workout.dfaAlpha1 ?? [] {
            if let date = window.date, window.alpha1 != nil { alpha1BySecond[timestamp(date)] = window }
        }
        // How each record's heart rate came, when the samples know.
        let carriesVia = model.samples.contains { $0.type == .heartRate && $0.metadata.via != nil }
        var described: [(FITWriter.DeveloperField, String, String)] = []
        if !alpha1BySecond.isEmpty {
            described += [(alpha1Field, "dfa_alpha1", ""), (artefactField, "hrv_artefacts", "%")]
        }
        if carriesVia { described.append((viaField, "heart_rate_via", "")) }
        if !described.isEmpty { describeDeveloperFields(&writer, described) }

        // Timer events, records and RR intervals in time order.
        writeEvent(&writer, at: workout.start, type: 0)  // timer start
        var pending = model.pauses.flatMap { [($0.start, Int64(4)), ($0.end, Int64(0))] }
        pending.sort { $0.0 < $1.0 }
        var eventIndex = 0
        var rr: [Int64] = []
        var distance = 0.0
        let seconds = Dictionary(grouping: model.samples) { timestamp($0.start) }
        for second in seconds.keys.sorted() {
            while eventIndex < pending.count, timestamp(pending[eventIndex].0) <= second {
                writeEvent(&writer, at: pending[eventIndex].0, type: pending[eventIndex].1)
                eventIndex += 1
            }
            let group = seconds[second] ?? []
            func last(_ type: QuantityType) -> Double? { group.last { $0.type == type }?.canonicalValue }
            distance += group.filter { $0.type == .distance }.map(\.canonicalValue).reduce(0, +)
            let speed = last(.runningSpeed) ?? last(.cyclingSpeed)
            let cadence = last(.cyclingCadence) ?? last(.stepCadence)
            let heartRate = last(.heartRate)
            let via = group.last { $0.type == .heartRate }?.metadata.via
            let power = last(.cyclingPower)
            let hasDistance = group.contains { $0.type == .distance }
            if heartRate != nil || speed != nil || cadence != nil || power != nil || hasDistance {
                writer.write(
                    global: 20,
                    [
                        (.init(253, .uint32), .integer(second)),
                        (.init(3, .uint8), .integer(heartRate.map { Int64($0.rounded()) })),
                        (.init(4, .uint8), .integer(cadence.map { Int64(min($0.rounded(), 254)) })),
                        (
                            .init(5, .uint32),
                            .integer(distance > 0 || hasDistance ? Int64((distance * 100).rounded()) : nil)
                        ),
                        (.init(6, .uint16), .integer(speed.map { Int64(min(($0 * 1000).rounded(), 65534)) })),
                        (.init(7, .uint16), .integer(power.map { Int64(max(0, min($0.rounded(), 65534))) })),
                    ],
                    developer: (alpha1BySecond.isEmpty
                        ? []
                        : [
                            (Self.alpha1Field, .real(alpha1BySecond[second]?.alpha1)),
                            (Self.artefactField, .real(alpha1BySecond[second]?.artefactPercent)),
                        ])
                        + (carriesVia ? [(Self.viaField, .integer(via.map(Self.viaCode)))] : []))
            }
            for interval in group where interval.type == .heartbeatSeries {
                rr.append(Int64((interval.canonicalValue * 1000).rounded()))
                if rr.count == 5 { flushRR(&writer, &rr) }
            }
        }
        flushRR(&writer, &rr)
        while eventIndex < pending.count {
            writeEvent(&writer, at: pending[eventIndex].0, type: pending[eventIndex].1)
            eventIndex += 1
        }
        writeEvent(&writer, at: workout.end, type: 4)  // timer stop_all

        var lapIndex = 0
        for (sessionIndex, session) in model.sessions.enumerated() {
            let laps = model.laps(of: session)
            let firstLap = lapIndex
            for lap in laps {
                writer.write(global: 19, spanFields(lap, event: 9, index: lapIndex, sport: true))
                lapIndex += 1
            }
            let (sport, subSport) = sportCodes(session.configuration)
            writer.write(
                global: 18,
                spanFields(session, event: 8, index: sessionIndex, sport: false) + [
                    (.init(5, .enumeration), .integer(sport)), (.init(6, .enumeration), .integer(subSport)),
                    (.init(25, .uint16), .integer(Int64(firstLap))), (.init(26, .uint16), .integer(Int64(laps.count))),
                ])
        }
        let end = timestamp(workout.end)
        writer.write(
            global: 34,
            [
                (.init(253, .uint32), .integer(end)),
                (.init(0, .uint32), .integer(Int64((workout.elapsedTime * 1000).rounded()))),
                (.init(1, .uint16), .integer(Int64(model.sessions.count))),
                (.init(2, .enumeration), .integer(0)),  // manual
                (.init(3, .enumeration), .integer(26)),  // activity
                (.init(4, .enumeration), .integer(1)),  // stop
                (.init(5, .uint32), .integer(end + Int64(TimeZone.current.secondsFromGMT(for: workout.end)))),
            ])
        return writer.file()
    }

    static let alpha1Field = FITWriter.DeveloperField(number: 0, type: .float32, developerIndex: 0)
    static let artefactField = FITWriter.DeveloperField(number: 1, type: .float32, developerIndex: 0)
    static let viaField = FITWriter.DeveloperField(number: 2, type: .uint8, developerIndex: 0)

    /// `heart_rate_via`: 0 a link's notification, 1 a broadcast (invalid, 0xFF: not known).
    static func viaCode(_ via: MeasurementPath) -> Int64 {
        switch via {
        case .connection: 0
        case .advertisement: 1
        }
    }

    /// hrbridge's developer data id and the descriptions of its record fields.
    private static func describeDeveloperFields(
        _ writer: inout FITWriter, _ fields: [(FITWriter.DeveloperField, String, String)]
    ) {
        // "hrbridge" padded: the application id is 16 bytes.
        let application = Array("hrbridge.hrv.dfa".utf8).map { Int64($0) }
        writer.write(
            global: 207,
            [
                (.init(1, .byte, count: 16), .array(application)),  // application_id
                (.init(3, .uint8), .integer(0)),  // developer_data_index
                (.init(4, .uint32), .integer(1)),  // application_version
            ])
        for (field, name, units) in fields {
            writer.write(
                global: 206,
                [
                    (.init(0, .uint8), .integer(Int64(field.developerIndex))),
                    (.init(1, .uint8), .integer(Int64(field.number))),  // field_definition_number
                    (.init(2, .uint8), .integer(Int64(field.type.rawValue))),  // fit_base_type_id
                    (.init(3, .string, count: 16), .text(name)),  // field_name
                    (.init(8, .string, count: 8), .text(units)),  // units
                    (.init(14, .uint16), .integer(20)),  // native_mesg_num: record
                ])
        }
    }

    /// Seconds since the FIT epoch.
    static func timestamp(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 - FITWriter.epochOffset).rounded(.down))
    }

    private static func writeEvent(_ writer: inout FITWriter, at date: Date, type: Int64) {
        writer.write(
            global: 21,
            [
                (.init(253, .uint32), .integer(timestamp(date))), (.init(0, .enumeration), .integer(0)),  // timer
                (.init(1, .enumeration), .integer(type)),
            ])
    }

    private static func flushRR(_ writer: inout FITWriter, _ values: inout [Int64]) {
        guard !values.isEmpty else { return }
        writer.write(global: 78, [(.init(0, .uint16, count: 5), .array(values))])
        values = []
    }

    private static func spanFields(_ span: ExportModel.Span, event: Int64, index: Int, sport: Bool)
        -> [(FITWriter.Field, FITWriter.Value)]
    {
        var fields: [(FITWriter.Field, FITWriter.Value)] = [
            (.init(253, .uint32), .integer(timestamp(span.end))),
            (.init(0, .enumeration), .integer(event)),
            (.init(1, .enumeration), .integer(1)),  // stop
            (.init(2, .uint32), .integer(timestamp(span.start))),
            (.init(7, .uint32), .integer(Int64((span.end.timeIntervalSince(span.start) * 1000).rounded()))),
            (.init(8, .uint32), .integer(Int64((span.timerTime * 1000).rounded()))),
            (.init(9, .uint32), .integer(span.distance.map { Int64(($0 * 100).rounded()) })),
            (.init(11, .uint16), .integer(span.kilocalories.map { Int64($0.rounded()) })),
            (.init(254, .uint16), .integer(Int64(index))),
        ]
        // Average and maximum heart rate are fields 15/16 in lap, 16/17 in session.
        let heartRateFields: (UInt8, UInt8) = sport ? (15, 16) : (16, 17)
        fields.append((.init(heartRateFields.0, .uint8), .integer(span.averageHeartRate.map { Int64($0.rounded()) })))
        fields.append((.init(heartRateFields.1, .uint8), .integer(span.maximumHeartRate.map { Int64($0.rounded()) })))
        if sport { fields.append((.init(25, .enumeration), .integer(sportCodes(span.configuration).sport))) }
        return fields
    }

    /// FIT sport and sub-sport.
    static func sportCodes(_ configuration: WorkoutConfiguration) -> (sport: Int64, subSport: Int64) {
        let indoor = configuration.location == .indoor
        switch configuration.activityType {
        case .running: return (1, indoor ? 1 : 0)  // running, treadmill
        case .cycling: return (2, indoor ? 6 : 0)  // cycling, indoor_cycling
        case .walking: return (11, 0)
        case .rowing: return (15, indoor ? 14 : 0)  // rowing, indoor_rowing
        case .swimming: return (5, 0)
        case .hiit: return (10, 70)  // training, hiit
        case .strength: return (10, 20)  // training, strength_training
        case .elliptical: return (4, 15)  // fitness_equipment, elliptical
        case .other: return (0, 0)
        }
    }

    private static func serial(_ address: String) -> UInt32 {
        var hash: UInt32 = 2_166_136_261
        for byte in address.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return hash == 0 ? 1 : hash
    }
}
