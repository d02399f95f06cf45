import BusHarness
import Foundation
import Testing
import WorkoutExport

/// EDF+ files read back by pyEDFlib, the EDFlib project's reader (PyPI), not by our code.
@Suite("EDF+ writer, read back with pyEDFlib")
struct EDFTests {
    struct Read: Decodable {
        struct Signal: Decodable {
            var label: String
            var unit: String
            var frequency: Double
            var values: [Double]
        }
        var filetype: Int
        var start: String
        var records: Int
        var signals: [Signal]
        var onsets: [Double]
        /// Onset, duration (−1: none) and text of each annotation, as pyEDFlib returns them.
        var annotations: [[JSONScalar]]
    }

    /// A number or a text in pyEDFlib's annotation triples.
    enum JSONScalar: Decodable {
        case number(Double)
        case text(String)

        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Double.self) {
                self = .number(number)
            } else {
                self = .text(try container.decode(String.self))
            }
        }

        var number: Double? { if case .number(let value) = self { value } else { nil } }
        var text: String? { if case .text(let value) = self { value } else { nil } }
    }

    static func read(_ path: String) async throws -> Read {
        let reader = try Spawned(
            venvPython, [packageRoot.appendingPathComponent("Tests/Fixtures/edf/read.py").path, path], label: "pyedflib"
        )
        let status = await reader.wait()
        let line = try #require(reader.output.first { $0.hasPrefix("{") }, "\(reader.report)")
        #expect(status == 0)
        return try JSONDecoder().decode(Read.self, from: Data(line.utf8))
    }

    @Test("ECG in µV: labels, units, 130 Hz, every value, records from the start's fraction of a second")
    func ecg() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-\(UUID()).edf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // 2026-11-25 17:00:00.250 UTC: the header holds the second, the first onset the rest.
        let start = Date(timeIntervalSince1970: 1_795_626_000.25)
        let writer = try EDFWriter(
            path: path, signals: [.init(label: "ECG", physicalDimension: "uV")], samplesPerRecord: 130,
            recordDuration: 1, start: start)
        let values = (0..<(5 * 130)).map { Double(Int((1500 * sin(Double($0) / 7)).rounded())) }
        for record in 0..<5 { try writer.write([Array(values[(record * 130)..<((record + 1) * 130)])]) }
        try writer.close()
        let read = try await Self.read(path)
        #expect(read.filetype == 1, "EDF+ (pyEDFlib's FILETYPE_EDFPLUS)")
        // The header's second; the fraction is the first record's onset (pyEDFlib 0.1.42 scales a
        // sub-second start by 1/10 and its own writer drops it, so it is checked on the onsets).
        #expect(read.start.hasPrefix("2026-11-25T17:00:00"), "\(read.start)")
        #expect(read.records == 5)
        let ecg = try #require(read.signals.first)
        #expect(ecg.label == "ECG" && ecg.unit == "uV")
        #expect(ecg.frequency == 130)
        #expect(ecg.values == values)
        #expect(read.onsets == [0.25, 1.25, 2.25, 3.25, 4.25])
    }

    @Test("Acceleration: three signals in mG, clamped to the 16-bit range")
    func acceleration() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hrbridge-\(UUID()).edf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let signals = ["X", "Y", "Z"].map { EDFWriter.Signal(label: "ACC \($0)", physicalDimension: "mG") }
        let writer = try EDFWriter(path: path, signals: signals, samplesPerRecord: 50, recordDuration: 1, start: Date())
        let x = (0..<50).map(Double.init)
        try writer.write([x, x.map { -$0 }, Array(repeating: 40_000, count: 50)])
        #expect(throws: EDFWriter.Failure.wrongRecord(expected: 150, got: 149)) {
            try writer.write([x, x, Array(x.dropLast())])
        }
        try writer.close()
        let read = try await Self.read(path)
        #expect(
            read.signals.map(\.label) == ["ACC X", "ACC Y", "ACC Z"] && read.signals.allSatisfy { $0.unit == "mG" })
        #expect(read.signals[0].values == x && read.signals[1].values == x.map { -$0 })
        #expect(read.signals[2].values.allSatisfy { $0 == 32767 }, "beyond the range: clamped, never wrapped")
        #expect(abs(read.signals[0].frequency - 50) < 0.01)
    }
}
