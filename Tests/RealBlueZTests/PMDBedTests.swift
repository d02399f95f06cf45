import Foundation
import Testing

/// One run of the pmd scenario: what hrbridge printed and what the Bumble H10 did.
struct PMDRun {
    let facts: [String: Any]
    let lines: [[String: Any]]

    init(_ output: ScenarioOutput, _ name: String) {
        facts = output.result[name] as? [String: Any] ?? [:]
        lines = output.lines(name)
    }

    /// The strap's log, in order: CCC writes, control point writes, answers, starts, stops, links.
    var events: [[String: Any]] { facts["events"] as? [[String: Any]] ?? [] }

    func eventIndex(_ predicate: ([String: Any]) -> Bool) -> Int? { events.firstIndex(where: predicate) }

    /// Control point writes, as hex.
    var writes: [String] { events.filter { $0["event"] as? String == "write" }.compactMap { $0["hex"] as? String } }

    func writeTime(_ hex: String, last: Bool = false) -> Double? {
        let matching = events.filter { $0["event"] as? String == "write" && $0["hex"] as? String == hex }
        return (last ? matching.last : matching.first)?["at"] as? Double
    }

    func starts(_ kind: Int) -> Int {
        events.filter { $0["event"] as? String == "start" && $0["kind"] as? Int == kind }.count
    }

    /// Frames the strap sent, of "ecg" or "acc".
    func sent(_ kind: String) -> [[String: Any]] { facts["\(kind)Frames"] as? [[String: Any]] ?? [] }

    /// hrbridge's frames of a kind.
    func printed(_ kind: String) -> [[String: Any]] { lines.filter { $0["kind"] as? String == kind } }

    static func integers(_ value: Any?) -> [Int] { (value as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.intValue } }

    /// Each printed frame's strap frame (by the strap's timestamp, printed as a double), nil
    /// for one the strap never sent.
    func matched(_ kind: String) -> [(printed: [String: Any], sent: [String: Any]?)] {
        let sent = sent(kind)
        return printed(kind).map { line in
            let stamp = (line["sensorTimestamp"] as? NSNumber)?.doubleValue ?? -1
            let frame = sent.first { abs((($0["timestamp"] as? NSNumber)?.doubleValue ?? 0) - stamp) < 1_000 }
            return (line, frame)
        }
    }
}

extension RealBlueZTests {
    static let startECG = "02000001820001010e00"
    /// 50 Hz, 16 bit, 8 G (monitor's default range).
    static let startACC = "020200013200010110000201" + "0800"

    @Test(
        "11. pmd: a Bumble Polar H10 through real bluetoothd: CCCs before START, the first ECG frame within seconds, every ECG sample as NeuroKit2 made it, acceleration (delta-compressed too) as sent, STOP at the end; MTU 185 refused before any START; a link drop: one gap, started again, nothing invented; the clock model's error"
    )
    func polarMeasurementData() async throws {
        let output = try await RealBlueZBed.checkedOutput("pmd")
        let synthetic = RealBlueZBed.syntheticECG(in: output.folder.deletingLastPathComponent())
        try #require(synthetic.count > 10_000, "no synthetic ECG (Tests/Fixtures/real-bluez/pmd_ecg.py)")

        // (a) MTU 232: ECG and acceleration at 50 Hz for ~20 s, then SIGINT.
        let stream = PMDRun(output, "stream")
        #expect(stream.facts["exit"] as? Int == 0, "\(output.text("stream.err").suffix(2_000))")
        #expect(stream.lines.contains { $0["event"] as? String == "waveforms" && $0["detail"] as? String == "ecg,acc" })
        let indications = try #require(
            stream.eventIndex {
                $0["event"] as? String == "ccc" && $0["characteristic"] as? String == "control"
                    && $0["indicate"] as? Bool == true
            },
            "indications never enabled on the control point: \(stream.events.prefix(10))")
        let notifications = try #require(
            stream.eventIndex {
                $0["event"] as? String == "ccc" && $0["characteristic"] as? String == "data"
                    && $0["notify"] as? Bool == true
            })
        let startECG = try #require(
            stream.eventIndex { $0["hex"] as? String == Self.startECG && $0["event"] as? String == "write" },
            "\(stream.writes)")
        let startACC = try #require(
            stream.eventIndex { $0["hex"] as? String == Self.startACC && $0["event"] as? String == "write" },
            "\(stream.writes)")
        #expect(
            indications < min(startECG, startACC) && notifications < min(startECG, startACC), "CCC writes after START")
        #expect(!stream.events.contains { $0["event"] as? String == "unanswered" })
        // STOP for both on the end, after the starts.
        #expect(stream.writes.suffix(2).sorted() == ["0300", "0302"], "writes: \(stream.writes)")
        let ecgStarted = try #require(stream.writeTime(Self.startECG))
        let ecgStopped = try #require(stream.writeTime("0300"))
        // The first ECG frame within a few seconds of START (users saw ~30 s on Linux).
        let firstRead = try #require((stream.facts["firstFrameReadAt"] as? [String: Any])?["ecg"] as? Double)
        #expect(firstRead - ecgStarted < 3, "first ECG frame \(firstRead - ecgStarted) s after START")
        let ecg = stream.printed("ecg")
        let values = ecg.flatMap { PMDRun.integers($0["values"]) }
        let streamed = ecgStopped - ecgStarted
        // Two frame boundaries lie between the writes' times and the samples (the first frame after
        // START, the one in flight at STOP): up to a frame of 73 samples each.
        #expect(abs(Double(values.count) - streamed * 130) <= 2 * 73, "\(values.count) samples in \(streamed) s")
        #expect(values == Array(synthetic.prefix(values.count)), "samples differ from the synthetic ECG")
        #expect(ecg.count == stream.sent("ecg").count, "printed \(ecg.count) of \(stream.sent("ecg").count) frames")
        #expect(ecg.allSatisfy { PMDRun.integers($0["values"]).count == 73 && $0["rate"] as? Int == 130 })
        #expect(ecg.dropFirst().allSatisfy { $0["continuous"] as? Bool == true })
        let acc = stream.printed("acc")
        let accSent = stream.sent("acc")
        #expect(acc.count == accSent.count, "printed \(acc.count) of \(accSent.count) acceleration frames")
        #expect(
            accSent.prefix(acc.count).contains { $0["compressed"] as? Bool == true }, "no compressed frame delivered")
        for axis in ["x", "y", "z"] {
            #expect(
                acc.flatMap { PMDRun.integers($0[axis]) }
                    == accSent.prefix(acc.count).flatMap { PMDRun.integers($0[axis]) },
                "acceleration \(axis) differs")
        }

        // (b) MTU 185: refused with the reason, and no START written.
        let small = PMDRun(output, "small")
        #expect(small.facts["exit"] as? Int == 0, "\(output.text("small.err").suffix(2_000))")
        let failures = small.lines.filter { $0["event"] as? String == "waveformFailed" }
        #expect(
            !failures.isEmpty && failures.allSatisfy { ($0["detail"] as? String)?.contains("ATT MTU is 185") == true },
            "\(failures)")
        #expect(!small.writes.contains { $0.hasPrefix("02") }, "START written at MTU 185: \(small.writes)")
        #expect(small.printed("ecg").isEmpty && small.printed("acc").isEmpty)

        // (c) The link dropped mid-stream and back: started again, one gap, nothing invented.
        let drop = PMDRun(output, "drop")
        #expect(drop.facts["exit"] as? Int == 0, "\(output.text("drop.err").suffix(2_000))")
        // Started again by the adapter, once: no second START answered "already in state".
        #expect(drop.starts(0) == 2 && drop.starts(2) == 2, "starts: \(drop.writes)")
        #expect(
            drop.writes.filter { $0 == Self.startECG }.count == 2
                && drop.writes.filter { $0 == Self.startACC }.count == 2,
            "writes: \(drop.writes)")
        for kind in ["ecg", "acc"] {
            let printed = drop.printed(kind)
            // Frames before the drop and after it (8 ECG each side; acceleration ~6).
            #expect(printed.count >= 6, "\(kind): \(printed.count) frames")
            let gaps = printed.dropFirst().filter { $0["continuous"] as? Bool == false }.count
            #expect(gaps == 1, "\(kind): \(gaps) frames after a gap")
            let matched = drop.matched(kind)
            #expect(matched.allSatisfy { $0.sent != nil }, "\(kind): a frame the strap never sent")
            for (line, frame) in matched {
                guard let frame else { continue }
                if kind == "ecg" {
                    let first = frame["first"] as? Int ?? -1
                    #expect(
                        PMDRun.integers(line["values"]) == Array(synthetic[first..<(first + 73)]),
                        "ECG frame at \(first)")
                } else {
                    #expect(["x", "y", "z"].allSatisfy { PMDRun.integers(line[$0]) == PMDRun.integers(frame[$0]) })
                }
            }
            // At most the frame in flight when the link went is lost.
            #expect(
                drop.sent(kind).count - printed.count <= 1,
                "\(kind): \(printed.count) of \(drop.sent(kind).count) frames")
        }

        // (d) The clock model's error, after 30 s: placed last-sample time − when the strap took it.
        let clock = PMDRun(output, "clock")
        #expect(clock.facts["exit"] as? Int == 0, "\(output.text("clock.err").suffix(2_000))")
        let error = output.result["clockError"] as? [String: Any] ?? [:]
        for kind in ["ecg", "acc"] {
            let sampled = (error[kind] as? [String: Any])?["sampled"] as? [String: Any] ?? [:]
            let count = sampled["count"] as? Int ?? 0
            #expect(count >= 20, "\(kind): \(count) frames measured")
            let p50 = sampled["p50"] as? Double ?? .nan
            let p99 = sampled["p99"] as? Double ?? .nan
            // Never before the sample was taken (by more than a little), and not late by much.
            #expect(p50 > -0.005 && p99 < 0.25, "\(kind): p50 \(p50) s, p99 \(p99) s")
        }
    }
}
