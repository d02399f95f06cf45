import Foundation
import GATT
import JSONSupport

/// The JSON shape of decoded values: camelCase fields in SI units, `null` for absent fields.
enum GATTValueJSON {
    static func object(_ value: GATTValue) -> [String: JSONValue] {
        switch value {
        case .heartRateMeasurement(let measurement):
            return [
                "heartRate": json(Int(measurement.heartRate)),
                "sensorContact": json(measurement.sensorContact.rawValue),
                "energyExpended": json(measurement.energyExpended.map(Int.init)),
                "energySaturated": json(measurement.isEnergySaturated),
                "rrIntervals": json(measurement.rrIntervals.map(\.seconds)),
            ]
        case .bodySensorLocation(let location):
            return ["bodySensorLocation": json(location.name), "rawValue": json(Int(location.rawValue))]
        case .heartRateControlPoint(let command):
            return ["opCode": json(Int(command.rawValue)), "command": json("resetEnergyExpended")]
        case .batteryLevel(let level):
            return ["batteryLevel": json(Int(level.percent))]
        case .deviceInformation(let characteristic, let text):
            return [characteristic.fieldName: json(text)]
        case .cyclingPowerMeasurement(let measurement):
            return cyclingPower(measurement)
        case .cscMeasurement(let measurement):
            return revolutions(wheel: measurement.wheel, wheelTicks: 1024, crank: measurement.crank)
        case .rscMeasurement(let measurement):
            return [
                "speed": json(measurement.speedMetersPerSecond),
                "cadence": json(Int(measurement.cadence)),
                "strideLength": json(measurement.strideLengthMeters),
                "totalDistance": json(measurement.totalDistanceMeters),
                "running": json(measurement.isRunning),
            ]
        case .indoorBikeData(let data):
            return indoorBike(data)
        case .treadmillData(let data):
            return treadmill(data)
        }
    }

    private static func json(_ value: Int?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
    private static func json(_ value: Double?) -> JSONValue { value.map { .number($0) } ?? .null }
    private static func json(_ value: Bool) -> JSONValue { .bool(value) }
    private static func json(_ value: String) -> JSONValue { .string(value) }
    private static func json(_ value: [Double]) -> JSONValue { .array(value.map { .number($0) }) }

    private static func revolutions(wheel: RevolutionData?, wheelTicks: Double, crank: RevolutionData?) -> [String:
        JSONValue]
    {
        [
            "wheelRevolutions": json(wheel.map { Int($0.revolutions) }),
            "wheelEventTime": json(wheel.map { Double($0.lastEventTime) / wheelTicks }),
            "crankRevolutions": json(crank.map { Int($0.revolutions) }),
            "crankEventTime": json(crank.map { Double($0.lastEventTime) / 1024 }),
        ]
    }

    private static func cyclingPower(_ measurement: CyclingPowerMeasurement) -> [String: JSONValue] {
        var object = revolutions(
            wheel: measurement.wheel, wheelTicks: CyclingPowerMeasurement.wheelTicksPerSecond, crank: measurement.crank)
        object.merge(
            [
                "instantaneousPower": json(Int(measurement.instantaneousPower)),
                "pedalPowerBalance": json(measurement.pedalPowerBalancePercent),
                "pedalPowerBalanceReference": json(measurement.pedalPowerBalanceReferenceIsLeft ? "left" : "unknown"),
                "accumulatedTorque": json(measurement.accumulatedTorqueNewtonMetres),
                "accumulatedTorqueSource": json(measurement.accumulatedTorqueSourceIsCrank ? "crank" : "wheel"),
                "extremeForceMaximum": json(measurement.extremeForce.map { Int($0.maximum) }),
                "extremeForceMinimum": json(measurement.extremeForce.map { Int($0.minimum) }),
                "extremeTorqueMaximum": json(measurement.extremeTorque.map { Double($0.maximum) / 32 }),
                "extremeTorqueMinimum": json(measurement.extremeTorque.map { Double($0.minimum) / 32 }),
                "extremeAngleMaximum": json(measurement.extremeAngles.map { Int($0.maximum) }),
                "extremeAngleMinimum": json(measurement.extremeAngles.map { Int($0.minimum) }),
                "topDeadSpotAngle": json(measurement.topDeadSpotAngle.map(Int.init)),
                "bottomDeadSpotAngle": json(measurement.bottomDeadSpotAngle.map(Int.init)),
                "accumulatedEnergy": json(measurement.accumulatedEnergy.map(Int.init)),
                "offsetCompensationIndicator": json(measurement.offsetCompensationIndicator),
            ], uniquingKeysWith: { first, _ in first })
        return object
    }

    private static func speed(_ raw: UInt16?) -> JSONValue { json(raw.map { Double($0) / 360 }) }

    private static func energy(_ energy: FitnessMachineEnergy?) -> [String: JSONValue] {
        [
            "totalEnergy": json(energy.map { Int($0.total) }),
            "energyPerHour": json(energy.map { Int($0.perHour) }),
            "energyPerMinute": json(energy.map { Int($0.perMinute) }),
        ]
    }

    private static func indoorBike(_ data: IndoorBikeData) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "moreData": json(data.moreData),
            "speed": speed(data.instantaneousSpeed),
            "averageSpeed": speed(data.averageSpeed),
            "cadence": json(data.instantaneousCadenceRPM),
            "averageCadence": json(data.averageCadence.map { Double($0) / 2 }),
            "totalDistance": json(data.totalDistance.map(Int.init)),
            "resistanceLevel": json(data.resistanceLevel.map(Int.init)),
            "power": json(data.instantaneousPower.map(Int.init)),
            "averagePower": json(data.averagePower.map(Int.init)),
            "heartRate": json(data.heartRate.map(Int.init)),
            "metabolicEquivalent": json(data.metabolicEquivalent.map { Double($0) / 10 }),
            "elapsedTime": json(data.elapsedTime.map(Int.init)),
            "remainingTime": json(data.remainingTime.map(Int.init)),
        ]
        object.merge(energy(data.energy), uniquingKeysWith: { first, _ in first })
        return object
    }

    private static func treadmill(_ data: TreadmillData) -> [String: JSONValue] {
        var object: [String: JSONValue] = [
            "moreData": json(data.moreData),
            "speed": speed(data.instantaneousSpeed),
            "averageSpeed": speed(data.averageSpeed),
            "totalDistance": json(data.totalDistance.map(Int.init)),
            "inclination": json(data.inclination.map { Double($0) / 10 }),
            "rampAngle": json(data.rampAngle.map { Double($0) / 10 }),
            "positiveElevationGain": json(data.positiveElevationGain.map { Double($0) / 10 }),
            "negativeElevationGain": json(data.negativeElevationGain.map { Double($0) / 10 }),
            "instantaneousPaceRaw": json(data.instantaneousPace.map { Int($0.raw) }),
            "averagePaceRaw": json(data.averagePace.map { Int($0.raw) }),
            "paceWidth": json((data.instantaneousPace ?? data.averagePace).map(\.width)),
            "heartRate": json(data.heartRate.map(Int.init)),
            "metabolicEquivalent": json(data.metabolicEquivalent.map { Double($0) / 10 }),
            "elapsedTime": json(data.elapsedTime.map(Int.init)),
            "remainingTime": json(data.remainingTime.map(Int.init)),
            "forceOnBelt": json(data.forceOnBelt.map(Int.init)),
            "powerOutput": json(data.powerOutput.map(Int.init)),
        ]
        object.merge(energy(data.energy), uniquingKeysWith: { first, _ in first })
        return object
    }
}
