public import Foundation
public import Logging
public import Samples
import Synchronization

/// Streams a running workout's samples into the store in batches, at least once a second, so a
/// crash (SIGKILL, power loss) loses at most the last second.
public final class SampleStreamer: Sendable {
    private let store: WorkoutStore
    private let workout: UUID
    /// The workout the samples belong to.
    public var workoutID: UUID { workout }
    private let logger: Logger
    private let buffer = Mutex<[QuantitySample]>([])
    private let failures = Mutex(0)
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts streaming; `interval` is the longest time a sample waits in memory.
    public init(store: WorkoutStore, workout: UUID, interval: Duration = .seconds(1), logger: Logger) {
        self.store = store
        self.workout = workout
        self.logger = logger
        let flusher = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                self?.flush()
            }
        }
        task.withLock { $0 = flusher }
    }

    /// Queues samples; cheap enough to call from the builder's sample sink.
    public func submit(_ samples: [QuantitySample]) {
        buffer.withLock { $0.append(contentsOf: samples) }
    }

    /// Writes everything queued now.
    public func flush() {
        let pending = buffer.withLock { buffer -> [QuantitySample] in
            defer { buffer.removeAll(keepingCapacity: true) }
            return buffer
        }
        guard !pending.isEmpty else { return }
        do {
            try store.append(pending, workout: workout)
        } catch {
            failures.withLock { $0 += 1 }
            logger.error("samples not stored", metadata: ["count": "\(pending.count)", "error": "\(error)"])
            // Keep them for the next attempt: losing nothing matters more than order of arrival.
            buffer.withLock { $0.insert(contentsOf: pending, at: 0) }
        }
    }

    /// Stops the timer and writes what is left.
    public func finish() {
        task.withLock { $0?.cancel() }
        flush()
    }

    /// How many batches failed to write.
    public var failedWrites: Int { failures.withLock { $0 } }
}
