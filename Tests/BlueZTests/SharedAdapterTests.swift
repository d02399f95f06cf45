import BlueZ
import Sensors
import Testing

/// One adapter holding straps and serving apps: the steps for each strap coming and going.
@Suite("shared adapter: advertising again after each strap, the strap passed on first")
struct SharedAdapterTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var adapter = "hci0"
        var up: Bool
        var passedOn: Bool
        var simultaneousRoles: Bool?
        var steps: [SharedAdapter.Step]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "the strap passed on comes up: advertise again (after a pause too)", up: true, passedOn: true,
            simultaneousRoles: true, steps: [.resumeAdvertising, .readvertise]),
        Case(
            name: "another strap comes up: advertise again, a pause for the strap passed on stays", up: true,
            passedOn: false, simultaneousRoles: false, steps: [.readvertise]),
        Case(
            name: "the strap passed on drops, no central-peripheral role: it comes first", up: false, passedOn: true,
            simultaneousRoles: false, steps: [.pauseAdvertising(reason: SharedAdapter.strapFirst), .disconnectApps]),
        Case(
            name: "the strap passed on drops, both roles at once: apps stay", up: false, passedOn: true,
            simultaneousRoles: true, steps: []),
        Case(
            name: "the strap passed on drops, roles unknown: apps stay", up: false, passedOn: true,
            simultaneousRoles: nil, steps: []),
        Case(
            name: "another strap drops: nothing", up: false, passedOn: false, simultaneousRoles: false, steps: []),
        Case(
            name: "the strap passed on back through another adapter: a pause for it ends", adapter: "hci1", up: true,
            passedOn: true, simultaneousRoles: false, steps: [.resumeAdvertising]),
        Case(
            name: "another strap up on another adapter: nothing", adapter: "hci1", up: true, passedOn: false,
            simultaneousRoles: false, steps: []),
        Case(
            name: "the strap passed on drops on another adapter: nothing", adapter: "hci1", up: false, passedOn: true,
            simultaneousRoles: false, steps: []),
    ]

    @Test(arguments: cases)
    func steps(_ item: Case) {
        let shared = SharedAdapter(adapter: "hci0")
        let strap = SensorIdentity(adapter: item.adapter, address: "C1:00:00:00:00:01")
        #expect(
            shared.steps(strap: strap, up: item.up, passedOn: item.passedOn, simultaneousRoles: item.simultaneousRoles)
                == item.steps)
    }
}
