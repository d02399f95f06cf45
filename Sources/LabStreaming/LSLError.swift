/// Why the Lab Streaming Layer cannot be used.
public enum LSLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// No liblsl could be loaded: each place tried, with the loader's reason.
    case libraryNotFound(tried: [String])
    /// A liblsl was loaded but lacks a function hrbridge calls (too old a release).
    case missingFunction(String, library: String)
    /// liblsl refused to create a stream.
    case outletFailed(stream: String)

    /// One paragraph for a user.
    public var description: String {
        switch self {
        case .libraryNotFound(let tried):
            "liblsl was not found (tried: \(tried.joined(separator: "; "))). Install it from the Lab Streaming "
                + "Layer's releases, or `pip install pylsl` (its wheel carries pylsl/lib/liblsl.so), and give its "
                + "path as [lsl] library or --lsl-library"
        case .missingFunction(let name, let library):
            "\(library) has no \(name): liblsl 1.14 or later is needed"
        case .outletFailed(let stream): "liblsl could not create the stream \(stream)"
        }
    }
}
