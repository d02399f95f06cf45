import Sensors
import Synchronization
import Testing

@Suite("OwnedTasks: background tasks end with their owner")
struct OwnedTasksTests {
    @Test("a finished task forgets itself; cancelAndWait cancels the rest, waits for them and refuses new ones")
    func lifecycle() async {
        let tasks = OwnedTasks()
        let (done, doneContinuation) = AsyncStream.makeStream(of: Void.self)
        tasks.spawn { doneContinuation.yield() }
        var doneIterator = done.makeAsyncIterator()
        _ = await doneIterator.next()

        // One that runs until cancelled, and says when it started and how it ended.
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let ended = Mutex<String?>(nil)
        tasks.spawn {
            startedContinuation.yield()
            let outcome: String
            do {
                try await Task.sleep(for: .seconds(3600))
                outcome = "slept"
            } catch {
                outcome = "cancelled"
            }
            ended.withLock { $0 = outcome }
        }
        var startedIterator = started.makeAsyncIterator()
        _ = await startedIterator.next()

        await tasks.cancelAndWait()
        #expect(ended.withLock { $0 } == "cancelled", "awaited: it had ended by the time cancelAndWait returned")
        #expect(tasks.count == 0)

        let ranAfterShutdown = Mutex(false)
        tasks.spawn { ranAfterShutdown.withLock { $0 = true } }
        #expect(tasks.count == 0, "nothing starts after the owner's shutdown")
        await Task.yield()
        #expect(!ranAfterShutdown.withLock { $0 })
    }

    @Test("cancelAll cancels every running task without waiting")
    func cancelAll() async {
        let tasks = OwnedTasks()
        let (ended, endedContinuation) = AsyncStream.makeStream(of: Bool.self)
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        for _ in 0..<3 {
            tasks.spawn {
                startedContinuation.yield()
                let cancelled = (try? await Task.sleep(for: .seconds(3600))) == nil
                endedContinuation.yield(cancelled)
            }
        }
        var startedIterator = started.makeAsyncIterator()
        for _ in 0..<3 { _ = await startedIterator.next() }
        #expect(tasks.count == 3)
        tasks.cancelAll()
        var endings: [Bool] = []
        var endedIterator = ended.makeAsyncIterator()
        for _ in 0..<3 { endings.append(await endedIterator.next() ?? false) }
        #expect(endings == [true, true, true])
    }
}
