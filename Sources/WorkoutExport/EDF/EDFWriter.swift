public import Foundation

/// An EDF+C file (continuous: one run of samples without a gap) written as it is recorded.
///
/// One data record holds `samplesPerRecord` samples of every signal, each a 16-bit integer scaled
/// linearly from the signal's physical range. The header holds the start to the second; the first
/// record's timekeeping TAL (in the `EDF Annotations` signal) adds the fraction, and record k starts
/// k record durations later. Further TALs carry annotations. The number of records is written at
/// ``close()`` (−1 until then, as EDF allows while recording). Most EDF readers (EDFlib, pyEDFlib,
/// MNE) read only continuous files: a recording with a gap is two files.
public final class EDFWriter {
    /// One signal's header.
    public struct Signal: Sendable, Equatable {
        public var label: String
        public var transducer: String
        public var physicalDimension: String
        public var physicalMinimum: Double
        public var physicalMaximum: Double
        public var digitalMinimum: Int
        public var digitalMaximum: Int

        /// A signal whose physical values map one to one to 16-bit digital values.
        public init(
            label: String, transducer: String = "", physicalDimension: String, physicalMinimum: Double = -32768,
            physicalMaximum: Double = 32767, digitalMinimum: Int = -32768, digitalMaximum: Int = 32767
        ) {
            self.label = label
            self.transducer = transducer
            self.physicalDimension = physicalDimension
            self.physicalMinimum = physicalMinimum
            self.physicalMaximum = physicalMaximum
            self.digitalMinimum = digitalMinimum
            self.digitalMaximum = digitalMaximum
        }

        /// The digital value of `physical`, clamped to the digital range.
        func digital(_ physical: Double) -> Int16 {
            let scale = Double(digitalMaximum - digitalMinimum) / (physicalMaximum - physicalMinimum)
            let value = (physical - physicalMinimum) * scale + Double(digitalMinimum)
            return Int16(max(Double(digitalMinimum), min(Double(digitalMaximum), value.rounded())))
        }
    }

    /// A note at a time, with a duration for what lasts (a lap): one TAL in a data record.
    public struct Annotation: Sendable, Equatable {
        public var date: Date
        public var duration: Double?
        public var text: String

        /// An annotation; `text` is kept to printable ASCII (no TAL separator bytes), 40 characters.
        public init(date: Date, duration: Double? = nil, text: String) {
            self.date = date
            self.duration = duration.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            self.text = String(
                text.unicodeScalars.filter { $0.value >= 32 && $0.value < 127 }.map(Character.init).prefix(40))
        }
    }

    /// Why a file cannot be written.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case cannotCreate(String)
        case wrongRecord(expected: Int, got: Int)
        case writeFailed(String)

        public var description: String {
            switch self {
            case .cannotCreate(let path): "cannot create \(path)"
            case .wrongRecord(let expected, let got): "a data record holds \(expected) values, not \(got)"
            case .writeFailed(let path): "cannot write \(path)"
            }
        }
    }

    /// Bytes of the annotation signal per record: a timekeeping TAL and a few annotations.
    static let annotationBytes = 120

    public let path: String
    public let signals: [Signal]
    public let samplesPerRecord: Int
    public let recordDuration: Double
    /// The header's start time (whole seconds); record onsets count from it.
    public let start: Date
    /// The first record's onset after ``start``: the start's fraction of a second.
    public let firstOnset: Double
    private let handle: FileHandle
    public private(set) var records = 0

    /// Creates the file and writes its header. `recordDuration` is `samplesPerRecord` over the
    /// nominal rate; `start` is the first record's time (its whole second goes in the header).
    public init(
        path: String, signals: [Signal], samplesPerRecord: Int, recordDuration: Double, start: Date,
        patient: String = "X X X X", recording: String = "hrbridge"
    ) throws(Failure) {
        guard FileManager.default.createFile(atPath: path, contents: nil),
            let handle = FileHandle(forWritingAtPath: path)
        else { throw .cannotCreate(path) }
        self.path = path
        self.signals = signals
        self.samplesPerRecord = samplesPerRecord
        self.recordDuration = recordDuration
        self.start = Date(timeIntervalSince1970: start.timeIntervalSince1970.rounded(.down))
        firstOnset = start.timeIntervalSince1970 - start.timeIntervalSince1970.rounded(.down)
        self.handle = handle
        let header = Self.header(
            signals: signals, samplesPerRecord: samplesPerRecord, recordDuration: recordDuration, start: self.start,
            patient: patient, recording: recording, records: -1)
        do {
            try handle.write(contentsOf: header)
        } catch {
            throw .writeFailed(path)
        }
    }

    /// Writes the next record: `values[signal][sample]` in physical units, with `annotations`
    /// (text at a time) inside it, in order while they fit its annotation bytes; returns how many
    /// fitted (the rest can go in a later record: an onset is absolute).
    @discardableResult
    public func write(_ values: [[Double]], annotations: [Annotation] = []) throws(Failure) -> Int {
        guard values.count == signals.count, values.allSatisfy({ $0.count == samplesPerRecord }) else {
            throw .wrongRecord(
                expected: signals.count * samplesPerRecord, got: values.reduce(0) { $0 + $1.count })
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(2 * signals.count * samplesPerRecord + Self.annotationBytes)
        for (signal, samples) in zip(signals, values) {
            for sample in samples {
                let value = UInt16(bitPattern: signal.digital(sample))
                bytes.append(UInt8(value & 0xFF))
                bytes.append(UInt8(value >> 8))
            }
        }
        let onset = firstOnset + Double(records) * recordDuration
        var tal = Array("+\(Self.seconds(onset))\u{14}\u{14}\u{0}".utf8)
        var taken = 0
        for annotation in annotations {
            // EDF+ allows an onset before the file's start (a workout begun just before its first sample).
            let offset = annotation.date.timeIntervalSince(start)
            let onset = (offset < 0 ? "-" : "+") + Self.seconds(abs(offset))
            let duration = annotation.duration.map { "\u{15}" + Self.seconds($0) } ?? ""
            let entry = Array((onset + duration + "\u{14}" + annotation.text + "\u{14}\u{0}").utf8)
            guard tal.count + entry.count <= Self.annotationBytes else { break }
            tal += entry
            taken += 1
        }
        tal += [UInt8](repeating: 0, count: Self.annotationBytes - tal.count)
        bytes += tal
        do {
            try handle.write(contentsOf: bytes)
        } catch {
            throw .writeFailed(path)
        }
        records += 1
        return taken
    }

    /// Writes the number of records into the header and closes the file.
    public func close() throws(Failure) {
        do {
            try handle.seek(toOffset: 236)
            try handle.write(contentsOf: Array(Self.field(String(records), 8).utf8))
            try handle.close()
        } catch {
            throw .writeFailed(path)
        }
    }

    /// Seconds as EDF+ writes onsets: up to 7 decimals, no trailing zeros.
    static func seconds(_ value: Double) -> String {
        var text = String(format: "%.7f", max(0, value))
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// A header field: printable ASCII, left-aligned, space-padded or cut to `width`.
    static func field(_ text: String, _ width: Int) -> String {
        let ascii = String(text.unicodeScalars.map { $0.value >= 32 && $0.value < 127 ? Character($0) : "_" })
        return String(ascii.prefix(width)).padding(toLength: width, withPad: " ", startingAt: 0)
    }

    /// A number in an 8-character field (EDF's limit).
    static func number(_ value: Double) -> String {
        var text = value == value.rounded() ? String(Int(value)) : String(value)
        if text.count > 8 { text = String(format: "%.6g", value) }
        return field(text, 8)
    }

    static func header(
        signals: [Signal], samplesPerRecord: Int, recordDuration: Double, start: Date, patient: String,
        recording: String, records: Int
    ) -> Data {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: start)
        let months = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        let all =
            signals + [
                Signal(label: "EDF Annotations", physicalDimension: "", physicalMinimum: -1, physicalMaximum: 1)
            ]
        var text = field("0", 8)
        text += field(patient, 80)
        text += field(
            "Startdate \(two(parts.day))-\(months[(parts.month ?? 1) - 1])-\(parts.year ?? 2000) X X \(recording)", 80)
        text += "\(two(parts.day)).\(two(parts.month)).\(two((parts.year ?? 2000) % 100))"
        text += "\(two(parts.hour)).\(two(parts.minute)).\(two(parts.second))"
        text += field(String(256 * (all.count + 1)), 8)
        text += field("EDF+C", 44)
        text += field(String(records), 8)
        text += number(recordDuration)
        text += field(String(all.count), 4)
        for signal in all { text += field(signal.label, 16) }
        for signal in all { text += field(signal.transducer, 80) }
        for signal in all { text += field(signal.physicalDimension, 8) }
        for signal in all { text += number(signal.physicalMinimum) }
        for signal in all { text += number(signal.physicalMaximum) }
        for signal in all { text += field(String(signal.digitalMinimum), 8) }
        for signal in all { text += field(String(signal.digitalMaximum), 8) }
        for _ in all { text += field("", 80) }
        for (index, _) in all.enumerated() {
            text += field(String(index == signals.count ? annotationBytes / 2 : samplesPerRecord), 8)
        }
        for _ in all { text += field("", 32) }
        return Data(text.utf8)
    }
}
