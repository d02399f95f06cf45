/// One open LSL stream: pushes are copied into liblsl's buffer and sent by its own threads, so a
/// push never waits for a consumer.
public final class LSLOutlet: @unchecked Sendable {
    /// The stream's header.
    public let description: LSLStreamDescription
    private let library: LSLLibrary
    private let handle: OpaquePointer

    init(library: LSLLibrary, handle: OpaquePointer, description: LSLStreamDescription) {
        self.library = library
        self.handle = handle
        self.description = description
    }

    /// Whether a consumer (a recorder, an inlet) is connected.
    public var hasConsumers: Bool { library.haveConsumers(handle) != 0 }

    /// One sample of floats (one per channel) taken at `timestamp` (liblsl's clock).
    public func push(_ values: [Float], at timestamp: Double) {
        precondition(values.count == description.channels.count)
        _ = values.withUnsafeBufferPointer { library.pushSampleFloat(handle, $0.baseAddress!, timestamp, 1) }
    }

    /// Samples of interleaved floats, each with its own timestamp, sent together.
    public func push(chunk values: [Float], timestamps: [Double]) {
        precondition(values.count == timestamps.count * description.channels.count)
        guard !timestamps.isEmpty else { return }
        values.withUnsafeBufferPointer { data in
            timestamps.withUnsafeBufferPointer { times in
                _ = library.pushChunkFloat(handle, data.baseAddress!, UInt(values.count), times.baseAddress!, 1)
            }
        }
    }

    /// A marker string taken at `timestamp`.
    public func push(marker: String, at timestamp: Double) {
        marker.withCString { text in
            var pointer: UnsafePointer<CChar>? = text
            _ = library.pushSampleString(handle, &pointer, timestamp, 1)
        }
    }

    deinit { library.destroyOutlet(handle) }
}
