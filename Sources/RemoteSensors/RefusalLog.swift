/// Which refusals are logged, and how loud: the first of each gateway and reason at notice level,
/// the rest only counted. Gateways' names come from topics, so anyone can make up new keys: past
/// ``capacity`` keys, one line says so and new keys are logged at debug level only.
struct RefusalLog: Sendable {
    /// How to log one refusal.
    enum Level: Hashable, Sendable {
        /// Its key was logged before: counted only.
        case counted
        /// The first of its key: notice.
        case notice
        /// The first key past the capacity: notice, saying that further new keys are logged at debug only.
        case noticeFull
        /// A new key past the capacity: debug.
        case debug
    }

    /// Keys remembered.
    let capacity: Int
    private var logged = Set<String>()
    private var saidFull = false

    init(capacity: Int = 1024) {
        self.capacity = capacity
    }

    /// How to log a refusal under `key` (`node/reason`); remembers it while there is room.
    mutating func level(for key: String) -> Level {
        if logged.contains(key) { return .counted }
        if logged.count < capacity {
            logged.insert(key)
            return .notice
        }
        if saidFull { return .debug }
        saidFull = true
        return .noticeFull
    }
}
