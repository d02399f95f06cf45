import ArgumentParser
import Foundation
import GATT
import JSONSupport
import Samples
import Sensors
import Wire

/// `hrbridge decode <characteristic> <hex>`: one frame through the strict decoders, as JSON.
struct DecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode one GATT frame and print it as JSON.",
        discussion: """
            CHARACTERISTIC is a 16-bit UUID (2a37, 0x2A37), a 128-bit UUID, or a name:
            \(GATTCharacteristic.allCases.map { "  \($0.uuid.shortDescription)  \($0.commandLineName)" }.joined(separator: "\n"))

            HEX is the frame in wire order; spaces and colons are allowed ("16 55 00 04", 16:55:00:04: 85 bpm,
            skin contact, one RR interval of 1 s).

            Output: one JSON object on stdout. For heart-rate-measurement the keys are heartRate
            (count/min), sensorContact ("notSupported", "notDetected", "detected"), energyExpended
            (kJ or null), energySaturated (bool) and rrIntervals (seconds). Other characteristics
            print their fields in camelCase, in SI units (m/s, m, s, W, kJ; FTMS energy in kcal).
            With --samples, a JSON array of the quantity samples the frame produces instead.

            Exit status: 0 decoded; 65 malformed frame (one line on stderr naming the field and byte
            offset, nothing on stdout); 64 unknown characteristic or bad hex.
            """
    )

    @Argument(help: "The characteristic: a UUID such as 2a37, or a name such as heart-rate-measurement.")
    var characteristic: String

    @Argument(help: "The frame as hex, in wire order.")
    var hex: [String]

    @Flag(help: "Print the quantity samples the frame produces instead of its fields.")
    var samples = false

    @Option(help: "Receive time for --samples, ISO 8601 (default: now).")
    var receivedAt: String?

    @Option(help: "Sensor address to attribute --samples to.")
    var address = "00:00:00:00:00:00"

    func validate() throws {
        guard GATTCharacteristic(argument: characteristic) != nil else {
            throw ValidationError(
                "unknown characteristic '\(characteristic)'; known: "
                    + GATTCharacteristic.allCases.map(\.commandLineName).joined(separator: ", "))
        }
        guard HexBytes.parse(hex.joined(separator: " ")) != nil else {
            throw ValidationError(
                "'\(hex.joined(separator: " "))' is not hex: give pairs of hex digits, e.g. \"1e 55\"")
        }
        if let receivedAt, ISO8601.parse(receivedAt) == nil {
            throw ValidationError("--received-at '\(receivedAt)' is not an ISO 8601 date")
        }
    }

    func run() throws {
        guard let characteristic = GATTCharacteristic(argument: characteristic),
            let bytes = HexBytes.parse(hex.joined(separator: " "))
        else { throw ExitCode.validationFailure }
        let value: GATTValue
        do {
            value = try GATTValue(characteristic: characteristic, bytes: bytes)
        } catch {
            StandardError.write("hrbridge: \(error)")
            throw ExitCode(65)
        }
        if samples {
            let source = SampleSource(adapter: "cli", address: address)
            var sampler = MeasurementSampler(source: source)
            let date = receivedAt.flatMap(ISO8601.parse) ?? Date()
            print(try JSONText.line(sampler.samples(from: value, receivedAt: date).map(SampleJSON.init)))
        } else {
            print(try JSONText.line(GATTValueJSON.object(value)))
        }
    }
}
