import Testing

@testable import GATT

@Suite("Bluetooth UUIDs")
struct BluetoothUUIDTests {
    @Test(
        "16-bit, 32-bit and 128-bit forms parse to the same UUID",
        arguments: [
            "2a37", "2A37", "0x2a37", "00002a37", "00002a37-0000-1000-8000-00805f9b34fb",
            "00002A37-0000-1000-8000-00805F9B34FB", "00002a3700001000800000805f9b34fb",
        ])
    func parses(_ text: String) {
        #expect(BluetoothUUID(text) == GATTCharacteristic.heartRateMeasurement.uuid)
    }

    @Test("prints the BlueZ 128-bit form and the short form")
    func prints() {
        let uuid = BluetoothUUID(UInt16(0x180D))
        #expect(uuid.description == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(uuid.shortDescription == "180d")
        #expect(uuid.shortValue == 0x180D)
        let vendor = BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")!
        #expect(vendor.shortValue == nil)
        #expect(vendor.description == "6e400001-b5a3-f393-e0a9-e50e24dcca9e")
        #expect(vendor.shortDescription == vendor.description)
        let thirtyTwo = BluetoothUUID(UInt32(0x1234_5678))
        #expect(thirtyTwo.shortValue == nil)
        #expect(thirtyTwo.shortDescription == "12345678")
        #expect(BluetoothUUID(thirtyTwo.description) == thirtyTwo)
    }

    @Test(
        "rejects malformed text",
        arguments: [
            "", "2a3", "2a37x", "zz37", "0000180d-0000-1000-8000-00805f9b34f", "0000180d00001000-8000-00805f9b34fb0",
            "0000180d-0000-1000-8000_00805f9b34fb", "0x",
        ])
    func rejects(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test("every service and characteristic round-trips through its UUID")
    func knownIdentifiers() {
        for service in GATTService.allCases {
            #expect(GATTService(uuid: BluetoothUUID(service.uuid.description)!) == service)
        }
        for characteristic in GATTCharacteristic.allCases {
            #expect(GATTCharacteristic(uuid: characteristic.uuid) == characteristic)
            #expect(GATTCharacteristic(argument: characteristic.commandLineName) == characteristic)
            #expect(GATTCharacteristic(argument: characteristic.uuid.description) == characteristic)
            #expect(GATTCharacteristic(argument: characteristic.uuid.shortDescription.uppercased()) == characteristic)
        }
        #expect(GATTCharacteristic(argument: "2a99") == nil)
        #expect(GATTService.heartRate.uuid.shortValue == 0x180D)
    }
}
