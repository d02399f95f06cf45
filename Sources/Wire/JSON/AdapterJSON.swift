import Foundation
public import JSONSupport
public import Sensors

/// One adapter in `GET /v1/health`: its state, its links and its counters.
public struct AdapterJSON: Codable, Sendable, Equatable {
    /// `hci0`, `mock`.
    public var name: String
    /// `ready`, `poweredOff`, `absent`, `serviceStopped`.
    public var availability: String
    /// LE links the controller holds (every client's).
    public var linksInUse: Int
    /// Addresses of the sensors streaming through it.
    public var sensors: [String]
    /// The links it held when it refused one for want of slots, while it is that full.
    @Nullable public var linkLimit: Int?
    public var connectAttempts: Int
    public var connectFailures: Int
    public var slotRefusals: Int
    public var linksLost: Int

    /// The JSON of an adapter's status.
    public init(_ status: AdapterStatus) {
        name = status.name
        availability = status.availability.rawValue
        linksInUse = status.linksInUse
        sensors = status.sensors
        linkLimit = status.linkLimit
        connectAttempts = status.connectAttempts
        connectFailures = status.connectFailures
        slotRefusals = status.slotRefusals
        linksLost = status.linksLost
    }
}
