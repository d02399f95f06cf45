public import Sensors

/// One adapter in both roles, holding straps and serving apps: what the peripheral does when a
/// strap's link comes or goes.
///
/// A pure value (the peripheral applies its steps): connecting a strap pauses advertising in the
/// kernel, so every strap that comes up on the adapter is followed by advertising afresh; on an
/// adapter whose controller cannot be central and peripheral at once (no `central-peripheral`
/// role), the strap passed on comes first: while it is away, advertising pauses and apps are
/// disconnected, so the kernel lets it reconnect.
public struct SharedAdapter: Hashable, Sendable {
    /// What the peripheral does.
    public enum Step: Hashable, Sendable {
        case resumeAdvertising
        case readvertise
        case pauseAdvertising(reason: String)
        case disconnectApps
    }

    /// Why advertising pauses while the strap is away on an adapter without simultaneous roles.
    public static let strapFirst =
        "strap reconnecting: this adapter cannot connect it while an app is connected (no central-peripheral role)"

    /// The adapter that serves apps.
    public let adapter: String

    public init(adapter: String) {
        self.adapter = adapter
    }

    /// The steps for `strap` coming up (`up`) or going down.
    /// - Parameters:
    ///   - passedOn: whether it is the strap apps are sent.
    ///   - simultaneousRoles: whether the adapter lists `central-peripheral` (`nil`: unknown).
    public func steps(strap: SensorIdentity, up: Bool, passedOn: Bool, simultaneousRoles: Bool?) -> [Step] {
        let here = strap.adapter == adapter
        if up {
            // The strap passed on is back, through any adapter: a pause for it ends.
            let resume: [Step] = passedOn ? [.resumeAdvertising] : []
            return resume + (here ? [.readvertise] : [])
        }
        guard here, passedOn, simultaneousRoles == false else { return [] }
        return [.pauseAdvertising(reason: Self.strapFirst), .disconnectApps]
    }
}

extension HeartRatePeripheral {
    /// Takes the steps of a ``SharedAdapter``, in order.
    public func take(_ steps: [SharedAdapter.Step]) async {
        for step in steps {
            switch step {
            case .resumeAdvertising: await resumeAdvertising()
            case .readvertise: await readvertise()
            case .pauseAdvertising(let reason): await pauseAdvertising(reason: reason)
            case .disconnectApps: await disconnectCentrals()
            }
        }
    }

    /// The steps `shared` calls for when `strap` comes up or goes down on this adapter.
    public func shareAdapter(_ shared: SharedAdapter, strap: SensorIdentity, up: Bool, passedOn: Bool) async {
        await take(shared.steps(strap: strap, up: up, passedOn: passedOn, simultaneousRoles: supportsSimultaneousRoles))
    }
}
