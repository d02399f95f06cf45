/// What a Polar Measurement Data stream carries (the low 6 bits of a data frame's first byte, and
/// the type a control point command names).
public enum PMDMeasurementType: UInt8, Hashable, Sendable, CaseIterable {
    /// Raw ECG in µV (the H10: 130 Hz).
    case ecg = 0
    /// Optical (PPG) channels.
    case ppg = 1
    /// Acceleration in mG (the H10: 25–200 Hz, ±2–8 G).
    case acceleration = 2
    /// Peak-to-peak intervals.
    case ppInterval = 3
    /// Angular velocity.
    case gyroscope = 5
    /// Magnetic field.
    case magnetometer = 6
}
