import BridgeOut
import Testing

@Suite("relay: which adapter serves apps and which holds straps")
struct PeripheralPlacementTests {
    @Test(
        arguments: [
            // One adapter: both roles on it.
            (["hci0"], nil, [], [], PeripheralPlacement(peripheral: "hci0", straps: nil, isShared: true)),
            // Two: straps on the first, apps on the last.
            (["hci0", "hci1"], nil, [], [], .init(peripheral: "hci1", straps: ["hci0"], isShared: false)),
            (
                ["hci0", "hci1", "hci2"], nil, [], [],
                .init(peripheral: "hci2", straps: ["hci0", "hci1"], isShared: false)
            ),
            // The peripheral named: straps on the others.
            (["hci0", "hci1"], "hci0", [], [], .init(peripheral: "hci0", straps: ["hci1"], isShared: false)),
            (["hci0"], "hci0", [], [], .init(peripheral: "hci0", straps: nil, isShared: true)),
            // Straps named: the peripheral takes an adapter they leave free, else shares theirs.
            (["hci0", "hci1"], nil, ["hci1"], [], .init(peripheral: "hci0", straps: ["hci1"], isShared: false)),
            (["hci0"], nil, ["hci0"], [], .init(peripheral: "hci0", straps: ["hci0"], isShared: true)),
            (["hci0", "hci1"], "hci1", ["hci1"], [], .init(peripheral: "hci1", straps: ["hci1"], isShared: true)),
            // The pool's busy adapters are avoided.
            (["hci0", "hci1"], nil, [], ["hci1"], .init(peripheral: "hci0", straps: ["hci1"], isShared: false)),
            (
                ["hci0", "hci1"], nil, [], ["hci0", "hci1"],
                .init(peripheral: "hci1", straps: ["hci0"], isShared: false)
            ),
        ] as [([String], String?, [String], Set<String>, PeripheralPlacement)])
    func placement(
        available: [String], requested: String?, strapAdapters: [String], busy: Set<String>,
        expected: PeripheralPlacement
    ) {
        #expect(
            PeripheralPlacement.choose(
                available: available, requested: requested, strapAdapters: strapAdapters, busy: busy) == expected)
    }

    @Test func noAdapter() {
        #expect(PeripheralPlacement.choose(available: []) == nil)
    }
}
