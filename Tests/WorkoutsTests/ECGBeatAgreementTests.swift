import Foundation
import Testing
import Workouts

@Suite("ECGBeatAgreement: a strap's RR intervals against its ECG's R peaks")
struct ECGBeatAgreementTests {
    /// `count` R peaks from `start`, a breathing heart's intervals around `interval` s.
    static func peaks(from start: Double, every interval: Double, count: Int) -> [Double] {
        var time = start
        return (0..<count).map { index in
            defer { time += interval + 0.04 * sin(Double(index) * 1.7) }
            return time
        }
    }

    /// A strap's beats on `peaks` (from the second), each placed `delay` s late plus the frame's
    /// lag (`lags`, in turn), with its exact interval (ms).
    static func beats(on peaks: [Double], delay: Double, lags: [Double] = [0]) -> [(end: Double, interval: Double)] {
        zip(peaks, peaks.dropFirst()).enumerated().map { index, pair in
            (end: pair.1 + delay + lags[index % lags.count], interval: (pair.1 - pair.0) * 1000)
        }
    }

    @Test("beats placed late by the radio and by their frames' lag (up to a second): all paired, the lag found")
    func agreeing() {
        let peaks = Self.peaks(from: 100, every: 0.8, count: 101)
        let agreement = ECGBeatAgreement(
            beats: Self.beats(on: peaks, delay: 0.02, lags: [0, 0.6, 0.3, 0.9, 0.1]), peakRuns: [peaks])
        #expect(agreement.rPeaks == 101 && agreement.strapBeats == 100)
        #expect(agreement.pairedBeats == 100 && agreement.beatsWithoutPeak == 0 && agreement.peaksWithoutBeat == 0)
        #expect(agreement.comparedIntervals == 100)
        #expect(agreement.beatDelay.map { abs($0 - 320) < 1e-6 } == true, "the median lag: \(agreement.beatDelay!)")
        #expect(abs(agreement.meanDifference!) < 1e-6 && agreement.maximumAbsoluteDifference! < 1e-6)
        #expect(agreement.agreeingPercent == 100)
    }

    @Test("a heart without variability: each beat pairs with the latest R peak before it")
    func steadyHeart() {
        let peaks = (0..<31).map { 100 + Double($0) * 0.8 }
        let agreement = ECGBeatAgreement(beats: Self.beats(on: peaks, delay: 0.03), peakRuns: [peaks])
        #expect(agreement.pairedBeats == 30 && agreement.beatDelay.map { abs($0 - 30) < 1e-6 } == true)
    }

    @Test("a peak the ECG missed: its beat unpaired, the next beat's interval longer by the missed one")
    func missedPeak() {
        let all = Self.peaks(from: 100, every: 1, count: 21)
        var ecg = all
        ecg.remove(at: 10)
        let agreement = ECGBeatAgreement(beats: Self.beats(on: all, delay: 0.03), peakRuns: [ecg])
        #expect(agreement.pairedBeats == 19 && agreement.beatsWithoutPeak == 1 && agreement.peaksWithoutBeat == 0)
        #expect(agreement.comparedIntervals == 19)
        let missed = (all[10] - all[9]) * 1000
        #expect(agreement.maximumAbsoluteDifference.map { abs($0 - missed) < 1e-6 } == true, "\(missed) ms")
        #expect(agreement.agreeingPercent.map { abs($0 - 1800.0 / 19) < 1e-9 } == true)
    }

    @Test("an extra peak (noise) between beats: counted, nothing paired with it")
    func extraPeak() {
        let peaks = Self.peaks(from: 100, every: 1, count: 21)
        var ecg = peaks
        let extra = (peaks[10] + peaks[11]) / 2
        ecg.insert(extra, at: 11)
        let agreement = ECGBeatAgreement(beats: Self.beats(on: peaks, delay: 0.03), peakRuns: [ecg])
        #expect(agreement.pairedBeats == 20 && agreement.peaksWithoutBeat == 1)
        // The beat after the extra peak is compared with the time back to it: shown, not hidden.
        let shown = (extra - peaks[10]) * 1000
        #expect(agreement.maximumAbsoluteDifference.map { abs($0 - shown) < 1e-6 } == true, "\(shown) ms")
    }

    @Test("a gap in the ECG: no interval compared across it, beats in the gap unpaired")
    func gap() {
        let peaks = Self.peaks(from: 100, every: 1, count: 31)
        let runs = [Array(peaks[0..<10]), Array(peaks[15...])]
        let agreement = ECGBeatAgreement(beats: Self.beats(on: peaks, delay: 0.03), peakRuns: runs)
        #expect(agreement.rPeaks == 26)
        #expect(agreement.pairedBeats == 25 && agreement.beatsWithoutPeak == 5)
        // Paired: 9 in the first run (its first peak has no beat), 16 in the second, whose first
        // has no R peak before it in its run.
        #expect(agreement.comparedIntervals == 24)
        #expect(agreement.maximumAbsoluteDifference.map { $0 < 1e-6 } == true)
    }

    @Test("a beat placed 3 s away from its R peak is not paired, nor is its R peak")
    func farBeat() {
        let peaks = Self.peaks(from: 100, every: 1, count: 11)
        var beats = Self.beats(on: peaks, delay: 0.03)
        beats[5].end += 3
        let agreement = ECGBeatAgreement(beats: beats, peakRuns: [peaks])
        #expect(agreement.pairedBeats == 9 && agreement.beatsWithoutPeak == 1)
        #expect(agreement.peaksWithoutBeat == 1, "its peak")
    }

    @Test("nothing to compare: counts only, every figure absent")
    func empty() {
        let noPeaks = ECGBeatAgreement(beats: [(end: 1, interval: 800)], peakRuns: [])
        #expect(noPeaks.strapBeats == 1 && noPeaks.beatsWithoutPeak == 1 && noPeaks.beatDelay == nil)
        let noBeats = ECGBeatAgreement(beats: [], peakRuns: [[1, 2]])
        #expect(noBeats.rPeaks == 2 && noBeats.meanDifference == nil && noBeats.agreeingPercent == nil)
    }
}
