extension SensorConnection {
    /// How long to wait after each failed attempt, as a pure value: bounded exponential backoff
    /// with jitter, reset on success, and the special cases of BlueZ's errors (see `BlueZError.Code`).
    public struct Backoff: Hashable, Sendable {
        /// Tunables.
        public struct Configuration: Hashable, Sendable {
            /// First delay; doubles per failed attempt.
            public var initialDelay: Duration = .milliseconds(500)
            /// Longest delay (jitter never exceeds it).
            public var maximumDelay: Duration = .seconds(30)
            /// Each delay is scaled by a random factor in 1 ± jitter, so many straps do not retry in step.
            public var jitter: Double = 0.2
            /// Whether an authentication failure (missing key) removes the device and pairs it again
            /// (off by default: see ``BlueZAdapter/Options/repairsOnAuthenticationFailure``).
            public var repairsOnAuthenticationFailure = false

            /// Default configuration.
            public init() {}
        }

        /// How an attempt (or the link) ended.
        public enum Outcome: Hashable, Sendable {
            /// Connected and subscribed.
            case connected
            /// The attempt failed with this BlueZ error class (`nil`: not a BlueZ error).
            case failed(BlueZError.Code?)
            /// The device object is gone (expired from BlueZ's cache).
            case deviceObjectMissing
            /// The device advertised again.
            case advertised
        }

        /// What to do next.
        public enum Step: Hashable, Sendable {
            /// Nothing: connected.
            case none
            /// Try `Connect` after this delay.
            case connect(after: Duration)
            /// Discover until the device object is back, then connect.
            case rediscover
            /// Remove the device, rediscover it and pair again.
            case removeAndRepair
        }

        public let configuration: Configuration
        /// Failed attempts since the last success.
        public private(set) var failures = 0
        /// Whether the last failure was an abort-by-local that got its immediate retry.
        private var retriedAbortRightAway = false

        /// A backoff with no failures yet.
        public init(configuration: Configuration = Configuration()) {
            self.configuration = configuration
        }

        /// The delay before attempt `failures + 1` without jitter: initial × 2^failures, capped.
        public var nominalDelay: Duration {
            guard failures > 0 else { return .zero }
            let doublings = min(failures - 1, 30)
            let seconds = min(
                configuration.initialDelay.seconds * Double(1 << doublings), configuration.maximumDelay.seconds)
            return .seconds(seconds)
        }

        /// Records `outcome` and says what to do next; `random` supplies the jitter.
        public mutating func next(after outcome: Outcome, using random: inout some RandomNumberGenerator) -> Step {
            switch outcome {
            case .connected:
                failures = 0
                retriedAbortRightAway = false
                return .none
            case .advertised:
                // The strap is in range and connectable now: no reason to wait out a backoff.
                return .connect(after: .zero)
            case .deviceObjectMissing:
                failures += 1
                return .rediscover
            case .failed(let code):
                failures += 1
                switch code {
                case .connectionAbortedByLocal where !retriedAbortRightAway:
                    // RF interference aborts the first attempt often; the second usually works.
                    retriedAbortRightAway = true
                    return .connect(after: .zero)
                case .authenticationFailed where configuration.repairsOnAuthenticationFailure:
                    return .removeAndRepair
                case .unknownObject:
                    return .rediscover
                default:
                    retriedAbortRightAway = code == .connectionAbortedByLocal && retriedAbortRightAway
                    return .connect(after: jittered(nominalDelay, using: &random))
                }
            }
        }

        private func jittered(_ delay: Duration, using random: inout some RandomNumberGenerator) -> Duration {
            let spread = max(0, min(configuration.jitter, 1))
            let factor = spread > 0 ? Double.random(in: (1 - spread)...(1 + spread), using: &random) : 1
            return .seconds(min(delay.seconds * factor, configuration.maximumDelay.seconds))
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        let (whole, attoseconds) = components
        return Double(whole) + Double(attoseconds) / 1e18
    }
}
