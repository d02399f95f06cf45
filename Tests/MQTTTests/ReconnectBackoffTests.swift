import Testing

@testable import MQTT

@Suite struct ReconnectBackoffTests {
    @Test(
        "the wait before each attempt doubles from the minimum and stays at the maximum",
        arguments: [
            (1...30, 1, 1), (1...30, 2, 2), (1...30, 3, 4), (1...30, 5, 16), (1...30, 6, 30), (1...30, 7, 30),
            (1...30, 1000, 30), (1...30, 0, 1), (1...30, -3, 1), (2...5, 1, 2), (2...5, 2, 4), (2...5, 3, 5),
            (5...5, 4, 5), (0...10, 9, 0),
        ] as [(ClosedRange<UInt32>, Int, Int)])
    func delays(bounds: ClosedRange<UInt32>, attempt: Int, seconds: Int) {
        #expect(ReconnectBackoff(seconds: bounds).delay(beforeAttempt: attempt) == .seconds(seconds))
    }

    @Test func aMaximumBelowTheMinimumIsTheMinimum() {
        let backoff = ReconnectBackoff(minimum: .seconds(3), maximum: .seconds(1))
        #expect(backoff.maximum == .seconds(3))
        #expect((1...4).map { backoff.delay(beforeAttempt: $0) } == Array(repeating: .seconds(3), count: 4))
    }

    @Test func sub_secondSteps() {
        let backoff = ReconnectBackoff(minimum: .milliseconds(250), maximum: .seconds(1))
        #expect(
            (1...4).map { backoff.delay(beforeAttempt: $0) } == [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(1),
            ])
    }
}
