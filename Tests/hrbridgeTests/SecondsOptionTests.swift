import ArgumentParser
import Testing

@testable import hrbridge

@Suite("seconds on the command line are checked before any wait is made of them")
struct SecondsOptionTests {
    @Test(
        "NaN, infinity, a huge, zero or negative number is a usage error, not a trap",
        arguments: ["nan", "inf", "-inf", "1e300", "0", "-5", "31536001"])
    func refused(_ text: String) {
        #expect(throws: (any Error).self) { _ = try ScanCommand.parse(["--timeout", text]) }
        #expect(throws: (any Error).self) { _ = try PairCommand.parse(["C0:FF:EE:00:00:01", "--timeout", text]) }
        #expect(throws: (any Error).self) { _ = try MonitorCommand.parse(["--duration", text]) }
        #expect(throws: (any Error).self) { _ = try RelayCommand.parse(["--duration", text]) }
    }

    @Test("ordinary values are taken")
    func taken() throws {
        #expect(try ScanCommand.parse(["--timeout", "2.5"]).timeout == 2.5)
        #expect(try PairCommand.parse(["C0:FF:EE:00:00:01", "--timeout", "31536000"]).timeout == 31_536_000)
        #expect(try MonitorCommand.parse(["--duration", "60"]).duration == 60)
    }

    @Test("`session start --zones` refuses a boundary that is not a number rather than dropping it")
    func zonesTypo() async throws {
        let result = try await runHRBridge([
            "session", "start", "--sensor", "C0:FF:EE:00:00:01", "--zones", "120,140,16O,175", "--socket",
            "/nonexistent/api.sock",
        ])
        #expect(result.status == 64)
        #expect(result.stderr.contains("not '16O'"), "\(result.stderr)")
    }
}
