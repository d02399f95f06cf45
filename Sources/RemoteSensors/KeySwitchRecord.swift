import Foundation
public import Wire

/// The gateways a hub has heard sign with their next key, kept across its restarts: a hub started
/// again mid-rotation refuses the old key at once, instead of reading it again until the gateway's
/// next message. One line per gateway, `<node> <fingerprint>`, the fingerprint naming the next key
/// (``EnvelopeSigner/fingerprint``), so a record of an earlier rotation never matches a new next key.
public struct KeySwitchRecord: Sendable, Equatable {
    /// The next key's fingerprint, by node.
    public var fingerprints: [String: String]

    /// The most bytes read back (far more than 1,000 gateways' lines).
    public static let maximumBytes = 256 * 1024

    /// A record of `fingerprints`.
    public init(fingerprints: [String: String] = [:]) { self.fingerprints = fingerprints }

    /// Reads the lines of `text`; a line that is not a node name and a fingerprint is skipped.
    public init(text: String) {
        fingerprints = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 2, Self.isNode(fields[0]), Self.isFingerprint(fields[1]) else { continue }
            fingerprints[String(fields[0])] = String(fields[1])
        }
    }

    /// The lines, sorted by node.
    public var text: String {
        fingerprints.keys.sorted().map { "\($0) \(fingerprints[$0]!)\n" }.joined()
    }

    /// The record at `path`; empty when there is none. One that is there but cannot be read (not
    /// a regular file, too large, no permission) throws: the caller says so, and the hub reads both
    /// keys until each gateway signs with its next one, as before it was kept.
    public static func read(from path: String) throws(BoundedFile.ReadError) -> KeySwitchRecord {
        guard FileManager.default.fileExists(atPath: path) else { return KeySwitchRecord() }
        let data = try BoundedFile.read(path, limit: maximumBytes, regularOnly: true)
        return KeySwitchRecord(text: String(decoding: data, as: UTF8.self))
    }

    /// Only the lines whose gateway still has that next key: a record of an abandoned or finished
    /// rotation must not hold for a later one.
    public func kept(nextKeys: [String: String]) -> KeySwitchRecord {
        KeySwitchRecord(fingerprints: fingerprints.filter { node, fingerprint in nextKeys[node] == fingerprint })
    }

    /// Writes the record to `path` at once (a crash leaves the old file or the new one), readable
    /// by its owner only.
    public func write(to path: String) throws {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: [.atomic])
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    /// 1 to 64 letters, digits, `-` and `_`, as a gateway's node name.
    private static func isNode(_ text: Substring) -> Bool {
        (1...64).contains(text.count)
            && text.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// 64 lowercase hexadecimal digits.
    private static func isFingerprint(_ text: Substring) -> Bool {
        text.utf8.count == 64
            && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
