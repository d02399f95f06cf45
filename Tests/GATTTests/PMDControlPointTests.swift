import GATT
import Testing

@Suite("PMD control point: commands, answers, features")
struct PMDControlPointTests {
    private static func hex(_ text: String) -> [UInt8] {
        text.split(separator: " ").map { UInt8($0, radix: 16)! }
    }

    @Test(
        "Commands encode to the bytes Polar's clients write",
        arguments: [
            (PMDControlPoint.Command.startECG, "02 00 00 01 82 00 01 01 0E 00"),
            (.startAcceleration(rate: 200, range: 8), "02 02 00 01 C8 00 01 01 10 00 02 01 08 00"),
            (.startAcceleration(rate: 25, range: 2), "02 02 00 01 19 00 01 01 10 00 02 01 02 00"),
            (.stop(.ecg), "03 00"), (.stop(.acceleration), "03 02"), (.getSettings(.ecg), "01 00"),
        ])
    func commands(command: PMDControlPoint.Command, bytes: String) {
        #expect(command.encoded() == Self.hex(bytes))
    }

    @Test("A GET answer lists the settings; a START answer is success; an error names Polar's status")
    func answers() throws {
        let settings = try PMDControlPoint.Response(bytes: Self.hex("F0 01 00 00 00 00 01 82 00 01 01 0E 00"))
        #expect(settings.status == .success && !settings.more && settings.answers(.getSettings(.ecg)))
        #expect(settings.settings.map(\.type) == [0, 1] && settings.settings.map(\.values) == [[130], [14]])
        let started = try PMDControlPoint.Response(bytes: Self.hex("F0 02 00 00 00"))
        #expect(started.status == .success && started.answers(.startECG) && !started.answers(.stop(.ecg)))
        #expect(started.factor == 1)
        let refused = try PMDControlPoint.Response(bytes: Self.hex("F0 02 02 0A 00"))
        #expect(refused.status == .invalidMTU && "\(refused.status!)" == "invalid MTU")
        let unknown = try PMDControlPoint.Response(bytes: Self.hex("F0 02 02 63"))
        #expect(unknown.status == nil && unknown.statusCode == 99)
        // A start answer with the factor compressed values are scaled by (float32 0.5).
        let factor = try PMDControlPoint.Response(bytes: Self.hex("F0 02 02 00 00 05 01 00 00 00 3F"))
        #expect(factor.factor == 0.5)
        // Several values of one setting, and a type this module does not read ending the list.
        let list = try PMDControlPoint.Response(
            bytes: Self.hex("F0 01 02 00 00 00 04 19 00 32 00 64 00 C8 00 09 01 FF"))
        #expect(list.settings.count == 1 && list.settings[0].values == [25, 50, 100, 200])
    }

    @Test(
        "What is not an answer is refused with its reason",
        arguments: [
            ("F0 02 00", PMDControlPointError.tooShort(3)), ("", .tooShort(0)), ("0F 05 00 00", .notAResponse(0x0F)),
        ])
    func refused(bytes: String, error: PMDControlPointError) {
        #expect(throws: error) { try PMDControlPoint.Response(bytes: Self.hex(bytes)) }
    }

    @Test("Features: an H10's 0F 05 00 is ECG and acceleration; anything else is refused")
    func features() throws {
        #expect(try PMDFeatures(bytes: Self.hex("0F 05 00")).measurements == [.ecg, .acceleration])
        #expect(try PMDFeatures(bytes: Self.hex("0F 25 00")).measurements == [.ecg, .acceleration, .gyroscope])
        #expect(PMDFeatures(measurements: [.ecg, .acceleration]).encoded() == Self.hex("0F 05 00"))
        for bytes in ["", "0F", "F0 05 00"] {
            #expect(throws: PMDControlPointError.self) { try PMDFeatures(bytes: Self.hex(bytes)) }
        }
        #expect(PMDControlPoint.controlPoint.description.uppercased() == "FB005C81-02E7-F387-1CAD-8ACD2D8DF0C8")
    }
}
