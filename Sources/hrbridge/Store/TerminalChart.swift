import Foundation

/// A small line chart drawn with block characters, for `hrbridge workouts show`.
enum TerminalChart {
    static func render(_ points: [(time: Double, value: Double)], width: Int = 60, height: Int = 8) -> String {
        guard let first = points.first, let last = points.last else { return "" }
        let span = max(last.time - first.time, 1)
        var columns = [[Double]](repeating: [], count: width)
        for point in points {
            let column = min(width - 1, Int((point.time - first.time) / span * Double(width)))
            columns[column].append(point.value)
        }
        let averages = columns.map { $0.isEmpty ? nil : $0.reduce(0, +) / Double($0.count) }
        let values = averages.compactMap { $0 }
        let low = values.min() ?? 0
        let high = max(values.max() ?? 1, low + 1)
        var rows: [String] = []
        for row in (0..<height).reversed() {
            let threshold = low + (high - low) * Double(row) / Double(height)
            let label = row == height - 1 ? Format.number(high.rounded()) : row == 0 ? Format.number(low.rounded()) : ""
            let line = averages.map { average -> Character in
                guard let average else { return " " }
                return average >= threshold ? "█" : " "
            }
            rows.append(label.padding(toLength: 5, withPad: " ", startingAt: 0) + "│" + String(line))
        }
        rows.append("     └" + String(repeating: "─", count: width))
        rows.append("      0:00" + String(repeating: " ", count: max(0, width - 10)) + Format.clock(span))
        return rows.joined(separator: "\n")
    }
}
