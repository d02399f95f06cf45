import Foundation
import JSONSupport
import Testing
import Wire
import Workouts

/// The wire types the daemon only wrote until the tests read them too: each decodes what its
/// encoder writes, and writes it back byte for byte.
@Suite("Wire types decode what they encode")
struct WireDecodingTests {
    static let id = "6f1c2b3a-0d4e-4f5a-8b6c-7d8e9f0a1b2c"

    /// A finished workout's summary with every kind of member: nulls, a per-device type, a threshold.
    static let summary =
        #"{"activeEnergy":{"kilocalories":95.6,"kilojoules":400,"source":"estimated"},"#
        + #""activities":[{"activityType":"running","elapsedTime":40,"end":"2027-01-15T08:00:40.000Z","#
        + #""start":"2027-01-15T08:00:00.000Z","statistics":{},"zones":[]}],"#
        + #""dfaAlpha1":{"artefactPercent":null,"confident":false,"hrvt1":{"alpha1":0.75,"heartRate":150,"power":null},"#
        + #""hrvt2":null,"last":0.9,"note":"no window","reliableWindows":1,"windows":2},"elapsedTime":40,"#
        + #""events":[{"end":"2027-01-15T08:00:20.000Z","start":"2027-01-15T08:00:00.000Z","type":"segment"}],"#
        + #""hrv":{"acceptedIntervals":50,"rejectedIntervals":1,"rmssd":42.5,"sdnn":null},"#
        + #""statistics":{"batteryLevel":{"average":89,"bySource":[{"count":3,"date":"2027-01-15T08:00:30.000Z","#
        + #""mostRecent":88,"name":null,"sensor":"C0:FF:EE:00:00:02"}],"count":3,"max":90,"min":88,"mostRecent":88,"#
        + #""sum":null,"unit":"%"}},"zones":[]}"#

    /// A recording session's live figures: α1, a plan with an alert, zones, nulls kept.
    static let liveSession =
        #"{"activeEnergy":12.5,"activity":"cycling","alpha1":{"alpha1":0.83,"artefactPercent":1.5,"#
        + #""artefacts":{"ectopic":1,"extra":0,"longShort":0,"missed":2},"beats":240,"end":130,"heartRate":142.5,"#
        + #""power":null,"reliable":true},"athlete":"alice","elapsedTime":130.25,"guest":false,"hrvUnavailable":null,"#
        + #""id":"\#(id)","laps":1,"location":"indoor","plan":{"alertInRange":true,"alertTarget":[140,175],"#
        + #""alertValue":150,"complete":false,"current":{"alert":"heart rate 140-175 bpm","goal":"4 min","index":1,"#
        + #""purpose":"work","step":"block 1 (1/2), step 1"},"next":{"goal":"2 min","index":2,"purpose":"recovery","#
        + #""step":"block 1 (1/2), step 2"},"progress":0.25},"rmssd":null,"sensors":["C0:FF:EE:00:00:01"],"#
        + #""start":"2027-01-15T08:00:00.000Z","state":"running","statistics":{"heartRate":{"average":141.5,"#
        + #""count":120,"max":160,"min":98,"mostRecent":150,"sum":null,"unit":"count/min"}},"#
        + #""zone":{"index":3,"lower":130,"upper":150},"zones":[{"duration":60,"index":1,"lower":null,"upper":110},"#
        + #"{"duration":70.25,"index":2,"lower":110,"upper":null}]}"#

    /// An ended session whose workout waits for the store.
    static let endedSession =
        #"{"activity":"running","athlete":"strap-c0ffee000002","elapsedTime":40,"guest":false,"id":"\#(id)","#
        + #""location":"outdoor","saved":false,"sensors":["C0:FF:EE:00:00:02"],"start":"2027-01-15T08:00:00.000Z","#
        + #""state":"ended","store":{"error":"disk full","lost":0,"spilled":3,"waiting":12},"summary":\#(summary)}"#

    func roundTrip<Value: Codable>(_ type: Value.Type, _ text: String) throws -> Value {
        let value = try JSONText.decode(type, from: Data(text.utf8))
        #expect(try JSONText.line(value) == text)
        return value
    }

    @Test("a live session: every figure read, written back unchanged")
    func liveSession() throws {
        let session = try roundTrip(SessionJSON.self, Self.liveSession)
        #expect(session.id == UUID(uuidString: Self.id))
        #expect(session.start == ISO8601.parse("2027-01-15T08:00:00Z"))
        let live = try #require(session.live)
        #expect(live.statistics["heartRate"]?.count == 120)
        #expect(live.zone?.index == 3 && live.zones.count == 2 && live.laps == 1)
        #expect(live.rmssd == nil && live.hrvUnavailable == nil && live.activeEnergy == 12.5)
        #expect(live.alpha1?.artefacts?.missed == 2)
        #expect(live.plan?.current?.alert == "heart rate 140-175 bpm" && live.plan?.next?.index == 2)
        #expect(session.summary == nil && session.store == nil && session.saved == nil)
    }

    @Test("an ended session: its summary and what the store holds back")
    func endedSession() throws {
        let session = try roundTrip(SessionJSON.self, Self.endedSession)
        #expect(session.live == nil)
        #expect(session.saved == false)
        #expect(session.store?.waiting == 12 && session.store?.error == "disk full")
        let summary = try #require(session.summary)
        #expect(summary.statistics["batteryLevel"]?.bySource?.first?.sensor == "C0:FF:EE:00:00:02")
        #expect(summary.dfaAlpha1.hrvt1?.heartRate == 150 && summary.dfaAlpha1.hrvt2 == nil)
    }

    @Test("a session built in Swift decodes to itself")
    func sessionValue() throws {
        var session = SessionJSON(
            id: UUID(), athlete: "bob", guest: true, state: "paused", activity: "walking", location: "indoor",
            sensors: ["C0:FF:EE:00:00:03"], start: Date(timeIntervalSince1970: 1_800_000_000), elapsedTime: 3)
        session.live = SessionJSON.Live(
            statistics: [:], zones: [], zone: nil, rmssd: 30, alpha1: nil, activeEnergy: nil, laps: 0, plan: nil,
            hrvUnavailable: "broadcast only")
        #expect(try JSONText.decode(SessionJSON.self, from: Data(JSONText.line(session).utf8)) == session)
    }

    @Test("a session whose id or start is not one is refused")
    func badSession() {
        for (bad, good) in [
            (#""id":"nope""#, #""id":"\#(Self.id)""#), (#""start":"soon""#, #""start":"2027-01-15T08:00:00.000Z""#),
        ] {
            let text = Self.liveSession.replacingOccurrences(of: good, with: bad)
            #expect(text != Self.liveSession)
            #expect(throws: DecodingError.self) { try JSONText.decode(SessionJSON.self, from: Data(text.utf8)) }
        }
    }

    @Test("a stored workout's detail: the listing's keys and the summary, null while recording")
    func workoutDetail() throws {
        let finished = try roundTrip(
            WorkoutDetailJSON.self,
            #"{"active":false,"activity":"running","athlete":"alice","elapsedTime":40,"#
                + #""end":"2027-01-15T08:00:40.000Z","id":"\#(Self.id)","start":"2027-01-15T08:00:00.000Z","#
                + #""summary":\#(Self.summary)}"#)
        #expect(finished.listing.id == Self.id && finished.listing.active == false)
        #expect(finished.summary?.hrv.acceptedIntervals == 50)
        let recording = try roundTrip(
            WorkoutDetailJSON.self,
            #"{"active":true,"activity":"cycling","athlete":"bob","elapsedTime":null,"end":null,"id":"\#(Self.id)","#
                + #""start":"2027-01-15T08:00:00.000Z","summary":null}"#)
        #expect(recording.listing.active && recording.summary == nil)
    }

    @Test("tagged lines: the tags and the payload, a step's keys among a plan event's")
    func tagged() throws {
        let sample = try roundTrip(
            TaggedJSON<SampleJSON>.self,
            #"{"end":"2027-01-15T08:00:01.000Z","kind":"sample","metadata":{"sensorContact":"detected"},"#
                + #""sensor":"C0:FF:EE:00:00:01","session":"\#(Self.id)","source":{"adapter":"mock","#
                + #""address":"C0:FF:EE:00:00:01","name":"Strap 1"},"start":"2027-01-15T08:00:01.000Z","#
                + #""type":"heartRate","unit":"count/min","value":72}"#)
        #expect(sample.kind == .sample && sample.session == UUID(uuidString: Self.id))
        #expect(sample.sensor == "C0:FF:EE:00:00:01" && sample.payload.value == 72)
        let measurement = try roundTrip(
            TaggedJSON<MeasurementJSON>.self,
            #"{"energyExpended":null,"heartRate":72,"kind":"measurement","rrIntervals":[0.833],"#
                + #""sensor":"C0:FF:EE:00:00:01","sensorContact":"detected","time":"2027-01-15T08:00:01.000Z","#
                + #""via":"connection"}"#)
        #expect(measurement.session == nil && measurement.payload.sensor == measurement.sensor)
        let started = try roundTrip(
            TaggedJSON<PlanJSON.Event>.self,
            #"{"event":"stepStarted","goal":"4 min","index":1,"kind":"plan","purpose":"work","#
                + #""session":"\#(Self.id)","step":"block 1 (1/2), step 1","time":"2027-01-15T08:00:00.000Z"}"#)
        #expect(started.payload.step?.purpose == "work")
        let lap = try roundTrip(
            TaggedJSON<PlanJSON.Event>.self,
            #"{"block":1,"end":"2027-01-15T08:00:30.000Z","event":"lap","iteration":2,"kind":"plan","#
                + #""session":"\#(Self.id)","start":"2027-01-15T08:00:00.000Z"}"#)
        #expect(lap.payload.step == nil && lap.payload.iteration == 2)
        #expect(throws: DecodingError.self) {
            try JSONText.decode(TaggedJSON<JSONValue>.self, from: Data(#"{"kind":"gossip"}"#.utf8))
        }
    }
}
