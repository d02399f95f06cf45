public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// liblsl, loaded at run time: hrbridge builds and runs without it, and a lab points it at the
/// copy it has (LSL's release, or the one inside PyPI's pylsl wheel).
///
/// Only the outlet side of the C API is bound: stream descriptions with XML metadata, outlets,
/// pushes with explicit timestamps, and the library's clock. liblsl's calls are thread-safe.
public final class LSLLibrary: @unchecked Sendable {
    typealias CreateStreamInfo =
        @convention(c) (
            UnsafePointer<CChar>, UnsafePointer<CChar>, Int32, Double, Int32, UnsafePointer<CChar>
        ) -> OpaquePointer?
    typealias GetDescription = @convention(c) (OpaquePointer) -> OpaquePointer?
    typealias AppendChild = @convention(c) (OpaquePointer, UnsafePointer<CChar>) -> OpaquePointer?
    typealias AppendChildValue =
        @convention(c) (OpaquePointer, UnsafePointer<CChar>, UnsafePointer<CChar>) -> OpaquePointer?
    typealias CreateOutlet = @convention(c) (OpaquePointer, Int32, Int32) -> OpaquePointer?
    typealias Destroy = @convention(c) (OpaquePointer) -> Void
    typealias PushSampleFloat = @convention(c) (OpaquePointer, UnsafePointer<Float>, Double, Int32) -> Int32
    typealias PushChunkFloat =
        @convention(c) (OpaquePointer, UnsafePointer<Float>, UInt, UnsafePointer<Double>, Int32) -> Int32
    typealias PushSampleString =
        @convention(c) (OpaquePointer, UnsafePointer<UnsafePointer<CChar>?>, Double, Int32) -> Int32
    typealias HaveConsumers = @convention(c) (OpaquePointer) -> Int32
    typealias LocalClock = @convention(c) () -> Double
    typealias LibraryVersion = @convention(c) () -> Int32

    /// The file that was loaded.
    public let path: String
    private let handle: UnsafeMutableRawPointer
    let createStreamInfo: CreateStreamInfo
    let getDescription: GetDescription
    let appendChild: AppendChild
    let appendChildValue: AppendChildValue
    let createOutlet: CreateOutlet
    let destroyOutlet: Destroy
    let destroyStreamInfo: Destroy
    let pushSampleFloat: PushSampleFloat
    let pushChunkFloat: PushChunkFloat
    let pushSampleString: PushSampleString
    let haveConsumers: HaveConsumers
    let localClockFunction: LocalClock
    private let libraryVersion: LibraryVersion

    /// Where liblsl is looked for when no path is given: `HRBRIDGE_LIBLSL`, then the loader's
    /// search path, then the usual install prefixes.
    public static func candidates(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        (environment["HRBRIDGE_LIBLSL"].map { [$0] } ?? []) + [
            "liblsl.so.2", "liblsl.so", "/usr/local/lib/liblsl.so", "/usr/lib/liblsl.so", "/opt/lsl/lib/liblsl.so",
        ]
    }

    /// Loads liblsl from `path`, or the first of ``candidates(environment:)`` that loads.
    public static func load(path: String? = nil) throws(LSLError) -> LSLLibrary {
        var tried: [String] = []
        for candidate in path.map({ [$0] }) ?? candidates() {
            guard let handle = dlopen(candidate, RTLD_NOW | RTLD_LOCAL) else {
                tried.append("\(candidate): \(dlerror().map { String(cString: $0) } ?? "not loadable")")
                continue
            }
            return try LSLLibrary(path: candidate, handle: handle)
        }
        throw .libraryNotFound(tried: tried)
    }

    private init(path: String, handle: UnsafeMutableRawPointer) throws(LSLError) {
        func bind<Function>(_ name: String, as type: Function.Type) throws(LSLError) -> Function {
            guard let symbol = dlsym(handle, name) else {
                dlclose(handle)
                throw .missingFunction(name, library: path)
            }
            return unsafeBitCast(symbol, to: type)
        }
        self.path = path
        self.handle = handle
        createStreamInfo = try bind("lsl_create_streaminfo", as: CreateStreamInfo.self)
        getDescription = try bind("lsl_get_desc", as: GetDescription.self)
        appendChild = try bind("lsl_append_child", as: AppendChild.self)
        appendChildValue = try bind("lsl_append_child_value", as: AppendChildValue.self)
        createOutlet = try bind("lsl_create_outlet", as: CreateOutlet.self)
        destroyOutlet = try bind("lsl_destroy_outlet", as: Destroy.self)
        destroyStreamInfo = try bind("lsl_destroy_streaminfo", as: Destroy.self)
        pushSampleFloat = try bind("lsl_push_sample_ftp", as: PushSampleFloat.self)
        pushChunkFloat = try bind("lsl_push_chunk_ftnp", as: PushChunkFloat.self)
        pushSampleString = try bind("lsl_push_sample_strtp", as: PushSampleString.self)
        haveConsumers = try bind("lsl_have_consumers", as: HaveConsumers.self)
        localClockFunction = try bind("lsl_local_clock", as: LocalClock.self)
        libraryVersion = try bind("lsl_library_version", as: LibraryVersion.self)
    }

    /// liblsl's version as its release names it: 118 → "1.18".
    public var version: String {
        let number = libraryVersion()
        return "\(number / 100).\(number % 100)"
    }

    /// liblsl's clock (the host's monotonic clock, in seconds): every timestamp pushed is on it.
    public func localClock() -> Double { localClockFunction() }

    /// Creates an outlet for `description`; its stream is visible to LSL's resolvers from now on.
    public func outlet(_ description: LSLStreamDescription) throws(LSLError) -> LSLOutlet {
        guard
            let info = createStreamInfo(
                description.name, description.type, Int32(description.channels.count), description.nominalRate,
                description.format.rawValue, description.sourceID)
        else { throw .outletFailed(stream: description.name) }
        defer { destroyStreamInfo(info) }
        if let root = getDescription(info) { describe(root, description) }
        // Chunks of one frame; a recorder away for 6 minutes loses nothing (liblsl's buffer, in seconds).
        guard let outlet = createOutlet(info, Int32(description.chunkSize), 360) else {
            throw .outletFailed(stream: description.name)
        }
        return LSLOutlet(library: self, handle: outlet, description: description)
    }

    private func describe(_ root: OpaquePointer, _ description: LSLStreamDescription) {
        if !description.channels.isEmpty, let channels = appendChild(root, "channels") {
            for channel in description.channels {
                guard let node = appendChild(channels, "channel") else { continue }
                // XDF's word is `label`; some tools read `name`: both.
                _ = appendChildValue(node, "label", channel.label)
                _ = appendChildValue(node, "name", channel.label)
                _ = appendChildValue(node, "unit", channel.unit)
                _ = appendChildValue(node, "type", channel.type)
            }
        }
        if !description.hardware.isEmpty, let hardware = appendChild(root, "hardware") {
            for (key, value) in description.hardware { _ = appendChildValue(hardware, key, value) }
        }
        if !description.acquisition.isEmpty, let acquisition = appendChild(root, "acquisition") {
            for (key, value) in description.acquisition { _ = appendChildValue(acquisition, key, value) }
        }
    }

    deinit { dlclose(handle) }
}
