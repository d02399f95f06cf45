/// Wakes one reader that reads the current state again: signals that come while it is busy
/// collapse into one, so a burst costs one reading, and nothing is polled.
final class ChangeSignal: Sendable {
    /// One element per reading due.
    let changes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (changes, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Something changed.
    func signal() { continuation.yield() }
}
