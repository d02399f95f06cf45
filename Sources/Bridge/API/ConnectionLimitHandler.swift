import HTTPTypes
import HummingbirdCore
import Logging
import Metrics
import NIOCore
import Synchronization

/// The connections one listener holds, counted from accept to close.
final class ConnectionGate: Sendable {
    /// The most connections served at once.
    let limit: Int
    private let open = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Counts a new connection until its channel closes; false when it is over the limit.
    func admit(_ channel: any Channel) -> Bool {
        let count = open.wrappingAdd(1, ordering: .relaxed).newValue
        channel.closeFuture.whenComplete { _ in self.open.wrappingSubtract(1, ordering: .relaxed) }
        return count <= limit
    }
}

/// A listener's child channel with a connection limit and a deadline for the first request head,
/// in front of Hummingbird's HTTP/1 + WebSocket channel (whose own idle timeout starts only once
/// a first request has been read), and flushes coalesced next to the socket.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    let base: Base
    let gate: ConnectionGate
    let headDeadline: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Base.Value> {
        let admitted = gate.admit(channel)
        let deadline = headDeadline
        return base.setup(channel: channel, logger: logger).flatMapThrowing { value in
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuardHandler(admitted: admitted, headDeadline: deadline), position: .first)
            try channel.pipeline.syncOperations.addHandler(FlushCoalescingHandler(), position: .first)
            return value
        }
    }

    func handle(value: Base.Value, logger: Logger) async { await base.handle(value: value, logger: logger) }
}

/// First in a connection's pipeline, on raw bytes: a connection over the limit gets 503 at once,
/// its sending side is closed, and it is closed within ``refusedLinger`` (a silent one must not
/// hold a descriptor for the idle timeout); any other must finish its first request head within
/// the deadline (slowloris, silent sockets), after which this handler steps aside.
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    static let busy: String = {
        let body = #"{"error":{"code":"busy","message":"too many connections; try again later"}}"#
        return
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Retry-After: 5\r\nConnection: close\r\n"
            // The headers every other answer carries (written here: this one never reaches the router).
            + SecurityHeadersMiddleware.fields.map { "\($0.0.rawName): \($0.1)\r\n" }.joined() + "\r\n" + body
    }()

    /// How long a refused connection stays open for its client to read the 503: closing it
    /// while the client's request is still unread would reset it before the answer is read.
    static let refusedLinger = TimeAmount.seconds(1)

    private let admitted: Bool
    private let headDeadline: TimeAmount
    private var timer: Scheduled<Void>?
    /// The last bytes seen, to find "\r\n\r\n" across reads.
    private var tail: [UInt8] = []
    private var refused = false

    init(admitted: Bool, headDeadline: TimeAmount) {
        self.admitted = admitted
        self.headDeadline = headDeadline
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard admitted else {
            if context.channel.isActive { refuse(context: context) }
            return
        }
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: headDeadline) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }

    func channelActive(context: ChannelHandlerContext) {
        if !admitted { refuse(context: context) }
        context.fireChannelActive()
    }

    /// The 503 without waiting for a request, then the sending side closed; what the client
    /// sends is read and dropped until it closes or the linger ends.
    private func refuse(context: ChannelHandlerContext) {
        guard !refused else { return }
        refused = true
        Counter(label: "hrbridge_api_refused_total", dimensions: [("code", "busy")]).increment()
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(string: Self.busy))).whenComplete { _ in
            channel.close(mode: .output, promise: nil)
        }
        timer = context.eventLoop.scheduleTask(in: Self.refusedLinger) { channel.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard admitted else { return }
        let bytes = tail + Array(unwrapInboundIn(data).readableBytesView)
        let headComplete =
            bytes.count >= 4
            && (0...(bytes.count - 4)).contains { index in
                bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10
            }
        tail = Array(bytes.suffix(3))
        context.fireChannelRead(data)
        if headComplete {
            timer?.cancel()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
