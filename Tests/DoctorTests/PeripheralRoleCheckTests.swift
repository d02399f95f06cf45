import Testing

@testable import Doctor

@Suite("doctor: can an adapter serve apps as a heart-rate sensor")
struct PeripheralRoleCheckTests {
    private typealias Facts = PeripheralRoleCheck.Facts

    private static func facts(
        roles: [String]? = ["central", "peripheral"], advertise: Bool = true, instances: (Int, Int)? = (0, 5),
        adapters: Int = 1, kernel: String = "6.1.0-27-amd64"
    ) -> Facts {
        Facts(
            adapter: "hci0", roles: roles, canAdvertise: advertise, supportedInstances: instances?.1,
            activeInstances: instances?.0, adapterCount: adapters, kernel: kernel)
    }

    @Test(
        "verdicts",
        arguments: [
            // Both roles at once: fine on one adapter.
            (
                facts(roles: ["central", "peripheral", "central-peripheral"]), DoctorCheck.Status.ok,
                "can serve apps while"
            ),
            // Not at once, but a second adapter takes the peripheral role.
            (facts(adapters: 2), .ok, "hold straps on one and serve apps from another"),
            // One adapter, old kernel: reconnecting a strap fails while an app is connected.
            (facts(), .warn, "this kernel (before 6.11) may not trust"),
            (facts(kernel: "6.12.1"), .warn, "the controller does not report simultaneous LE roles"),
            (facts(advertise: false), .warn, "no advertising on this adapter"),
            (facts(roles: ["central"]), .warn, "cannot act as a peripheral"),
            (facts(instances: (5, 5)), .warn, "no advertising instance left"),
            (facts(roles: ["central", "peripheral", "central-peripheral"], instances: (4, 5)), .ok, "4 of 5 in use"),
        ])
    private func verdict(facts: Facts, status: DoctorCheck.Status, says: String) {
        let check = PeripheralRoleCheck.check(facts)
        #expect(check.name == "peripheral hci0")
        #expect(check.status == status, "\(check.detail)")
        #expect(check.detail.contains(says), "\(check.detail)")
        #expect(check.detail.contains("kernel \(facts.kernel)"))
        #expect((check.fix == nil) == (status == .ok), "a warning comes with its fix")
        if status == .warn, facts.roles?.contains("peripheral") == true, facts.canAdvertise,
            facts.activeInstances != facts.supportedInstances
        {
            // BlueZ 5.66 reports central-peripheral only when told to look: the fix says how.
            #expect(check.fix?.contains("KernelExperimental = 671b10b5-42c0-4696-9227-eb28d1b049d6") == true)
        }
    }

    @Test(
        "kernel releases before 6.11",
        arguments: [
            ("6.1.0-27-amd64", true), ("6.10.14", true), ("6.11.0", false), ("6.12.9-arch1", false),
            ("7.0", false), ("5.15.0-rpi", true), ("garbage", true),
        ])
    private func kernels(release: String, before: Bool) {
        #expect(PeripheralRoleCheck.kernelBefore611(release) == before)
    }
}
