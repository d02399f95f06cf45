import Bridge
import BridgeClient
import Foundation
import Testing
import Wire

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
}
