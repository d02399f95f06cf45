import Sensors

/// The adapters the bridge may use and what it knows of each, as a pure value: which are usable,
/// how many links each holds, which refused a link for want of slots, and where a strap should go.
struct AdapterPool: Sendable {
    /// One adapter.
    struct Member: Sendable {
        var present = false
        var powered = false
        /// Links the controller held when it refused one (cleared once it holds fewer).
        var linkLimit: Int?
        var connectAttempts = 0
        var connectFailures = 0
        var slotRefusals = 0
        /// Whether it held `linkLimit` links when last looked at (a freed slot is reported once).
        var full = false
        var linksLost = 0
    }

    /// The adapters to use; `nil`: every adapter BlueZ has, including ones plugged in later.
    let allowed: [String]?
    /// Whether bluetoothd runs.
    var serviceRunning = true
    /// Every adapter seen (or allowed), by name.
    private(set) var members: [String: Member] = [:]

    init(allowed: [String]?) {
        self.allowed = allowed
        for name in allowed ?? [] { members[name] = Member() }
    }

    /// Whether `name` may be used at all.
    func allows(_ name: String) -> Bool { allowed?.contains(name) ?? true }

    /// The allowed adapters known, sorted.
    var names: [String] { members.keys.filter(allows).sorted() }

    /// Present, powered and bluetoothd running.
    func isUsable(_ name: String) -> Bool {
        guard serviceRunning, allows(name), let member = members[name] else { return false }
        return member.present && member.powered
    }

    /// Whether any allowed adapter is usable.
    var anyUsable: Bool { names.contains(where: isUsable) }

    /// The availability of one adapter.
    func availability(of name: String) -> AdapterAvailability {
        guard serviceRunning else { return .serviceStopped }
        guard let member = members[name], member.present else { return .absent }
        return member.powered ? .ready : .poweredOff
    }

    /// The pool's availability: ready when one adapter is; else the most hopeful state.
    var availability: AdapterAvailability {
        guard serviceRunning else { return .serviceStopped }
        let states = names.map(availability(of:))
        if states.contains(.ready) { return .ready }
        if states.contains(.poweredOff) { return .poweredOff }
        return .absent
    }

    /// Records what BlueZ says of an adapter (present or not, powered or not).
    mutating func update(_ name: String, present: Bool, powered: Bool) {
        var member = members[name] ?? Member()
        member.present = present
        member.powered = powered
        if !present { member.linkLimit = nil }
        members[name] = member
    }

    /// Forgets adapters that are neither present nor configured.
    mutating func removeAbsent() {
        for (name, member) in members where !member.present && !(allowed?.contains(name) ?? false) {
            members[name] = nil
        }
    }

    /// Whether `name` has no free slot, given the links it holds now.
    func isFull(_ name: String, linksInUse: Int) -> Bool {
        members[name]?.linkLimit.map { linksInUse >= $0 } ?? false
    }

    /// Whether `name` has refused a link for want of slots since it joined.
    func hasRefused(_ name: String) -> Bool { (members[name]?.slotRefusals ?? 0) > 0 }

    /// Whether `name` has no slot left once the links being set up on it now are counted too: a
    /// freed slot is not offered twice at once.
    func isTaken(_ name: String, linksInUse: Int, connecting: Int) -> Bool {
        isFull(name, linksInUse: linksInUse + connecting)
    }

    /// Marks `name` full at `linksInUse` links (a `Connect` was refused for want of slots).
    mutating func markFull(_ name: String, linksInUse: Int) {
        members[name]?.linkLimit = max(linksInUse, 1)
        members[name]?.full = true
        members[name]?.slotRefusals += 1
    }

    /// The adapters that were full and now hold fewer links than their limit (each reported once
    /// per time it fills up). The limit is kept: it is the controller's, and fills up again.
    mutating func freeSlots(linksInUse: (String) -> Int) -> [String] {
        var freed: [String] = []
        for (name, member) in members {
            guard let limit = member.linkLimit else { continue }
            let links = linksInUse(name)
            if member.full && links < limit {
                members[name]?.full = false
                freed.append(name)
            } else if !member.full && links >= limit {
                members[name]?.full = true
            }
        }
        return freed.sorted()
    }

    mutating func countAttempt(_ name: String) { members[name]?.connectAttempts += 1 }
    mutating func countFailure(_ name: String) { members[name]?.connectFailures += 1 }
    mutating func countLinkLost(_ name: String) { members[name]?.linksLost += 1 }

    /// Where a strap may connect, best first: usable allowed adapters (only `binding` when it is
    /// set) that see it and have a free slot, by signal strength (strongest first), then by fewest
    /// links, then by name.
    func candidates(
        sightings: [String: Int?], binding: String?, linksInUse: (String) -> Int
    ) -> [String] {
        sightings.keys.filter { name in
            (binding == nil || binding == name) && isUsable(name) && !isFull(name, linksInUse: linksInUse(name))
        }.sorted { left, right in
            let leftRSSI = sightings[left].flatMap { $0 } ?? Int.min
            let rightRSSI = sightings[right].flatMap { $0 } ?? Int.min
            if leftRSSI != rightRSSI { return leftRSSI > rightRSSI }
            let leftLinks = linksInUse(left)
            let rightLinks = linksInUse(right)
            if leftLinks != rightLinks { return leftLinks < rightLinks }
            return left < right
        }
    }

    /// The status of one adapter for the API and `doctor`.
    func status(of name: String, linksInUse: Int, sensors: [String]) -> AdapterStatus {
        let member = members[name] ?? Member()
        return AdapterStatus(
            name: name, availability: availability(of: name), linksInUse: linksInUse, sensors: sensors,
            linkLimit: member.linkLimit, connectAttempts: member.connectAttempts,
            connectFailures: member.connectFailures, slotRefusals: member.slotRefusals, linksLost: member.linksLost)
    }
}
