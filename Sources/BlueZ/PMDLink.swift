import GATT
import Sensors

/// One strap's Polar Measurement Data state on the BlueZ adapter: what was asked of it (started
/// again after every reconnect), each stream's clock and scale, and the control point request
/// awaiting its indicated answer.
struct PMDLink {
    /// Which of the strap's PMD characteristics a path is.
    enum Role {
        case controlPoint
        case data
    }

    /// A control point request awaiting its answer (nil: no answer came).
    struct Pending {
        /// Which request it is: an earlier request's timeout or failed write must not end this one.
        var number: UInt64
        var command: PMDControlPoint.Command
        var continuation: CheckedContinuation<PMDControlPoint.Response?, Never>
    }

    /// The streams asked for, by kind.
    var requests: [WaveformKind: WaveformRequest] = [:]
    /// The streams the strap answered START for on the current link (a new link starts empty).
    var streaming: [WaveformKind: WaveformRequest] = [:]
    /// Each stream's last started request, kept after STOP until the link ends: frames the strap
    /// sent before STOP reached it arrive after the stop was asked for, and are data all the same.
    var decoding: [WaveformKind: WaveformRequest] = [:]
    /// What the strap's features read said it offers (nil: not read yet).
    var offered: Set<WaveformKind>?
    var clocks: [WaveformKind: WaveformClock] = [:]
    /// The factor compressed acceleration is scaled by, from the start answer.
    var factors: [WaveformKind: Float] = [:]
    var pending: Pending?
    /// The number the next request gets.
    var nextRequest: UInt64 = 0
    /// Requests waiting for the control point (one at a time).
    var queue: [CheckedContinuation<Void, Never>] = []
    /// Whether a request holds the control point.
    var busy = false
    /// Why the last request's write failed, for its error.
    var writeFailure: String?

    /// The kind a PMD measurement type streams as.
    static func kind(of measurement: UInt8) -> WaveformKind? {
        switch PMDMeasurementType(rawValue: measurement & 0x3F) {
        case .ecg: .ecg
        case .acceleration: .acc
        default: nil
        }
    }

    /// The start command of a request.
    static func startCommand(_ request: WaveformRequest) -> PMDControlPoint.Command {
        switch request.kind {
        case .ecg: .startECG
        case .acc: .startAcceleration(rate: UInt16(request.sampleRate), range: UInt16(request.range))
        }
    }

    /// The measurement a kind is.
    static func measurement(_ kind: WaveformKind) -> PMDMeasurementType {
        switch kind {
        case .ecg: .ecg
        case .acc: .acceleration
        }
    }
}
