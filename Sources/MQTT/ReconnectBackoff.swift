/// How long to wait before each attempt to reach the broker: `minimum` before the first, doubling
/// after each failure, never more than `maximum`.
///
/// No jitter: one bridge reconnects to its broker, not a fleet that must not retry in step, and
/// libmosquitto's own reconnect backoff (the same bounds, after a connection was lost) has none.
struct ReconnectBackoff: Sendable, Equatable {
    /// The wait before the first attempt.
    let minimum: Duration
    /// The longest wait.
    let maximum: Duration

    /// A schedule from `minimum` doubling to `maximum` (raised to `minimum` when lower).
    init(minimum: Duration, maximum: Duration) {
        self.minimum = max(minimum, .zero)
        self.maximum = max(maximum, self.minimum)
    }

    /// The schedule of ``MQTTClient/Options/reconnectDelay``, in whole seconds.
    init(seconds: ClosedRange<UInt32>) {
        self.init(minimum: .seconds(seconds.lowerBound), maximum: .seconds(seconds.upperBound))
    }

    /// The wait before attempt `attempt` (1 is the first; lower counts as 1).
    func delay(beforeAttempt attempt: Int) -> Duration {
        var delay = minimum
        var doublings = max(attempt, 1) - 1
        // Doubling stops at the maximum, so a long outage cannot overflow the duration.
        while doublings > 0, delay > .zero, delay < maximum {
            delay *= 2
            doublings -= 1
        }
        return min(delay, maximum)
    }
}
