import DBus
import FoundationEssentials
import GATT
import Logging
public import Sensors

extension BlueZAdapter {
    /// How long a PMD control point request waits for its indicated answer.
    static let pmdAnswerTimeout: Duration = .seconds(5)

    /// Starts a raw signal on a strap with Polar's PMD service: indications on the control point
    /// and notifications on the data characteristic first (an H10 answers nothing otherwise), the
    /// link's ATT MTU checked (a frame needs 232), then START, answered by indication. The stream
    /// starts again after every reconnect until ``stopWaveform(_:for:)``.
    public func startWaveform(_ request: WaveformRequest, for sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        if let problem = request.problem { throw .waveformUnavailable(sensor, request.kind, problem) }
        guard let link = links[address], case .ready(let adapter) = link.machine.state else {
            throw .notConnected(sensor)
        }
        guard pmdPaths(of: address, on: adapter) != nil else {
            throw .waveformUnavailable(sensor, request.kind, "the strap has no Polar Measurement Data service")
        }
        if let offered = pmdLinks[address]?.offered, !offered.contains(request.kind) {
            throw .waveformUnavailable(
                sensor, request.kind,
                "the strap offers \(offered.isEmpty ? "no raw signal" : offered.sorted().map(\.rawValue).joined(separator: ", "))"
            )
        }
        // Started again by the adapter after a reconnect, before it said so: a second START
        // would only be answered "already in state".
        if pmdLinks[address]?.streaming[request.kind] == request { return }
        let previous = pmdLinks[address]?.requests[request.kind]
        pmdLinks[address, default: PMDLink()].requests[request.kind] = request
        do {
            try await startStream(request, address: address, on: adapter)
        } catch {
            pmdLinks[address]?.requests[request.kind] = previous
            throw error
        }
    }

    /// Stops a raw signal (STOP on the control point while linked).
    public func stopWaveform(_ kind: WaveformKind, for sensor: SensorIdentity) async throws(SensorAdapterError) {
        let address = sensor.address.uppercased()
        guard pmdLinks[address]?.requests.removeValue(forKey: kind) != nil else { return }
        pmdLinks[address]?.streaming[kind] = nil
        guard let link = links[address], case .ready(let adapter) = link.machine.state,
            let paths = pmdPaths(of: address, on: adapter)
        else { return }
        let answer = await controlPointRequest(.stop(PMDLink.measurement(kind)), address: address, path: paths.control)
        if answer?.status != .success {
            logger.info(
                "PMD stop not confirmed",
                metadata: [
                    "sensor": "\(address)", "signal": "\(kind)",
                    "answer": "\(answer.map { "\($0.statusCode)" } ?? "none")",
                ])
        }
    }

    /// After a strap became ready: reads its PMD features, starts again what was asked of it
    /// before its link dropped, and then reports the features (whoever starts streams on that
    /// report finds them running). A strap without PMD costs one cache lookup.
    func probeWaveforms(_ address: String, on adapter: String) async {
        guard let paths = pmdPaths(of: address, on: adapter) else { return }
        // A new link: the strap streams nothing yet.
        pmdLinks[address]?.streaming = [:]
        pmdLinks[address]?.decoding = [:]
        let identity = identity(address, on: adapter)
        let features: PMDFeatures
        do {
            features = try PMDFeatures(bytes: try await read(paths.control))
        } catch {
            logger.info("PMD features not read", metadata: ["sensor": "\(address)", "error": "\(error)"])
            return
        }
        let offered = Set(features.measurements.compactMap { PMDLink.kind(of: $0.rawValue) })
        pmdLinks[address, default: PMDLink()].offered = offered
        guard links[address]?.machine.state == .ready(adapter: adapter) else { return }
        for request in (pmdLinks[address]?.requests.values ?? [:].values).sorted(by: { $0.kind < $1.kind }) {
            do {
                try await startStream(request, address: address, on: adapter)
                logger.info(
                    "raw signal started again", metadata: ["sensor": "\(address)", "signal": "\(request.kind)"])
            } catch {
                logger.warning("raw signal not started again", metadata: ["sensor": "\(address)", "error": "\(error)"])
            }
        }
        guard links[address]?.machine.state == .ready(adapter: adapter) else { return }
        broadcaster.yield(.waveformsAvailable(identity, offered))
    }

    /// The strap's PMD control point and data paths on `adapter`, noted for routing.
    func pmdPaths(of address: String, on adapter: String) -> (control: String, data: String)? {
        let devicePath = BlueZPaths.device(adapter: Self.adapterPath(adapter), address: address)
        let characteristics = cache.characteristics(of: devicePath)
        guard let control = characteristics.first(where: { $0.value == PMDControlPoint.controlPoint })?.key,
            let data = characteristics.first(where: { $0.value == PMDControlPoint.data })?.key
        else { return nil }
        pmdRoutes[control] = (address, .controlPoint)
        pmdRoutes[data] = (address, .data)
        return (control, data)
    }

    private func startStream(_ request: WaveformRequest, address: String, on adapter: String)
        async throws(SensorAdapterError)
    {
        let sensor = identity(address, on: adapter)
        guard let paths = pmdPaths(of: address, on: adapter) else {
            throw .waveformUnavailable(sensor, request.kind, "the strap has no Polar Measurement Data service")
        }
        // Indications and notifications on before any command: an H10 answers nothing otherwise.
        for path in [paths.control, paths.data] {
            guard links[address]?.subscribed.contains(path) == false else { continue }
            links[address]?.subscribed.insert(path)
            do throws(BlueZError) {
                try await call(path, ObjectCache.characteristicInterface, "StartNotify")
            } catch  where error.code == .inProgress {
            } catch {
                links[address]?.subscribed.remove(path)
                throw Self.failure(error)
            }
        }
        // The link may have gone (or the adapter shut down) while StartNotify was answered.
        guard links[address]?.machine.state == .ready(adapter: adapter) else { throw .notConnected(sensor) }
        // BlueZ (5.62 and later) shows the link's ATT MTU; below 232 a frame does not fit.
        if let mtu = cache.properties(paths.data, ObjectCache.characteristicInterface)?["MTU"]?.integer,
            mtu < PMDControlPoint.minimumMTU
        {
            throw .waveformUnavailable(
                sensor, request.kind,
                "the link's ATT MTU is \(mtu); a PMD frame needs \(PMDControlPoint.minimumMTU) (bluetoothd's [GATT] ExchangeMTU, or the strap, keeps it lower)"
            )
        }
        let command = PMDLink.startCommand(request)
        guard let answer = await controlPointRequest(command, address: address, path: paths.control) else {
            let why = pmdLinks[address]?.writeFailure.map { "the START write failed: \($0)" }
            throw .waveformUnavailable(
                sensor, request.kind,
                why ?? "no answer from the PMD control point within \(Int(Self.pmdAnswerTimeout.seconds)) s")
        }
        guard answer.status == .success || answer.status == .alreadyInState else {
            throw .waveformUnavailable(
                sensor, request.kind,
                "the strap refused START: \(answer.status.map { "\($0)" } ?? "status \(answer.statusCode)")")
        }
        // Compressed samples are scaled by it: not a number, or zero, would make every one 0 unseen.
        guard answer.factor.isFinite, answer.factor > 0 else {
            throw .waveformUnavailable(
                sensor, request.kind, "the strap's START answer gives a scale factor of \(answer.factor)")
        }
        pmdLinks[address]?.factors[request.kind] = answer.factor
        pmdLinks[address]?.streaming[request.kind] = request
        pmdLinks[address]?.decoding[request.kind] = request
        if pmdLinks[address]?.clocks[request.kind]?.sampleRate != Double(request.sampleRate) {
            pmdLinks[address]?.clocks[request.kind] = WaveformClock(sampleRate: Double(request.sampleRate))
        }
    }

    /// Writes a command and waits for the indication that answers it (nil: none within the timeout,
    /// or the write failed). One request per strap at a time.
    private func controlPointRequest(_ command: PMDControlPoint.Command, address: String, path: String) async
        -> PMDControlPoint.Response?
    {
        if pmdLinks[address, default: PMDLink()].busy {
            await withCheckedContinuation { pmdLinks[address, default: PMDLink()].queue.append($0) }
        }
        pmdLinks[address, default: PMDLink()].busy = true
        defer {
            if var next = pmdLinks[address], !next.queue.isEmpty {
                next.queue.removeFirst().resume()
                pmdLinks[address] = next
            } else {
                pmdLinks[address]?.busy = false
            }
        }
        pmdLinks[address]?.writeFailure = nil
        let deadline = clock.now().addingTimeInterval(Self.pmdAnswerTimeout.seconds)
        let number = pmdLinks[address, default: PMDLink()].nextRequest
        pmdLinks[address]?.nextRequest = number &+ 1
        return await withCheckedContinuation { continuation in
            // Waiting before the write: the answer can come before WriteValue's reply.
            pmdLinks[address, default: PMDLink()].pending = PMDLink.Pending(
                number: number, command: command, continuation: continuation)
            let writing = background.spawn { [weak self] in
                do throws(BlueZError) {
                    try await self?.call(
                        path, ObjectCache.characteristicInterface, "WriteValue",
                        [.bytes(command.encoded()), .propertyMap([("type", .string("request"))])])
                } catch {
                    await self?.answerPending(address, request: number, with: nil, failure: "\(error)")
                }
            }
            let timing = background.spawn { [weak self, clock] in
                try? await clock.sleep(until: deadline)
                await self?.answerPending(address, request: number, with: nil, failure: nil)
            }
            // Shut down meanwhile: nothing would ever end the wait.
            if !writing || !timing {
                answerPending(address, request: number, with: nil, failure: "the adapter is shutting down")
            }
        }
    }

    /// Ends the request waiting on `address`'s control point (only request `number`, when given).
    private func answerPending(
        _ address: String, request number: UInt64? = nil, with answer: PMDControlPoint.Response?, failure: String?
    ) {
        guard let pending = pmdLinks[address]?.pending, number.map({ $0 == pending.number }) ?? true else { return }
        pmdLinks[address]?.pending = nil
        if let failure { pmdLinks[address]?.writeFailure = failure }
        pending.continuation.resume(returning: answer)
    }

    /// A notification on a PMD characteristic: an answer on the control point, a frame on the data one.
    func pmdNotified(_ route: (address: String, role: PMDLink.Role), path: String, bytes: [UInt8]) {
        guard let adapter = adapterName(ofDevice: path), links[route.address]?.subscribed.contains(path) == true
        else { return }
        let sensor = identity(route.address, on: adapter)
        switch route.role {
        case .controlPoint:
            do {
                let answer = try PMDControlPoint.Response(bytes: bytes)
                if let pending = pmdLinks[route.address]?.pending, answer.answers(pending.command) {
                    answerPending(route.address, with: answer, failure: nil)
                } else {
                    logger.debug("PMD answer to no request", metadata: ["sensor": "\(route.address)"])
                }
            } catch {
                logger.warning(
                    "PMD control point indication refused",
                    metadata: ["sensor": "\(route.address)", "error": "\(error)"])
            }
        case .data:
            pmdFrame(bytes, from: sensor)
        }
    }

    private func pmdFrame(_ bytes: [UInt8], from sensor: SensorIdentity) {
        let address = sensor.address
        guard let state = pmdLinks[address] else { return }
        let kind = bytes.first.flatMap { PMDLink.kind(of: $0) }
        // Decoded as the strap was last told and answered: a request still awaiting its answer
        // (a new rate) does not yet describe what arrives.
        guard let kind, let request = state.decoding[kind] ?? state.requests[kind], var clock = state.clocks[kind]
        else {
            // A frame of a stream nobody asked for (or no header at all): refused under the first asked kind.
            if let asked = Set(state.requests.keys).union(state.decoding.keys).sorted().first, kind == nil {
                do {
                    _ = try PMDFrame(bytes: bytes)
                    logger.debug("PMD frame of another measurement", metadata: ["sensor": "\(address)"])
                } catch {
                    broadcaster.yield(.waveformRefused(sensor, asked, error))
                }
            }
            return
        }
        let receivedAt = self.clock.now()
        do {
            let waveform = try SensorWaveform(
                pmd: bytes, request: request, factor: state.factors[kind] ?? 1, sensor: sensor, receivedAt: receivedAt,
                clock: &clock)
            pmdLinks[address]?.clocks[kind] = clock
            broadcaster.yield(.waveform(waveform))
        } catch {
            broadcaster.yield(.waveformRefused(sensor, kind, error))
        }
    }

    /// The strap's streams end with a requested disconnect; an answer still awaited gets none.
    func forgetWaveforms(_ address: String) {
        if let pending = pmdLinks[address]?.pending {
            pmdLinks[address]?.pending = nil
            pending.continuation.resume(returning: nil)
        }
        pmdLinks[address]?.requests = [:]
        pmdLinks[address]?.streaming = [:]
        pmdLinks[address]?.decoding = [:]
    }
}
