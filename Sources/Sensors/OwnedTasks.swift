import Synchronization

/// The short tasks a long-lived owner starts (a reply to wait for, a call to make in the
/// background): each forgets itself when it ends, and the owner's shutdown cancels those still
/// running (``cancelAll()``), or cancels and awaits them (``cancelAndWait()``). After either,
/// nothing new starts: no task outlives its owner's shutdown unnoticed.
public final class OwnedTasks: Sendable {
    private struct State {
        var running: [Int: Task<Void, Never>] = [:]
        var nextID = 0
        var closed = false
    }

    private let state = Mutex(State())

    /// No task yet.
    public init() {}

    /// Starts `operation` unless the owner has shut down (then it never runs, and this says false).
    @discardableResult
    public func spawn(_ operation: @escaping @Sendable () async -> Void) -> Bool {
        state.withLock { state in
            guard !state.closed else { return false }
            let id = state.nextID
            state.nextID += 1
            // Inserted under the lock before the task can end and remove itself.
            state.running[id] = Task { [weak self] in
                await operation()
                self?.state.withLock { _ = $0.running.removeValue(forKey: id) }
            }
            return true
        }
    }

    /// How many tasks run now.
    public var count: Int { state.withLock { $0.running.count } }

    /// Cancels every running task and refuses new ones.
    public func cancelAll() {
        for task in close() { task.cancel() }
    }

    /// Cancels every running task, refuses new ones and returns once they all ended.
    public func cancelAndWait() async {
        let tasks = close()
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    private func close() -> [Task<Void, Never>] {
        state.withLock { state in
            state.closed = true
            defer { state.running = [:] }
            return Array(state.running.values)
        }
    }
}
