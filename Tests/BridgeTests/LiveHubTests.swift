import Bridge
import Foundation
import Testing

@Suite("Live hub: routing filters and a bounded backlog per client")
struct LiveHubTests {
    @Test("a client that does not read keeps only the newest messages; others are unaffected")
    func boundedBacklog() async {
        let hub = LiveHub()
        let stuck = hub.subscribe()
        let total = LiveHub.clientBacklog + 500
        for index in 0..<total { hub.publish(LiveMessage(kind: "measurement", sensor: "A", fields: ["n": index])) }
        hub.finish()
        var received: [Int] = []
        for await message in stuck {
            let object = try? JSONSerialization.jsonObject(with: Data(message.json.utf8)) as? [String: Any]
            if let number = object?["n"] as? Int { received.append(number) }
        }
        #expect(received.count == LiveHub.clientBacklog)
        #expect(received.first == 500, "the oldest were dropped")
        #expect(received.last == total - 1)
    }

    @Test("filters match the session and the sensor (case-insensitively), nil matching everything")
    func filters() {
        let session = UUID()
        let message = LiveMessage(kind: "sample", session: session, sensor: "C0:FF:EE:00:00:01", fields: [:])
        #expect(message.matches(session: nil, sensor: nil))
        #expect(message.matches(session: session, sensor: "c0:ff:ee:00:00:01"))
        #expect(!message.matches(session: UUID(), sensor: nil))
        #expect(!message.matches(session: nil, sensor: "C0:FF:EE:00:00:02"))
        #expect(message.json.contains(#""kind":"sample""#))
        #expect(message.json.contains(session.uuidString.lowercased()))
    }
}
