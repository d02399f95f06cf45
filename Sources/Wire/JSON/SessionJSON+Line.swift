import Foundation
import JSONSupport
import Workouts

extension SessionJSON {
    /// The live stream's `session` message written by hand, as `JSONText.line` writes
    /// `TaggedJSON(kind: .session, session: id, payload: self)`: a class's boards get every
    /// session's figures each second, where `JSONEncoder` cost more than working them out
    /// (Benchmarks/README.md). Nil for what is not that frequent (an ended session, a plan's
    /// status): the encoder writes those. `HandWrittenJSONTests` holds it to the encoder's bytes.
    public func liveLine() -> String? {
        guard let live, summary == nil, saved == nil, live.plan == nil else { return nil }
        var object = JSONObjectWriter(capacity: 1024)
        object.add("activeEnergy", live.activeEnergy)
        object.add("activity", activity)
        if let alpha1 = live.alpha1 {
            object.addObject("alpha1") { alpha1.write(to: &$0) }
        } else {
            object.addNull("alpha1")
        }
        object.add("athlete", athlete)
        object.add("elapsedTime", elapsedTime)
        object.add("guest", guest)
        object.add("hrvUnavailable", live.hrvUnavailable)
        object.add("id", id)
        object.add("kind", LiveMessageKind.session.rawValue)
        object.add("laps", live.laps)
        object.add("location", location)
        object.add("rmssd", live.rmssd)
        object.add("sensors", sensors)
        object.add("session", id)
        object.add("start", ISO8601.format(start))
        object.add("state", state)
        object.addObject("statistics") { statistics in
            for (type, figures) in live.statistics.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                statistics.addObject(named: type) { figures.write(to: &$0) }
            }
        }
        if let store {
            object.addObject("store") { store.write(to: &$0) }
        }
        if let zone = live.zone {
            object.addObject("zone") { zone.write(to: &$0) }
        } else {
            object.addNull("zone")
        }
        object.addObjects("zones", live.zones) { $1.write(to: &$0) }
        return object.text()
    }
}

extension WorkoutJSON.HRVWindow {
    fileprivate func write(to object: inout JSONObjectWriter) {
        object.add("alpha1", alpha1)
        object.add("artefactPercent", artefactPercent)
        if let artefacts {
            object.addObject("artefacts") { counts in
                counts.add("ectopic", artefacts.ectopic)
                counts.add("extra", artefacts.extra)
                counts.add("longShort", artefacts.longShort)
                counts.add("missed", artefacts.missed)
            }
        } else {
            object.addNull("artefacts")
        }
        object.add("beats", beats)
        object.add("end", end)
        object.add("heartRate", heartRate)
        object.add("power", power)
        object.add("reliable", reliable)
    }
}

extension WorkoutJSON.Statistics {
    fileprivate func write(to object: inout JSONObjectWriter) {
        object.add("average", average)
        if let bySource {
            object.addObjects("bySource", bySource) { device, source in
                device.add("count", source.count)
                device.add("date", source.date)
                device.add("mostRecent", source.mostRecent)
                device.add("name", source.name)
                device.add("sensor", source.sensor)
            }
        }
        object.add("count", count)
        object.add("max", max)
        object.add("min", min)
        object.add("mostRecent", mostRecent)
        object.add("sum", sum)
        object.add("unit", unit)
    }
}

extension WorkoutJSON.Zone {
    fileprivate func write(to object: inout JSONObjectWriter) {
        object.add("index", index)
        object.add("lower", lower)
        object.add("upper", upper)
    }
}

extension WorkoutJSON.ZoneDuration {
    fileprivate func write(to object: inout JSONObjectWriter) {
        object.add("duration", duration)
        object.add("index", index)
        object.add("lower", lower)
        object.add("upper", upper)
    }
}

extension StoreHealthJSON {
    fileprivate func write(to object: inout JSONObjectWriter) {
        object.add("error", error)
        object.add("lost", lost)
        object.add("spilled", spilled)
        object.add("waiting", waiting)
    }
}
