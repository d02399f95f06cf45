/// A decoded Cycling Power Measurement (0x2A63) frame.
///
/// Fields are kept in their wire units; computed properties give SI values. Power is signed
/// (negative power is real), and the wheel event time runs at **1/2048 s**, unlike CSC's 1/1024 s.
/// Bytes after the last flagged field are ignored: sensors send subsets of the 34-byte structure.
public struct CyclingPowerMeasurement: Hashable, Sendable {
    /// Ticks per second of ``wheel``'s event time.
    public static let wheelTicksPerSecond = 2048.0
    /// Ticks per second of ``crank``'s event time.
    public static let crankTicksPerSecond = 1024.0

    /// Instantaneous power in watts (signed).
    public var instantaneousPower: Int16
    /// Pedal power balance in units of ½ %.
    public var pedalPowerBalance: UInt8?
    /// Whether the balance refers to the left pedal (flag bit 1); otherwise the reference is unknown.
    public var pedalPowerBalanceReferenceIsLeft: Bool
    /// Accumulated torque in 1/32 N·m.
    public var accumulatedTorque: UInt16?
    /// Whether torque comes from the crank (flag bit 3) rather than the wheel.
    public var accumulatedTorqueSourceIsCrank: Bool
    /// Cumulative wheel revolutions and last wheel event time (1/2048 s).
    public var wheel: RevolutionData?
    /// Cumulative crank revolutions (16-bit) and last crank event time (1/1024 s).
    public var crank: RevolutionData?
    /// Extreme force magnitudes in newtons.
    public var extremeForce: ExtremeValues<Int16>?
    /// Extreme torque magnitudes in 1/32 N·m.
    public var extremeTorque: ExtremeValues<Int16>?
    /// Extreme angles in degrees (12 bits each).
    public var extremeAngles: ExtremeValues<UInt16>?
    /// Top dead spot angle in degrees.
    public var topDeadSpotAngle: UInt16?
    /// Bottom dead spot angle in degrees.
    public var bottomDeadSpotAngle: UInt16?
    /// Accumulated energy in kJ.
    public var accumulatedEnergy: UInt16?
    /// Whether the sensor asks for offset compensation (flag bit 12).
    public var offsetCompensationIndicator: Bool

    /// Creates a measurement with only the fields given.
    public init(
        instantaneousPower: Int16, pedalPowerBalance: UInt8? = nil, pedalPowerBalanceReferenceIsLeft: Bool = false,
        accumulatedTorque: UInt16? = nil, accumulatedTorqueSourceIsCrank: Bool = false, wheel: RevolutionData? = nil,
        crank: RevolutionData? = nil, extremeForce: ExtremeValues<Int16>? = nil,
        extremeTorque: ExtremeValues<Int16>? = nil, extremeAngles: ExtremeValues<UInt16>? = nil,
        topDeadSpotAngle: UInt16? = nil, bottomDeadSpotAngle: UInt16? = nil, accumulatedEnergy: UInt16? = nil,
        offsetCompensationIndicator: Bool = false
    ) {
        self.instantaneousPower = instantaneousPower
        self.pedalPowerBalance = pedalPowerBalance
        self.pedalPowerBalanceReferenceIsLeft = pedalPowerBalanceReferenceIsLeft
        self.accumulatedTorque = accumulatedTorque
        self.accumulatedTorqueSourceIsCrank = accumulatedTorqueSourceIsCrank
        self.wheel = wheel
        self.crank = crank
        self.extremeForce = extremeForce
        self.extremeTorque = extremeTorque
        self.extremeAngles = extremeAngles
        self.topDeadSpotAngle = topDeadSpotAngle
        self.bottomDeadSpotAngle = bottomDeadSpotAngle
        self.accumulatedEnergy = accumulatedEnergy
        self.offsetCompensationIndicator = offsetCompensationIndicator
    }

    /// Pedal power balance in percent.
    public var pedalPowerBalancePercent: Double? { pedalPowerBalance.map { Double($0) / 2 } }
    /// Accumulated torque in N·m.
    public var accumulatedTorqueNewtonMetres: Double? { accumulatedTorque.map { Double($0) / 32 } }

    /// Decodes a frame.
    public init(bytes: [UInt8]) throws(GATTDecodingError) {
        var reader = ByteReader(bytes, characteristic: .cyclingPowerMeasurement)
        try reader.require(minimumLength: 2)
        let flags = try reader.uint16("flags")
        instantaneousPower = try reader.int16("instantaneousPower")
        pedalPowerBalanceReferenceIsLeft = flags & 0x0002 != 0
        accumulatedTorqueSourceIsCrank = flags & 0x0008 != 0
        offsetCompensationIndicator = flags & 0x1000 != 0
        pedalPowerBalance = flags & 0x0001 != 0 ? try reader.uint8("pedalPowerBalance") : nil
        accumulatedTorque = flags & 0x0004 != 0 ? try reader.uint16("accumulatedTorque") : nil
        if flags & 0x0010 != 0 {
            let revolutions = try reader.uint32("wheelRevolutions")
            wheel = RevolutionData(revolutions: revolutions, lastEventTime: try reader.uint16("wheelEventTime"))
        } else {
            wheel = nil
        }
        if flags & 0x0020 != 0 {
            let revolutions = UInt32(try reader.uint16("crankRevolutions"))
            crank = RevolutionData(revolutions: revolutions, lastEventTime: try reader.uint16("crankEventTime"))
        } else {
            crank = nil
        }
        if flags & 0x0040 != 0 {
            let maximum = try reader.int16("extremeForce")
            extremeForce = ExtremeValues(maximum: maximum, minimum: try reader.int16("extremeForce"))
        } else {
            extremeForce = nil
        }
        if flags & 0x0080 != 0 {
            let maximum = try reader.int16("extremeTorque")
            extremeTorque = ExtremeValues(maximum: maximum, minimum: try reader.int16("extremeTorque"))
        } else {
            extremeTorque = nil
        }
        if flags & 0x0100 != 0 {
            let packed = try reader.uint24("extremeAngles")
            extremeAngles = ExtremeValues(
                maximum: UInt16(packed & 0xFFF), minimum: UInt16(truncatingIfNeeded: packed >> 12))
        } else {
            extremeAngles = nil
        }
        topDeadSpotAngle = flags & 0x0200 != 0 ? try reader.uint16("topDeadSpotAngle") : nil
        bottomDeadSpotAngle = flags & 0x0400 != 0 ? try reader.uint16("bottomDeadSpotAngle") : nil
        accumulatedEnergy = flags & 0x0800 != 0 ? try reader.uint16("accumulatedEnergy") : nil
    }

    /// Encodes the frame a sensor would send.
    public func encoded() -> [UInt8] {
        var flags: UInt16 = 0
        if pedalPowerBalance != nil { flags |= 0x0001 }
        if pedalPowerBalanceReferenceIsLeft { flags |= 0x0002 }
        if accumulatedTorque != nil { flags |= 0x0004 }
        if accumulatedTorqueSourceIsCrank { flags |= 0x0008 }
        if wheel != nil { flags |= 0x0010 }
        if crank != nil { flags |= 0x0020 }
        if extremeForce != nil { flags |= 0x0040 }
        if extremeTorque != nil { flags |= 0x0080 }
        if extremeAngles != nil { flags |= 0x0100 }
        if topDeadSpotAngle != nil { flags |= 0x0200 }
        if bottomDeadSpotAngle != nil { flags |= 0x0400 }
        if accumulatedEnergy != nil { flags |= 0x0800 }
        if offsetCompensationIndicator { flags |= 0x1000 }
        var writer = ByteWriter(capacity: 34)
        writer.uint16(flags)
        writer.int16(instantaneousPower)
        if let pedalPowerBalance { writer.uint8(pedalPowerBalance) }
        if let accumulatedTorque { writer.uint16(accumulatedTorque) }
        if let wheel {
            writer.uint32(wheel.revolutions)
            writer.uint16(wheel.lastEventTime)
        }
        if let crank {
            writer.uint16(UInt16(truncatingIfNeeded: crank.revolutions))
            writer.uint16(crank.lastEventTime)
        }
        if let extremeForce {
            writer.int16(extremeForce.maximum)
            writer.int16(extremeForce.minimum)
        }
        if let extremeTorque {
            writer.int16(extremeTorque.maximum)
            writer.int16(extremeTorque.minimum)
        }
        if let extremeAngles {
            writer.uint24(UInt32(extremeAngles.maximum & 0xFFF) | UInt32(extremeAngles.minimum & 0xFFF) << 12)
        }
        if let topDeadSpotAngle { writer.uint16(topDeadSpotAngle) }
        if let bottomDeadSpotAngle { writer.uint16(bottomDeadSpotAngle) }
        if let accumulatedEnergy { writer.uint16(accumulatedEnergy) }
        return writer.bytes
    }
}
