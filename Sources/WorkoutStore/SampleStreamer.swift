public import Foundation
public import Logging
public import Samples
public import Sensors
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Streams a running workout's samples into the store in batches, at least once a second, so a
/// crash (SIGKILL, power loss) loses at most the last second.
///
/// When the store refuses a write (a full disk, a damaged file) nothing is dropped: samples wait
/// in memory up to `memoryLimit`, older ones beyond it go to a spill file (a JSON line each,
/// mode 0600) in another directory, and both are written, the spill file first, as soon as the
/// store accepts again. Only when the spill file cannot be written either are samples beyond the
/// limit dropped, and then they are counted (``Health/lost``) and logged.
public final class SampleStreamer: Sendable {
    /// What the streamer holds that is not stored yet, and why.
    public struct Health: Sendable, Equatable {
        /// Samples waiting in memory.
        public var waiting = 0
        /// Samples waiting in the spill file.
        public var spilled = 0
        /// Samples dropped because neither the store nor the spill file took them.
        public var lost = 0
        /// Batches the store refused since the streamer started.
        public var failedWrites = 0
        /// The store's last refusal; nil once a write succeeds again.
        public var lastError: StoreError?
        /// Raw-signal frames waiting in memory.
        public var waveformsWaiting = 0
        /// Raw-signal frames dropped: beyond the memory limit while the store refused them, or
        /// waiting when the process stopped (they are not spilled).
        public var waveformFramesLost = 0

        /// Nothing waiting, nothing lost.
        public init() {}

        /// Whether every sample submitted so far is stored.
        public var isCaughtUp: Bool { waiting == 0 && spilled == 0 && waveformsWaiting == 0 }
    }

    private struct State {
        var pending: [QuantitySample] = []
        var waveforms: [SensorWaveform] = []
        var health = Health()
        /// Bytes at the start of the spill file that are stored already.
        var spillStored: Int64 = 0
    }

    private let store: WorkoutStore
    private let workout: UUID
    /// The workout the samples belong to.
    public var workoutID: UUID { workout }
    /// The spill file of this workout.
    public let spillPath: String
    private let memoryLimit: Int
    /// Raw-signal frames kept in memory while the store refuses: about 25 minutes of ECG and
    /// acceleration from 10 straps (~30 MB).
    let waveformMemoryLimit: Int
    private let logger: Logger
    private let state = Mutex(State())
    /// Held for a whole flush: the timer and ``finish()`` never write at once.
    private let flushing = FlushGate()
    /// The timer's task: ``finish()`` cancels it and waits for it to end, deinit cancels it.
    private let flusher = Mutex<Task<Void, Never>?>(nil)

    /// Samples read back from the spill file per store transaction.
    static let spillBatch = 4096

    /// Where spill files go when no directory is given: systemd's `$RUNTIME_DIRECTORY`, else
    /// `$XDG_RUNTIME_DIR/hrbridge`, else `fallback` (the store's ``StoreBackend/spillDirectory``).
    /// The first two are RAM-backed, so a full data disk does not stop spilling.
    public static func defaultSpillDirectory(fallback: String) -> String {
        let environment = ProcessInfo.processInfo.environment
        if let runtime = environment["RUNTIME_DIRECTORY"]?.split(separator: ":").first, !runtime.isEmpty {
            return String(runtime)
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime + "/hrbridge" }
        return fallback
    }

    /// Starts streaming; `interval` is the longest time a sample waits in memory while the store
    /// accepts writes, on `clock` (real time unless a test moves it); flushes fall on whole
    /// multiples of it, the same instant for every streamer. `memoryLimit` bounds the samples kept
    /// in memory while the store refuses.
    public convenience init(
        store: WorkoutStore, workout: UUID, interval: Duration = .seconds(1), memoryLimit: Int = 100_000,
        waveformMemoryLimit: Int = 50_000, spillDirectory: String? = nil, clock: any WallClock = SystemWallClock(),
        logger: Logger
    ) {
        self.init(
            store: store, workout: workout, memoryLimit: memoryLimit, waveformMemoryLimit: waveformMemoryLimit,
            spillDirectory: spillDirectory, timer: (interval, clock), logger: logger)
    }

    /// A streamer that flushes every `timer.interval` on `timer.clock`, or, without a timer, only
    /// when told (recovery stores a spill file so).
    init(
        store: WorkoutStore, workout: UUID, memoryLimit: Int = 100_000, waveformMemoryLimit: Int = 50_000,
        spillDirectory: String?, timer: (interval: Duration, clock: any WallClock)?, logger: Logger
    ) {
        self.store = store
        self.workout = workout
        self.memoryLimit = max(1, memoryLimit)
        self.waveformMemoryLimit = max(1, waveformMemoryLimit)
        self.logger = logger
        let directory = spillDirectory ?? Self.defaultSpillDirectory(fallback: store.spillDirectory)
        spillPath = directory + "/workout-\(workout.uuidString.lowercased()).spill"
        // A spill file left by an earlier process (the store was full when it stopped) is picked up.
        // Counted a megabyte at a time: a spill file can hold hours of samples.
        if let handle = FileHandle(forReadingAtPath: spillPath) {
            var lines = 0
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                lines += chunk.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            }
            try? handle.close()
            state.withLock { $0.health.spilled = lines }
        }
        if let timer { startFlushing(every: timer.interval, on: timer.clock) }
    }

    private func startFlushing(every interval: Duration, on clock: any WallClock) {
        let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
        let task = Task { [weak self] in
            while true {
                // Cancelled (finish, deinit): no flush after that, or two streamers of one
                // workout could store its spill file twice.
                do { try await clock.sleep(until: Self.nextFlush(after: clock.now(), every: seconds)) } catch { return }
                guard let self, !Task.isCancelled else { return }
                await self.flush()
            }
        }
        flusher.withLock { $0 = task }
    }

    deinit {
        flusher.withLock { $0?.cancel() }
    }

    /// The next whole multiple of `seconds` since 1970 after `now`: every streamer of the process
    /// flushes at the same instant, so their appends meet in one transaction.
    static func nextFlush(after now: Date, every seconds: Double) -> Date {
        guard seconds > 0 else { return now }
        let elapsed = now.timeIntervalSince1970
        var next = (elapsed / seconds).rounded(.down) * seconds + seconds
        if next <= elapsed { next += seconds }
        return Date(timeIntervalSince1970: next)
    }

    /// Queues samples; cheap enough to call from the builder's sample sink.
    public func submit(_ samples: [QuantitySample]) {
        state.withLock { $0.pending.append(contentsOf: samples) }
    }

    /// Queues raw-signal frames (ECG, acceleration), written with the next flush after the samples.
    public func submit(waveforms: [SensorWaveform]) {
        guard !waveforms.isEmpty else { return }
        state.withLock { $0.waveforms.append(contentsOf: waveforms) }
    }

    /// Writes everything waiting: the spill file first, then memory. When the store refuses, the
    /// samples stay (memory up to its limit, the rest spilled) for the next attempt.
    @discardableResult
    public func flush() async -> Health {
        await flushing.acquire()
        let health = await flushHoldingGate()
        await flushing.release()
        return health
    }

    private func flushHoldingGate() async -> Health {
        if state.withLock({ $0.health.spilled }) > 0, await !drainSpill() {
            keepWithinLimit()
            keepWaveformsWithinLimit()
            return health
        }
        let pending = state.withLock { state -> [QuantitySample] in
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
        if !pending.isEmpty {
            do {
                try await store.append(pending, workout: workout)
                state.withLock { $0.health.lastError = nil }
            } catch {
                refused(error, count: pending.count)
                // Older samples go back in front of any that arrived meanwhile.
                state.withLock { $0.pending.insert(contentsOf: pending, at: 0) }
                keepWithinLimit()
                keepWaveformsWithinLimit()
                return health
            }
        }
        await flushWaveforms()
        return health
    }

    /// Writes the raw-signal frames waiting; when the store refuses they wait, up to their limit.
    private func flushWaveforms() async {
        let frames = state.withLock { state -> [SensorWaveform] in
            defer { state.waveforms.removeAll(keepingCapacity: true) }
            return state.waveforms
        }
        guard !frames.isEmpty else { return }
        do {
            try await store.append(waveforms: frames, workout: workout)
            state.withLock { $0.health.lastError = nil }
        } catch {
            refused(error, count: frames.count)
            state.withLock { $0.waveforms.insert(contentsOf: frames, at: 0) }
            keepWaveformsWithinLimit()
        }
    }

    /// Drops the oldest raw-signal frames beyond the memory limit, counted and logged: hours of
    /// ECG do not fit in memory, and they are not spilled.
    private func keepWaveformsWithinLimit() {
        let dropped = state.withLock { state -> Int in
            let excess = state.waveforms.count - waveformMemoryLimit
            guard excess > 0 else { return 0 }
            state.waveforms.removeFirst(excess)
            state.health.waveformFramesLost += excess
            return excess
        }
        if dropped > 0 {
            logger.critical(
                "raw-signal frames dropped while the store refuses them",
                metadata: ["frames": "\(dropped)", "limit": "\(waveformMemoryLimit)"])
        }
    }

    /// Stops the timer (and waits for it to end) and writes what is left; throws the store's
    /// refusal while anything is still unstored, and may be called again (after space is freed)
    /// until it succeeds.
    public func finish() async throws(StoreError) {
        let timer = flusher.withLock { $0 }
        timer?.cancel()
        await timer?.value
        try await storeWaiting()
    }

    /// Writes what is left (without touching the timer); throws as ``finish()`` does.
    func storeWaiting() async throws(StoreError) {
        let health = await flush()
        guard health.isCaughtUp else {
            throw health.lastError ?? .database("\(health.waiting + health.spilled) samples are not stored")
        }
    }

    /// Moves every sample waiting in memory to the spill file (a process stopping while the store
    /// refuses), where the next streamer of this workout finds it.
    public func spillWaiting() async throws {
        await flushing.acquire()
        let outcome = Result { try spillHoldingGate() }
        await flushing.release()
        try outcome.get()
    }

    private func spillHoldingGate() throws {
        let frames = state.withLock { state -> Int in
            defer {
                state.health.waveformFramesLost += state.waveforms.count
                state.waveforms.removeAll()
            }
            return state.waveforms.count
        }
        if frames > 0 {
            logger.error(
                "raw-signal frames not stored: the store refuses and they are not spilled",
                metadata: ["frames": "\(frames)"])
        }
        let pending = state.withLock { state -> [QuantitySample] in
            defer { state.pending.removeAll() }
            return state.pending
        }
        guard !pending.isEmpty else { return }
        do {
            try appendToSpill(pending)
            state.withLock { $0.health.spilled += pending.count }
        } catch {
            state.withLock { $0.pending.insert(contentsOf: pending, at: 0) }
            throw error
        }
    }

    /// What is waiting and why.
    public var health: Health {
        state.withLock { state in
            var health = state.health
            health.waiting = state.pending.count
            health.waveformsWaiting = state.waveforms.count
            return health
        }
    }

    /// How many batches failed to write.
    public var failedWrites: Int { state.withLock { $0.health.failedWrites } }

    private func refused(_ error: StoreError, count: Int) {
        let first = state.withLock { state -> Bool in
            defer {
                state.health.failedWrites += 1
                state.health.lastError = error
            }
            return state.health.lastError != error
        }
        // Once per kind of refusal, not once a second.
        if first {
            logger.error(
                "samples not stored; kept until the store accepts them",
                metadata: ["count": "\(count)", "error": "\(error)"])
        }
    }

    // MARK: Spill file

    /// Moves the oldest samples beyond the memory limit to the spill file (or, when that fails too,
    /// drops and counts them).
    private func keepWithinLimit() {
        let excess = state.withLock { state -> [QuantitySample] in
            guard state.pending.count > memoryLimit else { return [] }
            let count = state.pending.count - memoryLimit
            defer { state.pending.removeFirst(count) }
            return Array(state.pending.prefix(count))
        }
        guard !excess.isEmpty else { return }
        do {
            try appendToSpill(excess)
            state.withLock { $0.health.spilled += excess.count }
        } catch {
            state.withLock { $0.health.lost += excess.count }
            logger.critical(
                "samples dropped: neither the store nor the spill file takes them",
                metadata: ["count": "\(excess.count)", "spillFile": "\(spillPath)", "error": "\(error)"])
        }
    }

    private func appendToSpill(_ samples: [QuantitySample]) throws {
        let encoder = JSONEncoder()
        var bytes = Data()
        for sample in samples {
            bytes.append(try encoder.encode(sample))
            bytes.append(UInt8(ascii: "\n"))
        }
        let directory = (spillPath as NSString).deletingLastPathComponent
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let descriptor = open(spillPath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        let before = lseek(descriptor, 0, SEEK_END)
        let written = bytes.withUnsafeBytes { buffer -> Int in
            var offset = 0
            while offset < buffer.count {
                let result = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if result < 0 {
                    if errno == EINTR { continue }
                    return -Int(errno)
                }
                offset += result
            }
            return offset
        }
        if written < 0 {
            // No half line stays behind: the file ends where it ended.
            _ = ftruncate(descriptor, before)
            throw POSIXError(POSIXErrorCode(rawValue: Int32(-written)) ?? .EIO)
        }
    }

    /// Stores the spill file's samples, a batch at a time; false when the store refuses (what is
    /// stored stays stored, the rest stays in the file).
    private func drainSpill() async -> Bool {
        guard let handle = FileHandle(forReadingAtPath: spillPath) else {
            state.withLock { $0.health.spilled = 0 }
            return true
        }
        defer { try? handle.close() }
        let decoder = JSONDecoder()
        var offset = state.withLock { $0.spillStored }
        var carry = Data()
        try? handle.seek(toOffset: UInt64(offset))
        while true {
            let chunk = (try? handle.read(upToCount: 1 << 20)) ?? Data()
            let data = carry + chunk
            guard !data.isEmpty else { break }
            var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            // A chunk ends inside a line: the rest comes with the next read.
            carry = chunk.isEmpty ? Data() : Data(lines.removeLast())
            var index = 0
            while index < lines.count {
                let batch = lines[index..<min(index + Self.spillBatch, lines.count)]
                var samples: [QuantitySample] = []
                var unreadable = 0
                for line in batch where !line.isEmpty {
                    if let sample = try? decoder.decode(QuantitySample.self, from: Data(line)) {
                        samples.append(sample)
                    } else {
                        unreadable += 1
                    }
                }
                do {
                    try await store.append(samples, workout: workout)
                } catch {
                    refused(error, count: samples.count)
                    return false
                }
                if unreadable > 0 {
                    logger.error("unreadable lines in the spill file", metadata: ["count": "\(unreadable)"])
                }
                offset += Int64(batch.reduce(0) { $0 + $1.count + 1 })
                state.withLock {
                    $0.spillStored = offset
                    $0.health.spilled = max(0, $0.health.spilled - batch.count)
                    $0.health.lost += unreadable
                    $0.health.lastError = nil
                }
                index += batch.count
            }
            if chunk.isEmpty { break }
        }
        unlink(spillPath)
        state.withLock {
            $0.spillStored = 0
            $0.health.spilled = 0
        }
        return true
    }
}

/// One holder at a time across suspension points (a flush awaits the store): the others wait in
/// order, without holding a thread.
private actor FlushGate {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func release() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }
}
