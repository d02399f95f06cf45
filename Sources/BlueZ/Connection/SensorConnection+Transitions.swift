import FoundationEssentials
import Sensors

// The transitions' shared steps: placing the strap, linking, failing, moving off an adapter.
extension SensorConnection {
    /// Connects through the best candidate, or waits for one (discovering, or for an adapter).
    /// `deferringForBroadcast`: while its broadcast is heard, an attempt waits out the interval
    /// (off for a slot freed for it by priority).
    mutating func place(
        _ surroundings: Surroundings, deferringForBroadcast: Bool = true, _ actions: inout [Action]
    ) {
        awaitingOtherConnect = false
        if let adapter = surroundings.candidates.first {
            // Heard through its broadcast: attempts (each pauses scanning) stay a full interval
            // apart, and the first one comes a full interval after the broadcast was first heard.
            if deferringForBroadcast, surroundings.hearsBroadcast,
                let last = [lastAttemptAt, broadcastHeardAt].compactMap({ $0 }).max()
            {
                let earliest = last.addingTimeInterval(configuration.broadcastRetryInterval.seconds)
                if surroundings.now < earliest {
                    state = .backingOff(until: earliest)
                    schedule(at: earliest, &actions)
                    return
                }
            }
            lastAttemptAt = surroundings.now
            attempt += 1
            state = .connecting(adapter: adapter)
            lastAdapter = adapter
            actions.append(.cancelTimer)
            actions.append(.report(.connecting, adapter: adapter))
            actions.append(.connect(adapter: adapter, attempt: attempt))
        } else if surroundings.adapterUsable && !surroundings.deviceKnown {
            state = backoff.failures == 0 && lastAdapter == nil ? .discovering : .rediscovering
        } else {
            state = .waitingForAdapter
        }
    }

    /// The link is up through `adapter`: wait for its services.
    mutating func linked(_ adapter: String, _ surroundings: Surroundings, _ actions: inout [Action]) {
        awaitingOtherConnect = false
        broadcastHeardAt = nil
        state = .resolving(adapter: adapter)
        lastAdapter = adapter
        actions.append(.report(.connected, adapter: adapter))
        schedule(at: surroundings.now.addingTimeInterval(configuration.servicesTimeout.seconds), &actions)
    }

    mutating func schedule(at date: Date, _ actions: inout [Action]) {
        timerGeneration += 1
        actions.append(.schedule(at: date, generation: timerGeneration))
    }

    mutating func connectReplied(
        _ reply: ConnectReply, adapter: String, _ surroundings: Surroundings,
        _ random: inout some RandomNumberGenerator, _ actions: inout [Action]
    ) {
        switch reply {
        case .connected:
            linked(adapter, surroundings, &actions)
        case .failed(let error, _) where error.code == .inProgress:
            // Someone else's Connect is pending: wait for its link, else cancel it at the deadline.
            awaitingOtherConnect = true
            schedule(at: surroundings.now.addingTimeInterval(configuration.connectTimeout.seconds), &actions)
        case .failed(_, linkUp: true):
            linked(adapter, surroundings, &actions)
        case .failed(let error, _) where error.code == .connectionLimitReached:
            // The controller is out of link slots: the next adapter, at once (not a failure of the strap).
            actions.append(.markFull(adapter: adapter))
            var others = surroundings
            others.candidates.removeAll { $0 == adapter }
            place(others, &actions)
            if case .waitingForAdapter = state {
                actions.append(
                    .report(.disconnected(.failed("no free link slot on \(adapter)")), adapter: adapter))
                actions.append(.attemptEnded(error))
            }
        case .failed(let error, _) where error.code == .notReady:
            // Powered off under us: another adapter, or wait until it is powered on.
            actions.append(.report(.disconnected(.adapterUnavailable), adapter: adapter))
            actions.append(.attemptEnded(error))
            var others = surroundings
            others.candidates.removeAll { $0 == adapter }
            place(others, &actions)
        case .failed(let error, _):
            var reason = DisconnectReason.failed(error.description)
            if error.code == .authenticationFailed && !configuration.backoff.repairsOnAuthenticationFailure {
                reason = .failed(Self.bondLost(address))
            }
            let outcome: Backoff.Outcome = error.code == .unknownObject ? .deviceObjectMissing : .failed(error.code)
            fail(error, reason: reason, outcome: outcome, adapter, surroundings, &random, &actions)
        }
    }

    /// Reports the failure, then backs off, rediscovers or re-pairs as the backoff says.
    mutating func fail(
        _ error: BlueZError, reason: DisconnectReason, outcome: Backoff.Outcome, _ adapter: String,
        _ surroundings: Surroundings, _ random: inout some RandomNumberGenerator, _ actions: inout [Action]
    ) {
        awaitingOtherConnect = false
        lastAdapter = adapter
        actions.append(.report(.disconnected(reason), adapter: adapter))
        actions.append(.attemptEnded(error))
        guard configuration.reconnects else {
            actions.append(.cancelTimer)
            state = .idle
            return
        }
        let step = backoff.next(after: outcome, using: &random)
        let retryDelay: Duration?
        switch step {
        case .none: retryDelay = .zero
        case .connect(let delay): retryDelay = delay
        case .rediscover, .removeAndRepair: retryDelay = nil
        }
        if surroundings.hearsBroadcast, let retryDelay {
            // Followed through its broadcast meanwhile: the next attempt (which pauses scanning) waits.
            let until = surroundings.now.addingTimeInterval(
                max(retryDelay, configuration.broadcastRetryInterval).seconds)
            state = .backingOff(until: until)
            schedule(at: until, &actions)
            return
        }
        switch step {
        case .none:
            place(surroundings, &actions)
        case .connect(let delay) where delay <= .zero:
            place(surroundings, &actions)
        case .connect(let delay):
            let until = surroundings.now.addingTimeInterval(delay.seconds)
            state = .backingOff(until: until)
            schedule(at: until, &actions)
        case .rediscover where !surroundings.candidates.isEmpty:
            // Gone from this adapter but seen by another: move there at once.
            place(surroundings, &actions)
        case .rediscover:
            state = .rediscovering
            let wait = max(backoff.nominalDelay, configuration.backoff.initialDelay)
            schedule(at: surroundings.now.addingTimeInterval(wait.seconds), &actions)
        case .removeAndRepair:
            state = .repairing(adapter: adapter)
            actions.append(.repair(adapter: adapter))
        }
    }

    /// The adapter the strap was on is gone: another one at once, else wait (not the strap's failure).
    mutating func moveOff(
        _ adapter: String, _ surroundings: Surroundings, _ random: inout some RandomNumberGenerator,
        _ actions: inout [Action]
    ) {
        guard configuration.reconnects else {
            state = .idle
            return
        }
        var others = surroundings
        others.candidates.removeAll { $0 == adapter }
        place(others, &actions)
    }

}
