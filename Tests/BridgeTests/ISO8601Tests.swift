import Bridge
import BridgeClient
import Foundation
import Testing

@testable import Wire

@Suite("ISO 8601 output without the format-style machinery")
struct ISO8601Tests {
    static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    @Test("the same text as Foundation's ISO8601FormatStyle: 200,000 random instants 1900–2200 and the edges")
    func matchesFoundation() {
        var generator = SystemRandomNumberGenerator()
        var dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -1), Date(timeIntervalSince1970: -0.001),
            Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
            Date(timeIntervalSince1970: 4_107_542_400),  // 2100-03-01 (2100 is not a leap year)
            Date(timeIntervalSince1970: 1_795_000_000.9999), Date(timeIntervalSince1970: 1_795_000_000.0005),
            Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSince1970: -2_208_988_800),  // 1900-01-01
        ]
        for _ in 0..<200_000 {
            dates.append(
                Date(timeIntervalSince1970: Double.random(in: -2_208_988_800...7_258_118_400, using: &generator)))
        }
        // Whole milliseconds too: what straps' receive times often are.
        for _ in 0..<50_000 {
            let milliseconds = Int64.random(in: 0...4_102_444_800_000, using: &generator)
            dates.append(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        }
        var mismatches: [String] = []
        for date in dates where ISO8601.format(date) != date.formatted(Self.style) {
            mismatches.append("\(date.timeIntervalSince1970): \(ISO8601.format(date)) vs \(date.formatted(Self.style))")
            if mismatches.count >= 5 { break }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        // And it reads back.
        let now = Date()
        #expect(
            abs((ISO8601.parse(ISO8601.format(now))?.timeIntervalSince1970 ?? 0) - now.timeIntervalSince1970) < 0.001)
    }

    @Test("RFC 3339 date-times read as written: any fraction, any offset, years 0000–9999; what does not exist is nil")
    func readsRFC3339() {
        let cases: [(text: String, seconds: Double?)] = [
            ("1970-01-01T00:00:00Z", 0),
            ("1970-01-01t00:00:00z", 0),
            ("2026-11-22T03:10:46.123Z", 1_795_317_046.123),
            ("2026-11-22T04:10:46.5+01:00", 1_795_317_046.5),
            ("2026-11-21T23:40:46.654623-03:30", 1_795_317_046.654623),
            ("0256-09-29T17:03:42.689325Z", -54_065_084_177.310675),
            ("0385-09-01T15:23:02.654623-20:06", -49_996_614_657.345377),
            ("0000-01-01T00:00:00Z", -62_167_219_200),
            ("9999-12-31T23:59:59Z", 253_402_300_799),
            ("2016-12-31T23:59:60Z", 1_483_228_799),
            ("2000-02-29T12:00:00Z", 951_825_600),
            ("2100-02-29T12:00:00Z", nil),
            ("2026-02-30T00:00:00Z", nil),
            ("2026-13-01T00:00:00Z", nil),
            ("2026-11-22T24:00:00Z", nil),
            ("2026-11-22T03:10:46.Z", nil),
            ("2026-11-22T03:10:46+0100", nil),
            ("2026-11-22T03:10:46", nil),
            ("2026-11-22 03:10:46Z", nil),
            ("2026-11-22T03:10:46Zjunk", nil),
        ]
        for item in cases {
            let read = ISO8601.rfc3339(item.text)?.timeIntervalSince1970
            if let seconds = item.seconds {
                #expect(read.map { abs($0 - seconds) < 1e-4 } == true, "\(item.text): \(String(describing: read))")
            } else {
                #expect(read == nil, "\(item.text)")
            }
        }
        // What the formatter writes reads back through the same path.
        let now = Date()
        #expect(
            abs((ISO8601.rfc3339(ISO8601.format(now))?.timeIntervalSince1970 ?? 0) - now.timeIntervalSince1970) < 0.001)
    }
}
