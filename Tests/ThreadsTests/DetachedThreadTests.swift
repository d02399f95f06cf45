import Synchronization
import Testing
import Threads

#if canImport(Glibc)
    import Glibc
#endif

/// Threads the system refuses are an error the caller handles, not a stopped process.
@Suite struct DetachedThreadTests {
    /// A stack no system can map (a petabyte): `pthread_create` fails as at a thread limit.
    static let unmappableStack = 1 << 50

    @Test func aThreadTheSystemRefusesIsAnErrorNamingIt() {
        let ran = Atomic(false)
        do {
            try DetachedThread.start(named: "refused", stackBytes: Self.unmappableStack) {
                ran.store(true, ordering: .relaxed)
            }
            Issue.record("a petabyte stack was mapped")
        } catch {
            #expect(error.name == "refused")
            #expect(error.code == EAGAIN || error.code == ENOMEM)
            #expect(error.description.hasPrefix("cannot start thread refused: "))
        }
        let bodyRan = ran.load(ordering: .relaxed)
        #expect(!bodyRan)
    }

    @Test func runThrowsWithoutRunningTheBody() async {
        let ran = Atomic(false)
        await #expect(throws: ThreadStartError.self) {
            _ = try await DetachedThread.run(named: "refused", stackBytes: Self.unmappableStack) {
                ran.store(true, ordering: .relaxed)
                return 1
            }
        }
        let bodyRan = ran.load(ordering: .relaxed)
        #expect(!bodyRan)
    }

    @Test func runReturnsTheBodysResultFromANamedThreadOfItsOwn() async throws {
        let caller = UInt(bitPattern: Int(bitPattern: pthread_self()))
        let (thread, name) = try await DetachedThread.run(named: "hrbridge.test") {
            var name = [CChar](repeating: 0, count: 32)
            let descriptor = open("/proc/thread-self/comm", O_RDONLY)
            if descriptor >= 0 {
                _ = read(descriptor, &name, 31)
                close(descriptor)
            }
            let text = String(
                decoding: name.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return (UInt(bitPattern: Int(bitPattern: pthread_self())), text)
        }
        #expect(thread != caller)
        #expect(name == "hrbridge.test")
    }
}
