import BridgeOut
import Foundation
import Sensors
import Synchronization

/// A transport that notes the clock's time at each message, then hands it to another transport.
final class ClockedTransport: OSCTransport {
    private let clock: any WallClock
    private let next: any OSCTransport
    private let sent = Mutex<[(Date, OSCMessage)]>([])

    init(clock: any WallClock, next: any OSCTransport) {
        self.clock = clock
        self.next = next
    }

    func send(_ message: OSCMessage) {
        sent.withLock { $0.append((clock.now(), message)) }
        next.send(message)
    }

    /// When each message matching `predicate` was sent, on the clock.
    func times(where predicate: (OSCMessage) -> Bool) -> [Date] {
        sent.withLock { $0.filter { predicate($0.1) }.map(\.0) }
    }
}
