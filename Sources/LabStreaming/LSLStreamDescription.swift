/// One LSL stream as resolvers and recorders see it: its header and XDF channel metadata.
public struct LSLStreamDescription: Hashable, Sendable {
    /// What every sample's values are.
    public enum Format: Int32, Hashable, Sendable {
        /// 32-bit floats (liblsl's `cft_float32`).
        case float32 = 1
        /// Text (liblsl's `cft_string`): markers.
        case string = 3
    }

    /// One channel's XDF metadata.
    public struct Channel: Hashable, Sendable {
        public var label: String
        public var unit: String
        public var type: String

        public init(label: String, unit: String, type: String) {
            self.label = label
            self.unit = unit
            self.type = type
        }
    }

    /// The stream's name (LabRecorder lists it).
    public var name: String
    /// Its content type: `HR`, `RR`, `ECG`, `ACC`, `Markers`.
    public var type: String
    /// Samples per second; 0 for an irregular stream.
    public var nominalRate: Double
    public var format: Format
    /// Stays the same across restarts, so a recorder picks the stream up again.
    public var sourceID: String
    public var channels: [Channel]
    /// `desc/hardware` entries, in order.
    public var hardware: [(String, String)]
    /// `desc/acquisition` entries, in order.
    public var acquisition: [(String, String)]
    /// Samples per chunk a consumer receives (one frame).
    public var chunkSize: Int

    public init(
        name: String, type: String, nominalRate: Double, format: Format, sourceID: String, channels: [Channel],
        hardware: [(String, String)] = [], acquisition: [(String, String)] = [], chunkSize: Int = 0
    ) {
        self.name = name
        self.type = type
        self.nominalRate = nominalRate
        self.format = format
        self.sourceID = sourceID
        self.channels = channels
        self.hardware = hardware
        self.acquisition = acquisition
        self.chunkSize = chunkSize
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.nominalRate == rhs.nominalRate && lhs.format == rhs.format
            && lhs.sourceID == rhs.sourceID && lhs.channels == rhs.channels
            && lhs.hardware.elementsEqual(rhs.hardware, by: ==)
            && lhs.acquisition.elementsEqual(rhs.acquisition, by: ==)
            && lhs.chunkSize == rhs.chunkSize
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(sourceID)
        hasher.combine(name)
    }
}
