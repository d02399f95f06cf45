public import Sensors

/// The sensor a sample came from: the sensor's identity (adapter + address; the name is for display).
public typealias SampleSource = SensorIdentity
