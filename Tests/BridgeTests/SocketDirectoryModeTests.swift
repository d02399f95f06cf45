import Testing

@testable import Bridge

@Suite("The API socket's directories: searchable by whoever the socket lets in, writable by the daemon only")
struct SocketDirectoryModeTests {
    @Test(arguments: [(0o660, 0o750), (0o600, 0o700), (0o666, 0o755), (0o640, 0o750), (0o604, 0o705)])
    func modes(socket: Int, directory: Int) {
        #expect(BridgeDaemon.socketDirectoryMode(socket) == directory)
    }
}
