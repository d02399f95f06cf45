import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Single keys from a terminal without Enter: raw mode on stdin, read on a thread of its own.
/// Does nothing when stdin is not a terminal.
final class KeyboardInput: Sendable {
    private let pending = Mutex<[Character]>([])
    private let original = Mutex<termios?>(nil)

    init() {
        guard isatty(STDIN_FILENO) == 1 else { return }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return }
        original.withLock { $0 = settings }
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
        Thread.detachNewThread { [self] in
            var byte: UInt8 = 0
            while read(STDIN_FILENO, &byte, 1) == 1 {
                let character = Character(Unicode.Scalar(byte))
                self.pending.withLock { $0.append(character) }
            }
        }
    }

    /// The next key pressed, if any.
    func poll() -> Character? {
        pending.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }

    /// Puts the terminal back as it was.
    func restore() {
        original.withLock { settings in
            guard var saved = settings else { return }
            tcsetattr(STDIN_FILENO, TCSANOW, &saved)
            settings = nil
        }
    }

    deinit { restore() }
}
