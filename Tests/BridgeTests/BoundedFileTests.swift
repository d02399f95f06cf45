import BusHarness
import Foundation
import Testing
import Wire

@testable import Bridge

@Suite("Small files read whole, never past their limit: the configuration and password files")
struct BoundedFileTests {
    @Test("up to the limit a file is read; past it, refused", arguments: [0, 1, 4095, 4096, 4097, 1 << 20])
    func limit(_ size: Int) throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/file"
        try Data(repeating: UInt8(ascii: "a"), count: size).write(to: URL(fileURLWithPath: path))
        if size <= 4096 {
            #expect(try BoundedFile.read(path, limit: 4096).count == size)
        } else {
            #expect(throws: BoundedFile.ReadError.larger(than: 4096)) { try BoundedFile.read(path, limit: 4096) }
        }
        #expect(throws: BoundedFile.ReadError.unreadable) { try BoundedFile.read(directory + "/missing", limit: 9) }
    }

    @Test(
        "where only a regular file will do (a key), a FIFO no one writes and a device are refused at once, unread",
        .timeLimit(.minutes(1)))
    func regularOnly() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/fifo"
        try #require(mkfifo(fifo, 0o600) == 0)
        #expect(throws: BoundedFile.ReadError.notRegular) { try BoundedFile.read(fifo, limit: 4096, regularOnly: true) }
        #expect(throws: BoundedFile.ReadError.notRegular) {
            try BoundedFile.read("/dev/zero", limit: 4096, regularOnly: true)
        }
        let path = directory + "/key"
        try Data(repeating: 1, count: 33).write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path, limit: 4096, regularOnly: true).count == 33)
        #expect(throws: BoundedFile.ReadError.larger(than: 32)) {
            try BoundedFile.read(path, limit: 32, regularOnly: true)
        }
    }

    @Test("a configuration through a pipe (no size to check first) is read no further than 1 MiB, and refused")
    func configurationThroughPipe() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fifo = directory + "/config.toml"
        // One byte past the limit: the writer finishes whether the reader stops there or reads on.
        let writer = try feed(fifo, bytes: ConfigurationLoader.maximumFileBytes + 1)
        defer { writer.stop() }
        #expect {
            try ConfigurationLoader.load(path: fifo)
        } throws: { error in
            (error as? ConfigurationError)?.problems.first?.message == "larger than 1 MiB: not a configuration"
        }
    }

    @Test("a password file gives its first line; more than 4 KiB, in a file or through a pipe, gives none")
    func passwordFile() throws {
        let directory = try scratchDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/password"
        let fits = "secret\n" + String(repeating: "#", count: PasswordFile.maximumBytes - 7)
        try Data(fits.utf8).write(to: URL(fileURLWithPath: path))
        #expect(PasswordFile.read(path) == "secret")
        try Data((fits + "#").utf8).write(to: URL(fileURLWithPath: path))
        #expect(PasswordFile.read(path) == nil)
        let fifo = directory + "/fifo"
        let writer = try feed(fifo, bytes: 1 << 16)
        defer { writer.stop() }
        #expect(PasswordFile.read(fifo) == nil)
    }
}

private func scratchDirectory() throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bounded-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory
}

/// A FIFO at `path` and a child writing `bytes` zero bytes into it. The child's open waits for
/// the reader's, so nothing depends on timing; a reader that stops early ends the child by
/// SIGPIPE, never this process.
private func feed(_ path: String, bytes: Int) throws -> Spawned {
    guard mkfifo(path, 0o600) == 0 else { throw HarnessError("cannot create the FIFO \(path)") }
    return try Spawned("/bin/sh", ["-c", "exec head -c \(bytes) /dev/zero > \"$0\"", path], label: "fifo writer")
}
