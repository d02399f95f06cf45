import BridgeOut
import Foundation
import GATT
import Testing

/// Each preset maps a reading (72 bpm, RR 800 ms, skin contact) and a battery level (85 %) to the
/// names and types the apps' avatars expect (bridge-out.md, "Parameter names the popular apps send").
@Suite struct OSCPresetTests {
    static let t0 = Date(timeIntervalSinceReferenceDate: 800_000_000)
    static let reading = OSCReading(
        heartRate: 72, rrIntervals: [RRInterval(raw: 819)], contact: .detected, receivedAt: t0)
    static let signed72 = Float(72) / 255 * 2 - 1

    static let table: [(OSCPreset, [(String, OSCArgument)])] = [
        (
            .hrtovrchat,
            [
                ("/avatar/parameters/HR", .int32(72)), ("/avatar/parameters/onesHR", .int32(2)),
                ("/avatar/parameters/tensHR", .int32(7)), ("/avatar/parameters/hundredsHR", .int32(0)),
                ("/avatar/parameters/isHRConnected", .bool(true)), ("/avatar/parameters/isHRActive", .bool(true)),
                ("/avatar/parameters/HRPercent", .float32(0.2)),
            ]
        ),
        (
            .hrpresence,
            [
                ("/avatar/parameters/HR", .int32(72)), ("/avatar/parameters/onesHR", .int32(2)),
                ("/avatar/parameters/tensHR", .int32(7)), ("/avatar/parameters/hundredsHR", .int32(0)),
                ("/avatar/parameters/floatHR", .float32(-0.435_294_1)),
                ("/avatar/parameters/isHRConnected", .bool(true)), ("/avatar/parameters/RRInterval", .int32(800)),
            ]
        ),
        (
            .ironHeart,
            [
                ("/avatar/parameters/isHRConnected", .bool(true)), ("/avatar/parameters/HRBattery", .int32(85)),
                ("/avatar/parameters/HRBatteryFloat", .float32(0.85)), ("/avatar/parameters/HR", .int32(72)),
                ("/avatar/parameters/floatHR", .float32(-0.435_294_1)),
                ("/avatar/parameters/RRInterval", .int32(800)),
            ]
        ),
        (
            .vrcosc,
            [
                ("/avatar/parameters/VRCOSC/Heartrate/Connected", .bool(true)),
                ("/avatar/parameters/VRCOSC/Heartrate/Value", .int32(72)),
                ("/avatar/parameters/VRCOSC/Heartrate/Normalised", .float32(0.2)),
                ("/avatar/parameters/VRCOSC/Heartrate/Units", .float32(0.2)),
                ("/avatar/parameters/VRCOSC/Heartrate/Tens", .float32(0.7)),
                ("/avatar/parameters/VRCOSC/Heartrate/Hundreds", .float32(0)),
            ]
        ),
        (
            .custom([.heartRate: "Pulse", .connected: "/custom/connected", .beat: "Beat", .battery: "Cell"]),
            [
                ("/avatar/parameters/Pulse", .int32(72)), ("/custom/connected", .bool(true)),
                ("/avatar/parameters/Cell", .int32(85)),
            ]
        ),
    ]

    @Test(arguments: table)
    func sendsTheAppsNamesAndTypes(preset: OSCPreset, expected: [(String, OSCArgument)]) {
        var feed = OSCFeed(configuration: .init(preset: preset, minHeartRate: 40, maxHeartRate: 200))
        _ = feed.receive(.battery(percent: 85, at: Self.t0))
        let values = feed.receive(.reading(Self.reading)).filter { $0.due == Self.t0 }.map(\.message)
        #expect(OSCExpect.same(values, expected), "\(values)")
    }

    @Test func beatParametersAreTheAppsToo() {
        #expect(
            OSCPreset.hrtovrchat.parameters.filter(\.quantity.isBeat).map(\.address) == ["/avatar/parameters/isHRBeat"])
        #expect(
            OSCPreset.hrpresence.parameters.filter(\.quantity.isBeat).map(\.address) == ["/avatar/parameters/isHRBeat"])
        #expect(
            OSCPreset.ironHeart.parameters.filter(\.quantity.isBeat).map(\.address) == [
                "/avatar/parameters/HeartBeatToggle", "/avatar/parameters/isHRBeat",
            ])
        #expect(!OSCPreset.vrcosc.sendsBeats)
    }

    @Test(arguments: OSCPresetName.allCases)
    func namesParseTheirOwnSpelling(name: OSCPresetName) throws {
        #expect(try OSCPresetName(parsing: name.rawValue) == name)
        #expect(try OSCPresetName(parsing: " \(name.rawValue.uppercased()) ") == name)
        #expect(OSCPreset(name).name == name)
    }

    @Test func anUnknownPresetIsRefusedNamingTheChoices() {
        #expect(throws: OSCPresetNameError(text: "ironheart")) { try OSCPresetName(parsing: "ironheart") }
        #expect("\(OSCPresetNameError(text: "x"))".contains("hrtovrchat, hrpresence, iron-heart, vrcosc, custom"))
    }

    /// Heart rate, contact and range edges: clamped to what the parameters hold.
    @Test(arguments: [
        // bpm, contact, HR, ones, tens, hundreds, active, percent
        (72, SensorContact.notDetected, 72, 2, 7, 0, false, Float(0.2)),
        (0, .detected, 0, 0, 0, 0, false, 0),
        (30, .notSupported, 30, 0, 3, 0, true, 0),
        (199, .detected, 199, 9, 9, 1, true, Float(159) / 160),
        (260, .detected, 255, 5, 5, 2, true, 1),
    ])
    func clampsAndSplitsTheHeartRate(
        bpm: Int, contact: SensorContact, hr: Int32, ones: Int32, tens: Int32, hundreds: Int32, active: Bool,
        percent: Float
    ) {
        var feed = OSCFeed(configuration: .init(preset: .hrtovrchat))
        let values = feed.receive(.reading(.init(heartRate: bpm, contact: contact, receivedAt: Self.t0)))
        let expected: [(String, OSCArgument)] = [
            ("/avatar/parameters/HR", .int32(hr)), ("/avatar/parameters/onesHR", .int32(ones)),
            ("/avatar/parameters/tensHR", .int32(tens)), ("/avatar/parameters/hundredsHR", .int32(hundreds)),
            ("/avatar/parameters/isHRConnected", .bool(true)), ("/avatar/parameters/isHRActive", .bool(active)),
            ("/avatar/parameters/HRPercent", .float32(percent)),
        ]
        #expect(OSCExpect.same(values.map(\.message), expected), "\(values)")
    }

    @Test(arguments: [(0, Float(-1)), (255, 1), (300, 1), (128, Float(128) / 255 * 2 - 1)])
    func floatHRSpansMinusOneToOne(bpm: Int, expected: Float) {
        var feed = OSCFeed(configuration: .init(preset: .custom([.signedUnit: "floatHR"])))
        let values = feed.receive(.reading(.init(heartRate: bpm, contact: .detected, receivedAt: Self.t0)))
        #expect(values.map(\.message) == [OSCMessage("/avatar/parameters/floatHR", [.float32(expected)])])
    }

    @Test func customNamesAreCheckedForOSC() {
        #expect(OSCParameter.problem(withName: "HR") == nil)
        #expect(OSCParameter.problem(withName: "VRCOSC/Heartrate/Value") == nil)
        #expect(OSCParameter.problem(withName: "/custom/hr") == nil)
        #expect(OSCParameter.problem(withName: "") != nil)
        #expect(OSCParameter.problem(withName: "my HR") != nil)
        #expect(OSCParameter.problem(withName: "HR*") != nil)
        #expect(OSCParameter.problem(withName: "Herz❤") != nil)
        #expect(OSCParameter.problem(withName: "HR/") != nil)
    }
}
